"""Size and load time of the HTML report for a large project: torch's own installed sources.

    python benchmarks/report_size.py [--jobs N] [--keep DIR] [--path PATH]

Scans torch's package folder (about 2,300 files), writes the HTML, JSON and
SARIF reports, prints their sizes, then opens the HTML in headless Chromium
(Debian's chromium, over the DevTools pipe) and prints the time to
DOMContentLoaded and to load, the time to sort and filter the tables and to
open (render) the largest file section. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from chromium_cdp import Browser  # noqa: E402

from torch2ms.api import default_jobs, scan_paths  # noqa: E402
from torch2ms.config import Config  # noqa: E402
from torch2ms.report import html, sarif  # noqa: E402
from torch2ms.report import json as json_report  # noqa: E402


def torch_sources() -> str:
    import torch

    return os.path.dirname(torch.__file__)


def mib(n: int) -> str:
    return f"{n / (1 << 20):.2f} MiB"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--jobs", type=int, default=default_jobs())
    parser.add_argument("--keep", metavar="DIR", help="write the reports into DIR (default: a temporary folder)")
    parser.add_argument("--path", help="scan this folder instead of torch's sources")
    args = parser.parse_args()

    target = os.path.abspath(args.path or torch_sources())
    out = Path(args.keep or tempfile.mkdtemp(prefix="t2m-report-"))
    out.mkdir(parents=True, exist_ok=True)
    config = Config()

    start = time.perf_counter()
    results = scan_paths([target], config, jobs=args.jobs)
    scan_s = time.perf_counter() - start
    results.sort(key=lambda r: r.path)
    findings = sum(len(r.diagnostics) for r in results)
    lines = sum(r.lines for r in results)
    print(f"scanned        {len(results)} files, {lines} lines, {findings} findings in {scan_s:.1f} s "
          f"({args.jobs} jobs)")

    cwd = os.getcwd()
    os.chdir(os.path.dirname(target))  # paths in the reports relative to the folder holding the project
    try:
        start = time.perf_counter()
        page = html.render(results, config.target_version, paths=[target], date="2026-01-01")
        html_s = time.perf_counter() - start
        start = time.perf_counter()
        as_json = json_report.render(results, config.target_version, paths=[target], date="2026-01-01")
        json_s = time.perf_counter() - start
        as_sarif = sarif.render(results, config.target_version)
    finally:
        os.chdir(cwd)
    report = out / "report.html"
    report.write_text(page, encoding="utf-8")
    (out / "report.json").write_text(as_json, encoding="utf-8")
    (out / "report.sarif").write_text(as_sarif, encoding="utf-8")
    size = report.stat().st_size
    print(f"html report    {mib(size)} ({size} bytes), rendered in {html_s:.1f} s -> {report}")
    print(f"json report    {mib(len(as_json.encode()))}, rendered in {json_s:.1f} s")
    print(f"sarif report   {mib(len(as_sarif.encode()))}")

    with Browser(width=1400, height=1000) as browser:
        wall = time.perf_counter()
        browser.navigate(report.as_uri(), timeout=300)
        wall_s = time.perf_counter() - wall
        timing = browser.eval("""(function(){ const n = performance.getEntriesByType('navigation')[0];
            return {dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd,
                    rows: document.querySelectorAll('tr').length,
                    sections: document.querySelectorAll('details.file').length,
                    nodes: document.getElementsByTagName('*').length}; })()""")
        print(f"chromium       DOMContentLoaded {timing['dcl']:.0f} ms, load {timing['load']:.0f} ms "
              f"(navigate to load event: {wall_s * 1000:.0f} ms)")
        print(f"page           {timing['nodes']} elements, {timing['rows']} table rows, "
              f"{timing['sections']} file sections (collapsed)")
        actions = browser.eval("""(function(){
            function t(f){ const s = performance.now(); f(); return performance.now() - s; }
            const out = {};
            out.sort_files = t(() => document.querySelector('#file-table th[data-key=findings]').click());
            out.sort_apis = t(() => document.querySelector('#api-table th[data-key=api]').click());
            const input = document.getElementById('file-filter');
            out.filter_files = t(() => { input.value = 'nn/'; input.dispatchEvent(new Event('input')); });
            input.value = ''; input.dispatchEvent(new Event('input'));
            let biggest = null, most = -1;
            document.querySelectorAll('details.file').forEach(d => {
              const n = +d.querySelector('.body').getAttribute('data-findings');
              if (n > most) { most = n; biggest = d; } });
            out.findings = most;
            out.open_section = biggest ? t(() => { biggest.open = true; biggest.dispatchEvent(new Event('toggle')); }) : 0;
            out.lines = biggest ? biggest.querySelectorAll('.line').length : 0;
            return out; })()""")
        print(f"interaction    sort files {actions['sort_files']:.0f} ms, sort APIs {actions['sort_apis']:.0f} ms, "
              f"filter files {actions['filter_files']:.0f} ms")
        print(f"               open the file with most findings ({actions['findings']} findings, "
              f"{actions['lines']} lines shown): {actions['open_section']:.0f} ms")
        shot = out / "report.png"
        browser.screenshot(str(shot))
        print(f"screenshot     {shot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
