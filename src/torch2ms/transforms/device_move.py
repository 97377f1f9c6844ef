"""`x.cuda()` / `x.to(device)` -> `x` (unsafe): MindSpore sets the device once per program, so a device
move is removed whatever the tables say about the method (a statement of its own goes; otherwise the call
is cut back to its receiver). A move that cannot be told from another use of the method (`x.to(torch.float16)`)
gets the ordinary rewrite.

Used by torch.Tensor.cuda, torch.Tensor.cpu, torch.Tensor.to, torch.nn.Module.cuda, torch.nn.Module.cpu and
torch.nn.Module.to."""

from __future__ import annotations

import re

from ..model import ApiCall, CallKind, Edit, Fix
from .base import PASS, Context, Pass, Transform, register
from .edits import DOTTED, EditBuilder, receiver_length


_DEVICE_STRING = re.compile(r"^(cuda|cpu|mps|xpu|npu|hpu|meta)(:\d+)?$")
_DEVICE_TEXT = re.compile(r"(?i)device|\bcuda\b|\bgpu\b")


def _device_move_fix(src: EditBuilder, call: ApiCall) -> Fix | None:
    """`x.cuda()` / `x.to(device)` -> `x` (unsafe: MindSpore sets the device once per program)."""
    if call.kind is not CallKind.METHOD or call.name_span is None:
        return None
    method = call.api.rpartition(".")[2]
    if method == "to":
        kw_names = {a.keyword for a in call.args if a.keyword is not None}
        positional = [a for a in call.args if a.keyword is None]
        if any(a.starred for a in call.args) or not kw_names <= {"device", "non_blocking", "copy"}:
            return None
        device_args = positional + [a for a in call.args if a.keyword == "device"]
        if len(device_args) != 1 or len(positional) > 1:
            return None
        arg = device_args[0]
        if arg.is_const:
            if not (isinstance(arg.value, str) and _DEVICE_STRING.match(arg.value)):
                return None
        elif not _DEVICE_TEXT.search(src.slice(arg.span)):
            return None
    elif method in ("cuda", "cpu"):
        if any(a.keyword not in ("device", "non_blocking", "memory_format") and a.keyword is not None
               for a in call.args):
            return None
    else:
        return None
    receiver = src.slice(call.span)[:receiver_length(src, call)]
    if DOTTED.match(receiver or "-"):
        statement = src.expression_statement(call.span, receiver)
        if statement is not None:
            return Fix(title=f"Remove the device move .{method}()", edits=(statement,), safe=False)
    # Delete from the dot before the method name to the end of the call.
    name_at = src.offset(call.name_span.start_line, call.name_span.start_col)
    dot = src.text.rfind(".", 0, name_at)
    if dot < 0 or src.text[dot + 1:name_at].strip():
        return None
    end = src.offset(call.span.end_line, call.span.end_col)
    return Fix(title=f"Remove the device move .{method}()", edits=(Edit(src.span_of(dot, end), ""),), safe=False)


@register
class DeviceMove(Transform):
    name = "device_move"
    codes = frozenset({"TMS101", "TMS102", "TMS103", "TMS104"})
    needs_target = False

    def whole(self, ctx: Context) -> Fix | None | Pass:
        fix = _device_move_fix(ctx.src, ctx.call)
        return PASS if fix is None else fix
