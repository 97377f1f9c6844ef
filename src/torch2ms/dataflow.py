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

What a descriptor denotes is a `Kind`: the descriptor kinds above plus function values, bound methods
and "depends on another file" (only while a file is resolved alone).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from .mappings import MappingTable
from .model import Returns

TENSOR, TENSORS, NONE, OTHER, UNKNOWN = "T", "TS", "N", "X", "?"

# Kinds: tuples whose first item says what they are.
Kind = tuple[str, ...]
# A call of a function: (file, positional argument descriptors, keyword ones, whether *args/**kwargs pass more)
CallSite = tuple[int, tuple[str, ...], tuple[tuple[str, str], ...], bool]
K_TENSOR: Kind = ("T",)
K_NONE: Kind = ("N",)
K_OTHER: Kind = ("X",)
K_UNKNOWN: Kind = ("?",)
K_EXTERNAL: Kind = ("E",)  # needs another file's facts
# ("S", qual) torch object; ("I", qual) torch instance; ("C", file, cls) user class; ("O", file, cls) its
# instance; ("F", file, context) a function; ("BT", member) a tensor's bound member; ("BI", api, result)
# a torch instance's bound member (result: the kind its call gives, "self" or "X")

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

    def attribute(self, file: int, cls: str, name: str) -> tuple[int, str] | None | Kind:
        """(file, descriptor) of attribute `name` of class `cls` through its bases; a Kind when unknowable."""

    def method(self, file: int, cls: str, name: str) -> tuple[int, str] | None | Kind:
        """(file, context) of the method `name` of class `cls` through its bases; a Kind when unknowable."""

    def is_module(self, file: int, cls: str) -> bool | None:
        """Whether `cls` is an nn.Module subclass; None when another file would have to say."""

    def ref(self, file: int, ref: str) -> Kind:
        """What an import reference made in `file` denotes: C, F, or ("V", file, descriptor) for a
        module-level name with a value."""

    def function(self, file: int, context: str) -> Kind:
        """A function or method context of `file` as a value (F), or a class of the file (C)."""

    def arguments(self, file: int, context: str) -> list[CallSite] | Kind:
        """The calls of function `context` of `file` that pass values worth knowing; a Kind when unknowable."""


def join(kinds: Iterable[Kind]) -> Kind:
    """One kind for several possible values: the common one; None values do not count."""
    out: Kind | None = None
    external = False
    for kind in kinds:
        if kind == K_NONE:
            continue
        if kind == K_EXTERNAL:
            external = True
            continue
        if kind == K_UNKNOWN:
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
    kind = evaluator.value(0, desc)
    tag = kind[0]
    if tag in ("T", "TS", "N"):
        return tag
    if tag in ("S", "I"):
        return f"{tag}:{kind[1]}"
    if tag in ("C", "O"):
        return f"{tag}:{kind[2]}"
    if tag == "TU" or tag == "E":
        return desc
    if tag == "F":
        return symbol("fn:" + kind[2])
    return None


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
            return (desc,)
        if desc[:1] == "(" and desc[-1:] == ")":  # a tuple: (item;item;...)
            return ("TU", str(file), *desc[1:-1].split(";"))
        tag, _, name = desc.partition(":")
        if tag in ("S", "I") and name:
            return (tag, name)
        if tag in ("C", "O") and name:
            return (tag, str(file), name)
        return K_UNKNOWN

    def _root(self, file: int, root: str) -> Kind:
        tag, _, name = root.partition(":")
        if tag == "ref":
            kind = self.facts.ref(file, name)
            if kind[0] == "V":  # a module-level name of another file: its value there
                return self.value(int(kind[1]), kind[2])
            return kind
        if tag == "fn":
            return self.facts.function(file, name)
        if tag == "self":
            return ("O", str(file), name)
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
        kinds = []
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
        if kind[0] == "BT":
            return K_TENSOR if kind[1] in self.tensor_valued else K_OTHER
        if kind[0] == "BI":
            return K_OTHER
        return kind

    def apply(self, kind: Kind, op: str) -> Kind:
        """The kind of `op` applied to a value of kind `kind`."""
        tag = kind[0]
        if op == "()":
            return self._call(kind)
        if tag in ("BT", "BI"):
            kind = self._settle(kind)
            tag = kind[0]
        if op[:1] == "[":
            if tag in ("T", "TS"):
                return K_TENSOR
            if tag == "TU":
                items = kind[2:]
                if op == "[]":
                    return join(self.value(int(kind[1]), d) for d in items)
                index = int(op[1:-1])
                return self.value(int(kind[1]), items[index]) if -len(items) <= index < len(items) else K_UNKNOWN
            if tag == "I" and kind[1] in self.containers:
                return ("I", "torch.nn.Module")
            if tag == "O" and op == "[]":
                found = self.facts.method(int(kind[1]), kind[2], "__getitem__")
                if isinstance(found, tuple) and len(found) == 2 and isinstance(found[0], int):
                    return self._returns(found[0], str(found[1]))
            return K_UNKNOWN
        name = op[1:]
        if tag == "T":
            if name in self.tensor_members:
                return ("BT", name)
            return K_UNKNOWN
        if tag == "I":
            qual = kind[1]
            if qual.startswith("torch.nn.") and name in self.layer_tensors:
                return K_TENSOR
            if qual in self.containers and name not in self.module_members:
                return ("I", "torch.nn.Module")
            api = instance_member(self.table, qual, name)
            result = "self" if api.startswith("torch.nn.Module.") and name in self.self_methods else OTHER
            if api.startswith("torch.nn.Module.") or qual.startswith("torch.nn."):
                return ("BI", api, result, qual)
            return ("BI", api, UNKNOWN, qual)
        if tag == "S":
            return ("S", f"{kind[1]}.{name}")
        if tag in ("O", "C"):
            return self._member(kind, name)
        return K_UNKNOWN

    def _member(self, kind: Kind, name: str) -> Kind:
        file, cls = int(kind[1]), kind[2]
        attr = self.facts.attribute(file, cls, name)
        if isinstance(attr, tuple) and len(attr) == 2 and isinstance(attr[0], int):
            return self.value(attr[0], str(attr[1]))
        if attr == K_EXTERNAL:
            return K_EXTERNAL
        method = self.facts.method(file, cls, name)
        if isinstance(method, tuple) and len(method) == 2 and isinstance(method[0], int):
            return ("F", str(method[0]), str(method[1]))
        if method == K_EXTERNAL:
            return K_EXTERNAL
        if kind[0] == "O":
            module = self.facts.is_module(file, cls)
            if module is None:
                return K_EXTERNAL
            if module and name in self.module_members:
                api = f"torch.nn.Module.{name}"
                return ("BI", api, "self" if name in self.self_methods else OTHER, "O", str(file), cls)
        return K_UNKNOWN

    def _call(self, kind: Kind) -> Kind:
        tag = kind[0]
        if tag == "BT":
            return K_OTHER if kind[1] in self.non_tensor else K_TENSOR
        if tag == "BI":
            if kind[2] == "self":
                return ("I", kind[3]) if kind[3] != "O" else ("O", kind[4], kind[5])
            return K_OTHER if kind[2] == OTHER else K_UNKNOWN
        if tag == "S":
            return self.plain(0, result_of(self.table, kind[1]))
        if tag == "I":
            return K_TENSOR if kind[1].startswith("torch.nn.") else K_UNKNOWN
        if tag == "C":
            return ("O", kind[1], kind[2])
        if tag == "O":
            module = self.facts.is_module(int(kind[1]), kind[2])
            if module:
                return K_TENSOR
            if module is None:
                return K_EXTERNAL
            found = self.facts.method(int(kind[1]), kind[2], "__call__")
            if isinstance(found, tuple) and len(found) == 2 and isinstance(found[0], int):
                return self._returns(found[0], str(found[1]))
            return K_UNKNOWN
        if tag == "F":
            return self._returns(int(kind[1]), kind[2])
        return K_UNKNOWN

    def _returns(self, file: int, context: str) -> Kind:
        descs = self.facts.returns(file, context)
        if descs is None:
            return K_UNKNOWN
        return join(self.value(file, d) for d in descs)

    # ------------------------------------------------------------------ pending calls
    def member_api(self, file: int, receiver: str, member: str) -> str | None | Kind:
        """The torch API a pending call names: `member` called on `receiver` (a method), or the receiver
        itself called (member ""). None: not a torch API; K_EXTERNAL: another file must say."""
        kind = self.value(file, receiver) if member else self._unsettled(file, receiver)
        if kind == K_EXTERNAL:
            return K_EXTERNAL
        if not member:
            return kind[1] if kind[0] == "S" else None
        tag = kind[0]
        if tag == "T":
            return f"torch.Tensor.{member}" if member in self.tensor_members else None
        if tag in ("I", "O"):
            bound = self.apply(kind, "." + member)
            if bound == K_EXTERNAL:
                return K_EXTERNAL
            return bound[1] if bound[0] == "BI" else None
        return None

    def _unsettled(self, file: int, desc: str) -> Kind:
        """The kind of a descriptor, a bound member left bound (a callee)."""
        if desc[:1] != "$":
            return self.plain(file, desc)
        root, *ops = desc[1:].split("|")
        kind = self._root(file, root)
        for op in ops:
            if kind in (K_UNKNOWN, K_OTHER, K_EXTERNAL):
                break
            kind = self.apply(kind, op)
        return kind
