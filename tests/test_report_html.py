"""Structure, data, escaping, size and determinism of the project HTML report (parsed with html.parser)."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

from torch2ms.model import Category, Diagnostic, FileResult, ScanSummary, Severity, Span
from torch2ms.report import html as html_report
from torch2ms.report.highlight import CLASSES, highlight
from torch2ms.report.json import document

from conftest import run_cli
from report_project import EVIL, large, make_project, scan, synthetic

DATE = "2026-01-02"


class Page(HTMLParser):
    """Elements by id, text of elements, the embedded data, resource references."""

    VOID = {"meta", "link", "input", "br", "img", "hr", "rect", "circle", "source", "area", "col", "wbr"}

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: dict[str, dict[str, str | None]] = {}
        self.duplicates: list[str] = []
        self.stack: list[tuple[str, dict[str, str | None]]] = []
        self.text_of: dict[str, list[str]] = {}
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

    def script(self, element_id: str) -> dict | list | None:
        found = [body for attrs, body in self.scripts if attrs.get("id") == element_id]
        assert len(found) <= 1
        return json.loads(found[0]) if found else None

    def data(self) -> dict:
        found = self.script("report-data")
        assert isinstance(found, dict)
        return found

    def findings(self, index: int) -> list[dict]:
        """File `index`'s findings as the page's script reads them (report.js: parseFindings)."""
        blob = self.script(f"d{index}")
        if blob is None:
            return []
        assert isinstance(blob, dict)
        data = self.data()
        flat, out, line = blob["f"], [], 0
        fields = html_report.FINDING_FIELDS
        for at in range(0, len(flat), fields):
            line += flat[at]
            code, severity, category, code_doc, runtime = data["kinds"][flat[at + 4]]
            message = data["s"][flat[at + 5]]
            if flat[at + 6] >= 0:
                message = message.replace("\x01", data["s"][data["apis"][flat[at + 6]][0]])
            out.append({"line": line, "col": flat[at + 1], "end_line": line + flat[at + 2], "end_col": flat[at + 3],
                        "code": code, "severity": severity, "category": category, "message": message,
                        "doc": data["s"][flat[at + 7]] if flat[at + 7] >= 0 else code_doc, "runtime": runtime})
        return out


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def _page(results, **kwargs) -> Page:
    return Page(html_report.render(results, "2.10", date=DATE, **kwargs))


def test_summary_has_one_total_and_effort_classes_that_add_up_to_it(tmp_path, monkeypatch):
    make_project(tmp_path / "visionproj")
    monkeypatch.chdir(tmp_path)
    results = scan(Path("visionproj"))
    page = _page(results, paths=["visionproj"])
    assert not page.duplicates
    summary = ScanSummary.of(results)
    doc = document(results, "2.10", paths=["visionproj"], date=DATE)
    assert page.text("project-name") == "visionproj"
    assert page.text("meta-date") == DATE and page.text("meta-target") == "2.10"

    def card(name: str) -> int:
        attrs = page.ids[f"value-{name}"]
        assert _number(page.text(f"value-{name}")) == int(attrs["data-value"])
        return int(attrs["data-value"])

    assert card("findings") == summary.diagnostics
    assert "value-uses" not in page.ids  # one total on the page: findings
    efforts = {e: card(f"effort-{e}") for e in ("remove", "automatic", "manual", "blocker", "unknown", "file_error")}
    assert sum(efforts.values()) == summary.diagnostics
    assert efforts["file_error"] == summary.files_failed == 1
    assert efforts == {**doc["summary"]["by_effort"], **{e: 0 for e in efforts if e not in doc["summary"]["by_effort"]},
                       "file_error": 1}
    # the APIs used: a type only named (the base class nn.Module) is no use and not counted
    assert card("apis") == len(doc["summary"]["by_api"]) == sum(1 for a in doc["apis"] if a["uses"])
    assert card("apis") < doc["summary"]["distinct_apis"]
    assert f"{summary.diagnostics} findings" in page.text("chart-categories").replace(",", "")
    assert "broken.py" in page.text("failures") and "TMS901" in page.text("failures")
    assert "Migration readiness" in page.text("readiness-definition")
    assert "progress" not in page.ids  # no --compare


def test_data_paths_relative_to_the_scanned_folder_and_findings_exact(tmp_path, monkeypatch):
    make_project(tmp_path / "visionproj")
    monkeypatch.chdir(tmp_path)
    results = scan(Path("visionproj"))
    page = _page(results, paths=["visionproj"])
    data = page.data()
    paths = [data["s"][row[0]] for row in data["files"]]
    assert paths == sorted(paths) and "models/net.py" in paths and not any(p.startswith("visionproj") for p in paths)
    assert "visionproj" in page.text("sources-note")
    for i, result in enumerate(sorted(results, key=lambda r: r.path)):
        row = data["files"][i]
        assert row[2] == len(result.diagnostics)
        got = page.findings(i)
        assert [(f["line"], f["col"], f["end_line"], f["end_col"], f["code"], f["severity"], f["category"],
                 f["message"], f["doc"]) for f in got] == \
               [(d.span.start_line, d.span.start_col, d.span.end_line, d.span.end_col, d.code, d.severity.value,
                 d.category.value, d.message, d.doc_url) for d in result.diagnostics]
    # the API table's rows, with category and effort
    doc = document(results, "2.10", paths=["visionproj"], date=DATE)
    assert [data["s"][r[0]] for r in data["apis"]] == [a["api"] for a in doc["apis"]]
    assert [data["efforts"][r[4]] for r in data["apis"]] == [a["effort"] for a in doc["apis"]]
    # folders with the totals of everything below them; "." is the whole project
    dirs = {data["s"][d[0]]: d for d in data["dirs"]}
    assert set(dirs) == {".", "models", "data"}
    assert dirs["."][4] == sum(len(r.diagnostics) for r in results)
    assert dirs["models"][2] == 2 and dirs["models"][1] == 1


def test_page_is_self_contained(tmp_path, monkeypatch):
    make_project(tmp_path / "visionproj")
    monkeypatch.chdir(tmp_path)
    page_text = html_report.render(scan(Path("visionproj")), "2.10", paths=["visionproj"], date=DATE)
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
    # Only our own script elements end, and no comment is opened anywhere.
    assert page_text.count("</script>") == page_text.lower().count("<script") == len(Page(page_text).scripts)
    assert "<!--" not in page_text
    assert "<b>" not in page_text and "<i>today" not in page_text and "<img" not in page_text
    page = Page(page_text)
    assert page.text("project-name") == name and page.text("meta-date") == "<i>today</i>"
    assert "b" not in page.tags and "img" not in page.tags and "i" not in page.tags
    # The embedded source decodes back to the exact text.
    evil = next(i for i, r in enumerate(results) if r.path.endswith("evil.py"))
    chunks = page.script(f"s{evil}")
    assert isinstance(chunks, list)
    assert "\n".join(chunks[0][1]) == EVIL
    assert any("</script>" in line for line in chunks[0][1])


def test_same_input_same_bytes(tmp_path, monkeypatch):
    make_project(tmp_path / "visionproj")
    monkeypatch.chdir(tmp_path)
    results = scan(Path("visionproj"))
    one = html_report.render(results, "2.10", paths=["visionproj"], date=DATE)
    two = html_report.render(list(reversed(results)), "2.10", paths=["visionproj"], date=DATE)
    assert one.encode("utf-8") == two.encode("utf-8")


def test_cli_writes_the_report_and_compares_with_an_earlier_one(tmp_path, monkeypatch):
    make_project(tmp_path / "proj")
    monkeypatch.chdir(tmp_path)
    base = ["scan", "proj", "-j", "1", "--no-cache"]
    earlier = run_cli(*base, "--output-format", "json", "-o", "old.json", "--date", "2026-01-01")
    assert earlier.returncode == 1, earlier.stderr
    net = tmp_path / "proj" / "models" / "net.py"
    text = net.read_text(encoding="utf-8")  # one finding ported away, one new one
    net.write_text(text.replace("idx = torch.nonzero(y)", "idx = y").replace("return self.fc(", "z = torch.histogram(x)\n        return self.fc("),
                   encoding="utf-8")
    cmd = [*base, "--html", "report.html", "--date", DATE, "--exit-zero", "--compare", "old.json"]
    first = run_cli(*cmd)
    assert first.returncode == 0, first.stderr
    one = (tmp_path / "report.html").read_bytes()
    assert run_cli(*cmd).returncode == 0
    assert (tmp_path / "report.html").read_bytes() == one
    page = Page(one.decode("utf-8"))
    old = json.loads((tmp_path / "old.json").read_text(encoding="utf-8"))["summary"]
    now = int(page.ids["value-findings"]["data-value"])
    line = page.text("progress-line")
    change = f"{now - old['findings']:+d}" if now != old["findings"] else "0"
    assert f"{old['findings']} → {now} findings ({change})" in line.replace(",", ""), line
    assert "1 fixed, 1 new." in line
    assert page.text("progress").startswith("Progress since old.json (2026-01-01)")
    blocker = page.text("progress-blocker").split()
    assert blocker[-1] == "+1"  # torch.histogram has no workaround
    # --compare needs the HTML report, and a readable JSON report
    assert run_cli(*base, "--compare", "old.json").returncode == 2
    bad = run_cli(*base, "--html", "r.html", "--compare", "missing.json")
    assert bad.returncode == 2 and "missing.json" in bad.stderr


def test_blockers_chart_and_table_data():
    def use(line: int, api: str, code: str = "TMS103") -> Diagnostic:
        return Diagnostic(code=code, severity=Severity.ERROR, category=Category.MISSING,
                          span=Span(line, 4, line, 20), message=f"{api} has no MindSpore 2.10 equivalent",
                          torch_api=api)

    results = [FileResult("pkg/a.py", (use(2, "torch.histogram"), use(3, "torch.histogram"), use(4, "torch.no_grad")),
                          lines=4)]
    page = _page(results, paths=["pkg"], read=lambda _: "import torch\na\nb\nc\n")
    # the whole name, with places to wrap (<wbr>) after its dots, then its uses
    assert re.search(r"torch\.histogram\s*2", "".join(page.text_of["chart-blockers"]))
    assert "torch.<wbr>histogram" in html_report.render(results, "2.10", paths=["pkg"], date=DATE,
                                                        read=lambda _: "import torch\na\nb\nc\n")
    assert "torch.no_grad" not in page.text("chart-blockers")  # it is removed, not blocked
    data = page.data()
    by_api = {data["s"][r[0]]: data["efforts"][r[4]] for r in data["apis"]}
    assert by_api == {"torch.histogram": "blocker", "torch.no_grad": "remove"}
    assert page.text("blockers").startswith("Blockers 1 APIs, 2 uses")


def test_synthetic_results_rewrites_and_charts():
    results, sources = synthetic()
    page = _page(results, paths=["pkg"], read=sources.get)
    assert page.ids["value-readiness"]["data-value"] == "40.0"  # 2 equivalent of 5 API uses
    assert "pkg/c.py" in page.text("failures")
    data = page.data()
    # "pkg" is not a folder here (hand-made results): paths stay relative to the working directory
    assert [data["s"][row[0]] for row in data["files"]] == ["pkg/a.py", "pkg/c.py", "pkg/d.py", "pkg/sub/b.py"]
    assert page.script("d2") is None and page.script("s2") is None  # no findings: no data
    fixes = page.script("d0")["x"]  # type: ignore[index]
    number, title, safe, line, col, end_line, end_col, text = fixes[0]
    assert (number, data["s"][title], safe, data["s"][text]) == (0, "Call mindspore.mint.ones", 1, "mindspore.mint.ones")
    assert (line, col, end_line, end_col) == (0, 4, 0, 14)  # steps from the finding's line
    assert "pkg" in page.text("chart-directories") and "File error: 1" in page.text("chart-directories")


def test_source_fills_what_the_budget_leaves(monkeypatch):
    results, sources = large(files=40, per_file=20, big_lines=4000)
    full = Page(html_report.render(results, "2.10", paths=["big"], date=DATE, read=sources.get))
    states = [row[6] for row in full.data()["files"]]
    assert set(states) == {2}  # small enough: every file whole
    monkeypatch.setattr(html_report, "PAGE_BUDGET", 600_000)
    page_text = html_report.render(results, "2.10", paths=["big"], date=DATE, read=sources.get)
    page = Page(page_text)
    rows = page.data()["files"]
    states = [row[6] for row in rows]
    assert 0 in states and any(states)  # source for some files, none for the rest
    huge = next(i for i, r in enumerate(rows) if page.data()["s"][r[0]].endswith("huge.py"))
    assert states[huge] == 0  # the files with fewest findings come first
    shown = next(i for i, s in enumerate(states) if s)
    chunks = page.script(f"s{shown}")
    lines = [n for start, text, _ in chunks for n in range(start, start + len(text))]  # type: ignore[union-attr]
    assert {f["line"] for f in page.findings(shown)} <= set(lines)
    assert len(page_text.encode("utf-8")) <= 600_000
    assert "without source" in page.text("sources-note")


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
    broken = 'x = "unterminated\ndef (:\n'
    assert len(highlight(broken)) == 3
    assert len(highlight("")) == 1
    partial = highlight(text, upto=2)
    assert partial[:2] == ranges[:2] and partial[5] == []


# ---------------------------------------------------------------- the page opens on the work
ORDER_PROJECT = {
    "pkg/__init__.py": "",
    "pkg/ops.py": "import torch\n\n\ndef helper(x):\n    a = torch.histogram(x)\n    return torch.histogramdd(x), a\n",
    "pkg/layers.py": "import torch\nfrom .ops import helper\n\n\ndef layer(x):\n    return helper(torch.cat([x]))\n",
    "pkg/model.py": "import torch\nimport pkg.layers as L\n\n\ndef net(x):\n    return L.layer(torch.relu(x))\n",
    "pkg/small.py": "import torch\n\ny = torch.zeros(2)\n",
    "pkg/plain.py": "def nothing():\n    return 1\n",
    "pkg/cyc_a.py": "import torch\nfrom .cyc_b import g\n\n\ndef f(x):\n    return g(torch.cat([x]))\n",
    "pkg/cyc_b.py": "import torch\nfrom .cyc_a import f\n\n\ndef g(x):\n    return f(torch.histogram(x))\n",
}


def _order_rows(text: str) -> list[tuple[str, str]]:
    table = re.search(r'<table class="plain" id="order-table">(.*?)</table>', text, re.S)
    assert table is not None
    rows = re.findall(r'<a class="path" href="#f\d+">([^<]+)</a>.*?<td>([^<]*)</td></tr>', table.group(1), re.S)
    return [(path, why) for path, why in rows]


def test_suggested_order_puts_leaf_modules_first_then_the_files_closest_to_done(tmp_path, monkeypatch):
    for name, text in ORDER_PROJECT.items():
        (tmp_path / "proj" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "proj" / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    results = scan(Path("proj"))
    text = html_report.render(results, "2.10", paths=["proj"], date=DATE)
    rows = _order_rows(text)
    order = [path for path, _ in rows]
    # leaves first, the one with the least work left first (small.py: nothing a person must port)
    assert order[:2] == ["pkg/small.py", "pkg/ops.py"], rows
    assert order.index("pkg/ops.py") < order.index("pkg/layers.py") < order.index("pkg/model.py")
    assert dict(rows)["pkg/layers.py"] == "after pkg/ops.py, which it imports"
    assert dict(rows)["pkg/model.py"] == "after pkg/layers.py, which it imports"  # a plain `import pkg.layers as L`
    assert dict(rows)["pkg/small.py"] == "imports no file still to port"
    cycle = [why for path, why in rows if path.startswith("pkg/cyc_")]
    assert len(cycle) == 2 and cycle[0].startswith("in an import cycle")
    assert "pkg/plain.py" not in order and "pkg/__init__.py" not in order  # nothing to port there
    assert "Leaf modules first" in Page(text).text("order-note")


def test_work_order_breaks_cycles_and_ignores_files_without_work():
    from torch2ms.report.order import Step, work_order

    work = {0: (3, 3), 1: (0, 1), 2: (1, 1), 3: (0, 2), 4: (0, 1)}
    imports = {0: {1, 9}, 1: set(), 2: {3}, 3: {2}, 4: {0, 3}}  # 9: a file without work
    steps = work_order(work, imports)
    assert [s.file for s in steps] == [1, 0, 3, 4, 2]  # 4 waits for the cycle 2 <-> 3, not in it
    assert steps[0] == Step(1, ()) and steps[1] == Step(0, (1,))
    assert steps[2] == Step(3, (2,), cycle=True)  # the cycle's file with the least work left starts it
    assert steps[3] == Step(4, (0, 3)) and steps[4] == Step(2, (3,))  # then the closest to done first
    assert work_order({}, {}) == []


def test_type_references_are_no_api_rows_of_the_page(tmp_path, monkeypatch):
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "m.py").write_text(
        "import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n"
        "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n        return torch.cat([x])\n",
        encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    results = scan(Path("proj"))
    page = _page(results, paths=["proj"])
    doc = document(results, "2.10", paths=["proj"], date=DATE)
    unused = {a["api"] for a in doc["apis"] if not a["uses"]}
    assert unused == {"torch.Tensor", "torch.nn.Module"}  # named as types only
    assert page.text("apis").startswith("Torch APIs 1 ")  # one API used: torch.cat
    assert int(page.ids["value-apis"]["data-value"]) == 1


def test_no_absolute_path_of_the_machine_in_the_page(tmp_path, monkeypatch):
    project = tmp_path / "deep" / "proj"
    make_project(project)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    monkeypatch.chdir(outside)  # the project is outside the working directory: named by its name alone
    results = scan(project)
    record = {"original": {"file": str(project / "models" / "net.py"), "factory": "Net"},
              "ported": {"file": str(tmp_path / "out" / "net.py"), "factory": "Net"}, "status": "passed",
              "tolerance": {"rtol": 1e-5, "atol": 1e-6}}
    text = html_report.render(results, "2.10", paths=[str(project)], date=DATE, models=[record])
    assert str(tmp_path) not in text and str(tmp_path.resolve()) not in text
    assert "<code>net.py:Net</code>" in text  # the verified model's files by name
    assert "Paths are relative to proj." in Page(text).text("sources-note")
    monkeypatch.chdir(tmp_path)  # inside the working directory: relative to it
    inside = html_report.render(results, "2.10", paths=[str(project)], date=DATE, models=[record])
    assert str(tmp_path) not in inside and "<code>deep/proj/models/net.py:Net</code>" in inside
