"""`x.size()` -> `x.shape`, `x.size(d)` / `x.size(dim=d)` -> `x.shape[d]`: MindSpore's `size` is the element
count and its `shape` an attribute, not a method.

Used by the target mindspore.Tensor.shape of torch.Tensor.size."""

from __future__ import annotations

from ..model import ApiCall, CallKind, Edit, Fix
from .base import Context, Pass, Transform, register
from .edits import EditBuilder


def _size_fix(src: EditBuilder, call: ApiCall) -> Fix | None:
    """`x.size()` -> `x.shape`, `x.size(d)` / `x.size(dim=d)` -> `x.shape[d]`."""
    if call.kind is not CallKind.METHOD or call.name_span is None or len(call.args) > 1 or any(a.starred for a in call.args):
        return None
    end = src.offset(call.span.end_line, call.span.end_col)
    name_at = src.offset(call.name_span.start_line, call.name_span.start_col)
    if not call.args:
        new = "shape"
    else:
        arg = call.args[0]
        if arg.keyword not in (None, "dim"):
            return None
        new = f"shape[{src.slice(arg.span)}]"
    return Fix(title="Use mindspore.Tensor.shape", edits=(Edit(src.span_of(name_at, end), new),), safe=True)


@register
class ShapeAttribute(Transform):
    name = "shape_attribute"

    def whole(self, ctx: Context) -> Fix | None | Pass:
        return _size_fix(ctx.src, ctx.call)
