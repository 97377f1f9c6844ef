"""End to end: the HTML report in headless Chromium (Debian's chromium, driven over the DevTools pipe).

The tables built from the embedded data (filter, sort, pages, CSV export), API row -> uses -> source
line -> back to the API row, hostile text shown as text, no script errors; and on a big project the
work the page does stays bounded: a table holds at most one page of rows, "Open all" and a 20,000-line
file leave only a few screens of source in the page (the times are printed by
benchmarks/report_size.py, not asserted here). Screenshots are saved under the test's tmp dir.
"""

from __future__ import annotations

import csv
import io
import json
import os
import time
from pathlib import Path

import pytest

from torch2ms.report import html as html_report
from torch2ms.report.json import document

from chromium_cdp import Browser, find_chromium
from report_project import large, make_project, scan

pytestmark = [pytest.mark.e2e]  # the report in a real Chromium


def test_chromium_is_installed():
    # The project's setup installs Debian's chromium; CI must have it (no skip that hides a missing browser).
    assert find_chromium() is not None


def write_report(base: Path, folder: str) -> tuple[list, Path]:
    """Scan `base/folder` from `base` (paths relative to it) and write its report to `base/folder.html`."""
    old = os.getcwd()
    os.chdir(base)
    try:
        results = scan(Path(folder))
        text = html_report.render(results, "2.10", paths=[folder], date="2026-01-02")
    finally:
        os.chdir(old)
    report = base / f"{folder}.html"
    report.write_text(text, encoding="utf-8")
    return results, report


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    base = tmp_path_factory.mktemp("browser")
    make_project(base / "proj")
    results, report = write_report(base, "proj")
    browser = Browser(width=1400, height=1000)
    try:
        browser.call("Log.enable")
        browser.navigate(report.as_uri())
        yield browser, results, base
    finally:
        browser.close()


def js(browser: Browser, code: str):
    return browser.eval("(function(){" + code + "})()")


def rows(browser: Browser, table: str, column: int = 0) -> list[str]:
    """The text of one column of the rows on the page (of a cell's code or path element when it has one)."""
    return js(browser, f"""return Array.from(document.querySelectorAll('#{table} > tbody > tr:not(.uses-row)'))
        .map(r => {{ const c = r.cells[{column}]; return (c.querySelector('code, .path') || c).textContent; }});""")


def set_control(browser: Browser, selector: str, value: str) -> None:
    event = "change" if selector.endswith("choice") else "input"
    js(browser, f"""const c = document.querySelector({json.dumps(selector)});
        c.value = {json.dumps(value)}; c.dispatchEvent(new Event('{event}')); return 1;""")


def wait_for(browser: Browser, expression: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not browser.eval(expression):
        assert time.monotonic() < deadline, f"timed out: {expression}"
        time.sleep(0.05)


def test_loads_without_script_errors(page):
    browser, results, _ = page
    assert browser.eval("document.title") == "torch2ms report: proj"
    errors = [e for e in browser.events if e.get("method") == "Runtime.exceptionThrown"
              or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")]
    assert errors == []
    # files without findings are hidden until the box is ticked
    assert len(rows(browser, "file-table")) == sum(1 for r in results if r.diagnostics) < len(results)
    # APIs with uses: a type only named (nn.Module as a base class) is no row
    doc = document(results, "2.10", paths=["proj"], date="2026-01-02")
    assert len(rows(browser, "api-table")) == sum(1 for a in doc["apis"] if a["uses"]) < len(doc["apis"])
    wait_for(browser, "window.torch2msReport.sectionsBuilt()")
    assert browser.eval("document.querySelectorAll('details.file').length") == sum(1 for r in results if r.diagnostics)


def test_file_table_opens_on_the_work_left(page):
    """Most findings a person must port first (then most findings); files without findings hidden, with a
    box that shows them; the page says how it is sorted. (Before any test sorts the table.)"""
    browser, results, _ = page
    js(browser, "window.scrollTo(0, 0); return 1;")
    shown = rows(browser, "file-table")
    left = [int(v) for v in rows(browser, "file-table", 1)]
    findings = [int(v) for v in rows(browser, "file-table", 3)]
    assert list(zip(left, findings)) == sorted(zip(left, findings), reverse=True)
    assert left[0] > 0 and sorted(shown) == sorted(r.path.split("proj/", 1)[1] for r in results if r.diagnostics)
    assert browser.eval("document.querySelector('#file-table th[data-key=left]').getAttribute('aria-sort')") \
        == "descending"
    assert "Sorted by the work left" in browser.eval("document.getElementById('files-note').textContent")
    label = browser.eval("document.getElementById('files-all').parentNode.textContent")
    assert label.strip() == "Show the 2 files without findings"
    js(browser, "const c = document.getElementById('files-all'); c.checked = true; c.dispatchEvent(new Event('change')); return 1;")
    everything = rows(browser, "file-table")
    assert len(everything) == len(results) and everything[:len(shown)] == shown  # the empty ones last
    js(browser, "const c = document.getElementById('files-all'); c.checked = false; c.dispatchEvent(new Event('change')); return 1;")


def test_api_table_filter_choice_and_sort(page):
    browser, _, _ = page
    names = rows(browser, "api-table")
    set_control(browser, "#apis-filter", "interpolate")
    assert rows(browser, "api-table") == [n for n in names if "interpolate" in n]
    assert browser.eval("document.getElementById('apis-shown').textContent") == f"1 of {len(names)}"
    set_control(browser, "#apis-filter", "")
    data = browser.eval("JSON.parse(document.getElementById('report-data').textContent).apis.filter(a => a[1] > 0).length")
    assert data == len(names)  # every API with uses is a row
    equivalent = js(browser, "const o = Array.from(document.querySelectorAll('#apis-choice option'))"
                             ".find(o => o.textContent === 'Equivalent'); return o.value;")
    set_control(browser, "#apis-choice", equivalent)
    cats = rows(browser, "api-table", 3)
    assert cats and len(cats) < len(names) and all(c == "Equivalent" for c in cats)
    set_control(browser, "#apis-choice", "e1")  # effort: automatic
    assert set(rows(browser, "api-table", 4)) == {"Automatic"}
    set_control(browser, "#apis-choice", "")
    js(browser, "document.querySelector('#api-table th[data-key=api]').click(); return 1;")
    assert rows(browser, "api-table") == sorted(names, key=str.lower)
    js(browser, "document.querySelector('#api-table th[data-key=api]').click(); return 1;")
    assert rows(browser, "api-table") == sorted(names, key=str.lower, reverse=True)
    js(browser, "document.querySelector('#api-table th[data-key=uses]').click(); return 1;")
    uses = [int(v) for v in rows(browser, "api-table", 1)]
    assert uses == sorted(uses, reverse=True)
    assert browser.eval("document.querySelector('#api-table th[data-key=uses]').getAttribute('aria-sort')") \
        == "descending"


def test_file_and_directory_tables(page):
    browser, results, _ = page
    set_control(browser, "#files-filter", "models/")
    assert rows(browser, "file-table") == ["models/net.py"]  # models/__init__.py has no findings: hidden
    js(browser, "const c = document.getElementById('files-all'); c.checked = true; c.dispatchEvent(new Event('change')); return 1;")
    assert rows(browser, "file-table") == ["models/net.py", "models/__init__.py"]  # by the work left
    set_control(browser, "#files-filter", "")
    errors = js(browser, "const o = Array.from(document.querySelectorAll('#files-choice option'))"
                         ".find(o => o.textContent === 'With file error'); return o.value;")
    set_control(browser, "#files-choice", errors)
    assert rows(browser, "file-table") == ["data/broken.py"]
    set_control(browser, "#files-choice", "")
    js(browser, "document.querySelector('#file-table th[data-key=findings]').click(); return 1;")
    counts = [int(v) for v in rows(browser, "file-table", 3)]
    assert counts == sorted((len(r.diagnostics) for r in results), reverse=True)
    js(browser, "const c = document.getElementById('files-all'); c.checked = false; c.dispatchEvent(new Event('change')); return 1;")
    assert rows(browser, "dir-table") == [".", "data", "models"]
    set_control(browser, "#dirs-choice", "1")
    assert rows(browser, "dir-table") == [".", "data", "models"]


def test_csv_export_of_the_tables(page, tmp_path):
    browser, results, _ = page
    text = browser.eval("window.torch2msReport.csv('apis')")
    table = list(csv.reader(io.StringIO(text)))
    assert table[0] == ["Torch API", "Uses", "Files", "Category", "Effort", "MindSpore target",
                        "Parameter differences", "Verification"]
    data = browser.eval("JSON.parse(document.getElementById('report-data').textContent)")
    assert sorted(r[0] for r in table[1:]) == sorted(data["s"][a[0]] for a in data["apis"] if a[1] > 0)
    assert any("," in cell for r in table for cell in r)  # quoted where needed, read back whole
    files = list(csv.reader(io.StringIO(browser.eval("window.torch2msReport.csv('files')"))))
    assert len(files) == sum(1 for r in results if r.diagnostics) + 1  # the rows shown
    assert files[0][:4] == ["File", "Work left", "Lines", "Findings"]
    # the button downloads the same text
    browser.call("Browser.setDownloadBehavior", behavior="allow", downloadPath=str(tmp_path), browser=True)
    js(browser, "document.getElementById('dirs-csv').click(); return 1;")
    target = tmp_path / "dirs.csv"
    deadline = time.monotonic() + 20
    while not target.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert target.read_bytes().decode("utf-8") == browser.eval("window.torch2msReport.csv('dirs')")


def test_api_uses_link_to_source_and_back(page):
    browser, results, base = page
    index = js(browser, """const r = Array.from(document.querySelectorAll('#api-table > tbody > tr'))
        .find(r => r.cells[0].textContent.startsWith('torch.nn.functional.interpolate'));
        r.querySelector('button.uses').click(); return +r.getAttribute('data-i');""")
    wait_for(browser, "!!document.querySelector('.uselist[data-done]')")
    links = js(browser, f"""return Array.from(document.getElementById('api-{index}').nextElementSibling
        .querySelectorAll('a')).map(a => a.getAttribute('href'));""")
    net = next(i for i, r in enumerate(results) if r.path.endswith("net.py"))
    line = next(d.span.start_line for d in results[net].diagnostics
                if d.torch_api == "torch.nn.functional.interpolate")
    assert links == [f"#f{net}-L{line}"]
    assert browser.eval(f"document.getElementById('f{net}').open") is False
    js(browser, f"document.querySelector('a[href=\"#f{net}-L{line}\"]').click(); return 1;")
    time.sleep(0.2)
    assert browser.eval(f"document.getElementById('f{net}').open") is True
    assert "hit" in browser.eval(f"document.getElementById('f{net}-L{line}').className")
    finding = js(browser, f"""const n = document.getElementById('f{net}-L{line}').nextElementSibling;
        return [n.querySelector('.code').textContent, n.querySelector('.msg').textContent,
                n.querySelector('a[href^="#api-"]').getAttribute('href')];""")
    diag = next(d for d in results[net].diagnostics if d.span.start_line == line)
    assert finding == [diag.code, diag.message, f"#api-{index}"]
    assert browser.eval(f"document.querySelectorAll('#f{net} .k-kw').length") > 5  # highlighted
    # a suggested rewrite, built from the fix's edits and the source
    assert browser.eval(f"document.querySelectorAll('#f{net} .rewrite pre.add').length") >= 1
    # and back to the API row, even when a filter hides it
    set_control(browser, "#apis-filter", "no-such-api")
    js(browser, f"document.querySelector('#f{net}-L{line}').nextElementSibling"
                ".querySelector('a[href^=\"#api-\"]').click(); return 1;")
    assert "flash" in browser.eval(f"document.getElementById('api-{index}').className")
    browser.screenshot(str(base / "report-source.png"))


def test_module_to_cell_preview_shows_the_changed_lines_only(page):
    browser, results, _ = page
    net = next(i for i, r in enumerate(results) if r.path.endswith("net.py"))
    line = next(d.span.start_line for d in results[net].diagnostics if d.code == "TMS331")
    js(browser, f"window.torch2msReport.go('#f{net}-L{line}'); return 1;")
    wait_for(browser, f"!!document.getElementById('f{net}-L{line}')")
    preview = js(browser, f"""const box = document.getElementById('f{net}-L{line}').nextElementSibling;
        return Array.from(box.querySelectorAll('.rewrite pre')).map(p => p.className + ' ' + p.textContent);""")
    assert preview == [
        "add + import mindspore",
        "del - class Net(nn.Module):", "add + class Net(mindspore.nn.Cell):",
        "del -     def forward(self, x):", "add +     def construct(self, x):",
    ]  # not the class body between them


def test_chart_labels_are_whole_and_inside_their_chart(tmp_path):
    """Long folder and API names: each bar label shows its whole text, wrapped inside the chart, never cut."""
    base = tmp_path / "charts"
    long_folder = "a_package_with_a_rather_long_descriptive_name_for_layout"
    (base / long_folder / "sub").mkdir(parents=True)
    (base / "short").mkdir()
    (base / long_folder / "sub" / "ops.py").write_text(
        "import torch\n\nx = torch.histogram(a)\ny = torch.nn.functional.fractional_max_pool3d_with_indices(a, 2)\n"
        "z = torch.histogramdd(a)\n", encoding="utf-8")
    (base / "short" / "m.py").write_text("import torch\n\nw = torch.histogram(b)\n", encoding="utf-8")
    _, report = write_report(tmp_path, "charts")
    for width in (1400, 800):
        with Browser(width=width, height=1000) as browser:
            browser.navigate(report.as_uri())
            labels = js(browser, """return Array.from(document.querySelectorAll('#charts ol.bars .lbl, #charts ul.legend li'))
                .map(l => { const r = l.getBoundingClientRect(), f = l.closest('figure').getBoundingClientRect();
                            return [l.textContent, l.scrollWidth <= l.clientWidth + 1, r.left >= f.left, r.right <= f.right,
                                    r.height > 0]; });""")
            texts = [label[0] for label in labels]
            assert long_folder in texts and "short" in texts, texts
            assert any("fractional_max_pool3d" in t for t in texts), texts
            assert all(all(label[1:]) for label in labels), [label for label in labels if not all(label[1:])]
            browser.screenshot(str(tmp_path / f"charts-{width}.png"))


def test_hostile_source_is_text(page, tmp_path):
    browser, results, _ = page
    evil = next(i for i, r in enumerate(results) if r.path.endswith("evil.py"))
    js(browser, f"window.torch2msReport.go('#f{evil}-L2'); return 1;")
    text = browser.eval(f"document.querySelector('#f{evil} .body').textContent")
    assert "</script><script>alert(1)</script><!-- <b>bold</b>" in text
    assert "<img src=x onerror=alert(2)>" in text
    assert browser.eval("document.querySelectorAll('img, b, textarea, main script').length") == 0
    js(browser, "window.scrollTo(0, 0); return 1;")
    shot = tmp_path / "report.png"
    browser.screenshot(str(shot), full_page=True)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20000


def test_a_big_project_stays_bounded(tmp_path):
    results, sources = large()  # 300 files, 450 APIs, and one file of 20,000 lines with 10,000 findings
    page_text = html_report.render(results, "2.10", paths=["big"], date="2026-01-02", read=sources.get)
    assert len(page_text.encode("utf-8")) <= html_report.PAGE_BUDGET
    report = tmp_path / "big.html"
    report.write_text(page_text, encoding="utf-8")
    huge = next(i for i, r in enumerate(results) if r.path.endswith("huge.py"))
    with Browser(width=1400, height=1000) as browser:
        browser.navigate(report.as_uri(), timeout=120)
        browser.watch_long_tasks()
        # tables: one page of rows at a time
        assert len(rows(browser, "api-table")) == 200
        assert browser.eval("document.getElementById('apis-shown').textContent") == "rows 1–200 of 450"
        js(browser, "document.getElementById('apis-next').click(); return 1;")
        assert browser.eval("document.getElementById('apis-shown').textContent") == "rows 201–400 of 450"
        js(browser, "window.torch2msReport.go('#api-449'); return 1;")
        assert browser.eval("!!document.getElementById('api-449')") and len(rows(browser, "api-table")) <= 200
        # the sections come a batch at a time; "Open all" opens them all and shows a few screens of source
        wait_for(browser, "window.torch2msReport.sectionsBuilt()")
        closed = browser.eval("document.getElementsByTagName('*').length")
        opened = browser.measure("document.getElementById('expand-all').click()",
                                 "document.getElementById('source-list').getAttribute('data-state') === 'open'")
        assert browser.eval("Array.from(document.querySelectorAll('details.file')).every(d => d.open)")
        assert opened["elements"] < closed + 15_000, opened
        # the 20,000-line file: the line a link points at is there, and not the whole file
        browser.measure(f"window.torch2msReport.go('#f{huge}-L19000')")
        assert browser.eval(f"document.getElementById('f{huge}-L19000').className").startswith("line hit")
        lines = browser.eval(f"document.querySelectorAll('#f{huge} .line').length")
        assert 0 < lines < 2000
        # far from the screen again, rendered source is let go (its height kept)
        browser.measure(f"window.torch2msReport.go('#f{huge}-L3')")
        wait_for(browser, f"!document.getElementById('f{huge}-L19000')")
        assert browser.eval(f"document.querySelectorAll('#f{huge} .line').length") < 2000
        closed_again = browser.measure("document.getElementById('collapse-all').click()",
                                       "document.getElementById('source-list').getAttribute('data-state') === 'closed'")
        assert closed_again["elements"] <= closed + 50
        browser.screenshot(str(tmp_path / "big.png"))
