"""The rewrites torch's own test samples (OpInfo, ModuleInfo) found wrong, on code written otherwise: what
`scan --fix --unsafe-fixes --device cpu` writes runs in MindSpore and gives torch's result, and where MindSpore
cannot (a value it rejects, a result it computes otherwise) the call is left to its finding, and the installed
MindSpore still behaves as the fact says."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from test_binding import assert_same, run_both
from torch2ms.config import Config
from torch2ms.fix import fix_text
from torch2ms.mappings import load_table
from torch2ms.model import FactKind, ParamFact

TABLE = load_table()


def fixed(source: str) -> str:
    """The text `scan --fix --unsafe-fixes --device cpu` writes."""
    return fix_text(textwrap.dedent(source), "prog.py", Config(device="cpu"), True, TABLE).text


def test_a_fact_names_values_by_literal_and_by_type_and_true_is_not_the_dimension_1() -> None:
    fact = ParamFact(kind=FactKind.UNSUPPORTED_VALUES, torch="dim", values=(0, ()), types=("float",))
    assert fact.matches(0) and fact.matches(0.0) and fact.matches(()) and fact.matches(2.5)
    assert not fact.matches(False) and not fact.matches(1) and not fact.matches((0,))
    assert ParamFact(kind=FactKind.UNSUPPORTED_VALUES, torch="dim", types=("bool",)).matches(True)
    assert not ParamFact(kind=FactKind.UNSUPPORTED_VALUES, torch="dim", types=("bool",)).matches(1)
    assert not ParamFact(kind=FactKind.UNSUPPORTED_VALUES, torch="flag", values=(True,)).matches(1)


def test_a_translated_fact_with_types_binds_a_positional_value_of_those_types_only() -> None:
    from torch2ms.model import Arg, Span

    fact = ParamFact(kind=FactKind.TRANSLATED, torch="unbiased", ms="ddof", position=1, types=("bool",),
                     values=((True, 1), (False, 0)))
    at = Span(1, 0, 1, 1)
    x, flag, dim = Arg(None, at), Arg(None, at, is_const=True, value=True), Arg(None, at, is_const=True, value=1)
    assert fact.passed((x, flag)) is flag
    assert fact.passed((x, dim)) is None and fact.passed((x, Arg(None, at))) is None  # dim, or not told
    keyword = Arg("unbiased", at, is_const=True, value=False)
    assert fact.passed((x, keyword)) is keyword


def test_calls_mindspore_cannot_run_as_torch_does_are_left_to_their_findings() -> None:
    out = fixed("""
        import torch
        import torch.nn.functional as F

        def stats(scores, mask, feats, kernel, volume, square, flag):
            a = torch.var_mean(scores, flag)              # a bool here is unbiased, an int dim: not told
            b = torch.std_mean(scores, 0, correction=0.5)  # MindSpore's ddof takes an int
            c = torch.any(mask, dim=(0, 1))               # mint.any takes one dimension
            d = torch.all(mask, dim=())                    # MindSpore reduces every dimension, torch none
            e = mask.any(dim=(0,)), mask.all(dim=())
            f = feats.narrow(0, 3, 0)                      # an empty slice
            g = torch.logspace(0, 1, 5, 2.5)               # MindSpore's base is an int
            h = F.conv1d(feats, kernel, padding="same")
            i = F.avg_pool3d(volume, 2, padding=(1, 0, 1))
            j = torch.linalg.eigvals(square)               # another order
            return a, b, c, d, e, f, g, h, i, j
    """)
    assert "torch.cartesian_prod(*square)" in fixed("import torch\nr = torch.cartesian_prod(*square)\n")  # one or more
    for kept in ("mindspore.ops.var_mean(scores, flag, ddof=1)", "torch.std_mean(scores, 0, correction=0.5)",
                 "torch.any(mask, dim=(0, 1))", "torch.all(mask, dim=())", "mask.any(dim=(0,))", "mask.all(dim=())",
                 "feats.narrow(0, 3, 0)", "torch.logspace(0, 1, 5, 2.5)", 'F.conv1d(feats, kernel, padding="same")',
                 "F.avg_pool3d(volume, 2, padding=(1, 0, 1))", "torch.linalg.eigvals(square)"):
        assert kept in out, kept


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
def test_the_rewritten_calls_give_torchs_results_on_cpu(tmp_path: Path) -> None:
    ported, torch_side, ms_side = run_both(tmp_path, """
        import numpy as np
        import torch

        PATCH = np.random.RandomState(7).rand(3, 5, 2).astype(np.float32)
        SCORES = np.random.RandomState(8).rand(6, 4).astype(np.float32) - 0.4


        def quarter_turns(patch):
            return torch.rot90(patch), patch.rot90(), torch.rot90(patch, 3), patch.rot90(2)


        def case_rot90_with_torchs_defaults():
            return quarter_turns(torch.tensor(PATCH))

        def case_logspace_from_ints():
            decay = torch.logspace(-4, -1, 4)
            return decay, torch.logspace(1, 4, 4, 2, dtype=torch.float32, device="cpu")

        def case_var_mean_by_dimension_and_keyword():
            s = torch.tensor(SCORES)
            by_dim = torch.var_mean(s, 1) + torch.std_mean(s, unbiased=False) + torch.var_mean(s, 0, correction=0)
            return by_dim + torch.var_mean(s, True) + torch.std_mean(s, False)  # the older overload: unbiased

        def case_masks_reduced_over_one_dimension():
            keep = torch.tensor(SCORES) > 0
            return torch.any(keep, 1), torch.all(keep, dim=0), keep.any(dim=1), keep.all(0)

        def case_narrow_with_ints():
            return torch.tensor(SCORES).narrow(1, 1, 2)

        def case_cartesian_products():
            ids, tags = torch.tensor(SCORES[0]), torch.tensor(SCORES[1, :2])
            return torch.cartesian_prod(ids), torch.cartesian_prod(ids, tags)
    """, rewrite=fixed)
    assert "mindspore.ops.var_mean(s, ddof=1)" in ported and "mindspore.ops.std_mean(s, ddof=0)" in ported
    assert "mindspore.ops.cartesian_prod(ids).reshape(-1)" in ported
    assert "mindspore.ops.cartesian_prod(ids, tags)" in ported
    assert "mindspore.ops.rot90(patch, k=1, dims=(0, 1))" in ported
    assert "mindspore.ops.rot90(patch, 3, dims=(0, 1))" in ported
    assert "mindspore.ops.logspace(float(-4), float(-1), 4)" in ported
    assert_same(ported, torch_side, ms_side)


def test_a_layer_called_with_torchs_forward_keywords_passes_mindspores() -> None:
    out = fixed("""
        import torch.nn as nn

        class Scorer(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(4, 3)
                self.crit = nn.L1Loss(reduction="sum")

            def forward(self, feats, gold, **extra):
                return self.crit(self.proj(input=feats), target=gold), self.proj(feats, **extra)
    """)
    assert "self.crit(self.proj(x=feats), labels=gold)" in out
    assert "self.proj(feats, **extra)" in out  # nothing by torch's keyword: left as written


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
def test_layers_called_with_torchs_forward_keywords_give_torchs_results_on_cpu(tmp_path: Path) -> None:
    """After `migrate` (the fix engine and the structural rewrites: the weights set by nn.init)."""
    ported, torch_side, ms_side = run_both(tmp_path, """
        import numpy as np
        import torch
        import torch.nn as nn

        FEATS = np.random.RandomState(5).rand(2, 4).astype(np.float32)
        GOLD = np.random.RandomState(6).rand(2, 3).astype(np.float32)


        class Scorer(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(4, 3)
                self.crit = nn.L1Loss(reduction="sum")
                self.pad = nn.ZeroPad2d(1)
                nn.init.constant_(self.proj.weight, 0.25)
                nn.init.constant_(self.proj.bias, -0.5)

            def forward(self, feats, gold):
                guess = self.proj(input=feats)
                return guess, self.crit(input=guess, target=gold), self.pad(input=feats[None])


        def case_layers_by_keyword():
            return Scorer()(torch.tensor(FEATS), torch.tensor(GOLD))
    """)
    assert "self.proj(x=feats)" in ported and "labels=gold" in ported
    assert_same(ported, torch_side, ms_side)


_FACTS = """
import numpy as np, torch, mindspore
from mindspore import mint, nn, ops

def raises(call):
    try:
        call()
    except (TypeError, ValueError, RuntimeError, AttributeError):
        return True
    return False

x = mindspore.Tensor(np.random.RandomState(0).rand(3, 4).astype(np.float32))
mask = x > 0.5
assert raises(lambda: ops.rot90(x)), "rot90 without k and dims"
assert raises(lambda: mint.any(mask, dim=(0, 1))), "mint.any with a tuple"
assert mint.all(mask, dim=()).shape == () and tuple(torch.all(torch.tensor(mask.asnumpy()), dim=()).shape) == (3, 4)
assert raises(lambda: mask.any(dim=(0,))) and mask.all(dim=()).shape == ()
assert raises(lambda: ops.var_mean(x, True)), "var_mean with a bool axis"
assert raises(lambda: ops.std_mean(x, ddof=0.5)), "a float ddof"
assert raises(lambda: ops.logspace(0, 2, 3)), "int start and end"
assert raises(lambda: ops.logspace(0.0, 2.0, 3, 2.5)), "a float base"
assert raises(lambda: x.narrow(1, mindspore.Tensor(1), 2)), "a tensor start"
assert raises(lambda: x.narrow(1, 0, 0)), "an empty slice"
assert raises(lambda: ops.hsplit(mindspore.Tensor(np.arange(4.0)), 2)), "hsplit of 1-D"
assert raises(lambda: ops.conv1d(x, mindspore.Tensor(np.ones((2, 3, 2), np.float32)))), "conv1d unbatched"
assert raises(lambda: nn.Conv1dTranspose(3, 2, 2)(x)), "Conv1dTranspose unbatched"
cube = mindspore.Tensor(np.ones((1, 1, 4, 4, 4), np.float32))
assert raises(lambda: ops.avg_pool3d(cube, 2, padding=(1, 0, 1))) and raises(lambda: ops.avg_pool3d(cube, 2, divisor_override=None))
m = np.random.RandomState(1).standard_normal((5, 5)).astype(np.float32)
ours, theirs = ops.eigvals(mindspore.Tensor(m)).asnumpy(), torch.linalg.eigvals(torch.tensor(m)).numpy()
assert np.allclose(np.sort_complex(ours), np.sort_complex(theirs), atol=1e-4)  # the same values ...
assert not np.allclose(ours, theirs, atol=1e-4)  # ... in another order
assert ops.cartesian_prod(mindspore.Tensor(np.arange(3.0))).shape == (3, 1)  # of one tensor: a column
logp = mindspore.Tensor(np.log(np.full((5, 2, 4), 0.25, np.float32)))
lengths, sizes = mindspore.Tensor(np.array([5, 5], np.int32)), mindspore.Tensor(np.array([2, 1], np.int32))
assert raises(lambda: nn.CTCLoss()(logp, mindspore.Tensor(np.array([1, 2, 1], np.int32)), lengths, sizes)), "1-D targets"
padded = mindspore.Tensor(np.array([[1, 2], [1, 0]], np.int32))
assert not raises(lambda: nn.CTCLoss()(logp, padded, lengths, sizes))
assert raises(lambda: nn.CTCLoss()(logp, padded, (5, 5), (2, 1))), "lengths as tuples"
print("ok")
"""


# cdist, each in a process of its own: after one error every later cdist of the process raises the same
_CDIST = ("(2, 3, 4), (3, 4)",  # ranks that differ
          "(1, 2, 3, 4), (1, 2, 5, 4)")  # rank 4


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
def test_the_installed_mindspore_still_behaves_as_the_facts_say() -> None:
    out = subprocess.run([sys.executable, "-c", _FACTS], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-3000:]
    for shapes in _CDIST:
        program = (f"import numpy as np, mindspore\na, b = ({shapes})\n"
                   "mindspore.mint.cdist(mindspore.Tensor(np.ones(a, np.float32)), mindspore.Tensor(np.ones(b, np.float32))).asnumpy()")
        out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
        assert out.returncode != 0 and "ValueError" in out.stderr, (shapes, out.stderr[-2000:])
