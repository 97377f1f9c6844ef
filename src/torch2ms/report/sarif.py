"""SARIF 2.1.0 output, for GitHub code scanning and other SARIF viewers.

One run; ``tool.driver.rules`` lists every code of `codes.CODES` (stable rule
ids = the codes, with helpUri and a default level); each finding is a result
with its rule id and index, level, message and one physical location whose
artifact URI is relative to the working directory (``uriBaseId`` SRCROOT, given
in ``originalUriBaseIds``). Regions are 1-based lines and 1-based columns
counted in code points (``columnKind`` unicodeCodePoints).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .. import __version__
from ..codes import CODES
from ..mappings import load_table
from ..model import Diagnostic, FileResult, Severity
from ..strings import shown_path

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _rule(code: str) -> dict[str, Any]:
    info = CODES[code]
    return {
        "id": code,
        "name": "".join(part.capitalize() for part in info.name.split("-")),
        "shortDescription": {"text": info.summary},
        "fullDescription": {"text": f"{code} {info.name}: {info.summary}"},
        "helpUri": info.doc_url,
        "help": {"text": f"{info.summary} See {info.doc_url}"},
        "defaultConfiguration": {"level": LEVELS[info.severity]},
        "properties": {"category": info.category.value, "tags": ["torch2ms", info.category.value]},
    }


def _uri(path: str, root: str | None) -> tuple[str, bool]:
    """(uri, relative): a relative URI reference below `root`, else a file: URI. A name that is not
    UTF-8 keeps its bytes, percent-encoded."""
    shown = shown_path(path, root)
    if not os.path.isabs(shown) and not shown.startswith("../"):
        return quote(os.fsencode(shown), safe="/"), True
    return Path(os.path.abspath(path)).as_uri(), False


def _result(diag: Diagnostic, uri: str, relative: bool, rule_index: dict[str, int]) -> dict[str, Any]:
    span = diag.span
    region: dict[str, int] = {"startLine": max(1, span.start_line), "startColumn": span.start_col + 1}
    end_line = max(span.end_line, span.start_line)
    end_col = span.end_col + 1
    if end_line > span.start_line or end_col > region["startColumn"]:
        region["endLine"] = end_line
        region["endColumn"] = end_col
    location: dict[str, Any] = {"uri": uri}
    if relative:
        location["uriBaseId"] = "SRCROOT"
    message = diag.message
    out: dict[str, Any] = {
        "ruleId": diag.code,
        "level": LEVELS[diag.severity],
        "message": {"text": message},
        "locations": [{"physicalLocation": {"artifactLocation": location, "region": region}}],
        "properties": {"category": diag.category.value, "confidence": diag.confidence.value},
    }
    if diag.code in rule_index:
        out["ruleIndex"] = rule_index[diag.code]
    if diag.torch_api:
        out["properties"]["torchApi"] = diag.torch_api
    if diag.mindspore_api:
        out["properties"]["mindsporeApi"] = diag.mindspore_api
    fix = diag.fix
    if fix is not None and fix.edits:
        out["fixes"] = [{
            "description": {"text": fix.title},
            "artifactChanges": [{
                "artifactLocation": location,
                "replacements": [{
                    "deletedRegion": {"startLine": e.span.start_line, "startColumn": e.span.start_col + 1,
                                      "endLine": e.span.end_line, "endColumn": e.span.end_col + 1},
                    "insertedContent": {"text": e.text},
                } for e in fix.edits],
            }],
        }]
    return out


def document(results: list[FileResult], target_version: str, root: str | None = None) -> dict[str, Any]:
    rule_ids = sorted(CODES)
    rule_index = {code: i for i, code in enumerate(rule_ids)}
    out_results = []
    for result in sorted(results, key=lambda r: r.path):
        uri, relative = _uri(result.path, root)
        for diag in result.diagnostics:
            out_results.append(_result(diag, uri, relative, rule_index))
    base = Path(os.path.abspath(root or os.getcwd())).as_uri().rstrip("/") + "/"
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "torch2ms",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": [_rule(code) for code in rule_ids],
                "properties": {"mappingTableVersion": load_table().meta.version,
                               "targetMindSporeVersion": target_version},
            }},
            "originalUriBaseIds": {"SRCROOT": {"uri": base}},
            "columnKind": "unicodeCodePoints",
            "results": out_results,
        }],
    }


def render(results: list[FileResult], target_version: str, root: str | None = None) -> str:
    return json.dumps(document(results, target_version, root), indent=2) + "\n"
