"""The JSON report: a versioned document with the summary and every finding."""

from __future__ import annotations

import json
from typing import Any

from .. import __version__
from ..mappings import load_table
from ..model import FileResult, ScanSummary
from . import display_path

SCHEMA_VERSION = 1


def document(results: list[FileResult], target_version: str, root: str | None = None) -> dict[str, Any]:
    summary = ScanSummary.of(results)
    table = load_table()
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "torch2ms", "version": __version__, "mapping_table_version": table.meta.version,
                 "target_mindspore_version": target_version},
        "summary": {
            "files": summary.files,
            "files_failed": summary.files_failed,
            "lines": summary.lines,
            "findings": summary.diagnostics,
            "by_code": summary.by_code,
            "by_category": summary.by_category,
            "by_api": summary.by_api,
        },
        "files": [
            {
                "path": display_path(r.path, root),
                "lines": r.lines,
                "error": r.error.message if r.error else None,
                "diagnostics": [d.to_dict() for d in r.diagnostics],
            }
            for r in results
        ],
    }


def render(results: list[FileResult], target_version: str, root: str | None = None) -> str:
    return json.dumps(document(results, target_version, root), indent=2, sort_keys=False) + "\n"
