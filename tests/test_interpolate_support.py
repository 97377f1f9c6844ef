"""torch.nn.functional.interpolate where no single MindSpore call gives torch's result: a mode or antialias known
only at run time, antialias=True, a cubic mode, a linear mode with a scale factor, a literal mode the target has
no CPU kernel for (as a call or as an `nn.Upsample` layer). The fix engine writes what the
tables' forms write (a literal bilinear size as mindspore.ops.interpolate, a literal nearest mode as mint's) and
`migrate` writes the support module's `interpolate` for the calls it leaves (torch2ms.transforms.support,
`fallback`); run against torch in every mode, in PyNative and in GRAPH mode, with torch blocked."""

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

    RNG = np.random.RandomState(3)
    IMAGE = torch.tensor(RNG.uniform(-1.0, 1.0, (2, 3, 7, 5)).astype(np.float32))
    SIGNAL = torch.tensor(RNG.uniform(-1.0, 1.0, (2, 4, 9)).astype(np.float32))
    VOLUME = torch.tensor(RNG.uniform(-1.0, 1.0, (1, 2, 3, 4, 5)).astype(np.float32))


    def resample(grid, shape, how="bicubic", smooth=False, corners=None):
        return F.interpolate(grid, size=shape, mode=how, align_corners=corners, antialias=smooth)


    class Pyramid(nn.Module):
        def __init__(self, how):
            super().__init__()
            self.how = how

        def forward(self, x):
            down = F.interpolate(x, scale_factor=0.5, mode=self.how, antialias=True)
            return F.interpolate(down, size=x.shape[-2:], mode=self.how, align_corners=False)


    def case_computed_modes_up_and_down():
        return [resample(IMAGE, size, how) for how in ("nearest", "bilinear", "bicubic", "area", "nearest-exact")
                for size in ((11, 8), (3, 2))]

    def case_antialias_and_corners():
        return [resample(IMAGE, (4, 9), how, smooth=True) for how in ("bilinear", "bicubic")] + \\
            [resample(IMAGE, (12, 3), how, corners=True) for how in ("bilinear", "bicubic")]

    def case_literal_forms_beside_it():
        return F.interpolate(IMAGE, size=(5, 7), mode="bilinear"), F.interpolate(IMAGE, scale_factor=2.0)

    def stretch(signal, how):
        return F.interpolate(signal, scale_factor=1.7, mode=how)

    def case_one_and_three_spatial_axes():
        return stretch(SIGNAL, "linear"), \\
            F.interpolate(SIGNAL, size=4, mode="linear", align_corners=True), \\
            F.interpolate(VOLUME, scale_factor=(2.0, 0.5, 1.5), mode="trilinear"), \\
            F.interpolate(VOLUME, scale_factor=0.6, mode="nearest", recompute_scale_factor=True)

    def case_module_with_its_mode_as_an_attribute():
        return Pyramid("bilinear")(IMAGE), Pyramid("bicubic")(IMAGE)


    class Upsampler(nn.Module):
        def __init__(self, how):
            super().__init__()
            self.smooth = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
            self.sharp = nn.Upsample(size=(6, 4), mode="nearest")
            self.chosen = nn.Upsample(scale_factor=1.5, mode=how)

        def forward(self, x):
            return self.smooth(x), self.sharp(x), self.chosen(x), \\
                F.interpolate(x, scale_factor=2, mode="bicubic", align_corners=False), \\
                F.interpolate(x, scale_factor=1.5, mode="bilinear")

    def case_literal_modes_without_a_cpu_kernel_as_calls_and_layers():
        return Upsampler("bicubic")(IMAGE)
    ''')


def test_the_calls_the_forms_cannot_write_are_the_support_modules_and_the_others_keep_their_forms() -> None:
    text = migrate_text(_PROGRAM, "prog.py").text
    assert "torch" not in text.replace("t2ms_support", "")
    assert text.count("t2ms_support.interpolate(") == 7
    # a layer whose literal mode has no CPU kernel in mint, or whose mode is known only at run time, is the
    # support module's layer; one the target's form takes stays MindSpore's
    assert text.count("t2ms_support.Upsample(") == 2
    assert 'mindspore.mint.nn.Upsample(size=(6, 4), mode="nearest")' in text
    assert 'mindspore.ops.interpolate(IMAGE, (5, 7), mode="bilinear", align_corners=None)' in text
    assert "mindspore.mint.nn.functional.interpolate(IMAGE, scale_factor=2.0)" in text
    # a text fix cannot write the module: such a call keeps its finding, without a fix
    source = "import torch.nn.functional as F\n\n\ndef f(x, m):\n    return F.interpolate(x, size=4, mode=m)\n"
    found = [d for d in scan_source(source, "m.py", Config(), load_table()).diagnostics
             if d.torch_api == "torch.nn.functional.interpolate"]
    assert len(found) == 1 and found[0].fix is None


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
@pytest.mark.parametrize("mode", ["mindspore", "graph"])
def test_the_support_interpolate_gives_torchs_results_in_every_mode(tmp_path: Path, mode: str) -> None:
    original, port, text = port_in_process(tmp_path, _PROGRAM)
    expected = assert_port_agrees(original, port, (mode,), rtol=1e-5, atol=1e-5, context=text)
    assert len(expected) == 6 and len(expected["case_computed_modes_up_and_down"]) == 10
