"""`x.real` -> `x.real()`: a torch attribute that is a method in MindSpore.

Used by the targets mindspore.Tensor.real and mindspore.Tensor.imag of torch.Tensor.real and torch.Tensor.imag."""

from __future__ import annotations

from ..model import CallKind, Edit, Fix
from .base import PASS, Context, Pass, Transform, register


@register
class CalledAttribute(Transform):
    name = "called_attribute"

    def whole(self, ctx: Context) -> Fix | None | Pass:
        call, target, src = ctx.call, ctx.target, ctx.src
        if call.kind is not CallKind.ATTRIBUTE or target is None:  # a call of it calls the method already
            return PASS
        at = src.offset(call.span.end_line, call.span.end_col)
        return Fix(title=f"Call {target.api}", edits=(Edit(src.span_of(at, at), "()"),), safe=True)
