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
from .pool import Pool, VerifyError
from .record import Record, default_path, read_record, RecordError, write_record

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
    parser.add_argument("--write-record", nargs="?", const="", default=None, metavar="FILE",
                        help="write the verification record (default: mappings/verification.json); "
                             "a partial run updates the entries it ran")
    parser.add_argument("--json", action="store_true", help="print every example's result as JSON")
    parser.add_argument("-v", "--verbose", action="store_true", help="also list the entries that passed")


def _jobs(args: argparse.Namespace) -> int:
    if args.jobs and args.jobs > 0:
        return int(args.jobs)
    return max(1, min(8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))


def _fmt_err(value: Any) -> str:
    return "-" if not isinstance(value, (int, float)) else f"{value:.2g}"


def run_entries(entries: list[MappingEntry], pool: Pool,
                on_entry: Any = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Run every example of `entries`; returns (verdict per api, raw results)."""
    specs = [spec for entry in entries for spec in example_specs(entry)]
    results = pool.run(specs)
    by_api: dict[str, list[dict[str, Any]]] = {}
    for spec, result in zip(specs, results):
        result.setdefault("api", spec["api"])
        by_api.setdefault(spec["api"], []).append(result)
    verdicts = {}
    for entry in entries:
        verdicts[entry.api] = entry_verdict(entry, by_api.get(entry.api, []))
        if on_entry is not None:
            on_entry(entry.api, verdicts[entry.api])
    return verdicts, results


def _record_path(args: argparse.Namespace) -> str:
    return args.write_record or str(default_path())


def _write(args: argparse.Namespace, info: dict[str, Any], verdicts: dict[str, Any], full: bool,
           out: TextIO) -> None:
    path = _record_path(args)
    entries = dict(verdicts)
    if not full and os.path.exists(path):
        try:
            old = read_record(path)
        except RecordError as exc:
            print(f"torch2ms verify: replacing unreadable record: {exc}", file=sys.stderr)
        else:
            if (old.torch_version, old.mindspore_version, old.device) == (
                    info.get("torch_version"), info.get("mindspore_version"), info.get("device")):
                entries = {**old.entries, **verdicts}
    record = Record(torch_version=str(info.get("torch_version", "?")),
                    mindspore_version=str(info.get("mindspore_version", "?")),
                    device=str(info.get("device", args.device)),
                    date=_dt.date.today().isoformat(), entries=entries)
    command = "torch2ms verify --all --write-record" if full else "torch2ms verify (partial run)"
    write_record(record, path, command)
    print(f"wrote the verification record: {path} ({len(entries)} entries)", file=out)


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


def run(args: argparse.Namespace, out: TextIO | None = None, pool: Pool | None = None) -> int:
    """Run `torch2ms verify`; `pool` lets a caller (the tests) reuse warm workers."""
    out = out or sys.stdout
    shared = pool
    from .locate import parse_location

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
    with_examples = [e for e in entries if e.examples]
    n_examples = sum(len(e.examples) for e in with_examples)
    print(f"verifying {len(with_examples)} entries ({n_examples} examples) on {pool_args['jobs']} worker(s), "
          f"device {args.device}", file=sys.stderr)
    start = time.perf_counter()

    def show(api: str, verdict: Any) -> None:
        if args.json:
            return
        if verdict.status in ("failed", "error"):
            out.write(f"{verdict.status.upper():7} {api}: {verdict.reason}\n")
        elif args.verbose:
            out.write(f"{verdict.status.upper():7} {api}"
                      f"{' (' + verdict.reason + ')' if verdict.reason else ''}"
                      f" max abs err {_fmt_err(verdict.max_abs_err)}\n")

    with _pool(pool_args, shared) as pool:
        verdicts, results = run_entries(entries, pool, show)
        info = dict(pool.info) or {"device": args.device}
        restarts = pool.restarts
    elapsed = time.perf_counter() - start
    if args.json:
        for result in results:
            out.write(json.dumps(result, default=str) + "\n")
    counts = {s: sum(1 for v in verdicts.values() if v.status == s) for s in ("passed", "failed", "error", "skipped")}
    ran = counts["passed"] + counts["failed"] + counts["error"]
    not_runnable = sum(1 for v in verdicts.values() if v.status == "skipped" and v.reason.startswith(NOT_RUNNABLE))
    rate = 100.0 * counts["passed"] / ran if ran else 0.0
    summary = (f"verified {ran} entries ({n_examples} examples) in {elapsed:.1f} s on torch "
               f"{info.get('torch_version', '?')}, MindSpore {info.get('mindspore_version', '?')}, "
               f"{str(info.get('device', args.device)).upper()}: {counts['passed']} passed, {counts['failed']} failed, "
               f"{counts['error']} error, {counts['skipped']} skipped"
               f"{f' ({not_runnable} declared not runnable here)' if not_runnable else ''}; pass rate {rate:.1f}%"
               f"{f'; {restarts} worker restart(s)' if restarts else ''}")
    print(summary, file=sys.stderr if args.json else out)
    if args.write_record is not None:
        if not info.get("torch_version"):
            print("torch2ms verify: no example ran; the record is left as it is", file=sys.stderr)
        else:
            _write(args, info, verdicts, full=bool(args.all), out=sys.stderr if args.json else out)
    return EXIT_OK if counts["failed"] == 0 and counts["error"] == 0 else EXIT_FAILED


def main_safe(args: argparse.Namespace) -> int:
    try:
        return run(args)
    except VerifyError as exc:
        print(f"torch2ms verify: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
