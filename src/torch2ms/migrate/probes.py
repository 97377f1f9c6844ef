"""Feature probes on torch, answered for MindSpore: ``hasattr(torch.nn.functional, "rms_norm")`` and
``getattr(torch, "compiler", None)``, the way libraries ask whether the installed torch has a function before
choosing a code path. The answer comes from the mapping tables: a name the port writes something for (a
MindSpore target, or a rewrite such as ``torch.jit.is_scripting()`` -> ``False``) is there; any other is not.

- ``hasattr(M, "name")`` -> ``True`` or ``False``;
- ``getattr(M, "name", default)`` -> the MindSpore target where it takes the same arguments (no parameter
  facts), ``default`` where the name is not there; a name only a rewrite serves stays as it is (reported), but
  for a function whose in-place calls a composed form serves (``M.name`` then, the value `migrate` rewrites);
- ``"name" in dir(M)`` (``not in``) -> ``True`` or ``False``, as ``hasattr``;
- ``if hasattr(M, "name"): ...`` (no ``else``) answered ``False``: the statement becomes ``pass`` (the branch never
  runs, and its torch uses go with it).

`M` is a torch module or class named through the file's module-level imports (``import torch.nn.functional
as F``, ``from torch import nn``). Located on Python's own syntax tree and written as text edits."""

from __future__ import annotations

import ast
from collections.abc import Collection

from .. import syntax
from ..mappings import MappingTable
from ..model import MappingEntry, Target
from ..portcheck.names import dotted
from ..source import SourceText
from ..transforms.compose import in_place_flag

PROBES = frozenset({"hasattr", "getattr"})  # Python's builtins that ask whether an object has a name


def import_aliases(tree: ast.Module) -> dict[str, str]:
    """Name -> dotted module path of each ``import`` and absolute ``from ... import`` of the file."""
    aliases: dict[str, str] = {}
    for node in syntax.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                aliases[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname \
                    else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def _never(test: ast.expr, answered: dict[int, str]) -> bool:
    """Whether `test` is false wherever the port runs: a probe answered ``False``, or an ``and`` of which one
    operand is such a probe and the others evaluate nothing that could act (names, attributes, constants and
    comparisons of them: ``same_dtype and hasattr(torch, "_foreach_lerp_")``)."""
    if answered.get(id(test)) == "False":
        return True
    if not isinstance(test, ast.BoolOp) or not isinstance(test.op, ast.And):
        return False
    pure = (ast.Name, ast.Attribute, ast.Constant, ast.Compare, ast.UnaryOp, ast.BoolOp, ast.expr_context, ast.cmpop,
            ast.unaryop, ast.boolop)
    return any(_never(value, answered) for value in test.values) \
        and all(_never(value, answered) or all(isinstance(n, pure) for n in ast.walk(value)) for value in test.values)


def _else_block(node: ast.If, source: SourceText) -> str | None:
    """The ``else`` block of `node` as the statements written in its place (dedented to the ``if``); None for an
    ``elif`` chain."""
    first, last = node.orelse[0], node.orelse[-1]
    if last.end_lineno is None or last.end_col_offset is None or source.line(first.lineno).lstrip().startswith("elif"):
        return None
    top = first.lineno  # from the line after ``else:``, so the comments above the first statement stay
    while top - 1 > node.body[-1].lineno and not source.line(top - 1).lstrip().startswith("else"):
        top -= 1
    lines = [source.line(n) for n in range(top, last.end_lineno + 1)]
    lines[-1] = lines[-1][:source.char_col(last.end_lineno, last.end_col_offset)]  # a comment after it stays put
    shift = first.col_offset - node.col_offset
    out = [line[shift:] if line[:shift].strip() == "" else line.lstrip() for line in lines]
    return "\n".join(out).lstrip()


class Probes:
    """The rewrites of one file's feature probes; `done`: "line: what" for each."""

    def __init__(self, table: MappingTable, version: tuple[int, ...], device: str, root: str,
                 roots: Collection[str]) -> None:
        self.table = table
        self.version = version
        self.device = device
        self.root = root
        self.roots = frozenset(roots)
        self.done: list[str] = []

    def rewrite(self, text: str) -> str:
        tree = syntax.parse(text)
        aliases = {k: v for k, v in import_aliases(tree).items() if v.split(".")[0] in self.roots}
        if not aliases:
            return text
        source = SourceText(text)
        edits: list[tuple[int, int, str]] = []
        answered: dict[int, str] = {}  # id of a probe's node -> its answer
        for node in syntax.walk(tree):
            if isinstance(node, ast.Call):
                new = self._answer(node, aliases, source)
            elif isinstance(node, ast.Compare):
                new = self._listed(node, aliases)
            else:
                continue
            if new is not None and node.end_lineno is not None and node.end_col_offset is not None:
                start = source.offset(node.lineno, source.char_col(node.lineno, node.col_offset))
                end = source.offset(node.end_lineno, source.char_col(node.end_lineno, node.end_col_offset))
                if all(end <= s or start >= e for s, e, _ in edits):  # an outer probe was answered first
                    edits.append((start, end, new))
                    answered[id(node)] = new
                    self.done.append(f"{node.lineno}: feature probe {ast.unparse(node)} -> {new}")
        for node in syntax.walk(tree):  # a branch only a missing name takes never runs: it goes with its torch uses
            if isinstance(node, ast.If) and _never(node.test, answered) \
                    and node.end_lineno is not None and node.end_col_offset is not None:
                kept = _else_block(node, source) if node.orelse else "pass"
                if kept is None:
                    continue
                start = source.offset(node.lineno, source.char_col(node.lineno, node.col_offset))
                end = source.offset(node.end_lineno, source.char_col(node.end_lineno, node.end_col_offset))
                edits = [(s, e, t) for s, e, t in edits if e <= start or s >= end] + [(start, end, kept)]
                self.done.append(f"{node.lineno}: a branch taken only where torch has {ast.unparse(node.test)}: gone"
                                 + (", its else block kept" if node.orelse else ""))
        for start, end, new in sorted(edits, reverse=True):
            text = text[:start] + new + text[end:]
        return text

    def _answer(self, node: ast.Call, aliases: dict[str, str], source: SourceText) -> str | None:
        func = node.func
        if not isinstance(func, ast.Name) or func.id not in PROBES or node.keywords \
                or any(isinstance(a, ast.Starred) for a in node.args):
            return None
        probe = func.id == "hasattr"
        if len(node.args) != (2 if probe else 3):
            return None
        owner, name = node.args[0], node.args[1]
        if not isinstance(name, ast.Constant) or not isinstance(name.value, str):
            return None
        module = dotted(owner, aliases)
        if module is None:
            return None
        entry, target, there = self._there(module, name.value)
        if probe:
            return "True" if there else "False"
        if target is not None and not target.params and target.rewrite is None \
                and (entry is None or entry.rewrite is None):
            return f"{self.root}.{target.api.removeprefix('mindspore.')}"
        if target is not None and entry is not None and in_place_flag(entry.rewrite) is not None:
            # the function itself as a value (``F.silu``), whose in-place calls the value's rewrite serves
            return f"{ast.get_source_segment(source.text, owner) or ast.unparse(owner)}.{name.value}"
        if not there:
            default = node.args[2]
            text = ast.get_source_segment(source.text, default) or ast.unparse(default)
            return text if isinstance(default, (ast.Constant, ast.Name, ast.Attribute)) else f"({text})"
        return None

    def _there(self, module: str, name: str) -> tuple[MappingEntry | None, Target | None, bool]:
        """The entry of `module.name`, its MindSpore target, and whether the port has the name."""
        entry = self.table.lookup(f"{module}.{name}")
        target = entry.target_for(self.version, self.device) if entry is not None else None
        if target is not None and not target.api.startswith("mindspore."):
            target = None
        return entry, target, target is not None or (entry is not None and entry.rewrite is not None)

    def _listed(self, node: ast.Compare, aliases: dict[str, str]) -> str | None:
        """``"name" in dir(M)`` (or ``not in``): whether the port has the name, as ``hasattr``."""
        if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.In, ast.NotIn)):
            return None
        name, listing = node.left, node.comparators[0]
        if not isinstance(name, ast.Constant) or not isinstance(name.value, str) \
                or not isinstance(listing, ast.Call) or not isinstance(listing.func, ast.Name) \
                or listing.func.id != "dir" or len(listing.args) != 1 or listing.keywords:
            return None
        module = dotted(listing.args[0], aliases)
        if module is None:
            return None
        there = self._there(module, name.value)[2]
        return "True" if there != isinstance(node.ops[0], ast.NotIn) else "False"
