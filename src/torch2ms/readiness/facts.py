"""What the readiness checks share about one file, and the helpers every check family uses.

`Facts` is built once per file: the resolved calls by span, the file's classes (and which are
torch modules, datasets, samplers, autograd Functions), functions, imports, attributes stored on
``self``, and the method calls whose names the checks look at. The API lists come from the mapping
table (`MappingTable.readiness`, src/torch2ms/data/readiness.yaml).
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from ..codes import CODES
from ..mappings import TableView
from ..model import ApiCall, CallKind, Category, Confidence, Diagnostic, Fix, Span
from ..source import SourceText

_MAX_LISTED = 20
# Method calls found by name (receivers the resolver cannot prove) and data-loader callbacks.
# (two patterns: one alternation of both costs ten times as much, its `\b` branch tried at every character)
_HOT = re.compile(r"\.\s*(?:backward|step|zero_grad|train|eval|state_dict|load_state_dict|register_buffer|"
                  r"register_\w*hook|cuda|to)\s*\(")
_CALLBACKS = re.compile(r"\b(?:collate_fn|worker_init_fn)\b")


# ------------------------------------------------------------------ file facts
@dataclass(eq=False)
class FileClass:
    node: ast.ClassDef
    name: str
    bases: list[str] = field(default_factory=list)  # torch APIs of the bases (direct or through user classes)
    is_module: bool = False
    is_dataset: bool = False
    is_sampler: bool = False
    is_function: bool = False  # torch.autograd.Function


class Facts:
    """What the checks share about one file: calls by span, classes, call nodes by method name."""

    def __init__(self, tree: ast.Module, calls: Sequence[ApiCall], text: str, view: TableView,
                 positions: SourceText) -> None:
        table, version, device = view.table, view.version, view.device
        self.view = view
        self.tree = tree
        self.calls = calls
        self.text = text
        self.table = table
        self.apis = table.readiness
        self.version = version
        self.device = device
        self.pos = positions
        self.by_span: dict[Span, list[ApiCall]] = {}
        for call in calls:
            self.by_span.setdefault(call.span, []).append(call)
        self.imports_torch = False
        self.classes: dict[str, FileClass] = {}
        self.class_list: list[FileClass] = []
        self.methods: dict[str, list[ast.Call]] = {}  # attribute calls x.name(...) by name
        self.functions: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []
        self.function_of: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self.imports: list[ast.Import | ast.ImportFrom] = []
        self.self_assigns: list[tuple[str, ast.Assign | ast.AnnAssign]] = []  # x.attr = ... with its function
        self.callback_names: set[str] = set()  # functions passed as collate_fn= / worker_init_fn=
        self._call_index: dict[Span, ast.Call] | None = None
        self._collect(tree)

    # -------------------------------------------------------------- collection
    def _collect(self, tree: ast.Module) -> None:
        """One walk over the statements; expressions only where a method name the checks use appears."""
        hot = self._hot_lines()
        # Depth-first in source order, so a class is known before the classes that derive from it.
        stack: list[tuple[ast.stmt, str, ast.AST]] = [(s, "", tree) for s in reversed(tree.body)]
        while stack:
            node, context, parent = stack.pop()
            inner = context
            if isinstance(node, ast.ClassDef):
                self._note_class(node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = node.name
                if isinstance(parent, ast.ClassDef):
                    inner = f"{parent.name}.{name}"
                else:
                    inner = f"{context}.{name}" if context else name
                self.functions.append((inner, node))
                self.function_of.setdefault(inner, node)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                self.imports.append(node)
                self._note_import(node)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and context:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if len(targets) == 1 and isinstance(targets[0], ast.Attribute) \
                        and isinstance(targets[0].value, ast.Name) and node.value is not None:
                    self.self_assigns.append((context, node))
            children: list[tuple[ast.stmt, str, ast.AST]] = []
            for field_name in node._fields:  # ast.iter_fields, without a generator per statement
                value = getattr(node, field_name, None)
                if isinstance(value, list):
                    for item in value:
                        if isinstance(item, ast.stmt):
                            children.append((item, inner, node))
                        elif isinstance(item, (ast.ExceptHandler, ast.match_case)):
                            children.extend((sub, inner, node) for sub in item.body)
                            self._expressions(item, hot)
                        elif isinstance(item, ast.AST):
                            self._expressions(item, hot)
                elif isinstance(value, ast.AST):
                    self._expressions(value, hot)
            stack.extend(reversed(children))
        self.functions.sort(key=lambda item: (item[1].lineno, item[1].col_offset))
        for calls in self.methods.values():
            calls.sort(key=lambda c: (c.lineno, c.col_offset))

    def _hot_lines(self) -> list[int]:
        """Sorted lines where a method call the checks look at, or a collate_fn= keyword, starts."""
        text = self.text
        found = [m.start() for m in _HOT.finditer(text)]
        if "_fn" in text:
            found += [m.start() for m in _CALLBACKS.finditer(text)]
        return sorted({self.pos.position(offset)[0] for offset in found})

    def _expressions(self, node: ast.AST, hot: list[int]) -> None:
        """Record the calls inside one expression (or handler/pattern header) that spans a hot line."""
        first = getattr(node, "lineno", None)
        if first is None or not hot:
            return
        last = getattr(node, "end_lineno", None) or first
        index = bisect.bisect_left(hot, first)
        if index == len(hot) or hot[index] > last:
            return
        for sub in ast.walk(node):
            if isinstance(sub, ast.stmt):
                continue
            if isinstance(sub, ast.Call):
                if isinstance(sub.func, ast.Attribute):
                    self.methods.setdefault(sub.func.attr, []).append(sub)
                for kw in sub.keywords:
                    if kw.arg in ("collate_fn", "worker_init_fn") and isinstance(kw.value, ast.Name):
                        self.callback_names.add(kw.value.id)

    def _note_import(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.Import):
            self.imports_torch |= any(a.name == "torch" or a.name.startswith("torch.") for a in node.names)
        elif node.level == 0 and node.module and (node.module == "torch" or node.module.startswith("torch.")):
            self.imports_torch = True

    def _note_class(self, node: ast.ClassDef) -> None:
        info = FileClass(node, node.name)
        for base in node.bases:
            api = self.api_at(base, kinds=(CallKind.TYPE, CallKind.ATTRIBUTE, CallKind.CALL))
            if api is not None:
                info.bases.append(api)
                info.is_module |= api == "torch.nn.Module" or (api.startswith("torch.nn.") and api[9:10].isupper()
                                                               and api not in self.apis.not_modules)
                info.is_dataset |= api.startswith("torch.utils.data.") and api.endswith("Dataset")
                info.is_sampler |= api.startswith("torch.utils.data.") and api.endswith("Sampler")
                info.is_function |= api in ("torch.autograd.Function", "torch.autograd.function.Function")
            elif isinstance(base, ast.Name) and base.id in self.classes:
                parent = self.classes[base.id]
                info.bases.extend(parent.bases)
                info.is_module |= parent.is_module
                info.is_dataset |= parent.is_dataset
                info.is_sampler |= parent.is_sampler
                info.is_function |= parent.is_function
        self.classes[node.name] = info
        self.class_list.append(info)

    # -------------------------------------------------------------- helpers
    def call_node(self, span: Span) -> ast.Call | None:
        """The call expression at exactly `span` (the index is built on first use: few files need it)."""
        if self._call_index is None:
            wanted = {(c.span.start_line, c.span.end_line) for c in self.calls if c.kind in (CallKind.CALL, CallKind.METHOD)}
            self._call_index = {}
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Call) and (node.lineno, node.end_lineno) in wanted:
                    self._call_index.setdefault(self.span(node), node)
        return self._call_index.get(span)

    def span(self, node: ast.expr | ast.stmt) -> Span:
        return self.pos.span(node)

    def api_at(self, node: ast.expr, kinds: tuple[CallKind, ...] = (CallKind.CALL, CallKind.METHOD, CallKind.ATTRIBUTE, CallKind.TYPE),
               high_only: bool = False) -> str | None:
        """The torch API the resolver found at exactly this node, if any."""
        for call in self.by_span.get(self.span(node), ()):
            if call.kind in kinds and (not high_only or call.confidence is Confidence.HIGH):
                return call.api
        return None

    def line(self, number: int) -> str:
        return self.pos.line(number)

    def def_span(self, node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> Span:
        """The span of the name in a `class NAME` / `def NAME` header."""
        line = self.line(node.lineno)
        start = self.pos.char_col(node.lineno, node.col_offset)
        match = re.compile(r"(?:class|def)\s+(" + re.escape(node.name) + r")\b").search(line, start)
        if match is None:
            return Span(node.lineno, start, node.lineno, start)
        return Span(node.lineno, match.start(1), node.lineno, match.end(1))

    def header_span(self, node: ast.For | ast.AsyncFor | ast.While) -> Span:
        """From the loop keyword to the end of its iterable or condition."""
        start = self.span(node)
        head = node.iter if isinstance(node, (ast.For, ast.AsyncFor)) else node.test
        end = self.span(head)
        return Span(start.start_line, start.start_col, end.end_line, end.end_col)

    def receiver_name(self, call: ast.Call) -> str:
        """The last name of a method call's receiver: `self.model.train()` -> 'model'."""
        func = call.func
        if not isinstance(func, ast.Attribute):
            return ""
        value = func.value
        if isinstance(value, ast.Name):
            return value.id
        if isinstance(value, ast.Attribute):
            return value.attr
        if isinstance(value, ast.Call):
            inner = value.func
            if isinstance(inner, ast.Name):
                return inner.id
            if isinstance(inner, ast.Attribute):
                return inner.attr
        return ""

    def target_of(self, api: str) -> str | None:
        entry = self.view.lookup(api)
        if entry is None:
            return None
        target = self.view.target(entry)
        if target is None or self.view.category(entry) is Category.MISSING:
            return None
        return target.api


def diag(code: str, span: Span, message: str, torch_api: str | None = None, mindspore_api: str | None = None,
          fix: Fix | None = None, confidence: Confidence = Confidence.HIGH) -> Diagnostic:
    info = CODES[code]
    return Diagnostic(code=code, severity=info.severity, category=Category.READINESS, span=span, message=message,
                      torch_api=torch_api, mindspore_api=mindspore_api, fix=fix, doc_url=info.doc_url,
                      confidence=confidence)


def listing(names: Iterable[str]) -> str:
    names = sorted(set(names))
    if len(names) <= _MAX_LISTED:
        return ", ".join(names)
    return ", ".join(names[:_MAX_LISTED]) + f" and {len(names) - _MAX_LISTED} more"


def const_kw(call: ast.Call, name: str) -> tuple[bool, object]:
    """(present, value): value is the constant, or ... when the keyword is not a constant."""
    for kw in call.keywords:
        if kw.arg == name:
            if isinstance(kw.value, ast.Constant):
                return True, kw.value.value
            return True, ...
    return False, None


def call_nodes(facts: Facts, apis: Callable[[str], bool]) -> Iterator[tuple[ast.Call, ApiCall]]:
    """The call nodes the resolver resolved to an API that `apis` accepts, with that call."""
    for call in facts.calls:
        if call.kind in (CallKind.CALL, CallKind.METHOD) and apis(call.api):
            node = facts.call_node(call.span)
            if node is not None:
                yield node, call

