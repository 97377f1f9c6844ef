"""Print how much of a scan of timm (PyTorch Image Models) is noise, and whether progress goes up.

Usage: python benchmarks/timm_noise.py [--before REV] [--jobs N] [--timm DIR]

Needs timm's sources, installed beside torch: `pip install --no-deps timm==1.0.31` (`./run bench-noise`
does it); the scan reads the files and never imports them. Everything runs on copies in a temporary
folder with the real command line (`python -m torch2ms`). Prints:

- the warnings of a scan of timm; with `--before REV` also those of torch2ms at git revision REV
  (its `src/` extracted with `git archive`), so a change's effect is measured, not remembered;
- the share of warnings on a type reference: an annotation, an isinstance/issubclass target, a base
  class or an except clause, found by walking each file's tree here, apart from the scanner (goal 0);
- class lines with more than one finding (goal 0);
- the uses of one scan as `--statistics`, the JSON report (summary and readiness) and the HTML report
  count them (they must agree);
- `scan timm/layers --fix` on a copy, then `--compare` with the report from before the fix: fixed, new
  and the readiness then and now (it must go up, with 0 new);
- `--add-noqa` on a copy: the comments added and the exit code of the rescan (0: one pass converges).
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def timm_folder(given: str | None) -> Path:
    if given:
        return Path(given)
    spec = importlib.util.find_spec("timm")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        sys.exit("timm is not installed: pip install --no-deps timm==1.0.31 (its sources are scanned, never run)")
    return Path(list(spec.submodule_search_locations)[0])


def torch2ms(src: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(src))
    return subprocess.run([sys.executable, "-m", "torch2ms", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=3600)


def type_reference_spans(tree: ast.AST) -> list[tuple[int, int, int, int]]:
    """(start line, start col, end line, end col) of every type reference in a module."""
    nodes: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                if arg is not None and arg.annotation is not None:
                    nodes.append(arg.annotation)
            if node.returns is not None:
                nodes.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            nodes.append(node.annotation)
        elif isinstance(node, ast.ClassDef):
            nodes.extend(node.bases)
        elif isinstance(node, ast.ExceptHandler) and node.type is not None:
            nodes.append(node.type)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2:
            nodes.append(node.args[1])
    return [(n.lineno, n.col_offset, n.end_lineno or n.lineno, n.end_col_offset or 0) for n in nodes]


def inside(span: dict[str, int], ranges: list[tuple[int, int, int, int]]) -> bool:
    start = (span["start_line"], span["start_col"])
    return any((a, b) <= start < (c, d) for a, b, c, d in ranges)


def noise(doc: dict, root: Path) -> tuple[int, int, int]:
    """(warnings, warnings on a type reference, class lines with more than one finding)."""
    warnings = on_types = crowded = 0
    for file in doc["files"]:
        diags = file["diagnostics"]
        if not diags:
            continue
        path = root / file["path"]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        ranges = type_reference_spans(tree)
        class_lines = {n.lineno for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        per_line: dict[int, int] = {}
        for diag in diags:
            line = diag["span"]["start_line"]
            per_line[line] = per_line.get(line, 0) + 1
            if diag["severity"] == "warning":
                warnings += 1
                on_types += inside(diag["span"], ranges)
        crowded += sum(1 for line in class_lines if per_line.get(line, 0) > 1)
    return warnings, on_types, crowded


def scan_json(src: Path, folder: Path, out: Path, *extra: str) -> dict:
    proc = torch2ms(src, "scan", folder.name, "--isolated", "--no-cache", "--exit-zero", "--output-format", "json",
                    "-o", str(out), *extra, cwd=folder.parent)
    if proc.returncode != 0:
        sys.exit(f"scan failed ({proc.returncode}): {proc.stderr[-2000:]}")
    with open(out, encoding="utf-8") as handle:
        return json.load(handle)


def checkout(rev: str, into: Path) -> Path:
    archive = into / "src.tar"
    with open(archive, "wb") as handle:
        subprocess.run(["git", "archive", rev, "src"], cwd=HERE, stdout=handle, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "rev", filter="data")
    return into / "rev" / "src"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", metavar="REV", help="also scan with torch2ms at this git revision")
    parser.add_argument("--timm", metavar="DIR", help="timm's package folder (default: the installed one)")
    options = parser.parse_args()
    src = HERE / "src"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        timm = work / "timm"
        shutil.copytree(timm_folder(options.timm), timm, ignore=shutil.ignore_patterns("__pycache__"))
        files = sum(1 for _ in timm.rglob("*.py"))
        lines = sum(p.read_text(encoding="utf-8").count("\n") for p in timm.rglob("*.py"))
        print(f"timm: {files} files, {lines:,} lines")

        if options.before:
            old = scan_json(checkout(options.before, work), timm, work / "before.json")
            warnings, on_types, crowded = noise(old, work)
            print(f"before ({options.before}): {warnings:,} warnings, {on_types:,} on a type reference "
                  f"({100.0 * on_types / max(warnings, 1):.1f}%), {crowded:,} class lines with more than one finding")

        started = time.perf_counter()
        doc = scan_json(src, timm, work / "now.json", "--html", str(work / "now.html"))
        seconds = time.perf_counter() - started
        warnings, on_types, crowded = noise(doc, work)
        print(f"now: {warnings:,} warnings, {on_types:,} on a type reference "
              f"({100.0 * on_types / max(warnings, 1):.1f}%, goal 0), {crowded:,} class lines with more than one "
              f"finding (goal 0); {doc['summary']['findings']:,} findings in {seconds:.1f} s")

        stats = torch2ms(src, "scan", "timm", "--isolated", "--no-cache", "--exit-zero", "--statistics", cwd=work)
        stated = re.search(r"lines: ([\d,]+) uses? of", stats.stdout)
        html = (work / "now.html").read_text(encoding="utf-8")
        shown = re.search(r"of the ([\d,]+) torch API uses", html)
        counts = {"--statistics": stated.group(1) if stated else "?", "JSON summary.api_uses":
                  f"{doc['summary']['api_uses']:,}", "JSON readiness.api_uses": f"{doc['summary']['readiness']['api_uses']:,}",
                  "HTML": shown.group(1) if shown else "?"}
        agree = "agree" if len(set(counts.values())) == 1 else "DISAGREE"
        print(f"uses {agree}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))

        fixed_run = torch2ms(src, "scan", "timm/layers", "--isolated", "--no-cache", "--fix", "--exit-zero", cwd=work)
        print(f"scan timm/layers --fix: {fixed_run.stderr.strip().splitlines()[-1] if fixed_run.stderr.strip() else ''}")
        torch2ms(src, "scan", "timm", "--isolated", "--no-cache", "--exit-zero", "--html", str(work / "after.html"),
                 "--compare", str(work / "now.json"), cwd=work)
        after = (work / "after.html").read_text(encoding="utf-8")
        line = re.search(r'<p id="progress-line">(.*?)</p>', after, re.S)
        text = re.sub(r"<[^>]+>", "", line.group(1)).replace("&rarr;", "->") if line else "?"
        print("--compare after the fix: " + " ".join(text.split()))
        detail = re.search(r'<p class="muted" id="progress-detail">(.*?)</p>', after, re.S)
        if detail:
            print("  " + " ".join(re.sub(r"<[^>]+>", "", detail.group(1)).split()))

        noqa = torch2ms(src, "scan", "timm", "--isolated", "--no-cache", "--add-noqa", cwd=work)
        rescan = torch2ms(src, "scan", "timm", "--isolated", "--no-cache", cwd=work)
        left = len([x for x in rescan.stdout.splitlines() if re.match(r".+:\d+:\d+: TMS", x)])
        print(f"--add-noqa: {noqa.stderr.strip().splitlines()[0] if noqa.stderr.strip() else ''} "
              f"rescan exits {rescan.returncode} with {left} finding(s) (goal: exit 0)")


if __name__ == "__main__":
    main()
