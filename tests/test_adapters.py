"""Torch-signature layers (the support module `migrate` writes once per output tree, torch2ms.migrate.support):
torch layer classes where no rewrite of a call can stand for them (a base class, a class passed as a value, a
call unpacking its arguments). Checked on small programs written the way other libraries write these
constructs: the text `migrate` writes, the support module against the installed torch's signatures and
attributes, the parameter-name maps, and the port run in MindSpore (torch blocked) against torch."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from case_runner import assert_port_agrees, migrate_program
from torch2ms.mappings import load_table
from torch2ms.migrate import support
from torch2ms.migrate.pipeline import migrate_text

ROOT = Path(__file__).resolve().parent.parent
VERSION, DEVICE = (2, 10), "cpu"

PROGRAM = textwrap.dedent("""\
    from functools import partial
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    IMAGES = np.random.RandomState(1).rand(2, 4, 6, 6).astype(np.float32) * 4 - 2


    class PixelNorm(nn.LayerNorm):
        \"\"\"Normalizes channels of an NCHW map (the channels-last layer norm many vision packages write).\"\"\"

        def __init__(self, channels, eps=1e-6, affine=True):
            super().__init__(channels, eps=eps, elementwise_affine=affine)

        def forward(self, x):
            x = x.permute(0, 2, 3, 1)
            x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
            return x.permute(0, 3, 1, 2)


    class DoubledNorm(nn.BatchNorm2d):
        def __init__(self, c, eps=1e-5, momentum=0.3):
            super().__init__(c, eps=eps, momentum=momentum)

        def forward(self, x):
            return super().forward(x) * 2


    class ShiftedConv(nn.Conv2d):
        \"\"\"A convolution whose forward reads the layer's own attributes.\"\"\"

        def __init__(self, cin, cout, k, stride=1, dilation=1, groups=1, bias=True):
            super().__init__(cin, cout, k, stride, 0, dilation, groups, bias)

        def forward(self, x):
            pad = self.kernel_size[0] // 2
            x = F.pad(x, (pad, pad, pad, pad))
            return super().forward(x) + self.stride[0]


    def make_conv(cin, cout, k, **options):
        return nn.Conv2d(cin, cout, k, **options)


    soft_gelu = partial(nn.GELU, approximate='tanh')


    class Stem(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = make_conv(4, 4, 3, padding=1, bias=False)
            self.shifted = ShiftedConv(4, 4, 3)
            self.norm = PixelNorm(4)
            self.tail = nn.LayerNorm(6, eps=1e-3)
            self.act = soft_gelu()

        def forward(self, x):
            return self.tail(self.act(self.norm(self.shifted(self.conv(x)))))


    def case_gelu_partial():
        return soft_gelu()(torch.tensor(IMAGES))

    def case_layer_norm_subclass():
        norm = PixelNorm(4)
        return norm(torch.tensor(IMAGES)), torch.tensor(norm.normalized_shape)

    def case_batch_norm_subclass_trains():
        bn = DoubledNorm(4)
        bn.train()
        y = bn(torch.tensor(IMAGES))
        return y, bn.running_mean, bn.running_var

    def case_conv_attributes():
        conv = make_conv(4, 2, 3, stride=2, padding=1, groups=2)
        return torch.tensor(conv.kernel_size), torch.tensor(conv.stride), torch.tensor(conv.padding), conv.groups
""")


def port(source: str) -> str:
    return migrate_text(textwrap.dedent(source), "prog.py").text


# ------------------------------------------------------------------------------------------ text
def test_the_places_no_call_rewrite_reaches_use_the_support_layers() -> None:
    out = port(PROGRAM)
    ms = support.MODULE
    assert f"class PixelNorm({ms}.LayerNorm):" in out
    assert f"class DoubledNorm({ms}.BatchNorm2d):" in out  # not MindSpore's class with torch's momentum
    assert f"class ShiftedConv({ms}.Conv2d):" in out
    assert f"return {ms}.Conv2d(cin, cout, k, **options)" in out  # arguments known only when it runs
    assert f"soft_gelu = partial({ms}.GELU, approximate='tanh')" in out
    assert f"\nimport {ms}\n" in out
    assert "super().__init__(channels, eps=eps, elementwise_affine=affine)" in out  # torch's arguments, as written
    assert "def construct(self, x):" in out and "import torch" not in out


def test_calls_whose_arguments_bind_stay_the_fixs() -> None:
    out = port("""
        from functools import partial
        import torch.nn as nn

        class Head(nn.Module):
            def __init__(self, width, momentum=None):
                super().__init__()
                self.proj = nn.Conv2d(width, width, 1, padding=0)
                self.bn = nn.BatchNorm3d(width, momentum=None)
                self.kinds = (nn.Conv2d, nn.LayerNorm)
                made = partial(nn.LayerNorm, 4, 1e-3), partial(nn.LayerNorm, 4, 1e-3, False)

            def forward(self, x):
                if isinstance(self.proj, nn.Conv2d):
                    return self.proj(x)
                return x
    """)
    assert "mindspore.nn.Conv2d(width, width, 1, padding=0" in out  # the fix's rewrite
    assert "nn.BatchNorm3d(width, momentum=None)" in out  # left by the fix, with its finding: not hidden
    assert "isinstance(self.proj, mindspore.nn.Conv2d)" in out  # a type: the MindSpore class
    # a class as a value is the support layer, whatever calls it later gets torch's signature; a partial keeps
    # torch's arguments as written (the layer binds them when it is built, and refuses what it cannot take)
    assert f"self.kinds = ({support.MODULE}.Conv2d, {support.MODULE}.LayerNorm)\n" in out
    assert f"made = partial({support.MODULE}.LayerNorm, 4, 1e-3), partial({support.MODULE}.LayerNorm, 4, 1e-3, False)\n" \
        in out
    assert "functools" not in out.replace("from functools import partial", "")  # no partial written for a type


def test_a_file_without_torch_layers_is_left_alone() -> None:
    text = "import math\n\nclass Plain:\n    pass\n"
    assert support.adapt(text, text, load_table(), VERSION, DEVICE, support.MODULE) == (text, [])


def test_support_module_is_generated_from_the_tables() -> None:
    table = load_table()
    text = support.support_text(table, VERSION, DEVICE)
    tree = ast.parse(text)
    classes = {node.name: ast.unparse(node.bases[0]) for node in tree.body if isinstance(node, ast.ClassDef)}
    expected = {layer.name: layer.base for layer in support.layers(table, VERSION, DEVICE)}
    assert classes == expected and len(classes) >= 15
    for name, base in classes.items():  # each derives from the form the tables choose for the device
        entry = table.lookup(f"torch.nn.{name}")
        assert entry is not None and entry.adapter is not None
        target = entry.target_for(VERSION, DEVICE)
        assert target is not None and target.api == base
    assert "lambda value: 1 - value" in text  # BatchNorm's momentum, from its translation fact
    assert "'pad_mode', 'pad'" in text  # a MindSpore-only parameter at torch's behaviour (default_differs)
    assert "return self.gamma" in text  # torch's weight of LayerNorm, from the weight facts


def test_import_name_inside_a_package_and_at_a_plain_root(tmp_path: Path) -> None:
    package = tmp_path / "vision_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    plain = tmp_path / "scripts"
    plain.mkdir()
    assert support.import_name([str(package)], str(tmp_path / "out" / "vision_pkg")) == f"vision_pkg.{support.MODULE}"
    assert support.import_name([str(package)], None) == f"vision_pkg.{support.MODULE}"
    assert support.import_name([str(plain)], str(tmp_path / "out")) == support.MODULE
    assert support.import_name([str(package), str(plain)], str(tmp_path / "out")) == support.MODULE


# ------------------------------------------------------------------------------------------ torch's facts
@pytest.mark.needs_torch
def test_adapter_signatures_and_tuple_facts_are_torchs() -> None:
    import inspect

    import torch

    table = load_table()
    adapted = [e for e in table.entries.values() if e.adapter is not None]
    assert len(adapted) >= 15
    for entry in adapted:
        assert entry.adapter is not None
        cls = getattr(torch.nn, entry.api.rpartition(".")[2])
        params = list(inspect.signature(cls.__init__).parameters.values())[1:]
        assert [p.name for p in params] == [p.name for p in entry.adapter.params], entry.api
        for param, fact in zip(params, entry.adapter.params):
            assert fact.required == (param.default is inspect.Parameter.empty), entry.api
            if not fact.required:
                assert fact.default == param.default, (entry.api, param.name)
        if entry.adapter.tuples:  # built with small ints for what it requires: torch stores these as tuples
            layer = cls(*[4 for p in entry.adapter.params if p.required])
            for name in entry.adapter.tuples:
                value = getattr(layer, name)
                assert isinstance(value, tuple) and len(value) == (entry.adapter.rank or 1), (entry.api, name)


# ------------------------------------------------------------------------------------------ running
@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
@pytest.mark.slow
def test_ported_subclasses_values_and_unpacked_calls_agree_with_torch(tmp_path: Path) -> None:

    out = migrate_program(tmp_path, PROGRAM)
    assert_port_agrees(tmp_path / "src", out, ("mindspore", "graph"), rtol=1e-4, atol=1e-5)


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.slow
def test_every_tensor_of_the_subclasses_is_placed(tmp_path: Path) -> None:
    import torch

    out = migrate_program(tmp_path, PROGRAM)
    data = json.loads((out / "prog.weights.json").read_text())
    placed = {e["torch"]: e["ms"] for e in data["roots"]["Stem"]["entries"] if e["torch"] is not None}
    namespace: dict[str, object] = {}
    exec(compile(PROGRAM, "prog.py", "exec"), namespace)  # noqa: S102 - the test's own program
    stem = namespace["Stem"]()  # type: ignore[operator]
    assert isinstance(stem, torch.nn.Module)
    keys = set(stem.state_dict())
    assert keys and keys <= set(placed), sorted(keys - set(placed))
    assert all(placed[k] for k in keys if not k.endswith("num_batches_tracked"))
    assert placed["norm.weight"] == "norm.gamma" and placed["shifted.weight"] == "shifted.weight"
    assert placed["conv.weight"] == "conv.weight" and placed["tail.bias"] == "tail.beta"


@pytest.mark.needs_mindspore
@pytest.mark.slow
def test_a_value_mindspore_cannot_take_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / f"{support.MODULE}.py").write_text(support.support_text(load_table(), VERSION, DEVICE))
    code = (f"import sys; sys.path.insert(0, {str(tmp_path)!r}); sys.modules['torch'] = None\n"
            f"import {support.MODULE} as s\n"
            "try:\n    s.BatchNorm2d(4, momentum=None)\nexcept ValueError as exc:\n    print('refused:', exc)\n"
            "try:\n    s.Conv2d(4, 4, 3, padding_mode='circular')\nexcept ValueError as exc:\n    print('refused:', exc)\n"
            "try:\n    s.LayerNorm(4, elementwise_affine=False)\nexcept ValueError as exc:\n    print('refused:', exc)\n"
            "s.ReLU(inplace=True)\n"
            "try:\n    s.Conv2d(4, 4, 3, 1, 0, 1, 1, True, 'zeros', None, None, 7)\nexcept TypeError as exc:\n"
            "    print('type:', exc)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, GLOG_v="3"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert any(line.startswith("refused: torch.nn.BatchNorm2d: momentum=None") for line in lines), lines
    assert any(line.startswith("refused: torch.nn.Conv2d: padding_mode='circular'") for line in lines), lines
    assert any(line.startswith("refused: torch.nn.LayerNorm: elementwise_affine=False") for line in lines), lines
    assert any(line.startswith("type: torch.nn.Conv2d() takes 11 positional arguments") for line in lines), lines


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.slow
def test_layers_whose_forward_reads_the_training_flag_start_in_training_mode_as_torchs(tmp_path: Path) -> None:
    """A torch module starts in training mode, a MindSpore Cell in inference mode: the support module's
    BatchNorm and Dropout layers (built from a class passed as a value) start as torch's do; others keep
    MindSpore's default, which changes nothing for them."""
    import torch

    (tmp_path / f"{support.MODULE}.py").write_text(support.support_text(load_table(), VERSION, DEVICE))
    code = (f"import sys; sys.path.insert(0, {str(tmp_path)!r}); sys.modules['torch'] = None\n"
            f"import {support.MODULE} as s\n"
            "print(s.BatchNorm2d(4).training, s.BatchNorm1d(4).training, s.Dropout(0.5).training, "
            "s.BatchNorm2d(4).set_train(False).training)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, GLOG_v="3"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    expected = (torch.nn.BatchNorm2d(4).training, torch.nn.BatchNorm1d(4).training, torch.nn.Dropout(0.5).training,
                torch.nn.BatchNorm2d(4).eval().training)
    assert proc.stdout.split() == [str(v) for v in expected]


DTYPE_PROGRAM = textwrap.dedent("""\
    import numpy as np
    import torch
    import torch.nn as nn

    X = np.random.RandomState(3).rand(2, 3, 5, 5).astype(np.float32)


    def block(cin, cout, norm_layer=nn.BatchNorm2d, dtype=None, **factory):
        conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False, dtype=dtype)
        return nn.Sequential(conv, norm_layer(cout, **factory), nn.GroupNorm(1, cout, dtype=None))


    def case_layers_built_with_no_dtype():
        net = block(3, 4, dtype=None, device=None)
        net.eval()
        out = net(torch.tensor(X))
        return torch.tensor(list(out.shape)).float(), torch.tensor([p.dtype == torch.float32 for p in net.parameters()]).float()
""")


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.slow
def test_a_dtype_of_none_is_the_default_dtype_as_in_torch(tmp_path: Path) -> None:
    """torch reads dtype=None as the default dtype; MindSpore's nn layers default to float32 and raise for None
    ("init, dtype and shape must have values at the same time"): the call's rewrite and the support layer (a
    class passed as a value, called with unpacked arguments) write None as mindspore.float32."""
    ported = port(DTYPE_PROGRAM)
    assert "dtype=(dtype) or mindspore.float32" in ported
    assert "torch_args['dtype'] or mindspore.float32" in support.support_text(load_table(), VERSION, DEVICE)
    out = migrate_program(tmp_path, DTYPE_PROGRAM)
    assert_port_agrees(tmp_path / "src", out, ("mindspore",), rtol=1e-4, atol=1e-5)


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_a_dropped_argument_the_mindspore_layer_takes_too_keeps_the_layers_own(tmp_path: Path) -> None:
    """`inplace=True` of a class passed as a value (``act_layer(inplace=True)``) is not passed to MindSpore's
    SiLU (no CPU kernel for InplaceSiLU) and not stored over the attribute of that name its construct reads:
    the layer computes torch's values on the CPU."""
    import torch

    text = support.support_text(load_table(), VERSION, DEVICE)
    assert "self.inplace = torch_args['inplace']" not in text[text.index("class SiLU("):]
    (tmp_path / f"{support.MODULE}.py").write_text(text)
    x = [[-2.0, -0.5, 0.0, 0.5, 3.0]]
    code = (f"import sys; sys.path.insert(0, {str(tmp_path)!r}); sys.modules['torch'] = None\n"
            f"import mindspore\nimport {support.MODULE} as s\n"
            f"print(*s.SiLU(inplace=True)(mindspore.Tensor({x!r})).asnumpy().ravel().tolist())\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, GLOG_v="3"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    expected = torch.nn.SiLU(inplace=True)(torch.tensor(x)).ravel().tolist()
    got = [float(v) for v in proc.stdout.split()]
    assert len(got) == 5 and max(abs(a - b) for a, b in zip(expected, got)) <= 1e-6, (expected, got)
