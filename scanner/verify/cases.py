"""Which examples to run, as job specs for the workers, and how results become per-entry verdicts.

Pure: no torch, no MindSpore, no processes.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterable
from typing import Any

from ..mappings import MappingTable, load_table, parse_version
from ..model import Category, Example, MappingEntry, Target
from ..weights.facts import Facts
from .code import split_layer
from .record import EntryRecord

VERIFIED_CATEGORIES = (Category.EQUIVALENT, Category.DIFF_PARAMS)
EXAMPLE_KEYS = ("rtol", "atol", "random", "compare", "dtypes", "kind", "grad", "seed", "timeout", "fixture")
KINDS_FIRST = ("layer", "loss", "optimizer", "scheduler", "inplace", "method", "function")
PER_KIND_IN_SAMPLE = 3
DEFAULT_VERSION = (2, 10)
_RANK = {"failed": 3, "error": 2, "passed": 1, "skipped": 0}
NOT_RUNNABLE = "not runnable here: "  # the reason's prefix for entries the table declares not_runnable


def _callees(code: str) -> tuple[set[str], set[str]]:
    """The dotted names called in `code` (mindspore.ops.pad) and the method names called on values (x.eq)."""
    try:
        tree = ast.parse(code.strip(), mode="eval")
    except SyntaxError:
        return set(), set()
    dotted: set[str] = set()
    methods: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        parts: list[str] = []
        func = node.func
        while isinstance(func, ast.Attribute):
            parts.append(func.attr)
            func = func.value
        if isinstance(func, ast.Name):
            dotted.add(".".join([func.id] + parts[::-1]))
        if parts:
            methods.add(parts[0])  # x.eq(y), f(x).sum(): a method call, whatever the receiver
    return dotted, methods


def example_target(entry: MappingEntry, example: Example,
                   version: tuple[int, ...] = DEFAULT_VERSION) -> Target | None:
    """The target whose API the example's MindSpore code calls (its facts shape the call forms).

    An example may run an older target than the default one, e.g. `mindspore.ops.pad` on CPU where
    `mindspore.mint.nn.functional.pad` has no CPU kernel: then the older target's renames apply.
    The default target for `version` when the code calls none of the targets (or the default one).
    """
    default = entry.target_for(version)
    dotted, methods = _callees(example.mindspore)
    matches = [t for t in entry.targets if t.api in dotted]
    if not matches:
        matches = [t for t in entry.targets if t.api.startswith("mindspore.Tensor.")
                   and t.api.rpartition(".")[2] in methods]
    if not matches or default in matches:
        return default
    return matches[0]


def _facts(target: Target | None) -> dict[str, Any]:
    """The target's parameter facts the call forms need: renames, differing defaults, dropped names."""
    if target is None:
        return {}
    renames = {p.torch: p.ms for p in target.params if p.kind == "renamed" and p.torch and p.ms}
    differ = sorted({name for p in target.params if p.kind in ("default_differs", "semantics_differ",
                                                                "unsupported_values")
                     for name in (p.torch, p.ms) if name})
    dropped = sorted({p.torch for p in target.params if p.kind == "dropped" and p.torch})
    out: dict[str, Any] = {}
    if renames:
        out["renames"] = renames
    if differ:
        out["defaults_differ"] = differ
    if dropped:
        out["dropped"] = dropped
    return out


_WORD = re.compile(r"[a-z0-9_]+")
_DTYPE_SPELLINGS = {"float": "float32", "double": "float64", "half": "float16", "long": "int64",
                    "int": "int32", "bool_": "bool"}


def _dtype_word(name: str) -> str:
    name = str(name).lower().rpartition(".")[2]
    return _DTYPE_SPELLINGS.get(name, name)


def declared_dtypes(target: Target | None, example: Example) -> dict[str, str]:
    """The example's `dtypes` pairs (torch dtype -> MindSpore dtype) that the target's facts state.

    A dtype difference is accepted by verify only when the table says so: a fact of the target
    the example runs (normally `semantics_differ`) whose note mentions "dtype" and names both
    dtypes, e.g. "result dtype differs (torch int64, MindSpore int32)". A pair the facts do not
    state is left out, so that difference still fails the comparison.
    """
    wanted = example.extra.get("dtypes") or {}
    if not wanted or target is None:
        return {}
    notes = [set(_WORD.findall(p.note.lower())) for p in target.params if p.note and "dtype" in p.note.lower()]
    out: dict[str, str] = {}
    for t_dtype, m_dtype in wanted.items():
        pair = {_dtype_word(t_dtype), _dtype_word(m_dtype)}
        if any(pair <= words for words in notes):
            out[str(t_dtype)] = str(m_dtype)
    return out


def _weights(entry: MappingEntry, example: Example, facts: Facts | None) -> dict[str, Any] | None:
    """The weight facts of the MindSpore class a layer example builds (with its sub-layers' facts), if any."""
    if not entry.weights or str(example.extra.get("kind") or "") not in ("layer", "loss"):
        return None
    split = split_layer(example.mindspore)
    if split is None:
        return None
    dotted, _ = _callees(split[0])
    form = next((f for f in entry.weights if f.ms in dotted), None)
    if form is None:
        return None
    if facts is None:
        facts = Facts.from_entries(load_table().entries.values())
    return {"layer": entry.api, "ms": form.ms, "forms": facts.closure(entry.api, form.ms).to_json()}


def example_specs(entry: MappingEntry, version: tuple[int, ...] = DEFAULT_VERSION,
                  facts: Facts | None = None) -> list[dict[str, Any]]:
    """One job spec per example of the entry (with the parameter facts its call forms need), then one per
    weight form's own example. A layer example that builds a class with weight facts carries them
    (`weights`): the worker copies torch's weights by them. `facts`: the weight forms, for the sub-layers
    a form names (default: those of the installed tables)."""
    specs = []
    numbered = [(f"{entry.api}#{n}", e) for n, e in enumerate(entry.examples)]
    numbered += [(f"{entry.api}#weights:{form.ms}", form.example) for form in entry.weights if form.example]
    for spec_id, example in numbered:
        target = example_target(entry, example, version)
        spec: dict[str, Any] = {
            "id": spec_id,
            "api": entry.api,
            "torch": example.torch,
            "mindspore": example.mindspore,
            "inputs": dict(example.inputs),
        }
        spec.update({k: example.extra[k] for k in EXAMPLE_KEYS if k in example.extra})
        spec.pop("dtypes", None)
        dtypes = declared_dtypes(target, example)
        if dtypes:
            spec["dtypes"] = dtypes
        spec.update(_facts(target))
        weights = _weights(entry, example, facts)
        if weights is not None:
            spec["weights"] = weights
        specs.append(spec)
    return specs


def verified_entries(table: MappingTable) -> list[MappingEntry]:
    """The entries the record covers: every equivalent or diff_params entry (for the default target)."""
    version = parse_version(table.meta.default_target)
    return [entry for api, entry in sorted(table.entries.items())
            if entry.category_for(version) in VERIFIED_CATEGORIES or entry.examples]


def _kind(entry: MappingEntry) -> str:
    kinds = [str(e.extra.get("kind") or "function") for e in entry.examples]
    return kinds[0] if kinds else "function"


def _order(api: str) -> str:
    return hashlib.blake2b(api.encode(), digest_size=8).hexdigest()


def sample(entries: Iterable[MappingEntry], size: int) -> list[MappingEntry]:
    """A deterministic sample of `size` entries with examples: a few of every kind, then by a hash of the name.

    The hash order keeps a sampled entry in the sample when other entries are added to the tables.
    """
    pool = sorted((e for e in entries if e.examples), key=lambda e: _order(e.api))
    chosen: list[MappingEntry] = []
    seen: set[str] = set()
    for kind in KINDS_FIRST:
        for entry in [e for e in pool if _kind(e) == kind][:PER_KIND_IN_SAMPLE]:
            if len(chosen) < size:
                chosen.append(entry)
                seen.add(entry.api)
    for entry in pool:
        if len(chosen) >= size:
            break
        if entry.api not in seen:
            chosen.append(entry)
            seen.add(entry.api)
    return sorted(chosen, key=lambda e: e.api)


def select(table: MappingTable, apis: list[str] | None = None, sample_size: int | None = None,
           prefix: str | None = None) -> list[MappingEntry]:
    """Entries named by `apis`, or under `prefix`, or a sample, or (default) all the record covers."""
    if apis:
        unknown = [api for api in apis if api not in table.entries]
        if unknown:
            raise KeyError(", ".join(unknown))
        return [table.entries[api] for api in apis]
    entries = verified_entries(table)
    if prefix:
        entries = [e for e in entries if e.api == prefix or e.api.startswith(prefix.rstrip(".") + ".")]
    if sample_size is not None:
        entries = sample(entries, sample_size)
    return entries


def entry_verdict(entry: MappingEntry, results: list[dict[str, Any]]) -> EntryRecord:
    """Combine the results of an entry's examples: the worst status wins; errors are the largest seen."""
    if not entry.examples:
        if entry.not_runnable:  # declared in the table: counted apart from entries that merely lack one
            return EntryRecord(status="skipped", reason=f"{NOT_RUNNABLE}{entry.not_runnable}")
        return EntryRecord(status="skipped", reason="no example")
    worst = max(results, key=lambda r: _RANK.get(r.get("status", "error"), 2))
    status = str(worst.get("status", "error"))
    reason = str(worst.get("reason") or "")
    if status != "passed" and len(results) > 1:
        number = results.index(worst)
        form = str(worst.get("id") or "").partition("#weights:")[2]
        reason = f"weight facts for {form}: {reason}" if form else f"example {number}: {reason}"
    abs_errs = [r["max_abs_err"] for r in results if isinstance(r.get("max_abs_err"), (int, float))]
    rel_errs = [r["max_rel_err"] for r in results if isinstance(r.get("max_rel_err"), (int, float))]
    return EntryRecord(status=status, max_abs_err=max(abs_errs) if abs_errs else None,
                       max_rel_err=max(rel_errs) if rel_errs else None, reason=reason)
