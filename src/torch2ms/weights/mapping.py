"""The parameter-name map of a ported network: torch state_dict names -> MindSpore parameter names.

`build_map` reads the original torch file and the ported MindSpore file (statically, see
`structure`), walks what each network holds side by side (the same attribute names, the same
container positions) and turns every pair of library layers into entries by the tables' weight
facts (`facts`). Where a part cannot be named statically, the map states a rule instead of
guessing: `one of` (the part is one of several alternatives, told apart by the names of the
tensors found under it when the map is applied) or `unknown` / `no facts` / `missing in the port`
(its tensors stay unplaced, with the reason). The JSON format is documented in docs/weights.md.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from ..mappings import MappingTable
from ..files import MiB
from ..jsonfile import Schema, read_json, write_json
from .facts import Facts, Transform, describe_transform, fill
from .structure import NONE, SIDES, Choice, Container, Instance, Layer, Structure, Unknown, Value, walk

FORMAT = "torch2ms-weight-map"
VERSION = 1
INDEX_NAMES = ("i", "j", "k", "m", "n", "p", "q", "r", "s", "t")  # placeholders of container positions, outermost first


class MapError(Exception):
    """A map that cannot be built or read (names the file and the reason)."""


@dataclass(frozen=True)
class Entry:
    """One torch tensor name (pattern) and where it goes in MindSpore.

    kind: parameter (a tensor of a layer or a Parameter of a class), buffer (a MindSpore buffer:
    not saved in MindSpore checkpoints), tie (the torch name repeats another tensor, `tied_to`, which
    MindSpore keeps once), ms_only (no torch tensor: the MindSpore parameter keeps its initial value).
    `ms` None: MindSpore keeps no such tensor (`note` says why)."""

    torch: str | None
    ms: str | None
    kind: str = "parameter"
    transform: Transform = ()
    source: str = ""  # the weight facts or the class attribute the entry comes from
    note: str = ""
    tied_to: str | None = None
    shape: tuple[int, ...] | None = None  # MindSpore's shape, where known (resolved maps)
    dtype: str | None = None  # MindSpore's dtype, where known (resolved maps), e.g. "float32"
    optional: bool = False  # the layer is built on a condition (torch may hold None there)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"torch": self.torch, "ms": self.ms, "kind": self.kind}
        if self.transform:
            out["transform"] = {k: list(v) if isinstance(v, tuple) else v for k, v in self.transform}
        if self.shape is not None:
            out["shape"] = list(self.shape)
        if self.dtype is not None:
            out["dtype"] = self.dtype
        if self.optional:
            out["optional"] = True
        if self.tied_to:
            out["tied_to"] = self.tied_to
        if self.source:
            out["from"] = self.source
        if self.note:
            out["note"] = self.note
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Entry:
        return cls(torch=data.get("torch"), ms=data.get("ms"), kind=str(data.get("kind") or "parameter"),
                   transform=tuple((k, tuple(v) if isinstance(v, list) else v)
                                   for k, v in (data.get("transform") or {}).items()),
                   source=str(data.get("from") or ""), note=str(data.get("note") or ""), tied_to=data.get("tied_to"),
                   shape=tuple(data["shape"]) if isinstance(data.get("shape"), list) else None,
                   dtype=str(data["dtype"]) if isinstance(data.get("dtype"), str) else None,
                   optional=data.get("optional") is True)


@dataclass(frozen=True)
class Rule:
    """A part of the network (at the prefix `torch` / `ms`) that entries alone cannot name."""

    torch: str
    ms: str | None
    rule: str  # "one of", "unknown", "no facts", "missing in the port"
    reason: str
    options: tuple[Node, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"torch": self.torch, "ms": self.ms, "rule": self.rule, "reason": self.reason}
        if self.options:
            out["options"] = [option.to_json() for option in self.options]
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Rule:
        return cls(torch=str(data["torch"]), ms=data.get("ms"), rule=str(data["rule"]), reason=str(data["reason"]),
                   options=tuple(Node.from_json(o) for o in data.get("options") or ()))


@dataclass(frozen=True)
class Node:
    """Entries and rules, with names relative to where the node sits."""

    entries: tuple[Entry, ...] = ()
    rules: tuple[Rule, ...] = ()
    label: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.label:
            out["label"] = self.label
        out["entries"] = [e.to_json() for e in self.entries]
        out["rules"] = [r.to_json() for r in self.rules]
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Node:
        return cls(entries=tuple(Entry.from_json(e) for e in data.get("entries") or ()),
                   rules=tuple(Rule.from_json(r) for r in data.get("rules") or ()), label=str(data.get("label") or ""))


@dataclass(frozen=True)
class WeightMap:
    """The map of a pair of files: one node per root (a cell class, or a factory call)."""

    torch_source: str
    ported_source: str
    roots: dict[str, Node] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION, "torch_source": self.torch_source,
                "ported_source": self.ported_source,
                "roots": {name: node.to_json() for name, node in self.roots.items()}}

    @classmethod
    def from_json(cls, data: Any, where: str = "map") -> WeightMap:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise MapError(f"{where}: not a torch2ms weight map (no \"format\": \"{FORMAT}\")")
        if data.get("version") != VERSION:
            raise MapError(f"{where}: weight map version {data.get('version')!r} is not supported (expected {VERSION})")
        _check_map(data, Schema(where, MapError))
        roots = {str(name): Node.from_json(node) for name, node in dict(data["roots"]).items()}
        return cls(torch_source=str(data.get("torch_source") or ""),
                   ported_source=str(data.get("ported_source") or ""), roots=roots)


MAX_MAP_BYTES = 64 * MiB
MAX_DIMS = 32  # NumPy's limit
MAX_ELEMENTS = 1 << 34  # a map stating a larger tensor is refused: no checkpoint of one is converted
ENTRY_KINDS = ("parameter", "buffer", "tie", "ms_only")
_PLACEHOLDERS = re.compile(r"\{(\w+)\}")  # as the name patterns write them (weights.facts)


def _check_map(data: dict[str, Any], schema: Schema) -> None:
    """The map's structure, checked before any of it is used: each failure names the key."""
    for key in ("torch_source", "ported_source"):
        schema.string(data.get(key), key, optional=True)
    roots = schema.object(data.get("roots"), "roots")
    for where, node in schema.items(roots, "roots"):
        _check_node(node, where, schema)


def _check_node(node: Any, where: str, schema: Schema) -> None:
    node = schema.object(node, where)
    schema.string(node.get("label"), f"{where}.label", optional=True)
    for at, entry in schema.items(node.get("entries") or [], f"{where}.entries"):
        entry = schema.object(entry, at)
        for key in ("torch", "ms", "tied_to"):
            name = schema.string(entry.get(key), f"{at}.{key}", optional=True)
            for placeholder in _PLACEHOLDERS.findall(name or ""):
                # container positions ({i}, {j}, ...) and the tables' own ({l}: a recurrent layer's number)
                if not placeholder.isidentifier() or len(placeholder) > 16:
                    raise schema.fail(f"{at}.{key}", f"placeholder {{{placeholder}}} is not a name (a placeholder "
                                      "stands for a number: " + ", ".join(f"{{{n}}}" for n in INDEX_NAMES[:3]) + ")")
        kind = entry.get("kind", "parameter")
        if kind not in ENTRY_KINDS:
            raise schema.fail(f"{at}.kind", f"{kind!r} is not one of {', '.join(ENTRY_KINDS)}")
        for key in ("from", "note"):
            schema.string(entry.get(key), f"{at}.{key}", optional=True)
        for step, value in schema.object(entry.get("transform") or {}, f"{at}.transform").items():
            if step == "unsqueeze":
                schema.integer(value, f"{at}.transform.unsqueeze", -MAX_DIMS, MAX_DIMS)
            elif step == "transpose":
                axes = [schema.integer(a, w, 0, MAX_DIMS - 1) for w, a in schema.items(value, f"{at}.transform.transpose")]
                if sorted(axes) != list(range(len(axes))):
                    raise schema.fail(f"{at}.transform.transpose", f"{axes} is not a permutation of the axes")
            else:
                raise schema.fail(f"{at}.transform.{step}", "unknown transform (unsqueeze or transpose)")
        if entry.get("shape") is not None:
            dims = [schema.integer(d, w, 0) for w, d in schema.items(entry["shape"], f"{at}.shape")]
            if len(dims) > MAX_DIMS:
                raise schema.fail(f"{at}.shape", f"{len(dims)} dimensions (at most {MAX_DIMS})")
            if math.prod(dims) > MAX_ELEMENTS:
                raise schema.fail(f"{at}.shape", f"a tensor of {math.prod(dims):,} elements is refused "
                                  f"(at most {MAX_ELEMENTS:,})")
    for at, rule in schema.items(node.get("rules") or [], f"{where}.rules"):
        rule = schema.object(rule, at)
        for key in ("torch", "rule", "reason"):
            schema.string(rule.get(key), f"{at}.{key}")
        schema.string(rule.get("ms"), f"{at}.ms", optional=True)
        for option_at, option in schema.items(rule.get("options") or [], f"{at}.options"):
            _check_node(option, option_at, schema)


def read_map(path: str) -> WeightMap:
    """The weight map in `path`, read as hostile input (`torch2ms.jsonfile`): MapError naming the file and,
    for a map of the wrong structure, the key."""
    return WeightMap.from_json(read_json(path, "map", MapError, limit=MAX_MAP_BYTES), path)


def save_map(weight_map: WeightMap, out_path: str) -> None:
    """Write the map as JSON, atomically."""
    write_json(out_path, weight_map.to_json())


# ---------------------------------------------------------------------------------- pairing
def _join(prefix: str, name: str | None) -> str:
    return f"{prefix}.{name}" if prefix and name else (prefix or name or "")


class _Pairing:
    """Walk a torch value and its MindSpore counterpart together; collect entries and rules."""

    def __init__(self, facts: Facts) -> None:
        self.facts = facts
        self.outer = 0  # container placeholders above the node being built (nested names stay distinct)

    def node(self, t: Value, m: Value, depth: int = 0, label: str = "", outer: int = 0) -> Node:
        entries: list[Entry] = []
        rules: list[Rule] = []
        saved, self.outer = self.outer, outer
        try:
            self._pair(t, m, "", "", depth, entries, rules)
        finally:
            self.outer = saved
        return Node(tuple(entries), tuple(rules), label)

    def _pair(self, t: Value, m: Value, tp: str, mp: str, depth: int, entries: list[Entry], rules: list[Rule]) -> None:
        if isinstance(t, Choice) or isinstance(m, Choice):
            self._choice(t, m, tp, mp, depth, entries, rules)
        elif t == NONE and m == NONE:
            return
        elif isinstance(t, Unknown):
            rules.append(Rule(tp, mp, "unknown", t.reason))
        elif isinstance(m, Unknown):
            rules.append(Rule(tp, mp, "unknown", f"in the port: {m.reason}"))
        elif isinstance(t, Layer) and isinstance(m, Layer):
            self._layer(t.api, m.api, tp, mp, entries, rules)
        elif isinstance(t, Layer) and isinstance(m, Instance) and m.base and not m.params and not any(
                isinstance(v, (Layer, Instance, Container)) for _, child in m.children for v in walk(child)):
            # a class of the port that only derives from a layer (a torch-signature layer of migrate's support
            # module, torch2ms.migrate.support): its tensors are the layer's
            self._layer(t.api, m.base, tp, mp, entries, rules)
        elif isinstance(t, Instance) and isinstance(m, Instance):
            self._instance(t, m, tp, mp, depth, entries, rules)
        elif isinstance(t, Container) and isinstance(m, Container):
            self._container(t, m, tp, mp, depth, entries, rules)
        elif t == NONE or not isinstance(t, (Layer, Instance, Container)):
            return  # torch holds nothing here: any MindSpore parameter below shows as unset when checked
        else:
            rules.append(Rule(tp, mp, "missing in the port",
                              f"torch builds {_describe(t)} here, the port {_describe(m)}"))

    def _layer(self, t_api: str, m_api: str, tp: str, mp: str, entries: list[Entry], rules: list[Rule]) -> None:
        params = self.facts.forms.get((t_api, m_api))
        if params is None:
            known = self.facts.ms_classes(t_api)
            rules.append(Rule(tp, mp, "no facts", f"the tables have no weight facts for {t_api} -> {m_api}"
                              + (f" (they have them for {', '.join(known)})" if known else "")))
            return
        source = f"{t_api} -> {m_api}"
        for param in params:
            if param.layer is not None and param.ms_layer is not None and param.torch and param.ms:
                self._layer(param.layer, param.ms_layer, _join(tp, param.torch), _join(mp, param.ms), entries, rules)
            elif param.torch is None:
                entries.append(Entry(None, _join(mp, param.ms), "ms_only", source=source, note=param.note))
            else:
                entries.append(Entry(_join(tp, param.torch), _join(mp, param.ms) if param.ms else None,
                                     transform=param.transform, source=source,
                                     note=param.note or (describe_transform(param.transform) if param.transform else "")))

    def _instance(self, t: Instance, m: Instance, tp: str, mp: str, depth: int, entries: list[Entry],
                  rules: list[Rule]) -> None:
        start = len(entries)
        if _container_base(t.base, "torch") and _container_base(m.base, "mindspore"):
            pass  # a subclass of a container (class Block(nn.ModuleDict)): its items are its children
        elif t.base or m.base:
            if t.base and m.base:
                self._layer(t.base, m.base, tp, mp, entries, rules)
            else:
                rules.append(Rule(tp, mp, "missing in the port",
                                  f"{t.cls} derives from {t.base or 'no layer'}, the port's {m.cls} from {m.base or 'no layer'}"))
        m_children = dict(m.children)
        for name, value in t.children:
            if name in m_children:
                fresh = _fresh(name, tp, mp)
                self._pair(value, m_children[name], _join(tp, fresh), _join(mp, fresh), depth + 1, entries, rules)
            else:
                rules.append(Rule(_join(tp, name), None, "missing in the port",
                                  f"the port's {m.cls} has no attribute {name}"))
        owner = f"{t.cls}.{{}}"
        for name in t.params:
            if name in m.params:
                entries.append(Entry(_join(tp, name), _join(mp, name), source=owner.format(name) + " (Parameter)"))
            else:
                rules.append(Rule(_join(tp, name), None, "missing in the port",
                                  f"the port's {m.cls} has no Parameter {name}"))
        m_buffers = dict(m.buffers)
        for name, persistent in t.buffers:
            if not persistent:
                continue  # not in torch's state_dict
            if name in m.params:
                entries.append(Entry(_join(tp, name), _join(mp, name), source=owner.format(name) + " (buffer)",
                                     note="a Parameter in the port"))
            elif name in m_buffers:
                entries.append(Entry(_join(tp, name), _join(mp, name), "buffer", source=owner.format(name) + " (buffer)",
                                     note="a MindSpore buffer: MindSpore checkpoints do not hold buffers"))
            else:
                rules.append(Rule(_join(tp, name), None, "missing in the port",
                                  f"the port's {m.cls} has no Parameter or buffer {name}"))
        self._ties(t, m, tp, mp, entries, start)

    def _ties(self, t: Instance, m: Instance, tp: str, mp: str, entries: list[Entry], start: int) -> None:
        """torch `a = b` (one tensor, two state_dict names): where the port ties the same way, MindSpore keeps
        it once, under b's name."""
        m_ties = dict(m.ties)
        for alias, target in t.ties:
            t_alias, t_target = _join(tp, alias), _join(tp, target)
            index = next((k for k in range(start, len(entries)) if entries[k].torch == t_alias), None)
            origin = next((e for e in entries[start:] if e.torch == t_target), None)
            if index is None or origin is None or origin.ms is None:
                continue
            own = entries[index]
            rel = own.ms[len(mp) + 1:] if own.ms and mp and own.ms.startswith(mp + ".") else own.ms
            if rel in m_ties:
                entries[index] = Entry(t_alias, origin.ms, "tie", origin.transform, f"{t.cls}: {alias} = {target}",
                                       "tied to " + t_target + " in both; MindSpore keeps the tensor once",
                                       tied_to=t_target)
            else:
                entries[index] = Entry(own.torch, own.ms, own.kind, own.transform, own.source,
                                       f"tied to {t_target} in torch; a tensor of its own in the port", tied_to=t_target)

    def _container(self, t: Container, m: Container, tp: str, mp: str, depth: int, entries: list[Entry],
                   rules: list[Rule]) -> None:
        m_items = dict(m.items)
        for key, value in t.items:
            if key in m_items:
                fresh = _fresh(key, tp, mp)
                self._pair(value, m_items[key], _join(tp, fresh), _join(mp, fresh), depth + 1, entries, rules)
            elif m.tail is not None and key.isdigit() and int(key) >= len(m.items):
                self._pair(value, m.tail, _join(tp, key), _join(mp, key), depth + 1, entries, rules)
            else:
                rules.append(Rule(_join(tp, key), None, "missing in the port", f"the port's container has no {key}"))
        if t.tail is not None:
            level = self.outer + tp.count("{")
            index = "{" + INDEX_NAMES[min(level, len(INDEX_NAMES) - 1)] + "}"  # {i}, then {j} inside it
            if m.tail is None:
                rules.append(Rule(_join(tp, index), None, "missing in the port",
                                  "torch's container grows in a loop, the port's does not"))
            else:
                self._pair(t.tail, m.tail, _join(tp, index), _join(mp, index), depth + 1, entries, rules)

    def _choice(self, t: Value, m: Value, tp: str, mp: str, depth: int, entries: list[Entry], rules: list[Rule]) -> None:
        t_options = [o for o in (t.options if isinstance(t, Choice) else (t,)) if o != NONE]
        m_options = [o for o in (m.options if isinstance(m, Choice) else (m,)) if o != NONE]
        pairs = []
        for option in t_options:
            partner = _partner(option, m_options, self.facts)
            if partner is None:
                rules.append(Rule(tp, mp, "unknown", f"torch may build {_describe(option)} here, the port has no "
                                                     f"counterpart among {', '.join(_describe(o) for o in m_options) or 'nothing'}"))
                return
            pairs.append((option, partner))
        nodes: list[Node] = []
        for option, partner in pairs:
            node = self.node(option, partner, depth, _describe(option), self.outer + tp.count("{"))
            if all((n.entries, n.rules) != (node.entries, node.rules) for n in nodes):
                nodes.append(node)
        if len(nodes) == 1:  # one alternative besides None (or alternatives that name everything alike)
            maybe_none = isinstance(t, Choice) and any(o == NONE for o in t.options)
            entries.extend(replace(_shift(e, tp, mp), optional=e.optional or maybe_none) for e in nodes[0].entries)
            rules.extend(_shift_rule(r, tp, mp) for r in nodes[0].rules)
        elif nodes:
            reason = t.reason if isinstance(t, Choice) else (m.reason if isinstance(m, Choice) else "")
            rules.append(Rule(tp, mp, "one of", reason, tuple(nodes)))


def _fresh(name: str, *prefixes: str) -> str:
    """A child's name whose loop placeholders do not repeat the prefixes' (`denseblock{i}.denselayer{i}`, two
    loops counting with `i`, becomes `denseblock{i}.denselayer{i_1}`: the two numbers differ)."""
    taken = {p for prefix in prefixes for p in _PLACEHOLDERS.findall(prefix)}

    def rename(found: re.Match[str]) -> str:
        if found.group(1) not in taken:
            return found.group(0)
        count = 1
        while f"{found.group(1)}_{count}" in taken:
            count += 1
        return "{" + f"{found.group(1)}_{count}" + "}"

    return _PLACEHOLDERS.sub(rename, name) if taken and "{" in name else name


def _container_base(base: str | None, side: str) -> bool:
    """The library base of a class is one of the library's containers (Sequential, ModuleList, ModuleDict, ...)."""
    kinds = SIDES[side]
    return base is not None and base in kinds.sequential + kinds.lists + kinds.dicts


def _partner(option: Value, candidates: list[Value], facts: Facts) -> Value | None:
    """The MindSpore alternative that stands for a torch alternative."""
    if len(candidates) == 1:
        return candidates[0]
    if not isinstance(option, (Layer, Instance, Container)):
        return option  # torch holds no layer there (a value, a function): nothing to pair
    for candidate in candidates:
        if isinstance(option, Instance) and isinstance(candidate, Instance) and option.cls == candidate.cls:
            return candidate
        if isinstance(option, Layer) and isinstance(candidate, Layer) and (
                facts.has(option.api, candidate.api) or _same_name(option.api, candidate.api)):
            return candidate
        if isinstance(option, Layer) and isinstance(candidate, Instance) and candidate.base \
                and (facts.has(option.api, candidate.base) or candidate.cls == option.api.rpartition(".")[2]):
            return candidate  # a torch-signature layer of migrate's support module (named as torch's class)
        if isinstance(option, Container) and isinstance(candidate, Container) and \
                [k for k, _ in option.items] == [k for k, _ in candidate.items]:
            return candidate
    return None


def _same_name(torch_api: str, ms_api: str) -> bool:
    """A torch layer and a MindSpore layer of the same class name (``nn.Identity``, ``mint.nn.Identity``): the
    one that stands for it among alternatives, also where the tables have no weight facts for the pair (a layer
    without tensors; one with tensors gets a rule saying the facts are missing)."""
    return torch_api.rpartition(".")[2] == ms_api.rpartition(".")[2]


def _shift(entry: Entry, tp: str, mp: str) -> Entry:
    return Entry(_join(tp, entry.torch) if entry.torch else None, _join(mp, entry.ms) if entry.ms else None,
                 entry.kind, entry.transform, entry.source, entry.note,
                 _join(tp, entry.tied_to) if entry.tied_to else None, entry.shape, entry.dtype, entry.optional)


def _shift_rule(rule: Rule, tp: str, mp: str) -> Rule:
    return Rule(_join(tp, rule.torch), _join(mp, rule.ms) if rule.ms is not None else None, rule.rule, rule.reason,
                rule.options)


def _describe(value: Value) -> str:
    if isinstance(value, Layer):
        return value.api
    if isinstance(value, Instance):
        return value.cls
    if isinstance(value, Container):
        return value.kind.rpartition(".")[2]
    if value == NONE:
        return "None"
    if isinstance(value, Unknown):
        return f"something unknown ({value.reason})"
    return type(value).__name__


# ---------------------------------------------------------------------------------- building
def parse_call(text: str) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
    """`name` or `name(literal, key=literal)` -> (name, args, kwargs); ValueError on anything else."""
    import ast

    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ValueError(f"not a call: {text!r} ({exc.msg})") from None
    if isinstance(node, ast.Name):
        return node.id, (), {}
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"expected NAME or NAME(key=value, ...), got {text!r}")
    try:
        args = tuple(ast.literal_eval(a) for a in node.args)
        kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
    except ValueError:
        raise ValueError(f"the arguments of {text!r} must be literals (numbers, strings, tuples, lists, dicts, "
                         "True/False/None)") from None
    if any(k.arg is None for k in node.keywords) or any(isinstance(a, ast.Starred) for a in node.args):
        raise ValueError(f"the arguments of {text!r} must be literals, not *args or **kwargs")
    return node.func.id, args, kwargs


def _literal(value: Any) -> Value:
    from .structure import Const, DictVal, ListVal

    if isinstance(value, (list, tuple)):
        return ListVal(tuple(_literal(v) for v in value))
    if isinstance(value, dict):
        return DictVal(tuple((str(k), _literal(v)) for k, v in value.items()))
    return Const(value)


def root_name(torch_factory: str, ported_factory: str | None = None) -> str:
    """The name of a factory call's root in a map: the call, or "torch call -> ported call" when they differ."""
    t, m = torch_factory.strip(), (ported_factory or torch_factory).strip()
    return t if t == m else f"{t} -> {m}"


def build_map(torch_source: str, ported_source: str, facts: Facts, torch_name: str = "original.py",
              ported_name: str = "ported.py", factories: Iterable[str | tuple[str, str]] = (),
              on_disk: bool = False) -> WeightMap:
    """The map of every cell class of the torch file (built with its defaults) that the port also has,
    and of each factory call given: `resnet18(num_classes=10)` (a class or a function of both files), or
    a pair (torch call, ported call) when the port names it differently. `on_disk`: the names are the
    files' paths, and classes imported from the projects' other files are read from those files."""
    try:
        t_struct = Structure(torch_source, "torch", torch_name, torch_name if on_disk else None)
    except SyntaxError as exc:
        raise MapError(f"{torch_name}:{exc.lineno}: cannot parse the torch file: {exc.msg}") from None
    try:
        m_struct = Structure(ported_source, "mindspore", ported_name, ported_name if on_disk else None)
    except SyntaxError as exc:
        raise MapError(f"{ported_name}:{exc.lineno}: cannot parse the ported file: {exc.msg}") from None
    pairing = _Pairing(facts)
    roots: dict[str, Node] = {}
    ported_cells = set(m_struct.cell_classes())
    for name in t_struct.cell_classes():
        if name in ported_cells:
            roots[name] = _guarded(pairing, t_struct, m_struct, (name, (), {}), (name, (), {}), name)
    if on_disk:  # a network of another file that this one configures, built where this file's classes are known
        for name in sorted(set(t_struct.imported_cells()) & set(m_struct.imported_cells()) - set(roots)):
            roots[name] = _guarded(pairing, t_struct, m_struct, (name, (), {}), (name, (), {}), name)
    for factory in factories:
        t_text, m_text = factory if isinstance(factory, tuple) else (factory, factory)
        calls = []
        for struct, file, text in ((t_struct, torch_name, t_text), (m_struct, ported_name, m_text)):
            try:
                call = parse_call(text)
            except ValueError as exc:
                raise MapError(f"{file}: {exc}") from None
            if call[0] not in struct.classes and call[0] not in struct.functions:
                raise MapError(f"{file}: no class or function named {call[0]}")
            calls.append(call)
        label = root_name(t_text, m_text)
        roots[label] = _guarded(pairing, t_struct, m_struct, calls[0], calls[1], label)
    return WeightMap(torch_name, ported_name, roots)


Call = tuple[str, tuple[Any, ...], dict[str, Any]]


def _guarded(pairing: _Pairing, t_struct: Structure, m_struct: Structure, t_call: Call, m_call: Call,
             label: str) -> Node:
    """The root of a call on both sides; code the reader cannot follow (however odd) gives a root whose one
    rule says so, and the other roots still stand."""
    try:
        values = [struct.build(name, tuple(_literal(a) for a in args), tuple((k, _literal(v)) for k, v in kw.items()))
                  for struct, (name, args, kw) in ((t_struct, t_call), (m_struct, m_call))]
        return pairing.node(values[0], values[1], label=label)
    except (RecursionError, Exception) as exc:  # noqa: BLE001
        return Node((), (Rule("", None, "unknown", f"the map builder could not follow {label} "
                                                 f"({type(exc).__name__}: {exc})"),), label)


def _map_of_files(torch_source_path: str, ported_source_path: str, factories: Iterable[str | tuple[str, str]],
                  table: MappingTable | None) -> WeightMap:
    from ..fix import FixError
    from ..fix_files import _read
    from ..mappings import load_table

    texts = []
    for path in (torch_source_path, ported_source_path):
        try:  # as Python reads a source: a BOM or a coding line chooses the encoding
            texts.append(_read(path).text)
        except FixError as exc:
            raise MapError(str(exc)) from None
    facts = Facts.from_entries((table or load_table()).entries.values())
    return build_map(texts[0], texts[1], facts, torch_source_path, ported_source_path, factories, on_disk=True)


def write_map(torch_source_path: str, ported_source_path: str, out_path: str,
              factories: Iterable[str | tuple[str, str]] = (), table: MappingTable | None = None) -> WeightMap:
    """Build the map of a torch file and its port and write it as JSON to `out_path` (see docs/weights.md).

    `factories`: calls whose networks get a root of their own besides every cell class
    (e.g. ["resnet18(num_classes=10)"]); `table`: the mapping table (default: the installed one).
    Raises MapError (naming the file and the reason) when a file cannot be read or parsed."""
    weight_map = _map_of_files(torch_source_path, ported_source_path, factories, table)
    save_map(weight_map, out_path)
    return weight_map


def map_path(ported_source_path: str) -> str:
    """Where `migrate` writes the map of a ported file: NAME.weights.json beside NAME.py."""
    return os.path.splitext(ported_source_path)[0] + ".weights.json"


def write_map_beside(torch_source_path: str, ported_source_path: str,
                     table: MappingTable | None = None) -> tuple[str, WeightMap] | None:
    """What `migrate` writes: the map of every cell class of the port, at `map_path(ported_source_path)`;
    None (nothing written) when the file defines no cell class. Raises MapError as `write_map` does."""
    weight_map = _map_of_files(torch_source_path, ported_source_path, (), table)
    if not weight_map.roots:
        return None
    path = map_path(ported_source_path)
    save_map(weight_map, path)
    return path, weight_map


def fill_entry(entry: Entry, binding: dict[str, str]) -> Entry:
    return Entry(fill(entry.torch, binding) if entry.torch else None, fill(entry.ms, binding) if entry.ms else None,
                 entry.kind, entry.transform, entry.source, entry.note,
                 fill(entry.tied_to, binding) if entry.tied_to else None, entry.shape, entry.dtype,
                 entry.optional)
