"""Values that flow between functions, classes and files: descriptors, and what they resolve to.

The resolver (resolve.py) walks one file once. Where a value comes from something it cannot see yet
(a function whose body runs later, a helper in another file, an attribute set by a base class in
another file), it keeps a *symbol*: a descriptor naming where the value comes from and what was done
to it. A method called on such a value is kept *pending* with its receiver's symbol. At the end of
the file the symbols that the file's own facts decide are resolved (`LocalFacts` in resolve.py); the
rest travel with the file's scope facts to the project pass (project_graph.py), which resolves them
with the facts of the other files. Everything here is plain strings and tuples, so facts serialise as
they are.

A descriptor (str):

- ``T`` a tensor; ``TS`` a tuple or list of tensors; ``N`` None; ``X`` not torch; ``?`` unknown;
- ``S:qualname`` a torch API object (a class such as ``torch.nn.GELU``, a function);
- ``I:qualname`` an instance of a torch class (``I:torch.nn.Conv2d``);
- ``C:Name`` / ``O:Name`` a class of the file / an instance of it;
- ``(d;d;...)`` a tuple of such descriptors (``return out, weights``);
- ``$root|op|op...`` a symbol. Roots: ``ref:@.mod.name`` (an imported name, as the resolver writes
  project imports), ``fn:context`` (a function of the file), ``self:Cls`` (an instance of a class of the
  file whose facts are partly elsewhere). Ops: ``.name`` (attribute), ``()`` (call), ``[]`` (index),
  ``[2]`` (a constant index, as ``a, b = helper(x)`` unpacks).

What a descriptor denotes is a `Kind`: one of the typed values below (the descriptor kinds above, plus
function values, bound members, a module-level value of another file and "depends on another file", only
while a file is resolved alone). The evaluator dispatches on them with `match`, so mypy names a kind a
dispatch leaves out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Protocol, assert_never

from .mappings import MappingTable
from .model import Returns

TENSOR, TENSORS, NONE, OTHER, UNKNOWN = "T", "TS", "N", "X", "?"

# A call of a function: (file, positional argument descriptors, keyword ones, whether *args/**kwargs pass more)
CallSite = tuple[int, tuple[str, ...], tuple[tuple[str, str], ...], bool]


class Plain(Enum):
    """A kind that carries nothing more than what it is."""

    TENSOR = TENSOR
    TENSORS = TENSORS
    NONE = NONE
    OTHER = OTHER
    UNKNOWN = UNKNOWN
    EXTERNAL = "E"  # needs another file's facts


K_TENSOR, K_TENSORS, K_NONE = Plain.TENSOR, Plain.TENSORS, Plain.NONE
K_OTHER, K_UNKNOWN, K_EXTERNAL = Plain.OTHER, Plain.UNKNOWN, Plain.EXTERNAL


@dataclass(frozen=True, slots=True)
class _Torch:
    qual: str  # the torch name


class TorchObject(_Torch):
    """``S:qual``: a torch API object (a class such as torch.nn.GELU, a function, a module)."""

    __slots__ = ()


class TorchInstance(_Torch):
    """``I:qual``: an instance of a torch class."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class _Project:
    file: int  # the file the class is in
    cls: str  # the class's name there


class UserClass(_Project):
    """``C:Name``: a class of the project."""

    __slots__ = ()


class UserInstance(_Project):
    """``O:Name``: an instance of a class of the project."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Function:
    """A function or method of file `file` as a value (`context`: its qualified name in the file)."""

    file: int
    context: str


@dataclass(frozen=True, slots=True)
class TensorMember:
    """A tensor's member read (``x.sum``): a method when called, an attribute's value when not."""

    name: str


@dataclass(frozen=True, slots=True)
class InstanceMember:
    """A member of a torch instance or of a project Module (``m.parameters``), the torch API `api`: its call
    gives the instance itself (`returns_self`, ``m.train()``), else `result` (OTHER, or UNKNOWN)."""

    api: str
    owner: TorchInstance | UserInstance
    returns_self: bool = False
    result: Plain = Plain.UNKNOWN


@dataclass(frozen=True, slots=True)
class TupleOf:
    """``(d;d;...)``: a tuple of the descriptors `items`, read in file `file`."""

    file: int
    items: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ModuleValue:
    """A module-level name of file `file` whose value is the descriptor `desc` (an import reference's target)."""

    file: int
    desc: str


Kind = Plain | TorchObject | TorchInstance | UserClass | UserInstance | Function | TensorMember | InstanceMember \
    | TupleOf | ModuleValue
Found = tuple[int, str]  # (file, descriptor or context) of an attribute or a method, through a class's bases

_MAX_DEPTH = 24


def symbol(root: str) -> str:
    return "$" + root


def extend(desc: str, op: str) -> str:
    """The symbol of `desc` with one more op (".name", "()" or "[]")."""
    return f"{desc}|{op}"


def result_of(table: MappingTable, api: str) -> str:
    """What calling the torch API `api` returns, as a descriptor: T, I:api, X or ? (outside the tables)."""
    entry = table.lookup(api)
    meta = table.meta
    if api in meta.tensor_classes or (entry is not None and entry.returns is Returns.TENSOR):
        return TENSOR
    if api.rpartition(".")[2][:1].isupper() or (entry is not None and entry.returns is Returns.INSTANCE):
        return "I:" + api  # calling a class makes an instance whose methods are torch APIs too
    if api in meta.non_tensor_functions or (entry is not None and entry.returns is Returns.OTHER):
        return OTHER
    if entry is None and api.partition(".")[0] not in meta.modules:
        return UNKNOWN  # e.g. torchvision.models.resnet18(): outside the tables, nothing is known
    return TENSOR


def instance_member(table: MappingTable, cls_name: str, name: str) -> str:
    """The qualified name of member `name` of torch class `cls_name`."""
    own = f"{cls_name}.{name}"
    if table.lookup(own) is not None:
        return own
    namespace = cls_name.rpartition(".")[0]
    best = ""
    for prefix in table.meta.instance_bases:
        if (namespace == prefix or namespace.startswith(prefix + ".")) and len(prefix) > len(best):
            best = prefix
    base = table.meta.instance_bases.get(best)
    if base == "torch.nn.Module" and name not in table.inventory.module_members:
        return own
    return f"{base}.{name}" if base else own


_MEMBERS: dict[str, frozenset[str]] = {}


def member_names(table: MappingTable) -> frozenset[str]:
    """Every name a torch object's member can have: Tensor and nn.Module members and the methods of the
    tables' classes (step, zero_grad, ...). A call of another name is never a torch API."""
    found = _MEMBERS.get(table.digest)
    if found is None:
        owners = {api.rpartition(".")[2] for api in table.entries
                  if api.rpartition(".")[0].rpartition(".")[2][:1].isupper()}
        found = _MEMBERS[table.digest] = frozenset(owners) | table.inventory.tensor_members \
            | table.inventory.module_members
    return found


class Facts(Protocol):
    """What a resolution needs to know about files (one file alone, or the whole project)."""

    def returns(self, file: int, context: str) -> Sequence[str] | None:
        """Descriptors of what function `context` of `file` returns; None: not a function there."""

    def attribute(self, file: int, cls: str, name: str) -> Found | Plain | None:
        """(file, descriptor) of attribute `name` of class `cls` through its bases; a Plain kind when
        unknowable (K_EXTERNAL: another file must say); None: no such attribute."""

    def method(self, file: int, cls: str, name: str) -> Found | Plain | None:
        """(file, context) of the method `name` of class `cls` through its bases; as `attribute` otherwise."""

    def is_module(self, file: int, cls: str) -> bool | None:
        """Whether `cls` is an nn.Module subclass; None when another file would have to say."""

    def ref(self, file: int, ref: str) -> Kind:
        """What an import reference made in `file` denotes: a UserClass, a Function, or a ModuleValue for a
        module-level name with a value."""

    def function(self, file: int, context: str) -> Kind:
        """A function or method context of `file` as a value (a Function), or a class of the file (a UserClass)."""

    def arguments(self, file: int, context: str) -> list[CallSite] | Plain:
        """The calls of function `context` of `file` that pass values worth knowing; a Plain kind when unknowable."""


def join(kinds: Iterable[Kind]) -> Kind:
    """One kind for several possible values: the common one; None values do not count."""
    out: Kind | None = None
    external = False
    for kind in kinds:
        if kind is K_NONE:
            continue
        if kind is K_EXTERNAL:
            external = True
            continue
        if kind is K_UNKNOWN:
            return K_UNKNOWN
        if out is None:
            out = kind
        elif out != kind:
            return K_UNKNOWN
    if external:
        return K_EXTERNAL
    return out if out is not None else K_UNKNOWN


def exportable(evaluator: Evaluator, desc: str) -> str | None:
    """`desc` as another file should see it: resolved where the file alone decides (a tensor, a torch
    class), kept as it is where another file must say; None when it is nothing torch or unknown."""
    match evaluator.value(0, desc):
        case Plain.TENSOR | Plain.TENSORS | Plain.NONE as plain:
            return str(plain.value)
        case TorchObject(qual):
            return f"S:{qual}"
        case TorchInstance(qual):
            return f"I:{qual}"
        case UserClass(_, cls):
            return f"C:{cls}"
        case UserInstance(_, cls):
            return f"O:{cls}"
        case TupleOf() | Plain.EXTERNAL:
            return desc
        case Function(_, context):
            return symbol("fn:" + context)
        case Plain.OTHER | Plain.UNKNOWN | TensorMember() | InstanceMember() | ModuleValue():
            return None
        case _ as unreachable:
            assert_never(unreachable)


class Evaluator:
    """Resolves descriptors with `facts`; results are memoised per (file, descriptor)."""

    def __init__(self, facts: Facts, table: MappingTable) -> None:
        self.facts = facts
        self.table = table
        self.tensor_members = table.inventory.tensor_members
        self.module_members = table.inventory.module_members
        self.non_tensor = table.meta.non_tensor_methods
        self.containers = table.layer_containers
        self.tensor_valued = table.meta.tensor_valued_attributes
        self.layer_tensors = table.meta.layer_tensor_attributes
        self.self_methods = table.meta.module_self_methods
        self._memo: dict[tuple[int, str], Kind] = {}
        self._active: set[tuple[int, str]] = set()

    # ------------------------------------------------------------------ descriptors
    def value(self, file: int, desc: str) -> Kind:
        key = (file, desc)
        known = self._memo.get(key)
        if known is not None:
            return known
        if key in self._active or len(self._active) > _MAX_DEPTH:
            return K_UNKNOWN  # a cycle (f returns g() returns f()) or a chain too long to follow
        self._active.add(key)
        try:
            kind = self._value(file, desc)
        finally:
            self._active.discard(key)
        self._memo[key] = kind
        return kind

    def _value(self, file: int, desc: str) -> Kind:
        return self._settle(self._unsettled(file, desc))

    def plain(self, file: int, desc: str) -> Kind:
        if desc in (TENSOR, TENSORS, NONE, OTHER):
            return Plain(desc)
        if desc[:1] == "(" and desc[-1:] == ")":  # a tuple: (item;item;...)
            return TupleOf(file, tuple(desc[1:-1].split(";")))
        tag, _, name = desc.partition(":")
        if not name:
            return K_UNKNOWN
        match tag:
            case "S":
                return TorchObject(name)
            case "I":
                return TorchInstance(name)
            case "C":
                return UserClass(file, name)
            case "O":
                return UserInstance(file, name)
        return K_UNKNOWN

    def _root(self, file: int, root: str) -> Kind:
        tag, _, name = root.partition(":")
        if tag == "ref":
            kind = self.facts.ref(file, name)
            if isinstance(kind, ModuleValue):  # a module-level name of another file: its value there
                return self.value(kind.file, kind.desc)
            return kind
        if tag == "fn":
            return self.facts.function(file, name)
        if tag == "self":
            return UserInstance(file, name)
        if tag == "param":  # param:context:position:name: what its callers pass
            context, position, param = name.split(":")
            return self._parameter(file, context, int(position), param)
        return K_UNKNOWN

    def _parameter(self, file: int, context: str, position: int, name: str) -> Kind:
        owner, _, method = context.rpartition(".")
        if method == "forward" and owner and self.facts.is_module(file, owner):
            return K_TENSOR  # the inputs of an nn.Module's forward (a module through a base in another file)
        sites = self.facts.arguments(file, context)
        if not isinstance(sites, list):
            return sites
        kinds: list[Kind] = []
        for site_file, positional, keywords, more in sites:
            passed = dict(keywords).get(name)
            if passed is None and 0 <= position < len(positional):
                passed = positional[position]
            if passed is not None:
                kinds.append(self.value(site_file, passed))
            else:
                kinds.append(K_UNKNOWN if more else K_NONE)  # a *args may pass it; else its default
        return join(kinds)

    def _settle(self, kind: Kind) -> Kind:
        """A bound member read without a call is an attribute value."""
        if isinstance(kind, TensorMember):
            return K_TENSOR if kind.name in self.tensor_valued else K_OTHER
        if isinstance(kind, InstanceMember):
            return K_OTHER
        return kind

    def apply(self, kind: Kind, op: str) -> Kind:
        """The kind of `op` applied to a value of kind `kind`."""
        if op == "()":
            return self._call(kind)
        kind = self._settle(kind)
        if op[:1] == "[":
            return self._index(kind, op)
        name = op[1:]
        match kind:
            case Plain.TENSOR:
                return TensorMember(name) if name in self.tensor_members else K_UNKNOWN
            case TorchInstance(qual):
                if qual.startswith("torch.nn.") and name in self.layer_tensors:
                    return K_TENSOR
                if qual in self.containers and name not in self.module_members:
                    return TorchInstance("torch.nn.Module")
                api = instance_member(self.table, qual, name)
                if api.startswith("torch.nn.Module.") or qual.startswith("torch.nn."):
                    return InstanceMember(api, kind, returns_self=api.startswith("torch.nn.Module.")
                                          and name in self.self_methods, result=K_OTHER)
                return InstanceMember(api, kind)
            case TorchObject(qual):
                return TorchObject(f"{qual}.{name}")
            case UserInstance() | UserClass():
                return self._member(kind, name)
        return K_UNKNOWN

    def _index(self, kind: Kind, op: str) -> Kind:
        """The kind of ``value[...]`` (`op` "[]", or "[k]" for a constant index)."""
        match kind:
            case Plain.TENSOR | Plain.TENSORS:
                return K_TENSOR
            case TupleOf(file, items):
                if op == "[]":
                    return join(self.value(file, d) for d in items)
                index = int(op[1:-1])
                return self.value(file, items[index]) if -len(items) <= index < len(items) else K_UNKNOWN
            case TorchInstance(qual) if qual in self.containers:
                return TorchInstance("torch.nn.Module")
            case UserInstance(file, cls) if op == "[]":
                found = self.facts.method(file, cls, "__getitem__")
                if isinstance(found, tuple):
                    return self._returns(*found)
        return K_UNKNOWN

    def _member(self, kind: UserInstance | UserClass, name: str) -> Kind:
        file, cls = kind.file, kind.cls
        attr = self.facts.attribute(file, cls, name)
        if isinstance(attr, tuple):
            return self.value(*attr)
        if attr is K_EXTERNAL:
            return K_EXTERNAL
        method = self.facts.method(file, cls, name)
        if isinstance(method, tuple):
            return Function(*method)
        if method is K_EXTERNAL:
            return K_EXTERNAL
        if isinstance(kind, UserInstance):
            module = self.facts.is_module(file, cls)
            if module is None:
                return K_EXTERNAL
            if module and name in self.module_members:
                return InstanceMember(f"torch.nn.Module.{name}", kind, returns_self=name in self.self_methods,
                                      result=K_OTHER)
        return K_UNKNOWN

    def _call(self, kind: Kind) -> Kind:
        match kind:
            case TensorMember(name):
                return K_OTHER if name in self.non_tensor else K_TENSOR
            case InstanceMember(_, owner, returns_self, result):
                return owner if returns_self else result
            case TorchObject(qual):
                return self.plain(0, result_of(self.table, qual))
            case TorchInstance(qual):
                return K_TENSOR if qual.startswith("torch.nn.") else K_UNKNOWN
            case UserClass(file, cls):
                return UserInstance(file, cls)
            case UserInstance(file, cls):
                module = self.facts.is_module(file, cls)
                if module:
                    return K_TENSOR
                if module is None:
                    return K_EXTERNAL
                found = self.facts.method(file, cls, "__call__")
                return self._returns(*found) if isinstance(found, tuple) else K_UNKNOWN
            case Function(file, context):
                return self._returns(file, context)
        return K_UNKNOWN

    def _returns(self, file: int, context: str) -> Kind:
        descs = self.facts.returns(file, context)
        if descs is None:
            return K_UNKNOWN
        return join(self.value(file, d) for d in descs)

    # ------------------------------------------------------------------ pending calls
    def member_api(self, file: int, receiver: str, member: str) -> str | None | Plain:
        """The torch API a pending call names: `member` called on `receiver` (a method), or the receiver
        itself called (member ""). None: not a torch API; K_EXTERNAL: another file must say."""
        kind = self.value(file, receiver) if member else self._unsettled(file, receiver)
        if kind is K_EXTERNAL:
            return K_EXTERNAL
        if not member:
            return kind.qual if isinstance(kind, TorchObject) else None
        if kind is K_TENSOR:
            return f"torch.Tensor.{member}" if member in self.tensor_members else None
        if isinstance(kind, (TorchInstance, UserInstance)):
            bound = self.apply(kind, "." + member)
            if bound is K_EXTERNAL:
                return K_EXTERNAL
            return bound.api if isinstance(bound, InstanceMember) else None
        return None

    def _unsettled(self, file: int, desc: str) -> Kind:
        """The kind of a descriptor, a bound member left bound (a callee)."""
        if desc[:1] != "$":
            return self.plain(file, desc)
        root, *ops = desc[1:].split("|")
        kind = self._root(file, root)
        for op in ops:
            if kind is K_UNKNOWN or kind is K_OTHER or kind is K_EXTERNAL:
                break
            kind = self.apply(kind, op)
        return kind
