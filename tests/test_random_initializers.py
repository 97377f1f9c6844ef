"""Random in-place initializers in ports (`w.data.uniform_(a, b)`, `w.uniform_()`, `w.normal_(m, s)`), whose
MindSpore in-place forms have no CPU kernel in MindSpore 2.10: the port runs, and its draws have torch's range and
moments (the values themselves are random on both sides, so the cases compare what the distribution fixes)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from case_runner import assert_port_agrees, migrate_program

PROGRAM = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(400, 50)
            self.fc = nn.Linear(50, 300)
            self.emb.weight.data.uniform_(-0.1, 0.3)
            self.fc.weight.data.normal_(0.5, 0.02)
            self.fc.bias.data.uniform_()

        def draws(self):
            return self.emb.weight, self.fc.bias, self.fc.weight


    NET = Net()


    def _stats(w, low, high, mean, spread):
        return [float(w.min()) >= low, float(w.max()) < high, abs(float(w.mean()) - mean) < spread]


    def case_uniform_between():
        return _stats(NET.draws()[0], -0.1, 0.3, 0.1, 0.01)


    def case_uniform_default():
        return _stats(NET.draws()[1], 0.0, 1.0, 0.5, 0.1)


    def case_normal():
        return _stats(NET.draws()[2], 0.3, 0.7, 0.5, 0.002)
""")


def test_the_port_of_random_initializers_writes_no_in_place_random_method(tmp_path: Path) -> None:
    text = (migrate_program(tmp_path, PROGRAM, support=False) / "prog.py").read_text()
    assert ".uniform_(" not in text and ".normal_(" not in text and "torch" not in text


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_random_initializers_draw_from_torchs_distribution_in_the_port(tmp_path: Path) -> None:
    port = migrate_program(tmp_path, PROGRAM, support=False)
    assert_port_agrees(tmp_path / "src", port, ("mindspore",), rtol=0.0, atol=0.0,
                       context=(port / "prog.py").read_text())
