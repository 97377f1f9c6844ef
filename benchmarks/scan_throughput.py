"""Scan throughput on a real corpus: torch's own installed Python sources.

Prints, measured in one run over the same files:
  - ast.parse and libcst.parse_module throughput (the floor and the yardstick),
  - torch2ms cold scan, one process and --jobs N (the CLI, end to end),
  - torch2ms warm scan (unchanged files, results cache) and a one-file change,
  - peak RSS of each CLI run,
  - start-up: the median of a cold `torch2ms scan` of one empty file (interpreter, imports and the
    mapping table; the compiled table is in the cache, and the modules' bytecode is written as an
    installed package's is: the CLI runs without PYTHONDONTWRITEBYTECODE),
and the ratios torch2ms / libcst parse and torch2ms / ast parse, in time on the clock and in CPU time
(the CPU time of the CLI process against that of the parse: a busy machine stretches the first).

Usage: python benchmarks/scan_throughput.py [--corpus DIR] [--limit N] [--jobs N] [--no-libcst]
(needs torch installed for the default corpus, and libcst for the yardstick).
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path


def corpus_files(root: Path, limit: int | None) -> list[Path]:
    files = sorted(p for p in root.rglob("*.py") if p.is_file())
    return files[:limit] if limit else files


def read_all(files: list[Path]) -> list[str]:
    texts = []
    for path in files:
        try:
            texts.append(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, OSError):
            texts.append("")
    return texts


def rate(lines: int, seconds: float) -> str:
    return f"{lines / seconds:>10,.0f} lines/s  ({seconds:6.2f} s)"


def time_parse(texts: list[str], parse) -> tuple[float, float]:
    """Wall and CPU seconds to parse every text."""
    start, cpu = time.perf_counter(), time.process_time()
    for text in texts:
        try:
            parse(text)
        except Exception:
            pass
    return time.perf_counter() - start, time.process_time() - cpu


# Runs the CLI and, at exit, writes the process's own peak RSS (VmHWM, which starts afresh
# at exec) to a file: ru_maxrss of a child would include this benchmark's memory from
# before the exec (Linux keeps the old high-water mark across exec).
_LAUNCHER = """
import atexit, os, runpy, sys
def _peak():
    with open('/proc/self/status') as status, open(os.environ['TORCH2MS_BENCH_RSS'], 'w') as out:
        out.write(next(l.split()[1] for l in status if l.startswith('VmHWM')))
atexit.register(_peak)
sys.argv = ['torch2ms'] + sys.argv[1:]
runpy.run_module('torch2ms', run_name='__main__')
"""


def cli_env(**more: str) -> dict[str, str]:
    """The environment of the CLI runs: as a user's, whose installed package has its bytecode compiled (a
    PYTHONDONTWRITEBYTECODE of this shell would make every start compile every module again)."""
    env = dict(os.environ, **more)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def children_cpu() -> float:
    times = os.times()
    return times.children_user + times.children_system


def run_cli(args: list[str], work: Path) -> tuple[float, int, float]:
    """Wall time, peak RSS (MB) and CPU time of one CLI run (the main process; workers are counted in
    the CPU time only)."""
    rss_file = work / "rss.txt"
    env = cli_env(TORCH2MS_BENCH_RSS=str(rss_file))
    start, cpu = time.perf_counter(), children_cpu()
    proc = subprocess.run([sys.executable, "-c", _LAUNCHER, *args], cwd=work, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"torch2ms {' '.join(args)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed, int(rss_file.read_text()) // 1024, children_cpu() - cpu


def start_up(work: Path, runs: int = 7) -> tuple[float, float]:
    """Median wall and CPU time of `torch2ms scan` of one empty file, the way a user starts it."""
    empty = work / "empty.py"
    empty.write_text("", encoding="utf-8")
    walls, cpus = [], []
    for _ in range(runs):
        start, cpu = time.perf_counter(), children_cpu()
        subprocess.run([sys.executable, "-m", "torch2ms", "scan", str(empty), "--isolated", "--no-cache"],
                       cwd=work, env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        walls.append(time.perf_counter() - start)
        cpus.append(children_cpu() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, help="folder of Python files (default: installed torch)")
    parser.add_argument("--limit", type=int, help="only the first N files")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--no-libcst", action="store_true",
                        help="leave out the libcst yardstick (minutes on a busy machine; the targets are against ast)")
    args = parser.parse_args()
    if args.corpus is None:
        import torch

        args.corpus = Path(torch.__file__).parent
    files = corpus_files(args.corpus, args.limit)
    texts = read_all(files)
    lines = sum(t.count("\n") for t in texts)
    print(f"corpus: {len(files)} files, {lines:,} lines ({args.corpus.name}), {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f} at the start")

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        corpus = work / "corpus"
        # A private copy, so that the one-file-change step can edit a file.
        for path in files:
            target = corpus / path.relative_to(args.corpus)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        cache = work / "cache"
        base = ["scan", str(corpus), "--isolated", "--exit-zero", "--no-progress"]

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast_time, ast_cpu = time_parse(texts, ast.parse)
        print(f"ast.parse                    {rate(lines, ast_time)}")
        cst_time: float | None = None
        try:
            if args.no_libcst:
                print("libcst.parse_module          (left out: --no-libcst)")
            else:
                import libcst

                cst_time, _ = time_parse(texts, libcst.parse_module)
                print(f"libcst.parse_module          {rate(lines, cst_time)}")
        except ImportError:
            print("libcst.parse_module          (libcst not installed)")

        # compiles the table (and, where the package's bytecode is not written yet, its modules)
        run_cli(["scan", str(files[0]), "--isolated", "--exit-zero", "--no-cache"], work)
        started, started_cpu = start_up(work)
        print(f"torch2ms start-up            {started:6.3f} s, {started_cpu:.3f} s CPU (median of 7 scans of an empty file)")
        one, one_rss, one_cpu = run_cli(base + ["--jobs", "1", "--no-cache"], work)
        print(f"torch2ms cold, 1 process     {rate(lines, one)}  peak RSS {one_rss} MB")
        many, many_rss, _ = run_cli(base + ["--jobs", str(args.jobs), "--no-cache"], work)
        print(f"torch2ms cold, --jobs {args.jobs:<2}     {rate(lines, many)}  peak RSS {many_rss} MB (parent)")
        fill, _, _ = run_cli(base + ["--jobs", str(args.jobs), "--cache-dir", str(cache)], work)
        warm, warm_rss, _ = run_cli(base + ["--cache-dir", str(cache)], work)
        print(f"torch2ms warm (cache)        {warm:6.2f} s for the whole corpus  peak RSS {warm_rss} MB")
        print(f"  (the warm run still prints every finding: {fill:.2f} s to fill the cache with --jobs {args.jobs})")
        victim = next(p for p in sorted(corpus.rglob("*.py")) if p.stat().st_size > 1000)
        victim.write_text(victim.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
        changed, _, _ = run_cli(base + ["--cache-dir", str(cache)], work)
        print(f"torch2ms one file changed    {changed:6.2f} s")

        print()
        if cst_time:
            print(f"ratio torch2ms 1 process / libcst parse: {cst_time / one:.2f}  (target >= 0.45)")
        print(f"ratio torch2ms 1 process / ast parse:    {ast_time / one:.2f} on the clock, "
              f"{ast_cpu / one_cpu:.2f} in CPU time  (target >= 0.8)")
        print(f"start-up:                                {started:.3f} s on the clock, {started_cpu:.3f} s in CPU time  "
              f"(target < 0.25 s)")
        print(f"speed-up with --jobs {args.jobs}: {one / many:.2f}x")
        print(f"load average {os.getloadavg()[0]:.1f} at the end (a busy machine stretches the clock)")


if __name__ == "__main__":
    main()
