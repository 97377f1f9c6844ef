"""What a network holds, read statically from its source: which layers sit under which attribute.

A small abstract interpreter over a module's syntax tree (``ast``; nothing is imported or run).
`Structure(source, side).instance("Net")` follows ``Net.__init__`` statement by statement and
gives a `Value` tree: library layers (`Layer`, e.g. torch.nn.Conv2d or mindspore.nn.Conv2d),
instances of the file's own classes (`Instance`, resolved recursively with the arguments of the
call), containers (`Container`: Sequential / ModuleList / ModuleDict and MindSpore's
SequentialCell / CellList / CellDict, with a `tail` for the elements a loop appends), alternatives
(`Choice`, e.g. an `if` that picks a layer class, or a class passed as an argument) and `Unknown`
where a value cannot be known (it says why). It follows helper functions and methods that build
layers (`self._make_layer(block, 64, 2)`), lists built in loops, comprehensions, ``*layers``,
``OrderedDict``, ``add_module``/``setattr``, ``register_buffer``, Parameters and tied weights
(``self.head.weight = self.embed.weight``). `side` is "torch" or "mindspore": it selects the
library's container, parameter and cell base classes.
"""

from __future__ import annotations

import ast
import functools
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

MAX_DEPTH = 24  # nested instantiations and calls followed
MAX_INSTANCES = 2000  # instances built for one network (alternatives multiply)
MAX_STEPS = 50_000  # statements followed for one network
MAX_NESTING = 2  # a class building itself with arguments that cannot be told apart (a tree of blocks): levels followed
ARGUMENT = "the argument "  # the reason of an Unknown that a caller did not give


@dataclass(frozen=True)
class Layer:
    """An instance of a library class (torch.nn.Conv2d, mindspore.nn.Dense, ...)."""

    api: str


@dataclass(frozen=True)
class Instance:
    """An instance of a class of the file: its sub-layers, Parameters, buffers and tied tensors."""

    cls: str
    children: tuple[tuple[str, Value], ...] = ()
    params: tuple[str, ...] = ()
    buffers: tuple[tuple[str, bool], ...] = ()  # (name, persistent)
    ties: tuple[tuple[str, str], ...] = ()  # ("head.weight", "embed.weight"): the first is the second
    base: str | None = None  # a library layer the class derives from (class MyConv(nn.Conv2d))


@dataclass(frozen=True)
class Container:
    """A library container of layers; `tail` stands for every element from index len(items) on."""

    kind: str
    items: tuple[tuple[str, Value], ...] = ()
    tail: Value | None = None


@dataclass(frozen=True)
class Choice:
    """One of several values, decided at run time."""

    options: tuple[Value, ...]
    reason: str


@dataclass(frozen=True)
class Unknown:
    """A value that may be a layer but cannot be known statically."""

    reason: str


@dataclass(frozen=True)
class Opaque:
    """A value that is surely not a layer (a number, a tensor, a string, ...)."""


@dataclass(frozen=True)
class Const:
    value: object


@dataclass(frozen=True)
class ClassRef:
    """A class object: one of the project's files (`library` False; `module` is the file's key) or of a
    library (qualified name)."""

    name: str
    library: bool
    module: str = ""


@dataclass(frozen=True)
class FuncRef:
    name: str
    method_of: str | None = None  # the class, for a method reached through self
    module: str = ""  # the file that defines it


@dataclass(frozen=True)
class FileModule:
    """A module of the project imported as a whole (`from . import common`)."""

    module: str


@dataclass(frozen=True)
class Pending:
    """A name imported from another file of the project, read when it is first used."""

    file: str
    name: str
    submodule: str = ""  # the package's module file of that name, read where the package does not define it


@dataclass(frozen=True)
class ListVal:
    """A Python list or tuple being built: known items, then a tail repeated by a loop."""

    items: tuple[Value, ...] = ()
    tail: Value | None = None


@dataclass(frozen=True)
class DictVal:
    items: tuple[tuple[str, Value], ...] = ()


@dataclass(frozen=True)
class ParamVal:
    """A Parameter created in the code."""


@dataclass(frozen=True)
class ModuleAlias:
    """An imported module (torch.nn as nn)."""

    name: str


@dataclass(frozen=True)
class PartialVal:
    """``functools.partial(func, *args, **kwargs)``: calling it calls `func` with these arguments first."""

    func: Value
    args: tuple[Value, ...] = ()
    kwargs: tuple[tuple[str, Value], ...] = ()


@dataclass(frozen=True)
class LoopIndex:
    """The number a loop counts with, as a placeholder in names built from it (f"layer{i}")."""

    name: str


Value = (Layer | Instance | Container | Choice | Unknown | Opaque | Const | ClassRef | FuncRef | ListVal | DictVal
         | ParamVal | ModuleAlias | LoopIndex | FileModule | Pending | PartialVal)
PARTIAL = "functools.partial"  # the standard library's partial application (a class bound to some arguments)
NONE = Const(None)
OPAQUE = Opaque()
# Python's built-in names whose value, or whose call's value, is never a layer (`sum(widths)`, `max(1, c // 4)`).
_PLAIN_BUILTINS = frozenset({
    "True", "False", "None", "abs", "all", "any", "bin", "bool", "callable", "chr", "divmod", "enumerate", "filter",
    "float", "format", "frozenset", "hasattr", "hash", "hex", "id", "int", "isinstance", "issubclass", "iter", "len",
    "map", "max", "min", "next", "oct", "ord", "pow", "print", "range", "repr", "reversed", "round", "set", "slice",
    "sorted", "str", "sum", "zip"})
# Methods of a string whose result on known strings is computed (a layer chosen by a name: `name.lower()`).
_STR_METHODS = frozenset({"lower", "upper", "replace", "split", "rsplit", "strip", "lstrip", "rstrip", "startswith",
                          "endswith", "removeprefix", "removesuffix"})
# Methods of a torch module or MindSpore cell that return the module or cell itself.
# A container's children by name (MindSpore's Cell.name_cells, torch's named_children as a dict), and a dict's pairs.
_NAMED_ITEMS = frozenset({"name_cells", "items"})
def _rebuilt_with(node: ast.Assign) -> ast.Call | None:
    """``self.seq = C(OrderedDict([*self.seq.name_cells().items(), (name, layer)]))``, the container rebuilt with
    one more named cell (migrate's form of ``self.seq.add_module(name, layer)``, the tables' `rebuilt`): that
    ``add_module`` call, which the reader follows (in loops and branches too); None for any other assignment."""
    if len(node.targets) != 1 or not isinstance(node.value, ast.Call) or len(node.value.args) != 1:
        return None
    target, inner = node.targets[0], node.value.args[0]
    if not isinstance(target, ast.Attribute) or not isinstance(inner, ast.Call) or len(inner.args) != 1 \
            or not isinstance(inner.args[0], ast.List) or len(inner.args[0].elts) != 2:
        return None
    spread, pair = inner.args[0].elts
    items = spread.value if isinstance(spread, ast.Starred) else None
    cells = items.func.value if isinstance(items, ast.Call) and isinstance(items.func, ast.Attribute) \
        and items.func.attr == "items" else None
    if not (isinstance(cells, ast.Call) and isinstance(cells.func, ast.Attribute) and cells.func.attr == "name_cells"
            and ast.unparse(cells.func.value) == ast.unparse(target)) or not isinstance(pair, ast.Tuple) \
            or len(pair.elts) != 2:
        return None
    return ast.Call(func=ast.Attribute(value=target, attr="add_module", ctx=ast.Load()), args=list(pair.elts),
                    keywords=[])


_RETURN_THEMSELVES = frozenset({"set_train", "to_float", "train", "eval", "float", "double", "half", "to", "cpu",
                                "cuda", "requires_grad_", "set_grad"})


@dataclass(frozen=True)
class Side:
    """What one library calls its cell base, containers and parameters."""

    name: str
    roots: tuple[str, ...]  # packages of the library
    cell_bases: tuple[str, ...]
    sequential: tuple[str, ...]
    lists: tuple[str, ...]
    dicts: tuple[str, ...]
    parameters: tuple[str, ...]
    layer_prefixes: tuple[str, ...]


SIDES = {
    "torch": Side("torch", ("torch",), ("torch.nn.Module", "torch.nn.modules.module.Module"),
                  ("torch.nn.Sequential",), ("torch.nn.ModuleList",), ("torch.nn.ModuleDict",),
                  ("torch.nn.Parameter", "torch.nn.parameter.Parameter"), ("torch.nn.",)),
    "mindspore": Side("mindspore", ("mindspore",), ("mindspore.nn.Cell", "mindspore.nn.cell.Cell"),
                      ("mindspore.nn.SequentialCell",), ("mindspore.nn.CellList",), ("mindspore.nn.CellDict",),
                      ("mindspore.Parameter", "mindspore.common.Parameter", "mindspore.common.parameter.Parameter"),
                      ("mindspore.nn.", "mindspore.mint.nn.")),
}
# Packages that are never a file of the project being read.
_NOT_PROJECT = frozenset({"torch", "mindspore", "numpy", "math", "collections", "typing", "functools", "itertools",
                          "copy", "warnings", "logging", "os", "sys", "dataclasses", "enum", "abc"})


def choice(options: list[Value], reason: str) -> Value:
    """A Choice of the distinct options (nested choices flattened); the option itself when there is one."""
    flat: list[Value] = []
    for option in options:
        for item in (option.options if isinstance(option, Choice) else (option,)):
            if item not in flat:
                flat.append(item)
    if len(flat) == 1:
        return flat[0]
    return Choice(tuple(flat), reason)


def is_cell(value: Value) -> bool:
    """A value that holds layers (or might)."""
    if isinstance(value, Choice):
        return any(is_cell(option) for option in value.options)
    return isinstance(value, (Layer, Instance, Container, Unknown))


@dataclass
class _Frame:
    """The state of one function being followed: its names and, in a class, the attributes of self
    (`cls`, defined in the file `owner`)."""

    env: dict[str, Value]
    cls: str | None = None
    owner: Structure | None = None
    attrs: dict[str, Value] = field(default_factory=dict)
    params: list[str] = field(default_factory=list)
    buffers: list[tuple[str, bool]] = field(default_factory=list)
    ties: list[tuple[str, str]] = field(default_factory=list)
    returns: list[Value] = field(default_factory=list)
    loop: int = 0  # depth of enclosing loops: appends inside a loop repeat

    def fork(self) -> _Frame:
        return replace(self, env=dict(self.env), attrs=dict(self.attrs), params=list(self.params),
                       buffers=list(self.buffers), ties=list(self.ties), returns=list(self.returns))


class _Links:
    """The files of one project read so far (by key), and the instances being built across them."""

    def __init__(self) -> None:
        self.modules: dict[str, Structure] = {}
        self.active: list[tuple[str, str]] = []
        self.built = 0
        self.steps = 0  # statements followed for the current `build`
        self.origin: Structure | None = None  # the file whose network is being built (its classes may be passed in)


class _TooMuch(Exception):
    """More code than MAX_STEPS statements to follow for one network."""


class Structure:
    """The classes of one source file and what their instances hold.

    With `path` (the file on disk), names imported from the project's other files (`from .common import
    MLPBlock`, `from sam.common import MLPBlock`, `from . import common`) are read from those files too.
    """

    def __init__(self, source: str, side: str, filename: str = "<source>", path: str | None = None,
                 links: _Links | None = None, tree: ast.Module | None = None) -> None:
        self.side = SIDES[side]
        self.path = os.path.abspath(path) if path else None
        self.key = self.path or filename
        self.links = links if links is not None else _Links()
        self.links.modules[self.key] = self
        self.tree = tree if tree is not None else ast.parse(source, filename)
        self.classes: dict[str, ast.ClassDef] = {}
        self.functions: dict[str, ast.FunctionDef] = {}
        self.globals: dict[str, Value] = {}
        for node in self.tree.body:
            self._top_level(node)

    def _of(self, ref: ClassRef | FuncRef | FileModule) -> Structure:
        """The file that defines a class or function of the project."""
        return self.links.modules.get(ref.module, self) if ref.module else self

    def _global(self, name: str) -> Value | None:
        """A module-level name; one imported from another project file is read from it now (once)."""
        value = self.globals.get(name)
        if isinstance(value, Pending):
            self.globals[name] = Unknown(f"{name} is imported in a cycle")  # while it is being read
            other = self._load(value.file)
            if other is None:
                value = Unknown(f"{value.name} is in {value.file}, which cannot be read")
            elif value.name == "":
                value = FileModule(other.key)
            elif value.submodule and value.name not in other.globals:
                module = self._load(value.submodule)
                value = FileModule(module.key) if module is not None else \
                    Unknown(f"{value.name} is in {value.submodule}, which cannot be read")
            else:
                value = other._global(value.name) or Unknown(f"{value.name} is not found in {other.key}")
            self.globals[name] = value
        return value

    def _load(self, file: str) -> Structure | None:
        if file in self.links.modules:
            return self.links.modules[file]
        tree = _parse_file(file)
        return None if tree is None else Structure("", self.side.name, file, file, self.links, tree=tree)

    # ------------------------------------------------------------------ module level
    def _top_level(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                file = self._project_file(alias.name, 0)
                if file is not None and (alias.asname or "." not in alias.name):  # a module of the project
                    self.globals[alias.asname or alias.name] = Pending(file, "")
                elif alias.asname:
                    self.globals[alias.asname] = ModuleAlias(alias.name)
                else:
                    top = alias.name.partition(".")[0]
                    self.globals[top] = ModuleAlias(top)
        elif isinstance(node, ast.ImportFrom):
            self._import_from(node)
        elif isinstance(node, ast.ClassDef):
            self.classes[node.name] = node
            self.globals[node.name] = ClassRef(node.name, library=False, module=self.key)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if isinstance(node, ast.FunctionDef):
                self.functions[node.name] = node
                self.globals[node.name] = FuncRef(node.name, module=self.key)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            self.globals[node.targets[0].id] = self._ev(node.value, _Frame(env={}), 0)
        elif isinstance(node, (ast.If, ast.Try)):  # guarded imports and definitions
            for child in node.body:
                self._top_level(child)

    def _import_from(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name == "*":
                continue
            local = alias.asname or alias.name
            inner = self._project_file(f"{node.module}.{alias.name}" if node.module else alias.name, node.level)
            file = self._project_file(node.module, node.level)
            if file is not None and file.endswith("__init__.py"):
                # from package import name: what the package defines under that name (a function its
                # __init__ imports wins over the module file of the same name), else that module
                self.globals[local] = Pending(file, alias.name, inner or "")
            elif inner is not None:  # a module of the project: from . import common
                self.globals[local] = Pending(inner, "")
            elif file is not None:  # a class, function or constant of another file of the project
                self.globals[local] = Pending(file, alias.name)
            elif node.module and not node.level:
                self.globals[local] = self._qualified(f"{node.module}.{alias.name}")

    def _project_file(self, module: str | None, level: int) -> str | None:
        """The project file a `from MODULE import ...` reads (relative, or absolute within the project's folders)."""
        if self.path is None or (not level and (not module or module.partition(".")[0] in _NOT_PROJECT)):
            return None
        folder = os.path.dirname(self.path)
        if level:
            for _ in range(level - 1):
                folder = os.path.dirname(folder)
            bases = [folder]
        else:  # the package folders this file sits in, and the folder above the outermost one
            bases = [folder]
            while os.path.isfile(os.path.join(folder, "__init__.py")) and os.path.dirname(folder) != folder:
                folder = os.path.dirname(folder)
                bases.append(folder)
        parts = module.split(".") if module else []
        for base in bases:
            target = os.path.join(base, *parts)
            for file in (target + ".py", os.path.join(target, "__init__.py")):
                if os.path.isfile(file):
                    return os.path.abspath(file)
        return None

    def _qualified(self, name: str) -> Value:
        """An imported name: a module (lowercase last part) or a class of a library."""
        last = name.rpartition(".")[2]
        return ModuleAlias(name) if last[:1].islower() and "." in name and last != "OrderedDict" \
            else ClassRef(name, library=True)

    def _bases(self, cls: ast.ClassDef) -> list[Value]:
        return [self._ev(base, _Frame(env={}), 0) for base in cls.bases]

    def is_cell_class(self, name: str, seen: frozenset[str] = frozenset()) -> bool:
        """The class derives (through the file's classes) from the library's cell base or one of its layers."""
        cls = self.classes.get(name)
        if cls is None or f"{self.key}:{name}" in seen:  # by file: a class may derive from one of its name
            return False
        for base in self._bases(cls):
            if isinstance(base, ClassRef) and base.library and (
                    base.name in self.side.cell_bases or base.name.startswith(self.side.layer_prefixes)):
                return True
            if isinstance(base, ClassRef) and not base.library and \
                    self._of(base).is_cell_class(base.name, seen | {f"{self.key}:{name}"}):
                return True
        return False

    def _unknown_base(self, name: str) -> bool:
        """A base of the class cannot be resolved (imported relatively, say): its instances may be cells."""
        cls = self.classes.get(name)
        return cls is not None and any(isinstance(base, Unknown) for base in self._bases(cls))

    def cell_classes(self) -> list[str]:
        return [name for name in self.classes if self.is_cell_class(name)]

    def imported_cells(self) -> list[str]:
        """Cell classes of the project's other files that this file imports and passes on as a value
        (`build(Net, **config)`, `partial(Net, ...)`): a network of theirs that this file configures, perhaps
        with its own classes as arguments."""
        called = {id(node.func) for node in ast.walk(self.tree) if isinstance(node, ast.Call)}
        out: list[str] = []
        for node in ast.walk(self.tree):
            if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)) or id(node) in called \
                    or node.id in out or node.id in self.classes or not isinstance(self.globals.get(node.id), Pending):
                continue
            ref = self._global(node.id)
            if isinstance(ref, ClassRef) and not ref.library and ref.module != self.key \
                    and self._of(ref).is_cell_class(ref.name):
                out.append(node.id)
        return out

    def library_base(self, name: str, seen: frozenset[str] = frozenset()) -> str | None:
        """The library layer a class derives from (not the cell base itself), if any."""
        cls = self.classes.get(name)
        if cls is None or f"{self.key}:{name}" in seen:
            return None
        for base in self._bases(cls):
            if isinstance(base, ClassRef) and base.library and base.name not in self.side.cell_bases \
                    and base.name.startswith(self.side.layer_prefixes):
                return base.name
            if isinstance(base, ClassRef) and not base.library:
                found = self._of(base).library_base(base.name, seen | {f"{self.key}:{name}"})
                if found:
                    return found
        return None

    # ------------------------------------------------------------------ instances
    def build(self, name: str, args: tuple[Value, ...] = (), kwargs: tuple[tuple[str, Value], ...] = ()) -> Value:
        """What the factory `name` builds: a cell class of the file, or a function of the file that returns one."""
        imported = self._global(name) if name not in self.classes and name not in self.functions else None
        if imported is None and name not in self.classes and name not in self.functions:
            raise KeyError(name)
        self.links.steps = self.links.built = 0
        self.links.origin = self
        try:
            if isinstance(imported, ClassRef) and not imported.library:  # a class of another file, built here
                owner = self._of(imported)
                return owner.instance(imported.name, args, owner._open_defaults(imported.name, args, kwargs))
            if imported is not None:
                raise KeyError(name)
            if name in self.classes:
                return self.instance(name, args, self._open_defaults(name, args, kwargs))
            return self._call_into(self.functions[name], _Frame(env={}), args, dict(kwargs), 0, bound_self=False)
        except _TooMuch:
            return Unknown(f"building {name} runs more than {MAX_STEPS} statements: too much code to follow")
        finally:
            self.links.active.clear()
            self.links.origin = None

    def _open_defaults(self, name: str, args: tuple[Value, ...], kwargs: tuple[tuple[str, Value], ...]
                       ) -> tuple[tuple[str, Value], ...]:
        """The keyword arguments of a network built as a root: a parameter the call leaves to its default, where
        that default is a cell class of the project (`block=Bottleneck`; not a subclass of a library layer), is a
        class the network's real callers may choose: the default or another cell class of the file that defines
        it or of the file the network is built for, told apart by its tensors."""
        init, _, where = self._find_method(name, "__init__")
        if init is None or where is None:
            return kwargs
        spec = init.args
        positional = (spec.posonlyargs + spec.args)[1:]
        given = {k for k, _ in kwargs} | {a.arg for a in positional[:len(args)]}
        pairs = list(zip(positional[len(positional) - len(spec.defaults):], spec.defaults))
        pairs += [(a, d) for a, d in zip(spec.kwonlyargs, spec.kw_defaults) if d is not None]
        opened = []
        for arg, default in pairs:
            value = where._ev(default, _Frame(env={}), 0) if arg.arg not in given else None
            home = where._of(value) if isinstance(value, ClassRef) and not value.library else None
            if home is not None and isinstance(value, ClassRef) and home.is_cell_class(value.name) \
                    and home.library_base(value.name) is None:
                files = [home] + [f for f in (self.links.origin,) if f is not None and f is not home]
                others = [ClassRef(c, library=False, module=f.key) for f in files for c in f.cell_classes()
                          if (c, f) != (value.name, home) and f.library_base(c) is None]
                opened.append((arg.arg, choice([value, *others], f"the class {arg.arg} of {name} is given by its "
                                                                 f"callers (default {value.name})")))
        return kwargs + tuple(opened)

    def instance(self, name: str, args: tuple[Value, ...] = (), kwargs: tuple[tuple[str, Value], ...] = (),
                 depth: int = 0) -> Value:
        """What an instance of the file's class `name` holds, built with these arguments."""
        key = (f"{self.key}:{name}", repr((args, kwargs)))
        if depth > MAX_DEPTH or self.links.active.count(key) >= MAX_NESTING:
            return Unknown(f"{name} is built recursively (followed {MAX_NESTING} levels deep)")
        self.links.built += 1
        if self.links.built > MAX_INSTANCES:
            return Unknown(f"too many alternatives to follow (more than {MAX_INSTANCES} instances)")
        self.links.active.append(key)
        try:
            frame = _Frame(env={}, cls=name, owner=self)
            init, _, where = self._find_method(name, "__init__")
            if init is not None and where is not None:
                where._call_into(init, frame, args, dict(kwargs), depth, bound_self=True)
            children = tuple((attr, value) for attr, value in frame.attrs.items() if is_cell(value))
            return Instance(cls=name, children=children, params=tuple(frame.params),
                            buffers=tuple(frame.buffers), ties=tuple(frame.ties), base=self.library_base(name))
        finally:
            self.links.active.pop()

    def _find_method(self, cls_name: str, method: str, seen: frozenset[str] = frozenset()
                     ) -> tuple[ast.FunctionDef | None, str | None, Structure | None]:
        """The method (through the bases), the class that defines it and that class's file."""
        cls = self.classes.get(cls_name)
        if cls is None or f"{self.key}:{cls_name}" in seen:
            return None, None, None
        for node in cls.body:
            if isinstance(node, ast.FunctionDef) and node.name == method:
                return node, cls_name, self
        for base in self._bases(cls):
            if isinstance(base, ClassRef) and not base.library:
                found = self._of(base)._find_method(base.name, method, seen | {f"{self.key}:{cls_name}"})
                if found[0] is not None:
                    return found
        return None, None, None

    def _class_attr(self, cls_name: str, attr: str) -> Value:
        cls = self.classes.get(cls_name)
        if cls is None:
            return Unknown(f"{cls_name}.{attr}")
        for node in cls.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == attr for t in node.targets):
                return self._ev(node.value, _Frame(env={}), 0)
            if isinstance(node, ast.FunctionDef) and node.name == attr:
                return FuncRef(attr, method_of=cls_name, module=self.key)
        return OPAQUE

    def _bind(self, func: ast.FunctionDef, args: tuple[Value, ...], kwargs: dict[str, Value],
              skip_self: bool) -> dict[str, Value]:
        spec = func.args
        positional = spec.posonlyargs + spec.args
        if skip_self and positional:
            positional = positional[1:]
        env: dict[str, Value] = {}
        defaults = spec.defaults
        first_default = len(positional) - len(defaults)
        for index, arg in enumerate(positional):
            if index < len(args):
                env[arg.arg] = args[index]
            elif arg.arg in kwargs:
                env[arg.arg] = kwargs[arg.arg]
            elif index >= first_default:
                env[arg.arg] = self._ev(defaults[index - first_default], _Frame(env={}), 0)
            else:
                env[arg.arg] = Unknown(f"{ARGUMENT}{arg.arg} of {func.name} is not known here")
        for arg, default in zip(spec.kwonlyargs, spec.kw_defaults):
            if arg.arg in kwargs:
                env[arg.arg] = kwargs[arg.arg]
            elif default is not None:
                env[arg.arg] = self._ev(default, _Frame(env={}), 0)
            else:
                env[arg.arg] = Unknown(f"{ARGUMENT}{arg.arg} of {func.name} is not known here")
        if spec.vararg:
            env[spec.vararg.arg] = ListVal(tuple(args[len(positional):]))
        if spec.kwarg:
            env[spec.kwarg.arg] = DictVal(tuple((k, v) for k, v in kwargs.items()
                                                if k not in {a.arg for a in positional + spec.kwonlyargs}))
        return env

    def _call_into(self, func: ast.FunctionDef, frame: _Frame, args: tuple[Value, ...], kwargs: dict[str, Value],
                   depth: int, bound_self: bool) -> Value:
        """Follow a function's body in `frame` (whose attrs are self's, for a method); its return value."""
        saved_env, saved_returns = frame.env, frame.returns
        frame.env = self._bind(func, args, kwargs, skip_self=bound_self)
        if bound_self and (func.args.posonlyargs + func.args.args):
            frame.env[(func.args.posonlyargs + func.args.args)[0].arg] = Const("self")
        frame.returns = []
        try:
            self._block(func.body, frame, depth + 1)
            result = choice(frame.returns, f"{func.name} returns one of several values") if frame.returns else NONE
        finally:
            frame.env, frame.returns = saved_env, saved_returns
        return result

    # ------------------------------------------------------------------ statements
    def _block(self, body: list[ast.stmt], frame: _Frame, depth: int) -> None:
        for stmt in body:
            self._stmt(stmt, frame, depth)

    def _stmt(self, node: ast.stmt, frame: _Frame, depth: int) -> None:
        self.links.steps += 1
        if self.links.steps > MAX_STEPS:
            raise _TooMuch()
        if isinstance(node, ast.Assign) and (added := _rebuilt_with(node)) is not None:
            self._call_statement(added, frame, depth)  # the port's form of `self.seq.add_module(name, layer)`
        elif isinstance(node, ast.Assign):
            value = self._ev(node.value, frame, depth)
            for target in node.targets:
                self._assign(target, value, node.value, frame, depth)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self._assign(node.target, self._ev(node.value, frame, depth), node.value, frame, depth)
        elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and isinstance(node.target, ast.Name):
            current = frame.env.get(node.target.id, OPAQUE)
            frame.env[node.target.id] = self._extend(current, self._ev(node.value, frame, depth), frame)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            self._call_statement(node.value, frame, depth)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Tuple):  # `self.add_module(...),` (a comma)
            for element in node.value.elts:
                if isinstance(element, ast.Call):
                    self._call_statement(element, frame, depth)
        elif isinstance(node, ast.Return):
            frame.returns.append(self._ev(node.value, frame, depth) if node.value is not None else NONE)
        elif isinstance(node, ast.If):
            self._if(node, frame, depth)
        elif isinstance(node, (ast.For, ast.While)):
            if isinstance(node, ast.For):
                self._loop_names(node.target, node.iter, frame, depth)
            frame.loop += 1
            self._block(node.body, frame, depth)
            frame.loop -= 1
            self._block(node.orelse, frame, depth)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            self._block(node.body, frame, depth)
        elif isinstance(node, ast.Try):
            self._block(node.body + node.orelse + node.finalbody, frame, depth)

    def _loop_names(self, target: ast.expr, iterable: ast.expr, frame: _Frame, depth: int) -> None:
        """What a `for` binds: a counter (`for i in range(n)`, the first name of `enumerate`) is the loop's
        index; an element of a list the code built of layers (`for name, stage in stages`) is that element
        (any of them: the loop runs over all)."""
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "enumerate" \
                and iterable.args and isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == 2:
            if isinstance(target.elts[0], ast.Name):
                frame.env[target.elts[0].id] = LoopIndex(target.elts[0].id)
            self._loop_names(target.elts[1], iterable.args[0], frame, depth)
            return
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "zip" \
                and isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == len(iterable.args) \
                and not any(isinstance(a, ast.Starred) for a in iterable.args):
            for name_node, source in zip(target.elts, iterable.args):  # for block, width in zip(blocks, widths)
                self._loop_names(name_node, source, frame, depth)
            return
        held = self._ev(iterable, frame, depth)
        if isinstance(held, Unknown) and isinstance(target, ast.Name):
            # an element of a sequence the code was given (`for block_fn in block_fns`): a class perhaps, one of
            # the file's cell classes when called, told apart by its tensors (as a class given as an argument)
            frame.env[target.id] = Unknown(f"{ARGUMENT}{target.id} of a loop is not known here ({held.reason})")
            return
        element = choice([*held.items] + ([held.tail] if held.tail is not None else []), "elements of a loop") \
            if isinstance(held, ListVal) and (held.items or held.tail is not None) else None
        if element is not None and not (is_cell(element) or isinstance(element, (ListVal, Choice))):
            element = None  # numbers or names: the loop's index stands for them in names built from it
        if isinstance(target, ast.Name):
            frame.env[target.id] = element if element is not None else LoopIndex(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)) and element is not None:
            self._assign(target, element, iterable, frame, depth)

    def _if(self, node: ast.If, frame: _Frame, depth: int) -> None:
        known = self._truth(node.test, frame, depth)
        if known is True:
            self._block(node.body, frame, depth)
            return
        if known is False:
            self._block(node.orelse, frame, depth)
            return
        then, other = frame.fork(), frame.fork()
        self._block(node.body, then, depth)
        self._block(node.orelse, other, depth)
        reason = f"chosen by `{_text(node.test)}` at run time"
        for name in set(then.env) | set(other.env):
            frame.env[name] = choice([then.env.get(name, OPAQUE), other.env.get(name, OPAQUE)], reason)
        for name in list(then.attrs) + [a for a in other.attrs if a not in then.attrs]:
            frame.attrs[name] = choice([then.attrs.get(name, NONE), other.attrs.get(name, NONE)], reason)
        for branch in (then, other):
            for item in branch.params:
                if item not in frame.params:
                    frame.params.append(item)
            for buffer in branch.buffers:
                if buffer not in frame.buffers:
                    frame.buffers.append(buffer)
            for tie in branch.ties:
                if tie not in frame.ties:
                    frame.ties.append(tie)
        frame.returns = then.returns + [r for r in other.returns if r not in then.returns]

    def _truth(self, test: ast.expr, frame: _Frame, depth: int) -> bool | None:
        """`x is None` / `x is not None` / `not x` where x is known; None otherwise."""
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant) \
                and test.comparators[0].value is None and isinstance(test.ops[0], (ast.Is, ast.IsNot)):
            value = self._ev(test.left, frame, depth)
            if isinstance(value, (Unknown, Choice)):
                return None
            is_none = value == NONE
            return is_none if isinstance(test.ops[0], ast.Is) else not is_none
        if isinstance(test, ast.Constant):
            return bool(test.value)
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" \
                and len(test.args) == 2 and "isinstance" not in frame.env:
            return _is_instance(self._ev(test.args[0], frame, depth), test.args[1])
        return None

    def _assign(self, target: ast.expr, value: Value, node: ast.expr, frame: _Frame, depth: int) -> None:
        if isinstance(target, ast.Name):
            frame.env[target.id] = value
        elif isinstance(target, ast.Attribute) and frame.cls is not None:
            path = self._self_path(target, frame)
            if path is None:
                return
            if "." not in path:
                maybe = isinstance(value, Choice) and any(isinstance(o, ParamVal) for o in value.options)
                if (isinstance(value, ParamVal) or maybe) and path not in frame.params:  # `Parameter(...) if c else None`
                    frame.params.append(path)
                frame.attrs[path] = value
            else:
                source = self._self_path(node, frame) if isinstance(node, ast.Attribute) else None
                if source is not None:  # self.head.weight = self.embed.weight: one tensor, two names
                    frame.ties.append((path, source))
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                and isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, int) \
                and not isinstance(target.slice.value, bool) and target.slice.value >= 0:
            held, index = frame.env.get(target.value.id), target.slice.value
            if isinstance(held, ListVal) and index < len(held.items):  # layers[0] = nn.ReLU(): that element
                frame.env[target.value.id] = ListVal(held.items[:index] + (value,) + held.items[index + 1:], held.tail)
            elif isinstance(held, ListVal) and index == len(held.items) and held.tail is not None:
                frame.env[target.value.id] = ListVal(held.items + (value,), held.tail)  # the first of a loop's
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                and isinstance(frame.env.get(target.value.id), DictVal):
            key = self._ev(target.slice, frame, depth)
            held = frame.env[target.value.id]
            assert isinstance(held, DictVal)
            if isinstance(key, Const) and isinstance(key.value, str):  # blocks["conv1"] = ... (an OrderedDict)
                frame.env[target.value.id] = _merged(held, ((key.value, value),))
            else:
                frame.env[target.value.id] = Unknown("a dict filled with keys that are not known")
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = value.items if isinstance(value, ListVal) and not value.tail else ()
            fits = [o for o in value.options if isinstance(o, ListVal) and o.tail is None
                    and len(o.items) == len(target.elts)] if isinstance(value, Choice) else []
            if isinstance(value, Choice) and fits:
                # a, b = f() where f returns tuples from several branches: each name one of their items there (the
                # tuples of another length would not unpack)
                items = tuple(choice([o.items[k] for o in fits], value.reason) for k in range(len(target.elts)))
            for index, element in enumerate(target.elts):
                inner = items[index] if index < len(items) else Unknown("unpacked from a sequence")
                if isinstance(element, ast.Name):
                    frame.env[element.id] = inner
                elif isinstance(element, ast.Attribute):
                    self._assign(element, inner, element, frame, depth)

    def _self_path(self, node: ast.expr, frame: _Frame) -> str | None:
        """`self.a.b` -> "a.b" (self being the instance the frame builds)."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and frame.env.get(node.id) == Const("self") and parts:
            return ".".join(reversed(parts))
        return None

    def _call_statement(self, call: ast.Call, frame: _Frame, depth: int) -> None:
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            owner = frame.env.get(func.value.id)
            if isinstance(owner, (ListVal, Choice)) and func.attr in ("append", "extend") and call.args:
                more = self._ev(call.args[0], frame, depth)
                frame.env[func.value.id] = self._extend(owner, ListVal((more,)) if func.attr == "append" else more,
                                                        frame)
                return
            if owner == Const("self"):
                self._self_call(func.attr, call, frame, depth)
                return
            if isinstance(owner, Container) and owner.kind not in self.side.dicts and func.attr in ("append", "extend") \
                    and call.args:  # stages = nn.ModuleList(); stages.append(...)
                frame.env[func.value.id] = self._grown(owner, func.attr, call.args[0], frame, depth)
                return
        if isinstance(func, ast.Attribute) and func.attr in ("append", "extend") and call.args:
            path = self._self_path(func.value, frame)
            held = frame.attrs.get(path) if path is not None and "." not in path else None
            if path is not None and isinstance(held, Container) and held.kind not in self.side.dicts:
                frame.attrs[path] = self._grown(held, func.attr, call.args[0], frame, depth)
                return
        if isinstance(func, ast.Attribute) and func.attr in ("add_module", "register_module") and len(call.args) == 2:
            path = self._self_path(func.value, frame)
            held = frame.attrs.get(path) if path is not None and "." not in path else None
            name = self._ev(call.args[0], frame, depth)
            options = held.options if isinstance(held, Choice) else (held,)
            if options and all(isinstance(o, Container) for o in options) and isinstance(name, Const) \
                    and isinstance(name.value, str):
                # self.features.add_module("block1", layer): one more named item of that container
                added = self._ev(call.args[1], frame, depth)
                grown = [Container(o.kind, tuple({**dict(o.items), str(name.value): added}.items()), o.tail)
                         for o in options if isinstance(o, Container)]
                frame.attrs[str(path)] = choice(list(grown), held.reason if isinstance(held, Choice) else "")
                return
            if options and all(isinstance(o, Container) for o in options):  # a name computed at run time
                frame.attrs[str(path)] = Unknown(f"a layer added to {path} by a name not known statically")
                return
        if isinstance(func, ast.Name) and func.id == "setattr" and len(call.args) == 3:
            name = self._ev(call.args[1], frame, depth)
            if isinstance(call.args[0], ast.Name) and frame.env.get(call.args[0].id) == Const("self") \
                    and isinstance(name, Const) and isinstance(name.value, str):
                frame.attrs[name.value] = self._ev(call.args[2], frame, depth)
            return
        if isinstance(func, ast.Attribute) and func.attr == "__init__" and isinstance(func.value, ast.Call) \
                and isinstance(func.value.func, ast.Name) and func.value.func.id == "super":
            self._super_init(call, frame, depth)
            return
        self._ev(call, frame, depth)

    def _grown(self, held: Container, method: str, arg: ast.expr, frame: _Frame, depth: int) -> Value:
        """A list container after `append(arg)` / `extend(arg)` (inside a loop, what is added repeats)."""
        more = self._ev(arg, frame, depth)
        grown = self._extend(ListVal(tuple(v for _, v in held.items), held.tail),
                             ListVal((more,)) if method == "append" else more, frame)
        return self._container(held.kind, [Const(("*", grown))])

    def _self_call(self, method: str, call: ast.Call, frame: _Frame, depth: int) -> None:
        args: list[Value] = []
        for arg in call.args:  # `self.add_module(*pair)`: the pair's items
            value = self._ev(arg.value if isinstance(arg, ast.Starred) else arg, frame, depth)
            if isinstance(arg, ast.Starred) and isinstance(value, ListVal) and value.tail is None:
                args.extend(value.items)
            elif isinstance(arg, ast.Starred):
                args.append(Unknown("unpacked from a value that cannot be followed"))
            else:
                args.append(value)
        kwargs = dict(self._keywords(call.keywords, frame, depth))
        name = args[0] if args else kwargs.get("name")
        text = name.value if isinstance(name, Const) and isinstance(name.value, str) else None
        if method in ("add_module", "register_module") and text is not None and len(args) > 1:
            frame.attrs[text] = args[1]
        elif method == "add_module" and text is not None and "module" in kwargs:
            frame.attrs[text] = kwargs["module"]
        elif method == "register_buffer" and text is not None:
            persistent = kwargs.get("persistent", args[2] if len(args) > 2 else Const(True))
            frame.buffers.append((text, not (isinstance(persistent, Const) and persistent.value is False)))
        elif method == "register_parameter" and text is not None:
            if text not in frame.params:
                frame.params.append(text)
        elif method == "insert_child_to_cell" and text is not None and len(args) > 1:
            frame.attrs[text] = args[1]
        elif frame.cls is not None and frame.owner is not None:
            found, _, where = frame.owner._find_method(frame.cls, method)
            if found is not None and where is not None and not _may_change_self(found):
                return  # a method that cannot change what self holds (weight init, logging, ...)
            self._ev(call, frame, depth)
        else:
            self._ev(call, frame, depth)

    def _super_init(self, call: ast.Call, frame: _Frame, depth: int) -> None:
        """super().__init__(...) in a class of the file whose base is another class of the file."""
        if frame.cls is None or frame.owner is None:
            return
        cls = frame.owner.classes.get(frame.cls)
        if cls is None:
            return
        for base in frame.owner._bases(cls):
            if isinstance(base, ClassRef) and not base.library:
                owner = frame.owner._of(base)
                init, _, where = owner._find_method(base.name, "__init__")
                if init is not None and where is not None:
                    args = tuple(self._ev(a, frame, depth) for a in call.args)
                    kwargs = dict(self._keywords(call.keywords, frame, depth))
                    saved = frame.cls, frame.owner
                    frame.cls, frame.owner = base.name, owner
                    try:
                        where._call_into(init, frame, args, kwargs, depth, bound_self=True)
                    finally:
                        frame.cls, frame.owner = saved
                return

    def _extend(self, current: Value, more: Value, frame: _Frame) -> Value:
        """`current + more` for lists; inside a loop, what is added repeats (it becomes the tail)."""
        if isinstance(current, Choice):
            return choice([self._extend(option, more, frame) for option in current.options], current.reason)
        if not isinstance(current, ListVal) or not isinstance(more, ListVal):
            return Unknown("a list built in a way that cannot be followed")
        if frame.loop:
            added = [*more.items] + ([more.tail] if more.tail is not None else [])
            tail = choice([current.tail, *added] if current.tail is not None else added, "elements of a loop")
            return ListVal(current.items, tail if added else current.tail)
        if current.tail is not None:
            if more.items or more.tail is not None:
                tail = choice([current.tail, *more.items] + ([more.tail] if more.tail else []), "elements of a loop")
                return ListVal(current.items, tail)
            return current
        return ListVal(current.items + more.items, more.tail)

    # ------------------------------------------------------------------ expressions
    def _ev(self, node: ast.expr | None, frame: _Frame, depth: int) -> Value:
        if node is None:
            return NONE
        if isinstance(node, ast.Constant):
            return Const(node.value)
        if isinstance(node, ast.Name):
            if node.id in frame.env:
                return frame.env[node.id]
            found = self._global(node.id)
            if found is not None:
                return found
            return OPAQUE if node.id in _PLAIN_BUILTINS \
                else Unknown(f"the name {node.id} is not known here")
        if isinstance(node, ast.Attribute):
            return self._attribute(node, frame, depth)
        if isinstance(node, ast.Call):
            return self._call(node, frame, depth)
        if isinstance(node, (ast.List, ast.Tuple)):
            out: Value = ListVal()
            for element in node.elts:
                if isinstance(element, ast.Starred):
                    out = self._extend(out, self._ev(element.value, frame, depth), _Frame(env={}))
                else:
                    out = self._extend(out, ListVal((self._ev(element, frame, depth),)), _Frame(env={}))
            return out
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            inner = frame.fork()
            for generator in node.generators:
                if isinstance(generator.target, ast.Name):
                    inner.env[generator.target.id] = LoopIndex(generator.target.id)
            return ListVal((), self._ev(node.elt, inner, depth))
        if isinstance(node, ast.Dict):
            made = DictVal()
            for key, value in zip(node.keys, node.values):
                item = self._ev(value, frame, depth)
                if key is None and isinstance(item, DictVal):  # {**defaults, "k": v}
                    made = _merged(made, item.items)
                    continue
                name = self._ev(key, frame, depth) if key is not None else OPAQUE
                if not (isinstance(name, Const) and isinstance(name.value, str)):
                    return Unknown("a dict with keys that are not literal strings")
                made = _merged(made, ((name.value, item),))
            return made
        if isinstance(node, ast.BoolOp):
            return self._bool_op(node, frame, depth)
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Slice):
            held, at = self._ev(node.value, frame, depth), self._ev(node.slice, frame, depth)
            if isinstance(held, DictVal) and isinstance(at, Const) and isinstance(at.value, str):
                return dict(held.items).get(at.value, Unknown(f"the dict has no item {at.value!r} here"))
            if isinstance(held, ListVal) and isinstance(at, Const) and type(at.value) is int \
                    and 0 <= at.value < len(held.items):
                return held.items[at.value]
            return OPAQUE
        if isinstance(node, ast.IfExp):
            known = self._truth(node.test, frame, depth)
            if known is not None:
                return self._ev(node.body if known else node.orelse, frame, depth)
            return choice([self._ev(node.body, frame, depth), self._ev(node.orelse, frame, depth)],
                          f"chosen by `{_text(node.test)}` at run time")
        if isinstance(node, ast.BinOp):
            left, right = self._ev(node.left, frame, depth), self._ev(node.right, frame, depth)
            if isinstance(node.op, ast.Add) and isinstance(left, ListVal) and isinstance(right, ListVal):
                return self._extend(left, right, _Frame(env={}))
            if isinstance(node.op, ast.Mult) and isinstance(left, ListVal) and len(left.items) == 1:
                return ListVal((), left.items[0])
            if isinstance(node.op, ast.Mod) and isinstance(left, Const) and isinstance(left.value, str):
                return self._percent(left.value, node.right, frame, depth)
            return OPAQUE
        if isinstance(node, ast.JoinedStr):
            return self._fstring(node, frame, depth)
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) and node.slice.upper is None \
                and node.slice.step is None:
            return self._dropped_front(self._ev(node.value, frame, depth), node.slice.lower)
        if isinstance(node, ast.NamedExpr):
            named = self._ev(node.value, frame, depth)
            frame.env[node.target.id] = named
            return named
        return OPAQUE

    def _bool_op(self, node: ast.BoolOp, frame: _Frame, depth: int) -> Value:
        """`a or b` / `a and b`: the operand Python returns where the operands' truth is known
        (`norm_layer or nn.BatchNorm2d` with no norm layer given is the BatchNorm2d), else one of them."""
        stop = isinstance(node.op, ast.Or)  # `or` stops at the first true operand, `and` at the first false one
        options: list[Value] = []
        for index, operand in enumerate(node.values):
            value = self._ev(operand, frame, depth)
            last = index == len(node.values) - 1
            if isinstance(value, Choice) and not last:
                # the options that stop here are a result; the others go on to the next operand
                options.extend(o for o in value.options if _truth_of(o) is not (not stop))
                if all(_truth_of(o) is stop for o in value.options):
                    break
                continue
            known = _truth_of(value)
            if known is stop or last:
                options.append(value)
                break
            if known is None:
                options.append(value)
        return choice(options, f"chosen by `{_text(node)}` at run time") if options else OPAQUE

    @staticmethod
    def _dropped_front(value: Value, lower: ast.expr | None) -> Value:
        """`items[k:]` of a list being built: its items from k on, then its tail (a loop's elements stay
        the loop's elements)."""
        count = 0 if lower is None else lower.value if isinstance(lower, ast.Constant) else None
        if not isinstance(value, ListVal) or not isinstance(count, int) or isinstance(count, bool) or count < 0:
            return OPAQUE
        if count <= len(value.items):
            return ListVal(value.items[count:], value.tail)
        return ListVal((), value.tail) if value.tail is not None else ListVal()

    def _percent(self, text: str, right: ast.expr, frame: _Frame, depth: int) -> Value:
        """`"layer%d" % (i + 1)`: a name built with %-formatting, as an f-string builds it."""
        parts = right.elts if isinstance(right, ast.Tuple) else [right]
        pieces = re.split(r"(%[ds])", text)
        if "%" in "".join(pieces[0::2]).replace("%%", "") or len(pieces[1::2]) != len(parts):
            return OPAQUE
        values: list[ast.expr | str] = []
        for index, piece in enumerate(pieces):
            values.append(piece.replace("%%", "%") if index % 2 == 0 else parts[index // 2])
        joined = ast.JoinedStr([ast.Constant(v) if isinstance(v, str) else ast.FormattedValue(v, -1, None)
                                for v in values])
        return self._fstring(joined, frame, depth)

    def _fstring(self, node: ast.JoinedStr, frame: _Frame, depth: int) -> Value:
        text = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                text.append(str(part.value))
            elif isinstance(part, ast.FormattedValue):
                value = self._ev(part.value, frame, depth)
                if isinstance(part.value, ast.BinOp) and isinstance(part.value.op, (ast.Add, ast.Sub)) \
                        and isinstance(part.value.right, ast.Constant) and isinstance(part.value.right.value, int):
                    value = self._ev(part.value.left, frame, depth)  # f"layer{i + 1}": a number the loop counts
                    if not isinstance(value, LoopIndex):
                        return OPAQUE
                if isinstance(value, LoopIndex):
                    text.append("{" + value.name + "}")
                elif isinstance(value, Const) and isinstance(value.value, (int, str)):
                    text.append(str(value.value))
                else:
                    return OPAQUE
        return Const("".join(text))

    def _attribute(self, node: ast.Attribute, frame: _Frame, depth: int) -> Value:
        base = self._ev(node.value, frame, depth)
        if isinstance(base, PartialVal) and node.attr in ("func", "args", "keywords"):  # what the partial binds
            return base.func if node.attr == "func" else ListVal(base.args) if node.attr == "args" \
                else DictVal(base.kwargs)
        if isinstance(base, ClassRef) and node.attr == "__name__":
            return Const(base.name.rpartition(".")[2])
        if isinstance(base, ModuleAlias):
            file = self._project_file(f"{base.name}.{node.attr}", 0)  # `import pkg.mod` then `pkg.mod.Name`
            if file is not None and node.attr[:1].islower():
                other = self._load(file)
                return FileModule(other.key) if other is not None else Unknown(f"{file} cannot be read")
            return self._qualified(f"{base.name}.{node.attr}")
        if base == Const("self") and frame.cls is not None and frame.owner is not None:
            if node.attr in frame.attrs:
                return frame.attrs[node.attr]
            found, cls, where = frame.owner._find_method(frame.cls, node.attr)
            if found is not None and where is not None:
                return FuncRef(node.attr, method_of=cls, module=where.key)
            return frame.owner._class_attr(frame.cls, node.attr)
        if isinstance(base, ClassRef) and not base.library:
            return self._of(base)._class_attr(base.name, node.attr)
        if isinstance(base, FileModule):
            return self._of(base)._global(node.attr) or Unknown(f"{node.attr} is not found in {base.module}")
        if isinstance(base, Unknown):  # a module or object not known here: what it holds is not known either
            return base
        if isinstance(base, ClassRef) and base.library:
            return ClassRef(f"{base.name}.{node.attr}", library=True) if node.attr[:1].isupper() else OPAQUE
        return OPAQUE

    def _call(self, node: ast.Call, frame: _Frame, depth: int) -> Value:
        if isinstance(node.func, ast.Attribute) and node.func.attr in _RETURN_THEMSELVES:
            # `nn.BatchNorm2d(8).set_train()`, `layer.to(device)`: the layer itself
            held = self._ev(node.func.value, frame, depth)
            if isinstance(held, (Layer, Instance, Container)):
                return held
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("get", "pop") and node.args \
                and not node.keywords:
            held = self._ev(node.func.value, frame, depth)
            if isinstance(held, DictVal):  # kwargs.get("norm_layer", default): the item, else the default
                return self._dict_item(held, node, frame, depth)
        if isinstance(node.func, ast.Attribute) and node.func.attr in _STR_METHODS and not node.keywords:
            held = self._ev(node.func.value, frame, depth)
            if isinstance(held, Const) and isinstance(held.value, str):  # "batch_norm".replace("_", "").lower()
                given = [self._ev(a, frame, depth) for a in node.args]
                if all(isinstance(g, Const) and isinstance(g.value, (str, int)) for g in given):
                    try:
                        done = getattr(held.value, node.func.attr)(*(g.value for g in given if isinstance(g, Const)))
                    except (TypeError, ValueError):
                        return OPAQUE
                    return ListVal(tuple(Const(p) for p in done)) if isinstance(done, list) else Const(done)
        if isinstance(node.func, ast.Name) and node.func.id in ("list", "tuple") and len(node.args) == 1 \
                and not node.keywords and node.func.id not in frame.env and self._global(node.func.id) is None:
            held = _as_list(self._ev(node.args[0], frame, depth), self.side)  # list(layers): the same layers
            if isinstance(held, ListVal):
                return held
        if isinstance(node.func, ast.Name) and node.func.id == "dict" and node.func.id not in frame.env \
                and self._global("dict") is None and len(node.args) <= 1:
            start = self._ev(node.args[0], frame, depth) if node.args else DictVal()
            if not isinstance(start, DictVal):
                return Unknown("a dict made of a value that cannot be followed")
            return _merged(start, self._keywords(node.keywords, frame, depth))
        if isinstance(node.func, ast.Attribute) and node.func.attr in _NAMED_ITEMS and not node.args \
                and not node.keywords:
            # `self.seq.name_cells().items()`: a container's (name, layer) pairs (a SequentialCell rebuilt with more)
            held = self._ev(node.func.value, frame, depth)
            if node.func.attr == "items" and isinstance(held, DictVal):
                return ListVal(tuple(ListVal((Const(name), value)) for name, value in held.items))
            if node.func.attr != "items" and isinstance(held, Container) and held.tail is None:
                return DictVal(held.items)
        func = self._ev(node.func, frame, depth)
        args: list[Value] = []
        for arg in node.args:
            value = self._ev(arg.value if isinstance(arg, ast.Starred) else arg, frame, depth)
            if isinstance(arg, ast.Starred):
                if isinstance(value, ListVal) and value.tail is None:
                    args.extend(value.items)
                else:
                    args.append(Const(("*", value, ast.unparse(arg.value))))  # (its text: for the reason)
            else:
                args.append(value)
        return self._apply(func, tuple(args), self._keywords(node.keywords, frame, depth), frame, depth)

    def _keywords(self, keywords: list[ast.keyword], frame: _Frame, depth: int) -> tuple[tuple[str, Value], ...]:
        """A call's keyword arguments, `**mapping` unpacked where the mapping is a dict the code built (a later
        name wins); a mapping that cannot be followed adds nothing (the callee's defaults stand)."""
        out = DictVal()
        for keyword in keywords:
            value = self._ev(keyword.value, frame, depth)
            if keyword.arg is not None:
                out = _merged(out, ((keyword.arg, value),))
            elif isinstance(value, DictVal):
                out = _merged(out, value.items)
        return out.items

    def _dict_item(self, held: DictVal, node: ast.Call, frame: _Frame, depth: int) -> Value:
        """`mapping.get(key[, default])` / `mapping.pop(key[, default])` on a dict the code built (pop also takes
        the item out of the name that holds it)."""
        key = self._ev(node.args[0], frame, depth)
        if not (isinstance(key, Const) and isinstance(key.value, str)):
            return Unknown("an item of a dict by a key that is not known")
        items = dict(held.items)
        assert isinstance(node.func, ast.Attribute)
        if node.func.attr == "pop" and isinstance(node.func.value, ast.Name) and node.func.value.id in frame.env:
            frame.env[node.func.value.id] = DictVal(tuple(i for i in held.items if i[0] != key.value))
        if key.value in items:
            return items[key.value]
        return self._ev(node.args[1], frame, depth) if len(node.args) > 1 else NONE

    def _apply(self, func: Value, args: tuple[Value, ...], kwargs: tuple[tuple[str, Value], ...], frame: _Frame,
               depth: int) -> Value:
        if depth > MAX_DEPTH:
            return Unknown("calls nested too deeply to follow")
        if isinstance(func, Choice):
            # an alternative that is a class being built above (a block that would nest itself) is left out
            active = {name for name, _ in self.links.active}
            options = [o for o in func.options if o != NONE and not (
                isinstance(o, ClassRef) and not o.library and f"{self._of(o).key}:{o.name}" in active)]
            return choice([self._apply(option, args, kwargs, frame, depth) for option in options or func.options
                           if option != NONE], func.reason)
        if isinstance(func, ModuleAlias) and func.name == PARTIAL and args:
            return PartialVal(args[0], args[1:], kwargs)
        if isinstance(func, PartialVal):  # the partial's own arguments first, keywords given now win
            given = {name for name, _ in kwargs}
            return self._apply(func.func, func.args + args,
                               tuple(kw for kw in func.kwargs if kw[0] not in given) + kwargs, frame, depth)
        if isinstance(func, ClassRef) and func.library:
            return self._library_call(func.name, args, kwargs)
        if isinstance(func, ClassRef):
            owner = self._of(func)
            if not (owner.is_cell_class(func.name) or owner._unknown_base(func.name)):
                return OPAQUE
            return owner.instance(func.name, args, kwargs, depth + 1)
        if isinstance(func, FuncRef):
            owner = self._of(func)
            if func.method_of is not None:
                method, _, where = owner._find_method(func.method_of, func.name)
                if method is None or where is None:
                    return Unknown(f"the method {func.name} is not found")
                if any(d for d in method.decorator_list if isinstance(d, ast.Name) and d.id == "staticmethod"):
                    return where._call_into(method, _Frame(env={}), args, dict(kwargs), depth, bound_self=False)
                return where._call_into(method, frame, args, dict(kwargs), depth, bound_self=True)
            function = owner.functions.get(func.name)
            if function is None:
                return Unknown(f"the function {func.name} is not found")
            return owner._call_into(function, _Frame(env={}), args, dict(kwargs), depth, bound_self=False)
        if isinstance(func, Unknown):
            if func.reason.startswith(ARGUMENT):
                # A class passed in by the caller (block(...)): one of the file's cells, told apart later
                # by the names of the tensors found under it.
                active = {name for name, _ in self.links.active}
                files = [self] + [f for f in (self.links.origin,) if f is not None and f is not self]
                options = [f.instance(name, args, kwargs, depth + 1) for f in files for name in f.cell_classes()
                           if f"{f.key}:{name}" not in active]
                if options:
                    return choice(options, f"{func.reason}: one of the file's cell classes, chosen by its tensors")
            if func.reason.startswith(_NOT_KNOWN):  # (a call of what such a call made)
                return func
            return Unknown(f"{_NOT_KNOWN} ({func.reason})")
        return OPAQUE

    def _library_call(self, api: str, args: tuple[Value, ...], kwargs: tuple[tuple[str, Value], ...]) -> Value:
        side = self.side
        containers = api in side.sequential or api in side.lists or api in side.dicts or api.endswith("OrderedDict")
        if containers and len(args) == 1 and isinstance(args[0], Choice):  # items built in branches: one each
            return choice([self._library_call(api, (option,), kwargs) for option in args[0].options], args[0].reason)
        if api in side.sequential or api in side.lists:
            if api in side.lists:
                source = args[0] if args else ListVal()
                return self._container(api, [Const(("*", source))] if not isinstance(source, ListVal) else
                                       [*source.items] + ([Const(("*", ListVal((), source.tail)))]
                                                          if source.tail is not None else []))
            if len(args) == 1 and isinstance(args[0], DictVal):
                return Container(api, args[0].items)
            return self._container(api, list(args))
        if api in side.dicts:
            source = args[0] if args else DictVal()
            if isinstance(source, DictVal):
                return Container(api, source.items)
            pairs = _pairs(source)
            if pairs is not None:
                return Container(api, pairs)
            return Unknown(f"the items of a {api.rpartition('.')[2]} cannot be followed")
        if api.endswith("OrderedDict") and not args:
            return _merged(DictVal(), kwargs)
        if api.endswith("OrderedDict") and len(args) == 1:
            pairs = _pairs(args[0])
            return DictVal(pairs) if pairs is not None else Unknown("an OrderedDict with names that are not literal")
        if api in side.parameters:
            return ParamVal()
        if api.startswith(side.layer_prefixes) and api.rpartition(".")[2][:1].isupper():
            return Layer(api)
        return OPAQUE

    def _container(self, kind: str, args: list[Value]) -> Value:
        items: list[tuple[str, Value]] = []
        tail: Value | None = None
        for arg in args:
            if isinstance(arg, Const) and isinstance(arg.value, tuple) and arg.value[:1] == ("*",):
                spread = _one_list(_as_list(arg.value[1], self.side))
                if isinstance(spread, ListVal) and tail is None:
                    items.extend((str(len(items) + k), v) for k, v in enumerate(spread.items))
                    tail = spread.tail
                    continue
                source, text = arg.value[1], arg.value[2] if len(arg.value) > 2 else ""
                why = source.reason if isinstance(source, Unknown) else \
                    spread.reason if isinstance(spread, Unknown) else \
                    f"`{text}` gives no list whose layers the map can read" if text else ""
                return Unknown(f"the elements of a {kind.rpartition('.')[2]} cannot be followed"
                               + (f": {why}" if why else ""))
            if tail is not None:
                return Unknown(f"the elements of a {kind.rpartition('.')[2]} cannot be numbered statically")
            items.append((str(len(items)), arg))
        return Container(kind, tuple(items), tail)


_NOT_KNOWN = "built by a call of something not known statically"
MAX_FILE_BYTES = 2_000_000  # a project file larger than this is not read for the classes it defines
_SELF_CHANGES = frozenset({"add_module", "register_module", "register_buffer", "register_parameter",
                           "insert_child_to_cell", "append", "extend", "insert"})


@functools.lru_cache(maxsize=4096)
def _text(node: ast.expr) -> str:
    return ast.unparse(node)


@functools.lru_cache(maxsize=4096)
def _may_change_self(func: ast.FunctionDef) -> bool:
    """Whether a method may change what self holds: it assigns to an attribute of its first parameter, calls
    setattr or a registering method on it, or calls another method of it (which may)."""
    params = func.args.posonlyargs + func.args.args
    if not params:
        return False
    me = params[0].arg

    def on_self(node: ast.expr) -> bool:
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        return isinstance(node, ast.Name) and node.id == me

    for node in ast.walk(func):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Attribute) and on_self(t) for t in targets):
                return True
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id == "setattr" and node.args and on_self(node.args[0]):
                return True
            if isinstance(f, ast.Attribute) and on_self(f.value) and (
                    f.attr in _SELF_CHANGES or isinstance(f.value, ast.Name)):
                return True
    return False


@functools.lru_cache(maxsize=256)
def _parse_cached(file: str, mtime: float, size: int) -> ast.Module | None:
    del mtime  # part of the cache key only
    if size > MAX_FILE_BYTES:
        return None
    try:
        with open(file, "rb") as handle:
            return ast.parse(handle.read(), file)
    except (OSError, SyntaxError, ValueError):
        return None


def _parse_file(file: str) -> ast.Module | None:
    """A project file's syntax tree (cached on its modification time), or None when it cannot be read."""
    try:
        info = os.stat(file)
    except OSError:
        return None
    return _parse_cached(file, info.st_mtime, info.st_size)


def _one_list(value: Value) -> Value:
    """Lists built in branches (a Choice of lists) as one list: the items all of them hold at the same place,
    then, from the first place where they differ, any of their other items (a tail: which one sits at an
    index is known only when the code runs). Any other value is returned as it is."""
    if not isinstance(value, Choice) or not all(isinstance(o, ListVal) for o in value.options):
        return value
    lists = [o for o in value.options if isinstance(o, ListVal)]
    common = 0
    while all(len(o.items) > common for o in lists) and all(o.items[common] == lists[0].items[common] for o in lists):
        common += 1
    rest: list[Value] = []
    for option in lists:
        rest.extend(option.items[common:])
        if option.tail is not None:
            rest.append(option.tail)
    return ListVal(lists[0].items[:common], choice(rest, value.reason) if rest else None)


def _as_list(value: Value, side: Side) -> Value:
    """`*layers` of a Sequential or list container (its layers, in order); any other value as it is."""
    if isinstance(value, Container) and value.kind not in side.dicts and all(k.isdigit() for k, _ in value.items):
        return ListVal(tuple(v for _, v in value.items), value.tail)
    if isinstance(value, Choice) and any(isinstance(o, Container) for o in value.options):
        return choice([_as_list(o, side) for o in value.options], value.reason)
    return value


def _merged(held: DictVal, more: tuple[tuple[str, Value], ...]) -> DictVal:
    """The dict with these items set (an existing name keeps its place and takes the new value)."""
    items = dict(held.items)
    items.update(more)
    return DictVal(tuple(items.items()))


# What Python's isinstance answers for a value of a kind the reader knows, by the names of the types tested.
_KINDS: dict[type, frozenset[str]] = {
    ClassRef: frozenset({"type"}), PartialVal: frozenset({"partial", "functools.partial"}),
    FuncRef: frozenset({"FunctionType", "types.FunctionType"}), DictVal: frozenset({"dict"})}
_CONSTANT_KINDS = {str: "str", bool: "bool", int: "int", float: "float", type(None): "NoneType"}
_KNOWN_TYPES = frozenset().union(*_KINDS.values(), _CONSTANT_KINDS.values(), {"list", "tuple"})


def _is_instance(value: Value, types: ast.expr) -> bool | None:
    """`isinstance(value, types)` where the value's kind is known (a string, a number, a class, a partial, a
    function, a dict) and every type tested is one of those kinds; None otherwise."""
    names = [_text(t) for t in (types.elts if isinstance(types, ast.Tuple) else [types])]
    if not names or any(n not in _KNOWN_TYPES for n in names):
        return None
    if isinstance(value, Const) and type(value.value) in _CONSTANT_KINDS:
        kinds = {_CONSTANT_KINDS[type(value.value)]} | ({"int"} if isinstance(value.value, bool) else set())
    elif type(value) in _KINDS and not (isinstance(value, FuncRef) and value.method_of):
        kinds = set(_KINDS[type(value)])
    else:
        return None
    return any(n in kinds for n in names)


def _truth_of(value: Value) -> bool | None:
    """Whether Python takes the value as true, where that is known (a layer, a class, a literal)."""
    if isinstance(value, Const):
        return bool(value.value)
    if isinstance(value, (Layer, Instance, Container, ClassRef, FuncRef, PartialVal, ParamVal, ModuleAlias,
                          FileModule)):
        return True
    if isinstance(value, (ListVal, DictVal)) and (value.items or (isinstance(value, ListVal) and value.tail)):
        return True
    if isinstance(value, (ListVal, DictVal)):
        return False
    return None


def _pairs(value: Value) -> tuple[tuple[str, Value], ...] | None:
    """[("name", layer), ...] with literal names, or None."""
    if not isinstance(value, ListVal) or value.tail is not None:
        return None
    out = []
    for item in value.items:
        if not (isinstance(item, ListVal) and len(item.items) == 2 and isinstance(item.items[0], Const)):
            return None
        out.append((str(item.items[0].value), item.items[1]))
    return tuple(out)


def walk(value: Value) -> Iterator[Value]:
    """The value and every value inside it."""
    yield value
    if isinstance(value, Instance):
        for _, child in value.children:
            yield from walk(child)
    elif isinstance(value, Container):
        for _, child in value.items:
            yield from walk(child)
        if value.tail is not None:
            yield from walk(value.tail)
    elif isinstance(value, Choice):
        for option in value.options:
            yield from walk(option)
