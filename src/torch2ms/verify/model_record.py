"""The record of a `torch2ms verify-model` run: its JSON result, written to a file for the HTML report.

Pure (json only): `torch2ms scan --html report.html --model-record FILE` reads it without torch or
MindSpore. The document is the one `verify-model --json` prints (see docs/weights.md).
"""

from __future__ import annotations

from typing import Any

from ..jsonfile import read_json, write_json

RECORD_FORMAT = "torch2ms-model-verification"


class ModelRecordError(Exception):
    """A record that cannot be read (names the file and the reason)."""


def write_model_record(path: str, result: dict[str, Any]) -> None:
    """Write the result atomically."""
    write_json(path, result)


def read_model_record(path: str) -> dict[str, Any]:
    data = read_json(path, "model record", ModelRecordError)
    if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
        raise ModelRecordError(f"{path}: not a model record of `torch2ms verify-model --record` "
                               f"(no \"format\": \"{RECORD_FORMAT}\")")
    return data


def summary(record: dict[str, Any]) -> dict[str, Any]:
    """What the HTML report shows of a record: the pair, the status, the worst errors per mode, the weights."""
    modes = []
    for mode, report in (record.get("modes") or {}).items():
        rows = report.get("outputs") or []
        errors = [r.get("max_abs") for r in rows if isinstance(r.get("max_abs"), (int, float))]
        train = report.get("train") or {}
        modes.append({"mode": mode, "error": report.get("error"), "outputs": len(rows),
                      "ok": not report.get("error") and all(r.get("ok") for r in rows),
                      "max_abs": max(errors) if errors else None,
                      "train_max_abs": train.get("max_abs") if train else None})
    weights = record.get("weights") or {}
    original, ported = record.get("original") or {}, record.get("ported") or {}
    return {
        "original": f"{original.get('file')}:{original.get('factory')}",
        "ported": f"{ported.get('file')}:{ported.get('factory')}",
        "status": str(record.get("status") or "failed"),
        "date": record.get("date"),
        "modes": modes,
        "copied": weights.get("copied"), "torch_tensors": weights.get("torch_tensors"),
        "unplaced": len(weights.get("unplaced") or {}),
        "problems": list(record.get("problems") or [])[:10],
        "train_step": record.get("train_step"),
        "tolerance": record.get("tolerance") or {},
    }
