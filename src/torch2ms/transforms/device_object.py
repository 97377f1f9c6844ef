"""`torch.device("cuda")` -> `"cuda"` (unsafe): MindSpore has no device objects; the value is kept for the
device keywords and moves that the other fixes drop.

Used by torch.device."""

from __future__ import annotations

import ast

from ..model import ApiCall, CallKind, Edit, Fix
from .base import Context, Pass, Transform, register
from .edits import EditBuilder


def _device_object_fix(src: EditBuilder, call: ApiCall) -> Fix | None:
    """`torch.device("cuda")` -> `"cuda"` (unsafe): MindSpore has no device objects; the value is kept for
    the device keywords and moves that the other fixes drop."""
    if call.kind is not CallKind.CALL or len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].starred:
        return None
    text = src.slice(call.args[0].span)
    try:
        node = ast.parse(f"({text})", mode="eval").body
    except SyntaxError:
        return None
    new = text if isinstance(node, (ast.Constant, ast.Name, ast.Attribute, ast.Call, ast.Subscript)) else f"({text})"
    return Fix(title="Keep the device name (MindSpore has no device objects)", edits=(Edit(call.span, new),),
               safe=False)


@register
class DeviceObject(Transform):
    name = "device_object"
    codes = frozenset({"TMS103"})
    needs_target = False

    def whole(self, ctx: Context) -> Fix | None | Pass:
        return _device_object_fix(ctx.src, ctx.call)
