"""Print what `torch2ms verify-model` finds and how long it takes on the test networks.

Usage: python benchmarks/verify_models.py [--train-step] [--runs N]

Runs `torch2ms verify-model` as a user would (the command line, in a fresh process each time) on
the three hand-written networks of tests/data/models and their ports: a residual network with
BatchNorm, a recurrent one (LSTM, GRU) and a transformer with tied embeddings. Prints, per
network: the exit code, the weights copied, the largest output difference in PyNative and in GRAPH
mode (and of the training step), and the wall time of the whole command (both worker processes'
imports included), then the time of the map alone (reading both files and the tables, no torch).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "data" / "models"
NETWORKS = [
    ("convnet (BatchNorm)", "convnet_torch.py:small_resnet(num_classes=10)", "convnet_ms.py:small_resnet(num_classes=10)",
     "2,3,32,32"),
    ("rnn (LSTM, GRU)", "rnn_torch.py:TextRNN", "rnn_ms.py:TextRNN", "4,20:int64:0:50"),
    ("transformer (tied)", "transformer_torch.py:TinyLM", "transformer_ms.py:TinyLM", "2,12:int64:0:40"),
]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--train-step", action="store_true")
    parser.add_argument("--runs", type=int, default=1)
    options = parser.parse_args()
    worst = 0
    for label, original, ported, shape in NETWORKS:
        for _ in range(max(1, options.runs)):
            argv = [sys.executable, "-m", "torch2ms", "verify-model", str(MODELS / original), str(MODELS / ported),
                    "--input", shape, "--json"] + (["--train-step"] if options.train_step else [])
            start = time.perf_counter()
            done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
            wall = time.perf_counter() - start
            worst = max(worst, done.returncode)
            try:
                result = json.loads(done.stdout)
            except json.JSONDecodeError:
                print(f"{label}: exit {done.returncode}: {done.stderr.strip()[-300:]}")
                continue
            diffs = []
            for mode, report in result.get("modes", {}).items():
                errors = [r.get("max_abs") or 0.0 for r in report.get("outputs", [])]
                text = f"{mode} {max(errors):.2g}" if errors else f"{mode} -"
                if report.get("train"):
                    text += f" (training step {report['train']['max_abs']:.2g})"
                diffs.append(text)
            weights = result.get("weights", {})
            print(f"{label}: exit {done.returncode}, {result['status']}; weights {weights.get('copied')} of "
                  f"{weights.get('torch_tensors')} copied; max abs difference {', '.join(diffs)}; {wall:.1f} s")
    from torch2ms.mappings import load_table
    from torch2ms.weights.facts import Facts
    from torch2ms.weights.mapping import build_map

    facts = Facts.from_entries(load_table().entries.values())
    start = time.perf_counter()
    for _, original, ported, _ in NETWORKS:
        build_map((MODELS / original.partition(":")[0]).read_text(encoding="utf-8"),
                  (MODELS / ported.partition(":")[0]).read_text(encoding="utf-8"), facts)
    print(f"maps of the three file pairs from their sources: {1000 * (time.perf_counter() - start):.1f} ms")
    return worst


if __name__ == "__main__":
    sys.exit(main())
