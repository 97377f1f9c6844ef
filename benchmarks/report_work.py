"""Print what the HTML report of a real project opens on: the work left, a suggested order, no empty rows.

Usage: python benchmarks/report_work.py [--project DIR] [--jobs N]

Default project: timm's sources installed beside torch (`pip install --no-deps timm==1.0.31`; scanned,
never imported). Runs the real command line (`python -m torch2ms scan DIR --html ... --output-format
json ...`) in a temporary folder and reads both reports. Prints:

- files scanned, the rows the file table shows when it opens and the rows it hides (no findings);
- the APIs the API table lists and the type-only rows it leaves out (0 uses);
- the first files of the suggested order with the reason given, how many start free, wait for an
  import or sit in an import cycle;
- absolute paths of the machine in the page (goal 0) and chart labels cut with an ellipsis (goal 0);
- per fix of a class line (Module -> Cell): the lines between its first and last edit (what a
  before/after preview of that range shows) and the lines its edits touch (what the page shows);
- the page's size and the time of the scan that wrote it.
"""

from __future__ import annotations

import argparse
import html
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def default_project() -> Path:
    spec = importlib.util.find_spec("timm")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("timm's sources are not installed: pip install --no-deps timm==1.0.31, or give --project DIR")
    return Path(list(spec.submodule_search_locations)[0])


def embedded(page: str) -> dict:
    found = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S)
    assert found is not None, "the page embeds its data"
    return json.loads(found.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--project", help="the folder to scan (default: timm's sources)")
    parser.add_argument("--jobs", default="2", help="scan worker processes (default 2)")
    args = parser.parse_args()
    project = Path(args.project).resolve() if args.project else default_project()
    env = {**os.environ, "PYTHONPATH": str(HERE / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    with tempfile.TemporaryDirectory(prefix="torch2ms-report-work-") as tmp:
        page_path, json_path = Path(tmp) / "report.html", Path(tmp) / "report.json"
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "torch2ms", "scan", str(project), "--isolated", "--no-cache",
                        "--exit-zero", "--jobs", args.jobs, "--date", "2026-01-01", "--html", str(page_path),
                        "--output-format", "json", "-o", str(json_path)], env=env, check=True, cwd=tmp)
        seconds = time.perf_counter() - started
        page = page_path.read_text(encoding="utf-8")
        doc = json.loads(json_path.read_text(encoding="utf-8"))
    data = embedded(page)
    files = data["files"]
    shown = sum(1 for f in files if f[2])
    print(f"project: {project.name}: {len(files):,} files scanned in {seconds:.1f} s")
    print(f"file table opens with {shown:,} rows (sorted by work left), hides {len(files) - shown:,} files "
          "without findings")
    used = sum(1 for a in data["apis"] if a[1] > 0)
    print(f"API table lists {used:,} APIs with uses; leaves out {len(data['apis']) - used:,} named only as types")
    rows = re.findall(r'<tr><td class="n">(\d+)</td><td><a class="path" href="#f\d+">([^<]+)</a></td>'
                      r'<td class="n">([\d,]+)</td><td class="n">([\d,]+)</td><td>([^<]*)</td></tr>', page)
    print("suggested order (first 8): rank, file, work left, findings, why")
    for rank, path, left, findings, why in rows[:8]:
        print(f"  {rank:>2}. {html.unescape(path)}  left {left}, findings {findings}: {html.unescape(why)}")
    reasons = [why for *_, why in rows]
    print(f"  of the first {len(rows)}: {sum(w.startswith('imports no file') for w in reasons)} start free, "
          f"{sum(w.startswith('after ') for w in reasons)} after their imports, "
          f"{sum(w.startswith('in an import cycle') for w in reasons)} in an import cycle")
    absolute = page.count(str(project)) + page.count(str(Path(tempfile.gettempdir())))
    cut = len(re.findall(r'class="lbl">[^<]*\u2026', page))
    print(f"absolute paths in the page: {absolute}; chart labels cut: {cut}")
    spans, touched = [], []
    for file in doc["files"]:
        for d in file["diagnostics"]:
            if d["code"] == "TMS331" and d["fix"]:
                edits = [e["span"] for e in d["fix"]["edits"]]
                spans.append(max(e["end_line"] for e in edits) - min(e["start_line"] for e in edits) + 1)
                touched.append(len({e["start_line"] for e in edits if e["start_line"] != e["end_line"] or
                                    e["start_col"] != e["end_col"]}))
    if spans:
        print(f"Module -> Cell fixes: {len(spans):,}; lines from first to last edit: mean {sum(spans) / len(spans):.1f}, "
              f"max {max(spans)}; lines their edits change (shown): mean {sum(touched) / len(touched):.1f}, "
              f"max {max(touched)} (plus the import line a fix adds)")
    print(f"page size: {len(page.encode('utf-8')) / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
