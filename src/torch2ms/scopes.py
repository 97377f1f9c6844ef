"""Which binding a name refers to at a position, by Python's scope rules (module, class, function,
lambda, comprehension; ``global`` and ``nonlocal``).

Used by the fixes to stay safe: a rewrite replaces a name only when it is bound by an import (never
a parameter or a variable that merely holds a torch object), and writes ``mindspore.`` only where
no local binding shadows the module.

`choose_root` picks the name every rewritten name of a file is spelled from: ``mindspore``, or an
alias (``import mindspore as ms_``) where the file binds ``mindspore`` to something else anywhere
(a parameter, a local, an import of another module). The fix engine and ``torch2ms migrate`` share it.

A binding's kind is ``import:MODULE`` (``import torch.nn as nn`` binds ``nn`` to ``torch.nn``;
``import torch.nn`` binds ``torch`` to ``torch``; ``from torch import nn`` binds ``nn`` to
``torch.nn``), ``alias`` (``F = torch.nn.functional``: a plain name assigned a dotted name),
``param``, ``def`` (a function or class name) or ``assign`` (any other binding: assignments,
loop and ``with`` targets, ``except ... as``, walrus, ``del``, match captures).
Positions are ast's: 1-based lines, UTF-8 byte columns.
"""

from __future__ import annotations

import ast
import bisect
import re
import weakref
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

from .source import SourceText, any_line_between

_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp,
                ast.DictComp, ast.GeneratorExp)


@dataclass(eq=False)
class _Scope:
    node: ast.AST | None  # None: the module
    kind: str  # module, function, class, comprehension
    start: tuple[int, int] = (0, 0)
    end: tuple[int, int] = (1 << 30, 0)
    names: dict[str, set[str]] = field(default_factory=dict)
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)
    children: list[_Scope] = field(default_factory=list)
    # the enclosing scope, held weakly: a parent and its children in a reference cycle would keep every
    # file's scopes and syntax tree until the cyclic collector runs (the `Scopes` object holds them all)
    up: weakref.ref[_Scope] | None = None
    _starts: list[tuple[int, int]] | None = None  # the children's starts, in order, once looked up
    pending: list[ast.stmt] | None = None  # a def's body, not walked yet (`Scopes._expand`)

    @property
    def parent(self) -> _Scope | None:
        return None if self.up is None else self.up()

    def bind(self, name: str, kind: str) -> None:
        self.names.setdefault(name, set()).add(kind)

    def contains(self, pos: tuple[int, int]) -> bool:
        return self.start <= pos < self.end

    def child_at(self, pos: tuple[int, int]) -> _Scope | None:
        """The child scope that contains `pos`. Children are disjoint parts of the source (each is the
        region of its own subtree), so the one that starts last at or before `pos` is the only candidate."""
        if self._starts is None:
            self.children.sort(key=lambda c: c.start)
            self._starts = [c.start for c in self.children]
        index = bisect.bisect_right(self._starts, pos) - 1
        if index >= 0 and self.children[index].contains(pos):
            return self.children[index]
        return None


# Fields that never hold a node that binds a name or holds one: identifiers, numbers and flags, and the
# expression context and operator nodes (Load, Store, Add, ...), which are leaves.
_LEAF_FIELDS = frozenset({"ctx", "op", "id", "arg", "attr", "name", "asname", "module", "level", "kind",
                          "type_comment", "conversion", "is_async", "simple", "tag"})
_NODE_FIELDS: dict[type, tuple[str, ...]] = {}


def _node_fields(cls: type) -> tuple[str, ...]:
    """The fields of `cls` that may hold a node (an empty tuple for a leaf: a name), kept in `_NODE_FIELDS`: look
    there first, with `None` (not an empty tuple) meaning not computed yet."""
    fields = _NODE_FIELDS[cls] = tuple(f for f in cls._fields if f not in _LEAF_FIELDS)  # type: ignore[attr-defined]
    return fields


def _children(node: ast.AST) -> Iterator[ast.AST]:
    """The child nodes `ast.iter_child_nodes` gives, in its order, less the leaves of `_LEAF_FIELDS`."""
    cls = type(node)
    fields = _NODE_FIELDS.get(cls)
    for name in _node_fields(cls) if fields is None else fields:
        value = getattr(node, name, None)
        if isinstance(value, list):
            for item in value:
                if isinstance(item, ast.AST):
                    yield item
        elif isinstance(value, ast.AST):
            yield value


def _walk(tree: ast.AST) -> Iterator[ast.AST]:
    """`ast.walk`, in the same (breadth-first) order, less the leaves of `_LEAF_FIELDS`."""
    todo = deque([tree])
    while todo:
        node = todo.popleft()
        todo.extend(_children(node))
        yield node


def _dotted(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _region(node: ast.AST) -> tuple[tuple[int, int], tuple[int, int]]:
    """The part of a scope node evaluated inside its scope: a def's body, a lambda's body, a whole comprehension."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        first = node.body[0]
        return (first.lineno, first.col_offset), (node.end_lineno or node.lineno, node.end_col_offset or 0)
    if isinstance(node, ast.Lambda):
        body = node.body
        return (body.lineno, body.col_offset), (body.end_lineno or body.lineno, body.end_col_offset or 0)
    assert isinstance(node, ast.expr)
    return (node.lineno, node.col_offset), (node.end_lineno or node.lineno, node.end_col_offset or 0)


# The node types `Scopes._visit` treats specially (they bind names or open a scope); it only walks
# through the children of any other node.
_BINDING_NODES = frozenset({
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
    ast.GeneratorExp, ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal, ast.Assign, ast.AnnAssign,
    ast.AugAssign, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.ExceptHandler, ast.NamedExpr, ast.Delete,
    ast.MatchAs, ast.MatchStar, ast.MatchMapping})


# What an expression that binds a name or opens a scope spells: `lambda`, a comprehension's `for`, a walrus.
_EXPRESSION_BINDINGS = re.compile(r"lambda|for|:=")


class Scopes:
    """The scopes of one module and the bindings of each. A def's body is walked when a lookup first reaches
    into it: what it binds stays in its own scope and those inside it (`global` and `nonlocal` are declared
    there, a walrus binds in the def itself), so the scopes outside never wait for it.

    With the module's text (`positions`), an expression none of whose lines spells `lambda`, `for` or `:=`
    is not walked: it binds nothing and opens no scope (a keyword has no other spelling: Python normalises
    identifiers, not keywords, and a walrus is one token)."""

    def __init__(self, tree: ast.Module, positions: SourceText | None = None) -> None:
        self.module = _Scope(None, "module")
        self._binding_lines = None if positions is None else positions.lines_matching(_EXPRESSION_BINDINGS)
        self._visit_body(tree.body, self.module)

    def _expand(self, scope: _Scope) -> None:
        body, scope.pending = scope.pending, None
        if body is not None:
            self._visit_body(body, scope)

    # ------------------------------------------------------------------ building
    def _new(self, node: ast.AST, kind: str, parent: _Scope) -> _Scope:
        start, end = _region(node)
        scope = _Scope(node, kind, start, end, up=weakref.ref(parent))
        parent.children.append(scope)
        return scope

    def _visit_body(self, body: list[ast.stmt], scope: _Scope) -> None:
        for stmt in body:
            self._visit(stmt, scope)

    def _visit(self, node: ast.AST, scope: _Scope) -> None:
        """Bind what `node` and the nodes under it bind in `scope` (and open their scopes). Most nodes bind
        nothing: their subtrees are walked here, in a loop, down to the nodes that do (the bindings are sets
        and a scope's children are sorted when first looked up, so the order of the walk does not matter)."""
        todo = [node]
        lines = self._binding_lines
        while todo:
            current = todo.pop()
            if lines is not None and isinstance(current, ast.expr) \
                    and not any_line_between(lines, current.lineno, current.end_lineno or current.lineno):
                continue  # an expression that spells no binding (`Scopes`)
            cls = type(current)
            if cls in _BINDING_NODES:
                self._visit_binding(current, scope)
                continue
            fields = _NODE_FIELDS.get(cls)
            for name in _node_fields(cls) if fields is None else fields:
                value = getattr(current, name, None)
                if isinstance(value, list):
                    todo.extend([item for item in value if isinstance(item, ast.AST)])
                elif isinstance(value, ast.AST):
                    todo.append(value)

    def _visit_binding(self, node: ast.AST, scope: _Scope) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._outer_parts(node, scope)
            scope.bind(node.name, "def")
            inner = self._new(node, "function", scope)
            for arg in _all_args(node.args):
                inner.bind(arg.arg, "param")
            inner.pending = node.body
            return
        if isinstance(node, ast.ClassDef):
            for expr in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
                self._visit(expr, scope)
            scope.bind(node.name, "def")
            self._visit_body(node.body, self._new(node, "class", scope))
            return
        if isinstance(node, ast.Lambda):
            for default in [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]:
                self._visit(default, scope)
            inner = self._new(node, "function", scope)
            for arg in _all_args(node.args):
                inner.bind(arg.arg, "param")
            self._visit(node.body, inner)
            return
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            inner = self._new(node, "comprehension", scope)
            for gen in node.generators:
                self._targets(gen.target, inner, "assign")
                for part in (gen.iter, *gen.ifs):
                    self._visit(part, inner)
            for part in ([node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]):
                self._visit(part, inner)
            return
        if isinstance(node, ast.Import):
            for name in node.names:
                if name.asname:
                    scope.bind(name.asname, f"import:{name.name}")
                else:
                    root = name.name.split(".")[0]
                    scope.bind(root, f"import:{root}")
            return
        if isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for name in node.names:
                if name.name != "*":
                    scope.bind(name.asname or name.name, f"import:{module}.{name.name}")
            return
        if isinstance(node, ast.Global):
            scope.declared_global.update(node.names)
            return
        if isinstance(node, ast.Nonlocal):
            scope.declared_nonlocal.update(node.names)
            return
        if isinstance(node, ast.Assign):
            plain = len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and _dotted(node.value)
            for target in node.targets:
                self._targets(target, scope, "alias" if plain else "assign")
            self._visit(node.value, scope)
            return
        if isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            self._targets(node.target, scope, "assign")
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self._targets(node.target, scope, "assign")
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    self._targets(item.optional_vars, scope, "assign")
        elif isinstance(node, ast.ExceptHandler) and node.name:
            scope.bind(node.name, "assign")
        elif isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            owner = scope
            while owner.kind == "comprehension" and owner.parent is not None:
                owner = owner.parent  # a walrus in a comprehension binds in the enclosing function
            owner.bind(node.target.id, "assign")
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                self._targets(target, scope, "assign")
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            scope.bind(node.name, "assign")
        elif isinstance(node, ast.MatchMapping) and node.rest:
            scope.bind(node.rest, "assign")
        for child in _children(node):
            self._visit(child, scope)

    def _outer_parts(self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: _Scope) -> None:
        """Decorators, defaults and annotations of a def are evaluated in the enclosing scope."""
        args = node.args
        parts: list[ast.expr] = [*node.decorator_list, *args.defaults,
                                 *(d for d in args.kw_defaults if d is not None)]
        parts += [a.annotation for a in _all_args(args) if a.annotation is not None]
        if node.returns is not None:
            parts.append(node.returns)
        for part in parts:
            self._visit(part, scope)

    def _targets(self, target: ast.expr, scope: _Scope, kind: str) -> None:
        if isinstance(target, ast.Name):
            scope.bind(target.id, kind)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._targets(elt, scope, "assign")
        elif isinstance(target, ast.Starred):
            self._targets(target.value, scope, "assign")
        else:  # attributes and subscripts bind nothing, but their parts are evaluated
            self._visit(target, scope)

    # ------------------------------------------------------------------ lookup
    def _innermost(self, pos: tuple[int, int]) -> _Scope:
        scope = self.module
        while True:
            if scope.pending is not None:
                self._expand(scope)
            inner = scope.child_at(pos)
            if inner is None:
                return scope
            scope = inner

    def kinds(self, name: str, line: int, col: int) -> frozenset[str] | None:
        """The kinds of the bindings `name` refers to at (line, byte column); None: no binding in
        the file (a builtin, a star import or an undefined name)."""
        scope: _Scope | None = self._innermost((line, col))
        first = True
        while scope is not None:
            if scope.kind == "class" and not first:
                scope = scope.parent  # a class body does not enclose the functions defined in it
                continue
            first = False
            if name in scope.declared_global:
                scope = self.module
                first = True
                continue
            if name in scope.names and name not in scope.declared_nonlocal:
                return frozenset(scope.names[name])
            scope = scope.parent
        return None


def _all_args(args: ast.arguments) -> list[ast.arg]:
    out = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    if args.vararg is not None:
        out.append(args.vararg)
    if args.kwarg is not None:
        out.append(args.kwarg)
    return out


# ---------------------------------------------------------------- the root name rewrites write
ROOT = "mindspore"
_WRITTEN_ROOT = re.compile(r"(?<![\w.])mindspore(?=\s*\.)")


def _bindings(tree: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """(name, node) for every name the module binds, in any scope."""
    for node in _walk(tree):
        yield from _bindings_of(node)


# The node types `_bindings_of` finds a name in.
_NAMED_BINDERS = frozenset({ast.Name, ast.arg, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import,
                            ast.ImportFrom, ast.Global, ast.Nonlocal, ast.ExceptHandler, ast.MatchAs, ast.MatchStar,
                            ast.MatchMapping})


def _bindings_of(node: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """(name, node) for each name `node` itself binds."""
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
    names.update(node.id for node in _walk(tree) if isinstance(node, ast.Name))
    return names


def shadows_root(tree: ast.AST) -> bool:
    """Whether the file binds `mindspore` to something other than the library."""
    # `_bindings` in one loop: this runs on every file with a fix, and most bind no `mindspore` at all.
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        cls = type(node)
        if cls is ast.Name:  # the commonest node, a leaf
            if node.id == ROOT and isinstance(node.ctx, (ast.Store, ast.Del)):  # type: ignore[attr-defined]
                return True
            continue
        if cls in _NAMED_BINDERS and any(name == ROOT and not _is_library_import(binder)
                                         for name, binder in _bindings_of(node)):
            return True
        fields = _NODE_FIELDS.get(cls)
        for field_name in _node_fields(cls) if fields is None else fields:
            value = getattr(node, field_name, None)
            if isinstance(value, list):
                todo.extend(item for item in value if isinstance(item, ast.AST))
            elif isinstance(value, ast.AST):
                todo.append(value)
    return False


def choose_root(tree: ast.AST) -> str:
    """The root name for every name the rewrites write in this file: `mindspore`, else an alias the file
    already imports the library under and binds nothing else to, else the first unused of ms_, ms__, ..."""
    if not shadows_root(tree):
        return ROOT
    bindings = list(_bindings(tree))
    for name, node in bindings:
        if isinstance(node, ast.alias) and node.name == ROOT and node.asname == name and all(
                other is node or (isinstance(other, ast.alias) and other.name == ROOT and other.asname == name)
                for n, other in bindings if n == name):
            return name
    used = used_names(tree)
    alias = "ms_"
    while alias in used:
        alias += "_"
    return alias


def written_root(text: str) -> bool:
    """Whether `text` spells a name from ``mindspore.`` (its first name, not an attribute)."""
    return _WRITTEN_ROOT.search(text) is not None


def respell(text: str, root: str) -> str:
    """Text written by the fix engine (``mindspore.x``, ``import mindspore``) spelled from `root`."""
    if root == ROOT:
        return text
    if text.strip() == f"import {ROOT}":
        return text.replace(f"import {ROOT}", f"import {ROOT} as {root}")
    return _WRITTEN_ROOT.sub(root, text)
