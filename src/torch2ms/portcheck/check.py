"""The port check of one file: its MindSpore names, calls and tensor members against MindSpore's own API.

One walk over the module, statement by statement, keeps what each local name holds (`Value`): a MindSpore
tensor (made by a MindSpore function the data says returns one, a Tensor method that returns one, an
operator on one), a Parameter, an instance of a MindSpore Cell, an instance of the file's own Cell
subclass (`self` in its methods, its attributes set from MindSpore calls), or a parameter of
`construct` (probably a tensor: only members torch's Tensor has are judged there). What the walk finds:

- TMS401 a MindSpore name (module attribute, import, class member) MindSpore does not have;
- TMS402 a call whose arguments do not bind to the API's signature;
- TMS403 a member used on a MindSpore tensor or Cell that MindSpore's Tensor or Cell lacks;
- TMS404 a Tensor method with torch's name that differs from torch's (the tables' facts of that method);
- TMS405 a positional argument where torch and MindSpore order the parameters differently;
- TMS406 a form with no kernel (or that raises) on the chosen device, from the tables' device facts;
- TMS441 what MindSpore's GRAPH mode rejects in construct and what it calls (graph.py).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace

from .. import syntax
from ..codes import CODES
from ..mappings import MappingTable
from ..model import Arg, ApiCall, CallKind, Category, Diagnostic, FactKind, Rewrite, Span, Target
from ..source import SourceText
from . import graph
from . import names as ms_names
from .api import NO_DEFAULT, ApiName, Member, MindSporeApi, Signature
from .bind import bind_problems, position_of

# What a local value holds: T a MindSpore tensor, P a Parameter, A a parameter of construct (probably a
# tensor), CELL:key an instance of a MindSpore Cell class, SUB:key one of that class or of a subclass (an
# annotation), SELF:Name an instance of the file's class Name, ITER:value a list or iterator of such values,
# PAIR:value a (name or index, value) pair.
Value = str | None
ITER, PAIR = "ITER:", "PAIR:"
# What a Cell method's result holds, from the API data's "r" (observed when the data was built): its items are
# (name, item) pairs, and Cells (else Parameters)
_ITEMS = {"P": (False, False), "NP": (True, False), "C": (False, True), "NC": (True, True)}
_KEEPS_ITEMS = frozenset({"list", "tuple", "sorted", "reversed", "iter"})  # builtins whose result holds the same
SUBCLASS = "SUB:"
TENSOR, PARAMETER, ARGUMENT = "T", "P", "A"
_TENSORISH = (TENSOR, PARAMETER, ARGUMENT)
_TENSOR_ATTRS = frozenset({"T", "mT", "H", "mH", "real", "imag", "data"})  # Tensor attributes that are tensors
# Members a construct argument (or what a Cell returns) may use without being a tensor: those of tuples, lists
# and dicts.
_INT64 = "#int64"  # env key suffix: the name holds an int64 tensor
_SEQUENCE_MEMBERS = frozenset(name for name in dir(tuple) + dir(list) + dir(dict) if not name.startswith("_"))
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_DEVICE_WORDS = {"cpu": re.compile(r"\bCPU\b"), "gpu": re.compile(r"\bGPU\b"), "ascend": re.compile(r"\bAscend\b")}


@dataclass
class _Class:
    name: str
    cell: bool
    methods: set[str] = field(default_factory=set)
    attrs: dict[str, Value] = field(default_factory=dict)
    bases: list[str] = field(default_factory=list)  # the file's own base classes
    ms_bases: list[str] = field(default_factory=list)  # the keys of its MindSpore base classes


@dataclass(frozen=True)
class TableFacts:
    """The tables' facts about MindSpore forms: their targets by MindSpore name; per MindSpore layer class, the
    torch tensor names it names otherwise (the weight facts: ``weight`` -> ``gamma``), where every torch layer
    it stands for agrees."""

    by_api: dict[str, list[tuple[str, Target]]]
    renamed: dict[str, dict[str, str]]
    tensors: dict[str, frozenset[str]]  # per MindSpore layer class, the names of its own tensors (Parameters)
    # per MindSpore layer class, torch's attributes it names otherwise (or None: it has none; the targets'
    # `attributes`), where every torch layer it stands for agrees
    attributes: dict[str, dict[str, str | None]] = field(default_factory=dict)
    # per MindSpore layer class, torch's attributes it holds by the same name and reads only when it is built
    built: dict[str, frozenset[str]] = field(default_factory=dict)
    # the MindSpore Cell classes that hold layers in order (the targets of torch's `layer_sequences`): an item
    # of one, indexed or iterated, is a Cell
    sequences: frozenset[str] = frozenset()
    # per MindSpore layer class, torch's attributes it holds by the same name with another value (measured)
    differing: dict[str, dict[str, str]] = field(default_factory=dict)
    # per method name of MindSpore's Cell (or Tensor: "Tensor.NAME"), what it passes the function it calls back,
    # in order ("cell" or "tensor"): the targets of the tables' `callbacks` (`net.apply(fn)` passes each Cell)
    callbacks: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, table: MappingTable) -> TableFacts:
        found = _TABLE_FACTS.get(table.digest)
        if found is None:
            by_api: dict[str, list[tuple[str, Target]]] = {}
            renamed: dict[str, dict[str, str]] = {}
            tensors: dict[str, frozenset[str]] = {}
            attributes: dict[str, dict[str, str | None]] = {}
            built: dict[str, frozenset[str]] = {}
            differing: dict[str, dict[str, str]] = {}
            disagree: set[tuple[str, str]] = set()
            for torch_api, entry in table.entries.items():
                for target in entry.targets:
                    by_api.setdefault(target.api, []).append((torch_api, target))
                    if target.built_attributes:  # (a fact of the MindSpore class: every torch layer's agrees)
                        built[target.api] = built.get(target.api, frozenset()) | frozenset(target.built_attributes)
                    for name, note in target.differing_attributes:
                        differing.setdefault(target.api, {}).setdefault(name, note)
                    known = attributes.setdefault(target.api, {})
                    for name, ms_name in target.attributes:
                        if known.setdefault(name, ms_name) != ms_name:
                            disagree.add((target.api, name))
                for form in entry.weights:
                    names = renamed.setdefault(form.ms, form.renamed())
                    for name in [n for n, ms in names.items() if form.renamed().get(n) != ms]:
                        del names[name]  # torch layers that disagree: no fact
                    tensors[form.ms] = tensors.get(form.ms, frozenset()) | form.tensors()
            for api, name in disagree:
                del attributes[api][name]
            sequences = frozenset(target.api for api in table.layer_sequences for target in table.entries[api].targets)
            callbacks: dict[str, tuple[str, ...]] = {}
            for torch_api, callback in table.meta.callbacks.items():
                called = table.entries.get(torch_api)
                for target in called.targets if called is not None else ():
                    owner, _, name = target.api.rpartition(".")
                    if called is not None and owner in ("mindspore.nn.Cell", "mindspore.Tensor") \
                            and (target.category or called.category) is Category.EQUIVALENT:
                        key = name if owner == "mindspore.nn.Cell" else "Tensor." + name
                        callbacks[key] = tuple("tensor" if kind == "tensor" else "cell" for kind in callback.passes)
            found = _TABLE_FACTS[table.digest] = cls(by_api, renamed, tensors,
                                                     {api: names for api, names in attributes.items() if names}, built,
                                                     sequences, differing, callbacks)
        return found


_TABLE_FACTS: dict[str, TableFacts] = {}


def _fact_devices(note: str) -> set[str] | None:
    """The devices a fact's note names ("on the CPU"); None: the note names none (every device)."""
    found = {device for device, pattern in _DEVICE_WORDS.items() if pattern.search(note)}
    return found or None


def _literal(node: ast.expr) -> tuple[bool, object]:
    """(True, the value) where `node` is a literal (``-1``, ``(0, 1)``, ``None`` too; a list as a tuple, as the
    tables keep their values), else (False, None)."""
    def listed(value: object) -> object:
        return tuple(listed(item) for item in value) if isinstance(value, (tuple, list)) else value

    if isinstance(node, (ast.Constant, ast.UnaryOp, ast.Tuple, ast.List)):
        try:
            return True, listed(ast.literal_eval(node))
        except (ValueError, TypeError, SyntaxError, RecursionError):
            return False, None
    return False, None


def _composed(call: ast.Call, rewrite: Rewrite | None) -> bool:
    """Whether `call` is written in the composed form of the entry's rewrite (``{self}.index_fill({dim},
    {index}.astype(mindspore.int32), {value})``: the form the fix writes to resolve the entry's facts, verified
    against torch), each placeholder standing for any text; the form must call the same method."""
    form = rewrite.arg("form") if rewrite is not None and rewrite.transform == "compose" else None
    method = call.func.attr if isinstance(call.func, ast.Attribute) else None
    if not isinstance(form, str) or method is None or f".{method}(" not in form:
        return False  # (a form that does not call the method, e.g. ``{self}``, is not this call)
    pattern = re.sub(r"\\\{\w+\\\}", lambda _m: "(.+)", re.escape(form))
    return re.fullmatch(pattern, ast.unparse(call)) is not None


def _args(call: ast.Call, positions: SourceText) -> tuple[Arg, ...]:
    out = []
    for arg in call.args:
        const, value = _literal(arg)
        out.append(Arg(None, positions.span(arg), is_const=const, value=value, starred=isinstance(arg, ast.Starred)))
    for keyword in call.keywords:
        const, value = _literal(keyword.value)
        out.append(Arg(keyword.arg, positions.span(keyword.value), is_const=const, value=value,
                       starred=keyword.arg is None))
    return tuple(out)


def _expressions(node: ast.AST) -> Iterator[ast.AST]:
    """The expressions of a statement's own fields (not of the statements it holds)."""
    for _, value in ast.iter_fields(node):
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, ast.stmt) or not isinstance(item, ast.AST):
                continue
            if isinstance(item, (ast.excepthandler, ast.match_case)):
                continue
            yield item


def _returns(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Return]:
    """The return statements of a function with a value (not those of functions or classes inside it)."""
    out: list[ast.Return] = []
    stack: list[ast.AST] = list(node.body)
    while stack:
        item = stack.pop()
        if isinstance(item, ast.Return):
            if item.value is None:
                return []  # a bare return: not always a tensor
            out.append(item)
        elif not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(item))
    return out


def _called_only(tree: ast.Module, callbacks: Iterable[str] = ()) \
        -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """The module-level functions of the file defined once and used only as the callee of a call or as the
    function a method of `callbacks` calls back (`net.apply(init)`): a function passed as any other value may be
    called with anything."""
    methods = {name.rpartition(".")[2] for name in callbacks}
    defined: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defined.setdefault(stmt.name, []).append(stmt)
    callees: set[int] = set()
    as_value: set[str] = set()
    for node in syntax.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            callees.add(id(node.func))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in methods \
                and len(node.args) == 1 and not node.keywords:
            callees.add(id(node.args[0]))
        if isinstance(node, ast.Name) and node.id in defined and id(node) not in callees:
            as_value.add(node.id)
    return {name: nodes[0] for name, nodes in defined.items() if len(nodes) == 1 and name not in as_value}


class PortChecker:
    def __init__(self, tree: ast.Module, positions: SourceText, api: MindSporeApi, table: MappingTable,
                 version: tuple[int, ...], device: str | None, enabled: Callable[[str], bool]) -> None:
        self.tree, self.positions, self.api, self.table = tree, positions, api, table
        self.version, self.device, self.enabled = version, device, enabled
        self.names = ms_names.bindings(tree)
        self.facts = TableFacts.of(table)
        self.torch_tensor_members = table.inventory.tensor_members
        self.torch_module_members = table.inventory.module_members
        self.classes: dict[str, _Class] = {}
        self.out: list[Diagnostic] = []
        self._seen: set[tuple[str, Span]] = set()
        self._returns: dict[str, Value] = {}  # functions of the file that return a MindSpore tensor
        self._cell_names: dict[str, str] = {}  # a Cell class's key -> the public name the file made it by
        # the file's module-level functions only ever called by name: what each call passes (by the call)
        self._functions = _called_only(tree, self.facts.callbacks)
        self._passed: dict[str, dict[int, dict[str, Value]]] = {}
        self._outer: dict[str, dict[str, Value]] = {}  # the names a module-level function sees where it is defined
        self._probes: set[tuple[str, str]] = set()  # members the enclosing `if hasattr(...)` tests require
        parameter = api.name("mindspore.Parameter")
        self._parameter_cls = parameter.cls if parameter is not None else ""
        cell = api.name("mindspore.nn.Cell")
        self._any_cell: Value = SUBCLASS + cell.cls if cell is not None else None  # a Cell of unknown class
        self._sequences = frozenset(found.cls for name in self.facts.sequences
                                    if (found := api.name(name)) is not None and found.kind == "cls")

    # ---------------------------------------------------------------- reporting
    def report(self, code: str, node: ast.AST, message: str, mindspore_api: str | None = None,
               first_line: bool = False) -> None:
        """`first_line`: the span ends with the node's first line (a statement spanning a block)."""
        if not self.enabled(code) or not hasattr(node, "lineno"):
            return
        span = self.positions.span(node)  # type: ignore[arg-type]
        if first_line and span.end_line != span.start_line:
            span = Span(span.start_line, span.start_col, span.start_line,
                        len(self.positions.line(span.start_line)))
        if (code, span) in self._seen or code in ("TMS401", "TMS403") and self._probed_member(node):
            return
        self._seen.add((code, span))
        info = CODES[code]
        self.out.append(Diagnostic(code=code, severity=info.severity, category=info.category, span=span,
                                   message=message, mindspore_api=mindspore_api, doc_url=info.doc_url))

    def _probed_member(self, node: ast.AST) -> bool:
        """Whether `node` (a member, or a call of one) is read under a test that the receiver has it
        (``if hasattr(model, "no_weight_decay"): model.no_weight_decay()``)."""
        func = node.func if isinstance(node, ast.Call) else node
        return isinstance(func, ast.Attribute) and (ast.unparse(func.value), func.attr) in self._probes

    @staticmethod
    def _hasattr_probes(test: ast.expr) -> set[tuple[str, str]]:
        """(receiver text, name) of each ``hasattr(receiver, "name")`` the test requires."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            return set().union(*(PortChecker._hasattr_probes(term) for term in test.values))
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "hasattr" \
                and len(test.args) == 2 and isinstance(test.args[1], ast.Constant) \
                and isinstance(test.args[1].value, str):
            return {(ast.unparse(test.args[0]), test.args[1].value)}
        return set()

    # ---------------------------------------------------------------- the walk
    def run(self) -> list[Diagnostic]:
        if not self.names:
            return []
        self._imports()
        self._collect_classes()
        self._block(self.tree.body, {}, None)
        self._callees()
        if self.enabled("TMS441"):
            self._graph()
        return self.out

    def _callees(self) -> None:
        """Walk again each module-level function whose calls all pass the same known value for a parameter with
        no annotation (`init(net)` called with a Cell: `net` is that Cell there), until nothing new is learnt."""
        done: dict[str, dict[str, Value]] = {}
        for _ in range(4):  # (a chain of helpers passes a value on one level per round)
            changed = False
            for name, node in self._functions.items():
                typed = self._typed_params(node, self._passed.get(name, {}))
                if typed and typed != done.get(name):
                    done[name] = typed
                    changed = True
                    self._function(node, self._outer.get(name, {}), None, typed)
            if not changed:
                return

    @staticmethod
    def _typed_params(node: ast.FunctionDef | ast.AsyncFunctionDef, calls: dict[int, dict[str, Value]]) \
            -> dict[str, Value]:
        args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        out: dict[str, Value] = {}
        for arg in args:
            seen = {passed.get(arg.arg) for passed in calls.values()}
            if arg.annotation is None and len(seen) == 1 and (kind := seen.pop()) is not None:
                out[arg.arg] = kind
        return out

    def _record_call(self, node: ast.Call, env: dict[str, Value]) -> None:
        """What a call of a module-level function of the file passes, by parameter name; what a method of
        MindSpore's that calls a function of the file back passes it (`TableFacts.callbacks`)."""
        if isinstance(node.func, ast.Attribute) and len(node.args) == 1 and not node.keywords \
                and isinstance(node.args[0], ast.Name) and node.args[0].id in self._functions \
                and node.args[0].id not in env:
            self._record_callback(node, node.func, self._functions[node.args[0].id], env)
            return
        if not isinstance(node.func, ast.Name) or node.func.id not in self._functions or node.func.id in env:
            return
        fn = self._functions[node.func.id]
        positional = [*fn.args.posonlyargs, *fn.args.args]
        passed: dict[str, Value] = {}
        for index, arg in enumerate(node.args):
            if isinstance(arg, ast.Starred) or index >= len(positional):
                break
            passed[positional[index].arg] = self.value_of(arg, env)
        for keyword in node.keywords:
            if keyword.arg is not None:
                passed[keyword.arg] = self.value_of(keyword.value, env)
        self._passed.setdefault(node.func.id, {})[id(node)] = passed

    def _record_callback(self, node: ast.Call, func: ast.Attribute, fn: ast.FunctionDef | ast.AsyncFunctionDef,
                         env: dict[str, Value]) -> None:
        receiver = self.value_of(func.value, env)
        cell = receiver is not None and receiver.startswith(("CELL:", "SELF:", SUBCLASS))
        passes = self.facts.callbacks.get(func.attr if cell else "Tensor." + func.attr)
        params = [*fn.args.posonlyargs, *fn.args.args]
        if passes is None or not (cell or receiver in (TENSOR, PARAMETER)):
            passed: dict[str, Value] = {arg.arg: None for arg in params}  # (called back with values not known)
        else:
            passed = {arg.arg: (self._any_cell if kind == "cell" else TENSOR) for arg, kind in zip(params, passes)}
        self._passed.setdefault(fn.name, {})[id(node)] = passed

    def _graph(self) -> None:
        cells = {name: info.bases for name, info in self.classes.items() if info.cell}
        for code in graph.graph_code(self.tree, self.names, cells):
            info = self.classes.get(code.cls)
            parameters = {n for n, v in info.attrs.items() if v == PARAMETER} if info is not None else set()
            where = f"in {code.name}" + (f", called from {code.via}" if code.via else "")
            keys = set(self._ms_classes("SELF:" + code.cls)) if code.cls else set()
            bases = frozenset(rule.cell for rule in graph.load_rules() if rule.cell
                              and (found := self.api.name(rule.cell)) is not None and found.cls in keys)
            for node, rule in graph.violations(code, parameters, self.names, bases):
                self.report("TMS441", node, f"GRAPH mode: {rule.reason} ({where})", first_line=True)

    def _guarded_imports(self) -> set[int]:
        """The import statements in a `try` whose handlers catch a failed import (a fallback for other
        MindSpore versions: `except ImportError: from mindspore import ms_function as jit`)."""
        out: set[int] = set()
        for node in syntax.walk(self.tree):
            if not isinstance(node, ast.Try):
                continue
            caught: set[str] = set()
            for handler in node.handlers:
                types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
                caught.update(t.id if isinstance(t, ast.Name) else "?" if t is not None else "Exception"
                              for t in types)
            if caught & {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}:
                for part in (node.body, *(h.body for h in node.handlers)):
                    for stmt in part:
                        out.update(id(n) for n in ast.walk(stmt) if isinstance(n, (ast.Import, ast.ImportFrom)))
        return out

    def _imports(self) -> None:
        guarded = self._guarded_imports()
        for node, _, qual, alias in ms_names.imports(self.tree):
            if id(node) in guarded:
                continue
            module, _, leaf = qual.rpartition(".")
            if isinstance(node, ast.ImportFrom) and not leaf.startswith("_") and self.api.is_module(module) \
                    and self.api.name(qual) is None:
                self.report("TMS401", alias, f"{qual} does not exist in MindSpore {self.api.version}",
                            mindspore_api=qual)
            elif isinstance(node, ast.Import) and module and self.api.is_module(module) and \
                    self.api.name(qual) is None and not leaf.startswith("_"):
                self.report("TMS401", alias, f"module {qual} does not exist in MindSpore {self.api.version}",
                            mindspore_api=qual)

    def _is_cell_base(self, base: ast.expr) -> bool:
        qual = ms_names.dotted(base, self.names)
        if qual is not None:
            found = self.api.name(qual)
            return found is not None and found.kind == "cls" and found.cell
        return isinstance(base, ast.Name) and base.id in self.classes and self.classes[base.id].cell

    def _collect_classes(self) -> None:
        for node in syntax.walk(self.tree):
            if not isinstance(node, ast.ClassDef):
                continue
            info = _Class(node.name, any(self._is_cell_base(b) for b in node.bases),
                          bases=[b.id for b in node.bases if isinstance(b, ast.Name)],
                          ms_bases=[found.cls for b in node.bases if (qual := ms_names.dotted(b, self.names))
                                    and (found := self.api.name(qual)) is not None and found.kind == "cls"])
            self.classes[node.name] = info
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    info.methods.add(item.name)
                elif isinstance(item, ast.Assign):
                    for target in item.targets:
                        if isinstance(target, ast.Name):
                            info.methods.add(target.id)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    info.methods.add(item.target.id)
        for info in self.classes.values():  # a base of the file declared after its subclass
            if not info.cell and any(self.classes.get(b, _Class(b, False)).cell for b in info.bases):
                info.cell = True
        for node in syntax.walk(self.tree):
            if isinstance(node, ast.ClassDef):
                self._collect_attrs(node, self.classes[node.name])

    def _collect_attrs(self, node: ast.ClassDef, info: _Class) -> None:
        conflicting: set[str] = set()
        for method in node.body:
            if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for stmt in ast.walk(method):
                targets: list[ast.expr] = []
                value: ast.expr | None = None
                if isinstance(stmt, ast.Assign):
                    targets, value = stmt.targets, stmt.value
                elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
                    targets, value = [stmt.target], stmt.value
                for target in targets:
                    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                            and target.value.id == "self":
                        kind = self.value_of(value, {}) if value is not None and isinstance(stmt, ast.Assign) else None
                        name = target.attr
                        if name in info.attrs and info.attrs[name] != kind:
                            conflicting.add(name)
                        info.attrs[name] = kind
        for name in conflicting:
            info.attrs[name] = None

    def _block(self, body: list[ast.stmt], env: dict[str, Value], cls: _Class | None) -> None:
        for stmt in body:
            self._statement(stmt, env, cls)

    def _statement(self, stmt: ast.stmt, env: dict[str, Value], cls: _Class | None) -> None:
        if isinstance(stmt, ast.ClassDef):
            for expr in [*stmt.bases, *stmt.keywords, *stmt.decorator_list]:
                self._check_tree(expr, env)
            self._block(stmt.body, dict(env), self.classes.get(stmt.name))
            return
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for expr in stmt.decorator_list:
                self._check_tree(expr, env)
            if self._functions.get(stmt.name) is stmt:
                self._outer[stmt.name] = dict(env)
            self._function(stmt, env, cls)
            return
        for node in _expressions(stmt):
            self._check_tree(node, env)
        if isinstance(stmt, ast.If) and (probes := self._hasattr_probes(stmt.test) - self._probes):
            self._probes |= probes  # (the body, walked with the test's members allowed, then the rest as always)
            self._statement(ast.If(test=ast.Constant(True), body=stmt.body, orelse=[]), env, cls)
            self._probes -= probes
            self._block(stmt.orelse, env, cls)
            return
        if isinstance(stmt, ast.If) and (narrowed := self._narrowed(stmt.test, env)) is not None:
            name, kind = narrowed  # `if isinstance(m, nn.Conv2d):` m is that Cell in the branch
            had, old = name in env, env.get(name)
            env[name] = kind
            self._block(stmt.body, env, cls)
            if env.get(name) == kind:
                if had:
                    env[name] = old
                else:
                    del env[name]
            self._block(stmt.orelse, env, cls)
            return
        if isinstance(stmt, ast.Assign):
            kind = self.value_of(stmt.value, env)
            int64 = self._int64(stmt.value, env)
            for target in stmt.targets:
                self._bind(target, kind, env)
                if isinstance(target, ast.Name) and int64:
                    env[target.id + _INT64] = TENSOR
        elif isinstance(stmt, ast.AnnAssign):
            self._bind(stmt.target, self.value_of(stmt.value, env) if stmt.value is not None else
                       self._annotation(stmt.annotation), env)
        elif isinstance(stmt, ast.AugAssign):
            if isinstance(stmt.target, ast.Name) and env.get(stmt.target.id) not in _TENSORISH:
                env[stmt.target.id] = None
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            self._bind(stmt.target, self._element_of(self.value_of(stmt.iter, env)), env)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                if item.optional_vars is not None:
                    self._bind(item.optional_vars, None, env)
        for _, value in ast.iter_fields(stmt):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                self._block(value, env, cls)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.ExceptHandler):
                        if item.type is not None:
                            self._check_tree(item.type, env)
                        if item.name:
                            env[item.name] = None
                        self._block(item.body, env, cls)
                    elif isinstance(item, ast.match_case):
                        self._block(item.body, env, cls)

    def _narrowed(self, test: ast.expr, env: dict[str, Value]) -> tuple[str, Value] | None:
        """(NAME, the Cell) for a test ``isinstance(NAME, C)`` (alone or a term of an ``and``) where C is one
        MindSpore Cell class and NAME is not known to be something else (or is a Cell of a class not known)."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            return next((narrowed for term in test.values if (narrowed := self._narrowed(term, env)) is not None),
                        None)
        if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"
                and "isinstance" not in env and len(test.args) == 2 and not test.keywords
                and isinstance(test.args[0], ast.Name) and (
                    (known := env.get(test.args[0].id)) is None or known.startswith(SUBCLASS))):
            return None
        qual = ms_names.dotted(test.args[1], self.names)
        found = self.api.name(qual) if qual is not None else None
        if found is None or found.kind != "cls" or not found.cell:
            return None
        self._cell_names.setdefault(found.cls, qual or found.cls)
        return test.args[0].id, "CELL:" + found.cls

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, outer: dict[str, Value],
                  cls: _Class | None, typed: dict[str, Value] | None = None) -> None:
        """`typed`: what the function's parameters hold, from its calls (see `_callees`)."""
        env = dict(outer)
        args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        for extra in (node.args.vararg, node.args.kwarg):
            if extra is not None:
                env[extra.arg] = None
        for default in [*node.args.defaults, *[d for d in node.args.kw_defaults if d is not None]]:
            self._check_tree(default, outer)
        method = cls is not None and not any(isinstance(d, ast.Name) and d.id == "staticmethod"
                                             for d in node.decorator_list)
        for index, arg in enumerate(args):
            kind: Value = None
            if index == 0 and method and cls is not None and cls.cell:
                kind = "SELF:" + cls.name
            elif arg.annotation is not None:
                kind = self._annotation(arg.annotation)
            elif method and cls is not None and cls.cell and node.name == "construct" and index > 0:
                kind = ARGUMENT
            elif typed:
                kind = typed.get(arg.arg)
            env[arg.arg] = kind
        self._block(node.body, env, cls)
        if cls is None:  # what a function of the file returns, for the calls after it
            results = [self.value_of(r.value, env) for r in _returns(node)]
            if results and all(r in (TENSOR, PARAMETER) for r in results):
                self._returns[node.name] = TENSOR

    def _annotation(self, node: ast.expr) -> Value:
        """What an annotation says a value is: a tensor, a Parameter, or an instance of a MindSpore Cell class or of
        a subclass (``seq: mindspore.nn.SequentialCell``: SUB, whose members of torch's nn.Module are judged as the
        class's)."""
        qual = ms_names.dotted(node, self.names)
        found = self.api.name(qual) if qual else None
        if found is not None and found.kind == "cls" and found.tensor:
            return PARAMETER if found.cls == self._parameter_cls else TENSOR
        if found is not None and found.kind == "cls" and found.cell and qual is not None:
            self._cell_names.setdefault(found.cls, qual)
            return SUBCLASS + found.cls
        return None

    def _bind(self, target: ast.expr, kind: Value, env: dict[str, Value]) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = kind
            env.pop(target.id + _INT64, None)
        elif isinstance(target, (ast.Tuple, ast.List)):
            second = kind[len(PAIR):] if kind is not None and kind.startswith(PAIR) and len(target.elts) == 2 \
                and not any(isinstance(item, ast.Starred) for item in target.elts) else None
            for index, item in enumerate(target.elts):
                self._bind(item.value if isinstance(item, ast.Starred) else item, second if index else None, env)

    def _check_tree(self, node: ast.AST, env: dict[str, Value]) -> None:
        """Check every node of an expression; a comprehension's own names hold its iterables' items."""
        stack: list[tuple[ast.AST, dict[str, Value]]] = [(node, env)]
        while stack:
            item, scope = stack.pop()
            self._check_node(item, scope)
            if not isinstance(item, _COMPREHENSIONS):
                stack.extend((child, scope) for child in ast.iter_child_nodes(item))
                continue
            inner = dict(scope)
            for index, gen in enumerate(item.generators):  # (the first iterable is read outside)
                stack.append((gen.iter, scope if index == 0 else inner))
                self._bind(gen.target, self._element_of(self.value_of(gen.iter, scope if index == 0 else inner)),
                           inner)
                stack.extend((cond, inner) for cond in gen.ifs)
            parts = [item.key, item.value] if isinstance(item, ast.DictComp) else [item.elt]
            stack.extend((part, inner) for part in parts)

    def _element_of(self, kind: Value) -> Value:
        """What an item of `kind` is, indexed or iterated: a Cell where `kind` holds layers in order; the
        items of a list or iterator of known values."""
        if kind is not None and kind.startswith("CELL:") and kind[5:] in self._sequences:
            return self._any_cell
        if kind is not None and kind.startswith(ITER):
            return kind[len(ITER):]
        return None

    def _items(self, code: str) -> Value:
        """What a Cell method's result holds, as a value (see `_ITEMS`)."""
        pair, cells = _ITEMS[code]
        item = self._any_cell if cells else PARAMETER
        return None if item is None else ITER + (PAIR if pair else "") + item

    # ---------------------------------------------------------------- values
    def value_of(self, node: ast.expr | None, env: dict[str, Value]) -> Value:
        if node is None:
            return None
        if isinstance(node, ast.Name):
            return env.get(node.id)
        if isinstance(node, ast.Call):
            return self._call_value(node, env)
        if isinstance(node, ast.Attribute):
            base = self.value_of(node.value, env)
            if base in _TENSORISH and node.attr in _TENSOR_ATTRS:
                return TENSOR
            if base is not None and base.startswith("SELF:"):
                info = self.classes.get(base[5:])
                return info.attrs.get(node.attr) if info is not None else None
            if base is not None and base.startswith("CELL:"):  # a MindSpore layer's own tensor (weight facts)
                public = self._cell_names.get(base[5:])
                if public is not None and node.attr in self.facts.tensors.get(public, ()):
                    return PARAMETER
            return None
        if isinstance(node, ast.BinOp):
            left, right = self.value_of(node.left, env), self.value_of(node.right, env)
            if TENSOR in (left, right) or PARAMETER in (left, right):
                return TENSOR
            return ARGUMENT if ARGUMENT in (left, right) else None
        if isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not):
            inner = self.value_of(node.operand, env)
            return TENSOR if inner in (TENSOR, PARAMETER) else inner if inner == ARGUMENT else None
        if isinstance(node, ast.Subscript):
            inner = self.value_of(node.value, env)
            return TENSOR if inner in (TENSOR, PARAMETER) else self._element_of(inner)
        if isinstance(node, (ast.List, ast.Tuple)) and node.elts:  # a display of Cells: its items are Cells
            kinds = {self.value_of(elt, env) for elt in node.elts}
            if all(kind is not None and kind.startswith(("CELL:", "SELF:", SUBCLASS)) for kind in kinds):
                one = kinds.pop() if len(kinds) == 1 else self._any_cell
                return ITER + one if one is not None else None
        return None

    def _call_value(self, node: ast.Call, env: dict[str, Value]) -> Value:
        qual = ms_names.dotted(node.func, self.names)
        if qual is not None:
            found = self.api.name(qual)
            if found is None:
                return None
            if found.kind == "fn":
                return TENSOR if found.returns == "T" or (found.returns == "?" and self._table_tensor(qual)) else None
            if found.kind == "cls":
                if found.cell:
                    self._cell_names.setdefault(found.cls, qual)
                    return "CELL:" + found.cls
                if found.tensor:
                    return PARAMETER if found.cls == self._parameter_cls else TENSOR
            return None
        if isinstance(node.func, ast.Name) and node.func.id in self._returns and node.func.id not in env:
            return self._returns[node.func.id]
        if isinstance(node.func, ast.Name) and node.func.id in (*_KEEPS_ITEMS, "enumerate") and len(node.args) == 1 \
                and not node.keywords and node.func.id not in env and node.func.id not in self.names \
                and node.func.id not in self.classes:
            items = self.value_of(node.args[0], env)
            if items is not None and items.startswith(ITER):
                return items if node.func.id in _KEEPS_ITEMS else ITER + PAIR + items[len(ITER):]
        if isinstance(node.func, ast.Name) and node.func.id in self.classes and node.func.id not in env:
            info = self.classes[node.func.id]
            return "SELF:" + info.name if info.cell else None
        if isinstance(node.func, ast.Attribute):
            receiver = self.value_of(node.func.value, env)
            if receiver is not None and receiver.startswith(("CELL:", "SELF:")):
                member = self.api.cell_member(node.func.attr)
                if member is not None and member.returns == "S" and not (
                        receiver.startswith("SELF:") and self._defines(receiver[5:], node.func.attr, own=True)):
                    return receiver  # Cell.set_train(): the Cell itself
            if receiver is not None and receiver.startswith(("CELL:", "SELF:", SUBCLASS)):
                member = self.api.cell_member(node.func.attr)
                if member is not None and member.returns in _ITEMS and not (
                        receiver.startswith("SELF:") and self._defines(receiver[5:], node.func.attr, own=True)):
                    return self._items(member.returns)  # net.trainable_params(): Parameters
            if receiver in _TENSORISH and not (receiver == ARGUMENT and node.func.attr in _SEQUENCE_MEMBERS):
                # (on a tensor-or-sequence, a Tensor method that runs at all ran on a tensor)
                member = self.api.tensor_member(node.func.attr, parameter=receiver == PARAMETER)
                if member is not None and (member.returns == "T" or member.returns == "?" and (
                        node.func.attr in self.torch_tensor_members
                        and node.func.attr not in self.table.meta.non_tensor_methods)):
                    return TENSOR  # (where MindSpore's docstring does not say: the torch data model's answer)
        callee = self.value_of(node.func, env)
        if callee is not None and callee.startswith(("CELL:", "SELF:", SUBCLASS)):
            return ARGUMENT  # what a Cell's construct returns: a tensor, or a tuple of them
        return None

    def _int64(self, node: ast.expr, env: dict[str, Value]) -> bool:
        """Whether `node` is a tensor MindSpore makes int64: a name bound to one, or a tensor built from a
        literal list of Python ints with no dtype (MindSpore's `input_data`; torch labels and indices)."""
        if isinstance(node, ast.Name):
            return env.get(node.id + _INT64) is not None
        if not isinstance(node, ast.Call) or not node.args or len(node.args) > 1 or \
                any(k.arg == "dtype" for k in node.keywords):
            return False
        qual = ms_names.dotted(node.func, self.names)
        found = self.api.name(qual) if qual else None
        if found is None or not (found.kind == "cls" and found.tensor and found.cls != self._parameter_cls or (
                found.kind == "fn" and found.signature is not None and found.signature.params
                and found.signature.params[0].name == "input_data")):
            return False
        data = node.args[0]
        items: list[ast.expr] = []
        stack = [data]
        while stack:
            item = stack.pop()
            if isinstance(item, (ast.List, ast.Tuple)):
                stack.extend(item.elts)
            else:
                items.append(item)
        return isinstance(data, (ast.List, ast.Tuple)) and bool(items) and all(
            isinstance(i, ast.Constant) and type(i.value) is int for i in items)

    def _check_int64(self, node: ast.Call, qual: str, env: dict[str, Value]) -> None:
        """TMS406 where an argument is an int64 tensor and the tables say the form raises for int64 input
        (a fact for every input, "MindSpore raises for an int64 index/target/labels")."""
        args = [*node.args, *(k.value for k in node.keywords)]
        if not any(self._int64(a, env) for a in args):
            return
        for _, target in self.facts.by_api.get(qual, []):
            for fact in target.params:
                if fact.kind is FactKind.UNSUPPORTED_INPUTS and fact.torch is None and "all" in fact.covers \
                        and "int64" in fact.note:
                    self.report("TMS406", node, f"{qual} with an int64 tensor argument: {fact.note}",
                                mindspore_api=qual)
                    return

    def _table_tensor(self, qual: str) -> bool:
        """Whether the tables' data flow says the torch APIs written as `qual` return a tensor (for a function
        whose docstring does not say what it returns, e.g. mindspore.tensor)."""
        from ..dataflow import TENSOR as TORCH_TENSOR, result_of

        sources = self.facts.by_api.get(qual, [])
        return bool(sources) and all(result_of(self.table, torch_api) == TORCH_TENSOR for torch_api, _ in sources)

    # ---------------------------------------------------------------- checks
    def _check_node(self, node: ast.AST, env: dict[str, Value]) -> None:
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            self._check_attribute(node, env)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            receiver = self.value_of(node.value, env)
            if receiver is not None and receiver.startswith("CELL:"):
                self._check_tensor_name(node, receiver[5:], store=True)
        elif isinstance(node, ast.Call):
            self._check_call(node, env)
            self._record_call(node, env)

    def _check_attribute(self, node: ast.Attribute, env: dict[str, Value]) -> None:
        qual = ms_names.dotted(node, self.names)
        if qual is not None:
            self._check_name(node, qual)
            return
        receiver = self.value_of(node.value, env)
        if receiver is None or node.attr.startswith("__"):
            return
        if receiver in _TENSORISH:
            member = self.api.tensor_member(node.attr, parameter=receiver != TENSOR)
            if member is not None or (receiver != TENSOR and node.attr not in self.torch_tensor_members):
                return
            if receiver == ARGUMENT and node.attr in _SEQUENCE_MEMBERS:
                return
            self.report("TMS403", node, f".{node.attr}: MindSpore {self.api.version}'s Tensor has no member "
                        f"'{node.attr}'{self._torch_note('torch.Tensor.' + node.attr)}",
                        mindspore_api="mindspore.Tensor")
        elif receiver.startswith(("CELL:", "SELF:", SUBCLASS)):
            self._check_cell_member(node, receiver)
            if receiver.startswith("CELL:"):
                self._check_tensor_name(node, receiver[5:])
                self._check_differing(node, receiver[5:])

    def _check_differing(self, node: ast.Attribute, cls: str) -> None:
        """TMS404: torch's attribute read by its name on a MindSpore layer that holds another value under it (the
        targets' `differing_attributes`, measured: ``conv.padding`` is (0, 0) in torch, 0 in mindspore.nn.Conv2d)."""
        public = self._cell_names.get(cls)
        note = self.facts.differing.get(public, {}).get(node.attr) if public is not None else None
        if note is not None:
            self.report("TMS404", node, f".{node.attr}: MindSpore {self.api.version}'s {public} holds '{node.attr}' "
                        f"with another value than torch's layer ({note})", mindspore_api=public)

    def _check_tensor_name(self, node: ast.Attribute, cls: str, store: bool = False) -> None:
        """A torch layer's tensor or attribute read by its torch name on the MindSpore Cell that names it
        otherwise or has none (``bn.weight`` on a mindspore.nn.BatchNorm1d, whose tensor is ``gamma``; ``m.groups``
        on a mindspore.nn.Conv2d, whose attribute is ``group``: the weight facts and the targets' `attributes`), or an
        attribute of torch's set by that name (`store`: the class never reads it)."""
        public = self._cell_names.get(cls)
        renamed = self.facts.renamed.get(public, {}) if public is not None else {}
        attributes = self.facts.attributes.get(public, {}) if public is not None else {}
        name = node.attr
        if store and public is not None and name in self.facts.built.get(public, ()):
            self.report("TMS403", node, f".{name} = ...: MindSpore {self.api.version}'s {public} reads '{name}' only "
                        "when it is built (its construct never does): the value set is never read (pass it where "
                        "the layer is built)", mindspore_api=public)
            return
        if name not in renamed and name not in attributes or self.api.cell_member(name) is not None \
                or self.api.class_member(cls, name) or store and name not in attributes:
            return
        if store:
            ms_name = attributes[name]
            what = (f"torch's attribute '{name}' is its '{ms_name}'" if ms_name is not None else
                    "it has no such attribute") + ": the value set is never read (pass it where the layer is built)"
        elif name in renamed:
            what = f"the tensor torch names '{name}' is its '{renamed[name]}'"
        elif attributes[name] is not None:
            what = f"torch's attribute '{name}' is its '{attributes[name]}'"
        else:
            what = "it has no such attribute (reading it raises AttributeError)"
        self.report("TMS403", node, f".{name}: MindSpore {self.api.version}'s {public} has no member '{name}': "
                    + what, mindspore_api=public)

    def _check_cell_member(self, node: ast.Attribute, receiver: str) -> None:
        name = node.attr
        if name not in self.torch_module_members or self.api.cell_member(name) is not None:
            return
        if receiver.startswith(("CELL:", SUBCLASS)):
            if self.api.class_member(receiver.partition(":")[2], name) is not None:
                return
        else:
            if self._defines(receiver[5:], name):
                return
        self.report("TMS403", node, f".{name}: MindSpore {self.api.version}'s Cell has no member '{name}'"
                    f"{self._torch_note('torch.nn.Module.' + name)}", mindspore_api="mindspore.nn.Cell")

    def _defines(self, cls: str, name: str, depth: int = 0, own: bool = False) -> bool:
        """Whether the file's class `cls` (or a base) defines `name`; a class outside the file may (`own`: only
        the file's classes count)."""
        info = self.classes.get(cls)
        if info is None or depth > 20:
            return not own
        if name in info.methods or name in info.attrs:
            return True
        return any(self._defines(base, name, depth + 1, own) for base in info.bases)

    def _torch_note(self, torch_api: str) -> str:
        entry = self.table.lookup(torch_api)
        if entry is None:
            return ""
        target = entry.target_for(self.version, self.device)
        if target is not None and target.api.rpartition(".")[0] not in ("mindspore.Tensor", "mindspore.nn.Cell"):
            return f" (torch's {torch_api} is {target.api} in MindSpore)"
        return f" (torch's {torch_api}: {entry.note})" if entry.note else ""

    def _check_name(self, node: ast.Attribute, qual: str) -> None:
        owner, _, leaf = qual.rpartition(".")
        if leaf.startswith("_"):
            return
        found = self.api.name(owner)
        if found is None:
            return
        missing = False
        if found.kind == "mod":
            missing = self.api.is_module(found.target) and self.api.name(f"{found.target}.{leaf}") is None
        elif found.kind == "cls" and found.tensor:
            missing = self.api.tensor_member(leaf, parameter=found.cls == self._parameter_cls) is None
        elif found.kind == "cls" and found.cell:
            missing = self.api.cell_member(leaf) is None and self.api.class_member(found.cls, leaf) is None
        if missing:
            self.report("TMS401", node, f"{qual} does not exist in MindSpore {self.api.version}", mindspore_api=qual)

    def _check_call(self, node: ast.Call, env: dict[str, Value]) -> None:
        qual = ms_names.dotted(node.func, self.names)
        if qual is not None:
            found = self.api.name(qual)
            if found is not None:
                self._check_api_call(node, found)
                self._check_int64(node, found.qualname, env)
            return
        callee = self.value_of(node.func, env)
        if callee is not None and callee.startswith("CELL:"):
            construct = self.api.class_member(callee[5:], "construct")
            if construct is not None:
                self._check_binding(node, construct.signature, f"{callee[5:].rpartition('.')[2]}.construct",
                                    callee[5:])
            public = self._cell_names.get(callee[5:])
            if public is not None:
                self._check_int64(node, public, env)
        if not isinstance(node.func, ast.Attribute):
            return
        receiver = self.value_of(node.func.value, env)
        self._check_unlisted(node.func, receiver)
        if receiver is not None and receiver.startswith("CELL:"):
            self._check_cell_method(node, node.func, receiver[5:])
            return
        if receiver is not None and receiver.startswith(SUBCLASS):  # a subclass may add methods: torch's only
            if node.func.attr in self.torch_module_members:
                self._check_cell_method(node, node.func, receiver[len(SUBCLASS):])
            return
        if receiver in _TENSORISH:
            member = self.api.tensor_member(node.func.attr, parameter=receiver != TENSOR)
            if member is not None and member.attribute and (
                    receiver != ARGUMENT or node.func.attr in self.torch_tensor_members):
                self.report("TMS403", node, f".{node.func.attr}(): MindSpore's Tensor.{node.func.attr} is an "
                            f"attribute, not a method: calling it raises TypeError"
                            f"{self._torch_note('torch.Tensor.' + node.func.attr)}", mindspore_api="mindspore.Tensor")
                return
            if member is None or member.attribute or receiver == ARGUMENT and (
                    node.func.attr not in self.torch_tensor_members or node.func.attr in _SEQUENCE_MEMBERS):
                return  # (a value that is probably a tensor: judged where it calls a method of torch's Tensor)
            self._check_binding(node, member.signature, f"Tensor.{node.func.attr}", "mindspore.Tensor")
            self._check_same_name(node, member)
            method = "mindspore.Tensor." + node.func.attr
            signature = member.signature
            found = ApiName(method, "fn", signature)
            for torch_api, target in self.facts.by_api.get(method, []):
                self._check_kernel(node, found, torch_api, target)
            self._check_int64(node, method, env)

    def _ms_classes(self, receiver: Value, depth: int = 0) -> list[str]:
        """The MindSpore classes a Cell value is an instance of (a file class: its MindSpore bases, transitively)."""
        if receiver is None or depth > 20:
            return []
        if receiver.startswith(("CELL:", SUBCLASS)):
            return [receiver.partition(":")[2]]
        info = self.classes.get(receiver[5:]) if receiver.startswith("SELF:") else None
        if info is None:
            return []
        return info.ms_bases + [key for base in info.bases for key in self._ms_classes("SELF:" + base, depth + 1)]

    def _check_unlisted(self, func: ast.Attribute, receiver: Value) -> None:
        """TMS404: a child added to a container Cell by the method the container never runs the child of
        (`self.insert_child_to_cell("conv", conv)` in a SequentialCell: registered, never called; the API data's
        "unlisted", observed)."""
        for cls in self._ms_classes(receiver):
            if self.api.unlisted(cls) == func.attr:
                name = cls.rpartition(".")[2]
                self.report("TMS404", func, f".{func.attr}(): a child added to a {name} this way is registered but "
                            f"never run: MindSpore {self.api.version}'s {name} calls only the cells it was built "
                            "with or appended (build it with an OrderedDict of the named cells, or append them)",
                            mindspore_api=cls)
                return

    def _check_cell_method(self, node: ast.Call, func: ast.Attribute, cls: str) -> None:
        """A method MindSpore's Cell class `cls` does not have (a Cell's attributes are set per instance, but
        what is called on a Cell of MindSpore's own is one of its methods)."""
        name = func.attr
        if name.startswith("_") or self.api.cell_member(name) is not None or \
                self.api.class_member(cls, name) is not None:
            return
        self.report("TMS403", func, f".{name}(): MindSpore {self.api.version}'s {cls.rpartition('.')[2]} has no "
                    f"method '{name}'{self._torch_note('torch.nn.Module.' + name)}", mindspore_api=cls)

    def _check_binding(self, node: ast.Call, sig: Signature | None, what: str, api: str) -> None:
        if sig is None:
            return
        problems = bind_problems(sig, node)
        if problems:
            self.report("TMS402", node, f"{what}{sig.text()} {'; '.join(problems)} (MindSpore raises TypeError)",
                        mindspore_api=api)

    def _check_api_call(self, node: ast.Call, found: ApiName) -> None:
        if found.kind in ("fn", "cls"):
            self._check_binding(node, found.signature, found.qualname, found.qualname)
            self._check_dtypes(node, found)
        targets = self.facts.by_api.get(found.qualname, [])
        for torch_api, target in targets:
            self._check_kernel(node, found, torch_api, target)
            self._check_order(node, found, target)

    def _check_dtypes(self, node: ast.Call, found: ApiName) -> None:
        """TMS402: a number written where MindSpore's parameter takes a dtype (`mindspore.Tensor(2, 3)`, torch's
        sizes form of its tensor class, passes 3 as the dtype); the parameters from MindSpore's docstrings."""
        for name, position in found.dtypes:
            passed = self._argument(node, name, position)
            if isinstance(passed, ast.Constant) and type(passed.value) in (int, float):
                self.report("TMS402", passed, f"{found.qualname}: {passed.value!r} is passed as '{name}', which "
                            f"MindSpore takes for a dtype such as mindspore.float32 (MindSpore raises TypeError)"
                            + (" (torch's sizes form: the shape goes in one tuple, e.g. "
                               "mindspore.ops.zeros((2, 3), mindspore.float32))" if found.tensor else ""),
                            mindspore_api=found.qualname)

    def _check_kernel(self, node: ast.Call, found: ApiName, torch_api: str, target: Target) -> None:
        device = self.device
        if device is None:
            return
        where = "Ascend" if device == "ascend" else device.upper()
        if device in target.no_kernel:
            self.report("TMS406", node, f"{found.qualname} has no {where} kernel in MindSpore {self.api.version} "
                        f"(measured by torch2ms verify; choose another form or device)", mindspore_api=found.qualname)
            return
        for fact in target.params:
            if fact.kind != "unsupported_inputs" or fact.torch is None:
                continue
            if not fact.values:  # raises for any value but torch's default ("opt=NAME": measured by verify)
                if f"opt={fact.torch}" in fact.covers:
                    name = fact.ms or fact.torch
                    position = position_of(found.signature, name) if found.signature is not None else None
                    passed = self._argument(node, name, position)
                    param = found.signature.param(name) if found.signature is not None else None
                    default = param.default if param is not None else NO_DEFAULT
                    # a constant other than MindSpore's default (a variable may hold the default)
                    if isinstance(passed, ast.Constant) and default is not NO_DEFAULT and passed.value != default:
                        self.report("TMS406", passed, f"{found.qualname} with {name}=: {fact.note}",
                                    mindspore_api=found.qualname)
                continue
            devices = _fact_devices(fact.note)
            if devices is not None and device not in devices:
                continue
            name = fact.ms or fact.torch
            position = position_of(found.signature, name) if found.signature is not None else None
            arg = self._argument(node, name, position)
            if isinstance(arg, ast.Constant) and arg.value in fact.values:
                self.report("TMS406", arg, f"{found.qualname} with {name}={arg.value!r}: {fact.note}",
                            mindspore_api=found.qualname)

    def _check_order(self, node: ast.Call, found: ApiName, target: Target) -> None:
        if found.signature is None:
            return
        positional = found.signature.positional()
        for fact in target.params:
            if fact.kind != "renamed" or fact.torch != fact.ms or fact.position is None:
                continue
            index = fact.position
            if index >= len(node.args) or index >= len(positional) or \
                    any(isinstance(a, ast.Starred) for a in node.args[:index + 1]):
                continue
            ms_param = positional[index].name
            if ms_param == fact.torch:
                continue
            self.report("TMS405", node.args[index],
                        f"positional argument {index + 1} of {found.qualname} is MindSpore's '{ms_param}'; in torch "
                        f"'{fact.torch}' sits there: pass both by keyword", mindspore_api=found.qualname)

    @staticmethod
    def _argument(node: ast.Call, name: str, position: int | None) -> ast.expr | None:
        for keyword in node.keywords:
            if keyword.arg == name:
                return keyword.value
        if position is not None and position < len(node.args) and \
                not any(isinstance(a, ast.Starred) for a in node.args[:position + 1]):
            return node.args[position]
        return None

    def _check_same_name(self, node: ast.Call, member: Member) -> None:
        """TMS404: MindSpore's Tensor method of torch's name differs from torch's where this call relies on
        the difference (the tables' facts of torch.Tensor.NAME)."""
        from ..checks import relevant_params

        assert isinstance(node.func, ast.Attribute)
        name = node.func.attr
        torch_api = "torch.Tensor." + name
        entry = self.table.lookup(torch_api)
        if entry is None:
            return
        target = entry.target_for(self.version, self.device)
        if target is None:
            if entry.note:
                self.report("TMS404", node, f".{name}(): MindSpore's Tensor.{name} is not torch's: {entry.note}",
                            mindspore_api="mindspore.Tensor." + name)
            return
        if target.api != "mindspore.Tensor." + name:
            if target.written_as == "copy" and entry.note:  # torch's in-place method is written as a copy
                self.report("TMS404", node, f".{name}(): MindSpore's Tensor.{name} is not torch's: {entry.note}",
                            mindspore_api=target.api)
            return
        if _composed(node, entry.rewrite):
            return  # the entry's own composed form, as the fix writes it: the facts it resolves do not apply
        # the call's MindSpore keywords under torch's names (axis= -> dim=), as the facts name parameters
        to_torch = {f.ms: f.torch for f in target.params if f.ms and f.torch and f.ms != f.torch}
        args = tuple(replace(a, keyword=to_torch.get(a.keyword, a.keyword)) if a.keyword else a
                     for a in _args(node, self.positions))
        call = ApiCall(api=torch_api, span=self.positions.span(node), kind=CallKind.METHOD, args=args)
        # (not the facts of inputs MindSpore raises for: measured with torch's keywords, which TMS402 judges)
        facts = [f for f in relevant_params(call, target)
                 if (f.kind is FactKind.DEFAULT_DIFFERS or (f.kind is FactKind.SEMANTICS_DIFFER and f.torch is not None))
                 and not f.only_degenerate_inputs]
        if facts:
            self.report("TMS404", node, f".{name}(): MindSpore's Tensor.{name} differs from torch's: "
                        + "; ".join(f.describe() for f in facts), mindspore_api=target.api)
