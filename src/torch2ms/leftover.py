"""Torch names a port still uses: in a file that names MindSpore (a port, or one in progress), every
reference to a name bound by a torch import that no other finding covers gets a TMS407 finding (a torch
module as an annotation, `getattr(nn, name)`, a torch object passed along), so that the file's to-do list
is complete: a file that still needs torch is never clean."""

from __future__ import annotations

import ast
from collections.abc import Collection, Sequence

from . import syntax
from .codes import CODES
from .model import Diagnostic, Span
from .source import SourceText


def torch_bindings(tree: ast.AST, roots: Collection[str]) -> dict[str, str]:
    """Each name an import of `roots` (torch, ...) binds, with what it stands for."""
    bound: dict[str, str] = {}
    for node in syntax.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in roots:
                    bound[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else \
                        alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] in roots:
            bound.update((a.asname or a.name, f"{node.module}.{a.name}") for a in node.names if a.name != "*")
    return bound


def torch_references(tree: ast.AST, roots: Collection[str]) -> list[tuple[int, int, str]]:
    """(line, byte column, name) of every use of a name bound by an import of `roots`."""
    bound = torch_bindings(tree, roots)
    return [(n.lineno, n.col_offset, n.id) for n in syntax.walk(tree) if isinstance(n, ast.Name) and n.id in bound]


def uncovered(tree: ast.AST, positions: SourceText, diagnostics: Sequence[Diagnostic],
              roots: Collection[str]) -> list[tuple[int, int, str]]:
    """(line, character column, name) of the torch references that no finding's span covers."""
    spans = [d.span for d in diagnostics]
    out = []
    for line, byte_col, name in torch_references(tree, roots):
        col = positions.char_col(line, byte_col)
        if not any((s.start_line, s.start_col) <= (line, col) < (s.end_line, s.end_col) for s in spans):
            out.append((line, col, name))
    return out


def leftover_diagnostics(tree: ast.AST, positions: SourceText, diagnostics: Sequence[Diagnostic],
                         roots: Collection[str]) -> list[Diagnostic]:
    """A TMS407 finding on each torch reference no finding in `diagnostics` covers."""
    left = uncovered(tree, positions, diagnostics, roots)
    if not left:
        return []
    bound = torch_bindings(tree, roots)
    info = CODES["TMS407"]
    return [Diagnostic(code=info.code, severity=info.severity, category=info.category,
                       span=Span(line, col, line, col + len(name)), torch_api=bound[name], doc_url=info.doc_url,
                       message=f"{name} ({bound[name]}) is still used here and nothing rewrites this use: the port "
                               f"needs torch until it is ported by hand")
            for line, col, name in left]
