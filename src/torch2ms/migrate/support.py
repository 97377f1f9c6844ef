"""The support module `torch2ms migrate` writes once per output tree: torch-signature layers.

A torch layer class the rewrite of a call cannot reach (a base class, ``class PixelNorm(nn.LayerNorm)``; a class
passed as a value and called later, ``partial(nn.GELU, approximate='tanh')``; a call whose arguments are known
only when it runs, ``nn.Conv2d(i, o, k, **kwargs)``) becomes the class of the same name in this module: a Cell
subclass of the MindSpore layer the entry maps to (the form for the version and the device), whose constructor
takes torch's parameters (names, order, defaults: the entry's `adapter`, read from torch by
scripts/build_tables.py) and translates them when it runs by the target's own parameter facts: renames, value
translations (BatchNorm's momentum 1 - m), dropped and placement parameters, MindSpore-only parameters at torch's
behaviour (``pad_mode='pad'``), a value MindSpore cannot take raised as an error naming it. It keeps torch's
attribute names where code reads them: every argument under its torch name (as the tuple torch stores, the
adapter's `tuples`), and the layer's tensors under torch's names (the weight facts: ``weight`` is
``mindspore.nn.LayerNorm``'s ``gamma``) as properties, so the parameters keep MindSpore's names and the
parameter-name maps place them as for the MindSpore layer itself.

Nothing here names an API: which classes there are and what they translate is the tables' data.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from .. import syntax
from ..mapping_tools import GENERAL_PARAMS
from ..mappings import MappingTable
from ..model import Adapter, ApiCall, CallKind, Category, Edit, FactKind, MappingEntry, Target
from ..portcheck.api import load_api
from ..source import SourceText
from ..transforms.base import rewrites
from ..transforms.training_mode import TrainingMode
from ..transforms.param_edits import DEFAULT_DROPPED, VALUE_NEUTRAL, dropped_mapping
from ..transforms.support import MODULE as SUPPORT_MODULE, support_name, support_rewrite, support_source

MODULE = SUPPORT_MODULE  # the module's name: a file of that name at the output tree's root
SHAPE_TUPLE = "shape_tuple"  # the transform (torch2ms.transforms.shape_tuple) of a target that takes a shape as a tuple


@dataclass(frozen=True)
class Layer:
    """One torch layer class the support module defines: its torch API, the class name and the MindSpore base."""

    api: str
    name: str
    base: str


def adapted(entry: MappingEntry | None, version: tuple[int, ...], device: str) -> Target | None:
    """The MindSpore class the support module's layer for `entry` derives from, or None when it has none."""
    if entry is None or entry.adapter is None:
        return None
    target = entry.target_for(version, device)
    if target is None or not target.api.startswith("mindspore.") or not target.api.rpartition(".")[2][:1].isupper():
        return None
    return target


def layers(table: MappingTable, version: tuple[int, ...], device: str) -> list[Layer]:
    """The layers of the support module for this MindSpore version and device, by class name."""
    out = []
    for entry in table.entries.values():
        target = adapted(entry, version, device)
        if target is not None:
            out.append(Layer(entry.api, entry.api.rpartition(".")[2], target.api))
    return sorted(out, key=lambda layer: layer.name)


def _form_code(form: str) -> str | None:
    """A translation form of the tables (``1 - {}``) as an expression of ``value``: arithmetic only."""
    try:
        tree = ast.parse(form.format("value"), mode="eval").body
    except (SyntaxError, ValueError, IndexError):
        return None
    if _default_form(tree):
        return None
    allowed = (ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.operator, ast.unaryop, ast.Load)
    if not all(isinstance(node, allowed) for node in ast.walk(tree)) \
            or any(isinstance(node, ast.Name) and node.id != "value" for node in ast.walk(tree)):
        return None
    return ast.unparse(tree)


def _default_form(tree: ast.expr) -> bool:
    """A form ``{} or mindspore.float32``: the value where it is true, else a MindSpore constant."""
    return isinstance(tree, ast.BoolOp) and isinstance(tree.op, ast.Or) and isinstance(tree.values[0], ast.Name) \
        and tree.values[0].id == "value" and all(_mindspore_constant(v) for v in tree.values[1:])


def _mindspore_constant(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "mindspore"


def default_form_code(form: str) -> str | None:
    """A form ``{} or mindspore.float32`` as an expression of ``value``; None for any other form."""
    try:
        tree = ast.parse(form.format("value"), mode="eval").body
    except (SyntaxError, ValueError, IndexError):
        return None
    return ast.unparse(tree) if _default_form(tree) else None


_PRELUDE = '''"""torch's layer classes with torch's constructors, on the MindSpore layers they map to.

Written by `torch2ms migrate` from its mapping tables ({where}). Each class takes torch's parameters (names,
order, defaults), translates them by the MindSpore layer's parameter facts and keeps torch's attribute names
(the layer's tensors as properties: the parameters keep MindSpore's names). The port uses them where a call's
rewrite cannot be written: as a base class, as a class passed as a value, in a call whose arguments are known
only when it runs. Regenerated by every run of migrate; edits here are lost.
"""

import mindspore

_REQUIRED = object()


def _bind(api, params, args, kwargs):
    """torch's arguments of a call of `api` by name, with torch's defaults for the others."""
    positional = [name for name, _, keyword_only in params if not keyword_only]
    if len(args) > len(positional):
        raise TypeError(f"{{api}}() takes {{len(positional)}} positional arguments but {{len(args)}} were given")
    values = dict(zip(positional, args))
    known = {{name for name, _, _ in params}}
    for name, value in kwargs.items():
        if name not in known:
            raise TypeError(f"{{api}}() got an unexpected keyword argument '{{name}}'")
        if name in values:
            raise TypeError(f"{{api}}() got multiple values for argument '{{name}}'")
        values[name] = value
    for name, default, _ in params:
        if name not in values:
            if default is _REQUIRED:
                raise TypeError(f"{{api}}() missing required argument: '{{name}}'")
            values[name] = default
    return values


def _tuple(value, rank):
    """The tuple torch stores for an int or a sequence (`rank` items; a string stays as it is)."""
    if isinstance(value, str) or value is None:
        return value
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return (value,) * rank


def _refuse(api, name, value, why):
    raise ValueError(f"{{api}}: {{name}}={{value!r}} cannot be translated to MindSpore: {{why}}")


def _translated(api, name, value, translate, why):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _refuse(api, name, value, why)
    return translate(value)


def _as_default(api, name, value, default, why):
    """A torch argument MindSpore lacks: it goes where it has torch's default, else it is refused."""
    if value is not default and value != default:
        _refuse(api, name, value, why)


def _shape(api, name, value):
    shape = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if len(shape) != 1:
        _refuse(api, name, value, "the MindSpore layer normalizes over the last axis only here (its axes are "
                "set from the input's rank, which the constructor does not know)")
    return shape
'''


class _Writer:
    def __init__(self, entry: MappingEntry, adapter: Adapter, target: Target, accepted: set[str] | None,
                 weights: dict[str, str], tensors: set[str]) -> None:
        self.entry, self.api, self.adapter, self.target, self.accepted = entry, entry.api, adapter, target, accepted
        self.weights = weights  # torch's name -> MindSpore's of the layer's tensors on this target
        self.tensors = tensors  # torch's names of the layer's tensors (any form): not arguments torch keeps
        self.lines: list[str] = []

    def facts(self, name: str, kind: FactKind) -> list[object]:
        return [f for f in self.target.params if f.kind is kind and f.torch == name]

    def ms_name(self, name: str) -> str:
        for kind in (FactKind.RENAMED, FactKind.DEFAULT_DIFFERS):
            for fact in self.target.params:
                if fact.kind is kind and fact.torch == name and fact.ms:
                    return fact.ms
        return name

    def takes(self, name: str) -> bool:
        return self.accepted is None or name in self.accepted

    def argument(self, param_name: str, default: object) -> None:
        """The lines that put torch's argument `param_name` into `ms` (MindSpore's keywords), or refuse it."""
        api, value = self.api, f"torch_args[{param_name!r}]"
        add = self.lines.append
        for fact in self.target.params:
            if fact.torch != param_name:
                continue
            if fact.kind is FactKind.UNSUPPORTED_VALUES and fact.values:
                add(f"        if {value} in {tuple(fact.values)!r}:")
                add(f"            _refuse({api!r}, {param_name!r}, {value}, {fact.note or 'MindSpore has no such value'!r})")
            if fact.kind is FactKind.DEFAULT_DIFFERS and fact.default_from:
                add(f"        if {value} is None:")
                add(f"            {value} = torch_args[{fact.default_from!r}]")
        if self.facts(param_name, FactKind.DROPPED):
            if param_name in VALUE_NEUTRAL:  # inplace=True: only whether the input is overwritten is lost
                add(f"        # {param_name}: no MindSpore counterpart (the tables' fact), changes no result: not passed")
            else:  # another value selects another computation (as the fix, which leaves such a call)
                add(f"        _as_default({api!r}, {param_name!r}, {value}, {default!r}, "
                    f"'{self.target.api} has no counterpart (the tables: dropped)')")
            return
        values = dict(self.adapter.values).get(param_name)
        if values is not None:
            table = dict(values)
            add(f"        if {value} not in {table!r}:")
            add(f"            _refuse({api!r}, {param_name!r}, {value}, 'the value has no MindSpore counterpart')")
            add(f"        ms[{self.ms_name(param_name)!r}] = {table!r}[{value}]")
            return
        translated = next((f for f in self.target.params if f.kind is FactKind.TRANSLATED and f.torch == param_name
                           and f.form), None)
        rewrite = self.target.rewrite
        if translated is not None and translated.form is not None \
                and (code := default_form_code(translated.form)) is not None:
            add(f"        ms[{translated.ms or param_name!r}] = " + code.replace("value", value, 1))
        elif translated is not None and translated.form is not None:
            code = _form_code(translated.form)
            if code is None:
                raise ValueError(f"{self.api}: the translation form {translated.form!r} is not arithmetic")
            why = translated.note or "no MindSpore value"
            add(f"        ms[{translated.ms or param_name!r}] = _translated({api!r}, {param_name!r}, {value}, "
                f"lambda value: {code}, {why!r})")
        elif rewrite is not None and rewrite.transform == SHAPE_TUPLE and rewrite.arg("param") == param_name:
            add(f"        ms[{self.ms_name(param_name)!r}] = _shape({api!r}, {param_name!r}, {value})")
        elif self.facts(param_name, FactKind.SEMANTICS_DIFFER) or not self.takes(self.ms_name(param_name)):
            why = next((f.note for f in self.target.params if f.kind is FactKind.SEMANTICS_DIFFER
                        and f.torch == param_name), "") or f"{self.target.api} has no such parameter"
            if param_name in GENERAL_PARAMS:
                add(f"        # {param_name}: torch's placement, which MindSpore takes from its context: not passed")
                return
            add(f"        _as_default({api!r}, {param_name!r}, {value}, {default!r}, {why!r})")
            if self.takes(self.ms_name(param_name)):
                add(f"        ms[{self.ms_name(param_name)!r}] = {value}")
        elif param_name in DEFAULT_DROPPED:  # MindSpore's own default where torch's is passed (dtype=None)
            add(f"        if {value} not in {tuple(DEFAULT_DROPPED[param_name])!r}:")
            add(f"            ms[{self.ms_name(param_name)!r}] = {value}")
        else:
            add(f"        ms[{self.ms_name(param_name)!r}] = {value}")

    def write(self, name: str) -> list[str]:
        adapter, target = self.adapter, self.target
        params = tuple((p.name, "_REQUIRED" if p.required else repr(p.default), p.kw_only) for p in adapter.params)
        shown = ", ".join(p.name if p.required else f"{p.name}={p.default!r}" for p in adapter.params)
        constant = f"_{name.upper()}_PARAMS"
        add = self.lines.append
        add(f"{constant} = ({', '.join(f'({n!r}, {d}, {k!r})' for n, d, k in params)}{',' if len(params) == 1 else ''})")
        add("")
        add("")
        add(f"class {name}({target.api}):")
        add(f'    """{self.api}({shown}) on {target.api}."""')
        add("")
        add("    def __init__(self, *args, **kwargs):")
        add(f"        torch_args = _bind({self.api!r}, {constant}, args, kwargs)")
        add("        ms = {}")
        for param in adapter.params:
            self.argument(param.name, None if param.required else param.default)
        for fact in target.params:  # MindSpore's own parameters, at torch's behaviour
            if fact.kind is FactKind.DEFAULT_DIFFERS and fact.torch is None and fact.ms:
                add(f"        ms.setdefault({fact.ms!r}, {fact.torch_default!r})")
        add("        super().__init__(**ms)")
        if any(rewrite.transform == TrainingMode.name for rewrite, _ in rewrites(self.entry, target)):
            add("        self.set_train()  # torch's layer starts in training mode, a MindSpore Cell in inference mode")
        tuples = set(adapter.tuples)
        for param in adapter.params:
            if param.name in self.tensors or param.name in GENERAL_PARAMS or param.name == "dtype":
                continue  # the layer's tensors (properties below) and placement are not stored by torch
            if self.facts(param.name, FactKind.DROPPED) and self.accepted is not None and param.name in self.accepted:
                continue  # not passed, and the MindSpore layer keeps its own (its construct reads it: SiLU's inplace)
            value = f"torch_args[{param.name!r}]"
            if param.name in tuples:
                value = f"_tuple({value}, {adapter.rank or 1})"
            add(f"        self.{param.name} = {value}")
        for torch_name, ms_name in sorted(self.weights.items()):
            if torch_name != ms_name:
                add("")
                add("    @property")
                add(f"    def {torch_name}(self):")
                add(f'        """torch\'s {torch_name}: MindSpore\'s {ms_name}."""')
                add(f"        return self.{ms_name}")
        return self.lines


def support_text(table: MappingTable, version: tuple[int, ...], device: str) -> str:
    """The support module's text for this MindSpore version and device."""
    api = load_api()
    where = f"MindSpore {'.'.join(map(str, version))}, device {device}"
    parts = [_PRELUDE.format(where=where)]
    for layer in layers(table, version, device):
        entry = table.entries[layer.api]
        target = adapted(entry, version, device)
        assert target is not None and entry.adapter is not None
        found = api.name(target.api)
        accepted = {p.name for p in found.signature.params} if found is not None and found.signature is not None \
            and not found.signature.accepts_var_keyword() else None
        form = entry.weight_form(target.api)
        weights = {p.torch: p.ms for p in form.params if p.torch and p.ms and "{" not in p.torch} \
            if form is not None else {}
        tensors = {p.torch for f in entry.weights for p in f.params if p.torch}
        parts.append("\n".join(_Writer(entry, entry.adapter, target, accepted, weights, tensors)
                                .write(layer.name)))
    return "\n\n".join(parts) + "\n"


def module_text(table: MappingTable, version: tuple[int, ...], device: str) -> str:
    """The whole support module: the torch-signature layers (`support_text`) and, after them, the classes of
    the tables' static module (src/torch2ms/data/t2ms_support.py: torch's Adam, an Embedding whose padding row
    does not train), whose own docstring the layers' prelude stands for."""
    static = support_source(MODULE) or ""
    body = ast.parse(static).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        static = "\n".join(static.splitlines()[body[0].end_lineno or 0:]).lstrip("\n")
    return support_text(table, version, device) + ("\n\n" + static if static else "")


def import_name(roots: Iterable[str], out: str | None) -> str:
    """The dotted name the files of a tree import the support module by: inside the package that a single folder
    argument is (its ``__init__.py``; ``PKG.t2ms_support``), else the module at the tree's root, which runs
    with that root on the module path."""
    folders = [r for r in roots if os.path.isdir(r)]
    roots = list(roots)
    if len(roots) == 1 and folders and os.path.isfile(os.path.join(folders[0], "__init__.py")):
        base = out if out is not None else folders[0]
        return f"{os.path.basename(os.path.normpath(os.path.abspath(base)))}.{MODULE}"
    return MODULE


def standing_class(entry: MappingEntry | None, version: tuple[int, ...], device: str) -> str | None:
    """The support module's class (``FrozenBatchNorm2d``) that stands for every use of `entry`'s API: its `support`
    rewrite names a class for any call (no `given`, no `fallback`; `missing_only` where the entry has no form for
    the version and device), so the API named as a type (``isinstance(m, FrozenBatchNorm2d)``) or passed as a
    value is that class too; None otherwise."""
    rewrite = support_rewrite(entry, version, device)
    if entry is None or rewrite is None or rewrite.arg("given", ()) or rewrite.arg("fallback", False):
        return None
    if rewrite.arg("missing_only", False) and entry.category_for(version, device) is not Category.MISSING:
        return None
    name = str(rewrite.arg("name", "")).rpartition(".")[2]
    return name if name[:1].isupper() else None


def _function_names(table: MappingTable, version: tuple[int, ...], device: str) -> set[str]:
    """The last names of the torch APIs whose entries (or their targets for the version and device) name a
    function (not a class) of the support module."""
    out = set()
    for entry in table.entries.values():
        rewrite = support_rewrite(entry, version, device)
        if rewrite is not None \
                and not str(rewrite.arg("name", "")).rpartition(".")[2][:1].isupper():
            out.add(entry.api.rpartition(".")[2])
    return out


def functions(text: str, table: MappingTable, version: tuple[int, ...], device: str,
              module: str, keep: Collection[str] = ()) -> tuple[str, list[str]]:
    """`text` (a port, after the fix engine) with each call of a torch function that the tables write as a
    function of the support module (``torch.einsum(...)`` -> ``t2ms_support.einsum(...)``, the arguments as they
    are). Written after the fix engine, which rewrote the calls around it knowing the torch function's result (a
    tensor: ``.softmax(dim=-1)`` on it becomes MindSpore's) and left this call (its fix has no form to write).
    The APIs in `keep` stay as they are (a load of a file the data-loader pass saved as a MindSpore checkpoint).
    Returns (text, "line: what" for each change)."""
    from ..fix import apply_edits
    from ..model import Confidence
    from ..resolve import resolve_module

    names = _function_names(table, version, device)
    if not any(name in text for name in names):
        return text, []
    source = SourceText(text)
    edits, notes = [], []
    for call in resolve_module(syntax.parse(text), table, source).calls:
        if call.api in keep:
            continue
        if call.kind is CallKind.ATTRIBUTE and call.confidence is Confidence.HIGH \
                and call.api.rpartition(".")[2] in names:
            # the function as a value (``collate_fn = default_collate``): called later with torch's arguments
            name = _function_value(table.lookup(call.api), version, device)
            if name is not None:
                edits.append(Edit(call.span, f"{module}.{name.partition('.')[2]}"))
                notes.append(f"{call.span.start_line}: {call.api} -> {module}.{name.partition('.')[2]} (a value)")
            continue
        if call.kind is not CallKind.CALL or call.confidence is not Confidence.HIGH or call.func_span is None \
                or call.api.rpartition(".")[2] not in names:
            continue
        entry = table.lookup(call.api)
        name = support_name(call, entry, version, device)
        if name is not None:
            edits.append(Edit(call.func_span, f"{module}.{name.partition('.')[2]}"))
            notes.append(f"{call.span.start_line}: {call.api} -> {module}.{name.partition('.')[2]}")
    return (apply_edits(text, edits), notes) if edits else (text, [])


def _function_value(entry: MappingEntry | None, version: tuple[int, ...], device: str) -> str | None:
    """The support module's function (``t2ms_support.default_collate``) that stands for `entry`'s torch function
    read as a value: its `support` rewrite names a function for every call (no `given`, `fallback` or
    `missing_only`); None otherwise."""
    rewrite = support_rewrite(entry, version, device)
    if rewrite is None or any(rewrite.arg(key, False) for key in ("given", "fallback", "missing_only")):
        return None
    name = str(rewrite.arg("name", ""))
    return name if not name.rpartition(".")[2][:1].isupper() and support_source(name.partition(".")[0]) else None


PARTIAL = "functools.partial"  # a class given to it is called later, with arguments the rewrite cannot see


def _parents(tree: ast.Module) -> dict[int, ast.AST]:
    return {id(child): node for node in syntax.walk(tree) for child in ast.iter_child_nodes(node)}


def _in_annotation_or_type(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """Inside an annotation, a comparison or the class argument of isinstance / issubclass (a type, not a value
    to build)."""
    child: ast.AST = node
    parent = parents.get(id(child))
    while parent is not None:
        if isinstance(parent, ast.arg) and parent.annotation is child \
                or isinstance(parent, ast.AnnAssign) and parent.annotation is child \
                or isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and parent.returns is child:
            return True
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) \
                and parent.func.id in ("isinstance", "issubclass") and child in parent.args[1:] \
                or isinstance(parent, ast.Compare):  # `type(m) is nn.GELU`: a type, as isinstance's
            return True
        if isinstance(parent, (ast.stmt, ast.Lambda)):
            return False
        child, parent = parent, parents.get(id(parent))
    return False


def _class_bases(tree: ast.Module, aliases: dict[str, str]) -> list[list[str | None]]:
    """The qualified name of each base of each class of `tree` (None: not an imported name), in walk order."""
    from ..portcheck.names import dotted

    return [[dotted(base, aliases) for base in node.bases] for node in syntax.walk(tree) if isinstance(node, ast.ClassDef)]


def _value_edits(tree: ast.Module, aliases: dict[str, str], src: SourceText, table: MappingTable,
                 version: tuple[int, ...], device: str, module: str, skip: set[int],
                 placed: Collection[tuple[int, int]] = ()) -> tuple[list[Edit], list[str]]:
    """The edits that name the support module's layer for each torch layer class (one with a layer there) that
    `tree` uses as a value (``act_layer=nn.ReLU``, ``partial(nn.Conv2d, kernel_size=1)``, ``x if c else
    nn.Linear``) or calls with unpacked arguments (``nn.Conv2d(i, o, k, **kwargs)``); not a type (an
    annotation, isinstance's classes), a member (``nn.Conv2d.forward``), a call whose arguments bind, a call
    at a position of `placed` (line, column of its callee) or a node of `skip`. Returns (edits, "line: what" for
    each)."""
    from ..portcheck.names import dotted

    parents = _parents(tree)
    edits: list[Edit] = []
    notes: list[str] = []
    for node in syntax.walk(tree):
        if not isinstance(node, (ast.Name, ast.Attribute)) or not isinstance(node.ctx, ast.Load):
            continue
        api = dotted(node, aliases)
        entry = table.lookup(api) if api is not None and api.split(".")[0] in table.roots else None
        standing = standing_class(entry, version, device)
        if api is None or entry is None or (standing is None and adapted(entry, version, device) is None):
            continue
        parent = parents.get(id(node))
        if isinstance(parent, ast.Attribute):
            continue  # a member of the class (``nn.Conv2d.forward``), not the class
        if standing is not None:  # every use of the API is the support class: a type or a value too
            if not (isinstance(parent, ast.Call) and parent.func is node):  # (a call: the structural rewrite's)
                edits.append(Edit(src.span(node), f"{module}.{standing}"))
                notes.append(f"{node.lineno}: {api} as a type or value -> {module}.{standing}")
            continue
        if id(node) in skip or _in_annotation_or_type(node, parents):
            continue
        elif isinstance(parent, ast.Call) and parent.func is node:
            if not any(isinstance(a, ast.Starred) for a in parent.args) and not any(k.arg is None
                                                                                   for k in parent.keywords):
                continue  # its arguments bind: the fix's rewrite (or its finding)
            if (src.span(node).start_line, src.span(node).start_col) in placed:
                continue  # only a caller's placement unpacked (`**dd`, device and dtype): the fix drops it
            what = "called with unpacked arguments"
        elif isinstance(parent, ast.Call) and parent.args and parent.args[0] is node \
                and dotted(parent.func, aliases) == PARTIAL:
            what = "in a partial"
        else:
            what = "as a value"
        edits.append(Edit(src.span(node), f"{module}.{api.rpartition('.')[2]}"))
        notes.append(f"{node.lineno}: {api} {what} -> {module}.{api.rpartition('.')[2]}")
    return edits, notes


def values(text: str, table: MappingTable, version: tuple[int, ...], device: str, module: str,
           calls: Iterable[ApiCall] = ()) -> tuple[str, list[str]]:
    """`text` (torch code, before any rewrite of its calls) with the support module's layer for every torch
    layer class it uses as a value or calls with unpacked arguments (`_value_edits`; a base class is `adapt`'s,
    after the rewrites, which read the class as torch's subclass). Written first, so that
    whatever later calls the value (``norm_layer(dim, eps=1e-6, **dd)``, a caller's own class too) gets a
    class that takes torch's arguments: the rewrites after this one no longer see a torch class there, neither
    at the value nor where it is called. `calls`: the scan's calls of `text`; one whose unpacked mappings hold
    only a caller's placement (``nn.Linear(a, b, **dd)``, ``dd = {'device': device, 'dtype': dtype}``) is the
    fix's, which drops them. Returns (text, "line: what" for each change)."""
    from ..fix import apply_edits
    from .probes import import_aliases

    tree = syntax.parse(text)
    aliases = import_aliases(tree)
    if not any(value.split(".")[0] in table.roots for value in aliases.values()):
        return text, []
    bases = {id(base) for node in syntax.walk(tree) if isinstance(node, ast.ClassDef) for base in node.bases}
    placed = {(call.func_span.start_line, call.func_span.start_col) for call in calls
              if call.kind is CallKind.CALL and call.func_span is not None and any(a.starred for a in call.args)
              and all(dropped_mapping(a, set()) is not None for a in call.args if a.starred)}
    edits, notes = _value_edits(tree, aliases, SourceText(text), table, version, device, module, bases, placed)
    if not edits:
        return text, []
    return apply_edits(text, edits), sorted(notes, key=lambda n: int(n.partition(":")[0]))


def adapt(text: str, original: str, table: MappingTable, version: tuple[int, ...], device: str,
          module: str) -> tuple[str, list[str]]:
    """`text` (a port, after the fix engine) with the support module's layer (spelled ``MODULE.Name`` from
    `module`, the name the file imports) where the rewrite of a call cannot stand for a torch layer class that
    has one: a base of a class (whatever the fix wrote there: `original`'s base decides; a subclass calls the
    constructor with torch's arguments and reads torch's attributes), and any class still passed as a value or
    called with unpacked arguments (`values` wrote those of the text before the rewrites). A call whose
    arguments bind is the fix's, whatever it decided. Returns (text, "line: what" for each change)."""
    from ..fix import apply_edits
    from .probes import import_aliases

    tree, before = syntax.parse(text), syntax.parse(original)
    aliases, original_aliases = import_aliases(tree), import_aliases(before)
    if not any(value.split(".")[0] in table.roots for value in [*aliases.values(), *original_aliases.values()]):
        return text, []
    src = SourceText(text)
    edits: list[Edit] = []
    notes: list[str] = []
    classes = [node for node in syntax.walk(tree) if isinstance(node, ast.ClassDef)]
    was = _class_bases(before, original_aliases)
    bases: set[int] = set()
    if len(was) == len(classes):  # the rewrites keep the classes: the original's i-th class is the port's
        for cls, names in zip(classes, was):
            for base, api in zip(cls.bases, names) if len(names) == len(cls.bases) else ():
                bases.add(id(base))
                if api is not None and adapted(table.lookup(api), version, device) is not None:
                    name = api.rpartition(".")[2]
                    edits.append(Edit(src.span(base), f"{module}.{name}"))
                    notes.append(f"{base.lineno}: {api} as a base class -> {module}.{name}")
    more, said = _value_edits(tree, aliases, src, table, version, device, module, bases)
    edits += more
    notes += said
    if not edits:
        return text, []
    return apply_edits(text, edits), sorted(notes, key=lambda n: int(n.partition(":")[0]))
