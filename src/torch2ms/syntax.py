"""Syntax trees shared by the passes over one text: while `shared()` is open (one file's migration), a text is
parsed once however many passes ask for its tree, a whole tree is walked once however many passes walk it, and
a result computed from shared trees or texts (`remembered`: the resolver's facts of a tree, the scan of a text)
is computed once. The passes never change a tree, so one tree serves them all. Outside `shared()` every call
parses, walks and computes afresh, and nothing is kept: a scan reads each text once, and keeps no tree of a
file it is done with. No project imports: the lowest layer.
"""

from __future__ import annotations

import ast
import contextlib
import warnings
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextvars import ContextVar
from typing import Any, TypeVar

_T = TypeVar("_T")

TREES = 8  # texts whose trees one shared() keeps (the latest used): the texts one file's migration passes through


class _Shared:
    """What one `shared()` keeps: the trees by their text (newest last), each tree's nodes in `ast.walk`'s order,
    and the results computed from its trees and texts, by key."""

    def __init__(self) -> None:
        self.trees: OrderedDict[str, ast.Module] = OrderedDict()
        self.held: dict[int, ast.Module] = {}  # id -> tree, for the trees of `trees`
        self.nodes: dict[int, list[ast.AST]] = {}
        self.results: dict[Hashable, tuple[tuple[object, ...], Any]] = {}

    def add(self, text: str, tree: ast.Module) -> None:
        self.trees[text] = tree
        self.held[id(tree)] = tree
        while len(self.trees) > TREES:
            _, old = self.trees.popitem(last=False)
            del self.held[id(old)]
            self.nodes.pop(id(old), None)
            # a result of the old tree goes with it (an id may be taken by a new tree)
            self.results = {k: v for k, v in self.results.items() if not any(o is old for o in v[0])}


# the block open in this thread (a thread of the language server's pool starts with none)
_current: ContextVar[_Shared | None] = ContextVar("torch2ms_shared_trees", default=None)


@contextlib.contextmanager
def shared() -> Iterator[None]:
    """Share trees, walks and results until the block ends (then they are dropped). Nested: the outer one serves."""
    if _current.get() is not None:
        yield
        return
    token = _current.set(_Shared())
    try:
        yield
    finally:
        _current.reset(token)


def parse(text: str) -> ast.Module:
    """The module tree of `text` (SyntaxError, ValueError, RecursionError, MemoryError as `ast.parse` raises them).
    Warnings about the text (invalid escape sequences and the like) are not ours to show: they are kept quiet."""
    memo = _current.get()
    if memo is not None:
        tree = memo.trees.get(text)
        if tree is not None:
            memo.trees.move_to_end(text)
            return tree
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = ast.parse(text, type_comments=False)
    if memo is not None:
        memo.add(text, tree)
    return tree


def walk(tree: ast.AST) -> Iterable[ast.AST]:
    """Every node of `tree` in `ast.walk`'s order; a shared tree's list is built on the first walk."""
    memo = _current.get()
    if memo is None or id(tree) not in memo.held:
        return ast.walk(tree)
    nodes = memo.nodes.get(id(tree))
    if nodes is None:
        nodes = memo.nodes[id(tree)] = list(ast.walk(tree))
    return nodes


def remembered(key: Hashable, keep: tuple[object, ...], compute: Callable[[], _T]) -> _T:
    """`compute()`, once per `key` while `shared()` is open. `keep`: the objects the key names by their id (a
    shared tree, the table): held with the result, so no other object takes their ids meanwhile. A result of a
    tree that is not a shared one (a tree no `parse` of this block made) is not kept."""
    memo = _current.get()
    if memo is None or any(isinstance(o, ast.AST) and id(o) not in memo.held for o in keep):
        return compute()
    found = memo.results.get(key)
    if found is not None:
        return found[1]  # type: ignore[no-any-return]
    result = compute()
    memo.results[key] = (keep, result)
    return result
