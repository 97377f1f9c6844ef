"""`@torch.jit.ignore` (or `@torch.jit.unused()`) -> nothing: a decorator that only tells a torch compiler or
tracer what to skip; MindSpore code runs the function as it is, so the decorator's line goes.
`dropped_context`: a context manager or decorator that only stops torch recording a tape (``with
torch.no_grad():`` -> its body, one indentation level out; ``@torch.no_grad()`` -> nothing): MindSpore records
none outside its gradient functions.

Used by torch.jit.ignore, torch.jit.unused, torch.jit.export and torch.fx.wrap (`dropped_decorator`), and by
torch.no_grad, torch.inference_mode, torch.autograd.no_grad, torch.autograd.grad_mode.no_grad and
torch.autograd.grad_mode.inference_mode (`dropped_context`)."""

from __future__ import annotations

import ast

from ..model import Edit, Fix, Span
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
        edit = _decorator_removal(ctx.src, ctx.call.span)
        if edit is None:
            return None  # not a decorator alone on its lines: the finding stays
        return Fix(title="Remove the decorator (torch's compiler or tracer only)", edits=(edit,), safe=True)


def _decorator_removal(src: EditBuilder, span: Span) -> Edit | None:
    """The edit that removes the decorator at `span` with its lines; None where it is no decorator or shares its
    lines with other code."""
    node = _decorator(src, span.start_line, src.byte_col(span.start_line, span.start_col))
    if node is None or node.end_lineno is None or node.end_col_offset is None:
        return None
    line_start = src.line_starts[node.lineno - 1]
    start = src.offset(node.lineno, span.start_col)
    end = src.offset(node.end_lineno, src.char_col(node.end_lineno, node.end_col_offset))
    line_end = src.line_after(node.end_lineno)
    rest = src.text[end:line_end].strip()
    if src.text[line_start:start].strip() != "@" or (rest and not rest.startswith("#")):
        return None
    return Edit(src.span_of(line_start, line_end), "")


def _with_block(src: EditBuilder, span: Span) -> ast.With | None:
    """The ``with`` statement whose one item (no ``as``) is the expression at `span`."""
    line, col = span.start_line, src.byte_col(span.start_line, span.start_col)
    for stmt, _body in all_statements(src.tree.body):
        if isinstance(stmt, ast.With) and len(stmt.items) == 1 and stmt.items[0].optional_vars is None:
            item = stmt.items[0].context_expr
            if (item.lineno, item.col_offset) == (line, col):
                return stmt
    return None


def _unindented(src: EditBuilder, stmt: ast.With) -> list[Edit] | None:
    """Edits that write the body of `stmt` in its place, one indentation level out; None where the header shares a
    line with the body, or the body holds a string over several lines (its text would change)."""
    first, last = stmt.body[0], stmt.body[-1]
    if first.lineno <= stmt.lineno or last.end_lineno is None:
        return None
    for node in ast.walk(stmt):
        if isinstance(node, (ast.Constant, ast.JoinedStr)) and node.end_lineno != node.lineno:
            return None
    outer = src.line(stmt.lineno)[:stmt.col_offset]
    inner = src.line(first.lineno)[:first.col_offset]
    if outer.strip() or inner.strip() or not inner.startswith(outer) or inner == outer:
        return None
    cut = len(inner) - len(outer)
    header_end = stmt.items[0].context_expr.end_lineno or stmt.lineno
    if header_end >= first.lineno:
        return None
    edits = [Edit(src.span_of(src.line_starts[stmt.lineno - 1], src.line_after(header_end)), "")]
    for number in range(header_end + 1, last.end_lineno + 1):
        text = src.line(number)
        if text.strip() and not text.startswith(inner):
            if text.lstrip().startswith("#"):
                continue  # a comment written elsewhere stays where it is
            return None  # a continuation line written further out: left as it is
        if text.strip():
            start = src.line_starts[number - 1]
            edits.append(Edit(src.span_of(start, start + cut), ""))
    return edits


@register
class DroppedContext(DroppedDecorator):
    name = "dropped_context"

    def whole(self, ctx: Context) -> Fix | None | Pass:
        src, span = ctx.src, ctx.call.span
        edit = _decorator_removal(src, span)
        if edit is not None:
            return Fix(title="Remove the decorator (MindSpore records no tape to stop)", edits=(edit,), safe=False)
        stmt = _with_block(src, span)
        edits = _unindented(src, stmt) if stmt is not None else None
        if edits is None:
            return None
        return Fix(title="Write the block without the with statement (MindSpore records no tape to stop)",
                   edits=tuple(edits), safe=False)
