"""Recall and precision of the scanner against what real models run, and the share of API uses mapped.

    pip install '.[bench]'          # transformers and diffusers (no torchvision needed)
    python benchmarks/recall.py [--jobs N] [--keep DIR]

1. `torch2ms trace` runs benchmarks/recall_models.py: nine models of transformers and diffusers, built
   from small configs with random weights (HF_HUB_OFFLINE=1, nothing is downloaded), one training step
   and one evaluation each. Every torch call the libraries' code made is recorded with its position.
2. `torch2ms` scans both libraries' whole source (one scan, so imports across files resolve).
3. Exact recall per kind: of the call sites that ran (torch functions, torch.nn.functional, Tensor
   methods, layer constructions), the share with a finding naming exactly that API at that call
   (TMS105, the low-confidence guess, not counted). Precision: a random sample (seed 0) of 100
   findings on lines that ran, of APIs the tracer can observe, checked against the trace.
4. The share of API uses mapped: findings of the whole source that are not TMS104 (unmapped).
"""

from __future__ import annotations

import argparse
import collections
import inspect
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from torch2ms.api import scan_paths  # noqa: E402
from torch2ms.config import Config  # noqa: E402
from torch2ms.model import Diagnostic, FileResult  # noqa: E402
from torch2ms.trace import TracedCall, load, matches  # noqa: E402

KINDS = [("function", "torch functions"), ("functional", "torch.nn.functional"), ("method", "Tensor methods"),
         ("layer", "layer constructions")]
OTHER_KINDS = [("class", "other torch classes (Parameter, optimizers)"),
               ("object_method", "nn.Module / Optimizer methods")]


def library_dirs() -> list[str]:
    try:
        import diffusers
        import transformers
    except ImportError as exc:
        raise SystemExit(f"recall.py needs the bench extra (pip install '.[bench]'): {exc}") from None
    return [os.path.dirname(os.path.abspath(m.__file__ or "")) for m in (transformers, diffusers)]


def run_trace(work: Path, libraries: list[str]) -> tuple[list[TracedCall], dict[str, set[int]], float]:
    trace_file, lines_file = work / "trace.json", work / "lines.json"
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    command = [sys.executable, "-m", "torch2ms", "trace", "-o", str(trace_file)]
    for library in libraries:
        command += ["--include", library]
    command += ["--", "python", str(ROOT / "benchmarks" / "recall_models.py"), str(lines_file)]
    start = time.perf_counter()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    executed = {os.path.realpath(p): set(v) for p, v in json.loads(lines_file.read_text()).items()}
    return list(load(str(trace_file)).calls), executed, elapsed


def observable(api: str) -> bool:
    """Whether the tracer can see a call of `api`: a function torch dispatches to torch-function modes,
    a Tensor method, a hooked class construction or nn.Module / Optimizer method."""
    import torch
    from torch.overrides import get_ignored_functions, get_overridable_functions

    from torch2ms.tracer import _Hooks

    owner, _, name = api.rpartition(".")
    if owner == "torch.nn.Module":
        return name in _Hooks.MODULE_METHODS
    if owner == "torch.optim.Optimizer":
        return name in _Hooks.OPTIMIZER_METHODS
    if owner == "torch.Tensor":
        return inspect.getattr_static(torch.Tensor, name, None) is not None \
            and getattr(torch.Tensor, name, None) not in get_ignored_functions()
    obj: Any = torch
    for part in api.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return False
    if isinstance(obj, type):
        return issubclass(obj, (torch.nn.Module, torch.optim.Optimizer, torch.nn.Parameter))
    overridable = {f for funcs in get_overridable_functions().values() for f in funcs}
    return obj in overridable


def is_call(diag: Diagnostic, lines: list[str]) -> bool:
    """A finding on a call expression (the tracer records calls; `isinstance(m, nn.Linear)` runs nothing)."""
    line = lines[diag.span.end_line - 1] if diag.span.end_line <= len(lines) else ""
    return diag.span.end_col > 0 and line[diag.span.end_col - 1:diag.span.end_col] == ")"


def found(diags: list[Diagnostic], call: TracedCall, exact: bool) -> bool:
    for diag in diags:
        if diag.torch_api in call.names and matches(diag.span, call) and (not exact or diag.code != "TMS105"):
            return True
    return False


def recall(results: dict[str, FileResult], calls: list[TracedCall]) -> None:
    print("\nrecall: call sites that ran, with a finding naming exactly that API at that call")
    print(f"  {'kind':44} {'sites':>6} {'exact':>7} {'+TMS105':>8} {'any on line':>12}")
    totals = [0, 0, 0, 0]
    misses: collections.Counter[str] = collections.Counter()
    for group, is_main in ((KINDS, True), (OTHER_KINDS, False)):
        for kind, label in group:
            sites = [c for c in calls if c.kind == kind]
            exact = loose = line = 0
            for call in sites:
                result = results.get(os.path.realpath(call.file))
                diags = list(result.diagnostics) if result else []
                if found(diags, call, True):
                    exact += 1
                elif is_main:
                    misses[call.api] += 1
                loose += found(diags, call, False)
                line += any(d.span.start_line <= call.line <= d.span.end_line and d.torch_api for d in diags)
            if is_main:
                for i, v in enumerate((len(sites), exact, loose, line)):
                    totals[i] += v
            print(f"  {label:44} {len(sites):6d} {_pct(exact, len(sites)):>7} {_pct(loose, len(sites)):>8} "
                  f"{_pct(line, len(sites)):>12}")
        if is_main:
            print(f"  {'total (the four kinds above)':44} {totals[0]:6d} {_pct(totals[1], totals[0]):>7} "
                  f"{_pct(totals[2], totals[0]):>8} {_pct(totals[3], totals[0]):>12}")
    if misses:
        print("  most missed APIs: " + ", ".join(f"{api} {n}" for api, n in misses.most_common(12)))


def precision(results: dict[str, FileResult], calls: list[TracedCall], executed: dict[str, set[int]]) -> None:
    by_file: dict[str, list[TracedCall]] = collections.defaultdict(list)
    for call in calls:
        by_file[os.path.realpath(call.file)].append(call)
    candidates = []
    for path, result in results.items():
        ran = executed.get(path)
        if not ran:
            continue
        lines = Path(path).read_text(encoding="utf-8").splitlines()
        for diag in result.diagnostics:
            api = diag.torch_api
            if not api or diag.code == "TMS105" or not diag.code.startswith(("TMS1", "TMS2")):
                continue
            if not any(line in ran for line in range(diag.span.start_line, diag.span.end_line + 1)):
                continue
            if observable(api) and is_call(diag, lines):
                candidates.append((path, diag))
    candidates.sort(key=lambda item: (item[0], item[1].sort_key(), item[1].torch_api or ""))
    sample = random.Random(0).sample(candidates, min(100, len(candidates)))
    wrong = [(p, d) for p, d in sample if not any(d.torch_api in c.names and matches(d.span, c) for c in by_file[p])]
    print(f"\nprecision: {len(sample) - len(wrong)}/{len(sample)} sampled findings (of {len(candidates)} calls on "
          f"lines that ran, of APIs the tracer observes) named a call the trace saw there")
    for path, diag in wrong:
        print(f"  not seen: {os.path.relpath(path)}:{diag.span.start_line} {diag.code} {diag.torch_api}")


def mapped_share(results: list[FileResult], listing: Path | None) -> None:
    uses = unmapped = 0
    apis: collections.Counter[str] = collections.Counter()
    for result in results:
        for diag in result.diagnostics:
            if not diag.torch_api or diag.code == "TMS105" or not diag.code.startswith(("TMS10", "TMS20", "TMS25")):
                continue
            uses += 1
            if diag.code == "TMS104":
                unmapped += 1
                apis[diag.torch_api] += 1
    print(f"\nAPI uses mapped over the libraries' whole source: {_pct(uses - unmapped, uses, 2)} "
          f"({uses - unmapped:,} of {uses:,}; {unmapped:,} TMS104 of {len(apis)} APIs)")
    if apis:
        print("  most frequent unmapped: " + ", ".join(f"{api} {n}" for api, n in apis.most_common(15)))
    if listing is not None:
        listing.write_text("".join(f"{n}\t{api}\n" for api, n in apis.most_common()), encoding="utf-8")


def _pct(part: int, whole: int, digits: int = 1) -> str:
    return f"{100.0 * part / whole:.{digits}f}%" if whole else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="keep the trace and the executed lines in this folder")
    parser.add_argument("--reuse", action="store_true", help="with --keep: use the trace already there")
    parser.add_argument("--unmapped", type=Path, help="write every unmapped API with its count to this file")
    parser.add_argument("--quick", action="store_true",
                        help="scan only the traced files and their packages' __init__.py (no mapped share)")
    args = parser.parse_args()
    libraries = library_dirs()
    import diffusers
    import torch
    import transformers

    print(f"torch {torch.__version__}, transformers {transformers.__version__}, diffusers {diffusers.__version__}")
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        if args.reuse and args.keep and (work / "trace.json").exists():
            calls = list(load(str(work / "trace.json")).calls)
            executed = {os.path.realpath(p): set(v) for p, v in
                        json.loads((work / "lines.json").read_text()).items()}
            traced_s = 0.0
        else:
            calls, executed, traced_s = run_trace(work, libraries)
    files = {os.path.realpath(c.file) for c in calls}
    print(f"trace: {len(calls)} call sites in {len(files)} files ({traced_s:.0f} s)")
    start = time.perf_counter()
    targets = libraries
    if args.quick:
        inits = set()
        for path in files:
            folder = os.path.dirname(path)
            while os.path.exists(os.path.join(folder, "__init__.py")):
                inits.add(os.path.join(folder, "__init__.py"))
                folder = os.path.dirname(folder)
        targets = sorted(files | inits)
    scanned = scan_paths(targets, Config(), jobs=args.jobs)
    lines = sum(r.lines for r in scanned)
    print(f"scan: {len(scanned)} files, {lines:,} lines in {time.perf_counter() - start:.0f} s")
    results = {os.path.realpath(r.path): r for r in scanned}
    traced = [c for c in calls if os.path.realpath(c.file) in results]
    recall(results, traced)
    precision({p: r for p, r in results.items() if p in files}, traced, executed)
    if not args.quick:
        mapped_share(scanned, args.unmapped)


if __name__ == "__main__":
    main()
