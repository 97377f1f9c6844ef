"""Size, load and interaction times of the HTML report of a large project: torch's own installed sources.

    python benchmarks/report_size.py [--jobs N] [--keep DIR] [--path PATH]

Scans torch's package folder (about 2,300 files, 180,000 findings), writes the HTML,
JSON and SARIF reports and prints their sizes (target for the HTML: at most 15 MiB),
then opens the HTML in headless Chromium (Debian's chromium, over the DevTools pipe)
and prints the time to DOMContentLoaded and load, the time of the page's start-up
script, and for each interaction (sorting, filtering, paging the tables, listing an
API's uses, opening the file with most findings, "Open all", "Close all", following a
link to a line, scrolling the sources, a CSV export) the time of its own task, the
time until the page finished the work it does a frame at a time, the longest task
the page ran meanwhile (target: none over 200 ms) and the number of elements. The
machine's load average is printed first: the times are wall-clock times. Prints
figures; asserts nothing.
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

# (name, action, done): JavaScript statements, and an expression that is true when the page is done.
INTERACTIONS = [
    ("sort files by findings", "document.querySelector('#file-table th[data-key=findings]').click()", None),
    ("sort APIs by name", "document.querySelector('#api-table th[data-key=api]').click()", None),
    ("filter files", "const i = document.getElementById('files-filter'); i.value = 'nn/'; "
                     "i.dispatchEvent(new Event('input'))", None),
    ("next page of APIs", "document.getElementById('apis-next').click()", None),
    ("list an API's uses", "document.querySelector('#api-table button.uses').click()",
     "!!document.querySelector('.uselist[data-done]')"),
    ("open the file with most findings",
     "let best = null, most = -1; document.querySelectorAll('details.file').forEach(d => { "
     "const n = +d.querySelector('.body').getAttribute('data-findings'); if (n > most) { most = n; best = d; } }); "
     "best.open = true; best.scrollIntoView()", None),
    ("open all", "document.getElementById('expand-all').click()",
     "document.getElementById('source-list').getAttribute('data-state') === 'open'"),
    ("scroll through the sources", "window.scrollTo(0, document.getElementById('sources').offsetTop + 40000)", None),
    ("close all", "document.getElementById('collapse-all').click()",
     "document.getElementById('source-list').getAttribute('data-state') === 'closed'"),
    ("follow a use to its line", "window.torch2msReport.go(document.querySelector('.uselist a').getAttribute('href'))",
     None),
    ("export the API table as CSV", "window.torch2msReport.csv('apis')", None),
]


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
    print(f"load average   {' '.join(f'{x:.1f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")

    start = time.perf_counter()
    results = scan_paths([target], config, jobs=args.jobs)
    scan_s = time.perf_counter() - start
    results.sort(key=lambda r: r.path)
    findings = sum(len(r.diagnostics) for r in results)
    lines = sum(r.lines for r in results)
    print(f"scanned        {len(results)} files, {lines} lines, {findings} findings in {scan_s:.1f} s "
          f"({args.jobs} jobs)")

    start = time.perf_counter()
    page = html.render(results, config.target_version, paths=[target], date="2026-01-01")
    html_s = time.perf_counter() - start
    start = time.perf_counter()
    as_json = json_report.render(results, config.target_version, paths=[target], date="2026-01-01")
    json_s = time.perf_counter() - start
    as_sarif = sarif.render(results, config.target_version)
    report = out / "report.html"
    report.write_text(page, encoding="utf-8")
    (out / "report.json").write_text(as_json, encoding="utf-8")
    (out / "report.sarif").write_text(as_sarif, encoding="utf-8")
    size = report.stat().st_size
    print(f"html report    {mib(size)} ({size} bytes; target at most 15 MiB), rendered in {html_s:.1f} s -> {report}")
    print(f"json report    {mib(len(as_json.encode()))}, rendered in {json_s:.1f} s")
    print(f"sarif report   {mib(len(as_sarif.encode()))}")

    with Browser(width=1400, height=1000) as browser:
        wall = time.perf_counter()
        browser.navigate(report.as_uri(), timeout=300)
        wall_s = time.perf_counter() - wall
        browser.watch_long_tasks()
        timing = browser.eval("""(function(){ const n = performance.getEntriesByType('navigation')[0];
            return {dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd,
                    startup: window.torch2msReport.startup,
                    rows: document.querySelectorAll('tr').length,
                    nodes: document.getElementsByTagName('*').length}; })()""")
        print(f"chromium       DOMContentLoaded {timing['dcl']:.0f} ms, load {timing['load']:.0f} ms "
              f"(navigate to load event: {wall_s * 1000:.0f} ms); start-up script {timing['startup']:.0f} ms")
        built = browser.measure("0", "window.torch2msReport.sectionsBuilt()")
        print(f"page           {timing['nodes']} elements at load, {timing['rows']} table rows; the file sections "
              f"built a frame at a time in {built['done_ms']:.0f} ms (longest task {built['longest_task_ms']:.0f} ms), "
              f"{built['elements']:.0f} elements")
        worst = built["longest_task_ms"]
        for name, action, done in INTERACTIONS:
            m = browser.measure(action, done)
            worst = max(worst, m["longest_task_ms"], m["handler_ms"])
            print(f"interaction    {name}: its task {m['handler_ms']:.0f} ms, done in {m['done_ms']:.0f} ms, "
                  f"longest task {m['longest_task_ms']:.0f} ms, {m['elements']:.0f} elements")
        print(f"longest        task of any interaction: {worst:.0f} ms (target: at most 200 ms)")
        shot = out / "report.png"
        browser.screenshot(str(shot))
        print(f"screenshot     {shot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
