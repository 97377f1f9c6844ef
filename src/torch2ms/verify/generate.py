"""Generate differential test cases from one mapping example: the inputs and call forms torch accepts.

Pure: no torch, no MindSpore. The worker passes the torch callable's signature (read with
`inspect` in its process) and runs the cases; torch decides which ones are valid (a case
torch rejects is dropped, not counted). Each case has tags saying what it varies; a
parameter fact's `covers` names the tags of the cases it explains (docs/verify.md).

Tags:

- ``example``: the example as written; ``seed=N``: the same call on other random values;
- ``dtype=D``: the random floating inputs as dtype D (float64, float32, int32, int64, bool);
  ``ints=D``: the integer inputs (indices, counts) as int32 or int64;
- ``0-d``, ``empty``, ``larger``, ``batched``: the random inputs of the first input's shape as a
  0-d tensor, with a first dimension of 0, one larger in every dimension, with a leading
  dimension of 2;
- ``noncontiguous``: torch receives strided views (MindSpore the same values);
- ``zeros``: about half of the random inputs' elements are zero (also as int32 inputs);
- ``broadcast``: a second input of a smaller, broadcastable shape;
- ``dim<0``, ``dim=tuple``, ``dim=N``, ``keepdim``: the dimension argument negative, a tuple,
  passed where the example leaves the default, and keepdim=True;
- ``keyword``, ``positional``, ``defaults``: the arguments by keyword, by position, and the
  trailing defaulted arguments left out (one case per argument dropped);
- ``opt=NAME``: an optional parameter the example leaves out, passed by keyword at another value
  than its default (a bool flipped, an int k as k + 1, a float x as 2x);
- ``arg=N``: an integer or float argument of the call changed;
- ``grad``: the gradient of the first floating output with respect to the first floating input
  is compared too;
- ``inplace``: every case of an in-place call (the receiver is compared after it, and whether the
  call returns it).
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import Any

MIN_CASES = 20
DIM_NAMES = ("dim", "axis", "dims")
FLOATS = ("float32", "float64", "float16")
INTS = ("int32", "int64", "int16", "int8", "uint8")
FORM_FIXED = {"function": 1, "method": 0, "inplace": 0, "layer": 0, "loss": 0, "optimizer": 1, "scheduler": 1}
_NO_GRAD_KINDS = ("inplace", "optimizer", "scheduler")


@dataclass(frozen=True)
class Signature:
    """The torch callable's parameters up to any *args/**kwargs: (name, has a default), in order
    (a method's receiver not included), the positional ones first."""

    params: tuple[tuple[str, bool], ...] = ()
    positional_only: frozenset[str] = frozenset()
    keyword_only: frozenset[str] = frozenset()
    defaults: tuple[tuple[str, Any], ...] = ()  # the bool, int and float defaults, by parameter name

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.params]


@dataclass
class Case:
    """One call to run in both libraries (JSON-able with `to_dict`)."""

    tags: list[str]
    torch: str
    inputs: dict[str, Any]
    seed: int = 0
    grad: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = {"tags": list(self.tags), "torch": self.torch, "inputs": self.inputs, "seed": self.seed}
        if self.grad:
            out["grad"] = True
        out.update(self.extra)
        return out


# ------------------------------------------------------------------ the call in the code
def _parse(code: str) -> ast.Expression | None:
    try:
        return ast.parse(code.strip(), mode="eval")
    except SyntaxError:
        return None


def target_call(tree: ast.Expression, kind: str) -> ast.Call | None:
    """The call the entry is about: the constructor of a layer, else the outermost call."""
    node = tree.body
    if not isinstance(node, ast.Call):
        return None
    if kind in ("layer", "loss") and isinstance(node.func, ast.Call):
        return node.func
    return node


def _call_in(tree: ast.Expression, kind: str) -> ast.Call:
    call = target_call(tree, kind)
    assert call is not None
    return call


def _names(code: str) -> list[str]:
    tree = _parse(code)
    if tree is None:
        return []
    return [n.id for n in ast.walk(tree) if isinstance(n, ast.Name)]


def _first_input(code: str, inputs: dict[str, Any], kind: str) -> str | None:
    """The input the call works on: a method's receiver, else the first input the code names."""
    tree = _parse(code)
    if tree is None:
        return None
    node = tree.body
    if kind in ("layer", "loss") and isinstance(node, ast.Call):
        for arg in node.args:
            if isinstance(arg, ast.Name) and arg.id in inputs:
                return arg.id
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
            and node.func.value.id in inputs:
        return node.func.value.id
    for name in _names(code):
        if name in inputs:
            return name
    return None


def _edit(code: str, kind: str, change: Any) -> str | None:
    """`code` with its target call changed in place by `change(call)` (which returns False to refuse);
    None where nothing changed or the change is no Python (a keyword argument named `from`)."""
    tree = _parse(code)
    if tree is None:
        return None
    call = target_call(tree, kind)
    if call is None or change(call) is False:
        return None
    text = ast.unparse(tree)
    if _parse(text) is None:
        return None
    return text if ast.unparse(ast.parse(code.strip(), mode="eval")) != text else None


def _const(value: Any) -> ast.expr:
    return ast.parse(repr(value), mode="eval").body


# ------------------------------------------------------------------ inputs
def _random(spec: dict[str, Any]) -> bool:
    return "value" not in spec and "shape" in spec


def _kind_of(dtype: str) -> str:
    if dtype == "bool":
        return "b"
    if dtype in INTS:
        return "i"
    if dtype.startswith("complex"):
        return "c"
    return "f"


def _as_dtype(spec: dict[str, Any], dtype: str) -> dict[str, Any]:
    """An input spec with another dtype; the value range follows the new kind."""
    out = dict(spec)
    old = str(spec.get("dtype", "float32"))
    out["dtype"] = dtype
    if "value" in spec:
        return out
    new_kind, old_kind = _kind_of(dtype), _kind_of(old)
    if new_kind == "i" and old_kind != "i":
        low = float(spec.get("low", -1.0))
        high = float(spec.get("high", 1.0))
        out["low"] = int(math.floor(low))
        out["high"] = max(int(math.ceil(high)), out["low"] + 1) + 4
    elif new_kind == "f" and old_kind == "i":
        out.setdefault("low", 0)
        out.setdefault("high", 5)
    elif new_kind == "b":
        out.pop("low", None)
        out.pop("high", None)
    return out


def _dtype_cases(base: Case) -> list[Case]:
    random = {n: s for n, s in base.inputs.items() if _random(s)}
    floats = [n for n, s in random.items() if _kind_of(str(s.get("dtype", "float32"))) == "f"]
    ints = [n for n, s in base.inputs.items() if _kind_of(str(s.get("dtype", "float32"))) == "i"]
    out = []
    if floats:
        current = str(base.inputs[floats[0]].get("dtype", "float32"))
        for dtype in ("float64", "float32", "int32", "int64", "bool"):
            if dtype == current:
                continue
            inputs = dict(base.inputs)
            for name in floats:
                inputs[name] = _as_dtype(inputs[name], dtype)
            out.append(Case([f"dtype={dtype}"], base.torch, inputs, base.seed))
    if ints:
        for dtype in ("int32", "int64"):
            inputs = dict(base.inputs)
            changed = False
            for name in ints:
                if str(inputs[name].get("dtype")) != dtype:
                    inputs[name] = _as_dtype(inputs[name], dtype)
                    changed = True
            if changed:
                out.append(Case([f"ints={dtype}"], base.torch, inputs, base.seed))
    return out


def _shape_group(base: Case, first: str | None) -> tuple[list[str], list[int]] | None:
    """The random inputs that share the shape of the first one (the call's operand)."""
    random = [n for n, s in base.inputs.items() if _random(s)]
    if not random:
        return None
    lead = first if first in random else random[0]
    shape = list(base.inputs[lead]["shape"])
    return [n for n in random if list(base.inputs[n]["shape"]) == shape], shape


def _shape_cases(base: Case, first: str | None) -> list[Case]:
    group = _shape_group(base, first)
    if group is None:
        return []
    names, shape = group
    variants: list[tuple[str, list[int]]] = []
    if shape:
        variants.append(("0-d", []))
        variants.append(("empty", [0] + shape[1:]))
        variants.append(("larger", [d + 1 for d in shape]))
    variants.append(("batched", [2] + shape))
    out = []
    for tag, new in variants:
        inputs = dict(base.inputs)
        for name in names:
            inputs[name] = dict(inputs[name], shape=new)
        out.append(Case([tag], base.torch, inputs, base.seed))
    if len(shape) >= 2:
        inputs = {n: (dict(s, layout="noncontiguous") if n in names else s) for n, s in base.inputs.items()}
        out.append(Case(["noncontiguous"], base.torch, inputs, base.seed))
    if len(names) >= 2 and shape:
        inputs = dict(base.inputs)
        inputs[names[1]] = dict(inputs[names[1]], shape=shape[1:] if len(shape) >= 2 else [1])
        out.append(Case(["broadcast"], base.torch, inputs, base.seed))
    return out


def _zeros_cases(base: Case) -> list[Case]:
    """The random inputs with about half of their elements zero (reductions such as any, all and
    count_nonzero only show what they do on a mix), as floats and as integers."""
    random = {n: s for n, s in base.inputs.items() if _random(s) and _kind_of(str(s.get("dtype", "float32"))) in "fi"}
    if not random:
        return []
    out = []
    for label, dtype in (("zeros", None), ("zeros", "int32")):
        inputs = dict(base.inputs)
        for name, spec in random.items():
            changed = _as_dtype(spec, dtype) if dtype and _kind_of(str(spec.get("dtype", "float32"))) == "f" else dict(spec)
            changed["zeros"] = 0.5
            inputs[name] = changed
        tags = [label] + ([f"dtype={dtype}"] if dtype else [])
        out.append(Case(tags, base.torch, inputs, base.seed))
    return out


# ------------------------------------------------------------------ call forms
def _dim_position(sig: Signature) -> int | None:
    for index, name in enumerate(sig.names):
        if name in DIM_NAMES and name not in sig.keyword_only:
            return index
    return None


def _dim_argument(call: ast.Call, sig: Signature) -> tuple[str, ast.expr] | None:
    """The dimension argument of the call: a keyword named dim/axis/dims, or the positional argument
    at that parameter's place in torch's signature."""
    for keyword in call.keywords:
        if keyword.arg in DIM_NAMES:
            return keyword.arg, keyword.value
    position = _dim_position(sig)
    if position is not None and position < len(call.args):
        return sig.names[position], call.args[position]
    return None


def _set_dim(call: ast.Call, value: ast.expr, sig: Signature) -> bool:
    for keyword in call.keywords:
        if keyword.arg in DIM_NAMES:
            keyword.value = value
            return True
    position = _dim_position(sig)
    if position is not None and position < len(call.args):
        call.args[position] = value
        return True
    return False


def _method_params(sig: Signature, kind: str) -> list[tuple[str, bool]]:
    """The parameters a call passes (a method's `self` is the receiver, not an argument)."""
    params = list(sig.params)
    if params and params[0][0] == "self":
        params = params[1:]
    return params


def _dim_cases(base: Case, sig: Signature, kind: str, ndim: int | None) -> list[Case]:
    tree = _parse(base.torch)
    if tree is None or target_call(tree, kind) is None:
        return []
    call = _call_in(tree, kind)
    params = _method_params(sig, kind)
    local = Signature(tuple(params), sig.positional_only, sig.keyword_only)
    found = _dim_argument(call, local)
    out: list[Case] = []
    rank = ndim if ndim is not None else 2
    if found is not None:
        _, value = found
        if isinstance(value, ast.Constant) and isinstance(value.value, int) and not isinstance(value.value, bool):
            dim = value.value
            if dim >= 0 and rank > 0:
                code = _edit(base.torch, kind, lambda c: _set_dim(c, _const(dim - rank), local))
                if code:
                    out.append(Case(["dim<0"], code, base.inputs, base.seed))
            tuple_dim = (0, 1) if rank >= 2 else (dim,)
            code = _edit(base.torch, kind, lambda c: _set_dim(c, _const(tuple_dim), local))
            if code:
                out.append(Case(["dim=tuple"], code, base.inputs, base.seed))
    else:
        names = [n for n, _ in params]
        dims = [n for n in names if n in DIM_NAMES]
        if dims and not sig.positional_only & set(dims):
            name = dims[0]
            for dim in (0, -1):
                code = _edit(base.torch, kind, lambda c, d=dim: c.keywords.append(ast.keyword(arg=name, value=_const(d))))
                if code:
                    out.append(Case([f"dim={dim}" if dim >= 0 else "dim<0"], code, base.inputs, base.seed))
    names = [n for n, _ in params]
    if "keepdim" in names and (found is not None or out) and not any(k.arg == "keepdim" for k in call.keywords):
        source = base.torch if found is not None else out[0].torch
        code = _edit(source, kind, lambda c: c.keywords.append(ast.keyword(arg="keepdim", value=_const(True))))
        if code:
            out.append(Case(["keepdim"], code, base.inputs, base.seed))
    return out


def _form_cases(base: Case, sig: Signature, kind: str) -> list[Case]:
    """The keyword, positional and defaults forms of the call."""
    tree = _parse(base.torch)
    if tree is None or target_call(tree, kind) is None:
        return []
    call = _call_in(tree, kind)
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return []
    params = _method_params(sig, kind)
    if not params:
        return []
    order = [n for n, _ in params if n not in sig.keyword_only]
    has_default = dict(params)
    fixed = FORM_FIXED.get(kind, 1)
    out: list[Case] = []
    positional = len(call.args)
    if fixed < positional <= len(order):
        moved = order[fixed:positional]
        if not set(moved) & sig.positional_only and not {k.arg for k in call.keywords} & set(moved):
            def to_keywords(c: ast.Call) -> None:
                c.keywords = [ast.keyword(arg=n, value=v) for n, v in zip(moved, c.args[fixed:])] + c.keywords
                c.args = c.args[:fixed]
            code = _edit(base.torch, kind, to_keywords)
            if code:
                out.append(Case(["keyword"], code, base.inputs, base.seed))
    if call.keywords:
        index = {n: i for i, n in enumerate(order)}
        kws = [k for k in call.keywords if k.arg in index]
        ordered = sorted(kws, key=lambda k: index[str(k.arg)])
        run = order[positional:positional + len(ordered)]
        if ordered and [k.arg for k in ordered] == run:
            def to_positional(c: ast.Call) -> None:
                c.args = c.args + [k.value for k in ordered]
                c.keywords = [k for k in c.keywords if k not in kws]
            code = _edit(base.torch, kind, to_positional)
            if code:
                out.append(Case(["positional"], code, base.inputs, base.seed))
    out += _defaults_cases(base, call, kind, order, has_default, fixed)
    return out


def _defaults_cases(base: Case, call: ast.Call, kind: str, order: list[str], has_default: dict[str, bool],
                    fixed: int) -> list[Case]:
    """The call with its trailing defaulted arguments left out, one more each time (keywords from the
    last, then positionals), down to the first one without a default: `f(x, 1, True)` gives `f(x, 1)` and
    `f(x)`, the forms that rely on the defaults of both libraries."""
    keywords = len(call.keywords)
    while keywords and has_default.get(call.keywords[keywords - 1].arg or ""):
        keywords -= 1
    positional = len(call.args)
    if keywords == 0:
        while positional > fixed and positional <= len(order) and has_default.get(order[positional - 1]):
            positional -= 1
    out: list[Case] = []
    for kept_keywords in range(len(call.keywords) - 1, keywords - 1, -1):
        code = _edit(base.torch, kind, lambda c, k=kept_keywords: setattr(c, "keywords", c.keywords[:k]))
        if code:
            out.append(Case(["defaults"], code, base.inputs, base.seed))
    for kept in range(len(call.args) - 1, positional - 1, -1):
        def cut(c: ast.Call, k: int = kept) -> None:
            c.keywords = c.keywords[:keywords]
            c.args = c.args[:k]
        code = _edit(base.torch, kind, cut)
        if code:
            out.append(Case(["defaults"], code, base.inputs, base.seed))
    return out


# Parameters an `opt=` case never passes: placement, autograd, output buffers, in-place flags and legacy
# loss flags (their differences are handled by the fix itself, not by the API's computation).
_NOT_VARIED = frozenset({
    "out", "device", "requires_grad", "pin_memory", "memory_format", "layout", "non_blocking", "inplace",
    "size_average", "reduce", "generator", "dtype", "names", "sparse", "sparse_grad", "_random_samples",
    "_stacklevel", "antialias", "foreach", "maximize", "capturable", "differentiable", "fused", "verbose",
    "check_inputs", "validate_args", "deterministic", "is_causal", "enable_gqa", "_freeze", "device_ids",
})
MAX_OPTIONAL_CASES = 8


def _optional_cases(base: Case, sig: Signature, kind: str) -> list[Case]:
    """The call with an optional parameter it leaves out passed by keyword at another value than its
    default (a bool flipped, an int k as k + 1, a float x as 2x), one case each: the parameters real code
    passes (padding, stride, ignore_index) that an example may not. Tag ``opt=NAME``."""
    tree = _parse(base.torch)
    if tree is None or target_call(tree, kind) is None or not sig.defaults:
        return []
    call = _call_in(tree, kind)
    order = [n for n, _ in _method_params(sig, kind) if n not in sig.keyword_only]
    passed = {k.arg for k in call.keywords} | set(order[:len(call.args)])
    out: list[Case] = []
    for name, default in sig.defaults:
        if name in passed or name in _NOT_VARIED or name in sig.positional_only or name.startswith("_"):
            continue
        if isinstance(default, bool):
            value: Any = not default
        elif isinstance(default, int):
            value = default + 1
        elif isinstance(default, float) and math.isfinite(default):
            value = default * 2 if default else 0.5
        else:
            continue
        code = _edit(base.torch, kind, lambda c, n=name, v=value: c.keywords.append(ast.keyword(arg=n, value=_const(v))))
        if code:
            out.append(Case([f"opt={name}"], code, base.inputs, base.seed))
        if len(out) >= MAX_OPTIONAL_CASES:
            break
    return out


def _literal_cases(base: Case, kind: str) -> list[Case]:
    """The call's number arguments changed: integers k -> k + 1 and 1; floats x -> 2x and x / 2."""
    tree = _parse(base.torch)
    if tree is None or target_call(tree, kind) is None:
        return []
    call = _call_in(tree, kind)
    slots: list[tuple[str, int | str]] = [("arg", i) for i in range(len(call.args))] + \
        [("kw", str(k.arg)) for k in call.keywords if k.arg]
    out: list[Case] = []
    for where, key in slots:
        value = call.args[key] if where == "arg" and isinstance(key, int) else \
            next(k.value for k in call.keywords if k.arg == key)
        if not isinstance(value, ast.Constant) or isinstance(value.value, bool):
            continue
        number = value.value
        if isinstance(number, int):
            news: list[Any] = sorted({number + 1, 1} - {number})
        elif isinstance(number, float):
            news = [number * 2, number / 2] if number else [0.5]
        else:
            continue
        for new in news:
            def change(c: ast.Call, where: str = where, key: int | str = key, new: Any = new) -> None:
                if where == "arg" and isinstance(key, int):
                    c.args[key] = _const(new)
                else:
                    for k in c.keywords:
                        if k.arg == key:
                            k.value = _const(new)
            code = _edit(base.torch, kind, change)
            if code:
                label = key if where == "kw" else f"#{key}"
                out.append(Case([f"arg{label}={new!r}"], code, base.inputs, base.seed))
    return out


# ------------------------------------------------------------------ all of it
def generate(spec: dict[str, Any], sig: Signature | None, extra_seeds: int = 0) -> list[Case]:
    """The cases of one example (the example itself first), at least `MIN_CASES` where the
    example has random inputs: structural variants, then other seeds."""
    kind = str(spec.get("kind") or "function")
    inputs = {n: dict(s) for n, s in (spec.get("inputs") or {}).items()}
    seed = int(spec.get("seed", 0))
    base = Case(["example"], spec["torch"], inputs, seed)
    cases = [base]
    shape_only = spec.get("compare") == "shape"
    first = _first_input(base.torch, inputs, kind)
    ndim = len(inputs[first]["shape"]) if first and "shape" in inputs.get(first, {}) else None
    if kind not in ("optimizer", "scheduler"):
        cases += _dtype_cases(base)
        cases += _shape_cases(base, first)
        cases += _zeros_cases(base)
    if sig is not None:
        if kind not in ("optimizer", "scheduler"):
            cases += _dim_cases(base, sig, kind, ndim)
        cases += _form_cases(base, sig, kind)
        cases += _optional_cases(base, sig, kind)
    cases += _literal_cases(base, kind)
    differentiable = kind not in _NO_GRAD_KINDS and not spec.get("random") and not shape_only and any(
        _kind_of(str(s.get("dtype", "float32"))) == "f" for s in inputs.values())
    if differentiable:
        cases.append(Case(["grad"], base.torch, inputs, seed, grad=True))
        f64 = {n: (_as_dtype(s, "float64") if _kind_of(str(s.get("dtype", "float32"))) == "f" else s)
               for n, s in inputs.items()}
        cases.append(Case(["grad", "dtype=float64"], base.torch, f64, seed, grad=True))
    if kind == "inplace":  # every case checks the receiver afterwards: facts about that cover them all
        for case in cases:
            case.tags.append("inplace")
    unique: list[Case] = []
    seen: set[str] = set()
    for case in cases:
        key = repr((case.torch, sorted(case.inputs.items()), case.seed, case.grad))
        if key not in seen:
            seen.add(key)
            unique.append(case)
    if any(_random(s) for s in inputs.values()):
        wanted = max(0, MIN_CASES + 4 - len(unique)) + extra_seeds
        for k in range(1, wanted + 1):
            unique.append(Case([f"seed={seed + k}"] + (["inplace"] if kind == "inplace" else []), base.torch,
                               inputs, seed + k))
    return unique


def seed_cases(spec: dict[str, Any], start: int, count: int) -> list[Case]:
    """More cases of the example on other random values (when too few of the first ones ran)."""
    inputs = {n: dict(s) for n, s in (spec.get("inputs") or {}).items()}
    if not any(_random(s) for s in inputs.values()):
        return []
    seed = int(spec.get("seed", 0))
    extra = ["inplace"] if spec.get("kind") == "inplace" else []
    return [Case([f"seed={seed + k}"] + extra, spec["torch"], inputs, seed + k) for k in range(start, start + count)]
