"""`torch.zeros(2, 3)` -> `mindspore.mint.zeros((2, 3))`: a target that takes the size as one tuple where torch
also takes it as separate arguments.

Used by the targets mindspore.mint.zeros, mindspore.ops.zeros, mindspore.mint.ones and mindspore.ops.ones of
torch.zeros and torch.ones, and by the methods torch.Tensor.new_zeros, torch.Tensor.new_ones and
torch.Tensor.new_empty (``x.new_zeros(2, 3)`` -> ``x.new_zeros((2, 3))``), and the target mindspore.Tensor.broadcast_to of
torch.Tensor.expand (``x.expand(b, -1, -1)`` -> ``x.broadcast_to((b, -1, -1))``). Sizes unpacked from one value,
``torch.zeros(*shape)``, become ``mindspore.mint.zeros((*shape,))``."""

from __future__ import annotations

from ..model import ApiCall, Edit, Span
from .base import Context, Transform, register
from .edits import EditBuilder


def _size_tuple_edits(src: EditBuilder, call: ApiCall) -> list[Edit]:
    positional = [a for a in call.args if a.keyword is None]
    if len(positional) == 1 and positional[0].starred and src.slice(positional[0].span)[:1] == "*":
        # `torch.zeros(*shape)`: the sizes unpacked from one value -> `(*shape,)` (a `**kwargs` is not them)
        only = positional[0].span
        return [Edit(Span(only.start_line, only.start_col, only.start_line, only.start_col), "("),
                Edit(Span(only.end_line, only.end_col, only.end_line, only.end_col), ",)")]
    if len(positional) < 2 or any(a.starred for a in positional):
        return []
    first, last = positional[0].span, positional[-1].span
    return [Edit(Span(first.start_line, first.start_col, first.start_line, first.start_col), "("),
            Edit(Span(last.end_line, last.end_col, last.end_line, last.end_col), ")")]


@register
class SizeTuple(Transform):
    name = "size_tuple"

    def call_edits(self, ctx: Context, edits: list[Edit]) -> list[Edit] | None:
        return [*edits, *_size_tuple_edits(ctx.src, ctx.call)]
