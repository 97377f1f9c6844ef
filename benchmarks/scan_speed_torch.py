"""Print the scanner's single-process speed (lines/s) over torch's installed sources.

Usage: python benchmarks/scan_speed_torch.py [--repeat N] [--limit FILES]
Reads the .py files under torch's package folder (sorted; the first FILES of
them with --limit) once, then times, best of N runs, so disk speed is not
measured: (1) parse + resolve alone, (2) the whole `scan_source`.
"""

from __future__ import annotations

import argparse
import os
import time

import torch

from torch2ms.engine import parse, scan_source
from torch2ms.mappings import load_table
from torch2ms.resolve import resolve
from torch2ms.source import SourceText


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit", type=int, default=0, help="only the first N files (sorted)")
    options = parser.parse_args()
    root = os.path.dirname(torch.__file__)
    texts = []
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name), "rb") as handle:
                    texts.append((os.path.join(folder, name), handle.read().decode("utf-8", "replace")))
    texts.sort()
    if options.limit:
        texts = texts[: options.limit]
    lines = sum(t.count("\n") + 1 for _, t in texts)
    table = load_table()
    parsed = []
    for _path, text in texts:
        try:
            parsed.append((parse(text), text))
        except (SyntaxError, ValueError, RecursionError):
            pass
    best_resolve = float("inf")
    for _ in range(options.repeat):
        start = time.perf_counter()
        for tree, text in parsed:
            resolve(tree, table, SourceText(text))
        best_resolve = min(best_resolve, time.perf_counter() - start)
    print(f"files {len(texts)}  lines {lines}  resolve only (parsed trees), best of {options.repeat}: "
          f"{best_resolve:.2f} s  {lines / best_resolve:,.0f} lines/s")
    best = float("inf")
    findings = 0
    for _ in range(options.repeat):
        start = time.perf_counter()
        findings = sum(len(scan_source(text, path, table=table).diagnostics) for path, text in texts)
        best = min(best, time.perf_counter() - start)
    print(f"files {len(texts)}  lines {lines}  scan_source, best of {options.repeat}: {best:.2f} s  "
          f"{lines / best:,.0f} lines/s  findings {findings}")


if __name__ == "__main__":
    main()
