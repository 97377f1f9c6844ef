"""Load, validate and index the YAML mapping tables shipped in ``torch2ms.data`` (the src/torch2ms/data/ folder).

Every table file is validated against ``src/torch2ms/data/schema.yaml`` (JSON Schema), ``meta.yaml``
against ``meta_schema.yaml`` and ``readiness.yaml`` (the readiness checks' API lists) against
``readiness_schema.yaml``; an error names the file, the line and the key. The result is a
read-only `MappingTable`.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .data import folder as data_folder
from .files import user_cache_dir
from .model import (
    Adapter, AdapterParam, Category, Device, DynamicArg, DynamicShape, DynCondition, DynRule, Effort, Example, FactKind, MappingEntry,
    ParamFact, Returns, Rewrite, ShapeResult, Structure, StructureRule, Target, TargetChoice, WeightForm, WeightParam, WrittenAs,
)
from .model import __file__ as model_file

if TYPE_CHECKING:
    import jsonschema
    import yaml

# yaml and jsonschema are imported only to build the table from its YAML (a compiled copy is loaded
# otherwise, see load_table): a scan starts without them.
READINESS_FILE = "readiness.yaml"  # the readiness checks' API lists, validated by readiness_schema.yaml


class MappingError(Exception):
    """A problem in a mapping file, located by file, line and key."""

    def __init__(self, file: str, line: int | None, key: str, reason: str) -> None:
        self.file = file
        self.line = line
        self.key = key
        self.reason = reason
        where = f"{file}:{line}" if line else file
        super().__init__(f"{where}: {key}: {reason}" if key else f"{where}: {reason}")


class _LineDict(dict):  # type: ignore[type-arg]
    line: int = 0
    key_lines: dict[Any, int]


class _LineList(list):  # type: ignore[type-arg]
    line: int = 0
    item_lines: list[int]


def _base_loader() -> type:
    import yaml

    base: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return base


@functools.cache
def _loader_class() -> type:
    """A safe YAML loader that remembers lines and rejects duplicate keys."""
    loader: type = type("_Loader", (_base_loader(),), {"file_name": "<yaml>"})
    loader.add_constructor("tag:yaml.org,2002:map", _construct_map)  # type: ignore[attr-defined]
    loader.add_constructor("tag:yaml.org,2002:seq", _construct_seq)  # type: ignore[attr-defined]
    return loader


def _construct_map(loader: Any, node: yaml.MappingNode) -> Iterator[_LineDict]:
    data = _LineDict()
    data.line = node.start_mark.line + 1
    data.key_lines = {}
    yield data
    loader.flatten_mapping(node)
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if isinstance(key, (list, dict)):  # `? [a, b]` / `? {a: 1}`: valid YAML, never a valid table key
            raise MappingError(loader.file_name, key_node.start_mark.line + 1, "",
                               "a key must be a plain value, not a list or a mapping")
        if key in data.key_lines:
            raise MappingError(
                loader.file_name, key_node.start_mark.line + 1, str(key),
                f"duplicate key (first at line {data.key_lines[key]})",
            )
        data.key_lines[key] = key_node.start_mark.line + 1
        data[key] = loader.construct_object(value_node, deep=True)


def _construct_seq(loader: Any, node: yaml.SequenceNode) -> Iterator[_LineList]:
    data = _LineList()
    data.line = node.start_mark.line + 1
    data.item_lines = [child.start_mark.line + 1 for child in node.value]
    yield data
    data.extend(loader.construct_object(child, deep=True) for child in node.value)


def load_yaml(text: str, file_name: str) -> Any:
    import yaml

    loader = _loader_class()(text)
    loader.file_name = file_name
    try:
        return loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        raise MappingError(file_name, line, "", f"invalid YAML: {exc.problem or exc}") from None
    except yaml.YAMLError as exc:  # e.g. ReaderError: control characters, which carries a position, not a mark
        position = getattr(exc, "position", None)
        line = text[:position].count("\n") + 1 if isinstance(position, int) else None
        reason = getattr(exc, "reason", None) or str(exc).splitlines()[0]
        raise MappingError(file_name, line, "", f"invalid YAML: {reason}") from None
    finally:
        loader.dispose()


def _locate(doc: Any, path: Iterable[Any]) -> tuple[int | None, str]:
    """The line of the deepest element on `path` and the path written as a key."""
    line = getattr(doc, "line", None)
    key = ""
    node = doc
    for step in path:
        if isinstance(node, _LineDict):
            line = node.key_lines.get(step, line)
            key = f"{key}.{step}" if key else str(step)
        elif isinstance(node, _LineList) and isinstance(step, int):
            if step < len(node.item_lines):
                line = node.item_lines[step]
            key = f"{key}[{step}]"
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            break
    return line, key


def _schema_error(file_name: str, doc: Any, error: jsonschema.ValidationError) -> MappingError:
    # Report the most specific error of a oneOf/anyOf group.
    import jsonschema

    best = jsonschema.exceptions.best_match([error])
    path = list(best.absolute_path)
    instance = best.instance
    if best.validator == "additionalProperties" and isinstance(instance, _LineDict):
        allowed = set(best.schema.get("properties", {}))
        unknown = [k for k in instance if k not in allowed]
        if unknown:
            line, key = _locate(doc, path + [unknown[0]])
            return MappingError(file_name, line, key, f"unknown key '{unknown[0]}'")
    line, key = _locate(doc, path)
    return MappingError(file_name, line, key or "(top)", best.message)


@functools.cache
def _validator(name: str) -> jsonschema.protocols.Validator:
    import jsonschema
    import yaml

    text = data_folder().joinpath(name).read_text(encoding="utf-8")
    schema = yaml.load(text, Loader=_base_loader())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _validated(text: str, file_name: str, schema: str) -> Any:
    """The YAML document of `text`, valid against the JSON Schema `schema`; else a MappingError naming the file."""
    doc = load_yaml(text, file_name)
    error = next(iter(_validator(schema).iter_errors(doc)), None)
    if error is not None:
        raise _schema_error(file_name, doc, error)
    return doc


def parse_version(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in str(text).split("."))
    except ValueError:
        raise ValueError(f"not a version: {text!r} (expected e.g. 2.10)") from None


@functools.lru_cache(maxsize=1)
def supported_versions() -> tuple[str, ...]:
    """The MindSpore versions the tables describe (meta.yaml), oldest first."""
    root = data_folder()
    return _meta(root.joinpath("meta.yaml").read_text(encoding="utf-8"), "meta.yaml").mindspore_versions


def check_target_version(text: str) -> str:
    """`text` when it names a MindSpore version the tables describe (X.Y or X.Y.Z, from the first
    release of the oldest listed version's series, whose older spellings the tables carry as targets
    `until` 2.3, to the newest listed one); else a ValueError naming the range and the nearest version."""
    import difflib

    wanted = parse_version(text)
    known = supported_versions()
    oldest, newest = (parse_version(known[0])[0], 0), parse_version(known[-1])
    if len(wanted) in (2, 3) and oldest <= wanted[:2] <= newest[:2]:
        return text.strip()
    near = difflib.get_close_matches(text.strip(), known, n=1, cutoff=0.0)
    hint = f"; did you mean {near[0]}?" if near else ""
    raise ValueError(f"MindSpore {text.strip()} is not a version the mapping tables describe "
                     f"(supported: {oldest[0]}.{oldest[1]} to {known[-1]}){hint}")


def _params(raw: list[dict[str, Any]] | None) -> tuple[ParamFact, ...]:
    """The parameter facts of a target; a fact without a `position` takes the one another fact of the same
    torch parameter gives (one binding of the call serves every fact of a parameter)."""
    positions = {p["torch"]: p["position"] for p in raw or () if "torch" in p and "position" in p}
    return tuple(
        ParamFact(
            kind=FactKind(p["kind"]),
            torch=p.get("torch"),
            ms=p.get("ms"),
            torch_default=p.get("torch_default"),
            ms_default=p.get("ms_default"),
            values=tuple(tuple(v) if isinstance(v, list) else v for v in p.get("values", ())),
            note=p.get("note", ""),
            position=p.get("position", positions.get(p.get("torch", ""))),
            default_from=p.get("default_from"),
            from_position=p.get("from_position"),
            form=p.get("form"),
            by_keyword=bool(p.get("by_keyword", False)),
            raises=bool(p.get("raises", False)),
            types=tuple(p.get("types", ())),
            covers=tuple(p.get("covers", ())),
            result_dtype=(p["result_dtype"]["torch"], p["result_dtype"]["ms"]) if "result_dtype" in p else None,
        )
        for p in raw or ()
    )


def _example(raw: dict[str, Any]) -> Example:
    return Example(
        torch=raw["torch"],
        mindspore=raw["mindspore"],
        inputs=dict(raw.get("inputs", {})),
        extra={k: v for k, v in raw.items() if k not in ("torch", "mindspore", "inputs")},
    )


def param_from_json(data: Mapping[str, Any]) -> WeightParam:
    """One weight fact of a table (a `weights` form's param, as JSON or YAML gives it)."""
    return WeightParam(torch=data.get("torch"), ms=data.get("ms"),
                       transform=tuple((k, tuple(v) if isinstance(v, list) else v)
                                       for k, v in (data.get("transform") or {}).items()),
                       layer=data.get("layer"), ms_layer=data.get("ms_layer"), note=str(data.get("note") or ""))


def _weights(raw: list[dict[str, Any]] | None) -> tuple[WeightForm, ...]:
    return tuple(
        WeightForm(
            ms=form["ms"],
            params=tuple(param_from_json(p) for p in form.get("params", ())),
            example=_example(form["example"]) if "example" in form else None,
            note=form.get("note", ""),
        )
        for form in raw or ()
    )


def _frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple((str(k), _frozen(v)) for k, v in value.items())
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def _rewrite(raw: dict[str, Any] | None) -> Rewrite | None:
    if raw is None:
        return None
    return Rewrite(str(raw["transform"]), tuple(sorted((str(k), _frozen(v)) for k, v in raw.items() if k != "transform")))


def _structure(raw: dict[str, Any] | None) -> Structure | None:
    if raw is None:
        return None
    return Structure(StructureRule(raw["rule"]), tuple(sorted((str(k), _frozen(v)) for k, v in raw.items()
                                                              if k != "rule")))


def _adapter(raw: dict[str, Any] | None) -> Adapter | None:
    if raw is None:
        return None
    params = tuple(AdapterParam(str(p["name"]), "default" not in p, p.get("default"), bool(p.get("kw_only", False)))
                   for p in raw["params"])
    values = tuple(sorted((str(name), tuple((a, b) for a, b in pairs)) for name, pairs in raw.get("values", {}).items()))
    return Adapter(params, tuple(raw.get("tuples", ())), raw.get("rank"), values)


def _entry(raw: dict[str, Any], source: str) -> MappingEntry:
    targets = tuple(
        Target(
            api=t["api"],
            since=parse_version(t["since"]) if "since" in t else None,
            until=parse_version(t["until"]) if "until" in t else None,
            category=Category(t["category"]) if "category" in t else None,
            params=_params(t.get("params")),
            devices=tuple(Device(d) for d in t.get("devices", ())),
            no_kernel=tuple(Device(d) for d in t.get("no_kernel", ())),
            verified=tuple(Device(d) for d in t.get("verified", ())),
            written_as=WrittenAs(t["written_as"]) if "written_as" in t else None,
            rewrite=_rewrite(t.get("rewrite")),
            forward=tuple((str(k), str(v)) for k, v in (t.get("forward") or {}).items()),
            attributes=tuple((str(k), None if v is None else str(v)) for k, v in (t.get("attributes") or {}).items()),
            built_attributes=tuple(str(a) for a in t.get("built_attributes", ())),
            differing_attributes=tuple((str(k), str(v)) for k, v in (t.get("differing_attributes") or {}).items()),
            forward_defaults=tuple((str(d["torch"]), int(d["position"]), str(d["form"]))
                                   for d in t.get("forward_defaults", ())),
        )
        for t in raw.get("ms", ())
    )
    dyn = raw.get("dynamic_shape")
    dynamic = None
    if isinstance(dyn, dict):
        dynamic = DynamicShape(
            always=bool(dyn.get("always", False)),
            when=tuple(DynCondition(c) for c in dyn.get("when", ())),
            static_with=tuple(dyn.get("static_with", ())),
            args=tuple(DynamicArg(a["arg"], a.get("position"), DynRule(a["rule"]), bool(a.get("varargs", False)))
                       for a in dyn.get("args", ())),
            what=dyn.get("what", ""), remedy=dyn.get("remedy", ""), note=dyn.get("note", ""))
    examples = tuple(_example(e) for e in raw.get("examples", ()))
    return MappingEntry(
        api=raw["api"],
        category=Category(raw.get("category", "equivalent")),
        targets=targets,
        note=raw.get("note", ""),
        doc=raw.get("doc"),
        examples=examples,
        dynamic_shape=dynamic,
        shape_result=ShapeResult(raw["shape_result"]) if "shape_result" in raw else None,
        inplace_of=raw.get("inplace_of"),
        returns=Returns(raw["returns"]) if "returns" in raw else None,
        not_runnable=str(raw.get("not_runnable") or ""),
        source=source,
        weights=_weights(raw.get("weights")),
        effort=Effort(raw["effort"]) if "effort" in raw else None,
        rewrite=_rewrite(raw.get("rewrite")),
        structure=_structure(raw.get("structure")),
        adapter=_adapter(raw.get("adapter")),
    )


@dataclass(frozen=True)
class Meta:
    """Table-wide facts: version, known MindSpore versions, torch namespaces."""

    version: str
    mindspore_versions: tuple[str, ...]
    default_target: str
    modules: frozenset[str]
    instance_bases: dict[str, str]
    tensor_classes: frozenset[str]
    non_tensor_functions: frozenset[str]
    non_tensor_methods: frozenset[str]
    ambiguous_methods: frozenset[str]
    named_tuple_fields: frozenset[str] = frozenset()
    tensor_valued_attributes: frozenset[str] = frozenset()  # x.T, x.grad: tensors
    layer_tensor_attributes: frozenset[str] = frozenset()  # conv.weight: a tensor
    module_self_methods: frozenset[str] = frozenset()  # net.to(...): the net
    proof_methods: frozenset[str] = frozenset()  # w.uniform_(a, b): only a tensor has it
    callbacks: dict[str, Callback] = field(default_factory=dict)  # net.apply(init): init(m) gets a module


@dataclass(frozen=True)
class Callback:
    """A function argument an API calls back: which argument (the first positional, or by `keyword`) and what it
    passes it, in order: ``tensor`` or a torch class (``torch.nn.Module``) whose instance it passes."""

    keyword: str
    passes: tuple[str, ...]


@dataclass(frozen=True)
class Inventory:
    """Names of torch's public API (generated from torch 2.13 by scripts/gen_inventory.py)."""

    torch_version: str
    tensor_members: frozenset[str]
    module_members: frozenset[str]
    top_level: frozenset[str]
    namespaces: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class ReadinessApis:
    """The torch APIs the migration-readiness checks (TMS3xx) look for (readiness.yaml)."""

    second_order_apis: frozenset[str]  # second order with create_graph=True
    always_second_order: frozenset[str]
    sparse_apis: frozenset[str]
    sparse_flag_apis: frozenset[str]  # sparse gradients with sparse=True
    not_modules: frozenset[str]  # torch.nn classes that are not layers
    parameter_apis: frozenset[str]
    container_targets: dict[tuple[str, str], str]  # (element kind, container shape) -> MindSpore container
    module_hooks: frozenset[str]  # method names of torch.nn.Module
    parallel_apis: frozenset[str]
    amp_prefixes: tuple[str, ...]
    data_targets: dict[str, str]  # torch data class -> mindspore.dataset class
    clip_apis: frozenset[str]
    seed_apis: frozenset[str]


class Entries(Mapping[str, MappingEntry]):
    """The table's entries by torch API. A compiled table (`load_table`) holds each entry pickled apart and loads
    it when it is first looked up: a start loads none of the ~2,400 entries, a scan those its files use. A
    loaded entry is kept, so the same API always gives the same object."""

    __slots__ = ("_raw", "_loaded")

    def __init__(self, raw: dict[str, bytes], loaded: dict[str, MappingEntry] | None = None) -> None:
        self._raw = raw
        self._loaded = loaded if loaded is not None else {}

    @classmethod
    def of(cls, entries: Mapping[str, MappingEntry]) -> Entries:
        """The entries of a built table, each pickled apart for the compiled copy."""
        if isinstance(entries, Entries):
            return entries
        return cls({api: pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL) for api, entry in entries.items()},
                   dict(entries))

    def __getitem__(self, api: str) -> MappingEntry:
        found = self._loaded.get(api)
        if found is None:
            found = self._loaded[api] = pickle.loads(self._raw[api])
        return found

    def get(self, api: str, default: Any = None) -> Any:  # the lookup of every use a scan finds
        found = self._loaded.get(api)
        if found is None:
            raw = self._raw.get(api)
            if raw is None:
                return default
            found = self._loaded[api] = pickle.loads(raw)
        return found

    def __contains__(self, api: object) -> bool:
        return api in self._raw

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __reduce__(self) -> tuple[Any, tuple[dict[str, bytes]]]:
        return (Entries, (self._raw,))


@dataclass(frozen=True)
class MappingTable:
    entries: Mapping[str, MappingEntry]
    meta: Meta
    inventory: Inventory
    files: tuple[str, ...]
    readiness: ReadinessApis
    digest: str = ""  # of the table's source texts, for caches
    # Top-level packages whose APIs the tables map (torch, torchvision, ...): the resolver tracks
    # imports of these. Derived from the entries, so a new library file needs no code change.
    roots: frozenset[str] = frozenset({"torch"})
    # Module names for the resolver: meta.yaml's torch modules plus, for roots that meta.yaml does
    # not describe, the lowercase package prefixes of the entries (torchvision.transforms, ...).
    modules: frozenset[str] = frozenset()

    def lookup(self, api: str) -> MappingEntry | None:
        return self.entries.get(api)

    def __len__(self) -> int:
        return len(self.entries)

    @functools.cached_property
    def layer_containers(self) -> frozenset[str]:
        """torch's containers of layers (an item of one is a layer): the entries whose structural rewrite is
        `cell_container`."""
        return frozenset(api for api, entry in self.entries.items()
                         if entry.structure is not None and entry.structure.rule is StructureRule.CELL_CONTAINER)

    @functools.cached_property
    def layer_sequences(self) -> frozenset[str]:
        """The containers of layers whose items are iterated (and indexed) in order: those built empty as a list
        (`empty: "[]"`; a dict-like container iterates over its names)."""
        return frozenset(api for api in self.layer_containers
                         if (structure := self.entries[api].structure) is not None and structure.arg("empty") == "[]")

    def __getstate__(self) -> dict[str, Any]:
        """Pickled with its entries apart (`Entries`) and the sets derived from all of them, so that loading the
        compiled copy reads no entry."""
        state = dict(self.__dict__, entries=Entries.of(self.entries))
        state["layer_containers"], state["layer_sequences"] = self.layer_containers, self.layer_sequences
        return state

    def view(self, version: tuple[int, ...], device: str | None) -> TableView:
        """The tables as one scan sees them: for MindSpore `version` on `device` (None: the preferred forms,
        whatever runs where)."""
        return TableView(self, version, Device(device) if device is not None else None)


@dataclass(frozen=True)
class TableView:
    """The tables for one MindSpore version and device, chosen once per scan and passed to every part of
    it: the target of an entry is chosen once (`MappingEntry.choose`) and shared by the finding, its fix and
    the other checks, so no part can fall back to another device."""

    table: MappingTable
    version: tuple[int, ...]
    device: Device | None
    _choices: dict[str, TargetChoice] = field(default_factory=dict, compare=False, repr=False)

    def lookup(self, api: str) -> MappingEntry | None:
        return self.table.entries.get(api)

    def choose(self, entry: MappingEntry) -> TargetChoice:
        choice = self._choices.get(entry.api)
        if choice is None or self.table.entries.get(entry.api) is not entry:
            choice = entry.choose(self.version, self.device)
            if self.table.entries.get(entry.api) is entry:
                self._choices[entry.api] = choice
        return choice

    def target(self, entry: MappingEntry) -> Target | None:
        return self.choose(entry).target

    def category(self, entry: MappingEntry) -> Category:
        """The entry's category here (`MappingEntry.category_for`)."""
        return entry.category_of(self.choose(entry))


def _resolve_inplace(entries: dict[str, MappingEntry]) -> dict[str, MappingEntry]:
    """Give an in-place entry its base's facts where it does not state its own (an entry marked
    missing keeps that verdict: MindSpore has the out-of-place op but no in-place form of it)."""
    out = dict(entries)
    for api, entry in entries.items():
        if entry.inplace_of is None:
            continue
        base = entries.get(entry.inplace_of)
        if base is None:
            file, _, line = entry.source.rpartition(":")
            raise MappingError(file, int(line) if line.isdigit() else None, "inplace_of",
                               f"'{entry.inplace_of}' is not an entry of the tables")
        if entry.targets or entry.category is Category.MISSING:
            if entry.dynamic_shape is None and base.dynamic_shape is not None:  # the same shapes either way
                out[api] = replace(entry, dynamic_shape=base.dynamic_shape)
            continue  # its own targets, or its own verdict: no in-place form (assign the result)
        out[api] = MappingEntry(
            api=api,
            category=base.category,
            # the base's forms, but not its measurements: the in-place call is other code
            targets=tuple(replace(t, verified=(), no_kernel=()) for t in base.targets),
            note=entry.note or base.note,
            doc=entry.doc or base.doc,
            examples=entry.examples,
            dynamic_shape=entry.dynamic_shape or base.dynamic_shape,
            inplace_of=entry.inplace_of,
            returns=entry.returns or base.returns,
            not_runnable=entry.not_runnable,
            source=entry.source,
            effort=entry.effort,
        )
    return out


def _meta(text: str, file_name: str) -> Meta:
    doc = _validated(text, file_name, "meta_schema.yaml")
    return Meta(
        version=str(doc["version"]),
        mindspore_versions=tuple(str(v) for v in doc["mindspore_versions"]),
        default_target=str(doc["default_target"]),
        modules=frozenset(doc["modules"]),
        instance_bases=dict(doc["instance_bases"]),
        tensor_classes=frozenset(doc["tensor_classes"]),
        non_tensor_functions=frozenset(doc["non_tensor_functions"]),
        non_tensor_methods=frozenset(doc["non_tensor_methods"]),
        ambiguous_methods=frozenset(doc["ambiguous_methods"]),
        named_tuple_fields=frozenset(doc["named_tuple_fields"]),
        tensor_valued_attributes=frozenset(doc["tensor_valued_attributes"]),
        layer_tensor_attributes=frozenset(doc["layer_tensor_attributes"]),
        module_self_methods=frozenset(doc["module_self_methods"]),
        proof_methods=frozenset(doc["proof_methods"]),
        callbacks={api: Callback(str(c["keyword"]), tuple(str(p) for p in c["passes"]))
                   for api, c in (doc.get("callbacks") or {}).items()},
    )


def _readiness(text: str, file_name: str) -> ReadinessApis:
    doc = _validated(text, file_name, "readiness_schema.yaml")
    return ReadinessApis(
        second_order_apis=frozenset(doc["second_order_apis"]),
        always_second_order=frozenset(doc["always_second_order"]),
        sparse_apis=frozenset(doc["sparse_apis"]),
        sparse_flag_apis=frozenset(doc["sparse_flag_apis"]),
        not_modules=frozenset(doc["not_modules"]),
        parameter_apis=frozenset(doc["parameter_apis"]),
        module_hooks=frozenset(doc["module_hooks"]),
        parallel_apis=frozenset(doc["parallel_apis"]),
        clip_apis=frozenset(doc["clip_apis"]),
        seed_apis=frozenset(doc["seed_apis"]),
        amp_prefixes=tuple(doc["amp_prefixes"]),
        container_targets={(kind, shape): str(target) for kind, shapes in doc["container_targets"].items()
                           for shape, target in shapes.items()},
        data_targets={str(k): str(v) for k, v in doc["data_targets"].items()},
    )


def _inventory(text: str) -> Inventory:
    import json  # here: only a table built from its sources reads the inventory

    doc = json.loads(text)
    return Inventory(
        torch_version=doc["torch_version"],
        tensor_members=frozenset(doc["tensor_members"]),
        module_members=frozenset(doc["module_members"]),
        top_level=frozenset(doc["top_level"]),
        namespaces={k: tuple(v) for k, v in doc["namespaces"].items()},
    )


def table_files(directory: Path | None = None) -> list[tuple[str, str]]:
    """(name, text) of every table file, from `directory` or the installed package: the YAML files that state a
    namespace (torch's, a domain library's, einops's)."""
    if directory is not None:
        texts = [(p.name, p.read_text(encoding="utf-8")) for p in sorted(directory.glob("*.yaml"))]
    else:
        root = data_folder()
        names = sorted(p.name for p in root.iterdir() if p.name.endswith(".yaml"))
        texts = [(name, root.joinpath(name).read_text(encoding="utf-8")) for name in names]
    return [(name, text) for name, text in texts if _TABLE_MARK.search(text)]


_TABLE_MARK = re.compile(r"^namespace:", re.MULTILINE)


def parse_table_file(name: str, text: str) -> list[MappingEntry]:
    doc = _validated(text, name, "schema.yaml")
    entries = []
    namespace = doc["namespace"]
    for index, raw in enumerate(doc["entries"]):
        line = doc["entries"].item_lines[index]
        api = raw["api"]
        if not (api == namespace or api.startswith(namespace + ".")):
            raise MappingError(name, line, f"entries[{index}].api",
                               f"'{api}' is outside the file's namespace '{namespace}'")
        entries.append(_entry(raw, f"{name}:{line}"))
    return entries


def build_table(files: list[tuple[str, str]], meta_text: str, inventory_text: str,
                readiness_text: str | None = None) -> MappingTable:
    """The table from its texts; `readiness_text` (readiness.yaml) defaults to the installed one."""
    if readiness_text is None:
        readiness_text = data_folder().joinpath(READINESS_FILE).read_text(encoding="utf-8")
    entries: dict[str, MappingEntry] = {}
    for name, text in files:
        for entry in parse_table_file(name, text):
            previous = entries.get(entry.api)
            if previous is not None:
                file, _, line = entry.source.rpartition(":")
                raise MappingError(file, int(line), "api",
                                   f"duplicate entry '{entry.api}' (first at {previous.source})")
            entries[entry.api] = entry
    _check_sub_layers(entries)
    meta = _meta(meta_text, "meta.yaml")
    return MappingTable(
        entries=_resolve_inplace(entries),
        meta=meta,
        inventory=_inventory(inventory_text),
        files=tuple(name for name, _ in files),
        readiness=_readiness(readiness_text, READINESS_FILE),
        roots=frozenset(api.partition(".")[0] for api in entries) | {"torch"},
        modules=meta.modules | _library_modules(entries, meta.modules),
        digest=hashlib.blake2b("\0".join([meta_text, inventory_text, readiness_text]
                                         + [n + "\0" + t for n, t in files]).encode(), digest_size=12).hexdigest(),
    )


def _check_sub_layers(entries: dict[str, MappingEntry]) -> None:
    """A weight fact that names a sub-layer (layer -> ms_layer) must name a weight form of the tables."""
    for entry in entries.values():
        for form in entry.weights:
            for param in form.params:
                if param.layer is None:
                    continue
                sub = entries.get(param.layer)
                if sub is None or param.ms_layer is None or sub.weight_form(param.ms_layer) is None:
                    file, _, line = entry.source.rpartition(":")
                    raise MappingError(file, int(line), "weights",
                                       f"{entry.api} -> {form.ms}: the sub-layer {param.torch} names "
                                       f"{param.layer} -> {param.ms_layer}, which has no weight facts")


def _library_modules(entries: dict[str, MappingEntry], known: frozenset[str]) -> frozenset[str]:
    """Package prefixes of the entries under roots that `known` (meta.yaml's modules) does not cover."""
    out: set[str] = set()
    for api in entries:
        parts = api.split(".")
        if parts[0] in known:
            continue
        for cut in range(1, len(parts)):
            prefix = ".".join(parts[:cut])
            if not parts[cut - 1][:1].islower() or prefix in entries:
                break
            out.add(prefix)
    return frozenset(out)


@functools.lru_cache(maxsize=8)
def prefilter_words(roots: frozenset[str]) -> tuple[str, ...]:
    """The fewest words such that a text naming any root contains one of them ('torch' covers torchvision)."""
    return tuple(sorted(r for r in roots if not any(o != r and o in r for o in roots)))


@functools.lru_cache(maxsize=4)
def load_table(directory: str | None = None) -> MappingTable:
    """The mapping table from the installed package, or from `directory` (for tests)."""
    root = data_folder()
    meta_text = root.joinpath("meta.yaml").read_text(encoding="utf-8")
    inventory_text = root.joinpath("inventory.json").read_text(encoding="utf-8")
    readiness_text = root.joinpath(READINESS_FILE).read_text(encoding="utf-8")
    files = table_files(Path(directory) if directory else None)
    texts = [meta_text, inventory_text, readiness_text] + [f"{name}\0{text}" for name, text in files]
    return compiled("table", MappingTable, texts, (model_file,),
                    lambda: build_table(files, meta_text, inventory_text, readiness_text))


# Validating ~2,000 entries costs about a second; a compiled copy of a validated
# table, keyed by the table texts and by this loader's own code, loads in milliseconds.
_COMPILED_FORMAT = 2  # 2: the entries pickled apart (`Entries`)
_Compiled = TypeVar("_Compiled")


def compiled(kind: str, cls: type[_Compiled], texts: Sequence[str], modules: Sequence[str],
             build: Callable[[], _Compiled]) -> _Compiled:
    """What `build` makes of data texts it validates (an instance of `cls`), from the compiled copy in the user's
    cache folder when one is there for the same `texts`, this loader's code and the code of `modules` (the files
    of the modules that define what is built); else built, and its compiled copy written for the next start."""
    key = _compiled_key(texts, modules)
    found = _read_compiled(kind, key)
    if isinstance(found, cls):
        return found
    built = build()
    _write_compiled(kind, key, built)
    return built


def _compiled_dir() -> Path:
    return user_cache_dir()


def _compiled_key(texts: Sequence[str], modules: Sequence[str]) -> str:
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{_COMPILED_FORMAT}|{sys.version_info[:2]}".encode())
    for module in (__file__, *modules):
        digest.update(Path(module).read_bytes())
    for text in texts:
        digest.update(text.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _read_compiled(kind: str, key: str) -> object:
    try:
        with open(_compiled_dir() / f"{kind}-{key}.pickle", "rb") as handle:
            return pickle.load(handle)
    except Exception:  # absent, unreadable or stale: rebuild
        return None


def _write_compiled(kind: str, key: str, value: object) -> None:
    folder = _compiled_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        import tempfile  # here: only the start that compiles the data writes it

        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{kind}-", suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, folder / f"{kind}-{key}.pickle")
    except OSError:
        pass  # no writable cache folder: validate on every start


_DOC_ROOT = "https://www.mindspore.cn/docs/en/master/api_python/"
_DOC_DIRS = (
    ("mindspore.mint.", "mint"),
    ("mindspore.ops.", "ops"),
    ("mindspore.nn.", "nn"),
    ("mindspore.Tensor.", "mindspore/Tensor"),
)


def doc_url(entry: MappingEntry | None, target: Target | None) -> str | None:
    """The documentation link of a finding: the entry's own, else the target's API page."""
    if entry is not None and entry.doc:
        return entry.doc
    if target is None:
        return None
    for prefix, folder in _DOC_DIRS:
        if target.api.startswith(prefix):
            return f"{_DOC_ROOT}{folder}/{target.api}.html"
    if target.api.count(".") == 1 and target.api.startswith("mindspore."):
        return f"{_DOC_ROOT}mindspore/{target.api}.html"
    return None
