"""torch names that arrive through a star import of another file of the migrated tree, made explicit.

``from .ops import *`` binds every public name of ``ops`` in the importing file: also the modules ``ops``
imports (``torch``, ``nn``, ``F``), which the importing file then uses (``torch.nn.functional.silu(x)``)
without an import of its own. Once ``ops`` is ported it no longer binds them, and the uses would find
nothing; the analysis of the importing file alone does not know they are torch's. The migrated tree is known
as a whole: for each star import of one of its files, the torch imports that file exports (its own, at module
level, and those it receives through star imports in turn; only names listed in ``__all__`` where it has one,
else the public ones) are written after the star import before the file is migrated. They bind what the star
import bound, so the file means the same; the rewrites then see torch's names, and each import goes where no
use is left, as any other torch import.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Collection, Mapping, Sequence

from .. import syntax

Statements = tuple[str, ...]  # import statements, as code


def _module_level(tree: ast.Module) -> list[ast.stmt]:
    """The statements run when the module is imported: the module's, and those of its top-level if/try blocks."""
    out: list[ast.stmt] = []
    todo: list[ast.stmt] = list(reversed(tree.body))
    while todo:
        node = todo.pop()
        out.append(node)
        if isinstance(node, (ast.If, ast.Try)):
            nested: list[ast.stmt] = [*node.body, *node.orelse]
            if isinstance(node, ast.Try):
                nested += [s for h in node.handlers for s in h.body] + node.finalbody
            todo.extend(reversed(nested))
    return out


def _listed(tree: ast.Module) -> set[str] | None:
    """The names of a literal ``__all__``, or None when the module has none (or one computed)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            if isinstance(node.value, (ast.List, ast.Tuple)) and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.value.elts):
                return {e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
            return None
    return None


def _own_torch_imports(tree: ast.Module, roots: Collection[str]) -> list[tuple[str, str]]:
    """(bound name, import statement) of each module-level import of `roots` in `tree`."""
    out: list[tuple[str, str]] = []
    for node in _module_level(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in roots:
                    bound = alias.asname or alias.name.split(".")[0]
                    out.append((bound, f"import {alias.name}" + (f" as {alias.asname}" if alias.asname else "")))
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] in roots:
            for alias in node.names:
                if alias.name != "*":
                    out.append((alias.asname or alias.name, f"from {node.module} import {alias.name}"
                                + (f" as {alias.asname}" if alias.asname else "")))
    return out


def _star_sources(tree: ast.Module) -> list[ast.ImportFrom]:
    return [node for node in _module_level(tree)
            if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)]


def _target(path: str, node: ast.ImportFrom, files: Mapping[str, int], tops: Mapping[str, str]) -> int | None:
    """The index of the file of the tree a star import reads, or None (another package, not migrated)."""
    parts = (node.module or "").split(".") if node.module else []
    if node.level:
        base = os.path.dirname(os.path.abspath(path))
        for _ in range(node.level - 1):
            base = os.path.dirname(base)
    elif parts and parts[0] in tops:
        base, parts = tops[parts[0]], parts[1:]
    else:
        return None
    where = os.path.join(base, *parts)
    for candidate in (where + ".py", os.path.join(where, "__init__.py")):
        found = files.get(os.path.normpath(candidate))
        if found is not None:
            return found
    return None


def explicit_imports(sources: Sequence[tuple[str, str]], roots: Collection[str],
                     packages: Sequence[str] = ()) -> dict[int, dict[int, Statements]]:
    """For each file of `sources` ((path, text), by index) that star-imports files of the same tree exporting torch
    names: the line of each such star import -> the import statements to write after it. `packages`: the folders
    migrated, whose names absolute imports may start with (``from pkg.ops import *``)."""
    files = {os.path.normpath(os.path.abspath(path)): index for index, (path, _) in enumerate(sources)}
    tops = {os.path.basename(os.path.normpath(os.path.abspath(p))): os.path.dirname(os.path.normpath(os.path.abspath(p)))
            for p in packages if os.path.isdir(p)}
    trees: dict[int, ast.Module] = {}
    for index, (_, text) in enumerate(sources):
        if "import" in text and "*" in text or any(root in text for root in roots):
            try:
                trees[index] = ast.parse(text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
    stars = {index: [(node, _target(sources[index][0], node, files, tops)) for node in _star_sources(tree)]
             for index, tree in trees.items()}
    stars = {index: found for index, found in stars.items() if any(t is not None for _, t in found)}
    if not stars:
        return {}
    own = {index: _own_torch_imports(tree, roots) for index, tree in trees.items()}
    listed = {index: _listed(tree) for index, tree in trees.items()}
    exported: dict[int, list[tuple[str, str]]] = {}

    def exports(index: int, seen: frozenset[int]) -> list[tuple[str, str]]:
        if index in exported:
            return exported[index]
        names = list(own.get(index, []))
        for _, target in stars.get(index, []):
            if target is not None and target not in seen:
                names.extend(exports(target, seen | {index}))
        allowed = listed.get(index)
        kept = [(n, s) for n, s in names if (n in allowed if allowed is not None else not n.startswith("_"))]
        exported[index] = kept
        return kept

    out: dict[int, dict[int, Statements]] = {}
    for index, found in stars.items():
        for node, target in found:
            if target is None:
                continue
            statements = tuple(dict.fromkeys(s for _, s in exports(target, frozenset({index}))))
            if statements:
                out.setdefault(index, {})[node.end_lineno or node.lineno] = statements
    return out


def insert(text: str, after: Mapping[int, Statements]) -> str:
    """`text` with the statements of `after` written after each line (at that statement's indentation)."""
    if not after:
        return text
    lines = text.splitlines(keepends=True)
    tree = syntax.parse(text)
    indent = {node.end_lineno or node.lineno: " " * node.col_offset for node in _star_sources(tree)}
    out: list[str] = []
    for number, line in enumerate(lines, 1):
        out.append(line)
        if number in after:
            if not line.endswith("\n"):
                out[-1] = line + "\n"
            pad = indent.get(number, "")
            out.extend(f"{pad}{statement}\n" for statement in after[number])
    return "".join(out)
