"""Apply a weight map to the names of a real state_dict: where each torch tensor goes in MindSpore.

`place(node, keys)` matches every key against the node's entries (the most specific pattern
first), then against its rules: a `one of` rule picks, for each concrete prefix, the alternative
that names every tensor found under it (where several do and they disagree, the one with the
fewest entries left unused; a tie stays unplaced); any other rule leaves the keys unplaced with
its reason. `check` compares a placement with the parameters a MindSpore cell really has.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .facts import Transform, fill, match, transformed_shape
from .mapping import Entry, Node, Rule

_PLACEHOLDER = re.compile(r"\{\w+\}")


@dataclass(frozen=True)
class Placement:
    """Where one torch tensor goes (`ms` None: MindSpore keeps no such tensor, as a fact says)."""

    torch: str
    ms: str | None
    kind: str = "parameter"
    transform: Transform = ()
    source: str = ""
    note: str = ""
    tied_to: str | None = None
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    optional: bool = False


@dataclass
class Result:
    placed: dict[str, Placement] = field(default_factory=dict)
    unplaced: dict[str, str] = field(default_factory=dict)  # torch key -> why it has no place
    ms_only: list[tuple[str, str]] = field(default_factory=list)  # MindSpore names that may keep their value
    decisions: list[str] = field(default_factory=list)  # the alternatives chosen, and why

    def merge(self, other: Result) -> None:
        self.placed.update(other.placed)
        self.unplaced.update(other.unplaced)
        self.ms_only.extend(other.ms_only)
        self.decisions.extend(other.decisions)


def _specificity(pattern: str) -> tuple[int, int]:
    return (len(_PLACEHOLDER.findall(pattern)), -len(pattern))


def _prefixed(placement: Placement, t_head: str, m_head: str | None) -> Placement:
    def join(head: str | None, name: str | None) -> str | None:
        return f"{head}.{name}" if head and name else name

    return Placement(join(t_head, placement.torch) or placement.torch, join(m_head, placement.ms), placement.kind,
                     placement.transform, placement.source, placement.note, join(t_head, placement.tied_to),
                     placement.shape, placement.dtype, placement.optional)


def place(node: Node, keys: Iterable[str], shapes: Mapping[str, tuple[int, ...]] | None = None) -> Result:
    """Place each torch state_dict name through the node (names relative to it). With `shapes` (torch's, by
    key), an entry that states a MindSpore shape places only a tensor of that shape (after its transform)."""
    result = Result()
    entries = sorted((e for e in node.entries if e.torch is not None), key=lambda e: _specificity(str(e.torch)))
    remaining: list[str] = []
    for key in keys:
        for entry in entries:
            binding = match(str(entry.torch), key)
            if binding is None:
                continue
            if shapes is not None and entry.shape is not None and key in shapes:
                shape = transformed_shape(shapes[key], entry.transform)
                if tuple(shape) != tuple(entry.shape):
                    result.unplaced[key] = (f"shape mismatch: the checkpoint's {key} is {list(shapes[key])}"
                                            + (f" ({list(shape)} after the transform)" if entry.transform else "")
                                            + f", the map expects {list(entry.shape)} for {entry.ms}")
                    break
            result.placed[key] = _placement(entry, key, binding)
            break
        else:
            remaining.append(key)
    result.ms_only.extend((str(e.ms), e.note) for e in node.entries if e.kind == "ms_only" and e.ms)
    for rule in sorted(node.rules, key=lambda r: _specificity(r.torch)):
        if not remaining:
            break
        remaining = _apply_rule(rule, remaining, result)
    for key in remaining:
        result.unplaced[key] = _no_entry(node, key)
    return result


def _placement(entry: Entry, key: str, binding: dict[str, str]) -> Placement:
    return Placement(key, fill(entry.ms, binding) if entry.ms else None, entry.kind, entry.transform, entry.source,
                     entry.note, fill(entry.tied_to, binding) if entry.tied_to else None, entry.shape, entry.dtype,
                     entry.optional)


def _apply_rule(rule: Rule, keys: list[str], result: Result) -> list[str]:
    """Place the keys under the rule's prefix; returns the keys it does not cover."""
    if not rule.torch:  # the whole node
        for key in keys:
            result.unplaced[key] = f"{rule.rule}: {rule.reason}"
        return []
    depth = rule.torch.count(".") + 1
    groups: dict[str, tuple[dict[str, str], list[str]]] = {}
    rest_keys = []
    for key in keys:
        parts = key.split(".")
        binding = match(rule.torch, ".".join(parts[:depth])) if len(parts) > depth else None
        if binding is None:
            rest_keys.append(key)
            continue
        groups.setdefault(".".join(parts[:depth]), (binding, []))[1].append(".".join(parts[depth:]))
    for head, (binding, inner) in groups.items():
        m_head = fill(rule.ms, binding) if rule.ms is not None else None
        if rule.rule != "one of":
            for rest in inner:
                result.unplaced[f"{head}.{rest}"] = f"{rule.rule} at {head}: {rule.reason}"
            continue
        chosen = _choose(rule, head, inner)
        if isinstance(chosen, str):
            for rest in inner:
                result.unplaced[f"{head}.{rest}"] = chosen
            continue
        label, sub = chosen
        for placement in sub.placed.values():
            result.placed[f"{head}.{placement.torch}"] = _prefixed(placement, head, m_head)
        result.ms_only.extend((f"{m_head}.{name}" if m_head else name, note) for name, note in sub.ms_only)
        result.decisions.append(f"{head}: {label} (one of {', '.join(o.label for o in rule.options)}: {rule.reason})")
        result.decisions.extend(f"{head}.{d}" for d in sub.decisions)
    return rest_keys


def _choose(rule: Rule, head: str, keys: list[str]) -> tuple[str, Result] | str:
    """The alternative that places every key (the closest fit among several), or why there is none."""
    fits: list[tuple[int, str, Result]] = []
    misses: list[str] = []
    for option in rule.options:
        sub = place(option, keys)
        if sub.unplaced:
            key, why = next(iter(sub.unplaced.items()))
            misses.append(f"{option.label}: {head}.{key} {why}")
            continue
        used = {e.torch for e in option.entries for k in keys if e.torch and match(e.torch, k) is not None}
        unused = sum(1 for e in option.entries if e.torch and e.torch not in used)
        fits.append((unused, option.label, sub))
    if not fits:
        return (f"none of the alternatives at {head} names all its tensors ({rule.reason}): " + "; ".join(misses))
    fits.sort(key=lambda f: f[0])
    best = [f for f in fits if f[0] == fits[0][0]]
    placements = {tuple(sorted((k, p.ms) for k, p in f[2].placed.items())) for f in best}
    if len(placements) > 1:
        return (f"the alternatives {', '.join(f[1] for f in best)} at {head} all fit its tensors but name them "
                f"differently ({rule.reason}): give the map a factory call that decides it")
    return best[0][1], best[0][2]


def _no_entry(node: Node, key: str) -> str:
    near = sorted({str(e.torch).rpartition(".")[0] for e in node.entries if e.torch and "." in str(e.torch)
                   and key.startswith(str(e.torch).rpartition(".")[0].split("{")[0])}, key=len)
    return "the map has no entry for it" + (f" (it names tensors under {near[-1]})" if near else "")


# ---------------------------------------------------------------------------------- against a real cell
def check(result: Result, torch_shapes: Mapping[str, tuple[int, ...]],
          ms_shapes: Mapping[str, tuple[int, ...]], ms_buffers: Mapping[str, tuple[int, ...]] = {}) -> list[str]:
    """Problems of a placement against the cell's parameters (and buffers): a name the cell lacks, another shape,
    two tensors sent to one parameter, parameters left unset (unless the map says they may keep their value)."""
    problems: list[str] = []
    filled: dict[str, str] = {}
    for key, placement in result.placed.items():
        if placement.ms is None or placement.kind == "tie":
            continue
        targets = ms_buffers if placement.kind == "buffer" else ms_shapes
        if placement.ms not in targets:
            what = "buffer" if placement.kind == "buffer" else "parameter"
            problems.append(f"{key} -> {placement.ms}: the MindSpore network has no {what} {placement.ms}"
                            + (f" ({placement.source})" if placement.source else ""))
            continue
        if placement.ms in filled:
            problems.append(f"{key} -> {placement.ms}: {filled[placement.ms]} goes there too")
            continue
        filled[placement.ms] = key
        if key in torch_shapes:
            shape = transformed_shape(torch_shapes[key], placement.transform)
            if tuple(shape) != tuple(targets[placement.ms]):
                how = f" after the transform ({list(shape)})" if placement.transform else ""
                problems.append(f"{key} {list(torch_shapes[key])} -> {placement.ms} {list(targets[placement.ms])}: "
                                f"shape mismatch{how}")
    for key, placement in result.placed.items():
        if placement.kind == "tie" and placement.ms is not None and placement.ms not in ms_shapes:
            problems.append(f"{key} -> {placement.ms}: tied, but the MindSpore network has no parameter {placement.ms}")
    for name in ms_shapes:
        if name not in filled and not any(match(pattern, name) is not None for pattern, _ in result.ms_only):
            problems.append(f"the MindSpore parameter {name} gets no torch tensor (it keeps its initial value)")
    return problems


def resolved_node(result: Result, label: str, ms_shapes: Mapping[str, tuple[int, ...]] | None = None,
                  ms_dtypes: Mapping[str, str] | None = None) -> Node:
    """The placement as a map node of concrete names (and MindSpore shapes and dtypes, where given): a map
    that `convert-weights` applies to the same checkpoint keys without any rule left to decide."""
    def known(table: Mapping[str, Any] | None, name: str | None, default: Any) -> Any:
        return table[name] if table and name is not None and name in table else default

    entries = [Entry(key, p.ms, p.kind, p.transform, p.source, p.note, p.tied_to,
                     tuple(known(ms_shapes, p.ms, p.shape)) if known(ms_shapes, p.ms, p.shape) is not None else None,
                     known(ms_dtypes, p.ms, p.dtype))
               for key, p in sorted(result.placed.items())]
    entries += [Entry(None, name, "ms_only", note=note) for name, note in result.ms_only]
    return Node(tuple(entries), (), label)


def uncovered(node: Node, result: Result) -> dict[str, str]:
    """The MindSpore parameters of the map's layers that the placed keys leave empty (a checkpoint of part
    of the network): MindSpore name -> the torch name expected. A layer counts as present when any of its
    tensors is placed (a Linear without bias holds no bias); a layer built on a condition (`optional`), a
    parameter the map lets keep its initial value (`ms_only`, e.g. BatchNorm's gamma where torch has
    affine=False) and layers at a container position (`{i}`, whose count the map does not know) are not
    counted. A layer's tensors named by a pattern (an LSTM's `weight_ih_l{l}`) are reported by the pattern."""
    filled = {p.ms for p in result.placed.values() if p.ms is not None}
    placed_layers = {key.rpartition(".")[0] for key in result.placed}
    placed_layers |= {str(e.torch).rpartition(".")[0] for e in node.entries  # a tie the checkpoint keeps once
                      if e.kind == "tie" and e.torch and e.tied_to in result.placed}
    excused = [pattern for pattern, _ in result.ms_only]
    out: dict[str, str] = {}
    for entry in node.entries:
        if entry.kind != "parameter" or entry.ms is None or entry.torch is None or entry.optional \
                or _PLACEHOLDER.search(entry.torch.rpartition(".")[0]):
            continue
        if entry.ms in filled or entry.torch.rpartition(".")[0] in placed_layers \
                or any(match(pattern, entry.ms) is not None for pattern in excused):
            continue
        out[entry.ms] = entry.torch
    return out


# ---------------------------------------------------------------------------------- the other way
def _flat_entries(node: Node, t_head: str = "", m_head: str = "") -> list[Entry]:
    """The node's entries with the entries of its `one of` alternatives, prefixed (for a reverse lookup)."""
    def join(head: str, name: str | None) -> str | None:
        return f"{head}.{name}" if head and name else (name or None)

    out = [Entry(join(t_head, e.torch), join(m_head, e.ms), e.kind, e.transform, e.source, e.note,
                 join(t_head, e.tied_to), e.shape, e.dtype, e.optional) for e in node.entries]
    for rule in node.rules:
        if rule.rule == "one of" and rule.ms is not None:
            for option in rule.options:
                out += _flat_entries(option, join(t_head, rule.torch) or "", join(m_head, rule.ms) or "")
    return out


def place_reverse(node: Node, ms_keys: Iterable[str]) -> tuple[dict[str, list[Placement]], dict[str, str]]:
    """Each MindSpore checkpoint name -> the torch names it fills (a tied tensor fills several), through
    the map read backwards; and the names that find none, with the reason."""
    entries = sorted((e for e in _flat_entries(node) if e.ms and e.torch and e.kind in ("parameter", "tie")),
                     key=lambda e: _specificity(str(e.ms)))
    placed: dict[str, list[Placement]] = {}
    unplaced: dict[str, str] = {}
    for key in ms_keys:
        for entry in entries:
            binding = match(str(entry.ms), key)
            if binding is None:
                continue
            torch_name = fill(str(entry.torch), binding)
            if _PLACEHOLDER.search(torch_name):
                continue
            found = placed.setdefault(key, [])
            if entry.kind == "parameter" and any(p.kind == "parameter" for p in found):
                continue  # the most specific entry names it; a tie adds the other torch names
            if all(p.torch != torch_name for p in found):
                found.append(Placement(torch_name, key, entry.kind, entry.transform, entry.source, entry.note))
        if key not in placed:
            unplaced[key] = "the map names no torch tensor for it"
    return placed, unplaced
