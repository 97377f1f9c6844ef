"""Which names of a file denote MindSpore, and what a dotted expression of them is.

`import mindspore as ms`, `from mindspore import ops, nn`, `import mindspore.mint.nn.functional as F`,
`from mindspore.nn import Cell`: each binds a name to a qualified MindSpore name. A name the file also
binds otherwise (a parameter, an assignment, a def) is left out: it may hold something else.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from .. import syntax

ROOT = "mindspore"


def _other_bindings(tree: ast.AST) -> set[str]:
    """Names bound in the file by anything but an import."""
    out: set[str] = set()
    for node in syntax.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            out.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            out.add(node.name)
    return out


def imports(tree: ast.Module) -> Iterator[tuple[ast.stmt, str, str, ast.alias]]:
    """(statement, bound name, qualified name, alias) of each MindSpore import of the file."""
    for node in syntax.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == ROOT or alias.name.startswith(ROOT + "."):
                    if alias.asname:
                        yield node, alias.asname, alias.name, alias
                    else:
                        yield node, ROOT, ROOT, alias
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and (
                node.module == ROOT or node.module.startswith(ROOT + ".")):
            for alias in node.names:
                if alias.name != "*":
                    yield node, alias.asname or alias.name, f"{node.module}.{alias.name}", alias


def bindings(tree: ast.Module) -> dict[str, str]:
    """Name -> qualified MindSpore name, for the names the file binds only by MindSpore imports."""
    found: dict[str, set[str]] = {}
    for _, name, qual, _ in imports(tree):
        found.setdefault(name, set()).add(qual)
    other = _other_bindings(tree)
    out = {}
    for name, quals in found.items():
        if len(quals) == 1 and name not in other:
            out[name] = next(iter(quals))
        elif name == ROOT and quals == {ROOT} and name not in other:
            out[name] = ROOT
    return out


def dotted(node: ast.expr, names: dict[str, str]) -> str | None:
    """The qualified MindSpore name an expression of names and attributes spells, or None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in names:
        return None
    return ".".join([names[node.id], *reversed(parts)])
