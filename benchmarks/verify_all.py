"""Print how long `torch2ms verify --all` takes: the whole mapping table, every example.

Usage: python benchmarks/verify_all.py [--jobs N] [--write-record]

Runs the full verification in-process (worker processes started by the pool, so
their torch/MindSpore imports are part of the time), then prints the wall time,
the time to the first ready worker, examples per second and the status counts.
Target: under 10 minutes for the whole table on a 2-core machine (--jobs 2).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from torch2ms.mappings import load_table
from torch2ms.verify.cases import example_specs, select
from torch2ms.verify.command import run_entries
from torch2ms.verify.pool import Pool


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    options = parser.parse_args()
    table = load_table()
    entries = select(table)
    examples = sum(len(example_specs(e)) for e in entries)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"table: {len(table)} entries; {len(entries)} equivalent/diff_params entries, "
          f"{sum(1 for e in entries if e.examples)} with examples, {examples} examples")
    print(f"machine: {cores} cores; workers: {options.jobs}; device: {options.device}")
    start = time.perf_counter()
    with Pool(jobs=options.jobs, device=options.device) as pool:
        t0 = time.perf_counter()
        pool.run([{"id": "warm-up", "torch": "1", "mindspore": "1"}])
        ready = time.perf_counter() - t0
        verdicts, results = run_entries(entries, pool)
        restarts = pool.restarts
        info = pool.info
    wall = time.perf_counter() - start
    counts: dict[str, int] = {}
    for verdict in verdicts.values():
        counts[verdict.status] = counts.get(verdict.status, 0) + 1
    slowest = sorted(results, key=lambda r: -float(r.get("seconds") or 0))[:5]
    ran = counts.get("passed", 0) + counts.get("failed", 0) + counts.get("error", 0)
    print(f"versions: torch {info.get('torch_version')}, MindSpore {info.get('mindspore_version')}")
    print(f"full run: {wall:.1f} s wall ({wall / 60:.2f} min); first worker ready after {ready:.1f} s; "
          f"{len(results) / max(wall - ready, 1e-9):.1f} examples/s after start-up; {restarts} worker restart(s)")
    print("entries: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
          + f"; pass rate {100.0 * counts.get('passed', 0) / max(ran, 1):.1f}% of the entries that ran")
    print("slowest examples: " + ", ".join(f"{r.get('id')} {float(r.get('seconds') or 0):.2f}s" for r in slowest))
    print(f"target < 600 s on 2 cores: {'met' if wall < 600 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
