"""Print, per training program, whether it trains as `torch2ms migrate` leaves it, and how closely.

Usage: python benchmarks/train_ports.py [--steps N]

For each program of benchmarks/train_programs (an image classifier with a Dataset, DataLoader,
Adadelta and StepLR; a language model with a hand-batched stream, SGD with Nesterov momentum,
clipping and ExponentialLR; a tiny GPT with AdamW parameter groups chosen by name, warm-up LambdaLR
and clipping; a regression with a TensorDataset and gradient accumulation; a tagger whose DataLoader
pads batches with a collate function, with MultiStepLR and a masked loss) runs `torch2ms
verify-train PROGRAM --steps N --json` as a user would (the original migrated in memory exactly as
`torch2ms migrate` writes it, CPU; in PyNative, then in GRAPH mode for the ports that train) and prints: whether the port trained for N steps, the
largest loss difference over those steps, torch's own drift (one thread against two), the first
step and value that diverge, or why the port did not run; then how many train and how many agree. Then, for the ports that do not run, the
same check after the few hand edits listed in HAND_EDITS (the blockers outside the training rewrite),
to show what the training rewrite itself gives.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from torch2ms.migrate.pipeline import migrate_text

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "benchmarks" / "train_programs"
# program -> (text of the migrated file, replacement): what a user still edits by hand, and why
HAND_EDITS: dict[str, list[tuple[str, str]]] = {}  # none left: every program trains as migrate leaves it


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    options = parser.parse_args()
    trained = agreed = 0
    programs = sorted(PROGRAMS.glob("*.py"))
    print(f"{'program':<16} {'mode':<9} {'trains':<7} {'max loss diff':<14} {'torch drift':<12} {'seconds':<8} note")
    failed = []
    for program in programs:
        for mode in ("pynative", "graph"):  # GRAPH only for the programs that train in PyNative
            ok, agrees = _report(program, mode, options.steps)
            trained += ok and mode == "pynative"
            agreed += agrees and mode == "pynative"
            if not ok:
                failed += [program] if mode == "pynative" else []
                break
    print(f"{trained} of {len(programs)} train as migrate leaves them ({options.steps} steps compared), {agreed} "
          f"within the tolerance of every loss, learning rate and parameter in PyNative")
    edited = [p for p in failed if p.stem in HAND_EDITS]
    if edited:
        print("after the hand edits of HAND_EDITS:")
    with tempfile.TemporaryDirectory() as folder:
        for program in edited:
            text = migrate_text(program.read_text(encoding="utf-8"), str(program)).text
            for old, new in HAND_EDITS[program.stem]:
                assert old in text, (program.stem, old)
                text = text.replace(old, new)
            ported = Path(folder) / program.name
            ported.write_text(text, encoding="utf-8")
            _report(program, "pynative", options.steps, ported, f"+{len(HAND_EDITS[program.stem])} edits")
    return 0


def _report(program: Path, mode: str, steps: int, ported: Path | None = None,
            label: str = "") -> tuple[bool, bool]:
    """Print one row; (whether the port trained, whether it agreed with torch within the tolerance)."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "torch2ms", "verify-train", str(program),
                           *([str(ported)] if ported else []), "--steps", str(steps), "--mode", mode, "--json"],
                          capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - start
    head = f"{program.stem:<16} {label or mode:<9}"
    try:
        result = json.loads(proc.stdout)
    except json.JSONDecodeError:
        print(f"{head} {'no':<7} {'-':<14} {'-':<12} {seconds:<8.1f} exit {proc.returncode}: "
              f"{proc.stderr.strip()[-200:]}")
        return False, False
    if result["status"] == "error":
        run = result["run"]
        print(f"{head} {'no':<7} {'-':<14} {'-':<12} {seconds:<8.1f} {result['side']} side: "
              f"{run.get('error', run.get('status'))}: {str(run.get('message', ''))[:150]}")
        return False, False
    first = result["first_divergence"]
    note = "agrees" if first is None else f"diverges at step {first['step']}: {first['value']}"
    print(f"{head} {'yes':<7} {result['max_loss_difference']:<14.3g} "
          f"{result['drift']['loss']:<12.3g} {seconds:<8.1f} {result['steps']} steps, {note}")
    return True, first is None


if __name__ == "__main__":
    sys.exit(main())
