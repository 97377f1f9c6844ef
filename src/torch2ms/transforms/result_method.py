"""`m.named_children()` -> `m.name_cells().items()`: the target's result gives torch's through one more call
of a method of it (argument `method`): MindSpore's Cell.name_cells() is the dict of what named_children()
iterates over. `torch2ms migrate` writes the same from this fact.

Used by the target mindspore.nn.Cell.name_cells of torch.nn.Module.named_children."""

from __future__ import annotations

from ..model import CallKind, Edit, Fix
from .base import Context, Transform, register


@register
class ResultMethod(Transform):
    name = "result_method"

    def result(self, ctx: Context, fix: Fix) -> Fix:
        call, src = ctx.call, ctx.src
        if call.kind is not CallKind.METHOD:
            return fix
        end = src.offset(call.span.end_line, call.span.end_col)
        return Fix(fix.title, (*fix.edits, Edit(src.span_of(end, end), f".{ctx.arg('method')}()")), fix.safe)
