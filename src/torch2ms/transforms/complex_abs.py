"""`z.abs()` / `torch.abs(z)` of a complex `z` -> `mindspore.ops.ComplexAbs()(z)`: torch makes the result real
for a complex operand where MindSpore 2.10 keeps it complex (`abs` of an rfft: complex64 with the magnitudes
as real parts). Applies where the operand is written as a call of a function with a complex result
(argument `complex_results`: their last names, torch's or their rewrites'); otherwise the ordinary rewrite.

Used by torch.abs, torch.absolute, torch.Tensor.abs and torch.Tensor.absolute."""

from __future__ import annotations

import ast

from ..model import ApiCall, CallKind, Edit, Fix, arg_for
from .base import PASS, Context, Pass, Transform, register
from .edits import EditBuilder


def _complex_operand(src: EditBuilder, call: ApiCall, complex_results: frozenset[str]) -> bool:
    """True when the tensor the call works on (a method's receiver, else its first positional argument) is
    written as a call of a function with a complex result (`complex_results`)."""
    if call.kind is CallKind.METHOD:
        if call.func_span is None:
            return False
        text = src.slice(call.func_span).rpartition(".")[0]
    else:
        first = arg_for(call.args, None, 0)
        if first is None:
            return False
        text = src.slice(first.span)
    text = text.strip()
    if _called_name(text) not in complex_results:  # cheap: a chain of n calls stays linear
        return False
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return False
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in complex_results


def _called_name(text: str) -> str | None:
    """The name called last in `text` when it ends with a call (`a.fft.rfft(x)` -> "rfft"), read from the
    end without parsing; None otherwise. A first filter only: the caller parses what passes it."""
    if not text.endswith(")"):
        return None
    depth = 0
    for at in range(len(text) - 1, -1, -1):
        if text[at] == ")":
            depth += 1
        elif text[at] == "(":
            depth -= 1
            if depth == 0:
                end = at
                while end > 0 and text[end - 1].isspace():
                    end -= 1
                start = end
                while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
                    start -= 1
                return text[start:end] or None
    return None


def _complex_abs_fix(src: EditBuilder, call: ApiCall) -> Fix | None:
    """`z.abs()` / `torch.abs(z)` of a complex `z` -> `mindspore.ops.ComplexAbs()(z)` (only the text around
    the operand is edited, so a fix inside it still applies)."""
    if call.func_span is None or not src.mindspore_visible(call.span):
        return None
    form = "mindspore.ops.ComplexAbs()"
    if call.kind is CallKind.METHOD:
        if call.args or call.name_span is None:
            return None
        start = src.offset(call.func_span.start_line, call.func_span.start_col)
        dot = src.text.rfind(".", start, src.offset(call.name_span.start_line, call.name_span.start_col))
        end = src.offset(call.span.end_line, call.span.end_col)
        edits = [Edit(src.span_of(start, start), form + "("), Edit(src.span_of(dot, end), ")")]
    else:
        if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].starred:
            return None
        edits = [Edit(call.func_span, form)]
    imp = src.import_edit()
    return Fix(f"Use {form} (the magnitudes of a complex tensor, as a real tensor)",
               tuple([imp, *edits] if imp is not None else edits))


@register
class ComplexAbs(Transform):
    name = "complex_abs"

    def whole(self, ctx: Context) -> Fix | None | Pass:
        if not _complex_operand(ctx.src, ctx.call, frozenset(ctx.arg("complex_results", ()))):
            return PASS
        return _complex_abs_fix(ctx.src, ctx.call)
