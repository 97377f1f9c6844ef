"""End to end: the HTML report in headless Chromium (Debian's chromium, driven over the DevTools pipe).

Filtering and sorting of both tables, API row -> uses -> source line -> back to
the API row, lazy rendering of a file's source, hostile text shown as text,
no script errors; a screenshot is saved under the test's tmp dir.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from torch2ms.report import html as html_report

from chromium_cdp import Browser, find_chromium
from report_project import make_project, scan


def test_chromium_is_installed():
    # The project's setup installs Debian's chromium; CI must have it (no skip that hides a missing browser).
    assert find_chromium() is not None


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    base = tmp_path_factory.mktemp("browser")
    make_project(base / "proj")
    import os

    old = os.getcwd()
    os.chdir(base)
    try:
        results = scan(Path("proj"))
        text = html_report.render(results, "2.10", paths=["proj"], date="2026-01-02")
    finally:
        os.chdir(old)
    report = base / "report.html"
    report.write_text(text, encoding="utf-8")
    browser = Browser(width=1400, height=1000)
    try:
        browser.call("Log.enable")
        browser.navigate(report.as_uri())
        yield browser, results, base
    finally:
        browser.close()


def js(browser: Browser, code: str):
    return browser.eval("(function(){" + code + "})()")


def visible_rows(browser: Browser, table: str) -> list[str]:
    return js(browser, f"""
        return Array.from(document.querySelectorAll('#{table} tbody tr'))
          .filter(r => !r.hidden && !r.classList.contains('uses-row'))
          .map(r => r.getAttribute('data-q'));""")


def set_control(browser: Browser, selector: str, value: str) -> None:
    event = "change" if selector.endswith("category") else "input"
    js(browser, f"""const c = document.querySelector({json.dumps(selector)});
        c.value = {json.dumps(value)}; c.dispatchEvent(new Event('{event}')); return 1;""")


def test_loads_without_script_errors(page):
    browser, results, _ = page
    assert browser.eval("document.title") == "torch2ms report: proj"
    assert browser.eval("document.scripts.length") == 2
    errors = [e for e in browser.events if e.get("method") == "Runtime.exceptionThrown"
              or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")]
    assert errors == []
    assert browser.eval("document.querySelectorAll('#file-table tbody tr').length") == len(results)


def test_api_table_filter_and_sort(page):
    browser, _, _ = page
    all_rows = visible_rows(browser, "api-table")
    assert len(all_rows) > 5
    set_control(browser, "#api-filter", "interpolate")
    shown = visible_rows(browser, "api-table")
    assert shown == [q for q in all_rows if "interpolate" in q] and len(shown) == 1
    assert browser.eval("document.getElementById('api-shown').textContent") == f"1 of {len(all_rows)}"
    set_control(browser, "#api-filter", "")
    set_control(browser, "#api-category", "equivalent")
    cats = js(browser, """return Array.from(document.querySelectorAll('#api-table tbody tr'))
        .filter(r => !r.hidden).map(r => r.getAttribute('data-cats'));""")
    assert cats and all("equivalent" in c.split() for c in cats)
    assert len(cats) < len(all_rows)
    set_control(browser, "#api-category", "")
    assert len(visible_rows(browser, "api-table")) == len(all_rows)

    def column(index: int) -> list[str]:
        return js(browser, f"""return Array.from(document.querySelectorAll('#api-table tbody tr'))
            .map(r => r.cells[{index}].getAttribute('data-v'));""")

    js(browser, "document.querySelector('#api-table th[data-key=api]').click(); return 1;")
    names = column(0)
    assert names == sorted(names, key=str.lower)
    js(browser, "document.querySelector('#api-table th[data-key=api]').click(); return 1;")
    assert column(0) == sorted(names, key=str.lower, reverse=True)
    js(browser, "document.querySelector('#api-table th[data-key=uses]').click(); return 1;")
    uses = [int(v) for v in column(1)]
    assert uses == sorted(uses, reverse=True)
    assert browser.eval("document.querySelector('#api-table th[data-key=uses]').getAttribute('aria-sort')") \
        == "descending"


def test_file_table_filter_and_sort(page):
    browser, results, _ = page
    set_control(browser, "#file-filter", "models/")
    shown = visible_rows(browser, "file-table")
    assert shown == ["proj/models/__init__.py", "proj/models/net.py"]
    set_control(browser, "#file-filter", "")
    set_control(browser, "#file-category", "file_error")
    assert visible_rows(browser, "file-table") == ["proj/data/broken.py"]
    set_control(browser, "#file-category", "")
    js(browser, "document.querySelector('#file-table th[data-key=findings]').click(); return 1;")
    counts = js(browser, """return Array.from(document.querySelectorAll('#file-table tbody tr'))
        .map(r => +r.cells[2].getAttribute('data-v'));""")
    assert counts == sorted((len(r.diagnostics) for r in results), reverse=True)
    js(browser, "document.querySelector('#file-table th[data-key=path]').click(); return 1;")
    paths = visible_rows(browser, "file-table")
    assert paths == sorted(paths)


def test_api_uses_link_to_source_and_back(page):
    browser, results, base = page
    index = js(browser, """const r = Array.from(document.querySelectorAll('#api-table tbody tr[data-api]'))
        .find(r => r.getAttribute('data-q').startsWith('torch.nn.functional.interpolate'));
        r.querySelector('button.uses').click(); return +r.getAttribute('data-api');""")
    links = js(browser, f"""const next = document.getElementById('api-{index}').nextElementSibling;
        return Array.from(next.querySelectorAll('a')).map(a => a.getAttribute('href'));""")
    net = next(i for i, r in enumerate(results) if r.path.endswith("net.py"))
    line = next(d.span.start_line for d in results[net].diagnostics
                if d.torch_api == "torch.nn.functional.interpolate")
    assert links == [f"#f{net}-L{line}"]
    assert browser.eval(f"document.getElementById('f{net}').open") is False
    js(browser, f"document.querySelector('a[href=\"#f{net}-L{line}\"]').click(); return 1;")
    time.sleep(0.2)
    assert browser.eval(f"document.getElementById('f{net}').open") is True
    line_class = browser.eval(f"document.getElementById('f{net}-L{line}').className")
    assert "hit" in line_class
    finding = js(browser, f"""const n = document.getElementById('f{net}-L{line}').nextElementSibling;
        return [n.className, n.querySelector('.code').textContent, n.querySelector('.msg').textContent,
                n.querySelector('a[href^="#api-"]').getAttribute('href')];""")
    diag = next(d for d in results[net].diagnostics if d.span.start_line == line)
    assert finding[1:] == [diag.code, diag.message, f"#api-{index}"]
    # syntax highlighting ran
    assert browser.eval(f"document.querySelectorAll('#f{net} .k-kw').length") > 5
    # and back to the API row, even when a filter hides it
    set_control(browser, "#api-filter", "no-such-api")
    js(browser, f"document.querySelector('#f{net}-L{line}').nextElementSibling"
                ".querySelector('a[href^=\"#api-\"]').click(); return 1;")
    assert browser.eval(f"document.getElementById('api-{index}').hidden") is False
    assert "flash" in browser.eval(f"document.getElementById('api-{index}').className")
    browser.screenshot(str(base / "report-source.png"))


def test_hostile_source_is_text(page, tmp_path):
    browser, results, base = page
    evil = next(i for i, r in enumerate(results) if r.path.endswith("evil.py"))
    js(browser, f"document.getElementById('f{evil}').open = true; return 1;")
    time.sleep(0.2)
    text = browser.eval(f"document.querySelector('#f{evil} .src').textContent")
    assert "</script><script>alert(1)</script><!-- <b>bold</b>" in text
    assert "<img src=x onerror=alert(2)>" in text
    assert browser.eval("document.querySelectorAll('img, b, textarea, main script').length") == 0
    assert browser.eval("document.scripts.length") == 2
    js(browser, "window.scrollTo(0, 0); return 1;")
    shot = tmp_path / "report.png"
    browser.screenshot(str(shot), full_page=True)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20000


def test_row_limit_and_show_all(tmp_path, monkeypatch):
    make_project(tmp_path / "proj")
    monkeypatch.chdir(tmp_path)
    results = scan(Path("proj"))
    monkeypatch.setattr(html_report, "ROW_LIMIT", 3)
    report = tmp_path / "limited.html"
    report.write_text(html_report.render(results, "2.10", paths=["proj"], date="2026-01-02"), encoding="utf-8")
    with Browser(width=1200, height=900) as browser:
        browser.navigate(report.as_uri())
        total = browser.eval("document.querySelectorAll('#api-table tbody tr').length")
        assert total > 3
        assert len(visible_rows(browser, "api-table")) == 3
        assert browser.eval("document.getElementById('api-shown').textContent") == f"first 3 of {total} shown"
        assert browser.eval("document.getElementById('api-more').hidden") is False
        # filtering searches every row, not only the visible ones
        last = browser.eval("document.querySelector('#api-table tbody tr:last-child').getAttribute('data-q')")
        set_control(browser, "#api-filter", last)
        assert last in visible_rows(browser, "api-table")
        set_control(browser, "#api-filter", "")
        js(browser, "document.getElementById('api-more').click(); return 1;")
        assert len(visible_rows(browser, "api-table")) == total
        assert browser.eval("document.getElementById('api-more').hidden") is True
        # sorting keeps the limit on the file table
        js(browser, "document.querySelector('#file-table th[data-key=lines]').click(); return 1;")
        assert len(visible_rows(browser, "file-table")) == 3
        lines = js(browser, """return Array.from(document.querySelectorAll('#file-table tbody tr'))
            .filter(r => !r.hidden).map(r => +r.cells[1].getAttribute('data-v'));""")
        assert lines == sorted((r.lines for r in results), reverse=True)[:3]
