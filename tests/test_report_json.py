"""The JSON report: valid against docs/json-schema.json, counts consistent with the scan."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from torch2ms.model import ScanSummary
from torch2ms.report import json as json_report
from torch2ms.verify.record import load_record

from conftest import run_cli
from report_project import make_project, scan, synthetic

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "docs" / "json-schema.json"


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _errors(validator, doc):
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]


def test_report_of_a_real_scan_is_valid_and_consistent(tmp_path, monkeypatch, validator):
    make_project(tmp_path / "proj")
    monkeypatch.chdir(tmp_path)
    results = scan(Path("proj"))
    text = json_report.render(results, "2.10", paths=["proj"], date="2026-01-02")
    doc = json.loads(text)
    assert _errors(validator, doc) == []
    assert doc["schema_version"] == json_report.SCHEMA_VERSION == 7
    assert doc["project"] == {"name": "proj", "date": "2026-01-02"}
    summary = ScanSummary.of(results)
    assert doc["summary"]["files"] == summary.files == len(doc["files"])
    assert doc["summary"]["findings"] == summary.diagnostics == sum(len(f["diagnostics"]) for f in doc["files"])
    assert doc["summary"]["files_failed"] == len(doc["failures"]) == 1
    assert doc["failures"][0]["path"] == "proj/data/broken.py"
    assert doc["summary"]["distinct_apis"] == len(doc["apis"])
    assert doc["summary"]["api_uses"] == sum(a["uses"] for a in doc["apis"])
    assert sum(d["findings"] for d in doc["directories"]) == summary.diagnostics
    for f in doc["files"]:
        assert f["findings"] == len(f["diagnostics"]) == sum(f["by_category"].values())
        assert not f["path"].startswith("/")
    # every API row's locations point at a finding of that API
    where = {(f["path"], d["span"]["start_line"], d["torch_api"]) for f in doc["files"] for d in f["diagnostics"]}
    record = load_record()
    assert doc["tool"]["target_device"] == "cpu"
    for api in doc["apis"]:
        label = record.label(api["api"], "cpu") if record is not None else None
        assert api["verification_status"] == (record.status(api["api"], "cpu") if record is not None else "none")
        assert api["verification"] == (label or "not verified")
        for loc in api["locations"]:
            assert (loc["path"], loc["line"], api["api"]) in where
    assert [r["code"] for r in doc["rules"]] == sorted(r["code"] for r in doc["rules"])


def test_old_signature_still_works(tmp_path, monkeypatch, validator):
    make_project(tmp_path / "proj")
    monkeypatch.chdir(tmp_path)
    results = scan(Path("proj"))
    doc = json.loads(json_report.render(results, "2.10", None))
    assert _errors(validator, doc) == []
    assert doc["project"]["date"] is None
    assert json_report.render(results, "2.10") == json_report.render(list(reversed(results)), "2.10")


def test_synthetic_results_readiness_and_rewrite(validator):
    results, sources = synthetic()
    doc = json_report.document(results, "2.10", paths=["pkg"], sources=sources)
    assert _errors(validator, doc) == []
    readiness = doc["summary"]["readiness"]
    assert readiness["api_uses"] == 5 and readiness["percent"] == 40.0
    assert [(a["api"], a["uses"]) for a in doc["apis"]] == [("torch.ones", 2), ("torch.special_thing", 2),
                                                             ("torch.nonzero", 1)]
    missing = doc["apis"][1]
    assert missing["category"] == "missing" and missing["mapped"] is False and missing["files"] == 1
    rewrite = doc["files"][0]["diagnostics"][0]["rewrite"]
    assert rewrite["before"] == "x = torch.ones(2)" and rewrite["after"] == "x = mindspore.mint.ones(2)"
    # schema catches a broken document
    doc["summary"]["files"] = -1
    assert _errors(validator, doc)


def test_cli_json_format(tmp_path, monkeypatch, validator):
    make_project(tmp_path / "proj")
    monkeypatch.chdir(tmp_path)
    run = run_cli("scan", "proj", "--format", "json", "-j", "1")
    assert run.returncode == 1, run.stderr  # there are findings
    doc = json.loads(run.stdout)
    assert _errors(validator, doc) == []
    assert doc["project"]["name"] == "proj"


def test_rewrite_preview_shows_changed_lines_as_hunks():
    from torch2ms.model import Category, Diagnostic, Edit, Fix, Severity, Span

    text = "import torch\n\n\ndef f(x):\n    return torch.abs(x)\n"
    fix = Fix(title="Call mindspore.mint.abs", safe=False, edits=(
        Edit(Span(1, 0, 1, 0), "import mindspore\n"),
        Edit(Span(5, 11, 5, 20), "mindspore.mint.abs"),
    ))
    diag = Diagnostic(code="TMS101", severity=Severity.INFO, category=Category.EQUIVALENT, span=Span(5, 11, 5, 23),
                      message="torch.abs -> mindspore.mint.abs", torch_api="torch.abs", fix=fix)
    preview = json_report.rewrite_preview(diag, text)
    assert preview == {
        "title": "Call mindspore.mint.abs", "safe": False, "start_line": 1,
        "before": "    return torch.abs(x)",
        "after": "import mindspore\n...\n    return mindspore.mint.abs(x)",
    }
    assert json_report.rewrite_preview(diag, None) is None
    # a fix whose span lies past the end of the text is not previewed
    late = Diagnostic(code="TMS101", severity=Severity.INFO, category=Category.EQUIVALENT, span=Span(9, 0, 9, 1),
                      message="m", fix=Fix(title="t", edits=(Edit(Span(9, 0, 9, 1), "y"),)))
    assert json_report.rewrite_preview(late, text) is None


def test_streamed_document_is_the_whole_document_dumped(tmp_path, monkeypatch):
    """`write` streams file by file yet gives exactly `json.dumps(document(...), indent=2)`."""
    make_project(tmp_path / "proj")
    monkeypatch.chdir(tmp_path)
    results = scan(tmp_path / "proj")
    assert any(d.fix for r in results for d in r.diagnostics)  # rewrite previews are exercised
    whole = json_report.document(results, "2.10", paths=["proj"], date="d",
                                 sources=json_report.read_sources(results))
    assert json_report.render(results, "2.10", paths=["proj"], date="d") == json.dumps(whole, indent=2) + "\n"
    empty = json_report.document([], "2.10", paths=["proj"], date="d")
    assert json_report.render([], "2.10", paths=["proj"], date="d") == json.dumps(empty, indent=2) + "\n"


def test_cli_json_to_a_file_matches_stdout(tmp_path, monkeypatch):
    make_project(tmp_path / "proj")
    monkeypatch.chdir(tmp_path)
    base = ["scan", "proj", "--format", "json", "--no-cache", "--date", "d"]
    to_stdout = run_cli(*base)
    to_file = run_cli(*base, "-o", "out.json")
    assert to_file.returncode == to_stdout.returncode == 1
    assert (tmp_path / "out.json").read_text(encoding="utf-8") == to_stdout.stdout
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("out.json")] == ["out.json"]
