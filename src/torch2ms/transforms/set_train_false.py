"""`model.eval()` -> `model.set_train(False)`: the target method takes the mode as an argument.

Used by the target mindspore.nn.Cell.set_train of torch.nn.Module.eval."""

from __future__ import annotations

from ..model import ApiCall, CallKind, Edit, Fix
from .base import Context, Pass, Transform, register
from .edits import EditBuilder


def _eval_fix(src: EditBuilder, call: ApiCall) -> Fix | None:
    """`model.eval()` -> `model.set_train(False)` ."""
    if call.kind is not CallKind.METHOD or call.args or call.name_span is None:
        return None
    end = src.offset(call.span.end_line, call.span.end_col)
    name_at = src.offset(call.name_span.start_line, call.name_span.start_col)
    return Fix(title="Use mindspore.nn.Cell.set_train(False)",
               edits=(Edit(src.span_of(name_at, end), "set_train(False)"),), safe=True)


@register
class SetTrainFalse(Transform):
    name = "set_train_false"

    def whole(self, ctx: Context) -> Fix | None | Pass:
        return _eval_fix(ctx.src, ctx.call)
