"""Which examples to run, as job specs for the workers, and how results become per-entry verdicts.

Pure: no torch, no MindSpore, no processes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from ..mappings import MappingTable, parse_version
from ..model import Category, MappingEntry
from .record import EntryRecord

VERIFIED_CATEGORIES = (Category.EQUIVALENT, Category.DIFF_PARAMS)
EXAMPLE_KEYS = ("rtol", "atol", "random", "compare", "dtypes", "kind", "grad", "seed", "timeout")
KINDS_FIRST = ("layer", "loss", "optimizer", "scheduler", "inplace", "method", "function")
PER_KIND_IN_SAMPLE = 3
DEFAULT_VERSION = (2, 10)
_RANK = {"failed": 3, "error": 2, "passed": 1, "skipped": 0}


def _facts(entry: MappingEntry, version: tuple[int, ...]) -> dict[str, Any]:
    """The target's parameter facts the call forms need: renames, differing defaults, dropped names."""
    target = entry.target_for(version)
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


def example_specs(entry: MappingEntry, version: tuple[int, ...] = DEFAULT_VERSION) -> list[dict[str, Any]]:
    """One job spec per example of the entry (with the parameter facts its call forms need)."""
    specs = []
    facts = _facts(entry, version)
    for number, example in enumerate(entry.examples):
        spec: dict[str, Any] = {
            "id": f"{entry.api}#{number}",
            "api": entry.api,
            "torch": example.torch,
            "mindspore": example.mindspore,
            "inputs": dict(example.inputs),
        }
        spec.update({k: example.extra[k] for k in EXAMPLE_KEYS if k in example.extra})
        spec.update(facts)
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
        return EntryRecord(status="skipped", reason="no example")
    worst = max(results, key=lambda r: _RANK.get(r.get("status", "error"), 2))
    status = str(worst.get("status", "error"))
    reason = str(worst.get("reason") or "")
    if status != "passed" and len(results) > 1:
        number = results.index(worst)
        reason = f"example {number}: {reason}"
    abs_errs = [r["max_abs_err"] for r in results if isinstance(r.get("max_abs_err"), (int, float))]
    rel_errs = [r["max_rel_err"] for r in results if isinstance(r.get("max_rel_err"), (int, float))]
    return EntryRecord(status=status, max_abs_err=max(abs_errs) if abs_errs else None,
                       max_rel_err=max(rel_errs) if rel_errs else None, reason=reason)
