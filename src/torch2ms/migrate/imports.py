"""Imports of a migrated module, managed with libcst: torch imports nothing uses any more are removed
(also single names of a multi-line ``from torch import (...)``), and ``import mindspore`` (or
``import mindspore as ms_``, see `torch2ms.scopes.choose_root`) is added when the module refers to it.
A torch import that code still uses stays where it is (at module level): nothing is moved into a function to
hide it, and the uses keep their findings in the port's scan.

A name counts as used when code refers to it (libcst's scope analysis), not when a string or
comment mentions it: a docstring saying ``torch.Tensor`` keeps no import alive.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from typing import TypeVar

import libcst as cst
from libcst.metadata import ImportAssignment, MetadataWrapper, Scope, ScopeProvider

from .. import syntax
from ..scopes import ROOT


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

    def leave_Try(self, original_node: cst.Try, updated_node: cst.Try
                  ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        """A ``try`` that begins with torch imports that went (`_with_fallback`): without torch the first import
        fails, so the port runs what the handler of the failed import runs (``except ImportError: def
        fallback(...)``, ``HAS_X = False``), and the ``finally`` block; the rest of the ``try`` block and its
        ``else`` block, run only when the import succeeds, go."""
        first = _statements(original_node.body)[0]
        aliases = [a for small in (first.body if isinstance(first, cst.SimpleStatementLine) else ())
                   if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar)
                   for a in small.names]
        if not aliases or not all(id(a) in self.gone for a in aliases):
            return updated_node
        handler = next((h for h in updated_node.handlers if _catches_import_error(h)), None)
        if handler is None:
            return updated_node
        body = [*_statements(handler.body), *(_statements(updated_node.finalbody.body)
                                              if updated_node.finalbody is not None else [])]
        body[0] = body[0].with_changes(leading_lines=updated_node.leading_lines)
        return cst.FlattenSentinel(body)


def _with_fallback(module: cst.Module, roots: frozenset[str]) -> set[int]:
    """The ids of the names imported from `roots` in a ``try`` block that the handler of a failed import
    serves: those of the block's first statement, when it imports only from `roots` (without torch it fails, and
    nothing after it in the block runs), and any the handler binds too (``try: from torch import f`` / ``except
    ImportError: def f(...)``). The handler's bindings are the ones the code uses, so the imports go even where
    code refers to their names."""
    found: set[int] = set()
    for node in _compound(module):
        if not isinstance(node, cst.Try):
            continue
        handlers = [h for h in node.handlers if _catches_import_error(h)]
        if not handlers:
            continue
        bound = _bound_by(_statements(handlers[0].body))
        for index, statement in enumerate(_statements(node.body)):
            smalls = statement.body if isinstance(statement, cst.SimpleStatementLine) else ()
            imports = [small for small in smalls if isinstance(small, (cst.Import, cst.ImportFrom))
                       and not isinstance(small.names, cst.ImportStar)]
            pairs = [(a, small) for small in imports if not isinstance(small.names, cst.ImportStar)
                     for a in small.names]
            ours = [(a, small) for a, small in pairs if _module_of(small, a).split(".")[0] in roots]
            if index == 0 and ours and len(ours) == len(pairs) == sum(1 for _ in smalls):
                found.update(id(a) for a, _ in ours)  # the first import fails: the handler runs
            else:
                found.update(id(a) for a, small in ours
                             if _alias_names(a, isinstance(small, cst.ImportFrom)) <= bound)
    return found


def _compound(module: cst.Module) -> list[cst.CSTNode]:
    """Every compound statement of `module`, at any depth (statements and their blocks only)."""
    found: list[cst.CSTNode] = []
    todo: list[cst.CSTNode] = list(module.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            continue
        found.append(node)
        for name in _BLOCK_FIELDS:
            value = getattr(node, name, None)
            if isinstance(value, cst.CSTNode):
                todo.append(value)
            elif isinstance(value, (list, tuple)):
                todo.extend(v for v in value if isinstance(v, cst.CSTNode))
    return found


def _bound_by(statements: list[cst.BaseStatement]) -> set[str]:
    """The names statements of a block bind at their own level (definitions, assignments, imports)."""
    names: set[str] = set()
    for statement in statements:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            names.add(statement.name.value)
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign):
                names.update(t.target.value for t in small.targets if isinstance(t.target, cst.Name))
            elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                names.add(small.target.value)
            elif isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    names.update(_alias_names(alias, isinstance(small, cst.ImportFrom)))
    return names


_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def _catches_import_error(handler: cst.ExceptHandler) -> bool:
    """Whether the handler runs when an import fails (bare, ImportError and its bases or subclass)."""
    if handler.type is None:
        return True
    kinds = [e.value for e in handler.type.elements] if isinstance(handler.type, cst.Tuple) else [handler.type]
    return any(isinstance(k, cst.Name) and k.value in _IMPORT_ERRORS for k in kinds)


def _statements(block: cst.BaseSuite) -> list[cst.BaseStatement]:
    if isinstance(block, cst.IndentedBlock):
        return list(block.body)
    assert isinstance(block, cst.SimpleStatementSuite)
    return [cst.SimpleStatementLine(body=list(block.body))]


def remove_unused(module: cst.Module, roots: frozenset[str], text: str | None = None) -> tuple[cst.Module, list[str]]:
    """`module` without the imports of `roots` (torch, torchvision, ...) that no code refers to. `text`: the
    module's code, when the caller has it (a text importing none of `roots` needs no scope analysis)."""
    return _remove_unused(module, roots, text)


def _remove_unused(module: cst.Module, roots: frozenset[str], text: str | None) -> tuple[cst.Module, list[str]]:
    tree = _parsed(text) if text is not None else None  # one syntax tree for the questions below
    if tree is not None and not _imports_any(tree, roots):
        return module, []
    referenced: dict[tuple[int, str], bool] = {}
    scopes: Mapping[cst.CSTNode, Scope | None] | None = None
    # no code reads a name these imports bind: every one goes, and no scope analysis is needed
    unread = tree is not None and not _names_read(tree) & _bound_names(tree, roots)
    decided = None if unread or tree is None else _referenced_by_names(module, tree, roots)
    if decided is not None:
        referenced = decided
    elif not unread:
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
    replaced = _with_fallback(module, roots)
    for node in _imports(module):
        for alias in node.names if not isinstance(node.names, cst.ImportStar) else ():
            if _module_of(node, alias).split(".")[0] not in roots:
                continue
            names = _alias_names(alias, isinstance(node, cst.ImportFrom))
            if id(alias) in replaced or not any(referenced.get((id(node), name), not unread) for name in names):
                gone.add(id(alias))
                touched.add(id(node))
    if not gone:
        return module, []
    remover = _Remove(gone)
    top = {id(small): statement for statement in module.body if isinstance(statement, cst.SimpleStatementLine)
           for small in statement.body}
    if not touched <= top.keys():  # an import inside a block: the whole module is walked
        return module.visit(remover), remover.removed
    # only module-level lines change: each is walked as the module's walk would (a line that loses every
    # statement goes), and every other node stays the very same object
    changed = {id(top[i]) for i in touched}
    body: list[cst.BaseStatement] = []
    for statement in module.body:
        if id(statement) not in changed:
            body.append(statement)
            continue
        new = statement.visit(remover)
        if isinstance(new, cst.RemovalSentinel) or isinstance(new, cst.SimpleStatementLine) and not new.body:
            continue
        assert isinstance(new, cst.BaseStatement)
        body.append(new)
    return module.with_changes(body=body), remover.removed


def _referenced_by_names(module: cst.Module, tree: ast.Module, roots: frozenset[str]
                         ) -> dict[tuple[int, str], bool] | None:
    """Whether code refers to each name each import of `roots` binds, keyed as the scope analysis keys it (the import
    statement's id, the name), decided from Python's syntax tree where libcst's scope analysis could not answer
    otherwise; None where it could (then it decides). A name is unused when code never writes it (no name node,
    no capture or global declaration, no string but docstrings: libcst reads strings in annotations as code); an
    import at module level is used when a function, lambda, class body or comprehension reads its name and nothing
    in the outermost of them binds that name (the read then resolves to the module's bindings of it, all of
    them, wherever they are), and no import binds a dotted name below it (``import torch.nn`` makes
    ``torch.nn.X`` a read of ``torch.nn``, not of ``torch``)."""
    names = _Names(tree)
    top = {id(node) for node in _module_imports(module)}
    below = {dotted.split(".")[0] for node in _imports(module) if isinstance(node, cst.Import) for alias in node.names
             if alias.asname is None and "." in (dotted := cst.Module([]).code_for_node(alias.name))}
    decided: dict[tuple[int, str], bool] = {}
    for node in _imports(module):
        for alias in node.names if not isinstance(node.names, cst.ImportStar) else ():
            if _module_of(node, alias).split(".")[0] not in roots:
                continue
            bound = _alias_names(alias, isinstance(node, cst.ImportFrom))
            first = min(bound).split(".")[0]  # every name it binds begins with it
            if names.unwritten(first):
                decided.update(((id(node), name), False) for name in bound)
            elif bound == {first} and id(node) in top and first not in below and names.read_from_scope(first):
                decided[(id(node), first)] = True
            else:
                return None
    return decided


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp,
           ast.GeneratorExp)


class _Names:
    """What `_referenced_by_names` needs of a syntax tree, in one walk: every name code writes, the strings that
    are not docstrings, and the names read inside a scope of their own (with the outermost such scope)."""

    def __init__(self, tree: ast.Module) -> None:
        self.written: set[str] = set()
        strings: list[str] = []
        self._reads: dict[str, list[ast.AST]] = {}  # name -> the outermost scope of each read
        self._bound: dict[int, set[str]] = {}
        todo: list[tuple[ast.AST, ast.AST | None]] = [(tree, None)]
        docstrings: set[int] = set()
        while todo:
            node, outer = todo.pop()
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
                first = node.body[0]
                if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                    docstrings.add(id(first.value))
            if isinstance(node, ast.Name):
                self.written.add(node.id)
                if outer is not None and not isinstance(node.ctx, ast.Store):
                    self._reads.setdefault(node.id, []).append(outer)
                continue
            if isinstance(node, ast.Constant):
                if isinstance(node.value, str) and id(node) not in docstrings:
                    strings.append(node.value)
                continue
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                self.written.update(node.names)
            elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name is not None:
                self.written.add(node.name)
            elif isinstance(node, ast.MatchMapping) and node.rest is not None:
                self.written.add(node.rest)
            if isinstance(node, _SCOPES):
                inner, outside = outer or node, _outside(node)
                todo.extend((child, outer if id(child) in outside else inner) for child in ast.iter_child_nodes(node))
            else:
                todo.extend((child, outer) for child in ast.iter_child_nodes(node))
        self._strings = "\0".join(strings)

    def unwritten(self, name: str) -> bool:
        """No code can refer to `name`: it is written nowhere but in imports, comments and docstrings."""
        return name not in self.written and name not in self._strings

    def read_from_scope(self, name: str) -> bool:
        """A function, lambda, class body or comprehension reads `name`, and its outermost enclosing one binds it
        nowhere."""
        return any(name not in self._bindings(outer) for outer in self._reads.get(name, ()))

    def _bindings(self, scope: ast.AST) -> set[str]:
        """Every name `scope` and the scopes inside it bind or declare (more than its own: enough to know a
        name is bound by none of them)."""
        found = self._bound.get(id(scope))
        if found is None:
            found = set()
            for node in ast.walk(scope):
                if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                    found.add(node.id)
                elif isinstance(node, ast.arg):
                    found.add(node.arg)
                elif isinstance(node, ast.alias):
                    found.add(node.asname or node.name.split(".")[0])
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    found.add(node.name)
                elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name is not None:
                    found.add(node.name)
                elif isinstance(node, ast.MatchMapping) and node.rest is not None:
                    found.add(node.rest)
                elif isinstance(node, (ast.Global, ast.Nonlocal)):
                    found.update(node.names)
            self._bound[id(scope)] = found
        return found


def _outside(scope: ast.AST) -> set[int]:
    """The ids of the children of a scope's node that Python evaluates in the enclosing scope: decorators, default
    values, annotations, bases and class keywords, a comprehension's first iterable."""
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        args = scope.args
        parts: list[ast.AST | None] = [*args.defaults, *args.kw_defaults]
        if not isinstance(scope, ast.Lambda):
            parts += [*scope.decorator_list, scope.returns]
        found = {id(p) for p in parts if p is not None}
        found.add(id(args))  # the arguments' names are the function's; their annotations are evaluated outside
        return found
    if isinstance(scope, ast.ClassDef):
        return {id(p) for p in [*scope.decorator_list, *scope.bases, *scope.keywords]}
    assert isinstance(scope, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp))
    return {id(scope.generators[0])}  # its target is bound inside: `_bindings` sees it there all the same


def _bound_names(tree: ast.Module, roots: frozenset[str]) -> set[str]:
    """The first names (``torch`` of ``torch.nn``) that the imports of `roots` in `tree` bind, at any depth."""
    bound: set[str] = set()
    for node in syntax.walk(tree):
        if isinstance(node, ast.Import):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names if a.name.split(".")[0] in roots)
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] in roots:
            bound.update(a.asname or a.name for a in node.names)
    return bound


def _names_read(tree: ast.Module) -> set[str]:
    """Every name the code of `tree` refers to (reads or deletes), also inside string annotations; ``*`` when a
    star import could bind anything."""
    found: set[str] = set()
    annotations: list[ast.expr] = []
    for node in syntax.walk(tree):
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
    tree = _parsed(text)
    return tree is None or _imports_any(tree, roots)


def _parsed(text: str) -> ast.Module | None:
    try:
        return syntax.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _imports_any(tree: ast.Module, roots: frozenset[str]) -> bool:
    for node in syntax.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] in roots for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] in roots):
            return True
    return False


# The parts of a compound statement that hold statements, in the order of the source (no expression holds one).
_BLOCK_FIELDS = ("body", "handlers", "orelse", "finalbody", "cases")
_S = TypeVar("_S", bound=cst.BaseSmallStatement)


def small_statements(root: cst.CSTNode, kinds: tuple[type[_S], ...],
                     skip: tuple[type[cst.CSTNode], ...] = ()) -> list[_S]:
    """The small statements of `kinds` (imports, assignments) in the blocks of `root` at any depth, in the order
    of the source, not inside a statement of `skip` (a function or class: a scope of its own). Only statements
    and their blocks are walked, never an expression: a libcst visit of every node rebuilds each one."""
    found: list[_S] = []
    todo: list[cst.CSTNode] = [root]
    while todo:
        node = todo.pop()
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            found.extend(s for s in node.body if isinstance(s, kinds))
            continue
        if isinstance(node, skip):
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


def _imports(module: cst.Module) -> list[cst.Import | cst.ImportFrom]:
    """Every import statement of `module`, at any depth, in the order of the source."""
    return small_statements(module, (cst.Import, cst.ImportFrom))


def _module_imports(module: cst.Module) -> list[cst.Import | cst.ImportFrom]:
    """The import statements of `module` that bind in the module's own scope: at module level, also in its
    compound statements, never inside a function or class."""
    return small_statements(module, (cst.Import, cst.ImportFrom), (cst.FunctionDef, cst.ClassDef))


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
