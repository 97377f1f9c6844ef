"""Annotations that still name torch once every rewrite is done: written as ``typing.Any``.

An annotation runs nothing that the port needs (``def f(x, fmt: F = "NCHW")`` with ``F`` bound to
``torch.nn.functional``, ``g: Optional[torch.Generator] = None``), yet the name it reads keeps the torch import
alive: the module fails to import without torch. Where the rewrites found no MindSpore type for the name (the
types the tables map are already written as MindSpore's), the name inside the annotation becomes
``typing.Any``: plain typing, the same for every tool that reads annotations, and the torch import goes with its
last use. Names of the annotation that are not torch's (``Optional[...]``) stay as they are. Located on the ast,
written as text edits.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator

from .. import syntax
from ..model import Edit
from ..portcheck.names import dotted
from ..source import SourceText
from .probes import import_aliases

ANY = "typing.Any"
TYPING = "typing"  # the module the rewrite refers to (the pipeline imports it where it is used)


def _annotations(tree: ast.Module) -> Iterator[ast.expr]:
    for node in syntax.walk(tree):
        if isinstance(node, ast.arg) and node.annotation is not None:
            yield node.annotation
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            yield node.returns
        elif isinstance(node, ast.AnnAssign):
            yield node.annotation


def _torch_names(node: ast.expr, aliases: dict[str, str], roots: Collection[str]) -> Iterator[tuple[ast.expr, str]]:
    """The outermost names and attribute chains of `node` that spell a name of `roots`, with that name."""
    todo: list[ast.AST] = [node]
    while todo:
        part = todo.pop()
        if isinstance(part, (ast.Name, ast.Attribute)):
            api = dotted(part, aliases)
            if api is not None and api.split(".")[0] in roots:
                yield part, api
                continue
        todo.extend(ast.iter_child_nodes(part))


def plain_annotations(text: str, roots: Collection[str]) -> tuple[str, list[str]]:
    """`text` with every torch name left in an annotation written as ``typing.Any``; (text, "line: what")."""
    from ..fix import apply_edits

    tree = syntax.parse(text)
    aliases = {name: module for name, module in import_aliases(tree).items() if module.split(".")[0] in roots}
    if not aliases:
        return text, []
    src = SourceText(text)
    edits: list[Edit] = []
    notes: list[str] = []
    for annotation in _annotations(tree):
        for node, api in _torch_names(annotation, aliases, roots):
            edits.append(Edit(src.span(node), ANY))
            notes.append(f"{node.lineno}: {api} in an annotation -> {ANY}")
    if not edits:
        return text, []
    return apply_edits(text, edits), sorted(notes, key=lambda n: int(n.partition(":")[0]))
