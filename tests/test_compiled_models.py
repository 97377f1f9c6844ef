"""`torch.compile(model, mode=..., **options)` and `torch.compile(fn)`: what torch.compile returns computes what its
argument computes, so the port uses the argument itself (`unwrap_model`, as for `torch.jit.script`); a call that
passes no model (`torch.compile(mode=...)`, a decorator factory) keeps its finding."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from case_runner import assert_port_agrees_with_torch, assert_torch_free_port
from torch2ms.mappings import load_table
from torch2ms.migrate.pipeline import migrate_text

PROGRAM = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Trainer:
        def __init__(self, model, compile_model=False, **compile_options):
            self.model = model
            if compile_model:
                self.model = torch.compile(self.model, mode="max-autotune", **compile_options)


    def scale(x):
        return x * 2.0


    fast_scale = torch.compile(scale, fullgraph=True)


    def case_compiled():
        torch.manual_seed(0)
        net = nn.Linear(3, 2)
        with torch.no_grad():
            net.weight.copy_(torch.arange(6.0).reshape(2, 3) / 10)
            net.bias.fill_(0.5)
        trainer = Trainer(net, compile_model=True, dynamic=False)
        x = torch.linspace(-1.0, 1.0, 6).reshape(2, 3)
        return [trainer.model(x), fast_scale(x)]
""")


def test_a_compiled_model_is_the_model() -> None:
    assert_torch_free_port(PROGRAM, ("        if compile_model:\n            pass\n", "fast_scale = scale\n"))
    kept = "import torch\n\nfactory = torch.compile(mode='reduce-overhead')\n"
    assert "torch.compile(mode='reduce-overhead')" in migrate_text(kept, "kept.py", table=load_table()).text


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_the_port_computes_what_the_compiled_model_does(tmp_path: Path) -> None:
    assert_port_agrees_with_torch(tmp_path, PROGRAM, rtol=1e-6, atol=1e-6)
