"""Structure, escaping and determinism of the project HTML report (parsed with html.parser)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from torch2ms.model import ScanSummary
from torch2ms.report import html as html_report
from torch2ms.report.highlight import CLASSES, highlight
from torch2ms.report.json import document

from report_project import EVIL, make_project, scan, synthetic

DATE = "2026-01-02"


class Page(HTMLParser):
    """Elements by id, rows of tables, text of elements, the embedded data blob, resource references."""

    VOID = {"meta", "link", "input", "br", "img", "hr", "rect", "circle", "source", "area", "col", "wbr"}

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: dict[str, dict[str, str | None]] = {}
        self.duplicates: list[str] = []
        self.stack: list[tuple[str, dict[str, str | None]]] = []
        self.text_of: dict[str, list[str]] = {}
        self.table_rows: dict[str, list[dict[str, str | None]]] = {}
        self.details: list[dict[str, str | None]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.resources: list[tuple[str, str, str]] = []
        self.tags: list[str] = []
        self._script: tuple[dict[str, str | None], list[str]] | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append(tag)
        if "id" in a:
            if a["id"] in self.ids:
                self.duplicates.append(str(a["id"]))
            self.ids[str(a["id"])] = a
            self.text_of[str(a["id"])] = []
        for attr in ("src", "srcset", "data"):
            if a.get(attr):
                self.resources.append((tag, attr, str(a[attr])))
        if tag == "link" and a.get("href"):
            self.resources.append((tag, "href", str(a["href"])))
        if tag == "tr":
            table = next((x for t, x in reversed(self.stack) if t == "table"), None)
            if table is not None and table.get("id"):
                self.table_rows.setdefault(str(table["id"]), []).append(a)
        if tag == "details":
            self.details.append(a)
        if tag == "script":
            self._script = (a, [])
        if tag not in self.VOID:
            self.stack.append((tag, a))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._script is not None:
            self.scripts.append((self._script[0], "".join(self._script[1])))
            self._script = None
        for index in range(len(self.stack) - 1, -1, -1):
            if self.stack[index][0] == tag:
                del self.stack[index:]
                break

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            self._script[1].append(data)
        for _, attrs in self.stack:
            if attrs.get("id") is not None:
                self.text_of[str(attrs["id"])].append(data)

    def text(self, element_id: str) -> str:
        return " ".join(" ".join(self.text_of[element_id]).split())

    def blob(self) -> dict:
        found = [body for attrs, body in self.scripts if attrs.get("id") == "report-data"]
        assert len(found) == 1
        return json.loads(found[0])


@pytest.fixture()
def project(tmp_path, monkeypatch):
    make_project(tmp_path / "visionproj")
    monkeypatch.chdir(tmp_path)
    results = scan(Path("visionproj"))
    return results


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def test_header_cards_and_tables_match_the_scan(project):
    results = project
    page_text = html_report.render(results, "2.10", paths=["visionproj"], date=DATE)
    page = Page(page_text)
    assert not page.duplicates
    summary = ScanSummary.of(results)
    doc = document(results, "2.10", paths=["visionproj"], date=DATE)

    assert page.text("project-name") == "visionproj"
    assert page.text("meta-date") == DATE
    assert page.text("meta-target") == "2.10"
    assert page.text("meta-table") == doc["tool"]["mapping_table_version"]

    def card(name: str) -> int:
        attrs = page.ids[f"value-{name}"]
        assert _number(page.text(f"value-{name}")) == int(attrs["data-value"])
        return int(attrs["data-value"])

    assert card("files") == summary.files == 6
    assert card("lines") == summary.lines
    assert card("uses") == doc["summary"]["api_uses"]
    assert card("apis") == len({d.torch_api for r in results for d in r.diagnostics if d.torch_api})
    for category, count in summary.by_category.items():
        assert card(f"cat-{category}") == count
    assert summary.files_failed == 1 and "1 failed" in page.text("card-files")
    assert "broken.py" in page.text("failures") and "TMS901" in page.text("failures")
    assert "Migration readiness" in page.text("readiness-definition")

    # API table: one row per distinct API, counts as in the scan
    api_rows = [r for r in page.table_rows["api-table"] if r.get("data-api") is not None]
    assert len(api_rows) == doc["summary"]["distinct_apis"] > 5
    assert [r["id"] for r in api_rows] == [f"api-{i}" for i in range(len(api_rows))]
    for i, row in enumerate(doc["apis"]):
        assert page.text(f"api-{i}").startswith(row["api"])
        uses = sum(1 for r in results for d in r.diagnostics if d.torch_api == row["api"]
                   and d.category.value in ("equivalent", "diff_params", "missing", "dynamic_shape", "unmapped"))
        assert row["uses"] == uses

    # File list: one row per scanned file, with its number of findings
    file_rows = page.table_rows["file-table"][1:]  # the first row is the header
    assert len(file_rows) == len(results)
    for i, result in enumerate(sorted(results, key=lambda r: r.path)):
        cells = page.text(f"row-f{i}").split()
        assert cells[0].endswith(Path(result.path).name)
        assert str(len(result.diagnostics)) in cells

    # One collapsed section per file with findings; the blob holds each finding at its line
    with_findings = [i for i, r in enumerate(results) if r.diagnostics]
    assert [d["id"] for d in page.details] == [f"f{i}" for i in with_findings]
    assert all("open" not in d for d in page.details)
    blob = page.blob()
    for i, result in enumerate(results):
        entry = blob["files"][i]
        if not result.diagnostics:
            assert entry == 0
            continue
        assert [f[0] for f in entry["f"]] == [d.span.start_line for d in result.diagnostics]
        assert [blob["s"][f[4]] for f in entry["f"]] == [d.code for d in result.diagnostics]
        assert [blob["s"][f[7]] for f in entry["f"]] == [d.message for d in result.diagnostics]
    # API -> uses links point at existing sections and lines
    for locations in blob["apis"]:
        for file_index, line in locations:
            assert f"f{file_index}" in page.ids
            assert 1 <= line <= results[file_index].lines


def test_page_is_self_contained(project):
    page_text = html_report.render(project, "2.10", paths=["visionproj"], date=DATE)
    page = Page(page_text)
    assert page.resources == []  # no <script src>, <link href>, <img src>
    assert "http://" not in page_text.replace("http://www.w3.org", "")
    for attrs, _ in page.scripts:
        assert "src" not in attrs
    assert "Content-Security-Policy" in page_text and "default-src 'none'" in page_text


def test_escaping_of_hostile_source_and_names(tmp_path, monkeypatch):
    name = "p<b>&amp;x"
    make_project(tmp_path / name)
    monkeypatch.chdir(tmp_path)
    results = scan(Path(name))
    page_text = html_report.render(results, "2.10", paths=[name], date="<i>today</i>")
    # Only our own two script elements end, and no comment is opened anywhere.
    assert page_text.count("</script>") == 2
    assert page_text.lower().count("<script") == 2
    assert "<!--" not in page_text
    assert "<b>" not in page_text and "<i>today" not in page_text and "<img" not in page_text
    page = Page(page_text)
    assert page.text("project-name") == name
    assert page.text("meta-date") == "<i>today</i>"
    assert "b" not in page.tags and "img" not in page.tags and "i" not in page.tags
    # The data blob decodes back to the exact source text.
    blob = page.blob()
    evil_index = next(i for i, r in enumerate(results) if r.path.endswith("evil.py"))
    chunks = blob["files"][evil_index]["c"]
    assert "\n".join(chunks[0][1]) == EVIL.rstrip("\n") + "\n" or "\n".join(chunks[0][1]) == EVIL
    assert any("</script>" in line for line in chunks[0][1])


def test_same_input_same_bytes(project):
    one = html_report.render(project, "2.10", paths=["visionproj"], date=DATE)
    two = html_report.render(list(reversed(project)), "2.10", paths=["visionproj"], date=DATE)
    assert one == two
    assert one.encode("utf-8") == two.encode("utf-8")


def test_cli_writes_the_report(tmp_path, monkeypatch):
    make_project(tmp_path / "proj")
    monkeypatch.chdir(tmp_path)
    cmd = [sys.executable, "-m", "torch2ms", "scan", "proj", "--html", "report.html", "--date", DATE,
           "--exit-zero", "-j", "1"]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    one = (tmp_path / "report.html").read_bytes()
    second = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stderr
    assert (tmp_path / "report.html").read_bytes() == one
    page = Page(one.decode("utf-8"))
    assert page.text("project-name") == "proj"
    assert page.text("meta-date") == DATE


def test_synthetic_results_charts_and_rewrites():
    results, sources = synthetic()
    page_text = html_report.render(results, "2.10", paths=["pkg"], date=DATE, read=sources.get)
    page = Page(page_text)
    # The missing-API chart names the missing API with its count; the directory chart has both folders.
    assert "torch.special_thing" in page.text("chart-missing")
    assert re.search(r"torch\.special_thing\s*2", page.text("chart-missing"))
    assert "pkg/sub" in page.text("chart-directories") and "pkg" in page.text("chart-directories")
    # Readiness: 2 equivalent of 5 API uses (missing 2, dynamic 1) = 40 %.
    assert page.ids["value-readiness"]["data-value"] == "40.0"
    blob = page.blob()
    finding = blob["files"][0]["f"][0]
    rewrite = finding[11]
    assert blob["s"][rewrite[2]] == "x = torch.ones(2)"
    assert blob["s"][rewrite[3]] == "x = mindspore.mint.ones(2)"
    assert "pkg/c.py" in page.text("failures")
    assert blob["paths"] == ["pkg/a.py", "pkg/c.py", "pkg/d.py", "pkg/sub/b.py"]
    assert blob["files"][2] == 0  # a file without findings carries no source


def test_large_projects_switch_to_excerpts_then_to_findings_only(monkeypatch):
    results, sources = synthetic()
    monkeypatch.setattr(html_report, "SOURCE_BUDGET", 10)
    page = Page(html_report.render(results, "2.10", paths=["pkg"], date=DATE, read=sources.get))
    blob = page.blob()
    first = blob["files"][0]
    assert first["full"] is False
    # findings on lines 2-4 with 3 lines of context: lines 1-5 of the 5-line text
    assert [c[0] for c in first["c"]] == [1] and first["c"][0][1][:2] == ["import torch", "x = torch.ones(2)"]
    assert "show excerpts" in page.text("sources")
    monkeypatch.setattr(html_report, "EXCERPT_BUDGET", 5)
    page = Page(html_report.render(results, "2.10", paths=["pkg"], date=DATE, read=sources.get))
    blob = page.blob()
    assert blob["files"][0]["c"] == [] and len(blob["files"][0]["f"]) == 3
    assert "without source" in page.text("sources")


def test_highlighter_classes_and_broken_code():
    text = 'import os\n@deco\ndef f(x):  # note\n    s = """a\nb"""\n    return len(x) + 1.5\n'
    ranges = highlight(text)
    lines = text.split("\n")

    def spans(row: int) -> list[tuple[str, str]]:
        r = ranges[row]
        return [(lines[row][r[i]:r[i] + r[i + 1]], CLASSES[r[i + 2]]) for i in range(0, len(r), 3)]

    assert ("import", "kw") in spans(0)
    assert ("deco", "deco") in spans(1)
    assert ("def", "kw") in spans(2) and ("f", "def") in spans(2) and ("# note", "com") in spans(2)
    assert spans(3)[-1] == ('"""a', "str") and spans(4)[0] == ('b"""', "str")
    assert ("len", "bi") in spans(5) and ("1.5", "num") in spans(5)
    # Broken code: no exception, a range list per line
    broken = 'x = "unterminated\ndef (:\n'
    assert len(highlight(broken)) == 3
    assert len(highlight("")) == 1
    # with upto, tokenizing stops: later lines stay plain
    partial = highlight(text, upto=2)
    assert partial[:2] == ranges[:2] and partial[5] == []
