"""The long fuzz campaign: many inputs, each checked in a child process under a time bound.

    python -m fuzz.campaign --minutes 30 --out fuzz/failures
    python -m fuzz.campaign --only truncate,bytes --torch-files 40 --seed 7

Phases (all by default, round-robin until the time is up):

- truncate  every token-boundary truncation of the example files and of a sample
            of the installed torch's sources
- mutate    random text mutations (deletions, splices, name swaps, line endings,
            duplications) of the same files, scanned and (every few) fixed
- bytes     random byte flips through `scan_paths` (decoding, BOM, coding lines)
- generate  hypothesis programs (fuzz.strategies: torch-flavoured, and
            hypothesmith's grammar-based ones with torch names swapped in)
- extremes  deep nesting of every kind, very long lines, huge files
- fix       `fix_source` on valid generated programs and mutants: output parses,
            a second run changes nothing

It prints progress, then the inputs tried and the failures found per phase. Each
failing input is saved under --out as `<phase>-<n>.py` (or `.bin`) with a
`.txt` beside it naming the problems, so it can be replayed:

    python -m fuzz.campaign --replay fuzz/failures/mutate-3.py
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fuzz import mutate
from fuzz.runner import Runner

Job = tuple[str, str, Any, dict[str, Any]]  # (phase, check kind, payload, options)


def _truncate(rng: random.Random, torch_files: int) -> Iterator[Job]:
    files = mutate.example_files() + mutate.torch_files(torch_files, rng)
    for path in files:
        text = mutate.read_text(path)
        for cut in mutate.truncations(text):
            yield "truncate", "scan", cut, {"lsp": rng.random() < 0.1}


def _texts(rng: random.Random, torch_files: int) -> list[str]:
    texts = [mutate.read_text(p) for p in mutate.example_files()]
    texts += [mutate.read_text(p) for p in mutate.torch_files(torch_files, rng)]
    return [t for t in texts if t.strip()]


def _mutate(rng: random.Random, torch_files: int) -> Iterator[Job]:
    texts = _texts(rng, torch_files)
    while True:
        text = rng.choice(texts)
        for _ in range(rng.randint(1, 3)):
            text = mutate.mutate_text(text, rng)
        yield "mutate", "scan", text, {"lsp": True, "repeat": rng.random() < 0.2}
        if rng.random() < 0.15:
            yield "fix", "fix", text, {"unsafe": rng.random() < 0.5}


def _bytes(rng: random.Random, torch_files: int) -> Iterator[Job]:
    seeds = [p.read_bytes() for p in mutate.example_files()]
    seeds += [p.read_bytes() for p in mutate.torch_files(min(torch_files, 10), rng)]
    prefixes = (b"", b"\xef\xbb\xbf", b"# -*- coding: latin-1 -*-\n", b"# coding: utf-16\n", b"#!/usr/bin/env python\n")
    while True:
        data = rng.choice(prefixes) + mutate.flip_bytes(rng.choice(seeds), rng, rng.randint(1, 12))
        yield "bytes", "bytes", data, {}


def _generate(rng: random.Random, torch_files: int) -> Iterator[Job]:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from fuzz import strategies

    batch: list[str] = []
    strategy = st.one_of(strategies.torch_programs(), strategies.hypothesmith_programs())

    @settings(max_examples=50, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(text: str) -> None:
        batch.append(text)

    while True:
        batch.clear()
        collect()
        for text in batch:
            yield "generate", "scan", text, {"lsp": True}
            if rng.random() < 0.3:
                yield "fix", "fix", text, {"unsafe": rng.random() < 0.5}


def _extremes(rng: random.Random, torch_files: int) -> Iterator[Job]:
    seed_text = mutate.read_text(mutate.example_files()[-1])
    while True:
        kind = rng.choice(mutate.NESTING_KINDS)
        depth = rng.choice((10, 100, 500, 2000, 5000)) if kind not in ("blocks", "defs", "classes") \
            else rng.choice((10, 50, 99, 100, 101, 300))
        yield "extremes", "scan", mutate.deep_nesting(kind, depth), {}
        yield "extremes", "scan", mutate.long_line(rng.choice((100, 1000, 5000))), {}
        yield "extremes", "scan", mutate.long_string_line(rng.choice((10_000, 1_000_000))), {}
        if rng.random() < 0.2:
            lines = rng.choice((10_000, 50_000))  # three scans of it in the check: a bound per 10,000 lines
            yield "extremes", "bytes", mutate.huge_file(seed_text, lines).encode(), {"timeout": 60.0 * lines / 10_000}


PHASES = {"truncate": _truncate, "mutate": _mutate, "bytes": _bytes, "generate": _generate, "extremes": _extremes}


def _save(out: Path, phase: str, number: int, payload: Any, problems: list[str]) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    if isinstance(payload, bytes):
        path = out / f"{phase}-{number}.bin"
        path.write_bytes(payload)
    else:
        path = out / f"{phase}-{number}.py"
        path.write_bytes(payload.encode("utf-8", "surrogatepass"))
    (out / f"{path.name}.txt").write_text("\n".join(problems) + "\n", encoding="utf-8")
    return path


def replay(paths: list[str], timeout: float) -> int:
    failed = 0
    with Runner(timeout=timeout) as runner:
        for name in paths:
            path = Path(name)
            data = path.read_bytes()
            if path.suffix == ".bin":
                outcome = runner.check("bytes", data)
            else:
                text = data.decode("utf-8", "surrogatepass")
                outcome = runner.check("fix" if path.name.startswith("fix-") else "scan", text)
            status = "FAIL" if outcome.problems else "ok"
            failed += bool(outcome.problems)
            print(f"{status} {path} ({outcome.seconds:.2f} s)")
            for problem in outcome.problems:
                print(f"    {problem}")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz.campaign", description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="how long to run (default 10)")
    parser.add_argument("--max-inputs", type=int, default=0, help="stop after this many inputs (0: no limit)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default=",".join(PHASES), help=f"comma-separated phases of: {', '.join(PHASES)}")
    parser.add_argument("--torch-files", type=int, default=20, help="installed torch files to sample (default 20)")
    parser.add_argument("--timeout", type=float, default=20.0, help="CPU seconds per input before it counts as a hang")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "failures"),
                        help="folder for failing inputs (default fuzz/failures)")
    parser.add_argument("--replay", nargs="+", metavar="FILE", help="re-check saved inputs and exit")
    args = parser.parse_args(argv)
    if args.replay:
        return replay(args.replay, args.timeout)
    phases = [p.strip() for p in args.only.split(",") if p.strip()]
    unknown = [p for p in phases if p not in PHASES]
    if unknown:
        parser.error(f"unknown phase(s): {', '.join(unknown)}")
    rng = random.Random(args.seed)
    sources = {p: PHASES[p](random.Random(rng.random()), args.torch_files) for p in phases}
    tried: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    hangs = deaths = 0
    slowest: tuple[float, str] = (0.0, "")
    out = Path(args.out)
    deadline = time.monotonic() + args.minutes * 60
    last_print = time.monotonic()
    total = 0
    with Runner(timeout=args.timeout) as runner:
        while sources and time.monotonic() < deadline and (not args.max_inputs or total < args.max_inputs):
            for phase in list(sources):
                try:
                    label, kind, payload, options = next(sources[phase])
                except StopIteration:
                    del sources[phase]
                    continue
                outcome = runner.check(kind, payload, **options)
                tried[label] += 1
                total += 1
                if outcome.seconds > slowest[0]:
                    slowest = (outcome.seconds, f"{label} input of {len(payload)} chars/bytes")
                if outcome.problems:
                    failed[label] += 1
                    hangs += outcome.hung
                    deaths += outcome.died
                    saved = _save(out, label, failed[label], payload, outcome.problems)
                    print(f"FAIL {label}: {outcome.problems[0][:300]} -> {saved}", flush=True)
                if time.monotonic() - last_print > 30:
                    last_print = time.monotonic()
                    print(f"... {total} inputs, {sum(failed.values())} failures", flush=True)
    print(f"inputs tried: {total} in {args.minutes:g} min budget (seed {args.seed})")
    for label in sorted(tried):
        print(f"  {label:<9} {tried[label]:7d} tried  {failed[label]:5d} failed")
    print(f"failures found: {sum(failed.values())} (hangs: {hangs}, crashed checkers: {deaths}); "
          f"worker processes started: {runner.started}")
    print(f"slowest input: {slowest[0]:.2f} s ({slowest[1]})")
    if failed:
        print(f"failing inputs saved under {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
