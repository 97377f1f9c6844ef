"""`torch2ms verify`: argument handling, printing and exit codes of the verify backend.

Exit codes: 0 every verified example passed (skipped ones allowed), 1 some failed or
raised, 2 usage error or the backend could not start.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import json
import os
import sys
import time
from typing import Any, TextIO

from ..mappings import load_table
from ..model import MappingEntry
from .cases import NOT_RUNNABLE, entry_verdict, example_specs, select
from .database import SOURCES, catalog_spec, sample_specs
from .pool import Pool, VerifyError
from .record import STATUSES, EntryRecord, RecordError, default_path, device_name, merged, read_record, write_record

EXIT_OK, EXIT_FAILED, EXIT_ERROR = 0, 1, 2
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MEMORY_MB = 4096


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("targets", nargs="*", metavar="TARGET",
                        help="torch API names (torch.abs) or FILE:LINE of a torch call in your code")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--all", action="store_true", help="every equivalent/diff_params entry (the full run)")
    what.add_argument("--sample", type=int, metavar="N",
                      help="a deterministic sample of N entries, a few of every kind (what CI runs)")
    what.add_argument("--prefix", metavar="NAME", help="entries under a namespace, e.g. torch.nn.functional")
    parser.add_argument("-j", "--jobs", type=int, default=None, metavar="N",
                        help="worker processes (default: the number of cores, at most 8)")
    parser.add_argument("--device", choices=("cpu", "gpu", "ascend"), default="cpu",
                        help="where MindSpore (and torch, for gpu) run (default: cpu)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="S",
                        help=f"seconds per example (default {DEFAULT_TIMEOUT_S:g})")
    parser.add_argument("--memory-mb", type=int, default=DEFAULT_MEMORY_MB, metavar="MB",
                        help=f"address space a worker may add after its imports (default {DEFAULT_MEMORY_MB})")
    parser.add_argument("--shape", action="append", default=[], metavar="NAME=DIMS[:DTYPE]",
                        help="input shape for FILE:LINE, e.g. --shape x=2,3 --shape i=4:int64")
    parser.add_argument("--write-record", nargs="?", const="", default=None, metavar="FILE.json",
                        help="write the verification record (default: src/torch2ms/data/verification.json); "
                             "a partial run updates the entries it ran (a value not ending in .json is "
                             "a TARGET: `--write-record torch.abs` verifies torch.abs into the default record)")
    parser.add_argument("--source", action="append", choices=SOURCES, default=None, metavar="SOURCE",
                        help="where the cases come from, repeatable: generator (from each entry's examples, the "
                             "default), opinfo or moduleinfo (torch's own test samples of the entries they reach)")
    parser.add_argument("--json", action="store_true", help="print every example's result as JSON")
    parser.add_argument("-v", "--verbose", action="store_true", help="also list the entries that passed")


def _jobs(args: argparse.Namespace) -> int:
    if args.jobs and args.jobs > 0:
        return int(args.jobs)
    return max(1, min(8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))


def _fmt_err(value: Any) -> str:
    return "-" if not isinstance(value, (int, float)) else f"{value:.2g}"


class DatabaseMissing(VerifyError):
    """torch's test database cannot be listed in the workers (its imports need expecttest and hypothesis)."""


def database_specs(entries: list[MappingEntry], pool: Pool, device: str,
                   sources: set[str]) -> dict[str, list[dict[str, Any]]]:
    """The jobs of torch's test samples (`opinfo`, `moduleinfo` in `sources`) that reach `entries`, by API."""
    wanted = sources & {"opinfo", "moduleinfo"}
    if not wanted:
        return {}
    catalog = pool.run([catalog_spec()])[0]
    if catalog.get("status") != "passed":
        raise DatabaseMissing(f"torch's test database is not available: {catalog.get('reason')}")
    out: dict[str, list[dict[str, Any]]] = {}
    for spec in sample_specs(load_table(), catalog, device, apis={e.api for e in entries}):
        if spec["source"] in wanted:
            out.setdefault(str(spec["api"]), []).append(spec)
    return out


def run_entries(entries: list[MappingEntry], pool: Pool, on_entry: Any = None, device: str | None = None,
                sources: set[str] | None = None) -> tuple[dict[str, EntryRecord], list[dict[str, Any]]]:
    """Run the cases of every form of `entries` on the pool's device, from `sources` (default: the generator,
    from each entry's examples; `opinfo`, `moduleinfo`: torch's test samples); (record per api, raw results)."""
    device = device or pool.device
    sources = sources or {"generator"}
    database = database_specs(entries, pool, device, sources)
    specs_of = {entry.api: (example_specs(entry) if "generator" in sources else []) + database.get(entry.api, [])
                for entry in entries}
    specs = [spec for entry in entries for spec in specs_of[entry.api]]
    results = pool.run(specs)
    by_api: dict[str, list[dict[str, Any]]] = {}
    for spec, result in zip(specs, results):
        result.setdefault("api", spec["api"])
        result.setdefault("form", spec["form"])
        by_api.setdefault(spec["api"], []).append(result)
    verdicts = {}
    for entry in entries:
        verdicts[entry.api] = entry_verdict(entry, device, specs_of[entry.api], by_api.get(entry.api, []))
        if on_entry is not None:
            on_entry(entry.api, verdicts[entry.api])
    return verdicts, results


def _record_path(args: argparse.Namespace) -> str:
    return args.write_record or str(default_path())


def write_run(path: str, info: dict[str, Any], verdicts: dict[str, EntryRecord], full: bool, out: TextIO) -> None:
    """Write (or update) the record at `path` with a run's verdicts (see `record.merged`)."""
    device = str(info.get("device", "cpu"))
    old = None
    if os.path.exists(path):
        try:
            old = read_record(path)
        except RecordError as exc:
            print(f"torch2ms verify: replacing unreadable record: {exc}", file=sys.stderr)
    record = merged(old, str(info.get("torch_version", "?")), str(info.get("mindspore_version", "?")), device,
                    verdicts, full, _dt.date.today().isoformat())
    command = f"torch2ms verify --all --device {device} --write-record" if full else \
        f"torch2ms verify --device {device} (partial run)"
    write_record(record, path, command)
    print(f"wrote the verification record: {path} ({len(record.entries)} entries)", file=out)


def _pool(pool_args: dict[str, Any], shared: Pool | None) -> Any:
    """A new pool (closed after use) or the caller's (left open)."""
    if shared is not None:
        return contextlib.nullcontext(shared)
    return Pool(**pool_args)


def _run_location(args: argparse.Namespace, targets: list[tuple[str, int]], pool_args: dict[str, Any],
                  out: TextIO, shared: Pool | None = None) -> int:
    from .locate import LocateError, locate, parse_shape

    try:
        shapes = dict(parse_shape(text) for text in args.shape)
    except ValueError as exc:
        print(f"torch2ms verify: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    table = load_table()
    specs = []
    for path, line in targets:
        try:
            specs.append(locate(path, line, table, shapes).spec)
        except LocateError as exc:
            if args.json:  # the reason as data too: the editor shows it without the command line's hint
                out.write(json.dumps({"location": f"{path}:{line}", "error": exc.reason, "hint": exc.hint}) + "\n")
            print(f"torch2ms verify: error: {exc}", file=sys.stderr)
            return EXIT_ERROR
    with _pool(pool_args, shared) as pool:
        results = pool.run(specs)
        info = pool.info
    worst = EXIT_OK
    for spec, result in zip(specs, results):
        if args.json:
            ran_on = {k: info.get(k) for k in ("torch_version", "mindspore_version", "device")} if info else None
            out.write(json.dumps({"location": spec["id"], "spec": spec, "result": result, "ran_on": ran_on}) + "\n")
            continue
        status = result.get("status", "error")
        out.write(f"{spec['id']}: {spec['api']}\n")
        out.write(f"  torch:     {spec['torch']}\n")
        out.write(f"  MindSpore: {spec['mindspore']}\n")
        shapes_text = ", ".join(f"{n}={v.get('shape', v.get('value'))} {v.get('dtype', 'float32')}"
                                for n, v in spec["inputs"].items())
        if shapes_text:
            out.write(f"  inputs:    {shapes_text}\n")
        out.write(f"  result:    {status.upper()}"
                  f" (max abs err {_fmt_err(result.get('max_abs_err'))}, max rel err {_fmt_err(result.get('max_rel_err'))})"
                  f"{': ' + result['reason'] if result.get('reason') else ''}\n")
        for note in result.get("notes") or []:
            out.write(f"  note:      {note}\n")
        if status != "passed":
            worst = EXIT_FAILED
    if info and not args.json:
        out.write(f"ran on torch {info.get('torch_version')}, MindSpore {info.get('mindspore_version')}, "
                  f"{str(info.get('device')).upper()}\n")
    return worst


def record_target(args: argparse.Namespace) -> None:
    """`--write-record torch.abs torch.exp`: argparse gives the first target to the option; a value not
    ending in .json is taken back as a target (the record goes to its default place)."""
    if args.write_record and not args.write_record.endswith(".json"):
        args.targets = [args.write_record, *args.targets]
        args.write_record = ""


def run(args: argparse.Namespace, out: TextIO | None = None, pool: Pool | None = None) -> int:
    """Run `torch2ms verify`; `pool` lets a caller (the tests) reuse warm workers."""
    out = out or sys.stdout
    shared = pool
    from .locate import parse_location

    record_target(args)
    pool_args = {"jobs": _jobs(args), "device": args.device, "memory_mb": args.memory_mb, "timeout": args.timeout}
    locations = [parse_location(t) for t in args.targets]
    if args.targets and all(loc is not None for loc in locations):
        return _run_location(args, [loc for loc in locations if loc is not None], pool_args, out, shared)
    if any(loc is not None for loc in locations):
        print("torch2ms verify: error: give either API names or FILE:LINE locations, not both", file=sys.stderr)
        return EXIT_ERROR
    if args.shape:
        print("torch2ms verify: error: --shape applies to FILE:LINE targets only", file=sys.stderr)
        return EXIT_ERROR
    if not (args.targets or args.all or args.sample is not None or args.prefix):
        print("torch2ms verify: error: name what to verify: API names, FILE:LINE, --all, --sample N "
              "or --prefix NAME", file=sys.stderr)
        return EXIT_ERROR
    if args.sample is not None and args.sample <= 0:
        print("torch2ms verify: error: --sample needs a positive number", file=sys.stderr)
        return EXIT_ERROR
    table = load_table()
    try:
        entries = select(table, apis=args.targets or None, sample_size=args.sample, prefix=args.prefix)
    except KeyError as exc:
        print(f"torch2ms verify: error: not an entry of the mapping tables: {exc.args[0]}", file=sys.stderr)
        return EXIT_ERROR
    sources = set(args.source or ["generator"])
    with_examples = [e for e in entries if e.examples]
    n_jobs = sum(len(example_specs(e)) for e in with_examples)
    what = f"{len(with_examples)} entries ({n_jobs} example forms, each on its generated cases)" \
        if sources == {"generator"} else f"{len(entries)} entries (cases from {', '.join(sorted(sources))})"
    print(f"verifying {what} on {pool_args['jobs']} worker(s), device {args.device}", file=sys.stderr)
    start = time.perf_counter()
    device = args.device

    def show(api: str, verdict: EntryRecord) -> None:
        if args.json:
            return
        if verdict.status in ("failed", "error") or args.verbose:
            out.write(f"{verdict.status.upper():7} {api}: {entry_line(verdict)}\n")

    with _pool(pool_args, shared) as pool:
        try:
            verdicts, results = run_entries(entries, pool, show, device, sources)
        except DatabaseMissing as exc:
            print(f"torch2ms verify: error: {exc}", file=sys.stderr)
            return EXIT_ERROR
        info = dict(pool.info) or {"device": device}
        restarts = pool.restarts
    elapsed = time.perf_counter() - start
    if args.json:
        for result in results:
            out.write(json.dumps(result, default=str) + "\n")
    counts = {s: sum(1 for v in verdicts.values() if v.status == s) for s in STATUSES}
    ran = counts["passed"] + counts["differs"] + counts["failed"] + counts["error"]
    not_runnable = sum(1 for v in verdicts.values() if v.status == "skipped" and v.reason.startswith(NOT_RUNNABLE))
    cases = {key: sum(int(r.get(key) or 0) for r in results)
             for key in ("cases", "agreed", "stated", "failed", "no_fix", "rejected")}
    rate = 100.0 * counts["passed"] / ran if ran else 0.0
    where = device_name(str(info.get("device", device)))
    summary = (f"verified {ran} entries on {where} in {elapsed:.1f} s (torch {info.get('torch_version', '?')}, "
               f"MindSpore {info.get('mindspore_version', '?')}): {counts['passed']} passed, "
               f"{counts['differs']} differ as their facts state, {counts['failed']} failed, "
               f"{counts['error']} error, {counts['skipped']} skipped"
               f"{f' ({not_runnable} declared not runnable here)' if not_runnable else ''}; pass rate {rate:.1f}%\n"
               f"cases on {where}: {cases['cases']} ran as the fix writes them ({cases['agreed']} agree, "
               f"{cases['stated']} differ as facts state, {cases['failed']} disagree); {cases['no_fix']} not "
               f"rewritten by the fix, {cases['rejected']} rejected by torch"
               f"{f'; {restarts} worker restart(s)' if restarts else ''}")
    print(summary, file=sys.stderr if args.json else out)
    if args.write_record is not None:
        if not info.get("torch_version"):
            print("torch2ms verify: no example ran; the record is left as it is", file=sys.stderr)
        else:
            write_run(_record_path(args), info, verdicts, full=bool(args.all), out=sys.stderr if args.json else out)
    return EXIT_OK if counts["failed"] == 0 and counts["error"] == 0 else EXIT_FAILED


def print_lines(lines: list[str], path: str | None, heading: str, out: TextIO = sys.stdout) -> None:
    """A benchmark's per-entry lines: into the file `path` (then only its name printed), else printed
    indented under `heading`."""
    if path:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")
        print(f"{heading}: {path}", file=out)
    else:
        print(f"{heading}:", file=out)
        print("\n".join("  " + line for line in lines), file=out)


def entry_line(verdict: EntryRecord) -> str:
    """Cases per form for one entry: `mindspore.nn.Conv2d [cpu, gpu] passed 26/26; ...`."""
    parts = []
    for form in verdict.forms:
        written = f"[{', '.join(form.devices)}]" if form.devices else f"[{form.version}]"
        counts = f"{form.count('agreed') + form.count('stated')}/{form.count('cases')} cases"
        if form.count("no_fix"):
            counts += f", {form.count('no_fix')} not rewritten"
        parts.append(f"{form.form} {written} {form.status} {counts}"
                     + (f" ({form.reason})" if form.reason and form.status != "passed" else ""))
    if not parts:
        return verdict.reason
    return "; ".join(parts)


def main_safe(args: argparse.Namespace) -> int:
    try:
        return run(args)
    except VerifyError as exc:
        print(f"torch2ms verify: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
