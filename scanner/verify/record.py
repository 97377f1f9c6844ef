"""The verification record (mappings/verification.json): read and write it without torch or MindSpore.

Format (documented in docs/verify.md)::

    {"torch_version": "2.13.0+cpu", "mindspore_version": "2.10.0", "device": "cpu",
     "date": "2026-11-22", "command": "torch2ms verify --all --write-record",
     "summary": {"passed": 1, "failed": 0, "error": 0, "skipped": 0},
     "entries": {"torch.abs": {"status": "passed", "max_abs_err": 0.0, "max_rel_err": 0.0, "reason": ""}}}

`status` is one of passed, failed, error (the torch example itself did not run or
the backend failed) and skipped (no example, or nothing comparable). Errors are
null when unknown.
"""

from __future__ import annotations

import functools
import json
import math
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

RECORD_NAME = "verification.json"
STATUSES = ("passed", "failed", "error", "skipped")


class RecordError(Exception):
    """The record file is unreadable or malformed; the message names the file and the reason."""


@dataclass(frozen=True)
class EntryRecord:
    status: str
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "max_abs_err": _finite(self.max_abs_err),
                "max_rel_err": _finite(self.max_rel_err), "reason": self.reason}


@dataclass(frozen=True)
class Record:
    torch_version: str
    mindspore_version: str
    device: str
    date: str
    entries: dict[str, EntryRecord]

    def get(self, api: str) -> EntryRecord | None:
        return self.entries.get(api)

    def label(self, api: str) -> str | None:
        """A short line for reports and hovers, e.g. "verified on MindSpore 2.10.0, CPU"."""
        entry = self.entries.get(api)
        if entry is None:
            return None
        where = f"MindSpore {self.mindspore_version}, {self.device.upper()}"
        if entry.status == "passed":
            return f"verified on {where}"
        if entry.status == "failed":
            return f"verification FAILED on {where}: {entry.reason}"
        if entry.status == "error":
            return f"not verified on {where}: {entry.reason}"
        return f"not verified ({entry.reason})" if entry.reason else "not verified"

    def summary(self) -> dict[str, int]:
        counts = dict.fromkeys(STATUSES, 0)
        for entry in self.entries.values():
            counts[entry.status] = counts.get(entry.status, 0) + 1
        return counts

    def to_dict(self, command: str = "") -> dict[str, Any]:
        out: dict[str, Any] = {
            "torch_version": self.torch_version,
            "mindspore_version": self.mindspore_version,
            "device": self.device,
            "date": self.date,
        }
        if command:
            out["command"] = command
        out["summary"] = self.summary()
        out["entries"] = {api: self.entries[api].to_dict() for api in sorted(self.entries)}
        return out


def _finite(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return float(f"{value:.6g}")


def default_path() -> Path:
    """mappings/verification.json of the installed package (the source tree in an editable install)."""
    return Path(str(resources.files("torch2ms.data").joinpath(RECORD_NAME)))


def parse_record(doc: Any, where: str) -> Record:
    if not isinstance(doc, dict):
        raise RecordError(f"{where}: the record must be a JSON object")
    for key in ("torch_version", "mindspore_version", "device", "date", "entries"):
        if key not in doc:
            raise RecordError(f"{where}: missing key '{key}'")
    if not isinstance(doc["entries"], dict):
        raise RecordError(f"{where}: 'entries' must be an object")
    entries = {}
    for api, raw in doc["entries"].items():
        if not isinstance(raw, dict) or raw.get("status") not in STATUSES:
            raise RecordError(f"{where}: entries.{api}: 'status' must be one of {', '.join(STATUSES)}")
        entries[api] = EntryRecord(status=raw["status"], max_abs_err=raw.get("max_abs_err"),
                                   max_rel_err=raw.get("max_rel_err"), reason=str(raw.get("reason") or ""))
    return Record(torch_version=str(doc["torch_version"]), mindspore_version=str(doc["mindspore_version"]),
                  device=str(doc["device"]), date=str(doc["date"]), entries=entries)


def read_record(path: str | Path) -> Record:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise RecordError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
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


def write_record(record: Record, path: str | Path, command: str = "") -> None:
    target = Path(path)
    tmp = target.with_name(f"{target.name}.tmp{os.getpid()}")
    doc = record.to_dict(command)
    entries = doc.pop("entries")
    head = json.dumps(doc, indent=1)[:-2]  # without the closing brace: one entry per line follows
    body = ",\n".join(f"  {json.dumps(api)}: {json.dumps(value)}" for api, value in entries.items())
    tmp.write_text(f'{head},\n "entries": {{\n{body}\n }}\n}}\n', encoding="utf-8")
    os.replace(tmp, target)
