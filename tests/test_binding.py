"""Arguments mapped by binding (a `partial`'s arguments are the API's, translated values such as BatchNorm's
momentum) and composed MindSpore forms, checked on small programs written the way other libraries write
these constructs: as text after `migrate`, and by running torch and the port on CPU."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from case_runner import assert_same_results, case_results
from torch2ms.config import Config
from torch2ms.mappings import load_table
from torch2ms.migrate import support
from torch2ms.migrate.pipeline import migrate_text
from torch2ms.transforms.param_edits import translated_value

ROOT = Path(__file__).resolve().parent.parent


def port(source: str) -> str:
    return migrate_text(textwrap.dedent(source), "prog.py").text


def fixed(source: str) -> str:
    """`--fix --unsafe-fixes` (no support module: a class passed as a value is rewritten where it is written)."""
    from torch2ms.fix import fix_text

    return fix_text(textwrap.dedent(source), "prog.py", unsafe=True).text


# ------------------------------------------------------------------------------------------ text
def test_translation_form_computes_constants_only_from_the_tables_arithmetic() -> None:
    assert translated_value("1 - {}", 0.3) == "0.7"
    assert translated_value("1 - {}", 0.01) == "0.99"
    assert translated_value("1 - {}", 1) == "0"
    assert translated_value("1 - {}", None) is None  # torch's cumulative average: no MindSpore value
    assert translated_value("1 - {}", True) is None
    assert translated_value("__import__('os').getcwd() or {}", 0.5) is None  # only arithmetic is evaluated


def test_momentum_translated_in_every_call_form() -> None:
    source = """
        import functools
        import torch.nn as nn

        class Stem(nn.Module):
            def __init__(self, width, bn_momentum):
                super().__init__()
                self.bn_momentum = bn_momentum
                self.a = nn.BatchNorm1d(width, momentum=0.3)
                self.b = nn.BatchNorm2d(width, 1e-3, 0.2)
                self.c = nn.BatchNorm2d(width, momentum=self.bn_momentum)
                self.d = nn.BatchNorm3d(width, momentum=None)
                make = functools.partial(nn.BatchNorm2d, eps=1e-3, momentum=0.01)
                self.e = make(width)
    """
    out = fixed(source)
    assert "BatchNorm1d(width, momentum=0.7)" in out
    assert "BatchNorm2d(width, 1e-3, momentum=0.8)" in out
    assert "BatchNorm2d(width, momentum=1 - (self.bn_momentum))" in out
    assert "nn.BatchNorm3d(width, momentum=None)" in out  # no MindSpore value: left, with its finding
    assert "functools.partial(mindspore.nn.BatchNorm2d, eps=1e-3, momentum=0.99)" in out
    # migrate: the partial is of the support module's layer, which translates torch's momentum when it is built
    assert "functools.partial(t2ms_support.BatchNorm2d, eps=1e-3, momentum=0.01)" in port(source)


def test_partial_arguments_bind_from_the_first_parameter_and_take_written_defaults() -> None:
    source = """
        from functools import partial
        from torch import nn

        conv3x3 = partial(nn.Conv2d, kernel_size=3, padding=1, bias=False)
        conv = partial(nn.Conv2d, 16, 32)
        act = partial(nn.ReLU, inplace=True)
    """
    out = fixed(source)
    assert "conv3x3 = partial(t2ms_support.Conv2d, kernel_size=3, padding=1, bias=False)\n" in port(source)
    assert "act = partial(mindspore.mint.nn.ReLU)\n" in out  # the last keyword dropped with its comma
    assert "partial(mindspore.nn.Conv2d, kernel_size=3, padding=1, has_bias=False, pad_mode='pad')" in out
    assert "partial(mindspore.nn.Conv2d, 16, 32, pad_mode='pad', has_bias=True)" in out  # torch's defaults written


# ------------------------------------------------------------------------------------------ running
def run_both(tmp_path: Path, source: str, rewrite: Callable[[str], str] | None = None, graph: bool = False,
             ) -> tuple[str, dict[str, list[list[float]]], dict[str, list[list[float]]]]:
    """The program's `case_*` functions' results in torch and, after `migrate` (or `rewrite`), in MindSpore
    (torch blocked; `graph`: in GRAPH mode)."""
    text = textwrap.dedent(source)
    ported = rewrite(text) if rewrite is not None else migrate_text(text, "prog.py").text
    results = []
    for side, code in (("torch", text), ("mindspore", ported)):
        folder = tmp_path / side
        folder.mkdir()
        (folder / "prog.py").write_text(code)
        if side == "mindspore" and f"import {support.MODULE}\n" in code:  # as migrate writes it beside the port
            config = Config()
            (folder / f"{support.MODULE}.py").write_text(support.module_text(load_table(), config.version,
                                                                             config.device))
        code, stderr, result = case_results(folder, "graph" if graph and side == "mindspore" else side)
        assert code == 0, f"{side}:\n{stderr[-3000:]}\n{ported}"
        results.append(result)
    return ported, results[0], results[1]


def assert_same(ported: str, torch_side: dict[str, list[list[float]]], ms_side: dict[str, list[list[float]]]) -> None:
    assert_same_results(torch_side, ms_side, rtol=1e-4, atol=1e-5, context=ported)


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
@pytest.mark.slow
def test_batchnorm_running_statistics_after_a_training_step_in_every_call_form(tmp_path: Path) -> None:
    ported, torch_side, ms_side = run_both(tmp_path, """
        from functools import partial
        import numpy as np
        import torch
        import torch.nn as nn

        DATA = np.random.RandomState(0).rand(6, 4).astype(np.float32) * 3 + 1
        IMAGES = np.random.RandomState(1).rand(2, 3, 4, 4).astype(np.float32) * 3 + 1


        class SqueezeStem(nn.Module):
            def __init__(self, channels, norm_layer=partial(nn.BatchNorm2d, momentum=0.01), bn_mom=0.25):
                super().__init__()
                self.bn_mom = bn_mom
                self.norm = norm_layer(channels)
                self.other = nn.BatchNorm2d(channels, 1e-3, self.bn_mom)

            def forward(self, x):
                return self.other(self.norm(x))


        def stats(layer):
            mean = layer.running_mean if hasattr(layer, "running_mean") else layer.moving_mean
            return mean

        def case_direct():
            bn = nn.BatchNorm1d(4, momentum=0.3)
            bn(torch.tensor(DATA))
            return stats(bn)

        def case_positional():
            bn = nn.BatchNorm1d(4, 1e-5, 0.6)
            bn(torch.tensor(DATA))
            return stats(bn)

        def case_partial_and_attribute():
            stem = SqueezeStem(3)
            stem.train()  # a layer a partial builds takes its mode from the Cell holding it
            stem(torch.tensor(IMAGES))
            return stats(stem.norm), stats(stem.other)
    """)
    # the partial's layer translates torch's momentum when it is built (the support module's layer)
    assert "partial(t2ms_support.BatchNorm2d, momentum=0.01)" in ported and "1 - (self.bn_mom)" in ported
    assert_same(ported, torch_side, ms_side)


def test_composed_forms_bind_the_call_and_keep_operands_whole() -> None:
    out = port("""
        import torch
        import torch.nn.functional as F

        def shift_tokens(tokens: torch.Tensor, pad: torch.Tensor):
            rolled = torch.roll(tokens, shifts=-1, dims=1)
            cosine = F.normalize(tokens * 2, p=1.0)
            first = tokens.roll(1)
            lo, hi = tokens.aminmax()
            return rolled, cosine, first, lo, hi, tokens.aminmax(dim=0)
    """)
    assert "mindspore.numpy.roll(tokens, -1, 1)" in out
    assert "(tokens * 2) / mindspore.ops.clamp(mindspore.ops.norm((tokens * 2), 1.0, 1, keepdim=True), min=1e-12)" in out
    assert "mindspore.numpy.roll(tokens, 1, None)" in out
    assert "tokens.reshape(-1).aminmax(axis=0)" in out
    assert "tokens.aminmax(axis=0)" in out  # a dim given: MindSpore's own call


def test_a_composed_argument_used_twice_is_evaluated_once() -> None:
    out = port("""
        import torch.nn.functional as F

        def embed(model, x):
            return F.normalize(model(x), dim=-1)
    """)
    assert "(lambda __input: __input / mindspore.ops.clamp(mindspore.ops.norm(__input, 2.0, -1, keepdim=True), " \
           "min=1e-12))(model(x))" in out


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
@pytest.mark.slow
def test_composed_forms_and_bound_arguments_give_torchs_results_on_cpu(tmp_path: Path) -> None:
    ported, torch_side, ms_side = run_both(tmp_path, """
        from functools import partial
        import numpy as np
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        X = np.random.RandomState(0).rand(3, 5).astype(np.float32) - 0.5
        T = np.sign(np.random.RandomState(1).rand(3, 5).astype(np.float32) - 0.5)
        IDS = np.array([[0, 2, 4], [1, 3, 0]], dtype=np.int64)


        class TokenMixer(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.table = nn.Parameter(torch.tensor(np.arange(6 * dim, dtype=np.float32).reshape(6, dim)))
                self.act = nn.ReLU(inplace=True)
                self.dim = dim

            def forward(self, ids, feats):
                rows = F.embedding(ids, self.table, padding_idx=0)
                mixed = torch.roll(feats, shifts=1, dims=-1) + feats.roll(-2)
                normed = F.layer_norm(mixed, (self.dim,), eps=1e-6)
                return rows, F.normalize(self.act(normed), dim=-1)


        def case_hinge_positional():
            x, t = torch.tensor(X), torch.tensor(T)
            return torch.hinge_embedding_loss(x, t, 0.5, 2), torch.hinge_embedding_loss(x, t, 0.5, 0)

        def case_mixer():
            return TokenMixer(5)(torch.tensor(IDS), torch.tensor(X))

        def case_layer_norm_affine():
            x = torch.tensor(X)
            w = torch.tensor(np.linspace(0.5, 1.5, 5).astype(np.float32))
            return F.layer_norm(x, [5], w, w * 0.1)

        def case_vander_and_aminmax():
            x = torch.tensor(X)
            lo, hi = x.aminmax()
            return torch.linalg.vander(x[0], N=4), lo, hi

        def case_inplace():
            x = torch.tensor(X)
            y = F.relu(x, inplace=True)
            z = torch.tensor(X)
            z.zero_()
            return x, y, z

        class Stage(nn.Module):  # layers passed as classes, built later with their own arguments

            def __init__(self, dim, norm_layer=nn.LayerNorm, act_layer=nn.ReLU, pool_norm=nn.BatchNorm1d):
                super().__init__()
                self.pre = norm_layer(dim)
                self.post = norm_layer(dim, eps=0.5)
                self.act = act_layer(inplace=True)
                self.stat = pool_norm(dim, momentum=0.3)

            def forward(self, x):
                self.stat(x)
                return self.post(self.act(self.pre(x))), self.stat.running_mean if hasattr(self.stat, "running_mean") \
                    else self.stat.moving_mean


        class Head(nn.Module):
            def __init__(self, dim, norm_layer=partial(nn.LayerNorm, eps=0.25)):
                super().__init__()
                self.norm = norm_layer(dim)

            def forward(self, x):
                return self.norm(x)

        def case_classes_as_values():
            stage = Stage(5)
            stage.train()
            x = torch.tensor(X)
            return (*stage(x), Head(5)(x))

        class Patches(nn.Module):  # layers with no CPU kernel, held as attributes and called in forward
            def __init__(self):
                super().__init__()
                self.unfold = nn.Unfold(kernel_size=2, stride=2)
                self.norm = nn.InstanceNorm2d(3, eps=1e-3)

            def forward(self, x):
                return self.unfold(self.norm(x))

        def case_layers_without_a_cpu_kernel():
            images = torch.tensor(np.random.RandomState(2).rand(2, 3, 4, 4).astype(np.float32))
            return Patches()(images), nn.InstanceNorm1d(4)(torch.tensor(X[:, :4]).reshape(1, 3, 4).transpose(1, 2))

        def case_cholesky_inverse_by_keyword():
            a = torch.tensor(np.array([[2.0, 0.0], [0.5, 1.5]], dtype=np.float32))
            return torch.cholesky_inverse(input=a)

        def case_normal_init():
            w = torch.tensor(np.zeros((100, 100), dtype=np.float32))
            w.normal_(0.0, 0.02)
            return float(abs(float(w.std()) - 0.02) < 0.002), float(abs(float(w.mean())) < 0.002)
    """)
    assert "import torch" not in ported
    # the classes are the support module's layers: their calls keep torch's arguments, translated when built
    assert "norm_layer=t2ms_support.LayerNorm, act_layer=t2ms_support.ReLU, pool_norm=t2ms_support.BatchNorm1d" \
        in ported
    assert "norm_layer(dim, eps=0.5)" in ported and "pool_norm(dim, momentum=0.3)" in ported
    assert_same(ported, torch_side, ms_side)


def test_a_call_of_a_held_class_is_translated_once_while_the_class_stays_torch() -> None:
    """The class value is left as torch (a noqa), so every round of `--fix` still sees torch's class: its
    call's momentum is translated in the first round only (1 - (1 - m) would give torch's value back)."""
    from torch2ms.fix import fix_text

    source = textwrap.dedent("""
        import torch.nn as nn

        def make_norm(dim, norm=nn.BatchNorm1d):  # noqa: TMS101
            return norm(dim, momentum=0.3)
    """)
    out = fix_text(source, "norms.py", unsafe=True).text
    assert "norm(dim, momentum=0.7)" in out
    assert "norm=nn.BatchNorm1d" in out


def test_an_inplace_composed_form_writes_only_into_a_named_tensor() -> None:
    out = port("""
        import torch.nn.functional as F

        def clip_negative(state, rows):
            F.relu(state.hidden, inplace=True)
            F.relu(rows[0], inplace=True)
            return state, rows
    """)
    assert "state.hidden.copy_(mindspore.ops.relu(state.hidden))" in out
    assert "F.relu(rows[0], inplace=True)" in out  # a view would not be written through: left, with its finding


def test_a_later_call_of_a_partial_with_positional_arguments_is_not_bound_as_the_class() -> None:
    """`make(1e-3, 0.2)` binds after the partial's own positional argument: read as the class's call, 0.2 would
    be taken for eps and the momentum left untranslated. The fix rewrites the partial itself and leaves the later
    call as it is; migrate writes the support module's layer, which binds both as torch does."""
    source = """
        from functools import partial
        import torch.nn as nn

        make = partial(nn.BatchNorm2d, 8)
        norm = make(1e-3, 0.2)
    """
    out = fixed(source)
    assert "make = partial(mindspore.nn.BatchNorm2d, 8)" in out
    assert "norm = make(1e-3, 0.2)\n" in out
    out = port(source)  # migrate: the support module's layer binds the later call as torch does
    assert "make = partial(t2ms_support.BatchNorm2d, 8)\nnorm = make(1e-3, 0.2)\n" in out


def test_a_renamed_parameter_passed_by_position_goes_by_keyword_where_mindspore_orders_it_otherwise() -> None:
    """nn.LayerNorm's eps is its second parameter in torch; in mindspore.nn.LayerNorm the second is
    begin_norm_axis (epsilon comes later): the value goes by keyword, or the call is left when a later
    positional argument stops it from moving. Layers of another kind keep their keyword as before."""
    from torch2ms.config import Config
    from torch2ms.fix import fix_text
    from torch2ms.mappings import load_table
    from torch2ms.portcheck.api import load_api

    signature = load_api().name("mindspore.nn.LayerNorm").signature
    assert signature is not None and signature.positional()[1].name == "begin_norm_axis"
    source = textwrap.dedent("""\
        import torch
        norm = torch.nn.LayerNorm((16,), 1e-6)
        kept = torch.nn.LayerNorm((16,), 1e-6, True, False)
        named = torch.nn.LayerNorm((16,), eps=1e-6)
    """)
    out = fix_text(source, "m.py", Config(device="cpu"), True, load_table()).text
    assert "norm = mindspore.nn.LayerNorm((16,), epsilon=1e-6)" in out
    assert "kept = torch.nn.LayerNorm((16,), 1e-6, True, False)" in out
    assert "named = mindspore.nn.LayerNorm((16,), epsilon=1e-6)" in out


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
def test_the_layernorm_the_fix_writes_with_eps_by_keyword_gives_torchs_result(tmp_path: Path) -> None:
    """The exact text the fix writes for `nn.LayerNorm((16,), 1e-6)` runs in MindSpore and agrees with torch."""
    from torch2ms.config import Config
    from torch2ms.fix import fix_text
    from torch2ms.mappings import load_table

    torch_line = "norm = torch.nn.LayerNorm((16,), 1e-6)"
    fixed = fix_text(f"import torch\n{torch_line}\n", "m.py", Config(device="cpu"), True, load_table()).text
    ms_line = next(line for line in fixed.splitlines() if line.startswith("norm = "))
    assert "epsilon=1e-6" in ms_line
    program = textwrap.dedent(f"""\
        import numpy as np, torch, mindspore
        x = np.random.default_rng(0).random((2, 16)).astype(np.float32)
        {torch_line}
        expected = norm(torch.tensor(x)).detach().numpy()
        {ms_line}
        got = norm(mindspore.Tensor(x)).asnumpy()
        print(float(np.abs(got - expected).max()))
    """)
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert float(out.stdout.strip().splitlines()[-1]) < 1e-5
