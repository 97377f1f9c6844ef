"""`x.element_size()` -> `x.itemsize`: a torch method that is an attribute in MindSpore.

Used by the target mindspore.Tensor.itemsize of torch.Tensor.element_size."""

from __future__ import annotations

from ..model import CallKind, Edit, Fix, Span
from .base import PASS, Context, Pass, Transform, register


@register
class AttributeResult(Transform):
    name = "attribute_result"

    def whole(self, ctx: Context) -> Fix | None | Pass:
        call, target = ctx.call, ctx.target
        if call.kind is not CallKind.METHOD or target is None:
            return PASS
        if call.name_span is None or call.args:
            return None  # the attribute takes no argument
        name_to_end = Span(call.name_span.start_line, call.name_span.start_col, call.span.end_line, call.span.end_col)
        return Fix(title=f"Use {target.api}", edits=(Edit(name_to_end, target.api.rpartition(".")[2]),), safe=True)
