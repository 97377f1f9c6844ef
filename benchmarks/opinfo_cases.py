"""Print what the run on torch's own test database does: every OpInfo and ModuleInfo whose op has an
entry in the tables, its CPU samples written as code writes the call, rewritten by the fix for the
device and run in MindSpore, compared with torch.

Usage: python benchmarks/opinfo_cases.py [--jobs N] [--device cpu] [--every-dtype] [--limit N]
                                         [--api NAME ...] [--entries FILE]

Prints one line per entry (cases per source and form), the cases per source, the totals (agree,
differ as the facts state, disagree), the wall time, the entries labelled equivalent with a
disagreeing case, and the issue's targets: at least 100,000 cases in under 30 minutes with 2 workers.
`--limit N`: only the first N jobs in a fixed order (a slice, for a machine where the full run does
not fit); `--api`: only these entries.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from typing import Any

from torch2ms.mappings import load_table, parse_version
from torch2ms.model import Category
from torch2ms.verify.cases import entry_verdict
from torch2ms.verify.command import entry_line, print_lines
from torch2ms.verify.database import catalog_spec, reached, sample_specs, source_counts
from torch2ms.verify.pool import Pool
from torch2ms.verify.record import COUNTS, device_name

TARGET_CASES = 100_000
TARGET_SECONDS = 30 * 60


def _order(spec: dict[str, Any]) -> str:
    return hashlib.blake2b(str(spec["id"]).encode(), digest_size=8).hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--every-dtype", action="store_true", help="every dtype torch lists, not only float32")
    parser.add_argument("--limit", type=int, default=None, help="run only N jobs (a fixed, hash-ordered slice)")
    parser.add_argument("--api", action="append", default=None, help="only this entry (repeatable)")
    parser.add_argument("--entries", default=None, help="write the per-entry lines to this file")
    options = parser.parse_args()
    table = load_table()
    version = parse_version(table.meta.default_target)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    start = time.perf_counter()
    with Pool(jobs=options.jobs, device=options.device) as pool:
        catalog = pool.run([catalog_spec()])[0]
        if catalog.get("status") != "passed":
            print(f"torch's test database is not available: {catalog.get('reason')}", file=sys.stderr)
            return 2
        ready = time.perf_counter() - start
        pairs = reached(table, catalog)
        specs = sample_specs(table, catalog, options.device, options.every_dtype,
                             set(options.api) if options.api else None)
        every = len(specs)
        if options.limit is not None:
            specs = sorted(sorted(specs, key=_order)[:options.limit], key=lambda s: str(s["id"]))
        print(f"database: {len(catalog.get('ops') or [])} OpInfos, {len(catalog.get('modules') or [])} ModuleInfos "
              f"(torch's own callables); {len(pairs)} (entry, written form) pairs reach {len({p[0] for p in pairs})} "
              f"entries; {every} jobs" + (f", running {len(specs)} of them (a slice)" if len(specs) < every else ""))
        print(f"machine: {cores} cores; workers: {options.jobs}; device: {options.device}; "
              f"dtypes: {'every dtype torch lists' if options.every_dtype else 'float32'}")
        results = pool.run(specs)
        restarts = pool.restarts
        info = pool.info
    wall = time.perf_counter() - start
    where = device_name(options.device)
    by_api: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
    for spec, result in zip(specs, results):
        result.setdefault("source", spec["source"])
        pair = by_api.setdefault(str(spec["api"]), ([], []))
        pair[0].append(spec)
        pair[1].append(result)
    verdicts = {api: entry_verdict(table.entries[api], options.device, s, r) for api, (s, r) in sorted(by_api.items())}
    lines = []
    for api, verdict in verdicts.items():
        per_source = source_counts(by_api[api][1])
        lines.append(f"{verdict.status.upper():7} {api} [" + ", ".join(f"{k} {v}" for k, v in sorted(per_source.items()))
                     + f"]: {entry_line(verdict)}")
    print_lines(lines, options.entries, f"cases per entry, source and form on {where}")
    total = {key: sum(int(r.get(key) or 0) for r in results) for key in COUNTS}
    statuses: dict[str, int] = {}
    for verdict in verdicts.values():
        statuses[verdict.status] = statuses.get(verdict.status, 0) + 1
    equivalent_bad = sorted(api for api, (_, rs) in by_api.items()
                            if table.entries[api].category_for(version, options.device) is Category.EQUIVALENT
                            and any(int(r.get("failed") or 0) for r in rs))
    print(f"versions: torch {info.get('torch_version')}, MindSpore {info.get('mindspore_version')}")
    print("cases per source: " + ", ".join(f"{k} {v}" for k, v in sorted(source_counts(results).items())))
    print(f"entries on {where}: " + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())))
    print(f"cases on {where}: {total['cases']} ran as the fix writes them ({total['agreed']} agree, "
          f"{total['stated']} differ as facts state, {total['failed']} disagree); {total['no_fix']} not rewritten "
          f"by the fix; {total['rejected']} rejected by torch; {total['uncompared']} not comparable")
    print(f"run: {wall:.1f} s wall ({wall / 60:.2f} min); database listed after {ready:.1f} s; "
          f"{total['cases'] / max(wall - ready, 1e-9):.0f} cases/s after; {restarts} worker restart(s)")
    print(f"equivalent entries with a disagreeing case on {where}: {len(equivalent_bad)}"
          + (f" ({', '.join(equivalent_bad[:20])}{' ...' if len(equivalent_bad) > 20 else ''})" if equivalent_bad else ""))
    print(f"target >= {TARGET_CASES} cases: {'met' if total['cases'] >= TARGET_CASES else 'MISSED'}; "
          f"target < {TARGET_SECONDS} s with 2 workers: {'met' if wall < TARGET_SECONDS else 'MISSED'}"
          + (" (a slice: the targets are for the full run)" if len(specs) < every else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
