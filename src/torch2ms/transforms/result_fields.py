"""`x.max(dim=1).values` -> `x.max(dim=1)[0]`: torch returns a named tuple (torch.return_types.*), MindSpore a
plain tuple, so a field read right after the call becomes an index. Arguments: `fields` (field name -> index)
and, where the tables state a result dtype that differs for one item (the indices of (values, indices)),
`cast_item`: that item's index, for the cast the fixer writes.

Used by torch.max, torch.min, torch.median, torch.nanmedian, torch.mode, torch.sort, torch.topk,
torch.kthvalue, torch.cummax, torch.cummin, torch.aminmax, torch.Tensor.max, torch.Tensor.min,
torch.Tensor.median, torch.Tensor.nanmedian, torch.Tensor.mode, torch.Tensor.sort, torch.Tensor.topk,
torch.Tensor.kthvalue, torch.Tensor.cummax, torch.Tensor.cummin and torch.Tensor.aminmax."""

from __future__ import annotations

import re

from ..model import CallKind, Edit, Fix
from .base import Context, Transform, register


_FIELD = re.compile(r"\s*\.\s*([A-Za-z_]\w*)")


@register
class ResultFields(Transform):
    name = "result_fields"

    def result_item(self, ctx: Context) -> int | None:
        item = ctx.arg("cast_item")
        return int(item) if item is not None else None

    def result(self, ctx: Context, fix: Fix) -> Fix:
        src, call = ctx.src, ctx.call
        fields = dict(ctx.arg("fields", ()))
        if call.kind not in (CallKind.CALL, CallKind.METHOD):
            return fix
        end = src.offset(call.span.end_line, call.span.end_col)
        found = _FIELD.match(src.text, end)
        if found is None or found.group(1) not in fields:
            return fix
        edit = Edit(src.span_of(end, found.end()), f"[{fields[found.group(1)]}]")
        return Fix(fix.title, (*fix.edits, edit), fix.safe)
