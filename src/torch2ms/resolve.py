"""Source tree -> `ApiCall` stream: a purpose-built, one-pass torch resolver.

It walks Python's `ast` once, in statement order, keeping a scope chain that
knows which names are torch modules, torch API objects, tensors, instances of
torch classes, user nn.Module classes and constants. Function bodies run after
the scope that defines them (late binding), methods of a class with
``__init__`` first so that ``self.x = ...`` facts are known in ``forward``.

What a receiver is decides whether ``x.sum()`` is a torch API: only values
proven to be tensors by data flow give a high-confidence Tensor method; an
unknown receiver with a method name that only tensors have gives a
low-confidence one; anything else (dicts, strings, numpy, pandas) gives none.
"""

from __future__ import annotations

import ast
import builtins
import operator
import re
import sys
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar
from collections.abc import Callable, Iterable, Sequence

from . import dataflow as df
from . import dynamic_shape as ds
from . import syntax
from .mappings import MappingTable
from .model import ApiCall, Arg, CallKind, Confidence, DynamicShape, ShapeResult, Span, ValueEnum
from .source import SourceText, any_line_between

# The resolver's type model: a module whose class it cannot name is torch's Module; layer classes live in
# torch.nn (their instances share the tensor names weight, bias, ...).
GENERIC_MODULE = "torch.nn.Module"
LAYER_NAMESPACE = "torch.nn."


class ValKind(ValueEnum):
    """What a value the resolver tracks is. The value is the spelling in descriptors and messages."""

    MODULE = "module"  # a torch module; name = qualified name
    SYMBOL = "symbol"  # a torch API object (function, class, constant); name = qualified name
    TENSOR = "tensor"
    INSTANCE = "instance"  # instance of a torch class; name = class qualified name
    USERCLASS = "userclass"  # a class defined in the scanned file
    USEROBJ = "userobj"  # an instance of such a class
    SELF = "self"  # `self` inside a method of such a class
    BOUND = "bound"  # a torch method bound to its receiver; name = API, value = call result
    CONST = "const"  # a compile-time constant; value = the constant
    OTHER = "other"  # known not to be torch
    UNKNOWN = "unknown"
    SYM = "sym"  # known later (another function's result, another file's class): name = a dataflow symbol
    TENSORS = "tensors"  # a tuple or list of tensors
    TUPLE = "tuple"  # a tuple whose items matter (a helper's `return out, weights`); value = their Vals


# The kinds by their short names, as the resolver writes them.
MODULE = ValKind.MODULE
SYMBOL = ValKind.SYMBOL
TENSOR = ValKind.TENSOR
INSTANCE = ValKind.INSTANCE
USERCLASS = ValKind.USERCLASS
USEROBJ = ValKind.USEROBJ
SELF = ValKind.SELF
BOUND = ValKind.BOUND
CONST = ValKind.CONST
OTHER = ValKind.OTHER
UNKNOWN = ValKind.UNKNOWN
SYM = ValKind.SYM
TENSORS = ValKind.TENSORS
TUPLE = ValKind.TUPLE


@dataclass(eq=False)
class ClassInfo:
    name: str
    is_module: bool = False  # subclass of torch.nn.Module (directly or through a user class)
    torch_base: str | None = None
    attrs: dict[str, Val] = field(default_factory=dict)
    methods: set[str] = field(default_factory=set)
    bases: list[str] = field(default_factory=list)  # user bases: a class of the file, or "@" + an import reference
    own: tuple[str, ...] = ()  # methods defined in the class body itself
    external: bool = False  # a base (or a base's base) is imported from another module of the project
    inherited: set[str] = field(default_factory=set)  # methods of its bases in the file (for super())


@dataclass(frozen=True, slots=True)
class Pending:
    """A call whose API is known once the symbol `receiver` is: `member` called on it (a method), or
    the receiver itself called (member ""). `call` has every fact but the API. `low`: without an answer,
    it is a low-confidence Tensor method (TMS105)."""

    receiver: str
    member: str
    call: ApiCall
    low: bool = False


@dataclass(frozen=True, slots=True)
class Val:
    kind: ValKind
    name: str = ""
    value: Any = None
    cls: ClassInfo | None = None
    tag: str = ""  # provenance for the dynamic-shape rules: ds.STATIC, ds.DATA, ds.BOOL, ds.DYN


@dataclass(frozen=True)
class Keywords:
    """The value of a dict display whose keys are all strings (``{'device': device, 'dtype': dtype}``), as a
    call's ``**mapping`` passes it: (key, whether its value is None) in order."""

    keys: tuple[tuple[str, bool], ...]


@dataclass(frozen=True)
class LayerAttribute:
    """An attribute of a torch layer instance read (or written: `store`) by name: one ``CLASS.NAME`` call (kind
    ATTRIBUTE, the span of ``value.NAME``) per class the value may be."""

    calls: tuple[ApiCall, ...]
    store: bool = False


_NO_SPAN = Span(0, 0, 0, 0)
V_TENSOR = Val(TENSOR)
V_OTHER = Val(OTHER)
V_UNKNOWN = Val(UNKNOWN)
V_NONE = Val(CONST, value=None)
V_TENSORS = Val(TENSORS)

_BUILTINS = frozenset(dir(builtins))
_REGISTERS_TENSOR = frozenset({"torch.nn.Module.register_buffer", "torch.nn.Module.register_parameter"})
_ITERABLE_OF_TENSORS = frozenset({"torch.utils.data.DataLoader"})
# Top-level modules that are never part of a scanned project: their names are not import references.
_FOREIGN_MODULES = frozenset(getattr(sys, "stdlib_module_names", ())) | frozenset({
    "torch", "numpy", "scipy", "pandas", "PIL", "cv2", "sklearn", "matplotlib", "tqdm", "yaml", "mindspore",
})
# Builtins whose result is a Python number whose origin matters for dynamic shapes.
_SCALAR_BUILTINS = frozenset({"int", "float", "bool", "complex", "len", "round", "abs", "min", "max", "range"})

_SAFE_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.Div: operator.truediv, ast.Mod: operator.mod,
}


def _fold(op: ast.operator, left: Any, right: Any) -> Any:
    """Constant-fold small numeric arithmetic; anything else is not folded."""
    fn = _SAFE_BINOPS.get(type(op))
    if fn is None:
        if isinstance(op, ast.Pow) and isinstance(left, int) and isinstance(right, int) and 0 <= right <= 64:
            return left**right
        raise ValueError
    if not (isinstance(left, (int, float)) and isinstance(right, (int, float))):
        raise ValueError
    return fn(left, right)


class Scope:
    __slots__ = ("names", "parent", "kind", "global_names", "stars")

    def __init__(self, kind: str, parent: Scope | None) -> None:
        self.names: dict[str, Val] = {}
        self.parent = parent
        self.kind = kind  # module, class, function, comprehension
        self.global_names: set[str] = set()
        self.stars: list[str] = []  # modules star-imported into this scope

    def module(self) -> Scope:
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope


class Resolver:
    """Collects the `ApiCall`s of one module."""

    def __init__(self, table: MappingTable, positions: SourceText) -> None:
        self.table = table
        self.meta = table.meta
        self.inv = table.inventory
        # Packages whose imports are tracked (torch, torchvision, ...) and the names that are modules
        # of them: data of the loaded tables, not a list here.
        self.roots = table.roots
        self.modules = table.modules or self.meta.modules
        self.pos = positions
        self.calls: list[ApiCall] = []
        self.layer_calls: list[ApiCall] = []  # calls of torch layer instances that pass keywords (their forward's)
        self.layer_attributes: list[LayerAttribute] = []  # attributes of layers that MindSpore names otherwise
        self.events: list[ds.ShapeEvent] = []  # facts for the dynamic-shape rules
        self.scope = Scope("module", None)
        self.deferred: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, Scope, ClassInfo | None]] = []
        self.context = ""
        self._method_class: ClassInfo | None = None  # the class of the method being walked (for super())
        self.in_network = False
        self.imports_torch = False
        self._class_stack: list[ClassInfo] = []
        self.classes: list[ClassInfo] = []  # every class of the file, for the network scope across bases
        self.imports: list[tuple[str, str]] = []  # module-level project imports: (local name, "@" reference)
        # data flow between functions, classes and files (dataflow.py)
        self.returns: dict[str, list[str]] = {}  # function context -> descriptors of what it returns
        self.returns_declared: dict[str, str] = {}  # function context -> descriptor of its return annotation
        self.generators: set[str] = set()  # contexts that yield
        self.pending: list[Pending] = []  # method calls on symbols, resolved after the pass
        self.exported: list[Pending] = []  # those only other files can decide (project_graph.py)
        self._arg_vals: list[Val] = []  # the values of the last call's arguments
        self._called_back: dict[int, tuple[Val, ...]] = {}  # a lambda an API calls back: what it passes (by id)
        # calls of project functions: (callee descriptor, positional argument descriptors up to a *args,
        # keyword argument descriptors, whether a *args or **kwargs may pass more)
        self.arguments: list[tuple[str, tuple[str, ...], tuple[tuple[str, str], ...], bool]] = []
        self._chained: dict[int, Val] = {}  # links of a long chain evaluated ahead of their parent (_ev_chain)
        # the last tuple or list evaluated and its items' values: `q, k = t[0], t[1]` binds each one's
        self._sequence: tuple[ast.expr | None, list[Val]] = (None, [])
        self._type_ref = 0  # > 0 while a type reference is evaluated (annotation, isinstance target, base class)
        self.narrowed: list[Span] = []  # the branches where an `isinstance` test made a name a torch value
        self._proof_lines: list[int] | None = None  # lines naming a proof method (`_may_prove`), built on first use

    # ------------------------------------------------------------------ entry
    def run(self, tree: ast.Module) -> list[ApiCall]:
        self._run_scope(tree.body)
        if self.pending:
            self._settle_pending()
        return self.calls

    def _settle_pending(self) -> None:
        """Name the pending calls that this file's own facts decide; keep the others for the project pass."""
        evaluator = df.Evaluator(LocalFacts(self), self.table)
        for item in self.pending:
            api = evaluator.member_api(0, item.receiver, item.member)
            if api == df.K_EXTERNAL:
                if not item.member or item.member in df.member_names(self.table):
                    self.exported.append(item)  # the project pass names it, replacing this guess
                api = None
            call = named_call(item, api if isinstance(api, str) else None, self.roots)
            if call is not None:
                self.calls.append(call)
        self.pending = []

    def _run_scope(self, body: list[ast.stmt]) -> None:
        saved = self.deferred
        self.deferred = []
        self.block(body)
        while self.deferred:
            pending = sorted(self.deferred, key=lambda item: item[0].name != "__init__")
            self.deferred = []
            for node, parent, cls in pending:
                self._function_body(node, parent, cls)
        self.deferred = saved

    # ------------------------------------------------------------------ names
    def lookup(self, name: str) -> Val:
        scope: Scope | None = self.scope
        first = True
        while scope is not None:
            if name in scope.global_names and scope.parent is not None:  # `global x` at module level is a no-op
                scope = scope.module()
                first = True
                continue
            if (first or scope.kind != "class") and name in scope.names:
                return scope.names[name]
            first = False
            scope = scope.parent
        module = self.scope.module()
        for star in module.stars:
            if self._star_exports(star, name):
                return self._attr_of(Val(MODULE, star), name)
        return V_OTHER if name in _BUILTINS else V_UNKNOWN

    def _star_exports(self, module: str, name: str) -> bool:
        if module == "torch":
            return name in self.inv.top_level
        if module.partition(".")[0] in self.meta.modules:
            return name in self.inv.namespaces.get(module, ())
        qual = f"{module}.{name}"  # a library of the tables (torchvision, ...): its entries and modules
        return qual in self.table.entries or qual in self.modules

    def bind_name(self, name: str, val: Val) -> None:
        scope = self.scope
        if name in scope.global_names:
            scope = scope.module()
        scope.names[name] = val

    def canonical(self, qualname: str) -> str:
        """Map private spellings (torch.nn.modules.conv.Conv2d) to the public name."""
        if qualname.startswith("torch.nn.modules.") or qualname.startswith("torch.nn.parameter."):
            last = qualname.rpartition(".")[2]
            if last in self.inv.namespaces.get("torch.nn", ()):
                return LAYER_NAMESPACE + last
        if qualname.startswith("torch.functional."):
            return "torch." + qualname[len("torch.functional."):]
        return qualname

    # ------------------------------------------------------------------ reporting
    def report(self, api: str, node: ast.expr, kind: CallKind, confidence: Confidence = Confidence.HIGH,
               call: ast.Call | None = None, args: tuple[Arg, ...] = ()) -> None:
        if self._type_ref and kind is CallKind.ATTRIBUTE:
            kind = CallKind.TYPE  # a name of a type: nothing of torch runs here
        self.calls.append(self._api_call(api, node, kind, confidence, call, args))

    def _api_call(self, api: str, node: ast.expr, kind: CallKind, confidence: Confidence = Confidence.HIGH,
                  call: ast.Call | None = None, args: tuple[Arg, ...] = ()) -> ApiCall:
        span = self.pos.span(node)
        func_span = name_span = None
        if call is not None:
            func = call.func
            func_span = self.pos.span(func)
            if isinstance(func, ast.Attribute):
                name_span = Span(func_span.end_line, func_span.end_col - len(func.attr),
                                 func_span.end_line, func_span.end_col)
            else:
                name_span = func_span
        return ApiCall(api=api, span=span, kind=kind, confidence=confidence, func_span=func_span,
                       name_span=name_span, args=args, in_network=self.in_network, context=self.context)

    # ------------------------------------------------------------------ values
    def _dynamic(self, api: str) -> DynamicShape | None:
        """The tables' dynamic-shape fact of `api` (dynamic_shape.py judges it)."""
        entry = self.table.lookup(api)
        return entry.dynamic_shape if entry is not None else None

    def _shape_tag(self, api: str, args: Sequence[Arg] | None, recv_tag: str) -> str:
        """The tag of `api`'s result by its tables' dynamic-shape fact and shape result: a Tensor member on a
        receiver tagged `recv_tag` (`args` None), or a function called with `args`."""
        entry = self.table.lookup(api)
        fact, result = (entry.dynamic_shape, entry.shape_result) if entry is not None else (None, None)
        if args is None:
            return ds.member_tag(recv_tag, fact, result)
        return ds.function_tag(api, args, fact, result)

    def _builds_empty(self, api: str, node: ast.Call) -> bool:
        """Whether calling `api` as `node` builds a 1-D tensor with no elements, by its literal arguments and the
        tables' result of `api` (`from_data`: ``torch.tensor([])``, ``torch.Tensor()``; `from_sizes`:
        ``torch.empty(0)``, ``torch.zeros((0,))``)."""
        entry = self.table.lookup(api)
        result = entry.shape_result if entry is not None else None
        if result not in (ShapeResult.FROM_DATA, ShapeResult.FROM_SIZES) \
                or any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return False
        given = {k.arg: k.value for k in node.keywords}
        if result is ShapeResult.FROM_DATA:
            data = node.args[0] if node.args else given.get("data")
            if data is None:  # `torch.Tensor()`: a class of tensors built with nothing
                return api in self.meta.tensor_classes
            return isinstance(data, (ast.List, ast.Tuple)) and not data.elts
        sizes = node.args[0] if len(node.args) == 1 else given.get("size") if not node.args else None
        if isinstance(sizes, (ast.List, ast.Tuple)) and len(sizes.elts) == 1:
            sizes = sizes.elts[0]
        return isinstance(sizes, ast.Constant) and type(sizes.value) is int and sizes.value == 0

    def result_of(self, api: str) -> Val:
        """What calling the torch API `api` returns."""
        desc = df.result_of(self.table, api)
        if desc == df.TENSOR:
            return V_TENSOR
        if desc == df.OTHER:
            return V_OTHER
        if desc == df.UNKNOWN:
            return V_UNKNOWN
        return Val(INSTANCE, api)  # calling a class makes an instance whose methods are torch APIs too

    def _instance_member(self, cls_name: str, name: str) -> str:
        """The qualified name of member `name` of torch class `cls_name`."""
        return df.instance_member(self.table, cls_name, name)

    def _attr_of(self, recv: Val, name: str) -> Val:
        if recv.kind == BOUND and recv.name.startswith("torch.Tensor.") \
                and recv.name.rpartition(".")[2] in self.meta.tensor_valued_attributes:
            recv = V_TENSOR  # x.data.mul_(2), x.T.sum(): the attribute is itself a tensor
        kind = recv.kind
        if kind == BOUND and recv.name.startswith("torch.Tensor.") \
                and recv.name.rpartition(".")[2] in self.meta.named_tuple_fields:
            recv, kind = V_TENSOR, TENSOR  # t.max(dim=1).values.sum(): the field is a tensor
        if kind == MODULE:
            qual = f"{recv.name}.{name}"
            if qual in self.modules:
                return Val(MODULE, qual)
            return Val(SYMBOL, self.canonical(qual))
        if kind == SYMBOL:  # (torch.nn.modules.batchnorm.BatchNorm2d: a private module's public class)
            qual = f"{recv.name}.{name}"  # (unless the tables have the private spelling's own entry)
            return Val(SYMBOL, qual if qual in self.table.entries else self.canonical(qual))
        if kind == TENSOR:
            if name in self.inv.tensor_members:
                result = V_OTHER if name in self.meta.non_tensor_methods else V_TENSOR
                tag = self._shape_tag(f"torch.Tensor.{name}", None, recv.tag)
                if tag:
                    result = Val(OTHER if tag in (ds.STATIC, ds.DATA) else result.kind, tag=tag)
                return Val(BOUND, f"torch.Tensor.{name}", result)
            return V_UNKNOWN
        if kind == INSTANCE:
            if recv.name == GENERIC_MODULE and name not in self.inv.module_members:
                return V_UNKNOWN  # a submodule of unknown class (from a container): its own members
            api = self._instance_member(recv.name, name)
            if api.startswith("torch.nn.Module."):
                result = _module_method_result(name, recv, self.meta.module_self_methods)
            else:
                result = V_UNKNOWN
            if recv.name.startswith(LAYER_NAMESPACE) and name in self.meta.layer_tensor_attributes:
                return V_TENSOR
            if recv.name in ("torch.nn.ModuleList", "torch.nn.Sequential", "torch.nn.ModuleDict") \
                    and name not in self.inv.module_members:
                return Val(INSTANCE, GENERIC_MODULE)
            return Val(BOUND, api, result)
        if kind == SYM:
            return Val(SYM, df.extend(recv.name, "." + name))
        if kind in (SELF, USEROBJ):
            cls = recv.cls
            assert cls is not None
            if recv.name == "super()":  # super().name: the bases' member
                if name in cls.inherited:
                    return Val(OTHER, name="method")
                if name in ("forward", "__call__") and cls.is_module:  # the torch layer's own forward
                    return Val(INSTANCE, cls.torch_base or GENERIC_MODULE)
                if cls.is_module and name in self.inv.module_members and name[:2] != "__":
                    return Val(BOUND, f"torch.nn.Module.{name}", V_OTHER if name not in self.meta.module_self_methods
                               else Val(SELF, cls.name, cls=cls))
                return V_UNKNOWN
            if name in cls.attrs:
                return cls.attrs[name]
            if name in cls.methods:
                return Val(OTHER, name="method", value=f"{cls.name}.{name}")
            if cls.is_module and name in self.inv.module_members:
                # the torch base's own entry where the tables have one (a Sequential subclass's `self.add_module`)
                own = f"{cls.torch_base}.{name}"
                api = own if cls.torch_base and self.table.lookup(own) is not None else f"torch.nn.Module.{name}"
                return Val(BOUND, api, _module_method_result(name, recv, self.meta.module_self_methods))
            if cls.external:  # perhaps set or defined by a base in another file
                return Val(SYM, df.extend(df.symbol("self:" + cls.name), "." + name))
            return V_UNKNOWN
        if kind == USERCLASS:
            return V_UNKNOWN
        if recv.name[:1] == "@" and kind in (OTHER, UNKNOWN):  # a project import: keep the reference
            return Val(kind, f"{recv.name}.{name}")
        if kind == OTHER and recv.name == "functools" and name == "partial":
            return Val(OTHER, "functools.partial")
        if kind in (CONST, OTHER):
            return V_OTHER
        return V_UNKNOWN

    def ev(self, node: ast.AST) -> Val:
        if self._chained:  # a link of a long chain, evaluated already (see _ev_chain)
            done = self._chained.pop(id(node), None)
            if done is not None:
                return done
        if isinstance(node, _CHAIN_LINKS):
            links = _chain_links(node)
            if len(links) > _LONG_CHAIN:
                self._ev_chain(links)
        return self._ev_node(node)

    def _ev_node(self, node: ast.AST) -> Val:
        handler = self._EV.get(type(node))
        if handler is not None:
            return handler(self, node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.ev(child)
        return V_UNKNOWN

    def _ev_chain(self, links: list[ast.expr]) -> None:
        """Evaluate the links of a long chain (`x.f().g()[0]...`, outermost first in `links`) from the
        innermost out, each kept for its parent's `ev`: the same order as the recursive evaluation, in
        constant stack depth, so chains of tens of thousands of calls are analysed like short ones."""
        for link in reversed(links):
            self._chained[id(link)] = self._ev_node(link)

    def ev_type(self, node: ast.expr) -> Val:
        """Evaluate a type reference: the torch names it reads are reported as `CallKind.TYPE`."""
        self._type_ref += 1
        try:
            return self.ev(node)
        finally:
            self._type_ref -= 1

    def ref(self, node: ast.expr, layers: bool = False) -> Val:
        """Resolve a name or attribute chain without reporting it (`layers`: but the attributes of torch layers
        it reads, as `_layer_attribute` does: ``bn.weight`` in ``bn.weight.data.fill_(1)``)."""
        if isinstance(node, ast.Name):
            return self.lookup(node.id)
        if isinstance(node, ast.Attribute):
            chain: list[ast.Attribute] = []
            base: ast.expr = node
            while isinstance(base, ast.Attribute):  # a.b.c...: iteratively, however long
                chain.append(base)
                base = base.value
            recv = self.lookup(base.id) if isinstance(base, ast.Name) else self.ev(base)
            for item in reversed(chain):
                if layers:
                    self._layer_attribute(recv, item, False)
                recv = self._attr_of(recv, item.attr)
            return recv
        return self.ev(node)

    def _read(self, val: Val, node: ast.expr) -> Val:
        """Report a non-call use of `val` and return the value the read yields."""
        if val.kind == SYMBOL:
            self.report(val.name, node, CallKind.ATTRIBUTE)
            return val
        if val.kind == BOUND:
            attr = val.name.rpartition(".")[2]
            if val.name.startswith("torch.Tensor.") and attr in self.meta.named_tuple_fields:
                return V_TENSOR  # a field of a named-tuple result (t.max(dim=1).values), not a method
            if self.table.lookup(val.name) is not None:
                self.report(val.name, node, CallKind.ATTRIBUTE)
            if val.name.startswith("torch.Tensor."):
                if attr in self.meta.tensor_valued_attributes:
                    return V_TENSOR
                if attr in ("shape", "ndim") and isinstance(val.value, Val):
                    return val.value  # x.shape: static unless x's shape is itself dynamic
                return V_OTHER
            return V_OTHER
        return val

    def _ev_name(self, node: ast.Name) -> Val:
        return self._read(self.lookup(node.id), node)

    def _ev_attribute(self, node: ast.Attribute) -> Val:
        owner = self.ref(node.value, True) if isinstance(node.value, (ast.Name, ast.Attribute)) else self.ev(node.value)
        self._layer_attribute(owner, node, False)
        return self._read(self._attr_of(owner, node.attr), node)

    def _layer_attribute(self, owner: Val, node: ast.Attribute, store: bool) -> None:
        """`node` reads (or, `store`, writes) an attribute of a torch layer instance that a MindSpore class of the
        layer names otherwise or lacks (its targets' `attributes`): recorded with one call per class the value may
        be (an ``isinstance`` test with a tuple of classes), for `checks.layer_attribute`."""
        if owner.kind != INSTANCE or not owner.name.startswith(LAYER_NAMESPACE) or node.attr.startswith("_"):
            return
        classes = owner.value if isinstance(owner.value, tuple) else (owner.name,)
        entries = [self.table.lookup(cls) for cls in classes]
        if not any(entry is not None and any(t.attribute(node.attr)[0] or store and node.attr in t.built_attributes
                                             or not store and t.differing(node.attr) is not None
                                             or not store and entry.renamed_tensor(t, node.attr) is not None
                                             for t in entry.targets) for entry in entries):
            return
        calls = tuple(self._api_call(f"{cls}.{node.attr}", node, CallKind.ATTRIBUTE) for cls in classes)
        self.layer_attributes.append(LayerAttribute(calls, store))

    def _ev_constant(self, node: ast.Constant) -> Val:
        return Val(CONST, value=node.value)

    def _ev_starred(self, node: ast.Starred) -> Val:
        self.ev(node.value)
        return V_OTHER

    def _ev_namedexpr(self, node: ast.NamedExpr) -> Val:
        val = self.ev(node.value)
        self.bind_name(node.target.id, val)
        return val

    def _combine(self, left: Val, op: ast.operator, right: Val) -> Val:
        if SYM in (left.kind, right.kind) and TENSOR not in (left.kind, right.kind):
            return left if left.kind == SYM else right  # a symbol's arithmetic: a tensor if it is one
        if left.kind == TENSOR or right.kind == TENSOR:
            if left.tag or right.tag:
                tag = ds.combine_tensor_tags(isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)), left.tag, right.tag)
                return Val(TENSOR, tag=tag) if tag else V_TENSOR
            return V_TENSOR
        if left.kind == CONST and right.kind == CONST:
            try:
                return Val(CONST, value=_fold(op, left.value, right.value))
            except Exception:
                return V_OTHER
        if left.tag or right.tag:
            tag = ds.combine_scalar_tags(left.tag, left.kind == CONST, right.tag, right.kind == CONST)
            if tag:
                return Val(OTHER, tag=tag)
        return V_UNKNOWN

    def _ev_binop(self, node: ast.BinOp) -> Val:
        chain: list[ast.BinOp] = []
        current: ast.expr = node
        while isinstance(current, ast.BinOp):  # left-deep chains iteratively: a + b + c + ...
            chain.append(current)
            current = current.left
        val = self.ev(current)
        for binop in reversed(chain):
            val = self._combine(val, binop.op, self.ev(binop.right))
        return val

    def _ev_unaryop(self, node: ast.UnaryOp) -> Val:
        val = self.ev(node.operand)
        if val.kind == CONST and isinstance(node.op, ast.USub) and isinstance(val.value, (int, float)):
            return Val(CONST, value=-val.value)
        if val.kind == CONST and isinstance(node.op, ast.UAdd):
            return val
        if val.kind == TENSOR:
            if isinstance(node.op, ast.Not):
                return val if val.tag == ds.GUESS else Val(OTHER, tag=ds.DATA)  # `not t` reads the value
            if val.tag == ds.DYN or (val.tag == ds.BOOL and isinstance(node.op, ast.Invert)):
                return val
            return V_TENSOR
        if val.tag in (ds.STATIC, ds.DATA):
            return Val(OTHER, tag=val.tag)
        return V_UNKNOWN if val.kind == UNKNOWN else V_OTHER

    def _ev_compare(self, node: ast.Compare) -> Val:
        vals = [self.ev(node.left)] + [self.ev(c) for c in node.comparators]
        if any(v.kind == TENSOR for v in vals) and not any(
            isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops
        ):
            if all(v.tag == ds.GUESS for v in vals if v.kind == TENSOR) \
                    or any(v.kind == CONST and isinstance(v.value, str) for v in vals):
                return Val(TENSOR, tag=ds.GUESS)  # a tensor is never compared with a string
            return Val(TENSOR, tag=ds.BOOL)
        if any(v.kind == SYM for v in vals) and all(v.kind in (SYM, CONST) for v in vals) and not any(
                isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
            # `(relative_position > 0).to(...)` on a parameter: a (bool) tensor if the symbol is a tensor
            return next(v for v in vals if v.kind == SYM)
        if any(v.tag == ds.DATA for v in vals):
            return Val(OTHER, tag=ds.DATA)
        return V_OTHER

    def _ev_boolop(self, node: ast.BoolOp) -> Val:
        vals = [self.ev(v) for v in node.values]
        if all(v.kind == TENSOR for v in vals):
            return V_TENSOR
        if isinstance(node.op, ast.Or):  # norm_layer = norm_layer or nn.LayerNorm
            known = [v for v in vals if not (v.kind == UNKNOWN or (v.kind == CONST and v.value is None))]
            if len(known) == 1 and self._class_value(known[0]) is not None:
                return known[0]
        if any((v.kind == TENSOR and v.tag != ds.GUESS) or v.tag == ds.DATA for v in vals):
            return Val(UNKNOWN, tag=ds.DATA)  # `a and t` takes the truth value of a tensor
        return V_UNKNOWN

    def _event(self, kind: str, node: ast.expr | ast.stmt, detail: ast.AST | str | None = None,
               targets: tuple[str, ...] = ()) -> None:
        if isinstance(detail, ast.AST):
            text = self._detail(detail)
            detail = text if len(text) <= 60 else text[:57] + "..."
        self.events.append(ds.ShapeEvent(kind, self.pos.span(node), self.in_network, self.context,
                                          detail or "", targets))

    def _detail(self, node: ast.AST) -> str:
        """An expression as a message quotes it: unparsed, or for a long one (a chain of thousands of
        calls, which ast.unparse would walk recursively in full) its first source words."""
        if isinstance(node, ast.expr):
            start, end = self.pos.node_offsets(node)
            if end - start > _UNPARSE_LIMIT:  # printable characters only, as ast.unparse writes them
                return "".join(ch if ch.isprintable() else "?" for ch in " ".join(self.pos.text[start:start + 120].split()))
        return ast.unparse(node)

    def _condition(self, test: ast.expr, kind: str = ds.CONDITION) -> None:
        """Record a branch or loop test that reads tensor values."""
        val = self.ev(test)
        if (val.kind == TENSOR and val.tag != ds.GUESS) or val.tag == ds.DATA:
            bare = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test
            if isinstance(bare, ast.Name) and val.kind == TENSOR and not val.tag:
                kind = ds.WEAK_CONDITION  # `if use_cache:` on a forward parameter: often a flag
            self._event(kind, test, test)

    def _tensor_subscript(self, node: ast.Subscript, val: Val) -> Val:
        """x[...] on a tensor: boolean masks and data-dependent slice bounds make the shape dynamic."""
        index = node.slice
        dynamic = val.tag == ds.DYN
        for elt in index.elts if isinstance(index, ast.Tuple) else (index,):
            if isinstance(elt, ast.Slice):
                for bound in (elt.lower, elt.upper, elt.step):
                    if bound is not None:
                        part = self.ev(bound)
                        if part.kind == TENSOR or part.tag == ds.DATA:
                            self._event(ds.DATA_SLICE, node, bound)
                            dynamic = True
                continue
            part = self.ev(elt)
            if part.kind != TENSOR:
                continue
            if part.tag == ds.BOOL:
                self._event(ds.BOOL_INDEX, node, elt)
                dynamic = True
            elif part.tag == ds.DYN:
                dynamic = True
            elif isinstance(elt, ast.Name) and "mask" in elt.id.lower():
                self._event(ds.MASK_INDEX, node, elt)
        if dynamic:
            return Val(TENSOR, tag=ds.DYN)
        return Val(TENSOR, tag=ds.BOOL) if val.tag == ds.BOOL else V_TENSOR

    def _ev_subscript(self, node: ast.Subscript) -> Val:
        val = self.ev(node.value)
        if val.kind == TENSOR:
            return self._tensor_subscript(node, val)
        self.ev(node.slice)
        index = node.slice.value if isinstance(node.slice, ast.Constant) and type(node.slice.value) is int else None
        if val.kind == SYM:
            return Val(SYM, df.extend(val.name, "[]" if index is None else f"[{index}]"))
        if val.kind == TENSORS:
            return V_TENSORS if isinstance(node.slice, ast.Slice) else V_TENSOR
        if val.kind == TUPLE:
            return val.value[index] if index is not None and -len(val.value) <= index < len(val.value) else V_UNKNOWN
        if val.tag in (ds.STATIC, ds.DATA):
            return Val(OTHER, tag=val.tag)  # x.shape[0], t.tolist()[0]
        if val.kind == INSTANCE and val.name in ("torch.nn.ModuleList", "torch.nn.Sequential", "torch.nn.ModuleDict"):
            return Val(INSTANCE, GENERIC_MODULE)
        return V_UNKNOWN

    def _ev_sequence(self, node: ast.Tuple | ast.List | ast.Set) -> Val:
        vals = [self.ev(e) for e in node.elts]
        self._sequence = (node, vals)
        if any(v.kind == TENSOR and v.tag == ds.EMPTY for v in vals) and not isinstance(node, ast.Set):
            # a sequence holding an empty 1-D tensor (`[acc, x]`): torch.cat skips it (the tables' `tagged` forms)
            return Val(TENSORS, tag=ds.EMPTY) if all(v.kind == TENSOR for v in vals) else Val(OTHER, tag=ds.EMPTY)
        if isinstance(node, ast.Tuple) and vals and all(v.kind == CONST for v in vals):
            return Val(CONST, value=tuple(v.value for v in vals))
        if vals and not isinstance(node, ast.Set) and all(v.kind == TENSOR for v in vals):
            return V_TENSORS
        if isinstance(node, ast.Tuple) and any(v.kind in _FLOWING for v in vals) \
                and not any(isinstance(e, ast.Starred) for e in node.elts):
            return Val(TUPLE, value=tuple(vals))
        if isinstance(node, ast.Tuple) and not vals:
            return Val(CONST, value=())
        return V_OTHER

    def _ev_dict(self, node: ast.Dict) -> Val:
        for key in node.keys:
            if key is not None:
                self.ev(key)
        values = [self.ev(value) for value in node.values]
        keys = [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        if len(keys) != len(node.keys):
            return V_OTHER
        return Val(OTHER, value=Keywords(tuple((k, v.kind == CONST and v.value is None) for k, v in zip(keys, values))))

    def _ev_ifexp(self, node: ast.IfExp) -> Val:
        self._condition(node.test)
        body = self.ev(node.body)
        orelse = self.ev(node.orelse)
        if body.kind == orelse.kind and body.kind in (TENSOR, OTHER):
            return body
        # `Layer(...) if flag else None`: where called, the layer; `Parameter(...) if flag else None`: where a method
        # is called on it, the tensor (on None the method would fail in torch too)
        for one, other in ((body, orelse), (orelse, body)):
            if one.kind in (INSTANCE, TENSOR) and other.kind == CONST and other.value is None:
                return one
        return V_UNKNOWN

    def _ev_lambda(self, node: ast.Lambda) -> Val:
        for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
            self.ev(default)
        saved = self.scope
        self.scope = Scope("function", saved)
        passed = self._called_back.pop(id(node), ())
        for index, arg in enumerate(_all_args(node.args)):
            self.scope.names[arg.arg] = passed[index] if index < len(passed) else V_UNKNOWN
        self.ev(node.body)
        self.scope = saved
        return V_OTHER

    def _ev_comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> Val:
        saved = self.scope
        self.scope = Scope("comprehension", saved)
        for gen in node.generators:
            iterable = self.ev(gen.iter)
            self.bind(gen.target, self._element_of(iterable))
            for cond in gen.ifs:
                self.ev(cond)
        if isinstance(node, ast.DictComp):
            self.ev(node.key)
            self.ev(node.value)
        else:
            self.ev(node.elt)
        self.scope = saved
        return V_OTHER

    def _element_of(self, iterable: Val) -> Val:
        if iterable.kind in (TENSOR, TENSORS):
            return V_TENSOR
        if iterable.kind == SYM:
            return Val(SYM, df.extend(iterable.name, "[]"))
        if iterable is _NAMED_TENSORS:
            return _TENSOR_PAIR
        if iterable is _ENUMERATED_TENSORS:
            return Val(TUPLE, value=(V_OTHER, V_TENSOR))
        if iterable.tag == ds.DATA:
            return Val(OTHER, tag=ds.DATA)
        if iterable.kind == INSTANCE and iterable.name in _ITERABLE_OF_TENSORS:
            return V_TENSOR
        if iterable.kind == INSTANCE and iterable.name in self.table.layer_sequences:
            return Val(INSTANCE, GENERIC_MODULE)  # a layer of unknown class: called, it gives a tensor
        return V_UNKNOWN

    # ------------------------------------------------------------------ calls
    def _args(self, node: ast.Call) -> tuple[Arg, ...]:
        out = []
        vals = self._arg_vals = []
        func = node.func  # isinstance(x, nn.Conv2d): the second argument names types
        type_arg = 1 if isinstance(func, ast.Name) and func.id in ("isinstance", "issubclass") else -1
        for index, arg in enumerate(node.args):
            starred = isinstance(arg, ast.Starred)
            val = self.ev_type(arg) if index == type_arg else self.ev(arg)
            vals.append(val)
            out.append(Arg(None, self.pos.span(arg), None, val.kind == CONST, val.value if val.kind == CONST else None,
                           val.kind == TENSOR, starred, val.tag))
        for kw in node.keywords:
            val = self.ev(kw.value)
            vals.append(val)
            kw_span = None
            if kw.arg is not None:
                start = self.pos.span(kw)
                kw_span = Span(start.start_line, start.start_col, start.start_line, start.start_col + len(kw.arg))
            keys = val.value.keys if kw.arg is None and isinstance(val.value, Keywords) else ()
            out.append(Arg(kw.arg, self.pos.span(kw.value), kw_span, val.kind == CONST,
                           val.value if val.kind == CONST else None, val.kind == TENSOR, kw.arg is None, val.tag, keys))
        self._arg_vals = vals  # the arguments' own calls set it too
        return tuple(out)

    def _ev_call(self, node: ast.Call) -> Val:
        func = node.func
        recv: Val | None = None
        if isinstance(func, ast.Attribute):
            base = func.value
            recv = self.ref(base, True) if isinstance(base, (ast.Name, ast.Attribute)) else self.ev(base)
            callee = self._attr_of(recv, func.attr)
        elif isinstance(func, ast.Name):
            callee = self.lookup(func.id)
        else:
            callee = self.ev(func)
        if callee.kind == BOUND and (callback := self.meta.callbacks.get(callee.name)) is not None:
            given = node.args[0] if node.args else next((k.value for k in node.keywords
                                                         if k.arg == callback.keyword), None)
            if isinstance(given, ast.Lambda):  # net.apply(lambda m: ...): m is what the API passes
                self._called_back[id(given)] = tuple(V_TENSOR if p == "tensor" else Val(INSTANCE, p)
                                                     for p in callback.passes)
        args = self._args(node)
        kind = callee.kind
        if kind in (UNKNOWN, OTHER, SYM) and isinstance(func, ast.Attribute) and len(node.args) >= 2 \
                and (func.attr == "get" or func.attr.startswith("get_")):
            default = self._quiet_value(node.args[-1])  # REGISTRY.get(name, default_fn): like its default
            if default.kind == USERCLASS or self._class_value(default) is not None \
                    or (default.kind == OTHER and isinstance(default.value, str)):
                return default
        if kind == SYM:
            if recv is not None and recv.cls is not None and isinstance(func, ast.Attribute) and recv.cls.external:
                self._edge((f"{recv.cls.name}.{func.attr}",))  # a method of an imported base: the network scope
            if recv is not None and recv.kind == SYM and isinstance(func, ast.Attribute):
                self._pend(recv.name, func.attr, node, args)
            else:  # the value itself is called: norm_layer(dim) with norm_layer from a helper
                self._pend(callee.name, "", node, args)
            return Val(SYM, df.extend(callee.name, "()"))
        if kind == SYMBOL:
            self.report(callee.name, node, CallKind.CALL, call=node, args=args)
            result = self.result_of(callee.name)
            tag = self._shape_tag(callee.name, args, "") if result.kind == TENSOR else ""
            if result.kind == TENSOR and not tag and self.table.lookup(callee.name) is None \
                    and callee.name not in self.meta.tensor_classes:
                tag = ds.GUESS  # not in the table: the result is only guessed to be a tensor
            if result.kind == TENSOR and not tag and self._builds_empty(callee.name, node):
                tag = ds.EMPTY
            return Val(TENSOR, tag=tag) if tag else result
        if kind == BOUND:
            self.report(callee.name, node, CallKind.METHOD, call=node, args=args)
            self._callback(callee.name, args)
            if callee.name in _REGISTERS_TENSOR and recv is not None and recv.cls is not None \
                    and args and args[0].is_const and isinstance(args[0].value, str):
                recv.cls.attrs[args[0].value] = V_TENSOR  # self.register_buffer("name", t)
            fact = self._dynamic(callee.name)
            if fact is not None and fact.when and ds.always_dynamic(fact, args):
                return Val(TENSOR, tag=ds.DYN)  # x.repeat_interleave(counts): dynamic for these arguments
            return callee.value if isinstance(callee.value, Val) else V_UNKNOWN
        if kind == INSTANCE:
            if self.table.lookup(callee.name) is not None:
                # a layer called: MindSpore's construct may name its keywords otherwise, or take an argument in
                # another dtype (checks.layer_call)
                self.layer_calls.append(self._api_call(callee.name, node, CallKind.CALL, call=node, args=args))
            return V_TENSOR if callee.name.startswith(LAYER_NAMESPACE) else V_UNKNOWN
        if kind == USERCLASS:
            return Val(USEROBJ, callee.name, cls=callee.cls)
        if kind in (USEROBJ, SELF):
            cls = callee.cls
            if cls is not None and cls.is_module:
                return V_TENSOR
            if cls is not None and ("__call__" in cls.methods or cls.external):
                return Val(SYM, df.extend(df.symbol("self:" + cls.name), "()"))
            return V_UNKNOWN
        if (
            kind == UNKNOWN
            and recv is not None
            and recv.kind == UNKNOWN
            and self.imports_torch
            and isinstance(func, ast.Attribute)
            and func.attr in self.inv.tensor_members
            and func.attr not in self.meta.ambiguous_methods
        ):
            self.report(f"torch.Tensor.{func.attr}", node, CallKind.METHOD, Confidence.LOW, call=node, args=args)
        if kind == OTHER:
            if callee is V_OTHER and isinstance(func, ast.Name):
                if func.id in _SCALAR_BUILTINS:
                    return self._scalar_builtin(func.id, node, args)
                if func.id == "enumerate" and len(self._arg_vals) == 1 and self._arg_vals[0].kind in (TENSOR, TENSORS):
                    return _ENUMERATED_TENSORS  # for i, p in enumerate(m.parameters()): p is a tensor
                if func.id == "super" and self._method_class is not None:
                    return Val(SELF, "super()", cls=self._method_class)
                if func.id == "dict" and not node.args and all(kw.arg is not None for kw in node.keywords):
                    return Val(OTHER, value=Keywords(tuple((str(a.keyword), a.is_const and a.value is None)
                                                           for a in args)))  # dict(device=device, ...)
            if callee.name in ("function", "method"):
                self._call_edge(func, recv)
                if isinstance(callee.value, str):  # what it returns is known after the pass
                    self._arguments(df.symbol("fn:" + callee.value), node, args)
                    return Val(SYM, df.extend(df.symbol("fn:" + callee.value), "()"))
            elif callee.name[:1] == "@":  # U.f(x) after `import pkg.utils as U`
                self._edge((callee.name,))
                self._arguments(df.symbol("ref:" + callee.name), node, args)
                return Val(SYM, df.extend(df.symbol("ref:" + callee.name), "()"))
            elif callee.name == "functools.partial" and node.args:  # partial(nn.Conv2d, ...) is still Conv2d
                first = self._quiet_value(node.args[0])
                if first.kind == SYMBOL and not isinstance(node.args[0], ast.Starred):
                    self._report_partial(first.name, node, args)
                    if len(node.args) > 1:
                        return V_OTHER  # a later call's positional arguments bind after these: not the class's
                    if node.keywords and not first.name.rpartition(".")[2][:1].isupper():
                        # partial(nn.init.normal_, std=0.02) held and called later: that call is not the whole
                        # call of the function (its keywords are bound here); the partial is rewritten where it is
                        return V_OTHER
                if first.kind in (SYMBOL, USERCLASS, SYM):
                    return first
            return V_OTHER
        if kind == UNKNOWN:
            if callee.name[:1] == "@":  # helper(x) after `from .ops import helper`
                self._edge((callee.name,))
                self._arguments(df.symbol("ref:" + callee.name), node, args)
                return Val(SYM, df.extend(df.symbol("ref:" + callee.name), "()"))
            elif recv is not None and recv.cls is not None and isinstance(func, ast.Attribute) \
                    and (recv.kind == USERCLASS or recv.cls.external):
                self._edge((f"{recv.cls.name}.{func.attr}",))  # Base.helper(self, x); a method of an imported base
        return V_UNKNOWN

    def _report_partial(self, api: str, node: ast.Call, args: tuple[Arg, ...]) -> None:
        """``partial(nn.BatchNorm2d, momentum=0.01)``: the arguments bound now are the torch API's arguments
        (positional ones from its first parameter on), so the use is reported as a call of the API whose
        callee is partial's first argument; the reference to it that evaluating the arguments reported
        goes (one finding per use)."""
        func = node.args[0]
        func_span = self.pos.span(func)
        for index in range(len(self.calls) - 1, -1, -1):
            if self.calls[index].span == func_span and self.calls[index].kind is CallKind.ATTRIBUTE:
                del self.calls[index]
                break
        else:
            return
        name_span = func_span
        if isinstance(func, ast.Attribute):
            name_span = Span(func_span.end_line, func_span.end_col - len(func.attr), func_span.end_line,
                             func_span.end_col)
        self.calls.append(ApiCall(api=api, span=self.pos.span(node), kind=CallKind.CALL, func_span=func_span,
                                  name_span=name_span, args=args[1:], in_network=self.in_network,
                                  context=self.context))

    def _callback(self, api: str, args: tuple[Arg, ...]) -> None:
        """A function of the project that `api` calls back (``net.apply(init)``, ``x.register_hook(scale)``): what
        the API passes it (the tables' `callbacks`) is recorded as a call of that function, so its parameters
        are typed as for any call (dataflow.py)."""
        callback = self.meta.callbacks.get(api)
        if callback is None:
            return
        for arg, val in zip(args, self._arg_vals):
            if (arg.keyword is None and not arg.starred and arg is args[0]) or arg.keyword == callback.keyword:
                if val.kind == OTHER and val.name in ("function", "method") and isinstance(val.value, str):
                    passed = tuple(df.TENSOR if p == "tensor" else f"I:{p}" for p in callback.passes)
                    self.arguments.append((df.symbol("fn:" + val.value), passed, (), False))
                return

    def _arguments(self, callee: str, node: ast.Call, args: tuple[Arg, ...]) -> None:
        """Record what a call of a project function passes (its parameters' values: dataflow.py)."""
        vals = self._arg_vals
        if not vals:
            return
        positional: list[str] = []
        keywords: list[tuple[str, str]] = []
        more = False
        for arg, val in zip(args, vals):
            if arg.starred:
                more = True
            elif arg.keyword is not None:
                keywords.append((arg.keyword, descriptor(val)))
            elif not more:
                positional.append(descriptor(val))
        self.arguments.append((callee, tuple(positional), tuple(keywords), more))

    def _pend(self, receiver: str, member: str, node: ast.Call, args: tuple[Arg, ...]) -> None:
        """A call whose API depends on what the symbol `receiver` denotes (resolved after the pass)."""
        low = bool(member) and self.imports_torch and member in self.inv.tensor_members \
            and member not in self.meta.ambiguous_methods and not receiver.startswith("$fn:")
        self.report("", node, CallKind.METHOD if member else CallKind.CALL, call=node, args=args)
        self.pending.append(Pending(receiver, member, self.calls.pop(), low))

    def _scalar_builtin(self, name: str, node: ast.Call, args: tuple[Arg, ...]) -> Val:
        """int(t), len(x), range(n), min(a, b): where the resulting Python value comes from."""
        if name == "len":
            if args and args[0].is_tensor:
                return Val(OTHER, tag=ds.DATA if args[0].tag == ds.DYN else ds.STATIC)
            return Val(OTHER, tag=args[0].tag) if args and args[0].tag in (ds.STATIC, ds.DATA) else V_OTHER
        if any(a.is_tensor for a in args):
            if name in ("int", "float", "bool", "complex"):
                self._event(ds.HOST_SYNC, node, name)
            return Val(OTHER, tag=ds.DATA)
        if any(a.tag == ds.DATA for a in args):
            return Val(OTHER, tag=ds.DATA)
        if args and all(a.is_const or a.tag == ds.STATIC for a in args):
            return Val(OTHER, tag=ds.STATIC)
        return V_OTHER

    def _call_edge(self, func: ast.expr, recv: Val | None) -> None:
        """A call of a user function or method: an edge of the call graph (network scope)."""
        if isinstance(func, ast.Name):
            name = func.id
            targets = (f"{self.context}.{name}", name) if self.context else (name,)
        elif isinstance(func, ast.Attribute) and recv is not None and recv.cls is not None:
            targets = (f"{recv.cls.name}.{func.attr}",)
        else:
            return
        self._edge(targets)

    def _edge(self, targets: tuple[str, ...]) -> None:
        # no span: a call edge is never reported, and spans cost time on every user call
        self.events.append(ds.ShapeEvent(ds.CALL, _NO_SPAN, self.in_network, self.context, "", targets))

    # ------------------------------------------------------------------ binding
    def bind(self, target: ast.expr, val: Val, value_node: ast.expr | None = None) -> None:
        if isinstance(target, ast.Name):
            self.bind_name(target.id, val)
        elif isinstance(target, (ast.Tuple, ast.List)):
            elts = target.elts
            if isinstance(value_node, (ast.Tuple, ast.List)) and len(value_node.elts) == len(elts) \
                    and not any(isinstance(e, ast.Starred) for e in elts):
                known, vals = self._sequence
                for index, (elt, sub) in enumerate(zip(elts, value_node.elts)):
                    self.bind(elt, vals[index] if known is value_node else self._quiet_value(sub))
                return
            if val is _TENSOR_PAIR and len(elts) == 2:  # for name, param in m.named_parameters()
                self.bind(elts[0], V_OTHER)
                self.bind(elts[1], V_TENSOR)
                return
            if not any(isinstance(e, ast.Starred) for e in elts):
                if val.kind == TUPLE and len(val.value) == len(elts):
                    for elt, item in zip(elts, val.value):
                        self.bind(elt, item)
                    return
                if val.kind == SYM:  # a, b = helper(x)
                    for index, elt in enumerate(elts):
                        self.bind(elt, Val(SYM, df.extend(val.name, f"[{index}]")))
                    return
            element = V_TENSOR if val.kind in (TENSOR, TENSORS) else V_UNKNOWN
            if val.kind == SYM:
                element = Val(SYM, df.extend(val.name, "[]"))
            if val.tag in (ds.STATIC, ds.DATA, ds.DYN):  # h, w = x.shape[2:]; rows, cols = t.nonzero(as_tuple=True)
                element = Val(element.kind if element.kind == TENSOR else OTHER, tag=val.tag)
            for elt in elts:
                self.bind(elt.value if isinstance(elt, ast.Starred) else elt,
                          V_OTHER if isinstance(elt, ast.Starred) else element)
        elif isinstance(target, ast.Attribute):
            owner = self.ref(target.value, True) if isinstance(target.value, (ast.Name, ast.Attribute)) \
                else self.ev(target.value)
            self._layer_attribute(owner, target, True)
            if owner.kind in (SELF, USEROBJ) and owner.cls is not None:
                old = owner.cls.attrs.get(target.attr)
                if old is None or val.kind not in (UNKNOWN,) and not (val.kind == CONST and val.value is None):
                    owner.cls.attrs[target.attr] = val
            else:
                resolved = self._attr_of(owner, target.attr)
                if resolved.kind == SYMBOL:
                    self.report(resolved.name, target, CallKind.ATTRIBUTE)
        elif isinstance(target, ast.Subscript):
            self.ev(target.value)
            self.ev(target.slice)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, V_OTHER)

    def _quiet_value(self, node: ast.expr) -> Val:
        """The value of an already evaluated expression, without reporting it again."""
        if isinstance(node, (ast.Name, ast.Attribute)):
            val = self.ref(node)
            return val if val.kind != BOUND else V_OTHER
        if isinstance(node, ast.Constant):
            return Val(CONST, value=node.value)
        return V_UNKNOWN

    # ------------------------------------------------------------------ statements
    def block(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            handler = self._STMT.get(type(stmt))
            if handler is not None:
                handler(self, stmt)
            else:
                self._st_generic(stmt)

    def _st_generic(self, node: ast.stmt) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.ev(child)
            elif isinstance(child, ast.stmt):
                self.block([child])
            elif isinstance(child, ast.match_case):
                self._match_case(child)

    def _match_case(self, case: ast.match_case) -> None:
        for sub in ast.walk(case.pattern):
            name = getattr(sub, "name", None)
            if isinstance(name, str):
                self.bind_name(name, V_UNKNOWN)
        if case.guard is not None:
            self.ev(case.guard)
        self.block(case.body)

    def _st_import(self, node: ast.Import) -> None:
        for alias in node.names:
            top = alias.name.split(".")[0]
            is_torch = top in self.roots  # torch, or a library the tables map (torchvision, ...)
            self.imports_torch |= top == "torch"
            if is_torch:
                self.bind_name(alias.asname or top, Val(MODULE, alias.name if alias.asname else top))
            elif top in _FOREIGN_MODULES:
                self.bind_name(alias.asname or top, Val(OTHER, "functools") if alias.name == "functools" else V_OTHER)
            else:  # perhaps a module of the scanned project: remember the reference for the network scope
                self._bind_import(alias.asname or top, "@" + (alias.name if alias.asname else top), OTHER)

    def _st_importfrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        is_torch = node.level == 0 and module.partition(".")[0] in self.roots
        self.imports_torch |= is_torch and module.partition(".")[0] == "torch"
        for alias in node.names:
            if alias.name == "*":
                if is_torch:
                    self.scope.module().stars.append(module)
                continue
            local = alias.asname or alias.name
            if not is_torch:  # a class, function or value of another module: not known
                if node.level == 0 and module == "functools" and alias.name == "partial":
                    self.bind_name(local, Val(OTHER, "functools.partial"))
                elif node.level == 0 and module.partition(".")[0] in _FOREIGN_MODULES:
                    self.bind_name(local, V_UNKNOWN)
                else:  # perhaps of the scanned project: keep the reference ("@.ops.helper") for the network scope
                    self._bind_import(local, "@" + "." * node.level + (module + "." if module else "") + alias.name,
                                      UNKNOWN)
                continue
            qual = f"{module}.{alias.name}"
            self.bind_name(local, Val(MODULE, qual) if qual in self.modules else Val(SYMBOL, self.canonical(qual)))

    def _bind_import(self, local: str, ref: str, kind: ValKind) -> None:
        self.bind_name(local, Val(kind, ref))
        if self.scope.parent is None:
            self.imports.append((local, ref))

    def _st_assign(self, node: ast.Assign) -> None:
        value = node.value
        if isinstance(value, (ast.Name, ast.Attribute)) and all(isinstance(t, ast.Name) for t in node.targets):
            val = self.ref(value)  # an alias: F = torch.nn.functional, act = nn.ReLU
            if val.kind in (BOUND, SYMBOL):
                # A torch object held by a variable is reported (and rewritten) where it is written;
                # the variable's uses are reported too, but a fix never replaces the variable.
                val = self._read(val, value)
        else:
            val = self.ev(value)
        for target in node.targets:
            self.bind(target, val, value)

    def _st_annassign(self, node: ast.AnnAssign) -> None:
        self.ev_type(node.annotation)
        val = self.ev(node.value) if node.value is not None else V_UNKNOWN
        tensor = self._is_tensor_annotation(node.annotation)
        unknown = val.kind in (UNKNOWN, OTHER) or (val.kind == CONST and val.value is None)
        if tensor and unknown:
            val = V_TENSOR
        elif not tensor and (unknown or val.kind == TENSOR) \
                and (typed := self._annotated_instance(node.annotation)) is not None and typed.kind != INSTANCE:
            val = typed  # outputs: BaseModelOutput = self.encoder(x): the annotation says more
        if self.scope.kind == "class" and self._class_stack and isinstance(node.target, ast.Name) and tensor:
            self._class_stack[-1].attrs[node.target.id] = V_TENSOR  # a dataclass field: hidden: torch.Tensor
        elif node.value is not None or tensor:
            self.bind(node.target, val, node.value)

    def _st_augassign(self, node: ast.AugAssign) -> None:
        val = self.ev(node.value)
        if isinstance(node.target, ast.Name):
            old = self.lookup(node.target.id)
            self.bind_name(node.target.id, self._combine(old, node.op, val))
        elif isinstance(node.target, ast.Subscript):  # x[mask] += 1 updates in place: the shape is kept
            self.ev(node.target.value)
            self.ev(node.target.slice)
        else:
            self.ev(node.target)

    def _st_expr(self, node: ast.Expr) -> None:
        self.ev(node.value)

    def _st_return(self, node: ast.Return) -> None:
        val = self.ev(node.value) if node.value is not None else V_NONE
        if self.context:
            self.returns.setdefault(self.context, []).append(descriptor(val))

    def _ev_yield(self, node: ast.Yield | ast.YieldFrom) -> Val:
        if node.value is not None:
            self.ev(node.value)
        self.generators.add(self.context)
        return V_UNKNOWN

    def _st_if(self, node: ast.If) -> None:
        self._condition(node.test)
        narrowed = self._narrowed(node.test)
        if narrowed is None:
            self._branch(node.body)
        else:  # `if isinstance(m, nn.Linear):` m is that layer in the branch (m.bias.data.add_(1) a tensor method)
            name, val = narrowed
            scope = self.scope.module() if name in self.scope.global_names else self.scope
            had, old = name in scope.names, scope.names.get(name)
            scope.names[name] = val
            first, last = self.pos.span(node.body[0]), self.pos.span(node.body[-1])
            self.narrowed.append(Span(first.start_line, first.start_col, last.end_line, last.end_col))
            self._branch(node.body)
            if scope.names.get(name) is val:
                if had and old is not None:
                    scope.names[name] = old
                else:
                    del scope.names[name]
        self._branch(node.orelse)

    def _narrowed(self, test: ast.expr) -> tuple[str, Val] | None:
        """(NAME, a tensor or an instance of the torch class) for a test ``isinstance(NAME, C)`` (alone or a term
        of an ``and``) where C is a torch class, a tuple of tensor classes or of torch layer classes (their
        tensors share the names weight, bias, ...), and NAME is not known to be something else."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            return next((found for term in test.values if (found := self._narrowed(term)) is not None), None)
        if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"
                and len(test.args) == 2 and not test.keywords and isinstance(test.args[0], ast.Name)
                and self.lookup("isinstance") is V_OTHER):
            return None
        name, kinds = test.args[0].id, test.args[1]
        current = self.lookup(name)
        if not (current.kind in (UNKNOWN, SYM) or current.kind == INSTANCE and current.name == GENERIC_MODULE):
            return None
        items = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
        classes = [self.ref(item) if isinstance(item, (ast.Name, ast.Attribute)) else V_UNKNOWN for item in items]
        if not classes or any(c.kind != SYMBOL for c in classes):
            return None
        results = [self.result_of(c.name) for c in classes]
        if all(r.kind == TENSOR for r in results):
            return name, V_TENSOR  # isinstance(x, torch.Tensor)
        if any(r.kind != INSTANCE for r in results) or len({c.name for c in classes}) > 1 \
                and not all(c.name.startswith(LAYER_NAMESPACE) for c in classes):
            return None
        names = tuple(dict.fromkeys(r.name for r in results))
        if len(names) > 1:  # one of several layers: the first for its tensors, every class for other attributes
            return name, Val(INSTANCE, names[0], value=names)
        return name, results[0]

    def _branch(self, body: list[ast.stmt]) -> None:
        """A conditional block. A name it rebinds to an unknown value keeps what it was known to be
        before (`x = helper(x)` under an `if`, a registry's function replacing a default)."""
        if not body:
            return
        names = self.scope.names
        before = dict(names) if self.scope.kind == "function" else None
        self.block(body)
        if before is None:
            return
        for name, old in before.items():
            new = names.get(name)
            if new is not None and new.kind == UNKNOWN and not new.tag and new is not old \
                    and old.kind in (TENSOR, TENSORS, SYM, INSTANCE, USEROBJ) and not old.tag:
                names[name] = old

    def _st_assert(self, node: ast.Assert) -> None:
        val = self.ev(node.test)
        if node.msg is not None:
            self.ev(node.msg)
        if val.kind == TENSOR and val.tag != ds.GUESS and not isinstance(node.test, ast.Name):
            self._event(ds.ASSERT, node.test, node.test)  # the check reads tensor values on the host

    def _st_while(self, node: ast.While) -> None:
        self._condition(node.test)
        self.block(node.body)
        self.block(node.orelse)

    def _st_for(self, node: ast.For | ast.AsyncFor) -> None:
        iterable = self.ev(node.iter)
        if iterable.tag == ds.DATA and isinstance(node.iter, ast.Call) and isinstance(node.iter.func, ast.Name) \
                and node.iter.func.id == "range":
            self._event(ds.LOOP, node.iter, node.iter)  # for i in range(n) with n read from tensor values
        self.bind(node.target, self._element_of(iterable))
        self.block(node.body)
        self.block(node.orelse)

    def _st_with(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            self.ev(item.context_expr)
            if item.optional_vars is not None:
                self.bind(item.optional_vars, V_UNKNOWN)
        self.block(node.body)

    def _st_try(self, node: ast.Try) -> None:
        self.block(node.body)
        for handler in node.handlers:
            if handler.type is not None:
                self.ev_type(handler.type)
            if handler.name:
                self.bind_name(handler.name, V_OTHER)
            self.block(handler.body)
        self.block(node.orelse)
        self.block(node.finalbody)

    def _st_global(self, node: ast.Global | ast.Nonlocal) -> None:
        if isinstance(node, ast.Global):
            self.scope.global_names.update(node.names)

    def _is_tensor_annotation(self, node: ast.expr | None) -> bool:
        if node is None:
            return False
        if isinstance(node, (ast.Name, ast.Attribute)):
            val = self.ref(node)
            return val.kind == SYMBOL and val.name in self.meta.tensor_classes
        if isinstance(node, ast.Subscript):  # Optional[Tensor], Union[Tensor, None]
            inner = node.slice
            elts = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            return any(self._is_tensor_annotation(e) for e in elts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):  # Tensor | None
            return self._is_tensor_annotation(node.left) or self._is_tensor_annotation(node.right)
        return False

    def _class_value(self, val: Val) -> Val | None:
        """`val` when it is a class (a torch class, a class of the file): a layer passed as a value."""
        if val.kind == SYMBOL and val.name.rpartition(".")[2][:1].isupper():
            return val
        if val.kind == USERCLASS:
            return val
        return None

    def _partial_class(self, node: ast.Call) -> Val | None:
        """The torch class of `partial(nn.LayerNorm, eps=1e-6)` (already evaluated, not reported again)."""
        if len(node.args) != 1 or not isinstance(node.func, (ast.Name, ast.Attribute)):
            return None  # (positional arguments bound here would shift the later call's)
        func = self.ref(node.func)
        if func.kind != OTHER or func.name != "functools.partial":
            return None
        val = self._class_value(self._quiet_value(node.args[0]))
        return val if val is not None and val.kind == SYMBOL else None

    def _annotated_instance(self, node: ast.expr | None) -> Val | None:
        """The value of a parameter annotated with a class of the project (attn: Attention)."""
        if node is None:
            return None
        if isinstance(node, ast.Subscript) and isinstance(node.value, (ast.Name, ast.Attribute)) \
                and getattr(node.value, "id", getattr(node.value, "attr", "")) == "Optional":
            return self._annotated_instance(node.slice)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr) and isinstance(node.right, ast.Constant) \
                and node.right.value is None:
            return self._annotated_instance(node.left)
        if not isinstance(node, (ast.Name, ast.Attribute)):
            return None
        val = self.ref(node)
        if val.kind == USERCLASS and val.cls is not None:
            return Val(USEROBJ, val.name, cls=val.cls)
        if val.kind == UNKNOWN and val.name[:1] == "@":
            return Val(SYM, df.extend(df.symbol("ref:" + val.name), "()"))
        if val.kind == SYMBOL and val.name.rpartition(".")[2][:1].isupper() and val.name.startswith(LAYER_NAMESPACE):
            return Val(INSTANCE, val.name)  # layer: nn.Linear
        return None

    def _annotation_descriptor(self, node: ast.expr) -> str:
        """What a return annotation says: T (a tensor), TS (a tuple of tensors), O:/$ (a project class)."""
        if isinstance(node, ast.Subscript) and isinstance(node.value, (ast.Name, ast.Attribute)) \
                and getattr(node.value, "id", getattr(node.value, "attr", "")) in ("tuple", "Tuple", "list", "List"):
            inner = node.slice
            elts = [e for e in (inner.elts if isinstance(inner, ast.Tuple) else [inner])
                    if not (isinstance(e, ast.Constant) and e.value is Ellipsis)]
            if elts and all(self._is_tensor_annotation(e) for e in elts):
                return df.TENSORS
            return ""
        if self._is_tensor_annotation(node):
            return df.TENSOR
        typed = self._annotated_instance(node)
        return descriptor(typed) if typed is not None else ""

    def _st_functiondef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self.ev(decorator)
        args = node.args
        for default in args.defaults + [d for d in args.kw_defaults if d is not None]:
            self.ev(default)
        for arg in _all_args(args):
            if arg.annotation is not None:
                self.ev_type(arg.annotation)
        cls = None
        if self.scope.kind == "class":
            cls = self._class_stack[-1] if self._class_stack else None
        context = f"{cls.name}.{node.name}" if cls else (f"{self.context}.{node.name}" if self.context else node.name)
        if node.returns is not None:
            self.ev_type(node.returns)
            declared = self._annotation_descriptor(node.returns)
            if declared:
                self.returns_declared[context] = declared
        self.bind_name(node.name, Val(OTHER, name="function", value=context))
        self.deferred.append((node, self.scope, cls))

    def _function_body(self, node: ast.FunctionDef | ast.AsyncFunctionDef, parent: Scope, cls: ClassInfo | None) -> None:
        saved_scope, saved_context, saved_network = self.scope, self.context, self.in_network
        saved_class = self._method_class
        self._method_class = cls if cls is not None else saved_class
        self.scope = Scope("function", parent)
        self.context = f"{cls.name}.{node.name}" if cls else node.name
        if cls is None and saved_context:
            self.context = f"{saved_context}.{node.name}"
        is_forward = cls is not None and (cls.is_module or cls.torch_base == "torch.autograd.Function") \
            and node.name in ("forward", "backward")
        self.in_network = saved_network or (cls is not None and cls.is_module and node.name == "forward")
        decorators = {d.id if isinstance(d, ast.Name) else getattr(d, "attr", "") for d in node.decorator_list}
        args = node.args
        positional = args.posonlyargs + args.args
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        params = list(zip(positional, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))
        proven = _proven_tensors(node, self.meta.proof_methods) \
            if self.imports_torch and self._may_prove(node) else set()
        for index, (arg, default) in enumerate(params):
            if index == 0 and cls is not None and "staticmethod" not in decorators and arg in positional:
                if "classmethod" in decorators:
                    self.scope.names[arg.arg] = Val(USERCLASS, cls.name, cls=cls)
                else:
                    self.scope.names[arg.arg] = Val(SELF, cls.name, cls=cls)
                continue
            if self._is_tensor_annotation(arg.annotation):
                val = V_TENSOR
            elif (typed := self._annotated_instance(arg.annotation)) is not None:
                val = typed  # attn: Attention
            elif arg.arg in proven:
                val = V_TENSOR  # def fill(w, a, b): w.uniform_(a, b): only a tensor has the method
            elif default is not None and isinstance(default, (ast.Name, ast.Attribute)) \
                    and (layer := self._class_value(self.ref(default))) is not None:
                val = layer  # norm_layer=nn.BatchNorm2d: a class passed as a value
            elif isinstance(default, ast.Call) and (layer := self._partial_class(default)) is not None:
                val = layer  # norm_layer=partial(nn.LayerNorm, eps=1e-6): the class, its arguments bound
            elif is_forward and isinstance(default, ast.Constant) and default.value is not None:
                val = Val(UNKNOWN, tag=ds.STATIC)  # forward(self, x, return_attn=False): a flag, not a tensor
            elif is_forward and not (index == 1 and cls is not None and cls.torch_base == "torch.autograd.Function"):
                val = V_TENSOR
            elif node.name == "__init__" and isinstance(default, ast.Constant):
                val = Val(CONST, value=default.value)
            elif node.name == "__init__":
                val = Val(UNKNOWN, tag=ds.STATIC)  # configuration: a constant of the compiled graph
            elif isinstance(default, ast.Constant) and default.value is not None:
                val = V_UNKNOWN  # an option (unsqueeze_dim=1), not a tensor
            else:  # what the callers pass, known after the pass (dataflow.py)
                position = index - (1 if cls is not None and "staticmethod" not in decorators else 0) \
                    if arg in positional else -1
                val = Val(SYM, df.symbol(f"param:{self.context}:{position}:{arg.arg}"))
            self.scope.names[arg.arg] = val
        for extra in (args.vararg, args.kwarg):
            if extra is not None:
                self.scope.names[extra.arg] = V_OTHER
        self._run_scope(node.body)
        self.scope, self.context, self.in_network = saved_scope, saved_context, saved_network
        self._method_class = saved_class

    def _may_prove(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """Whether `node`'s body may call a proof method (`_proven_tensors`): a line of the body names one. A
        method called is named in the text as written (an ASCII text's identifiers are their own spelling), so a
        body with no such line has no such call, and its walk is left out; other texts are always walked."""
        if self._proof_lines is None:
            self._proof_lines = _proof_lines(self.pos, self.meta.proof_methods)
        first = node.body[0].lineno
        return any_line_between(self._proof_lines, first, node.end_lineno or first)

    def _st_classdef(self, node: ast.ClassDef) -> None:
        for decorator in node.decorator_list:
            self.ev(decorator)
        cls = ClassInfo(node.name)
        for base in node.bases:
            val = self.ev_type(base)
            if val.kind == SYMBOL and val.name.startswith("torch."):
                cls.torch_base = cls.torch_base or val.name
                if val.name == GENERIC_MODULE or (val.name.startswith(LAYER_NAMESPACE) and val.name[9:10].isupper()):
                    cls.is_module = True
            elif val.kind == USERCLASS and val.cls is not None:
                cls.is_module |= val.cls.is_module
                cls.torch_base = cls.torch_base or val.cls.torch_base
                cls.attrs.update(val.cls.attrs)
                cls.methods |= val.cls.methods
                cls.inherited |= val.cls.methods
                cls.bases.append(val.cls.name)
                cls.external |= val.cls.external
            elif val.name[:1] == "@":  # a class imported from another module of the project
                cls.bases.append(val.name)
                cls.external = True
        for keyword in node.keywords:
            self.ev(keyword.value)
        cls.own = tuple(s.name for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)))
        cls.methods.update(cls.own)
        self.classes.append(cls)
        self.bind_name(node.name, Val(USERCLASS, node.name, cls=cls))
        saved = self.scope
        self.scope = Scope("class", saved)
        self._class_stack.append(cls)
        self.block(node.body)
        self._class_stack.pop()
        self.scope = saved


    # Dispatch by node type: plain functions, so that a Resolver is no cycle (bound methods kept in a
    # dict of its own would make one) and is freed with its tree as soon as the analysis drops it.
    _EV: ClassVar[dict[type, Callable[[Resolver, Any], Val]]] = {
        ast.Name: _ev_name,
        ast.Attribute: _ev_attribute,
        ast.Call: _ev_call,
        ast.Constant: _ev_constant,
        ast.BinOp: _ev_binop,
        ast.UnaryOp: _ev_unaryop,
        ast.Compare: _ev_compare,
        ast.BoolOp: _ev_boolop,
        ast.Subscript: _ev_subscript,
        ast.Tuple: _ev_sequence,
        ast.List: _ev_sequence,
        ast.Set: _ev_sequence,
        ast.Dict: _ev_dict,
        ast.IfExp: _ev_ifexp,
        ast.Lambda: _ev_lambda,
        ast.ListComp: _ev_comprehension,
        ast.SetComp: _ev_comprehension,
        ast.GeneratorExp: _ev_comprehension,
        ast.DictComp: _ev_comprehension,
        ast.NamedExpr: _ev_namedexpr,
        ast.Starred: _ev_starred,
        ast.Yield: _ev_yield,
        ast.YieldFrom: _ev_yield,
    }
    _STMT: ClassVar[dict[type, Callable[[Resolver, Any], None]]] = {
        ast.Import: _st_import,
        ast.ImportFrom: _st_importfrom,
        ast.Assign: _st_assign,
        ast.AnnAssign: _st_annassign,
        ast.AugAssign: _st_augassign,
        ast.Expr: _st_expr,
        ast.Return: _st_return,
        ast.FunctionDef: _st_functiondef,
        ast.AsyncFunctionDef: _st_functiondef,
        ast.ClassDef: _st_classdef,
        ast.If: _st_if,
        ast.Assert: _st_assert,
        ast.While: _st_while,
        ast.For: _st_for,
        ast.AsyncFor: _st_for,
        ast.With: _st_with,
        ast.AsyncWith: _st_with,
        ast.Try: _st_try,
        ast.Global: _st_global,
        ast.Nonlocal: _st_global,
    }
_FLOWING = frozenset({TENSOR, TENSORS, SYM, INSTANCE, USEROBJ, SYMBOL, USERCLASS})
_NAMED_TENSORS = Val(OTHER, "named_tensors")  # what m.named_parameters() yields: (name, tensor) pairs
_TENSOR_PAIR = Val(OTHER, "tensor_pair")
_ENUMERATED_TENSORS = Val(OTHER, "enumerated_tensors")  # enumerate(tensors): (index, tensor) pairs


def _module_method_result(name: str, module: Val, self_methods: frozenset[str]) -> Val:
    """What calling nn.Module method `name` on `module` returns (`self_methods`: those returning the module)."""
    if name in self_methods:
        return module
    if name in ("parameters", "buffers"):
        return V_TENSORS
    if name in ("named_parameters", "named_buffers"):
        return _NAMED_TENSORS
    return V_OTHER


def descriptor(val: Val) -> str:
    """A value as a dataflow descriptor (plain data for the facts of other files)."""
    kind = val.kind
    if kind == TENSOR:
        return df.TENSOR
    if kind == TENSORS:
        return df.TENSORS
    if kind == SYM:
        return val.name
    if kind == SYMBOL:
        return "S:" + val.name
    if kind == INSTANCE:
        return "I:" + val.name
    if kind == USERCLASS and val.cls is not None:
        return "C:" + val.cls.name
    if kind in (USEROBJ, SELF) and val.cls is not None and val.name != "super()":
        return "O:" + val.cls.name
    if kind == CONST and val.value is None:
        return df.NONE
    if kind == TUPLE:
        items = [descriptor(v) for v in val.value]
        return "(" + ";".join(d if d[:1] != "(" else df.UNKNOWN for d in items) + ")"
    if kind in (OTHER, UNKNOWN) and val.name[:1] == "@":
        return df.symbol("ref:" + val.name)
    if kind == OTHER and val.name in ("function", "method") and isinstance(val.value, str):
        return df.symbol("fn:" + val.value)
    if kind in (OTHER, CONST):
        return df.OTHER
    return df.UNKNOWN


def named_call(item: Pending, api: str | None, roots: frozenset[str]) -> ApiCall | None:
    """The pending call with its API, once known: a torch API, else the low-confidence Tensor method the
    receiver's method name suggests, else nothing."""
    if api is not None and api.partition(".")[0] in roots:
        return replace(item.call, api=api)
    if item.low:
        return replace(item.call, api=f"torch.Tensor.{item.member}", confidence=Confidence.LOW)
    return None


class LocalFacts:
    """The `dataflow.Facts` of one file alone (file 0): what needs another file is `K_EXTERNAL`.
    `callers_elsewhere`: a parameter of a function the file never calls is what other files pass (else
    unknown: the facts a file exports do not depend on its callers)."""

    def __init__(self, resolver: Resolver, callers_elsewhere: bool = True) -> None:
        self.resolver = resolver
        self.callers_elsewhere = callers_elsewhere
        self.classes = {c.name: c for c in resolver.classes}
        self._sites: dict[str, list[df.CallSite]] | None = None
        self.contexts = set(resolver.returns) | set(resolver.returns_declared) | {
            c.context for c in resolver.calls if c.context} | {e.context for e in resolver.events if e.context}

    def returns(self, file: int, context: str) -> list[str] | None:
        resolver = self.resolver
        if context in resolver.generators:
            return [df.OTHER]
        declared = resolver.returns_declared.get(context)
        if declared:
            return [declared]
        found = resolver.returns.get(context)
        if found is not None:
            return found
        return [df.NONE] if context in self.contexts or self._defines(context) else None

    def _defines(self, context: str) -> bool:
        owner, dot, method = context.rpartition(".")
        cls = self.classes.get(owner)
        return bool(dot) and cls is not None and method in cls.own

    def _chain(self, cls: str) -> tuple[list[ClassInfo], bool]:
        """The class and its bases in the file (depth first), and whether a base lies in another file."""
        out: list[ClassInfo] = []
        todo, external = [cls], False
        while todo:
            name = todo.pop(0)
            info = self.classes.get(name)
            if info is None or info in out:
                external |= name[:1] == "@"
                continue
            out.append(info)
            todo[:0] = info.bases
        return out, external

    def attribute(self, file: int, cls: str, name: str) -> df.Found | df.Plain | None:
        chain, external = self._chain(cls)
        for info in chain:
            val = info.attrs.get(name)
            if val is not None:
                return 0, descriptor(val)
        return df.K_EXTERNAL if external else None

    def method(self, file: int, cls: str, name: str) -> df.Found | df.Plain | None:
        chain, external = self._chain(cls)
        for info in chain:
            if name in info.own:
                return 0, f"{info.name}.{name}"
        return df.K_EXTERNAL if external else None

    def is_module(self, file: int, cls: str) -> bool | None:
        info = self.classes.get(cls)
        if info is None:
            return False
        if info.is_module:
            return True
        return None if info.external else False

    def ref(self, file: int, ref: str) -> df.Kind:
        return df.K_EXTERNAL

    def arguments(self, file: int, context: str) -> list[df.CallSite] | df.Plain:
        if self._sites is None:
            self._sites = {}
            for callee, positional, keywords, more in self.resolver.arguments:
                found = self._callee(callee)
                if found is not None:
                    self._sites.setdefault(found, []).append((0, positional, keywords, more))
        sites = self._sites.get(context)
        if sites:
            return sites
        return df.K_EXTERNAL if self.callers_elsewhere else df.K_UNKNOWN  # no call here: perhaps in other files

    def _callee(self, callee: str) -> str | None:
        if not callee.startswith("$fn:"):
            return None
        kind = self.function(0, callee[4:])
        return kind.context if isinstance(kind, df.Function) else None

    def function(self, file: int, context: str) -> df.Kind:
        owner, dot, method = context.rpartition(".")
        if dot and owner in self.classes:
            found = self.method(file, owner, method)
            if isinstance(found, tuple):
                return df.Function(0, found[1])
            return df.K_EXTERNAL if found is df.K_EXTERNAL else df.K_UNKNOWN
        if context in self.classes:
            return df.UserClass(0, context)
        return df.Function(0, context)


# the end of an identifier that ends in an underscore, and the identifier that ends there
_UNDERSCORE_END = re.compile(r"_\b")
_IDENTIFIER_TAIL = re.compile(r"\w+\Z")


def _proof_lines(positions: SourceText, proof: frozenset[str]) -> list[int]:
    """The lines (ascending) of the text that name a method of `proof`; for a text whose identifiers may be
    spelt otherwise than ast names them (a non-ASCII text: Python normalises identifiers) or a proof method that
    does not end in an underscore, every line."""
    text = positions.text
    if not positions.ascii or not all(name.endswith("_") for name in proof):
        return list(range(1, len(positions) + 1))
    longest = max(map(len, proof), default=0)
    lines: list[int] = []
    for match in _UNDERSCORE_END.finditer(text):
        end = match.end()
        tail = _IDENTIFIER_TAIL.search(text, max(end - longest - 1, 0), end)
        if tail is not None and tail.group() in proof:
            line = positions.position(end)[0]
            if not lines or lines[-1] != line:
                lines.append(line)
    return lines


def _proven_tensors(node: ast.FunctionDef | ast.AsyncFunctionDef, proof: frozenset[str]) -> set[str]:
    """The parameters of `node` its body calls a method of `proof` on (one only a tensor has) and never binds
    again, in any nested scope either (so every use of the name is the value passed)."""
    called: set[str] = set()
    bound: set[str] = set()
    for child in ast.walk(ast.Module(body=node.body, type_ignores=[])):
        if isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute) \
                and isinstance(child.func.value, ast.Name) and child.func.attr in proof:
            called.add(child.func.value.id)
        elif isinstance(child, ast.Name) and not isinstance(child.ctx, ast.Load):
            bound.add(child.id)
        elif isinstance(child, ast.arg):
            bound.add(child.arg)
        elif isinstance(child, (ast.Global, ast.Nonlocal)):
            bound.update(child.names)
    return {arg.arg for arg in _all_args(node.args)} & called - bound


def _all_args(args: ast.arguments) -> list[ast.arg]:
    out = args.posonlyargs + args.args + args.kwonlyargs
    if args.vararg is not None:
        out.append(args.vararg)
    if args.kwarg is not None:
        out.append(args.kwarg)
    return out


@dataclass(frozen=True)
class DataflowFacts:
    """The file's data-flow facts that other files may need (the `ScopeFacts` fields of the same names)."""

    returns: tuple[tuple[str, tuple[str, ...]], ...] = ()  # function context -> descriptors of what it returns
    attrs: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()  # class -> (attribute, descriptor)
    values: tuple[tuple[str, str], ...] = ()  # module-level name -> descriptor
    arguments: tuple[tuple[str, tuple[str, ...], tuple[tuple[str, str], ...], bool], ...] = ()  # calls others decide

    def empty(self) -> bool:
        return not (self.returns or self.attrs or self.values or self.arguments)


def _exported_facts(resolver: Resolver) -> DataflowFacts:
    """The file's data-flow facts that other files may need (plain data): each resolved as far as the
    file alone allows, and left out when it is nothing torch."""
    facts = LocalFacts(resolver, callers_elsewhere=False)
    evaluator = df.Evaluator(facts, resolver.table)

    def useful(descs: Iterable[str]) -> tuple[str, ...]:
        out = []
        for desc in dict.fromkeys(descs):
            kept = df.exportable(evaluator, desc)
            if kept is None:
                return ()
            out.append(kept)
        return tuple(d for d in out if d != df.NONE)

    returns = []
    for context in sorted(set(resolver.returns) | set(resolver.returns_declared)):
        descs = useful(facts.returns(0, context) or [])
        if descs:
            returns.append((context, descs))
    attrs = []
    for cls in resolver.classes:
        kept = tuple((name, d[0]) for name, val in sorted(cls.attrs.items()) if (d := useful([descriptor(val)])))
        if kept:
            attrs.append((cls.name, kept))
    values = tuple((name, d[0]) for name, val in sorted(resolver.scope.module().names.items())
                   if val.kind in (SYMBOL, INSTANCE, SYM, TENSOR) and (d := useful([descriptor(val)])))
    arguments = tuple(site for site in resolver.arguments if facts._callee(site[0]) is None
                      or facts.function(0, site[0][4:]) is df.K_EXTERNAL)
    return DataflowFacts(tuple(returns), tuple(attrs), values, arguments)


@dataclass(frozen=True)
class ModuleFacts:
    """What the resolver found in one module, read-only: its `ApiCall`s, the dynamic-shape facts
    (`ShapeEvent`s), its classes (for the network scope across bases), its module-level project imports
    ((local name, "@" reference)), the method calls only other files can decide (project_graph.py) and
    the data-flow facts other files may need."""

    calls: tuple[ApiCall, ...]
    events: tuple[ds.ShapeEvent, ...]
    classes: tuple[ClassInfo, ...]
    imports: tuple[tuple[str, str], ...]
    exported: tuple[Pending, ...]
    dataflow: DataflowFacts
    layer_calls: tuple[ApiCall, ...] = ()  # torch layer instances called with keywords (the layer's API)
    narrowed: tuple[Span, ...] = ()  # the branches where an `isinstance` test made a name a torch value
    layer_attributes: tuple[LayerAttribute, ...] = ()  # layers' attributes MindSpore names otherwise or lacks


_UNPARSE_LIMIT = 400  # characters of source past which a quoted expression is cut from the source instead
_CHAIN_LINKS = (ast.Call, ast.Subscript, ast.Attribute)
_LONG_CHAIN = 50  # links below an expression past which its chain is evaluated bottom-up


def _chain_links(node: ast.expr) -> list[ast.expr]:
    """The expressions below `node` that evaluating it evaluates first, with `ev`, before anything
    else: a call's receiver or callee, a subscript's or attribute's value (attribute runs are resolved
    by `ref` without `ev`, so only their base is a link), then the same below each of them; outermost
    first."""
    links: list[ast.expr] = []
    parent: ast.expr = node
    while True:
        if isinstance(parent, ast.Call):
            func = parent.func
            if isinstance(func, ast.Name):
                return links
            child = func.value if isinstance(func, ast.Attribute) else func
            by_ref = isinstance(func, ast.Attribute)
        elif isinstance(parent, (ast.Subscript, ast.Attribute)):
            child = parent.value
            by_ref = isinstance(parent, ast.Attribute)
        else:
            return links
        while by_ref and isinstance(child, ast.Attribute):  # an attribute run: `ref` walks it in a loop
            child = child.value
        if isinstance(child, ast.Name) or not isinstance(child, _CHAIN_LINKS):
            if not isinstance(child, ast.Name):
                links.append(child)  # evaluated by `ev` before the rest: the chain's first link
            return links
        links.append(child)
        parent = child


def resolve(tree: ast.Module, table: MappingTable, positions: SourceText) -> list[ApiCall]:
    return Resolver(table, positions).run(tree)


def resolve_with_events(tree: ast.Module, table: MappingTable,
                        positions: SourceText) -> tuple[list[ApiCall], list[ds.ShapeEvent]]:
    """The `ApiCall`s and the dynamic-shape facts (`ShapeEvent`s) of one module."""
    resolver = Resolver(table, positions)
    return resolver.run(tree), resolver.events


def resolve_module(tree: ast.Module, table: MappingTable, positions: SourceText) -> ModuleFacts:
    """Run the resolver over a module and hand back its facts (once per shared tree: `syntax.remembered`)."""
    return syntax.remembered(("resolve", id(tree), id(table), positions.text), (tree, table),
                             lambda: _resolve_module(tree, table, positions))


def _resolve_module(tree: ast.Module, table: MappingTable, positions: SourceText) -> ModuleFacts:
    resolver = Resolver(table, positions)
    resolver.run(tree)
    return ModuleFacts(tuple(resolver.calls), tuple(resolver.events), tuple(resolver.classes),
                       tuple(resolver.imports), tuple(resolver.exported), _exported_facts(resolver),
                       tuple(resolver.layer_calls), tuple(resolver.narrowed), tuple(resolver.layer_attributes))
