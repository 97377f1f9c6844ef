"""`torch.autograd.Function` ported to MindSpore's custom gradient (torch2ms.transforms.custom_gradient): a Cell
whose construct is the forward and whose bprop is the backward, called as an instance. The functions below are
ported by `migrate`; their outputs and the gradients of a weighted sum of them are compared with torch's, in
PyNative and GRAPH mode, with torch blocked on the MindSpore side."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from case_runner import case_results
from torch2ms.config import Config
from torch2ms.engine import scan_source
from torch2ms.migrate.pipeline import migrate_text, torch_references
from torch2ms.transforms.custom_gradient import blocker

_FUNCTIONS = textwrap.dedent('''\
    import torch
    from torch.autograd import Function


    class RoundThrough(torch.autograd.Function):
        """A straight-through estimator: round forward, identity backward."""

        @staticmethod
        def forward(ctx, x):
            return torch.round(x * 4) / 4

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output


    class SoftClamp(Function):
        """Clamp forward; the gradient passes inside the range only."""

        @staticmethod
        def forward(ctx, x, low, high):
            ctx.save_for_backward(x)
            ctx.low, ctx.high = low, high
            return torch.clamp(x, low, high)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            grad_x = None
            if ctx.needs_input_grad[0]:
                inside = (x >= ctx.low) & (x <= ctx.high)
                grad_x = grad * inside.to(grad.dtype)
            return grad_x, None, None


    class ScaledExp(torch.autograd.Function):
        """exp(x) * w, saving its output and an intermediate."""

        @staticmethod
        def forward(ctx, x, w):
            e = torch.exp(x)
            out = e * w
            ctx.save_for_backward(out, e)
            return out

        @staticmethod
        def backward(ctx, grad):
            out, e = ctx.saved_tensors
            return grad * out, grad * e


    class ReverseGrad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, alpha=0.5):
            ctx.alpha = alpha
            return x * 1.0

        @staticmethod
        def backward(ctx, *grads):
            return -grads[0] * ctx.alpha, None


    def quantize(x):
        return RoundThrough.apply(x)


    def soft_clamp(x):
        return SoftClamp.apply(x, -0.25, 0.5)


    scaled_exp = ScaledExp.apply


    def reverse(x):
        return ReverseGrad.apply(x)
    ''')

_INPUTS = """\
import numpy as np
X = np.random.RandomState(3).uniform(-1.0, 1.0, (3, 4)).astype(np.float32)
W = np.random.RandomState(4).uniform(0.5, 1.5, (3, 4)).astype(np.float32)
SCALE = np.linspace(-2.0, 2.0, 12).reshape(3, 4).astype(np.float32)
"""

_TORCH = _INPUTS + """\
import torch
import functions


def run(fn, *arrays):
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*ts)
    (out * torch.tensor(SCALE)).sum().backward()
    return [out.detach()] + [t.grad for t in ts]
"""

_MINDSPORE = _INPUTS + """\
import mindspore
import functions


class Loss(mindspore.nn.Cell):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn
        self.scale = mindspore.Tensor(SCALE)

    def construct(self, *xs):
        return (self.fn(*xs) * self.scale).sum()


def run(fn, *arrays):
    ts = [mindspore.Tensor(a) for a in arrays]
    grads = mindspore.grad(Loss(fn), grad_position=tuple(range(len(ts))))(*ts)
    return [fn(*ts)] + list(grads if isinstance(grads, tuple) else (grads,))
"""

_CASES = """

def case_straight_through():
    return run(functions.quantize, X)

def case_clamp_with_its_own_gradient():
    return run(functions.soft_clamp, X)

def case_two_saved_tensors():
    return run(functions.scaled_exp, X, W)

def case_non_tensor_argument_default_and_star_grads():
    return run(functions.reverse, X)
"""


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
@pytest.mark.parametrize("mode", ["mindspore", "graph"])
def test_ported_custom_gradients_give_torchs_outputs_and_gradients(tmp_path: Path, mode: str) -> None:
    import numpy as np

    port = migrate_text(_FUNCTIONS, "functions.py").text
    assert torch_references(port) == [], port
    assert "def bprop(self, x, w, out_1, grad):" in port and "saved = (out_1, e)" in port
    assert "ReverseGrad()(x, 0.5)" in port  # GRAPH mode passes bprop only the arguments the call writes
    results = []
    for side, harness, text in (("torch", _TORCH, _FUNCTIONS), (mode, _MINDSPORE, port)):
        folder = tmp_path / side
        folder.mkdir()
        (folder / "functions.py").write_text(text, encoding="utf-8")
        (folder / "prog.py").write_text(harness + _CASES, encoding="utf-8")
        code, stderr, result = case_results(folder, side)
        assert code == 0, f"{side}:\n{stderr[-3000:]}\n{port}"
        results.append(result)
    expected, got = results
    assert expected.keys() == got.keys() and len(expected) == 4
    for name, values in expected.items():
        assert len(got[name]) == len(values), (name, got[name])
        for a, b in zip(values, got[name]):
            assert np.allclose(a, b, rtol=1e-5, atol=1e-6), (name, a, b)
    # the straight-through gradient is the weight itself, not round's zero gradient
    assert expected["case_straight_through"][1] == pytest.approx(np.linspace(-2.0, 2.0, 12).tolist())


_IDENTITY = """
         @staticmethod
         def backward(ctx, g):
             return g
"""


def _class(source: str) -> ast.ClassDef:
    node = ast.parse(textwrap.dedent(source)).body[-1]
    assert isinstance(node, ast.ClassDef)
    return node


@pytest.mark.parametrize(("source", "why"), [
    ("""
     class F(torch.autograd.Function):
         @staticmethod
         def forward(ctx, x):
             if x.sum() > 0:
                 return x
             return -x
     """ + _IDENTITY, "does not end in its only return"),
    ("""
     class F(torch.autograd.Function):
         @staticmethod
         def forward(ctx, x):
             helper(ctx, x)
             return x
     """ + _IDENTITY, "uses ctx as a value"),
    ("""
     class F(torch.autograd.Function):
         @staticmethod
         def forward(x, y):
             return x * y

         @staticmethod
         def setup_context(ctx, inputs, output):
             ctx.save_for_backward(*inputs)

         @staticmethod
         def backward(ctx, g):
             x, y = ctx.saved_tensors
             return g * y, g * x
     """, "setup_context"),
    ("""
     class F(torch.autograd.Function):
         @staticmethod
         def forward(ctx, x, y):
             return x * y

         @staticmethod
         @custom_bwd
         def backward(ctx, g):
             return g, g
     """, "decorator custom_bwd"),
    ("""
     class F(torch.autograd.Function):
         @staticmethod
         def forward(ctx, x, k):
             ctx.k = k
             return x * k
     """ + _IDENTITY, None),
])
def test_what_cannot_be_ported_is_said_and_left(source: str, why: str | None) -> None:
    found = blocker(_class(source))
    assert (found is None) if why is None else (found is not None and why in found), found
    text = "import torch\n" + textwrap.dedent(source)
    diags = [d for d in scan_source(text, "f.py", Config()).diagnostics if d.code == "TMS334"]
    assert len(diags) == 1
    if why is None:
        assert diags[0].fix is not None and "migrate" in diags[0].message
    else:
        assert diags[0].fix is None and why in diags[0].message
        port = migrate_text(text, "f.py")
        assert "torch.autograd.Function" in port.text and any(d.code == "TMS334" for d in port.result.diagnostics)
