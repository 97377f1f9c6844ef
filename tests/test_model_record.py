"""`verify-model --record` results in the HTML report (`scan --html --model-record FILE`), without torch or
MindSpore: the record is plain JSON."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli

from torch2ms.verify.model_record import RECORD_FORMAT, summary

RECORD = {
    "format": RECORD_FORMAT, "date": "2026-11-24", "status": "failed",
    "original": {"file": "model.py", "factory": "resnet18(num_classes=10)", "class": "ResNet"},
    "ported": {"file": "ported/model.py", "factory": "resnet18(num_classes=10)", "class": "ResNet"},
    "tolerance": {"rtol": 0.0001, "atol": 0.0001}, "train_step": None,
    "weights": {"torch_tensors": 122, "copied": 100, "unplaced": {"fc.weight": "the map has no entry for it"}},
    "modes": {"pynative": {"outputs": [{"path": "", "ok": False, "max_abs": 0.25}]},
              "graph": {"outputs": [], "error": "TypeError: cannot compile"}},
    "problems": ["pynative: output: values differ at 3 of 20 positions"],
}


def test_summary_of_a_record() -> None:
    row = summary(RECORD)
    assert row["original"] == "model.py:resnet18(num_classes=10)" and row["status"] == "failed"
    assert row["copied"] == 100 and row["unplaced"] == 1
    assert row["modes"][0] == {"mode": "pynative", "error": None, "outputs": 1, "ok": False, "max_abs": 0.25,
                               "train_max_abs": None}
    assert row["modes"][1]["error"] == "TypeError: cannot compile"


def test_the_html_report_shows_model_records_and_bad_records_are_errors(tmp_path: Path) -> None:
    (tmp_path / "net.py").write_text("import torch\nx = torch.zeros(3)\n", encoding="utf-8")
    record = tmp_path / "record.json"
    record.write_text(json.dumps(RECORD), encoding="utf-8")
    html = tmp_path / "report.html"
    done = run_cli("scan", str(tmp_path / "net.py"), "--html", str(html), "--model-record", str(record),
                   "--no-cache", "--date", "2026-11-24")
    assert done.returncode == 1, done.stderr
    page = html.read_text(encoding="utf-8")
    section = page[page.index('<section id="models">'):page.index("</section>", page.index('<section id="models">'))]
    assert "ported/model.py:resnet18(num_classes=10)" in section and "FAILED" in section
    assert "100 of 122" in section and "1 unplaced" in section and "did not run" in section
    assert "pynative: output: values differ at 3 of 20 positions" in section
    assert '<a href="#models">' in page
    plain = run_cli("scan", str(tmp_path / "net.py"), "--html", str(tmp_path / "plain.html"), "--no-cache")
    assert 'id="models"' not in (tmp_path / "plain.html").read_text(encoding="utf-8"), plain.stderr

    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "other"}', encoding="utf-8")
    done = run_cli("scan", str(tmp_path / "net.py"), "--html", str(html), "--model-record", str(bad), "--no-cache")
    assert done.returncode == 2 and "bad.json: not a model record" in done.stderr
    done = run_cli("scan", str(tmp_path / "net.py"), "--model-record", str(record), "--no-cache")
    assert done.returncode == 2 and "--model-record is shown in the HTML report" in done.stderr
