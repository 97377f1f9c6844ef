"""Print, per training program, whether it trains as `torch2ms migrate` leaves it, and how closely.

Usage: python benchmarks/train_ports.py [--steps N]

For each program of benchmarks/train_programs (an image classifier with a Dataset, DataLoader,
Adadelta and StepLR; a language model with a hand-batched stream, SGD with Nesterov momentum,
clipping and ExponentialLR; a tiny GPT with AdamW parameter groups chosen by name, warm-up LambdaLR
and clipping; a regression with a TensorDataset and gradient accumulation) runs `torch2ms
verify-train PROGRAM --steps N --json` as a user would (the original migrated in memory exactly as
`torch2ms migrate` writes it, CPU; in PyNative, then in GRAPH mode for the ports that train) and prints: whether the port trained for N steps, the
largest loss difference over those steps, torch's own drift (one thread against two), the first
step and value that diverge, or why the port did not run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "benchmarks" / "train_programs"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    options = parser.parse_args()
    trained = 0
    programs = sorted(PROGRAMS.glob("*.py"))
    print(f"{'program':<16} {'mode':<9} {'trains':<7} {'max loss diff':<14} {'torch drift':<12} {'seconds':<8} note")
    for program in programs:
        for mode in ("pynative", "graph"):  # GRAPH only for the programs that train in PyNative
            ok = _report(program, mode, options.steps)
            trained += ok and mode == "pynative"
            if not ok:
                break
    print(f"{trained} of {len(programs)} train as migrate leaves them ({options.steps} steps compared)")
    return 0


def _report(program: Path, mode: str, steps: int) -> bool:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "torch2ms", "verify-train", str(program), "--steps", str(steps),
                           "--mode", mode, "--json"], capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - start
    head = f"{program.stem:<16} {mode:<9}"
    try:
        result = json.loads(proc.stdout)
    except json.JSONDecodeError:
        print(f"{head} {'no':<7} {'-':<14} {'-':<12} {seconds:<8.1f} exit {proc.returncode}: "
              f"{proc.stderr.strip()[-200:]}")
        return False
    if result["status"] == "error":
        run = result["run"]
        print(f"{head} {'no':<7} {'-':<14} {'-':<12} {seconds:<8.1f} {result['side']} side: "
              f"{run.get('error', run.get('status'))}: {str(run.get('message', ''))[:150]}")
        return False
    first = result["first_divergence"]
    note = "agrees" if first is None else f"diverges at step {first['step']}: {first['value']}"
    print(f"{head} {'yes':<7} {result['max_loss_difference']:<14.3g} "
          f"{result['drift']['loss']:<12.3g} {seconds:<8.1f} {result['steps']} steps, {note}")
    return True


if __name__ == "__main__":
    sys.exit(main())
