"""Which examples to run, as job specs for the workers, and how results become per-entry verdicts.

Pure: no torch, no MindSpore, no processes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..mappings import MappingTable, load_table, parse_version
from ..model import DEVICES, Category, Example, ExampleKind, MappingEntry, Target
from ..weights.facts import Facts
from .record import COUNTS, EntryRecord, FormRecord

VERIFIED_CATEGORIES = (Category.EQUIVALENT, Category.DIFF_PARAMS)
EXAMPLE_KEYS = ("rtol", "atol", "random", "compare", "dtypes", "kind", "grad", "seed", "timeout", "fixture")
KINDS_FIRST = ("layer", "loss", "optimizer", "scheduler", "inplace", "method", "function")
PER_KIND_IN_SAMPLE = 3
DEFAULT_VERSION = (2, 10)
_RANK = {"failed": 4, "error": 3, "differs": 2, "passed": 1, "skipped": 0}
OWN_FORM = "rewrite:"  # the record's name of an entry's own rewrite, before its transform (`Form.name`)
NOT_RUNNABLE = "not runnable here: "  # the reason's prefix for entries the table declares not_runnable
CASE_BUDGET_S = 60.0  # seconds a worker may spend on one example's cases (then it stops starting new ones)


_WORD = re.compile(r"[a-z0-9_]+")
_DTYPE_SPELLINGS = {"float": "float32", "double": "float64", "half": "float16", "long": "int64",
                    "int": "int32", "bool_": "bool"}


def _dtype_word(name: str) -> str:
    name = str(name).lower().rpartition(".")[2]
    return _DTYPE_SPELLINGS.get(name, name)


def declared_dtypes(target: Target | None, example: Example) -> dict[str, str]:
    """The example's `dtypes` pairs (torch dtype -> MindSpore dtype) that the target's facts state.

    A dtype difference is accepted by verify only when the table says so: a fact of the form the
    fix writes (normally `semantics_differ`) whose `result_dtype` names both dtypes. A pair the facts
    do not state is left out, so that difference still fails the comparison.
    """
    wanted = example.extra.get("dtypes") or {}
    if not wanted or target is None:
        return {}
    stated = [{_dtype_word(t), _dtype_word(m)} for t, m in (p.result_dtype for p in target.params if p.result_dtype)]
    out: dict[str, str] = {}
    for t_dtype, m_dtype in wanted.items():
        if {_dtype_word(t_dtype), _dtype_word(m_dtype)} in stated:
            out[str(t_dtype)] = str(m_dtype)
    return out


@dataclass(frozen=True)
class Form:
    """A MindSpore form the fix writes for an entry, and the version and devices it writes it for."""

    target: Target
    version: tuple[int, ...]
    devices: tuple[str, ...]  # at the default version; empty for an older version's form
    rewrite_device: str  # the device whose fix writes it (the job rewrites for it)
    # the entry's own rewrite (a composed form, a support function), written on `devices` where the target
    # has no kernel: its record form is named `name`, apart from the target's, whose devices it never claims
    own: str = ""

    @property
    def version_text(self) -> str:
        return ".".join(str(v) for v in self.version)

    @property
    def name(self) -> str:
        """The form as the record names it: the target, or the entry's own rewrite (``rewrite:compose``)."""
        return f"{OWN_FORM}{self.own}" if self.own else self.target.api


def _older_versions(entry: MappingEntry) -> list[tuple[int, ...]]:
    """The versions before the default at which another target becomes the entry's preferred one."""
    out: set[tuple[int, ...]] = set()
    for target in entry.targets:
        if target.until is not None:
            major, minor = target.until[0], (target.until[1] if len(target.until) > 1 else 0)
            out.add((major, minor - 1) if minor > 0 else (major - 1, 99))
        if target.since is not None:
            out.add(target.since)
    return sorted(out, reverse=True)


def forms(entry: MappingEntry, version: tuple[int, ...] = DEFAULT_VERSION) -> list[Form]:
    """Every form the fix writes for the entry: the one for each device at `version`, then those of
    older versions (each once). `MappingEntry.choose` is the choice."""
    by_target: dict[int, Form] = {}
    order: list[int] = []
    for device in DEVICES:
        target = entry.target_for(version, device)
        if target is None:
            continue
        key = id(target)
        if key in by_target:
            old = by_target[key]
            # rewrite for a device where the form has a kernel: where it has none, the fix writes nothing
            rewrite = old.rewrite_device if old.rewrite_device not in target.no_kernel else device
            by_target[key] = Form(target, version, old.devices + (device,), rewrite)
        else:
            by_target[key] = Form(target, version, (device,), device)
            order.append(key)
    for older in _older_versions(entry):
        if older >= version:
            continue
        for device in DEVICES:
            target = entry.target_for(older, device)
            if target is not None and id(target) not in by_target:
                by_target[id(target)] = Form(target, older, (), device)
                order.append(id(target))
    return [by_target[key] for key in order] + own_forms(entry, version)


def own_forms(entry: MappingEntry, version: tuple[int, ...] = DEFAULT_VERSION) -> list[Form]:
    """The entry's own rewrite where the fix writes it instead of the target: on the devices where the target
    the version chooses has no kernel (`torch.rms_norm` on the CPU: the composed form the tables name). One
    form for those devices; none where the entry and that target have no rewrite."""
    devices: list[str] = []
    first: Target | None = None
    for device in DEVICES:
        target = entry.target_for(version, device)
        if target is None or device not in target.no_kernel:
            continue
        rewrite = entry.rewrite or target.rewrite
        if rewrite is None:
            continue
        devices.append(device)
        first = first or target
    if first is None:
        return []
    rewrite = entry.rewrite or first.rewrite
    assert rewrite is not None
    return [Form(first, version, tuple(devices), devices[0], own=rewrite.transform)]


def _covers(target: Target) -> list[str]:
    return sorted({tag for fact in target.params for tag in fact.covers})


def _weights(entry: MappingEntry, ms_class: str, example: Example, facts: Facts | None) -> dict[str, Any] | None:
    """The weight facts of `ms_class` for a layer example of the entry (with its sub-layers' facts), if any."""
    if example.kind not in (ExampleKind.LAYER, ExampleKind.LOSS):
        return None
    return layer_weights(entry, ms_class, facts)


def layer_weights(entry: MappingEntry, ms_class: str, facts: Facts | None = None) -> dict[str, Any] | None:
    """The weight facts of `ms_class` for a layer call of the entry (with its sub-layers' facts), if it has
    any: the worker copies torch's tensors into the cell by them."""
    if entry.weight_form(ms_class) is None:
        return None
    if facts is None:
        facts = Facts.from_entries(load_table().entries.values())
    return {"layer": entry.api, "ms": ms_class, "forms": facts.closure(entry.api, ms_class).to_json()}


def form_fields(form: Form) -> dict[str, Any]:
    """A job's fields for the form it checks: how the fix rewrites its cases, the form and its devices,
    the time budget and the tags of cases the form's facts explain (`covers`)."""
    fields: dict[str, Any] = {
        "rewrite": {"version": form.version_text, "device": form.rewrite_device,
                    # measured to have no kernel wherever the fix writes it: write it all the same
                    "measure": not form.own and form.rewrite_device in form.target.no_kernel},
        "form": form.name,
        "for": list(form.devices),
        "budget": CASE_BUDGET_S,
    }
    if form.own:
        fields["own"] = True  # whatever complete text the fix writes for the device, not the target's name
    covers = _covers(form.target)
    if covers:
        fields["covers"] = covers
    return fields


def example_specs(entry: MappingEntry, version: tuple[int, ...] = DEFAULT_VERSION,
                  only: Iterable[str] | None = None, facts: Facts | None = None) -> list[dict[str, Any]]:
    """One job per example and form the fix writes: the example's cases, rewritten by the fix engine
    for the form's version and device (`only`: just the forms written for these devices).

    A layer example whose form has weight facts carries them (`weights`): the worker copies torch's
    weights by them, so a wrong fact fails the cases. A weight form the fix never writes is checked by
    its own example, one pair of codes (`weights_only`; not without `only`). `facts`: the weight forms,
    for the sub-layers a form names (default: those of the installed tables)."""
    wanted = set(only) if only is not None else None
    specs = []
    written = forms(entry, version)
    for form in written:
        if wanted is not None and not wanted & set(form.devices):
            continue
        for number, example in enumerate(entry.examples):
            spec: dict[str, Any] = {
                "id": f"{entry.api}#{number}@{form.name}",
                "api": entry.api,
                "torch": example.torch,
                "inputs": dict(example.inputs),
                **form_fields(form),
            }
            spec.update({k: example.extra[k] for k in EXAMPLE_KEYS if k in example.extra})
            spec.pop("dtypes", None)
            dtypes = declared_dtypes(form.target, example)
            if dtypes:
                spec["dtypes"] = dtypes
            weights = _weights(entry, form.target.api, example, facts)
            if weights is not None:
                spec["weights"] = weights
            specs.append(spec)
    if wanted is not None:
        return specs
    for weight_form in entry.weights:
        own = weight_form.example
        if own is None or any(form.target.api == weight_form.ms for form in written):
            continue
        spec = {"id": f"{entry.api}#weights:{weight_form.ms}", "api": entry.api, "torch": own.torch,
                "mindspore": own.mindspore, "inputs": dict(own.inputs), "form": weight_form.ms,
                "weights_only": True}
        spec.update({k: own.extra[k] for k in EXAMPLE_KEYS if k in own.extra})
        spec.pop("dtypes", None)
        weights = _weights(entry, weight_form.ms, own, facts)
        if weights is not None:
            spec["weights"] = weights
        specs.append(spec)
    return specs


def verified_entries(table: MappingTable) -> list[MappingEntry]:
    """The entries the record covers: every equivalent or diff_params entry (for the default target)."""
    version = parse_version(table.meta.default_target)
    return [entry for api, entry in sorted(table.entries.items())
            if entry.category_for(version, None) in VERIFIED_CATEGORIES or entry.examples]


def _kind(entry: MappingEntry) -> ExampleKind:
    return entry.examples[0].kind if entry.examples else ExampleKind.FUNCTION


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


def _form_record(spec: dict[str, Any], results: list[dict[str, Any]]) -> FormRecord:
    """The results of one form's jobs (one per example): the worst status, the cases summed."""
    worst = max(results, key=lambda r: _RANK.get(r.get("status", "error"), 2))
    status = str(worst.get("status", "error"))
    reason = str(worst.get("reason") or "")
    if status != "passed" and len(results) > 1:
        reason = f"example {results.index(worst)}: {reason}"
    counts = {key: sum(int(r.get(key) or 0) for r in results) for key in COUNTS}
    abs_errs = [r["max_abs_err"] for r in results if isinstance(r.get("max_abs_err"), (int, float))]
    rel_errs = [r["max_rel_err"] for r in results if isinstance(r.get("max_rel_err"), (int, float))]
    runs = [r.get("runs") for r in results]
    differences: dict[str, str] = {}
    for r in results:
        for tag, why in (r.get("differences") or {}).items():
            differences.setdefault(str(tag), str(why))
    sources: dict[str, int] = {}
    for r in results:
        if r.get("source"):
            sources[str(r["source"])] = sources.get(str(r["source"]), 0) + int(r.get("cases") or 0)
    return FormRecord(form=str(spec["form"]), status=status, devices=tuple(spec.get("for") or ()),
                      version=str(spec["rewrite"]["version"]), counts=counts,
                      max_abs_err=max(abs_errs) if abs_errs else None,
                      max_rel_err=max(rel_errs) if rel_errs else None, reason=reason,
                      runs=True if True in runs else (False if False in runs else None), differences=differences,
                      sources=sources)


def entry_verdict(entry: MappingEntry, device: str, specs: list[dict[str, Any]],
                  results: list[dict[str, Any]]) -> EntryRecord:
    """What the entry's jobs (`specs`, in order, with their `results`) say for the device they ran on:
    one record per form; the entry's status is that of the form written for the device."""
    if not entry.examples and not specs:
        if entry.not_runnable:  # declared in the table: counted apart from entries that merely lack one
            return EntryRecord(status="skipped", reason=f"{NOT_RUNNABLE}{entry.not_runnable}")
        return EntryRecord(status="skipped", reason="no example")
    if not specs:
        return EntryRecord(status="skipped", reason="the fix writes no MindSpore form for it")
    grouped: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
    weights_failed: list[str] = []
    for spec, result in zip(specs, results):
        if spec.get("weights_only"):  # a weight form's own example: its facts wrong fail the entry
            if result.get("status") == "failed":
                weights_failed.append(f"weight facts for {spec['form']}: {result.get('reason') or ''}")
            continue
        grouped.setdefault(str(spec["form"]), (spec, []))[1].append(result)
    records = tuple(_form_record(spec, rs) for spec, rs in grouped.values())
    # (the target's form and the entry's own rewrite both name a device where the target has no kernel: the
    # rewrite that ran there decides, else the target's reason, "no CPU kernel for ...")
    mine = [f for f in records if device in f.devices]
    own = next((f for f in mine if f.status != "skipped" and f.form.startswith(OWN_FORM)), mine[0] if mine else None)
    if weights_failed:
        return EntryRecord(status="failed", reason="; ".join(weights_failed), forms=records)
    if own is None:
        return EntryRecord(status="skipped", reason="no form is written for this device", forms=records)
    return EntryRecord(status=own.status, reason=own.reason, forms=records)
