"""Print what the full verification run does and how long it takes: every entry, every form the fix
writes, each on its generated cases, as `torch2ms verify --all` runs them.

Usage: python benchmarks/verify_all.py [--jobs N] [--device cpu] [--write-record] [--entries FILE]

Runs the full verification in-process (worker processes started by the pool, so their torch and
MindSpore imports are part of the time) and prints: one line per entry with its cases per form and
device (to --entries FILE, default stdout), the cases in all, the wall time, and the checks of the
issue: at least 20,000 cases, under 15 minutes with 2 workers, no entry labelled equivalent with a
disagreeing case, and every form the fix writes for the device executed as written.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from torch2ms.mappings import load_table, parse_version
from torch2ms.model import Category
from torch2ms.verify.cases import example_specs, select
from torch2ms.verify.command import entry_line, print_lines, run_entries, write_run
from torch2ms.verify.pool import Pool
from torch2ms.verify.record import default_path, device_name

TARGET_CASES = 20_000
TARGET_SECONDS = 15 * 60


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--write-record", action="store_true", help="also write src/torch2ms/data/verification.json")
    parser.add_argument("--entries", default=None, help="write the per-entry lines to this file")
    options = parser.parse_args()
    table = load_table()
    version = parse_version(table.meta.default_target)
    entries = select(table)
    specs = sum(len(example_specs(e)) for e in entries)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"table: {len(table)} entries; {len(entries)} to verify, {sum(1 for e in entries if e.examples)} "
          f"with examples; {specs} (example, form) jobs")
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
    where = device_name(options.device)
    lines = [f"{v.status.upper():7} {api}: {entry_line(v)}" for api, v in sorted(verdicts.items())]
    print_lines(lines, options.entries, f"cases per entry and form on {where}")
    counts: dict[str, int] = {}
    for verdict in verdicts.values():
        counts[verdict.status] = counts.get(verdict.status, 0) + 1
    total: dict[str, int] = {}
    for result in results:
        for key in ("cases", "agreed", "stated", "failed", "no_fix", "rejected"):
            total[key] = total.get(key, 0) + int(result.get(key) or 0)
    # The forms the fix writes for the device: an entry whose form has no kernel there is missing on
    # the device (the fix writes nothing for it), so it is not counted.
    own = [(api, v.form_for(options.device)) for api, v in verdicts.items()
           if table.entries[api].category_for(version, options.device) is not Category.MISSING]
    # ... and a form the fix writes nowhere (every case left unrewritten, e.g. a method whose MindSpore
    # form is a function: the fix does not move receivers) is not a rewrite it can write
    written = [(api, f) for api, f in own if f is not None and not (f.count("cases") == 0 and f.count("no_fix"))]
    unwritable = [api for api, f in own if f is not None and f.count("cases") == 0 and f.count("no_fix")]
    executed = [(api, f) for api, f in written if f.count("cases") + f.count("uncompared") > 0]
    not_run = [(api, f) for api, f in written if f.count("cases") + f.count("uncompared") == 0]
    equivalent_bad = [api for api, f in written
                      if table.entries[api].category_for(version, options.device) is Category.EQUIVALENT
                      and f.count("failed") > 0]
    slowest = sorted(results, key=lambda r: -float(r.get("seconds") or 0))[:5]
    print(f"versions: torch {info.get('torch_version')}, MindSpore {info.get('mindspore_version')}")
    print(f"entries on {where}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print(f"cases on {where}: {total.get('cases', 0)} ran as the fix writes them ({total.get('agreed', 0)} agree, "
          f"{total.get('stated', 0)} differ as facts state, {total.get('failed', 0)} disagree); "
          f"{total.get('no_fix', 0)} not rewritten by the fix; {total.get('rejected', 0)} rejected by torch")
    print(f"full run: {wall:.1f} s wall ({wall / 60:.2f} min); first worker ready after {ready:.1f} s; "
          f"{total.get('cases', 0) / max(wall - ready, 1e-9):.0f} cases/s after start-up; {restarts} worker restart(s)")
    print("slowest jobs: " + ", ".join(f"{r.get('id')} {float(r.get('seconds') or 0):.2f}s" for r in slowest))
    print(f"forms the fix writes for {where}: {len(written)}; executed as written: {len(executed)}; "
          f"not executed: {len(not_run)}"
          + (" (" + "; ".join(f"{api}: {f.reason}" for api, f in not_run[:8]) + (" ..." if len(not_run) > 8 else "")
             + ")" if not_run else ""))
    print(f"entries whose form the fix cannot write (not verified): {len(unwritable)}")
    print(f"equivalent entries with a disagreeing case on {where}: {len(equivalent_bad)}"
          + (f" ({', '.join(equivalent_bad[:10])}{' ...' if len(equivalent_bad) > 10 else ''})" if equivalent_bad else ""))
    print(f"target >= {TARGET_CASES} cases: {'met' if total.get('cases', 0) >= TARGET_CASES else 'MISSED'}; "
          f"target < {TARGET_SECONDS} s with 2 workers: {'met' if wall < TARGET_SECONDS else 'MISSED'}")
    if options.write_record:
        write_run(str(default_path()), dict(info, device=options.device), verdicts, True, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
