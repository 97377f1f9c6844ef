"""Write src/torch2ms/data/mindspore_api.json: the public API of the installed MindSpore, introspected.

Run:  python scripts/build_mindspore_api.py [--check] [--out FILE]

The port check (torch2ms/portcheck/) reads MindSpore code against these facts; the scan never imports
MindSpore. For each module of MODULES the file lists its public names: a function with its parameters
(`inspect.signature`) and what its docstring says it returns, a submodule (also one not imported yet), a class (its constructor's parameters,
whether it is a Cell or a Tensor, its own members), a submodule, or another value. The members of
mindspore.Tensor and mindspore.nn.Cell (and what mindspore.Parameter adds to a Tensor) are listed with their parameters where MindSpore gives them
(`inspect.signature` cannot read the C++ methods: those bind any arguments) and whether each is an
attribute or a method. A container Cell class (one with a length) whose items leave out a child added with
`insert_child_to_cell`, called, never runs it, is marked "unlisted" with that method's name (observed on an
empty instance). A Cell method that documents some other result and takes no argument is called on a small
Cell (two Parameters, one of them frozen, and a child Cell): where its result is a list or an iterator of Parameters, of Cells, or of
(name, Parameter) or (name, Cell) pairs, its "r" says so (P, C, NP, NC), so the port check knows what a loop
over `net.trainable_params()` or `net.cells_and_names()` holds.

A signature is written as Python writes one, with only the defaults that are plain constants:
`x, kernel_size, stride=None, *, axis=0, **kwargs` (a parameter with `=` has a default, shown where it is
None, a bool, a number or a simple string; `/` ends the positional-only ones, a bare `*` starts the
keyword-only ones). `--check` compares the file with what the installed MindSpore gives and exits 1 on a
difference (CI runs it through tests/test_mindspore_api.py).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import pkgutil
import re
import sys
import warnings
from pathlib import Path
from collections.abc import Callable
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "torch2ms" / "data" / "mindspore_api.json"

# The modules a port writes names from (the tables' targets and what hand-written MindSpore code imports).
MODULES = (
    "mindspore", "mindspore.ops", "mindspore.ops.functional", "mindspore.ops.operations", "mindspore.mint",
    "mindspore.mint.nn", "mindspore.mint.nn.functional", "mindspore.mint.linalg", "mindspore.mint.special",
    "mindspore.mint.optim", "mindspore.mint.distributed", "mindspore.nn", "mindspore.nn.probability",
    "mindspore.nn.probability.distribution", "mindspore.common", "mindspore.common.initializer",
    "mindspore.common.dtype", "mindspore.numpy", "mindspore.amp", "mindspore.train", "mindspore.communication",
    "mindspore.experimental.optim", "mindspore.experimental.optim.lr_scheduler", "mindspore.dataset",
    "mindspore.dataset.vision", "mindspore.dataset.transforms", "mindspore.context", "mindspore.hal",
    "mindspore.runtime", "mindspore.device_context",
)
_RETURNS = re.compile(r"^Returns?:\s*\n\s*(.+)$", re.MULTILINE)
_TENSOR_RETURN = re.compile(r"^(?:(?:A|An|The|Output|output)\s+)?(?:\w+\s+)?Tensor\b(?!s\b)")
_SELF_RETURN = re.compile(r"^Cell, (?:the cell itself|self)\b")  # Cell.set_train(): the Cell it was called on
_ARGS = re.compile(r"^(\s*)Args:\s*$")
_ARG = re.compile(r"^(\s*)(\w+)\s*\((.*)\)\s*:")  # `dtype (:class:`mindspore.dtype`, optional): ...`
_DTYPE = re.compile(r"^(?::class:)?`?mindspore\.dtype`?(?:\s*,\s*optional)?$")
_TENSORS_RETURN = re.compile(r"^(?:A\s+)?(?:tuple|list)\b.*\bTensors?\b|^Tuple of Tensors?\b|^Tensors\b",
                             re.IGNORECASE)


def signature_text(obj: Any, skip_self: bool = False) -> str | None:
    """`obj`'s parameters in the form described above; None where inspect cannot read them."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if skip_self and params and params[0].kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                   inspect.Parameter.POSITIONAL_OR_KEYWORD):
        params = params[1:]
    out: list[str] = []
    star_done = False
    for index, param in enumerate(params):
        kind = param.kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            out.append("*" + param.name)
            star_done = True
        elif kind is inspect.Parameter.VAR_KEYWORD:
            out.append("**" + param.name)
        else:
            if kind is inspect.Parameter.KEYWORD_ONLY and not star_done:
                out.append("*")
                star_done = True
            out.append(param.name + _default_text(param.default))
        following = params[index + 1] if index + 1 < len(params) else None
        if kind is inspect.Parameter.POSITIONAL_ONLY and (
                following is None or following.kind is not inspect.Parameter.POSITIONAL_ONLY):
            out.append("/")
    return ", ".join(out)


def _default_text(default: Any) -> str:
    """"" (required), "=" (a default), or "=" and the default's repr when it is a plain constant."""
    if default is inspect.Parameter.empty:
        return ""
    if default is None or isinstance(default, (bool, int, float)) or (
            isinstance(default, str) and not any(c in default for c in ",='\"\\") and default.isprintable()):
        text = repr(default)
        if "," not in text and text != "nan":
            return "=" + text
    return "="


def returns(obj: Any) -> str:
    """What the docstring says `obj` returns: T (a tensor), TS (tensors in a tuple or list), S (a Cell's method
    that returns the Cell itself), X (something else), ? (the docstring does not say)."""
    try:
        doc = inspect.getdoc(obj) or ""
    except Exception:  # noqa: BLE001 - a broken __doc__ is "does not say"
        return "?"
    match = _RETURNS.search(doc)
    if match is None:
        return "?"
    first = match.group(1).strip()
    if _SELF_RETURN.search(first):
        return "S"
    if _TENSORS_RETURN.search(first):
        return "TS"
    if _TENSOR_RETURN.search(first):
        return "T"
    return "X"


def dtype_params(obj: Any) -> dict[str, int | None]:
    """The parameters `obj`'s docstring types as a MindSpore dtype and nothing else, each with the position it
    is passed at (None: by keyword only): from `inspect.signature` (a name it lacks is left out), or, where
    inspect cannot read the parameters (a C++ class such as mindspore.Tensor), the docstring's order of Args."""
    try:
        doc = inspect.getdoc(obj) or ""
    except Exception:  # noqa: BLE001 - a broken __doc__ says nothing
        return {}
    documented: list[tuple[str, str]] = []
    indent: int | None = None
    inside = False
    for line in doc.splitlines():
        if not inside:
            inside = _ARGS.match(line) is not None
            continue
        if line.strip() and indent is not None and len(line) - len(line.lstrip()) < indent:
            break  # the section ends where a line is less indented than its items
        match = _ARG.match(line)
        if match is not None and (indent is None or len(match.group(1)) == indent):
            indent = len(match.group(1))
            documented.append((match.group(2), match.group(3).strip()))
        elif line.strip() and indent is None:
            break
    wanted = [name for name, kind in documented if _DTYPE.match(kind)]
    if not wanted:
        return {}
    try:
        params = list(inspect.signature(obj).parameters.values())
    except (TypeError, ValueError):
        order = [name for name, _ in documented]
        return {name: order.index(name) for name in wanted}
    positional = [p.name for p in params if p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                        inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    names = {p.name for p in params}
    return {name: positional.index(name) if name in positional else None for name in wanted if name in names}


def _public(names: list[str]) -> list[str]:
    return sorted(n for n in names if not n.startswith("_"))


def member_table(cls: type, skip: frozenset[str]) -> dict[str, Any]:
    """The members of `cls` (those of `skip` left out): name -> {"a": 1} for an attribute, or
    {"s": signature or None, "r": returns} for a method."""
    out: dict[str, Any] = {}
    for name in sorted(set(dir(cls)) - skip):
        if name.startswith("__") or (name.startswith("_") and name not in ("_construct",)):
            continue
        try:
            static = inspect.getattr_static(cls, name)
        except AttributeError:
            continue
        if isinstance(static, (property, staticmethod, classmethod)) or callable(static) \
                or inspect.ismethoddescriptor(static):
            if isinstance(static, property) or inspect.isdatadescriptor(static) and not callable(static):
                out[name] = {"a": 1}
                continue
            target = getattr(cls, name, None)
            if target is None:
                out[name] = {"a": 1}
                continue
            skip_self = not isinstance(static, staticmethod) and not isinstance(static, classmethod)
            entry: dict[str, Any] = {"s": signature_text(target, skip_self=skip_self)}
            ret = returns(target)
            if ret != "?":
                entry["r"] = ret
            out[name] = entry
        else:
            out[name] = {"a": 1}
    return out


def _items(result: Any, parameter_cls: type, cell_cls: type) -> str | None:
    """P, C, NP or NC where `result` is a list, tuple or iterator of Parameters, Cells or (name, one) pairs."""
    if isinstance(result, (dict, str, bytes)) or not hasattr(result, "__iter__"):
        return None
    items = list(result)
    def pair(item: Any, cls: type) -> bool:
        return isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], cls)

    checks: tuple[tuple[str, Callable[[Any], bool]], ...] = (
        ("P", lambda i: isinstance(i, parameter_cls)), ("C", lambda i: isinstance(i, cell_cls)),
        ("NP", lambda i: pair(i, parameter_cls)), ("NC", lambda i: pair(i, cell_cls)))
    for code, ok in checks:
        if items and all(ok(item) for item in items):
            return code
    return None


def _unlisted_child(cls: type, cell_cls: Any) -> bool:
    """Whether a container Cell class (one with a length) that runs its items, called, never runs a child added
    with `insert_child_to_cell` (MindSpore's SequentialCell: the child is registered, its construct runs only the
    cells it was built with or appended)."""
    import mindspore
    import numpy

    ran: list[bool] = []

    class Child(cell_cls):  # type: ignore[misc]
        def construct(self, x: Any) -> Any:
            ran.append(True)
            return x

    try:
        container = cls()
        container.insert_child_to_cell("added", Child())
        container(mindspore.Tensor(numpy.ones(1, numpy.float32)))
    except Exception:  # noqa: BLE001 - a container that cannot be built empty or called says nothing
        return False
    return not ran


def observe_items(members: dict[str, Any], mindspore: Any) -> None:
    """Set "r" of each Cell method in `members` that documents a result other than a tensor or the Cell and
    takes no argument to what its result holds (see `_items`), observed on a fresh small Cell per call."""
    import numpy

    class Probe(mindspore.nn.Cell):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.w = mindspore.Parameter(mindspore.Tensor(numpy.ones(1, numpy.float32)), name="w")
            self.u = mindspore.Parameter(mindspore.Tensor(numpy.ones(1, numpy.float32)), name="u", requires_grad=False)
            self.child = mindspore.nn.ReLU()

    for name, entry in members.items():
        if entry.get("r") != "X":
            continue
        try:
            params = inspect.signature(getattr(mindspore.nn.Cell, name)).parameters.values()
        except (TypeError, ValueError):
            continue
        if any(p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in list(params)[1:]):
            continue
        try:
            code = _items(getattr(Probe(), name)(), mindspore.Parameter, mindspore.nn.Cell)
        except Exception:  # noqa: BLE001 - a method that needs more than the probe has says nothing
            continue
        if code is not None:
            entry["r"] = code


def build() -> dict[str, Any]:
    warnings.simplefilter("ignore")
    import mindspore

    tensor_cls = mindspore.Tensor
    cell_cls = mindspore.nn.Cell
    tensor_bases = tuple(base for base in tensor_cls.__mro__ if base is not object)[-1:]
    object_members = frozenset(dir(object))
    cell_members = frozenset(dir(cell_cls))
    classes: dict[str, Any] = {}
    modules: dict[str, Any] = {}

    def class_ref(cls: type) -> str:
        key = f"{getattr(cls, '__module__', '?')}.{getattr(cls, '__qualname__', getattr(cls, '__name__', '?'))}"
        if key in classes:
            return key
        classes[key] = {}  # (a placeholder against cycles)
        info: dict[str, Any] = {"s": signature_text(cls)}
        if dtypes := dtype_params(cls):
            info["dt"] = dtypes
        try:
            is_cell = issubclass(cls, cell_cls)
        except TypeError:  # a type-like object that issubclass does not accept
            classes[key] = info
            return key
        if is_cell:
            info["cell"] = 1
        elif issubclass(cls, tensor_bases):  # (Parameter shares Tensor's C++ base, not Tensor itself)
            info["tensor"] = 1
        if is_cell and hasattr(cls, "__len__") and _unlisted_child(cls, cell_cls):
            info["unlisted"] = "insert_child_to_cell"  # the method whose child the class never runs
        if is_cell and cls is not cell_cls:  # the methods a Cell subclass adds (its attributes are set per instance)
            members = {name: entry for name, entry in member_table(cls, cell_members).items() if "a" not in entry}
            construct = getattr(cls, "construct", None)
            if construct is not getattr(cell_cls, "construct", None):  # what calling it takes
                members["construct"] = {"s": signature_text(construct, skip_self=True)}
            if members:
                info["m"] = members
        classes[key] = info
        return key

    for module_name in MODULES:
        try:
            module = importlib.import_module(module_name)
        except Exception:  # noqa: BLE001 - a module this version lacks is left out
            continue
        names: dict[str, Any] = {}
        public = getattr(module, "__all__", None)
        listed = set(public) if isinstance(public, (list, tuple)) else set()
        for name in _public(sorted(set(dir(module)) | listed)):
            try:
                value = getattr(module, name)
            except Exception:  # noqa: BLE001 - a lazy attribute that fails to load is not usable
                continue
            if inspect.ismodule(value):
                names[name] = {"k": "mod", "to": value.__name__}
            elif inspect.isclass(value):
                names[name] = {"k": "cls", "c": class_ref(value)}
            elif callable(value):
                entry: dict[str, Any] = {"k": "fn", "s": signature_text(value)}
                if dtypes := dtype_params(value):
                    entry["dt"] = dtypes
                ret = returns(value)
                if ret != "?":
                    entry["r"] = ret
                names[name] = entry
            else:
                names[name] = {"k": "val"}
        for info in pkgutil.iter_modules(getattr(module, "__path__", None) or []):  # submodules not imported yet
            if not info.name.startswith("_") and info.name not in names:
                names[info.name] = {"k": "mod", "to": f"{module_name}.{info.name}"}
        modules[module_name] = names
    cell = member_table(cell_cls, object_members)
    observe_items(cell, mindspore)
    return {
        "mindspore_version": mindspore.__version__,
        "modules": modules,
        "classes": classes,
        "tensor": member_table(tensor_cls, object_members),
        "cell": cell,
        "parameter": member_table(mindspore.Parameter, frozenset(dir(tensor_cls))),
    }


def render(data: dict[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the file instead of writing it")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    text = render(build())
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current != text:
            print(f"{args.out.name} differs from the installed MindSpore: rerun scripts/build_mindspore_api.py",
                  file=sys.stderr)
            return 1
        print(f"{args.out.name} matches the installed MindSpore")
        return 0
    tmp = args.out.with_suffix(".json.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(args.out)
    print(f"wrote {args.out.name}: {len(text):,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
