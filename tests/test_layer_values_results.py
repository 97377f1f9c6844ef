"""Tensor methods on what a layer class passed as a value makes (`norm_layer=partial(nn.LayerNorm, eps=1e-6)`,
`self.norm = norm_layer(dim)`, `self.norm(x).transpose(1, 2)`): `migrate` replaces the class by the support
module's layer before the structural rewrites, whose scan then no longer sees a torch layer there; the Tensor
methods' rules (a two-axis transpose as swapaxes, GRAPH mode's positional split) still apply. Written the way
token-mixing networks write it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from case_runner import assert_port_agrees, migrate_program
from torch2ms.migrate.pipeline import migrate_text

PROGRAM = textwrap.dedent("""\
    from functools import partial

    import numpy as np
    import torch
    import torch.nn as nn

    TOKENS = np.random.RandomState(5).rand(2, 4, 6).astype(np.float32) - 0.5


    class TokenMix(nn.Module):
        def __init__(self, dim, seq, norm_layer=partial(nn.LayerNorm, eps=1e-6), proj_layer=nn.Linear):
            super().__init__()
            self.norm = norm_layer(dim)
            self.mix = proj_layer(seq, seq)
            self.gate = norm_layer(dim // 2)

        def forward(self, x):
            x = x + self.mix(self.norm(x).transpose(1, 2)).transpose(1, 2)
            u, v = x.chunk(2, dim=-1)
            v = self.gate(v)
            return u * v.transpose(-1, -2).sum(dim=1, keepdim=True).transpose(-1, -2)


    def case_token_mixing():
        net = TokenMix(6, 4)
        for index, p in enumerate(net.parameters()):
            nn.init.constant_(p, 0.1 + 0.05 * index)
        return net(torch.tensor(TOKENS))
""")


def test_tensor_methods_on_a_value_classs_results_keep_their_rules() -> None:
    out = migrate_text(PROGRAM, "prog.py").text
    assert "norm_layer=partial(t2ms_support.LayerNorm, eps=1e-6)" in out  # the class replaced by the support's
    assert "x = x + self.mix(self.norm(x).swapaxes(1, 2)).swapaxes(1, 2)" in out
    assert "v.swapaxes(-1, -2).sum(dim=1, keepdim=True).swapaxes(-1, -2)" in out
    assert "x.chunk(2, -1)" in out  # GRAPH mode's positional split


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_the_port_agrees_in_both_modes(tmp_path: Path) -> None:
    out = migrate_program(tmp_path, PROGRAM, support=True)
    assert_port_agrees(tmp_path / "src", out, ("mindspore", "graph"), rtol=1e-5, atol=1e-6,
                       context=(out / "prog.py").read_text())
