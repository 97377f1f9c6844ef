"""Print what `torch2ms migrate` of a whole installed package costs: timm (PyTorch Image Models), ~300 files.

Usage: python benchmarks/timm_migrate.py [--jobs 2] [--timm DIR] [--out DIR] [--port DIR]

Needs timm's sources (`pip install --no-deps timm==1.0.31`); they are read, never imported. Runs the real
command line, `python -m torch2ms migrate TIMM --out OUT/timm --jobs N`, in a child process and prints:
the wall-clock seconds (goal: 60 with --jobs 2), the CPU seconds of the command and its workers, the peak
memory of the largest process, the command's summary line and whether its counts add up (files migrated +
errors = Python files found), and the exit code. `--out` keeps the port (for benchmarks/timm_zoo.py).

Then, of the port: per folder of timm/, the files that import torch or torchvision outside any function (the
package cannot be imported without torch while one of them is on its import path), and whether `import timm` and
`timm.create_model('resnet18', pretrained=False, num_classes=10)` (with one forward pass) work in a child process
where importing torch or torchvision fails, with the first error where not. `--port DIR` checks a port already
written (DIR/timm) and migrates nothing.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timm_noise import timm_folder  # the same folder benchmarks/timm_noise.py scans
from timm_zoo import torch_at_import  # the same count benchmarks/timm_zoo.py prints

HERE = Path(__file__).resolve().parent.parent
SUMMARY = re.compile(r"torch2ms migrate: (\d+) of (\d+) Python file\(s\) migrated.*; (\d+) error\(s\)")


IMPORT_CHECK = """
import importlib.abc, sys
class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname.partition(".")[0] in ("torch", "torchvision"):
            raise ModuleNotFoundError(f"No module named {fullname!r} (refused: the port runs without torch)")
sys.meta_path.insert(0, Refuse())
sys.path.insert(0, sys.argv[1])
import timm
print("import timm: passes", flush=True)
import mindspore, numpy
model = timm.create_model("resnet18", pretrained=False, num_classes=10)
model.set_train(False)
out = model(mindspore.Tensor(numpy.random.rand(1, 3, 64, 64).astype(numpy.float32)))
print(f"create_model('resnet18', num_classes=10): builds, output shape {tuple(out.shape)}", flush=True)
"""


def check_port(port: Path) -> None:
    """Print the files of each folder of the port's timm/ that import torch at module level, and how far
    `import timm` and resnet18 get without torch."""
    folders = sorted(p.name for p in (port / "timm").iterdir() if p.is_dir() and p.name != "__pycache__")
    total = 0
    for folder in ["", *folders]:
        blocked, inside, files = torch_at_import(port, (folder,))
        total += len(blocked)
        if files:
            names = ", ".join(Path(b).name for b in blocked)
            print(f"timm/{folder}: {len(blocked)} of {files} files import torch or torchvision outside functions "
                  f"({inside} more inside functions only){': ' + names if blocked else ''}")
    print(f"files importing torch or torchvision at module level: {total}")
    done = subprocess.run([sys.executable, "-c", IMPORT_CHECK, str(port)], capture_output=True, text=True,
                          timeout=900, env=dict(os.environ, GLOG_v="3"))
    passed = [line for line in done.stdout.splitlines() if line.startswith(("import timm", "create_model"))]
    print("\n".join(passed) if passed else "import timm: fails")
    if done.returncode != 0:
        trace = [line for line in done.stderr.splitlines() if line.startswith("  File ") or "Error" in line]
        print("first failure: " + " | ".join(line.strip() for line in trace[-3:]))


def python_files(folder: Path) -> int:
    return sum(1 for path in folder.rglob("*.py") if "__pycache__" not in path.parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timm", help="timm's package folder (default: the installed one)")
    parser.add_argument("--out", type=Path, help="where the port goes (OUT/timm); default: a temporary folder")
    parser.add_argument("--port", type=Path, help="check the port already in PORT/timm; migrate nothing")
    args = parser.parse_args()
    if args.port is not None:
        if not (args.port / "timm" / "__init__.py").is_file():
            sys.exit(f"{args.port}: no migrated timm/ in it")
        check_port(args.port)
        return 0
    source = timm_folder(args.timm)
    work = args.out or Path(tempfile.mkdtemp(prefix="torch2ms-timm-migrate-"))
    target = work / "timm"
    if target.exists():
        shutil.rmtree(target)
    env = dict(os.environ, PYTHONPATH=str(HERE / "src"))
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "torch2ms", "migrate", str(source), "--out", str(target),
                           "--jobs", str(args.jobs), "-q"], env=env, capture_output=True, text=True, timeout=7200)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    found = python_files(source)
    lines = [line for line in done.stdout.splitlines() + done.stderr.splitlines() if line.startswith("torch2ms migrate:")]
    summary = next((line for line in lines if SUMMARY.match(line)), None)
    print(f"timm: {found} Python files, {sum(p.stat().st_size for p in source.rglob('*.py')) / 1e6:.1f} MB")
    print(f"migrate --jobs {args.jobs}: {wall:.1f} s wall (goal 60), {cpu:.1f} s CPU, "
          f"peak memory of one process {after.ru_maxrss / 1024:.0f} MB, exit code {done.returncode}")
    print(f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end "
          f"({os.cpu_count()} cores; a busy machine stretches the clock, not the CPU time)")
    if summary is None:
        print("no summary line; the command's last lines:")
        print("\n".join((done.stdout + done.stderr).splitlines()[-10:]))
        return 1
    print(summary)
    match = SUMMARY.match(summary)
    assert match is not None
    migrated, total, errors = (int(g) for g in match.groups())
    print(f"summary adds up: {total == found and migrated + errors >= total} "
          f"({migrated} migrated + {errors} error(s), {total} of {found} files counted)")
    for line in lines:
        if line is not summary:
            print(line)
    check_port(work)
    if args.out is None:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"the port: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
