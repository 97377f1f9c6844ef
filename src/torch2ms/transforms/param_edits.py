"""The edits a target's parameter facts ask for at one call (renamed, dropped, translated, retyped keywords,
torch defaults written out) and whether they are safe; the general keywords MindSpore lacks (``device=``,
``requires_grad=``, ``out=``, a loss's legacy ``size_average``/``reduce``) go too. A target's transform may
write a default itself (`Transform.default_keywords`)."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import assert_never

from ..model import ApiCall, Arg, CallKind, Edit, FactKind, ParamFact, Span, Target, arg_for
from .base import PASS, REGISTRY
from .edits import (
    NOT_LITERAL, EditBuilder, written_literal, arg_start, insert_keywords, keyword_arg, literal, passed_arg, pure_text, removal_edits,
)

def result_dtype(fact: ParamFact) -> str | None:
    """torch's result dtype when the fact states that MindSpore's differs; None otherwise."""
    if fact.kind is not FactKind.SEMANTICS_DIFFER or fact.torch is not None or fact.ms is not None \
            or fact.result_dtype is None:
        return None
    return fact.result_dtype[0]


def default_keyword(fact: ParamFact) -> str | None:
    """``name=value`` that gives torch's behaviour where a default differs (a ``default_differs`` fact
    for a call that passes nothing for it), or None when it cannot be written: a torch default of None
    (computed from other arguments), or torch's word for an option renamed between the libraries, which
    usually has its own vocabulary (padding_mode='zeros' vs pad_mode='pad'). A fact without a torch name
    is a MindSpore parameter torch lacks; its `torch_default` is the value that behaves as torch does."""
    name = fact.ms or fact.torch
    if fact.kind is not FactKind.DEFAULT_DIFFERS or name is None or fact.torch_default is None:
        return None
    text = literal(fact.torch_default)
    if text is None or isinstance(fact.torch_default, str) and fact.torch and fact.ms and fact.ms != fact.torch:
        return None
    return f"{name}={text}"


# Dropped parameters whose value does not change what the call computes, only whether its input is
# overwritten: a value other than torch's default may go in an unsafe fix. Any other dropped parameter
# passed with a value other than torch's default leaves the call unfixed (its result would change).
VALUE_NEUTRAL = frozenset({"inplace"})


# Keywords every torch creation function or layer may take that MindSpore has no use for (it places the
# whole program on one device and has no tensor-level autograd flag), with the values that are torch's
# defaults (dropping a default is safe; dropping another value is unsafe: what it selected is lost).
# A target that does take one (mindspore.Parameter's requires_grad) says so with a fact naming it.
_GENERAL_DROPPED: dict[str, tuple[object, ...]] = {
    "device": (None,), "requires_grad": (False,), "pin_memory": (False,), "non_blocking": (False,),
    "layout": ("strided",), "memory_format": ("contiguous_format", "preserve_format"),
}


# Keywords MindSpore has too but that go where they pass torch's default (None: the default dtype, float32 in
# both libraries); MindSpore's older layers (mindspore.nn.Dense, Conv2d, LayerNorm) raise on dtype=None.
DEFAULT_DROPPED: dict[str, tuple[object, ...]] = {"dtype": (None,)}


def _default_dropped(arg: Arg) -> bool:
    """`dtype=None`: a keyword MindSpore has too, passing torch's default: it goes."""
    return arg.keyword in DEFAULT_DROPPED and arg.is_const and arg.value in DEFAULT_DROPPED[arg.keyword]


def dropped_mapping(arg: Arg, declared: set[str]) -> bool | None:
    """For ``**mapping`` whose keys a dict display spells, all of them general keywords MindSpore lacks or
    keywords that go at their default (``dd = {'device': device, 'dtype': dtype}``, the way libraries pass a
    caller's placement on to every layer): whether dropping it is safe (every value None, torch's default),
    or None when it must stay."""
    if not arg.starred or arg.keyword is not None or not arg.keys:
        return None
    if any(key in declared or (key not in _GENERAL_DROPPED and key not in DEFAULT_DROPPED) for key, _ in arg.keys):
        return None
    return all(none for _, none in arg.keys)


def _general_default(src: EditBuilder, arg: Arg) -> bool:
    """True when `arg` passes torch's default for its general keyword (a constant or a torch attribute)."""
    values = _GENERAL_DROPPED.get(arg.keyword or "", ())
    if arg.is_const:
        return any(arg.value is v or (v is not None and arg.value == v) for v in values)
    return src.slice(arg.span).rpartition(".")[2] in {v for v in values if isinstance(v, str)}


def _legacy_reduction(src: EditBuilder, call: ApiCall) -> str | None | bool:
    """The `reduction` that a loss's legacy `size_average` / `reduce` flags select (torch's rule), None when
    the call passes neither, False when it cannot be told (a value that is not written as a literal, or
    `reduction` too)."""
    flags = {a.keyword: a for a in call.args if a.keyword in ("size_average", "reduce")}
    if not flags:
        return None
    if keyword_arg(call, "reduction") is not None or any(src.slice(a.span).strip() not in ("None", "True", "False")
                                                      for a in flags.values()):
        return False
    size_average = flags["size_average"].value if "size_average" in flags else None
    reduce = flags["reduce"].value if "reduce" in flags else None
    if reduce is False:
        return "none"
    return "sum" if size_average is False else "mean"


@dataclass
class Params:
    edits: list[Edit]
    safe: bool
    out: Arg | None = None  # an `out=` argument, removed by the edits: the caller writes the result into it


def param_edits(src: EditBuilder, call: ApiCall, target: Target, receiver_first: bool = False,
                defaults: bool = True) -> Params | None:
    """The edits for the target's parameter facts (and the general keywords MindSpore lacks) and whether
    they are safe; None: no fix possible. `receiver_first`: a method's receiver becomes the first argument.
    `defaults`: torch's defaults are written here; not where a class held by a variable is called
    (`norm_layer(dim)`): they belong where the class value is written, which a `partial` may have bound."""
    edits: list[Edit] = []
    safe = True
    dropped: list[Arg] = []
    explicit: list[str] = []
    declared = {f.torch for f in target.params if f.torch}
    # a keyword that goes where it passes torch's default, translated otherwise (dtype=None goes; a dtype held by
    # a name becomes `(dtype) or mindspore.float32`): still dropped at its default and in `**dd`
    translated = {f.torch for f in target.params if f.kind is FactKind.TRANSLATED and f.torch in DEFAULT_DROPPED}
    starred = any(a.starred and dropped_mapping(a, declared - translated) is None for a in call.args)  # one that stays
    legacy = _legacy_reduction(src, call)
    if legacy is False:
        return None
    keyworded = [a for f in target.params if f.kind is FactKind.RENAMED and f.ms and (f.ms == f.torch or f.by_keyword)
                 and (a := passed_arg(call, f)) is not None and a.keyword is None]  # positionals that go by keyword
    for fact in target.params:
        passed = passed_arg(call, fact)
        match fact.kind:
            case FactKind.ADDED_REQUIRED:
                value = literal(fact.ms_default) if fact.ms and fact.ms_default is not None else None
                if value is None or keyword_arg(call, fact.ms) is not None:
                    return None  # MindSpore needs an argument the table cannot give
                explicit.append(f"{fact.ms}={value}")  # the table names the value torch implies
                continue
            case FactKind.SEMANTICS_DIFFER:
                if passed is not None and (not (fact.values or fact.types) or not passed.is_const
                                           or fact.matches(passed.value)):
                    return None  # the value passed may mean something else in MindSpore (one the fact names)
                if "all" in fact.covers and fact.torch is None:
                    return None  # the form never gives torch's result as written (another structure): a person ports it
                if fact.torch is None and fact.ms is None and result_dtype(fact) is None \
                        and not fact.only_degenerate_inputs:
                    # The API as a whole behaves differently: a human should look. (A result dtype is cast
                    # back; a difference that `torch2ms verify` found only for empty or 0-d inputs leaves
                    # the rewrite safe: the finding names it.)
                    safe = False
                continue
            case FactKind.UNSUPPORTED_VALUES:
                # (a value known only at run time: only where MindSpore raises for the values the fact names)
                if passed is not None and (not passed.is_const and not fact.raises or fact.matches(passed.value)):
                    return None
                if passed is None and fact.torch_default is not None and fact.matches(fact.torch_default):
                    return None
                continue
            case FactKind.RENAMED:
                if passed is not None and fact.ms and fact.ms != fact.torch and passed.keyword_span is not None:
                    edits.append(Edit(passed.keyword_span, fact.ms))
                elif passed is not None and fact.ms and (fact.ms == fact.torch or fact.by_keyword) \
                        and passed.keyword is None:
                    # The parameter at another place: MindSpore's parameter at this position is another one
                    # (nn.Dropout: keep_prob, not p; nn.LayerNorm: begin_norm_axis, not eps), so the value goes
                    # by keyword (a positional only when every positional after it goes by keyword too)
                    positional = [a for a in call.args if a.keyword is None]
                    if passed.starred or not all(any(a is k for k in keyworded)
                                                 for a in positional[positional.index(passed) + 1:]):
                        return None
                    edits.append(Edit(Span(*arg_start(passed), *arg_start(passed)), f"{fact.ms}="))
                continue
            case FactKind.TRANSLATED:
                if passed is None or passed.starred or _default_dropped(passed):
                    continue
                moved = _translated_edits(call, fact, passed, src.slice(passed.span))
                if moved is None:
                    return None  # a value the table cannot translate, or one that cannot go by keyword
                edits.extend(moved)
                continue
            case FactKind.RETYPED if "list" in fact.values:
                written = src.slice(passed.span) if passed is not None and not passed.starred else "[]"
                if passed is not None and not written.startswith("[") and not written.isidentifier():  # a name:
                    wrapped = f"list({written})"  # any iterable's items                           # a list mostly
                    func = call.func_span
                    if func is not None and (func.end_line, func.end_col) == (passed.span.start_line,
                                                                             passed.span.start_col):
                        wrapped = f"({wrapped})"  # a generator, the call's only argument: its parentheses are the call's
                    edits.append(Edit(passed.span, wrapped))
                continue
            case FactKind.RETYPED:
                if passed is not None and not passed.starred and passed.is_const and type(passed.value) is int:
                    value = src.slice(passed.span)
                    written = f"({value},)" if "tuple" in fact.values else \
                        f"{value}.0" if value.strip().isdigit() else f"float({value})"
                    edits.append(Edit(passed.span, written))
                continue  # another value is written as it is (a value of the wrong type raises in MindSpore)
            case FactKind.DROPPED:
                if passed is None:
                    continue
                positional = [a for a in call.args if a.keyword is None]
                if passed.starred or (passed.keyword is None and (passed is not positional[-1] or
                                                                   len(positional) != len(call.args))):
                    return None  # only the last argument may go when it is passed by position
                if not (passed.is_const and fact.torch_default is not None and passed.value == fact.torch_default):
                    if fact.torch not in VALUE_NEUTRAL:
                        return None  # the value passed selects another computation: dropping it changes results
                    safe = False  # inplace=True: only whether the input is overwritten is lost
                dropped.append(passed)
                continue
            case FactKind.DEFAULT_DIFFERS:
                name = fact.ms or fact.torch
                if passed is not None:
                    if fact.ms and fact.ms != fact.torch and passed.keyword_span is not None:
                        edits.append(Edit(passed.keyword_span, fact.ms))
                    continue
                if name is None or fact.torch is None and fact.ms is None or (fact.torch == "reduction" and legacy is not None) \
                        or not defaults:
                    continue
                if any(other is not fact and other.ms == name and passed_arg(call, other) is not None
                       for other in target.params):
                    continue  # another torch parameter sets it (unbiased= for ddof): a translated fact writes it
                if starred or keyword_arg(call, name) is not None:
                    return None  # with torch None: a MindSpore parameter torch lacks, passed already (its vocabulary)
                if target.rewrite is not None:  # the target's transform may write this default itself
                    keywords = REGISTRY[target.rewrite.transform].default_keywords(call, target.rewrite, fact) \
                        if target.rewrite.transform in REGISTRY else PASS
                    if keywords is None:
                        return None  # the value torch implies cannot be told here
                    if keywords is not PASS:
                        explicit.extend(keywords)
                        continue
                text = default_keyword(fact) or _copied_default(src, call, fact)
                if text is None:
                    safe = False
                    continue
                explicit.append(text)
                continue
            case FactKind.UNSUPPORTED_INPUTS:
                continue
            case _:
                assert_never(fact.kind)
    for arg in call.args:
        if arg.keyword in _GENERAL_DROPPED and arg.keyword not in declared and all(arg is not d for d in dropped):
            if not _general_default(src, arg):
                safe = False
            dropped.append(arg)
        elif _default_dropped(arg) and arg.keyword not in declared - translated:
            dropped.append(arg)
        elif (mapping := dropped_mapping(arg, declared - translated)) is not None:
            safe = safe and mapping  # a value other than None: what it selected (a dtype) is lost
            dropped.append(arg)
    if legacy is not None:
        dropped.extend(a for a in call.args if a.keyword in ("size_average", "reduce"))
        name = next((f.ms for f in target.params if f.kind is FactKind.RENAMED and f.torch == "reduction" and f.ms),
                    "reduction")
        explicit.append(f"{name}={legacy!r}")
    out = keyword_arg(call, "out") if "out" not in declared else None
    if out is not None:
        if out.starred or not pure_text(src, out):
            return None
        dropped.append(out)
    if dropped:
        edits.extend(removal_edits(src, call, dropped))
    if explicit:
        if call.kind is CallKind.ATTRIBUTE:
            return None
        insert = insert_keywords(src, call, explicit, dropped, receiver_first)
        if insert is not None:
            edits.append(insert)
    return Params(edits, safe, out)


def _translated_edits(call: ApiCall, fact: ParamFact, passed: Arg, text: str) -> list[Edit] | None:
    """`unbiased=False` -> `ddof=0`: the argument rewritten as MindSpore's parameter with the value the
    fact pairs with torch's (of the same type: False is not 0 here), or the value its `form` computes
    (`momentum=0.01` -> `momentum=0.99`; a value known only at run time goes into the expression, written
    around the argument's own text so that the argument's own rewrites still apply: `momentum=1 - (self.bn_mom)`,
    `dtype=(dtype) or mindspore.float32`). A positional value goes by keyword, so it must be the last positional
    argument. None: no pair for the value, or it cannot be moved."""
    if fact.ms is None or passed.starred:
        return None
    around: tuple[str, str] | None = None
    if fact.form is not None:
        # a constant written in the call is computed; any other value (a name, even one whose value the scan
        # follows, e.g. a parameter's default that callers may override) goes into the expression
        literal_value = written_literal(text)
        if literal_value is NOT_LITERAL:
            before, _, after = fact.form.partition("{}")
            around, value = (before + "(", ")" + after), None
        else:
            value = translated_value(fact.form, literal_value)
    elif passed.is_const:
        mapped = [m for t, m in fact.values if type(t) is type(passed.value) and t == passed.value]
        value = literal(mapped[0]) if mapped else None
    else:
        value = None
    if value is None and around is None:
        return None
    start, end = Span(*arg_start(passed), *arg_start(passed)), Span(passed.span.end_line, passed.span.end_col,
                                                                    passed.span.end_line, passed.span.end_col)
    if passed.keyword is None:
        if passed is not [a for a in call.args if a.keyword is None][-1]:
            return None
        if around is not None:
            return [Edit(start, f"{fact.ms}={around[0]}"), Edit(end, around[1])]
        return [Edit(passed.span, f"{fact.ms}={value}")]
    if passed.keyword_span is None:
        return None
    if around is not None:
        value_start = Span(passed.span.start_line, passed.span.start_col, passed.span.start_line,
                           passed.span.start_col)
        renamed = [Edit(passed.keyword_span, fact.ms)] if fact.ms != passed.keyword else []
        return [*renamed, Edit(value_start, around[0]), Edit(end, around[1])]
    return [Edit(Span(passed.keyword_span.start_line, passed.keyword_span.start_col,
                      passed.span.end_line, passed.span.end_col), f"{fact.ms}={value}")]


_ARITHMETIC: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
}


def translated_value(form: str, value: object) -> str | None:
    """The literal a translation `form` gives for a constant number (`"1 - {}"`, 0.3 -> `0.7`), computed
    on the form's arithmetic alone (the form is the tables', never the scanned code's); None for a value
    that is not a number (torch's `momentum=None` has no MindSpore counterpart). A form `{} or default` gives
    the constant itself where it is true and the default where it is not (`dtype=None` -> `mindspore.float32`)."""
    try:
        tree = ast.parse(form.format("_value"), mode="eval").body
    except SyntaxError:
        return None
    if isinstance(tree, ast.BoolOp) and isinstance(tree.op, ast.Or) \
            and isinstance(tree.values[0], ast.Name) and tree.values[0].id == "_value":
        rest = tree.values[1:]
        return repr(value) if value else ast.unparse(rest[0] if len(rest) == 1 else ast.BoolOp(ast.Or(), rest))
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None

    def ev(node: ast.expr) -> float:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
                and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name) and node.id == "_value":
            return value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
            return _ARITHMETIC[type(node.op)](ev(node.left), ev(node.right))
        raise ValueError(ast.dump(node))

    try:
        result = ev(tree)
    except (ValueError, ZeroDivisionError):
        return None
    return repr(round(result, 12))


def _copied_default(src: EditBuilder, call: ApiCall, fact: ParamFact) -> str | None:
    """``stride=<the kernel_size argument>`` where torch's default is another argument's value (the
    fact's `default_from`), when that argument's text can be written twice with the same value."""
    if fact.default_from is None or fact.torch_default is not None:
        return None
    arg = arg_for(call.args, fact.default_from, fact.from_position)
    if arg is None or arg.starred or not pure_text(src, arg):
        return None
    return f"{fact.ms or fact.torch}={src.slice(arg.span)}"
