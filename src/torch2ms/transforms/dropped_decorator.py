"""`@torch.jit.ignore` (or `@torch.jit.unused()`) -> nothing: a decorator that only tells a torch compiler or
tracer what to skip; MindSpore code runs the function as it is, so the decorator's line goes.

Used by torch.jit.ignore, torch.jit.unused, torch.jit.export and torch.fx.wrap."""

from __future__ import annotations

import ast

from ..model import Edit, Fix
from .base import Context, Pass, Transform, register
from .edits import EditBuilder, all_statements


def _decorator(src: EditBuilder, line: int, byte_col: int) -> ast.expr | None:
    """The decorator expression (the name, or the call around it) starting at this position, if any."""
    for stmt, _body in all_statements(src.tree.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for node in stmt.decorator_list:
                if (node.lineno, node.col_offset) == (line, byte_col):
                    return node
    return None


@register
class DroppedDecorator(Transform):
    name = "dropped_decorator"
    codes = frozenset({"TMS103"})
    needs_target = False

    def whole(self, ctx: Context) -> Fix | None | Pass:
        src, span = ctx.src, ctx.call.span
        node = _decorator(src, span.start_line, src.byte_col(span.start_line, span.start_col))
        if node is None or node.end_lineno is None or node.end_col_offset is None:
            return None  # not a decorator: the finding stays
        line_start = src.line_starts[node.lineno - 1]
        start = src.offset(node.lineno, span.start_col)
        end = src.offset(node.end_lineno, src.char_col(node.end_lineno, node.end_col_offset))
        line_end = src.line_after(node.end_lineno)
        rest = src.text[end:line_end].strip()
        if src.text[line_start:start].strip() != "@" or (rest and not rest.startswith("#")):
            return None  # a decorator that shares its line with other code
        return Fix(title="Remove the decorator (torch's compiler or tracer only)",
                   edits=(Edit(src.span_of(line_start, line_end), ""),), safe=True)
