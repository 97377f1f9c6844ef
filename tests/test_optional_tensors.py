"""A tensor attribute that a flag may leave out (`self.token = nn.Parameter(...) if use_token else None`): where a
method is called on it, it is the tensor, so the method's rewrite applies (`expand` as `broadcast_to`, which GRAPH
mode compiles). Written the way sequence and vision transformers write their optional tokens."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from case_runner import assert_port_agrees, migrate_program
from torch2ms.migrate.pipeline import migrate_text

PROGRAM = textwrap.dedent("""\
    import numpy as np
    import torch
    import torch.nn as nn

    ROWS = np.random.RandomState(2).rand(2, 3, 4).astype(np.float32) - 0.5


    class Prefix(nn.Module):
        def __init__(self, dim, use_token=True, extra=0):
            super().__init__()
            self.token = nn.Parameter(torch.full((1, 1, dim), 0.25)) if use_token else None
            self.extra = None if not extra else nn.Parameter(torch.full((1, extra, dim), -0.5))

        def forward(self, x):
            parts = []
            if self.token is not None:
                parts.append(self.token.expand(x.shape[0], -1, -1))
            if self.extra is not None:
                parts.append(self.extra.expand(x.shape[0], -1, -1))
            return torch.cat(parts + [x], dim=1)


    def case_optional_tokens():
        return Prefix(4, extra=2)(torch.tensor(ROWS))
""")


def test_a_method_on_a_tensor_or_none_is_the_tensors() -> None:
    out = migrate_text(PROGRAM, "prog.py").text
    assert "parts.append(self.token.broadcast_to((x.shape[0], -1, -1)))" in out
    assert "parts.append(self.extra.broadcast_to((x.shape[0], -1, -1)))" in out


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_the_port_agrees_in_both_modes(tmp_path: Path) -> None:
    out = migrate_program(tmp_path, PROGRAM, support=False)
    assert_port_agrees(tmp_path / "src", out, ("mindspore", "graph"), rtol=1e-6, atol=1e-7,
                       context=(out / "prog.py").read_text())
