"""`nn.LayerNorm(d)` -> `mindspore.nn.LayerNorm((d,), ...)`: a target that takes a shape only as a tuple where
torch also takes one int. Arguments: `param` and `position` (the torch parameter), `axes` (the keywords that
make the target cover as many trailing axes as the shape has: a call that passes one is left alone).

Used by the target mindspore.nn.LayerNorm of torch.nn.LayerNorm."""

from __future__ import annotations

import ast

from ..model import ApiCall, Edit, Span, arg_for
from .base import Context, Transform, register
from .edits import EditBuilder, partial_call


def _shape_tuple_edits(src: EditBuilder, call: ApiCall, name: str, position: int, axes: tuple[str, ...]) -> list[Edit] | None:
    """``nn.LayerNorm(d)`` -> ``LayerNorm((d,))``; a literal shape of one item keeps its form. A shape of n > 1
    items leaves the call unfixed: torch normalizes over its n trailing axes, which MindSpore's `axes` can name
    only from the input's rank (they take -1 or a non-negative axis: -n raises), unknown here. A value not
    written as a literal is taken for one int: a tuple there makes MindSpore raise."""
    arg = arg_for(call.args, name, position)
    if any(a.keyword in axes for a in call.args):
        return None
    if arg is None and partial_call(call):
        return []  # `partial(nn.LayerNorm, eps=1e-6)`: the shape comes where the partial is called
    if arg is None or arg.starred:
        return None
    try:
        node = ast.parse(src.slice(arg.span).strip(), mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, (ast.Tuple, ast.List)):
        if any(isinstance(e, ast.Starred) for e in node.elts):
            return None
        return [] if len(node.elts) == 1 else None
    return [Edit(Span(arg.span.start_line, arg.span.start_col, arg.span.start_line, arg.span.start_col), "("),
            Edit(Span(arg.span.end_line, arg.span.end_col, arg.span.end_line, arg.span.end_col), ",)")]


@register
class ShapeTuple(Transform):
    name = "shape_tuple"

    def call_edits(self, ctx: Context, edits: list[Edit]) -> list[Edit] | None:
        shape = _shape_tuple_edits(ctx.src, ctx.call, ctx.arg("param"), ctx.arg("position"), tuple(ctx.arg("axes", ())))
        if shape is None:
            return None
        return [*edits[:1], *shape, *edits[1:]]  # after the callee, before keywords inserted at the same point
