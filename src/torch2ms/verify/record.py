"""The verification record (src/torch2ms/data/verification.json): read and write it without torch or MindSpore.

The unit of verification is (entry, form, device): for every device `torch2ms verify` ran on,
each entry lists the MindSpore forms the fix writes (the one for each device and version) and
what happened when the fix's own text ran on generated cases (docs/verify.md)::

    {"torch_version": "2.13.0+cpu", "mindspore_version": "2.10.0", "devices": ["cpu"],
     "date": "2026-11-25", "command": "torch2ms verify --all --write-record",
     "summary": {"cpu": {"passed": 1, "failed": 0, "error": 0, "skipped": 0, "cases": 31}},
     "entries": {"torch.abs": {"cpu": {"status": "passed", "reason": "", "forms": [
        {"form": "mindspore.mint.abs", "for": ["cpu", "gpu", "ascend"], "version": "2.10",
         "status": "passed", "cases": 31, "agreed": 31, "stated": 0, "failed": 0, "no_fix": 0,
         "rejected": 4, "max_abs_err": 0.0, "max_rel_err": 0.0, "runs": true, "reason": "",
         "sources": {"generator": 27, "opinfo": 4}}]}}}}

`sources` counts a form's cases by where they came from: the generator (verify/generate.py) or
torch's own test database (OpInfo, ModuleInfo: verify/samples.py); absent in a record written before.

A form's `status`: passed (a case agreed, and every other differed as a fact of the form
states), differs (every case differed, each as a fact states), failed (a case disagreed that
no fact explains), error (the torch example itself does not run) or skipped (the fix writes no
rewrite, the device has no kernel for it, or nothing is comparable). An
entry's status on a device is that of the form written for the device; without forms (no
example, not runnable) it says why.
"""

from __future__ import annotations

import functools
import json
import math
import os
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from ..files import UnreadableFile, read_regular
from ..jsonfile import MAX_JSON_BYTES, loads_bounded

RECORD_NAME = "verification.json"
STATUSES = ("passed", "differs", "failed", "error", "skipped")
COUNTS = ("cases", "agreed", "stated", "failed", "no_fix", "rejected", "uncompared")
FORMAT = 2


class RecordError(Exception):
    """The record file is unreadable or malformed; the message names the file and the reason."""


def device_name(device: str) -> str:
    return "Ascend" if device == "ascend" else device.upper()


@dataclass(frozen=True)
class FormRecord:
    """One MindSpore form of an entry, run on one device as the fix writes it."""

    form: str
    status: str
    devices: tuple[str, ...] = ()  # the devices the fix writes this form for (at `version`)
    version: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    reason: str = ""
    runs: bool | None = None  # MindSpore ran the form's code here (False: no kernel on this device)
    differences: dict[str, str] = field(default_factory=dict)  # case tag -> how its first disagreeing case differed
    sources: dict[str, int] = field(default_factory=dict)  # cases per source: generator, opinfo, moduleinfo

    def count(self, key: str) -> int:
        return int(self.counts.get(key, 0))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"form": self.form, "for": list(self.devices), "version": self.version,
                               "status": self.status}
        out.update({key: self.count(key) for key in COUNTS})
        out.update({"max_abs_err": _finite(self.max_abs_err), "max_rel_err": _finite(self.max_rel_err),
                    "runs": self.runs, "reason": self.reason})
        if self.differences:
            out["differences"] = dict(sorted(self.differences.items()))
        if self.sources:
            out["sources"] = dict(sorted(self.sources.items()))
        return out


@dataclass(frozen=True)
class EntryRecord:
    """An entry on one device: its forms, and its status there (that of the form written for it)."""

    status: str
    reason: str = ""
    forms: tuple[FormRecord, ...] = ()

    def form_for(self, device: str) -> FormRecord | None:
        """The form the fix writes for `device` (at the default version), if it ran here."""
        return next((f for f in self.forms if device in f.devices), None)

    @property
    def cases(self) -> int:
        return sum(f.count("cases") for f in self.forms)

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "reason": self.reason, "forms": [f.to_dict() for f in self.forms]}


@dataclass(frozen=True)
class Record:
    torch_version: str
    mindspore_version: str
    devices: tuple[str, ...]
    date: str
    entries: dict[str, dict[str, EntryRecord]]  # api -> device -> what ran there

    def get(self, api: str, device: str) -> EntryRecord | None:
        return self.entries.get(api, {}).get(device)

    def status(self, api: str, device: str) -> str:
        """passed, failed, error or skipped for the form written for `device`; "none" when not run there."""
        entry = self.get(api, device)
        return entry.status if entry is not None else "none"

    def label(self, api: str, device: str) -> str | None:
        """The line reports and hovers show: which form ran where and how it went, e.g.
        "verified on MindSpore 2.10.0, CPU: mindspore.nn.Conv2d as the fix writes it, 26 cases agree".
        None when the entry is in no part of the record."""
        runs = self.entries.get(api)
        if not runs:
            return None
        where = device_name(device)
        entry = runs.get(device)
        if entry is None:
            written = next((f for e in runs.values() for f in e.forms if device in f.devices), None)
            ran_on = ", ".join(device_name(d) for d in sorted(runs))
            if written is None:
                return f"not verified on {where} (verify ran on {ran_on} only)"
            return (f"not verified on {where}: {written.form}, the form written for {where}, "
                    f"ran on {ran_on} only")
        on = f"MindSpore {self.mindspore_version}, {where}"
        form = entry.form_for(device)
        if form is None:
            return f"not verified on {where} ({entry.reason})" if entry.reason else f"not verified on {where}"
        cases = form.count("cases")
        if form.status == "passed":
            text = f"verified on {on}: {form.form} as the fix writes it, {form.count('agreed')} of {cases} cases agree"
            stated = form.count("stated")
            return text + (f", {stated} differ as its facts state" if stated else "")
        if form.status == "failed":
            return (f"verification FAILED on {on}: {form.form} as the fix writes it, {form.count('failed')} of "
                    f"{cases} cases disagree: {form.reason}")
        if form.status == "differs":
            return (f"not verified on {on}: {form.form} as the fix writes it differs from torch in all {cases} "
                    f"cases, as its facts state")
        if form.status == "error":
            return f"not verified on {on}: {form.reason}"
        return f"not verified on {where}: {form.form} ({form.reason})" if form.reason else \
            f"not verified on {where}: {form.form}"

    def summary(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for device in self.devices:
            counts = dict.fromkeys(STATUSES, 0)
            cases = 0
            for runs in self.entries.values():
                entry = runs.get(device)
                if entry is None:
                    continue
                counts[entry.status] = counts.get(entry.status, 0) + 1
                cases += entry.cases
            out[device] = {**counts, "cases": cases}
        return out

    def to_dict(self, command: str = "") -> dict[str, Any]:
        out: dict[str, Any] = {
            "format": FORMAT,
            "torch_version": self.torch_version,
            "mindspore_version": self.mindspore_version,
            "devices": list(self.devices),
            "date": self.date,
        }
        if command:
            out["command"] = command
        out["summary"] = self.summary()
        out["entries"] = {api: {d: runs[d].to_dict() for d in sorted(runs)} for api, runs in sorted(self.entries.items())}
        return out


def _finite(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return float(f"{value:.6g}")


def default_path() -> Path:
    """src/torch2ms/data/verification.json of the installed package (the source tree in an editable install)."""
    return Path(str(resources.files("torch2ms.data").joinpath(RECORD_NAME)))


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _form(raw: Any, where: str) -> FormRecord:
    if not isinstance(raw, dict) or not isinstance(raw.get("form"), str) or raw.get("status") not in STATUSES:
        raise RecordError(f"{where}: a form needs 'form' and a 'status' of {', '.join(STATUSES)}")
    devices = raw.get("for") or []
    if not isinstance(devices, list):
        raise RecordError(f"{where}: 'for' must be a list of devices")
    counts = {key: _count(raw.get(key), f"{where}: '{key}'") for key in COUNTS}
    differences = raw.get("differences") or {}
    if not isinstance(differences, dict):
        raise RecordError(f"{where}: 'differences' must be an object")
    sources = raw.get("sources") or {}
    if not isinstance(sources, dict):
        raise RecordError(f"{where}: 'sources' must be an object of counts")
    return FormRecord(form=raw["form"], status=raw["status"], devices=tuple(str(d) for d in devices),
                      version=str(raw.get("version") or ""), counts=counts,
                      max_abs_err=_number(raw.get("max_abs_err")), max_rel_err=_number(raw.get("max_rel_err")),
                      reason=str(raw.get("reason") or ""),
                      runs=raw.get("runs") if isinstance(raw.get("runs"), bool) else None,
                      differences={str(k): str(v) for k, v in differences.items()},
                      sources={str(k): _count(v, f"{where}: 'sources.{k}'") for k, v in sources.items()})


def _count(value: Any, where: str) -> int:
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise RecordError(f"{where} must be a count (a non-negative integer)")
    return value


def parse_record(doc: Any, where: str) -> Record:
    if not isinstance(doc, dict):
        raise RecordError(f"{where}: the record must be a JSON object")
    for key in ("torch_version", "mindspore_version", "devices", "date", "entries"):
        if key not in doc:
            raise RecordError(f"{where}: missing key '{key}'")
    if not isinstance(doc["entries"], dict):
        raise RecordError(f"{where}: 'entries' must be an object")
    if not isinstance(doc["devices"], list) or not all(isinstance(d, str) for d in doc["devices"]):
        raise RecordError(f"{where}: 'devices' must be a list of device names")
    entries: dict[str, dict[str, EntryRecord]] = {}
    for api, runs in doc["entries"].items():
        if not isinstance(runs, dict):
            raise RecordError(f"{where}: entries.{api}: expected an object of devices")
        entries[api] = {}
        for device, raw in runs.items():
            at = f"{where}: entries.{api}.{device}"
            if not isinstance(raw, dict) or raw.get("status") not in STATUSES:
                raise RecordError(f"{at}: 'status' must be one of {', '.join(STATUSES)}")
            forms = tuple(_form(f, at) for f in raw.get("forms") or [])
            entries[api][device] = EntryRecord(status=raw["status"], reason=str(raw.get("reason") or ""), forms=forms)
    return Record(torch_version=str(doc["torch_version"]), mindspore_version=str(doc["mindspore_version"]),
                  devices=tuple(doc["devices"]), date=str(doc["date"]), entries=entries)


def read_record(path: str | Path) -> Record:
    """The verification record in `path`, read as hostile input (`torch2ms.jsonfile`)."""
    try:
        text = read_regular(str(path), MAX_JSON_BYTES).decode("utf-8")
    except UnreadableFile as exc:
        raise RecordError(f"{path}: cannot read: {exc}") from None
    except UnicodeDecodeError as exc:
        raise RecordError(f"{path}: not UTF-8: {exc.reason}") from None
    try:
        doc = loads_bounded(text)
    except json.JSONDecodeError as exc:
        raise RecordError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:
        raise RecordError(f"{path}: not a valid record: {exc}") from None
    return parse_record(doc, str(path))


@functools.lru_cache(maxsize=4)
def _cached(path: str, mtime: float) -> Record | None:
    del mtime  # part of the cache key only
    try:
        return read_record(path)
    except RecordError:
        return None


def load_record(path: str | Path | None = None) -> Record | None:
    """The verification record, or None when there is none (or it is unreadable).

    Cheap to call repeatedly (cached on the file's modification time); never imports
    torch or MindSpore, so reports and the language server can use it.
    """
    target = Path(path) if path is not None else default_path()
    try:
        mtime = os.stat(target).st_mtime
    except OSError:
        return None
    return _cached(str(target), mtime)


def merged(old: Record | None, torch_version: str, mindspore_version: str, device: str,
           verdicts: dict[str, EntryRecord], full: bool, date: str) -> Record:
    """The record after a run on `device`: a full run replaces that device's part, a partial run
    updates the entries it ran; other devices' parts stay when the library versions are the same."""
    entries: dict[str, dict[str, EntryRecord]] = {}
    devices = {device}
    if old is not None and (old.torch_version, old.mindspore_version) == (torch_version, mindspore_version):
        for api, runs in old.entries.items():
            kept = {d: e for d, e in runs.items() if d != device or not full}
            if kept:
                entries[api] = kept
        devices |= {d for d in old.devices if d != device or not full}
    for api, verdict in verdicts.items():
        before = entries.get(api, {}).get(device)
        entries.setdefault(api, {})[device] = verdict if before is None else _kernels_kept(before, verdict)
    order = ("cpu", "gpu", "ascend")
    return Record(torch_version=torch_version, mindspore_version=mindspore_version,
                  devices=tuple(d for d in order if d in devices) + tuple(sorted(devices - set(order))),
                  date=date, entries=entries)


def _kernels_kept(before: EntryRecord, after: EntryRecord) -> EntryRecord:
    """`after`, where a form it did not run (the fix wrote another text for it: `runs` None) keeps the earlier
    run's finding that this device has no kernel for it (same libraries: the kernel is still missing)."""
    missing = {(f.form, f.version): f for f in before.forms if f.runs is False}
    forms = tuple(missing.get((f.form, f.version), f) if f.runs is None else f for f in after.forms)
    return after if forms == after.forms else replace(after, forms=forms)


def write_record(record: Record, path: str | Path, command: str = "") -> None:
    from ..writing import write_text

    doc = record.to_dict(command)
    entries = doc.pop("entries")
    head = json.dumps(doc, indent=1)[:-2]  # without the closing brace: one entry per line follows
    body = ",\n".join(f"  {json.dumps(api)}: {json.dumps(value)}" for api, value in entries.items())
    write_text(str(path), f'{head},\n "entries": {{\n{body}\n }}\n}}\n')
