"""What kept torch alive in ported code, written the way many libraries write it: attention through
torch's fused function, torch's float constants, ... Each becomes MindSpore (a composed form, a plain-Python
name) named by the tables, and the port runs in MindSpore with torch blocked and gives torch's results."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_binding import assert_same, run_both

from torch2ms.migrate.pipeline import migrate_text


def port(source: str) -> str:
    return migrate_text(textwrap.dedent(source), "prog.py").text


def test_torch_float_constants_become_the_math_modules() -> None:
    out = port("""
        import torch
        from torch import inf


        def circle(radius):
            return 2 * torch.pi * radius, torch.e ** radius, -inf, torch.nan
    """)
    assert "import torch" not in out and "from torch" not in out
    assert "import math" in out
    assert "return 2 * math.pi * radius, math.e ** radius, -math.inf, math.nan" in out


def test_fused_attention_is_composed_with_every_argument_bound() -> None:
    out = port("""
        import torch.nn.functional as F


        def attend(q, k, v, bias, training, rate):
            return F.scaled_dot_product_attention(q, k, v, bias, dropout_p=rate if training else 0.0, scale=0.5)
    """)
    assert "import torch" not in out and "scaled_dot_product_attention" not in out
    assert out.rstrip().endswith("(q, k, v, bias, (rate if training else 0.0), False, 0.5, False)")


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
@pytest.mark.slow
def test_fused_attention_and_constants_give_torchs_results_on_cpu(tmp_path: Path) -> None:
    ported, torch_side, ms_side = run_both(tmp_path, """
        import numpy as np
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        R = np.random.RandomState(0)
        X = R.rand(2, 5, 8).astype(np.float32)
        MEMORY = R.rand(2, 7, 8).astype(np.float32)
        KEEP = R.rand(5, 7) > 0.4
        KEEP[:, 0] = True
        BIAS = R.rand(2, 1, 5, 7).astype(np.float32)


        class Attend(nn.Module):  # torch's fused attention in a layer, its dropout only in training
            def __init__(self, causal):
                super().__init__()
                self.causal = causal
                self.rate = 0.25

            def forward(self, q, k, v):
                return F.scaled_dot_product_attention(q, k, v, dropout_p=self.rate if self.training else 0.0,
                                                      is_causal=self.causal)


        def case_masks():
            x, memory = torch.tensor(X), torch.tensor(MEMORY)
            q = x.reshape(2, 5, 2, 4).transpose(1, 2)
            k = memory.reshape(2, 7, 2, 4).transpose(1, 2)
            plain = F.scaled_dot_product_attention(q, k, k)
            kept = F.scaled_dot_product_attention(q, k, k, torch.tensor(KEEP))
            added = F.scaled_dot_product_attention(q, k, k, attn_mask=torch.tensor(BIAS), scale=0.3)
            return plain, kept, added

        def case_causal_self_attention():
            q = torch.tensor(X).reshape(2, 5, 2, 4).transpose(1, 2)
            layer = Attend(True)
            layer.eval()
            return F.scaled_dot_product_attention(q, q, q, is_causal=True), layer(q, q * 0.5, q)

        def case_grouped_heads():
            q = torch.tensor(X).reshape(2, 5, 4, 2).transpose(1, 2)
            k = torch.tensor(MEMORY).reshape(2, 7, 4, 2).transpose(1, 2)[:, :2]
            return F.scaled_dot_product_attention(q, k, k * 2, enable_gqa=True)

        def case_constants():
            return torch.tensor(X[0, 0]) * torch.pi, torch.e, torch.tensor(X[0]).clamp(max=torch.inf)
    """)
    assert "import torch" not in ported
    assert_same(ported, torch_side, ms_side)


def test_a_composed_form_imports_the_modules_it_names_once() -> None:
    out = port("""
        import numpy as np
        import torch
        import torch.nn.functional as F


        def limits(x, w):
            return torch.finfo(x.dtype).min, torch.iinfo(torch.int16).max, F.rms_norm(x, (4,), w)
    """)
    assert out.count("import numpy\n") == 1 and "import numpy as np\n" in out  # the alias is the file's own
    assert "numpy.finfo(str(x.dtype).lower()).min" in out
    assert "numpy.iinfo(str(mindspore.int16).lower()).max" in out
    assert "import torch" not in out


def test_a_factory_is_composed_only_where_it_passes_what_the_single_call_lacks() -> None:
    out = port("""
        import torch


        def ramps(n, device):
            return torch.linspace(0, 1, n), torch.linspace(-1.0, 1.0, steps=n, device=device, dtype=torch.float16)
    """)
    assert "return mindspore.ops.linspace(0, 1, n), mindspore.ops.linspace(-1.0, 1.0, n).astype(" in out
    assert "import torch" not in out


def test_mixed_precision_switched_off_is_plain_code_and_switched_on_stays_with_its_finding() -> None:
    result = migrate_text(textwrap.dedent("""\
        import torch


        def blend(x, y, device):
            if torch.is_autocast_enabled() or torch.is_autocast_cpu_enabled():
                x = x.float()
            with torch.amp.autocast(device_type=device.type, enabled=False):
                mixed = x * y
            with torch.autocast(device.type, None, True):
                return mixed + x
    """), "prog.py")
    out = result.text
    assert "    if False or False:\n        x = x.float()\n    mixed = x * y\n" in out
    assert "    with torch.autocast(device.type, None, True):\n        return mixed + x" in out
    assert out.startswith("import torch\n")  # still needed at module level, never moved into the function
    assert any(d.torch_api == "torch.autocast" and d.span.start_line == 8 for d in result.result.diagnostics)


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
@pytest.mark.slow
def test_limits_norms_and_factories_give_torchs_results_on_cpu(tmp_path: Path) -> None:
    ported, torch_side, ms_side = run_both(tmp_path, """
        import numpy as np
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        R = np.random.RandomState(5)
        X = R.rand(3, 4, 5).astype(np.float32) * 2 - 0.5
        G = R.rand(5).astype(np.float32) + 0.5
        IMAGES = R.rand(2, 3, 4, 4).astype(np.float32)
        KERNEL = R.rand(6, 3, 3, 3).astype(np.float32) - 0.5


        class StandardizedConv(nn.Module):  # weights normalised per output channel before each use
            def __init__(self):
                super().__init__()
                self.weight = nn.Parameter(torch.tensor(KERNEL))
                self.gain = nn.Parameter(torch.tensor(np.linspace(0.5, 1.5, 6).astype(np.float32)))

            def forward(self, x):
                w = F.batch_norm(self.weight.reshape(1, 6, -1), None, None, weight=self.gain, training=True,
                                 momentum=0.0, eps=1e-6).reshape(6, 3, 3, 3)
                return w


        def case_limits():
            x = torch.tensor(X)
            return (torch.finfo(x.dtype).min, torch.finfo(torch.float16).eps, torch.finfo().tiny,
                    torch.finfo(torch.float64).max, torch.iinfo(torch.int32).max,
                    torch.iinfo(torch.int8).min, torch.finfo(x.dtype).bits)

        def case_rms_norm():
            x = torch.tensor(X)
            return F.rms_norm(x, (5,), torch.tensor(G), 1e-6), F.rms_norm(x, [4, 5]), torch.rms_norm(x, (5,), eps=0.1)

        def case_batch_statistics():
            images = torch.tensor(IMAGES)
            plain = F.batch_norm(images, None, None, training=True)
            affine = F.batch_norm(images, None, None, torch.tensor(G[:3]), torch.tensor(G[1:4]), True, 0.1, 1e-3)
            return plain, affine, StandardizedConv()(images)

        def case_mixed_precision_switched_off():
            x = torch.tensor(X)
            if torch.is_autocast_enabled():
                x = x.half()
            with torch.amp.autocast(device_type="cpu", enabled=False):
                y = x * 2
            with torch.autocast("cpu", torch.bfloat16, False):
                z = y + x
            return y, z

        def case_linspace():
            a = torch.linspace(-1.0, 1.0, steps=5, device="cpu")
            b = torch.linspace(0, 10, 4, dtype=torch.int64)
            c = torch.linspace(0.5, 2.0, 7, dtype=torch.float64)
            return a, b, c, float(c.dtype == torch.float64), float(b.dtype == torch.int64)
    """)
    assert "import torch" not in ported
    assert_same(ported, torch_side, ms_side)


LOADER = textwrap.dedent("""\
    from torch.utils import model_zoo
    import torch.nn as nn


    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)


    def pretrained(url):
        head = Head()
        state = model_zoo.load_url(url, map_location="cpu")
        head.load_state_dict(state)
        return head
""")


def test_a_checkpoint_loader_from_a_url_imports_no_torch() -> None:
    out = port(LOADER)
    assert "torch" not in out.replace("mindspore", "")  # nothing left, nothing moved into the function
    assert "import urllib.request\n" in out
    assert "state = mindspore.load_checkpoint(urllib.request.urlretrieve(url)[0])" in out


@pytest.mark.needs_mindspore
def test_the_ported_loader_reads_a_mindspore_checkpoint_from_a_url(tmp_path: Path) -> None:
    (tmp_path / "loader.py").write_text(port(LOADER))
    script = textwrap.dedent("""\
        import sys
        sys.modules["torch"] = None  # the port must not need torch
        sys.path.insert(0, sys.argv[1])
        import pathlib
        import mindspore
        import loader
        head = loader.Head()
        for p in head.get_parameters():
            p.set_data(mindspore.ops.full(p.shape, 0.5, dtype=p.dtype))
        path = pathlib.Path(sys.argv[1]) / "head.ckpt"
        mindspore.save_checkpoint(head, str(path))
        loaded = loader.pretrained(path.as_uri())
        print(sorted(float(p.asnumpy().sum()) for p in loaded.get_parameters()))
    """)
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True,
                          env=dict(os.environ, GLOG_v="3"), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == "[1.0, 3.0]"  # bias 2 x 0.5, weight 6 x 0.5


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
@pytest.mark.slow
def test_the_composed_forms_compile_in_graph_mode(tmp_path: Path) -> None:
    ported, torch_side, ms_side = run_both(tmp_path, """
        import numpy as np
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        X = np.random.RandomState(7).rand(2, 2, 4, 6).astype(np.float32)


        class Block(nn.Module):  # every composed form inside one layer's forward
            def forward(self, x):
                if torch.is_autocast_enabled():
                    x = x.half()
                with torch.autocast("cpu", enabled=False):
                    keep = x.sum(-1, keepdim=True) > torch.finfo(x.dtype).eps
                attended = F.scaled_dot_product_attention(x, x, x, is_causal=True)
                normed = F.rms_norm(attended, (6,))
                stats = F.batch_norm(normed, None, None, training=True, eps=1e-3)
                ramp = torch.linspace(0.0, 1.0, 6, dtype=torch.float32, device="cpu")
                return stats * ramp * torch.pi, keep


        def case_block_in_graph_mode():
            return Block()(torch.tensor(X))
    """, graph=True)
    assert "import torch" not in ported
    assert_same(ported, torch_side, ms_side)
