"""torch.nn.functional.grid_sample in the bicubic mode, which MindSpore 2.10 refuses, or with a mode known only at
run time: the fix engine writes mint's grid_sample for the literal modes MindSpore takes, and `migrate` writes
the support module's `grid_sample` for the calls it leaves (torch's sixteen taps, cubic weights and padding
rules; torch2ms.transforms.support, `fallback`); run against torch, in PyNative and GRAPH mode, torch blocked."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from case_runner import assert_port_agrees, port_in_process
from torch2ms.config import Config
from torch2ms.engine import scan_source
from torch2ms.mappings import load_table
from torch2ms.migrate.pipeline import migrate_text

_PROGRAM = textwrap.dedent('''\
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    RNG = np.random.RandomState(5)
    IMAGE = torch.tensor(RNG.uniform(-1.0, 1.0, (2, 3, 6, 9)).astype(np.float32))
    # positions inside and outside [-1, 1]: the padding modes decide what the taps outside the image read
    GRID = torch.tensor(RNG.uniform(-1.3, 1.3, (2, 5, 4, 2)).astype(np.float32))


    class Warp(nn.Module):
        def __init__(self, how, padding):
            super().__init__()
            self.how = how
            self.padding = padding

        def forward(self, x, grid):
            return F.grid_sample(x, grid, mode=self.how, padding_mode=self.padding, align_corners=False)


    def case_bicubic_with_every_padding_and_corner_rule():
        return [F.grid_sample(IMAGE, GRID, mode="bicubic", padding_mode=padding, align_corners=corners)
                for padding in ("zeros", "border", "reflection") for corners in (False, True)]

    def case_modes_known_at_run_time():
        return [Warp(how, "border")(IMAGE, GRID) for how in ("bilinear", "nearest", "bicubic")]

    def case_a_literal_mode_mindspore_takes():
        return F.grid_sample(IMAGE, GRID, mode="bilinear", padding_mode="zeros", align_corners=True)
    ''')


def test_the_calls_mindspore_refuses_are_the_support_modules_and_the_others_keep_the_target() -> None:
    text = migrate_text(_PROGRAM, "prog.py").text
    assert "torch" not in text.replace("t2ms_support", "")
    assert text.count("t2ms_support.grid_sample(") == 2
    assert 'mindspore.mint.nn.functional.grid_sample(IMAGE, GRID, mode="bilinear"' in text
    # a text fix cannot write the module: the bicubic call keeps its finding, without a fix
    source = "import torch.nn.functional as F\n\n\ndef f(x, g):\n    return F.grid_sample(x, g, mode='bicubic')\n"
    found = [d for d in scan_source(source, "m.py", Config(), load_table()).diagnostics
             if d.torch_api == "torch.nn.functional.grid_sample"]
    assert len(found) == 1 and found[0].fix is None and found[0].severity.value in ("warning", "error")


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
@pytest.mark.parametrize("mode", ["mindspore", "graph"])
def test_the_support_grid_sample_gives_torchs_results(tmp_path: Path, mode: str) -> None:
    original, port, text = port_in_process(tmp_path, _PROGRAM)
    expected = assert_port_agrees(original, port, (mode,), rtol=1e-5, atol=1e-5, context=text)
    assert len(expected) == 3 and len(expected["case_bicubic_with_every_padding_and_corner_rule"]) == 6
