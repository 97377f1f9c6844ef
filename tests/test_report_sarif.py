"""SARIF 2.1.0 output, validated against the official OASIS schema kept in tests/data."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from torch2ms.codes import CODES
from torch2ms.report import sarif

from conftest import run_cli
from report_project import make_project, scan, synthetic

SCHEMA_PATH = Path(__file__).resolve().parent / "data" / "sarif-schema-2.1.0.json"


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=jsonschema.FormatChecker())


def _errors(validator, doc):
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]


def test_sarif_of_a_real_scan(tmp_path, monkeypatch, validator):
    make_project(tmp_path / "proj")
    monkeypatch.chdir(tmp_path)
    results = scan(Path("proj"))
    doc = json.loads(sarif.render(results, "2.10"))
    assert _errors(validator, doc) == []
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(CODES)
    levels = {"error": "error", "warning": "warning", "info": "note"}
    for rule in rules:
        info = CODES[rule["id"]]
        assert rule["helpUri"] == info.doc_url
        assert rule["defaultConfiguration"]["level"] == levels[info.severity.value]
    expected = [(r.path, d) for r in results for d in r.diagnostics]
    assert len(run["results"]) == len(expected)
    for item, (path, diag) in zip(run["results"], expected):
        assert item["ruleId"] == diag.code
        assert rules[item["ruleIndex"]]["id"] == diag.code
        assert item["level"] == levels[diag.severity.value]
        assert item["message"]["text"] == diag.message
        location = item["locations"][0]["physicalLocation"]
        assert location["artifactLocation"] == {"uri": path, "uriBaseId": "SRCROOT"}
        region = location["region"]
        assert region["startLine"] == diag.span.start_line
        assert region["startColumn"] == diag.span.start_col + 1
        if "endColumn" in region:
            assert region["endLine"] == diag.span.end_line and region["endColumn"] == diag.span.end_col + 1
    assert run["originalUriBaseIds"]["SRCROOT"]["uri"].startswith("file://")
    assert run["originalUriBaseIds"]["SRCROOT"]["uri"].endswith("/")
    assert any(r["ruleId"] == "TMS901" and r["level"] == "error" for r in run["results"])


def test_sarif_fixes_and_outside_paths(validator):
    results, _ = synthetic()
    doc = sarif.document(results, "2.10", root="/nonexistent-root")
    assert _errors(validator, doc) == []
    first = doc["runs"][0]["results"][0]
    assert first["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/a.py"
    fix = first["fixes"][0]
    assert fix["description"]["text"] == "Call mindspore.mint.ones"
    replacement = fix["artifactChanges"][0]["replacements"][0]
    assert replacement["deletedRegion"] == {"startLine": 2, "startColumn": 5, "endLine": 2, "endColumn": 15}
    assert replacement["insertedContent"]["text"] == "mindspore.mint.ones"
    # the validator really checks: a wrong level is rejected
    first["level"] = "fatal"
    assert _errors(validator, doc)


def test_cli_sarif_format(tmp_path, monkeypatch, validator):
    make_project(tmp_path / "proj")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out.sarif"
    run = run_cli("scan", "proj", "--format", "sarif", "-o", str(out), "-j", "1")
    assert run.returncode == 1, run.stderr
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert _errors(validator, doc) == []
    assert doc["runs"][0]["results"]
