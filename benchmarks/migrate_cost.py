"""The cost of `torch2ms migrate` on one file as the file grows (prints figures; linear is the goal).

    python benchmarks/migrate_cost.py [--sizes 50,100,200,400,1000]

Each size is a generated PyTorch file of that many KB (residual blocks: layers built in
__init__, functional calls and tensor methods in forward, helper functions), migrated by
`migrate_text` in a fresh process set up as `torch2ms migrate` sets itself up. Prints, per size, the CPU seconds, the seconds per 100 KB and
the peak memory; then the ratio of the largest size's seconds per 100 KB to the smallest's
(1.0 is linear).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
BLOCK = '''

class Block{n}(nn.Module):
    """A residual block."""

    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(channels)
        self.fc = nn.Linear(channels, channels)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        z = torch.cat([x, y], dim=1).sum(dim=1, keepdim=True)
        w = torch.sigmoid(z) * torch.tanh(y) + x.mean(dim=(2, 3), keepdim=True)
        return F.relu(w + x.view(x.size(0), -1).reshape(x.shape))


def helper{n}(x, k=2):
    t = torch.zeros(x.shape[0], k)
    return torch.softmax(x.flatten(1), dim=-1), t.abs()
'''

MEASURE = """
import json, resource, sys, time
from torch2ms.mappings import load_table
from torch2ms.migrate.pipeline import Options, migrate_text
from torch2ms.process import freeze_long_lived
table = load_table()
freeze_long_lived()  # as `torch2ms migrate` does
text = open(sys.argv[1], encoding="utf-8").read()
start = time.process_time()
migration = migrate_text(text, sys.argv[1], Options(), None, table)
seconds = time.process_time() - start
print(json.dumps({"seconds": seconds, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "findings": migration.findings, "rewritten": migration.rewritten}))
"""


def generate(kb: int) -> str:
    parts, size, n = [HEAD], len(HEAD), 0
    while size < kb * 1024:
        block = BLOCK.format(n=n)
        parts.append(block)
        size += len(block)
        n += 1
    return "".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50,100,200,400,1000", help="file sizes in KB, comma-separated")
    parser.add_argument("--work", type=Path, default=Path("/tmp") / "torch2ms-migrate-cost",
                        help="folder for the generated files")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    rows = []
    print(f"{'size':>8} {'CPU s':>8} {'s/100KB':>8} {'peak MB':>8} {'findings':>9}")
    for kb in (int(s) for s in args.sizes.split(",")):
        path = args.work / f"model_{kb}kb.py"
        path.write_text(generate(kb), encoding="utf-8")
        size_kb = path.stat().st_size / 1024
        done = subprocess.run([sys.executable, "-c", MEASURE, str(path)], capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, check=True)
        row = json.loads(done.stdout.strip().splitlines()[-1])
        per = row["seconds"] / size_kb * 100
        rows.append(per)
        print(f"{size_kb:7.0f}K {row['seconds']:8.1f} {per:8.2f} {row['peak_mb']:8.0f} {row['findings']:9,}",
              flush=True)
    if len(rows) > 1:
        print(f"seconds per 100 KB, largest / smallest: {rows[-1] / rows[0]:.2f} (1.00 is linear)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
