"""Which root name the rewrites may write: `mindspore`, or an alias when the file binds that name itself.

Every name a rewrite writes is spelled from one root (``mindspore.ops.stop_gradient``), so only the
root can be shadowed. A parameter, local, class, function or imported name called ``mindspore``
anywhere in the file (other than ``import mindspore`` itself) would hide the library inside its
scope; the file then gets ``import mindspore as ms_`` (the first of ``ms_``, ``ms__``, ... that the
file does not use) and every rewritten name is spelled from that alias.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

ROOT = "mindspore"
_WRITTEN_ROOT = re.compile(r"(?<![\w.])mindspore(?=\s*\.)")


def _bindings(tree: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """(name, node) for every name the module binds, in any scope."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            yield node.id, node
        elif isinstance(node, ast.arg):
            yield node.arg, node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.name, node
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield (alias.asname or alias.name.split(".")[0]), alias
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                yield (alias.asname or alias.name), node
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                yield name, node
        elif isinstance(node, ast.ExceptHandler) and node.name:
            yield node.name, node
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            yield node.name, node
        elif isinstance(node, ast.MatchMapping) and node.rest:
            yield node.rest, node


def _is_library_import(node: ast.AST) -> bool:
    """`import mindspore` / `import mindspore.x`: the library itself under its own name."""
    return isinstance(node, ast.alias) and node.asname is None and node.name.split(".")[0] == ROOT


def used_names(tree: ast.AST) -> set[str]:
    """Every identifier the module binds or reads."""
    names = {name for name, _ in _bindings(tree)}
    names.update(node.id for node in ast.walk(tree) if isinstance(node, ast.Name))
    return names


def shadows_root(tree: ast.AST) -> bool:
    """Whether the file binds `mindspore` to something other than the library."""
    return any(name == ROOT and not _is_library_import(node) for name, node in _bindings(tree))


def choose_root(tree: ast.AST) -> str:
    """The root name for every name the rewrites write in this file."""
    if not shadows_root(tree):
        return ROOT
    used = used_names(tree)
    alias = "ms_"
    while alias in used:
        alias += "_"
    return alias


def respell(text: str, root: str) -> str:
    """Text written by the fix engine (``mindspore.x``, ``import mindspore``) spelled from `root`."""
    if root == ROOT:
        return text
    if text.strip() == f"import {ROOT}":
        return text.replace(f"import {ROOT}", f"import {ROOT} as {root}")
    return _WRITTEN_ROOT.sub(root, text)
