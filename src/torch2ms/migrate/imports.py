"""Imports of a migrated module, managed with libcst: torch imports nothing uses any more are removed
(also single names of a multi-line ``from torch import (...)``), and ``import mindspore`` (or
``import mindspore as ms_``, see `torch2ms.scopes.choose_root`) is added when the module refers to it.

A name counts as used when code refers to it (libcst's scope analysis), not when a string or
comment mentions it: a docstring saying ``torch.Tensor`` keeps no import alive.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

import libcst as cst
from libcst.metadata import (ClassScope, FunctionScope, GlobalScope, ImportAssignment, MetadataWrapper, Scope,
                             ScopeProvider)

from ..scopes import ROOT

_N = TypeVar("_N", bound=cst.CSTNode)


def _alias_names(alias: cst.ImportAlias, is_from: bool) -> set[str]:
    """The names an import alias binds, as libcst's scope analysis records them."""
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return {alias.asname.name.value}
    dotted = cst.Module([]).code_for_node(alias.name)
    if is_from:
        return {dotted}
    parts = dotted.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)}


def _module_of(node: cst.Import | cst.ImportFrom, alias: cst.ImportAlias) -> str:
    if isinstance(node, cst.Import):
        return cst.Module([]).code_for_node(alias.name)
    if node.relative:
        return "."
    return cst.Module([]).code_for_node(node.module) if node.module is not None else ""


class _Remove(cst.CSTTransformer):
    def __init__(self, gone: set[int]) -> None:
        super().__init__()
        self.gone = gone  # ids of the ImportAlias nodes to drop
        self.removed: list[str] = []

    def _keep(self, names: Iterable[cst.ImportAlias]) -> list[cst.ImportAlias]:
        kept = []
        for alias in names:
            if id(alias) in self.gone:
                self.removed.append(cst.Module([]).code_for_node(alias.name))
            else:
                kept.append(alias)
        return kept

    def leave_Import(self, original_node: cst.Import, updated_node: cst.Import
                     ) -> cst.Import | cst.RemovalSentinel:
        kept = self._keep(original_node.names)
        if len(kept) == len(original_node.names):
            return updated_node
        if not kept:
            return cst.RemoveFromParent()
        return updated_node.with_changes(names=[*kept[:-1], kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)])

    def leave_ImportFrom(self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom
                         ) -> cst.ImportFrom | cst.RemovalSentinel:
        if isinstance(original_node.names, cst.ImportStar):
            return updated_node
        kept = self._keep(original_node.names)
        if len(kept) == len(original_node.names):
            return updated_node
        if not kept:
            return cst.RemoveFromParent()
        if original_node.lpar is None:  # no parentheses: no trailing comma allowed
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated_node.with_changes(names=kept)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock,
                            updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        if not updated_node.body:
            return updated_node.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
        return updated_node


def remove_unused(module: cst.Module, roots: frozenset[str], text: str | None = None) -> tuple[cst.Module, list[str]]:
    """`module` without the imports of `roots` (torch, torchvision, ...) that no code refers to. `text`: the
    module's code, when the caller has it (a text importing none of `roots` needs no scope analysis)."""
    module, removed, _ = _remove_unused(module, roots, text)
    return module, removed


def tidy(module: cst.Module, roots: frozenset[str], text: str | None = None
         ) -> tuple[cst.Module, list[str], list[str]]:
    """`remove_unused`, then `localize`: (module, the imports removed, the import statements moved). One scope
    analysis serves both where the removals are all at module level: the function nodes are then the same
    objects, and what refers to each import kept is what referred to it before (nothing referred to those
    removed)."""
    module, removed, analysis = _remove_unused(module, roots, text)
    module, localized = localize(module, roots, analysis)
    return module, removed, localized


@dataclass
class _Analysis:
    """The scope analysis of a module, kept for its copy without some module-level imports: `origin` maps each
    module-level statement of the copy that is not the statement analysed to that statement."""

    scopes: Mapping[cst.CSTNode, Scope | None]
    origin: dict[int, cst.BaseStatement]


def _remove_unused(module: cst.Module, roots: frozenset[str], text: str | None
                   ) -> tuple[cst.Module, list[str], _Analysis | None]:
    if text is not None and not imports_any(text, roots):
        return module, [], None
    referenced: dict[tuple[int, str], bool] = {}
    scopes: Mapping[cst.CSTNode, Scope | None] | None = None
    # no code reads a name these imports bind: every one goes, and no scope analysis is needed
    unread = text is not None and not _names_read(text) & _bound_names(text, roots)
    if not unread:
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        module = wrapper.module
        scopes = wrapper.resolve(ScopeProvider)
        for scope in {s for s in scopes.values() if s is not None}:
            for assignment in scope.assignments:
                if isinstance(assignment, ImportAssignment):
                    key = (id(assignment.node), assignment.name)
                    referenced[key] = referenced.get(key, False) or bool(assignment.references)
    gone: set[int] = set()
    touched: set[int] = set()  # the import statements that lose a name
    for node in _imports(module):
        for alias in node.names if not isinstance(node.names, cst.ImportStar) else ():
            if _module_of(node, alias).split(".")[0] not in roots:
                continue
            names = _alias_names(alias, isinstance(node, cst.ImportFrom))
            if not any(referenced.get((id(node), name), not unread) for name in names):
                gone.add(id(alias))
                touched.add(id(node))
    if not gone:
        return module, [], None if scopes is None else _Analysis(scopes, {})
    remover = _Remove(gone)
    top = {id(small): statement for statement in module.body if isinstance(statement, cst.SimpleStatementLine)
           for small in statement.body}
    if scopes is None or not touched <= top.keys():  # an import inside a block: the whole module is walked
        return module.visit(remover), remover.removed, None
    # only module-level lines change: each is walked as the module's walk would (a line that loses every
    # statement goes), and every other node stays the very same object
    changed = {id(top[i]) for i in touched}
    body: list[cst.BaseStatement] = []
    origin: dict[int, cst.BaseStatement] = {}
    for statement in module.body:
        if id(statement) not in changed:
            body.append(statement)
            continue
        new = statement.visit(remover)
        if isinstance(new, cst.RemovalSentinel) or isinstance(new, cst.SimpleStatementLine) and not new.body:
            continue
        assert isinstance(new, cst.BaseStatement)
        body.append(new)
        origin[id(new)] = statement
    return module.with_changes(body=body), remover.removed, _Analysis(scopes, origin)


def _bound_names(text: str, roots: frozenset[str]) -> set[str]:
    """The first names (``torch`` of ``torch.nn``) that the imports of `roots` in `text` bind, at any depth."""
    bound: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names if a.name.split(".")[0] in roots)
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] in roots:
            bound.update(a.asname or a.name for a in node.names)
    return bound


def _names_read(text: str) -> set[str]:
    """Every name the code of `text` refers to (reads or deletes), also inside string annotations; ``*`` when a
    star import could bind anything."""
    found: set[str] = set()
    annotations: list[ast.expr] = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            found.update(node.names)
        elif isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            found.add("*")
        elif isinstance(node, ast.AnnAssign):
            annotations.append(node.annotation)
        elif isinstance(node, ast.arg) and node.annotation is not None:
            annotations.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            annotations.append(node.returns)
    for annotation in annotations:  # names inside string annotations ("torch.Tensor")
        for inner in ast.walk(annotation):
            if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
                found.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", inner.value))
    return found


def imports_any(text: str, roots: frozenset[str]) -> bool:
    """Whether any import statement of `text` (at any depth) names a module of `roots`, by Python's own parser:
    far cheaper than the scope analysis `remove_unused` needs otherwise. True for a text ast cannot parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] in roots for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] in roots):
            return True
    return False


# The parts of a compound statement that hold statements (an import is a statement: no expression holds one).
_BLOCK_FIELDS = ("body", "orelse", "handlers", "finalbody", "cases")


def _imports(module: cst.Module) -> list[cst.Import | cst.ImportFrom]:
    """Every import statement of `module`, at any depth, in the order of the source. Only statements and their
    blocks are walked, never an expression."""
    found: list[cst.Import | cst.ImportFrom] = []
    todo: list[cst.CSTNode] = list(reversed(module.body))
    while todo:
        node = todo.pop()
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            found.extend(s for s in node.body if isinstance(s, (cst.Import, cst.ImportFrom)))
            continue
        parts: list[cst.CSTNode] = []
        for name in _BLOCK_FIELDS:
            value = getattr(node, name, None)
            if isinstance(value, cst.CSTNode):
                parts.append(value)
            elif isinstance(value, (list, tuple)):
                parts.extend(v for v in value if isinstance(v, cst.CSTNode))
        todo.extend(reversed(parts))
    return found


def _imports_root(statement: cst.CSTNode, root: str) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.Import):
            for alias in small.names:
                bound = alias.asname.name.value if alias.asname is not None and isinstance(
                    alias.asname.name, cst.Name) else None
                name = cst.Module([]).code_for_node(alias.name)
                if name == ROOT and bound in (None, ROOT) and root == ROOT or name == ROOT and bound == root:
                    return True
    return False


class _Found(Exception):
    """Ends `_refers_to`'s walk at the first name it looks for."""


def _refers_to(module: cst.Module, root: str) -> bool:
    """Whether any name node of `module` (code, not strings or comments) is `root`; the walk ends at the first."""

    class _Find(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            if node.value == root:
                raise _Found

    try:
        module.visit(_Find())
    except _Found:
        return True
    return False


def ensure_root_import(module: cst.Module, root: str) -> tuple[cst.Module, bool]:
    """Add ``import mindspore`` (as `root`) after the leading imports when the module refers to `root`
    and does not import it at module level; (module, whether it was added)."""
    if any(_imports_root(s, root) for s in module.body) or not _refers_to(module, root):
        return module, False
    return _insert_import(module, f"import {ROOT}" if root == ROOT else f"import {ROOT} as {root}"), True


def ensure_import(module: cst.Module, name: str) -> cst.Module:
    """Add ``import NAME`` (a standard module the rewrites use, e.g. functools) where the module refers to
    NAME and does not import it."""
    if not _refers_to(module, name):
        return module
    return ensure_module_import(module, name)


def ensure_module_import(module: cst.Module, dotted_name: str) -> cst.Module:
    """Add ``import DOTTED.NAME`` at module level unless the module has it (names spelled from it in full)."""
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Import) and any(
                        a.asname is None and cst.Module([]).code_for_node(a.name) == dotted_name for a in small.names):
                    return module
    return _insert_import(module, f"import {dotted_name}")


def _insert_import(module: cst.Module, text: str) -> cst.Module:
    """`module` with the import statement `text` after its docstring and leading imports."""
    body = list(module.body)
    index = 0
    if body and _is_docstring(body[0]):
        index = 1
    while index < len(body) and _is_import(body[index]):
        index += 1
    body.insert(index, cst.parse_statement(text + "\n"))
    return module.with_changes(body=body)


def _is_docstring(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
        and isinstance(statement.body[0], cst.Expr) and isinstance(statement.body[0].value,
                                                                    (cst.SimpleString, cst.ConcatenatedString))


def _is_import(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body)


def localize(module: cst.Module, roots: frozenset[str], analysis: _Analysis | None = None
             ) -> tuple[cst.Module, list[str]]:
    """Move each module-level torch import that only function bodies still use into those functions.

    What stays torch after a migration is mostly code around the network (loading a torch
    checkpoint from a URL); moved into the functions that run it, the module imports without torch
    and the rest of it runs. The uses keep their findings. `analysis`: the scope analysis `_remove_unused`
    made of the module before it removed imports (see `tidy`)."""
    if not any(_is_import(s) and isinstance(s, cst.SimpleStatementLine)
               and all(_all_rooted(i, roots) for i in s.body if isinstance(i, (cst.Import, cst.ImportFrom)))
               for s in module.body):
        return module, []  # no module-level import of `roots` left to move
    if analysis is None:
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        analysis = _Analysis(wrapper.resolve(ScopeProvider), {})
        module = wrapper.module
    scopes = analysis.scopes
    moves: dict[int, list[cst.SimpleStatementLine]] = {}  # function node id -> import statements
    moved: set[int] = set()
    names: list[str] = []
    for statement in module.body:
        if not _is_import(statement) or not isinstance(statement, cst.SimpleStatementLine):
            continue
        smalls = [s for s in statement.body if isinstance(s, (cst.Import, cst.ImportFrom))]
        if not smalls or not all(_all_rooted(s, roots) for s in smalls):
            continue
        analysed = analysis.origin.get(id(statement), statement)
        assert isinstance(analysed, cst.SimpleStatementLine)
        functions = _using_functions([s for s in analysed.body if isinstance(s, (cst.Import, cst.ImportFrom))],
                                     scopes)
        if functions is None or not functions:
            continue
        for function in functions:
            moves.setdefault(id(function), []).append(statement.with_changes(leading_lines=[]))
        moved.add(id(statement))
        names.append(cst.Module([]).code_for_node(statement).strip())
    if not moved:
        return module, []

    def move(function: cst.FunctionDef) -> cst.FunctionDef:
        added = moves.get(id(function))
        if not added or not isinstance(function.body, cst.IndentedBlock):
            return function
        body = list(function.body.body)
        index = 1 if body and _is_docstring(body[0]) else 0
        return function.with_changes(body=function.body.with_changes(body=[*body[:index], *added, *body[index:]]))

    kept = module.with_changes(body=[s for s in module.body if id(s) not in moved])  # the same function nodes
    return _with_functions(kept, move), names


def _with_functions(node: _N, change: Callable[[cst.FunctionDef], cst.FunctionDef]) -> _N:
    """`node` with `change` made to each outermost function (a method too), through the blocks of statements
    only: the rest of the tree stays the very same objects."""
    if isinstance(node, cst.FunctionDef):
        return change(node)  # type: ignore[return-value]
    if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return node
    changes: dict[str, object] = {}
    for name in _BLOCK_FIELDS:
        value = getattr(node, name, None)
        if isinstance(value, cst.CSTNode):
            new = _with_functions(value, change)
            if new is not value:
                changes[name] = new
        elif isinstance(value, (list, tuple)) and value and isinstance(value[0], cst.CSTNode):
            items = [_with_functions(v, change) for v in value]
            if any(a is not b for a, b in zip(items, value)):
                changes[name] = items
    return node.with_changes(**changes) if changes else node


def _all_rooted(node: cst.Import | cst.ImportFrom, roots: frozenset[str]) -> bool:
    if isinstance(node.names, cst.ImportStar):
        return False
    return all(_module_of(node, alias).split(".")[0] in roots for alias in node.names)


def _using_functions(smalls: list[cst.Import | cst.ImportFrom],
                     scopes: Mapping[cst.CSTNode, Scope | None]) -> list[cst.FunctionDef] | None:
    """The outermost functions whose bodies use the names these imports bind; None when code outside
    any function uses one of them."""
    found: dict[int, cst.FunctionDef] = {}
    for scope in {s for s in scopes.values() if s is not None}:
        for assignment in scope.assignments:
            if not isinstance(assignment, ImportAssignment) or not any(assignment.node is s for s in smalls):
                continue
            for access in assignment.references:
                outer: cst.FunctionDef | None = None
                current: Scope | None = access.scope
                while current is not None and not isinstance(current, GlobalScope):
                    if isinstance(current, FunctionScope) and isinstance(current.node, cst.FunctionDef):
                        outer = current.node
                    elif isinstance(current, ClassScope) and outer is None:
                        return None  # a class body uses it
                    current = current.parent
                if outer is None:
                    return None
                found[id(outer)] = outer
    return list(found.values())
