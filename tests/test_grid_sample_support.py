"""`F.grid_sample(..., mode='bicubic')`, which MindSpore 2.10's grid_sample refuses, or a mode known only at run time
that may be bicubic: the port calls the support module's grid_sample, torch's bicubic weights (A = -0.75) with each
padding mode (zeros, border, reflection) and either align_corners, in PyNative and GRAPH mode; other modes keep
MindSpore's function."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from case_runner import assert_port_agrees_with_torch, assert_torch_free_port

PROGRAM = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Warp(nn.Module):
        def __init__(self, mode="bicubic", padding="border", corners=False):
            super().__init__()
            self.mode, self.padding, self.corners = mode, padding, corners

        def forward(self, image, flow):
            return F.grid_sample(image, flow, mode=self.mode, padding_mode=self.padding, align_corners=self.corners)


    def sharp(image, flow, padding):
        return F.grid_sample(image, flow, mode="bicubic", padding_mode=padding, align_corners=True)


    def smooth(image, flow):
        return F.grid_sample(image, flow, mode="bilinear", align_corners=False)


    def inputs():
        image = torch.linspace(0.0, 1.0, 2 * 3 * 5 * 6).reshape(2, 3, 5, 6).sin()
        flow = torch.linspace(-1.3, 1.3, 2 * 4 * 3 * 2).reshape(2, 4, 3, 2).flip(-1).cos() * 1.25
        return image, flow


    def case_warp():
        image, flow = inputs()
        return [Warp(padding=p, corners=c)(image, flow) for p in ("zeros", "border", "reflection") for c in (False, True)]


    def case_functions():
        image, flow = inputs()
        return [sharp(image, flow, "reflection"), sharp(image, flow, "zeros"), smooth(image, flow),
                Warp(mode="nearest")(image, flow)]
""")


def test_bicubic_sampling_is_the_support_modules_grid_sample() -> None:
    assert_torch_free_port(PROGRAM, ("return t2ms_support.grid_sample(image, flow, mode=self.mode,",
                                     "return t2ms_support.grid_sample(image, flow, mode=\"bicubic\",",
                                     "return mindspore.mint.nn.functional.grid_sample(image, flow, mode=\"bilinear\""))


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_the_ported_sampling_gives_torchs_values(tmp_path: Path) -> None:
    assert_port_agrees_with_torch(tmp_path, PROGRAM, ("mindspore", "graph"), rtol=1e-5, atol=1e-5)
