"""`s.get_last_lr()` -> `[float(v) for v in s.get_last_lr()]`: the target's result given torch's form
through an expression of it (argument `form`, with ``{result}`` for the call): MindSpore's schedulers
return the learning rates as Tensors where torch returns Python floats (a number format in an f-string
rejects a Tensor); and the named parameters an optimizer can update (MindSpore's names every Parameter,
a buffer the port keeps as a Parameter with requires_grad=False too); and the cells alone of the (name, cell)
pairs MindSpore's cells_and_names yields, as torch's modules() yields them.

Used by the targets mindspore.experimental.optim.lr_scheduler.LRScheduler.get_last_lr of
torch.optim.lr_scheduler.LRScheduler.get_last_lr, mindspore.nn.Cell.parameters_and_names of
torch.nn.Module.named_parameters and mindspore.nn.Cell.cells_and_names of torch.nn.Module.modules."""

from __future__ import annotations

from ..model import Edit, Fix
from .base import Context, Transform, register


@register
class ResultForm(Transform):
    name = "result_form"

    def result(self, ctx: Context, fix: Fix) -> Fix:
        before, _, after = str(ctx.arg("form")).partition("{result}")
        span, src = ctx.call.span, ctx.src
        start = src.offset(span.start_line, span.start_col)
        end = src.offset(span.end_line, span.end_col)
        return Fix(fix.title, (Edit(src.span_of(start, start), before), *fix.edits,
                               Edit(src.span_of(end, end), after)), fix.safe)
