"""Progress since an earlier JSON report (`torch2ms scan --html R.html --compare OLD.json`).

Findings are matched as `--baseline` matches them (file, code, torch API, context and
line text; torch2ms.baseline), so "fixed" counts the earlier findings that are gone and
"new" the findings that were not there; the effort classes of the earlier report are
taken from it, or worked out from its findings with today's tables for a report of
schema 4.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..baseline import Baseline, read_report
from ..effort import EFFORTS, effort_of
from ..mappings import load_table, parse_version
from ..model import FileResult


def progress(old_path: str, results: list[FileResult], read: Callable[[str], str | None],
             summary: dict[str, Any], target_version: str) -> dict[str, Any]:
    """The comparison of this scan (`results`, its document's `summary`) with the report at `old_path`."""
    old = read_report(old_path)
    baseline = Baseline.from_document(old, old_path)
    _, matched = baseline.filter(results, read)
    old_total = sum(baseline.keys.values())
    old_effort = old.get("summary", {}).get("by_effort")
    if not isinstance(old_effort, dict):
        table, version = load_table(), parse_version(target_version)
        old_effort = {}
        for file in old["files"]:
            for diag in file["diagnostics"]:
                effort = effort_of(diag["code"], diag["category"], diag["torch_api"], table, version)
                if effort is not None:
                    old_effort[effort] = old_effort.get(effort, 0) + 1
    now_effort = summary.get("by_effort", {})
    old_ready = old.get("summary", {}).get("readiness", {}).get("percent")
    return {
        "name": os.path.basename(old_path),
        "date": old.get("project", {}).get("date"),
        "findings": {"old": old_total, "now": summary["findings"], "change": summary["findings"] - old_total},
        "fixed": old_total - matched,
        "new": summary["findings"] - matched,
        "readiness": {"old": old_ready, "now": summary["readiness"]["percent"],
                      "change": None if old_ready is None else round(summary["readiness"]["percent"] - old_ready, 1)},
        "by_effort": [{"effort": e, "old": int(old_effort.get(e, 0)), "now": int(now_effort.get(e, 0)),
                       "change": int(now_effort.get(e, 0)) - int(old_effort.get(e, 0))} for e in EFFORTS],
    }
