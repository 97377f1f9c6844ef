"""nn.init functions the way layer libraries call them: as values bound by functools.partial (called later with the
tensor), on a part of a parameter (a slice), and nn.init.uniform_ with its bounds (no MindSpore initializer class
draws U(a, b): the tables' `value` form). The module here is written as mixture-of-experts and gated layers are."""

from __future__ import annotations

import textwrap

import pytest

from torch2ms.mappings import load_table
from torch2ms.migrate.pipeline import migrate_text

SOURCE = textwrap.dedent("""\
    import math
    from functools import partial
    import torch
    import torch.nn as nn


    def init_all(init, params):
        for param in params:
            init(param)


    class Experts(nn.Module):
        def __init__(self, experts=3, width=4):
            super().__init__()
            self.up = nn.Parameter(torch.zeros(experts, width))
            self.down = nn.Parameter(torch.zeros(width, experts))
            self.bias = nn.Parameter(torch.zeros(width))
            init_all(partial(nn.init.kaiming_uniform_, a=math.sqrt(5)), [self.up, self.down])
            bound = 1 / math.sqrt(width)
            nn.init.uniform_(self.bias, -bound, bound)
            self.refill = partial(nn.init.uniform_, a=0.5, b=0.75)

        def forward(self, x):
            return (x @ self.up.t()) @ self.down.t() + self.bias


    class Gated(nn.Module):
        def __init__(self, width=4):
            super().__init__()
            self.fc = nn.Linear(width, 2 * width)
            nn.init.zeros_(self.fc.bias)
            nn.init.ones_(self.fc.bias[self.fc.bias.shape[0] // 2:])
            nn.init.constant_(self.fc.weight[width:, ::2], 3.0)
""")


def _port() -> str:
    return migrate_text(SOURCE, "experts.py", table=load_table()).text


def test_an_initializer_bound_by_partial_becomes_a_function_of_the_tensor() -> None:
    ported = _port()
    assert "init_all(lambda tensor: tensor.copy_(mindspore.common.initializer.initializer(" \
           "mindspore.common.initializer.HeUniform(negative_slope=math.sqrt(5), mode='fan_in', " \
           "nonlinearity='leaky_relu'), tensor.shape, tensor.dtype).init_data()), [self.up, self.down])" in ported
    assert "self.refill = lambda tensor: tensor.copy_(mindspore.ops.rand(tensor.shape, dtype=tensor.dtype) " \
           "* ((0.75) - (0.5)) + (0.5))" in ported
    assert "nn.init" not in ported and "import torch" not in ported


def test_an_initializer_on_a_part_of_a_parameter_assigns_the_items() -> None:
    ported = _port()
    assert "operator.setitem(self.fc.bias, slice(self.fc.bias.shape[0] // 2, None, None), " in ported
    assert "operator.setitem(self.fc.weight, (slice(width, None, None), slice(None, None, 2)), " in ported
    assert ported.count("import operator\n") == 1


@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
def test_the_ported_initializers_write_what_torch_writes() -> None:
    import numpy as np

    namespace: dict[str, object] = {}
    exec(compile(_port(), "experts.py", "exec"), namespace)
    # shapes that tell the fans apart whatever the draw: up is (1, 16), fan_in 16; down (16, 1), fan_in 1 (the chance
    # that all 16 draws of U(-1, 1) stay within 0.25 is 0.25 ** 16)
    experts = namespace["Experts"](experts=1, width=16)  # type: ignore[operator]
    up, down, bias = experts.up.asnumpy(), experts.down.asnumpy(), experts.bias.asnumpy()
    # kaiming_uniform_ with a=sqrt(5): U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in the second dimension
    assert np.all(up != 0) and np.all(np.abs(up) <= 1 / np.sqrt(16))
    assert np.all(down != 0) and np.all(np.abs(down) <= 1.0) and np.any(np.abs(down) > 1 / np.sqrt(16))
    assert np.all(np.abs(bias) <= 0.25) and len(set(bias.tolist())) > 1
    experts.refill(experts.bias)
    refilled = experts.bias.asnumpy()
    assert np.all((refilled >= 0.5) & (refilled <= 0.75)) and len(set(refilled.tolist())) > 1
    gated = namespace["Gated"]()  # type: ignore[operator]
    assert gated.fc.bias.asnumpy().tolist() == [0.0] * 4 + [1.0] * 4
    written = gated.fc.weight.asnumpy()
    assert np.all(written[4:, ::2] == 3.0) and not np.any(written[4:, 1::2] == 3.0) and not np.any(written[:4] == 3.0)


FANS = textwrap.dedent("""\
    import math
    from torch.nn.init import _calculate_fan_in_and_fan_out


    def glorot_bound(weight):
        fan_in, fan_out = _calculate_fan_in_and_fan_out(weight)
        return math.sqrt(6.0 / (fan_in + fan_out))
""")


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_the_private_fan_helper_is_arithmetic_on_the_shape() -> None:
    import mindspore
    import torch

    ported = migrate_text(FANS, "fans.py", table=load_table()).text
    assert "(lambda s: (s[1] * math.prod(s[2:]), s[0] * math.prod(s[2:])))(weight.shape)" in ported
    assert "torch" not in ported.replace("mindspore", "")
    namespace: dict[str, object] = {}
    exec(compile(ported, "fans.py", "exec"), namespace)
    bound = namespace["glorot_bound"]
    assert callable(bound)
    original: dict[str, object] = {}
    exec(compile(FANS, "fans_torch.py", "exec"), original)
    torch_bound = original["glorot_bound"]
    assert callable(torch_bound)
    for shape in ((6, 4), (6, 4, 3, 2), (8, 2, 5)):
        assert bound(mindspore.ops.zeros(shape)) == torch_bound(torch.zeros(shape))
