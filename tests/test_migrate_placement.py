"""Placement keywords passed on to every layer: ``factory = {'device': device, 'dtype': dtype}`` then
``nn.Linear(a, b, **factory)``, and ``dtype=None`` written out. MindSpore places the whole program on one
device and its older layers raise on ``dtype=None``, so `migrate` drops them where they reach a torch call;
the calls of the project's own classes keep them (their parameters take them)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from torch2ms.migrate.pipeline import migrate_text

SOURCE = textwrap.dedent("""\
    import torch
    from torch import nn


    class FeedForward(nn.Module):
        def __init__(self, width, hidden, device=None, dtype=None):
            super().__init__()
            factory = {"device": device, "dtype": dtype}
            self.up = nn.Linear(width, hidden, **factory)
            self.down = nn.Linear(hidden, width, bias=False, **factory)
            self.norm = nn.LayerNorm(width, eps=1e-6, dtype=None)
            self.gain = nn.Parameter(torch.ones(width, **factory))

        def forward(self, x):
            return self.norm(self.down(self.up(x).relu())) * self.gain


    class Stack(nn.Module):
        def __init__(self, width, depth=2, device=None, dtype=None):
            super().__init__()
            factory = dict(device=device, dtype=dtype)
            self.blocks = nn.ModuleList([FeedForward(width, 2 * width, **factory) for _ in range(depth)])
            self.head = nn.Conv1d(width, 3, 1, **factory)

        def forward(self, x):
            for block in self.blocks:
                x = x + block(x)
            return self.head(x.transpose(1, 2))
""")


def _port() -> str:
    return migrate_text(SOURCE, "stack.py").text


def test_placement_mappings_go_from_torch_calls_and_stay_on_the_projects_own() -> None:
    ported = _port()
    assert ported.count("**factory") == 1, ported  # of the layers' four torch calls none keeps it
    assert "FeedForward(width, 2 * width, **factory)" in ported  # its own parameters take them
    assert "Conv1d(width, 3, 1" in ported and "Conv1d(width, 3, 1, **" not in ported  # built by dict(...)
    calls = [line for line in ported.splitlines() if "mindspore." in line and "(" in line]
    assert calls and not [line for line in calls if "dtype" in line or "device" in line]


def test_a_mapping_with_another_key_or_a_dtype_given_stays() -> None:
    other = migrate_text(SOURCE.replace('"dtype": dtype}', '"dtype": dtype, "bias": False}', 1), "stack.py").text
    # bias is no placement: the mapping is kept, and the call is the support module's layer, which takes torch's
    # keywords (device among them) where MindSpore's Linear would refuse device
    assert "t2ms_support.Linear(width, hidden, **factory)" in other
    given = migrate_text(SOURCE.replace("eps=1e-6, dtype=None", "eps=1e-6, dtype=torch.float64"), "stack.py").text
    assert "dtype=(mindspore.float64) or mindspore.float32" in given  # a real dtype is kept (None would be float32)


_RUN = '''
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import mindspore
from stack import Stack
net = Stack(4)
out = net(mindspore.Tensor(np.ones((2, 5, 4), np.float32)))
print(tuple(out.shape), sum(p.size for p in net.trainable_params()))
'''


@pytest.mark.needs_mindspore
def test_the_port_builds_and_runs_in_mindspore(tmp_path: Path) -> None:
    (tmp_path / "stack.py").write_text(_port())
    proc = subprocess.run([sys.executable, "-c", _RUN, str(tmp_path)], capture_output=True, text=True,
                          env=dict(os.environ, GLOG_v="3"), timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # two blocks of (4*8+8) + 8*4 + (4+4) + 4, and a 1x1 convolution 4 -> 3 with its bias
    assert proc.stdout.strip().splitlines()[-1] == f"(2, 3, 5) {2 * (40 + 32 + 8 + 4) + 12 + 3}"
