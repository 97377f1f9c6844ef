"""`class Net(nn.Module)` -> `class Net(mindspore.nn.Cell)` and its `forward` -> `construct` (unsafe): the base
class and the method MindSpore calls. `torch2ms migrate` writes the same through this transform.

Used by torch.nn.Module."""

from __future__ import annotations

import ast
import re

from ..model import ApiCall, CallKind, Edit, Fix
from .base import Context, Pass, Transform, register
from .edits import DOTTED, EditBuilder


def _cell_fix(src: EditBuilder, call: ApiCall) -> Fix | None:
    """`class Net(nn.Module)` -> `class Net(mindspore.nn.Cell)` and its `forward` -> `construct` (unsafe)."""
    if call.kind is not CallKind.ATTRIBUTE or not DOTTED.match(src.slice(call.span)) or not src.names_a_constant(call.span) \
            or not src.mindspore_visible(call.span):
        return None
    edits = [Edit(call.span, "mindspore.nn.Cell")]
    node = src.class_with_base(call.span)
    if node is not None:
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == "forward":
                if any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "construct"
                       for s in node.body):
                    break
                line = stmt.lineno
                start = src.offset(line, src.char_col(line, stmt.col_offset))
                match = re.compile(r"(async\s+)?def\s+").match(src.text, start)
                if match is None:
                    break
                at = match.end()
                edits.append(Edit(src.span_of(at, at + len("forward")), "construct"))
        title = f"Make {node.name} a mindspore.nn.Cell (forward -> construct)"
    else:
        title = "Replace torch.nn.Module with mindspore.nn.Cell"
    imp = src.import_edit()
    if imp is not None:
        edits.append(imp)
    return Fix(title=title, edits=tuple(edits), safe=False)


@register
class Cell(Transform):
    name = "cell"

    def whole(self, ctx: Context) -> Fix | None | Pass:
        return _cell_fix(ctx.src, ctx.call)
