"""Functions with an `inplace` flag read as values (``act = ACTIVATIONS[name]``, called later as ``act(h,
inplace=True)``): MindSpore 2.10 has no CPU kernel for their in-place forms (InplaceSiLU, InplaceReLU), so where
the tables compose the in-place call (``x.copy_(silu(x))``), `migrate` writes the value as the support module's
`in_place` over the function's MindSpore form; the port computes what torch computes, the input updated too (outside a Cell's
construct: in GRAPH mode a compiled construct does not see a copy made inside a function it calls, only the
function's result)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from torch2ms.cli import main
from torch2ms.mappings import load_table
from torch2ms.migrate.pipeline import migrate_text, torch_references
from torch2ms.transforms.compose import in_place_flag

ROOT = Path(__file__).resolve().parents[1]

GATES = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    GATES = {"swish": F.silu, "rectifier": F.relu, "smooth": F.gelu}


    def pick_gate(kind):
        return GATES[kind]


    class GatedUnit(nn.Module):
        def __init__(self, width, kind="swish"):
            super().__init__()
            self.inner = nn.Linear(width, width)
            self.gate = pick_gate(kind)
            self.squash = F.silu

        def forward(self, x):
            h = self.inner(x)
            g = self.gate(h, inplace=True)
            return self.squash(g - 1.0, False) * 2.0 + g


    def direct(x):
        F.silu(x, inplace=True)
        return x


    def through_value(x, kind):
        pick_gate(kind)(x, True)  # the flag by position
        return x
""")

RUN = """\
import sys
import numpy as np
mode, framework = sys.argv[1], sys.argv[2]
rng = np.random.RandomState(0)
x = rng.randn(3, 5).astype(np.float32)
w = rng.randn(5, 5).astype(np.float32) * 0.5
b = rng.randn(5).astype(np.float32) * 0.1
if framework == "torch":
    import torch
    import gates
    unit = gates.GatedUnit(5)
    with torch.no_grad():
        unit.inner.weight.copy_(torch.tensor(w))
        unit.inner.bias.copy_(torch.tensor(b))
        out = unit(torch.tensor(x)).numpy()
        d = gates.direct(torch.tensor(x)).numpy()
        t = gates.through_value(torch.tensor(x), "rectifier").numpy()
else:
    sys.modules["torch"] = None  # the port runs without torch
    import mindspore
    if mode == "graph":
        mindspore.set_context(mode=mindspore.GRAPH_MODE)
    import gates
    unit = gates.GatedUnit(5)
    unit.inner.weight.set_data(mindspore.Tensor(w))
    unit.inner.bias.set_data(mindspore.Tensor(b))
    out = unit(mindspore.Tensor(x)).asnumpy()
    d = gates.direct(mindspore.Tensor(x)).asnumpy()
    t = gates.through_value(mindspore.Tensor(x), "rectifier").asnumpy()
print(" ".join(f"{v:.7f}" for v in np.concatenate([out.ravel(), d.ravel(), t.ravel()])))
"""


def test_the_flag_of_a_composed_in_place_form_is_read_from_the_tables() -> None:
    table = load_table()
    for api in ("torch.nn.functional.silu", "torch.nn.functional.relu"):
        entry = table.lookup(api)
        assert entry is not None and in_place_flag(entry.rewrite) == 1, api
    gelu = table.lookup("torch.nn.functional.gelu")
    assert gelu is not None and in_place_flag(gelu.rewrite) is None  # no in-place form to stand in for


def test_function_values_with_a_composed_in_place_form_take_the_support_function() -> None:
    ported = migrate_text(GATES, "gates.py", table=load_table()).text
    assert torch_references(ported) == [], ported
    assert '"swish": functools.partial(t2ms_support.in_place, mindspore.mint.nn.functional.silu, 1)' in ported
    assert '"rectifier": functools.partial(t2ms_support.in_place, mindspore.mint.nn.functional.relu, 1)' in ported
    assert '"smooth": mindspore.ops.gelu' in ported  # no inplace flag: the function itself
    assert "self.squash = functools.partial(t2ms_support.in_place, mindspore.mint.nn.functional.silu, 1)" in ported
    assert "    x.copy_(mindspore.mint.nn.functional.silu(x))\n" in ported  # the call itself: the composed form


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_the_port_updates_the_input_as_torch_does(tmp_path: Path, mode: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    project, out = tmp_path / "project", tmp_path / "out"
    project.mkdir()
    (project / "gates.py").write_text(GATES, encoding="utf-8")
    main(["migrate", str(project), "--out", str(out), "-q"])
    capsys.readouterr()
    results = []
    for folder, framework in ((project, "torch"), (out, "mindspore")):
        (folder / "run.py").write_text(RUN, encoding="utf-8")
        proc = subprocess.run([sys.executable, "run.py", mode, framework], capture_output=True, text=True,
                              timeout=600, cwd=folder, env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
        assert proc.returncode == 0, proc.stderr[-3000:]
        results.append([float(v) for v in proc.stdout.split()])
    expected, got = results
    assert len(expected) == len(got) == 45
    assert max(abs(a - b) for a, b in zip(expected, got)) <= 1e-5, (expected, got)
    assert min(expected[30:]) == 0.0 < max(expected[30:])  # torch: the input holds the rectified values
