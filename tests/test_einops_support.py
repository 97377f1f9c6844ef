"""einops in a port: the tables' einops entries (scripts/mapping_libraries.yaml) name the support module's
functions and layers, which run einops's pattern analysis and MindSpore operators. Checked on a small program
written the way vision and sequence models write einops code (patches, heads, pooling, a repeated token, a list
input, an ellipsis), migrated, and run in MindSpore (torch blocked; PyNative and GRAPH mode) against torch."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from case_runner import assert_port_agrees, migrate_program
from torch2ms.config import Config
from torch2ms.engine import scan_source
from torch2ms.mappings import load_table
from torch2ms.migrate import support
from torch2ms.migrate.pipeline import migrate_text
from torch2ms.model import ApiCall, Arg, CallKind, Span
from torch2ms.transforms.compose import bind

ROOT = Path(__file__).resolve().parent.parent

PROGRAM = textwrap.dedent("""\
    import numpy as np
    import torch
    from torch import nn
    import einops
    from einops import rearrange, reduce, repeat
    from einops.layers.torch import Rearrange, Reduce

    RNG = np.random.RandomState(3)
    IMAGES = RNG.rand(2, 3, 8, 8).astype(np.float32) * 2 - 1
    TOKENS = RNG.rand(2, 5, 12).astype(np.float32)


    class TokenMixer(nn.Module):
        \"\"\"Cuts images into patches, splits heads, pools: no weights, so both frameworks compute the same.\"\"\"

        def __init__(self, patch=4, heads=3):
            super().__init__()
            self.patches = nn.Sequential(Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=patch, p2=patch))
            self.pool = Reduce("b n d -> b d", "mean")
            self.heads = heads

        def forward(self, images, tokens):
            x = self.patches(images)                                   # b 4 48
            cls = repeat(tokens[:, :1], "b () d -> b n d", n=x.shape[1])
            q = rearrange(tokens, "b n (h d) -> b h n d", h=self.heads)
            back = rearrange(q, "b h n d -> b n (h d)")
            peak = reduce(x, "b n (k d) -> b n k", "max", k=3)
            return self.pool(x), cls, back, peak, reduce(q, "b h n d -> h", "sum")


    def case_mixer():
        net = TokenMixer()
        return net(torch.tensor(IMAGES), torch.tensor(TOKENS))


    def case_reductions():
        x = torch.tensor(IMAGES)
        return (reduce(x, "b c (h h2) (w w2) -> b c h w", "min", h2=2, w2=2),
                einops.reduce(x, "b c h w -> b", "prod"), reduce(x, "b c h w -> b c 1 1", "mean"))


    def case_list_and_ellipsis():
        a, b = torch.tensor(TOKENS), torch.tensor(TOKENS) * 2
        return rearrange([a, b], "s b n d -> b n s d"), rearrange(a, "b ... d -> b d ...")


    def case_einsum():
        q, k = torch.tensor(TOKENS), torch.tensor(TOKENS[:, :3]) * 0.5
        return einops.einsum(q, k, "batch query dim, batch key dim -> batch query key")


    def case_pack_and_shape():
        a, b = torch.tensor(TOKENS), torch.tensor(IMAGES.reshape(2, 4, 4, 12))
        packed, shapes = einops.pack([a, b], "b * d")
        first, second = einops.unpack(packed, shapes, "b * d")
        sizes = einops.parse_shape(a, "b n _")
        return packed, first, second, torch.tensor([sizes["b"], sizes["n"]])
""")


def test_einops_uses_are_findings_that_name_the_support_module() -> None:
    """Before this, a port using einops scanned clean and failed when run: each use is on the to-do list."""
    findings = scan_source(PROGRAM, "prog.py", Config(device="cpu")).diagnostics
    einops_apis = {d.torch_api for d in findings if d.torch_api and d.torch_api.startswith("einops.")}
    assert {"einops.rearrange", "einops.reduce", "einops.repeat", "einops.pack", "einops.unpack",
            "einops.parse_shape", "einops.einsum", "einops.layers.torch.Rearrange",
            "einops.layers.torch.Reduce"} <= einops_apis
    assert all("t2ms_support" in d.message for d in findings if d.torch_api in einops_apis)


def test_migrate_writes_the_support_forms_and_drops_the_einops_imports() -> None:
    out = migrate_text(PROGRAM, "prog.py").text
    ms = support.MODULE
    for written in (f'{ms}.Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=patch, p2=patch)',
                    f'{ms}.Reduce("b n d -> b d", "mean")', f'{ms}.repeat(tokens[:, :1], "b () d -> b n d"',
                    f'{ms}.reduce(x, "b c h w -> b", "prod")', f'{ms}.pack([a, b], "b * d")',
                    f'{ms}.unpack(packed, shapes, "b * d")', f'{ms}.parse_shape(a, "b n _")'):
        assert written in out
    assert "from einops" not in out and "import einops" not in out and "import torch" not in out


def test_support_entries_bind_extra_keywords_only_where_the_table_says_so() -> None:
    span = Span(1, 0, 1, 10)
    call = ApiCall(api="einops.rearrange", kind=CallKind.CALL, span=span,
                   args=(Arg(None, span), Arg(None, span), Arg("h", span)))
    assert bind(call, ("tensor", "pattern")) is None  # an axis length the parameters do not name
    bound = bind(call, ("tensor", "pattern", "**"))
    assert bound is not None and set(bound) == {"tensor", "pattern", "h"}
    assert bind(call, ("tensor", "**")) is None  # too many positionals stays unbound


def test_the_einops_entries_are_the_tables() -> None:
    table = load_table()
    assert "einops" in table.roots
    entry = table.entries["einops.layers.torch.Rearrange"]
    assert entry.rewrite is not None and entry.rewrite.arg("name") == f"{support.MODULE}.Rearrange"


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
@pytest.mark.needs_einops
@pytest.mark.slow
def test_the_port_computes_what_einops_computes_on_torch(tmp_path: Path) -> None:

    out = migrate_program(tmp_path, PROGRAM)
    # GRAPH: the mixer's construct is compiled
    assert_port_agrees(tmp_path / "src", out, ("mindspore", "graph"), rtol=1e-6, atol=1e-6)


@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
@pytest.mark.needs_einops
@pytest.mark.slow
def test_the_support_forms_are_differentiable_and_einmix_contracts(tmp_path: Path) -> None:
    """A training step through a rearranged, pooled tensor: the gradient is einops's on numpy, worked by hand; an
    EinMix layer with given weights computes numpy's contraction plus its bias."""
    (tmp_path / f"{support.MODULE}.py").write_text(support.module_text(load_table(), (2, 10), "cpu"))
    script = textwrap.dedent(f"""\
        import numpy as np, mindspore, {support.MODULE} as s
        x = mindspore.Tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
        loss = lambda v: (s.reduce(s.rearrange(v, "b c (h w) -> b h w c", w=2), "b h w c -> b c", "max") ** 2).sum()
        grad = mindspore.grad(loss)(x).asnumpy()
        want = np.zeros((2, 3, 4), np.float32)
        want[:, :, 3] = 2 * np.arange(24, dtype=np.float32).reshape(2, 3, 4)[:, :, 3]
        print(np.array_equal(grad, want))
        mix = s.EinMix("b t c -> b t d", weight_shape="c d", bias_shape="d", c=3, d=5)
        w, bias = np.random.RandomState(0).rand(3, 5).astype(np.float32), np.arange(5, dtype=np.float32)
        mix.weight.set_data(mindspore.Tensor(w))
        mix.bias.set_data(mindspore.Tensor(bias))
        tokens = np.random.RandomState(1).rand(2, 4, 3).astype(np.float32)
        print(np.allclose(mix(mindspore.Tensor(tokens)).asnumpy(), np.einsum("btc,cd->btd", tokens, w) + bias, atol=1e-6))
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
                          env=dict(os.environ, GLOG_v="3"), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-2:] == ["True", "True"]
