"""`torch2ms migrate`: structural rewrites (libcst), imports, scope, trees and the CLI, and real model
files migrated and run in MindSpore (CPU) against torch with the same weights."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from conftest import load_script

from torch2ms.cli import main
from torch2ms.config import Config
from torch2ms.migrate.pipeline import Options, migrate_text, torch_references, unreported

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "migrate"


def migrate(source: str, cells: set[str] | None = None) -> str:
    out = migrate_text(textwrap.dedent(source), "m.py", cells=cells).text
    ast.parse(out)
    return out


def test_cell_classes_forward_and_references_through_bases() -> None:
    out = migrate("""
        import torch.nn as nn

        class Base(nn.Module):
            def forward(self, x):
                return x

        class Child(Base):  # a Cell through its base
            def forward(self, x):
                return super().forward(x) + self.forward2(x)

            def forward2(self, x):
                return x

        class Lin(nn.Linear):
            def forward(self, x):
                return self.forward_helper(x)

            def forward_helper(self, x):
                return super().forward(x)

        class Twice(nn.Module):
            def forward(self, x):
                return x

            def run(self, x):
                return self.forward(self.forward(x))

        class Plain:
            def forward(self, x):
                return self.forward(x)
    """)
    assert "class Base(mindspore.nn.Cell)" in out
    assert "class Child(Base):  # a Cell through its base" in out
    assert out.count("def construct(self, x)") == 4
    assert "super().construct(x) + self.forward2(x)" in out
    assert "return super().construct(x)" in out  # in Lin, a subclass of a torch.nn layer
    assert "self.construct(self.construct(x))" in out
    assert "class Plain:\n    def forward(self, x):\n        return self.forward(x)" in out
    assert "import torch" not in out


def test_calls_receivers_moved_and_statements() -> None:
    out = migrate("""
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.act = nn.ReLU(True)
                self.register_buffer("scale", torch.ones(3))
                self.add_module("extra", nn.Identity())
                for m in self.modules():
                    if isinstance(m, nn.Conv2d):
                        nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    nn.init.constant_(m.bias, 0)

            def forward(self, x):
                y = x.detach().transpose(1, 2)
                z = x.new_zeros(2, 3)
                return y.to(torch.float), z, [n for n, _ in self.named_children()]
    """)
    assert "self.act = mindspore.mint.nn.ReLU()" in out
    assert "self.scale = mindspore.Parameter(mindspore.mint.ones(3), requires_grad=False)" in out
    assert 'setattr(self, "extra", mindspore.mint.nn.Identity())' in out
    assert "for m in [_cell for _, _cell in self.cells_and_names()]:" in out
    assert ("m.weight.set_data(mindspore.common.initializer.initializer(mindspore.common.initializer.HeNormal("
            "negative_slope=0, mode=\"fan_out\", nonlinearity=\"relu\"), m.weight.shape, m.weight.dtype))") in out
    assert ("m.bias.set_data(mindspore.common.initializer.initializer(mindspore.common.initializer.Constant("
            "value=0), m.bias.shape, m.bias.dtype))") in out
    assert "y = mindspore.ops.stop_gradient(x).swapaxes(1, 2)" in out
    assert "z = x.new_zeros((2, 3))" in out
    assert "y.to(mindspore.float32)" in out
    assert "self.name_cells().items()" in out
    assert "torch" not in out and "\nimport mindspore\n" in out


def test_data_initializers_of_the_older_spelling() -> None:
    out = migrate("""
        import math
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3)
                for m in self.modules():
                    if isinstance(m, nn.Conv2d):
                        m.weight.data.normal_(0, math.sqrt(2.0 / 27))
                        m.bias.data.zero_()
                    records = {}
                    records.data.fill_(1)
    """)
    assert ("m.weight.set_data(mindspore.common.initializer.initializer(mindspore.common.initializer.Normal("
            "mean=0, sigma=math.sqrt(2.0 / 27)), m.weight.shape, m.weight.dtype))") in out
    assert "m.bias.set_data(mindspore.common.initializer.initializer(mindspore.common.initializer.Zero()" in out
    assert "records.data.fill_(1)" in out  # a dict, not a parameter: the resolver knows, nothing is rewritten


def test_classes_as_types_with_an_older_target() -> None:
    source = textwrap.dedent("""
        import torch.nn as nn

        def count(model):
            return sum(isinstance(m, (nn.Conv2d, nn.Linear)) or isinstance(m, nn.BatchNorm2d) for m in model)
    """)
    result = migrate_text(source, "m.py", Options(Config(target_version="2.2")))
    assert "isinstance(m, (mindspore.nn.Conv2d, mindspore.nn.Dense)) or isinstance(m, mindspore.nn.BatchNorm2d)" \
        in result.text
    assert "torch" not in result.text


def test_initializer_without_a_place_for_an_argument_is_left_and_reported() -> None:
    result = migrate_text("import torch\nimport torch.nn as nn\ng = torch.Generator()\n"
                          "def init(w):\n    nn.init.normal_(w, generator=g)\n", "m.py")
    assert "nn.init.normal_(w, generator=g)" in result.text
    assert not unreported(result)


def test_device_wrappers_and_no_grad_removed_comments_kept() -> None:
    out = migrate("""
        import torch
        import torch.nn as nn

        def evaluate(model, x):
            model = nn.DataParallel(model)
            # no tape in MindSpore
            with torch.no_grad():
                # the prediction
                y = model(x)  # keep me
            return y

        @torch.no_grad()
        def predict(model, x):
            return model(x)
    """)
    assert "DataParallel" not in out and "model = model" not in out
    assert "    # no tape in MindSpore\n    # the prediction\n    y = model(x)  # keep me\n    return y" in out
    assert "@" not in out and "def predict(model, x):\n    return model(x)" in out
    assert "torch" not in out


def test_imports_removed_also_from_multiline_and_kept_when_used() -> None:
    out = migrate("""
        import os
        from torch import (
            nn,  # layers
            Tensor,
        )
        import torch.hub as hub

        class Net(nn.Module):
            def forward(self, x: Tensor) -> Tensor:
                return x

        def load(repo):
            '''Loads torch.Tensor weights.'''
            return hub.load(repo, "net")
    """)
    assert "from torch import" not in out  # every name of the multi-line import went
    assert "import torch.hub as hub\n" in out.split("class Net")[0]  # still used (no MindSpore form): it stays
    assert "def load(repo):\n    '''Loads torch.Tensor weights.'''\n    return hub.load(repo, \"net\")" in out
    assert out.startswith("\nimport os\n")


def test_partial_multiline_import_keeps_its_layout() -> None:
    result = migrate_text(textwrap.dedent("""
        from torch.nn import (  # layers
            Module,
            Conv2d,
        )

        class Net(Module):
            pass

        KINDS = {Conv2d.__name__: 1}
    """), "m.py")
    assert "from torch.nn import (  # layers\n    Conv2d,\n)\n" in result.text  # used at module level: kept
    assert result.removed_imports == ["Module"]
    assert not unreported(result)


def test_shadowed_mindspore_gets_an_alias() -> None:
    out = migrate("""
        import torch

        def run(mindspore, ms_):
            return torch.cat([mindspore, ms_]).detach()
    """)
    assert "import mindspore as ms__" in out
    assert "ms__.ops.stop_gradient(ms__.mint.cat([mindspore, ms_]))" in out


def test_every_remaining_torch_reference_has_a_finding() -> None:
    sources = [p.read_text() for p in sorted(DATA.rglob("*.py"))]
    sources.append(textwrap.dedent("""
        import torch
        import torch.nn as nn

        class Swish(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * torch.sigmoid(x)

        def train(model, loader):
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in loader:
                opt.zero_grad()
                loss = nn.functional.mse_loss(model(x), y)
                loss.backward()
                opt.step()
            torch.save(model.state_dict(), "m.pt")
            return torch.cuda.is_available(), torch.backends.cudnn.benchmark
    """))
    left = 0
    for source in sources:
        result = migrate_text(source, "m.py")
        assert unreported(result) == []
        left += len(torch_references(result.text))
    assert left > 0  # the property was checked on torch code that stays


def test_cli_tree_cross_file_cells_and_error_exit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "__init__.py").write_text("")
    (src / "pkg" / "base.py").write_text("import torch.nn as nn\n\nclass Base(nn.Module):\n    pass\n")
    (src / "pkg" / "net.py").write_text("from .base import Base\nimport torch\n\nclass Net(Base):\n"
                                        "    def forward(self, x):\n        return torch.relu(x)\n")
    (src / "pkg" / "broken.py").write_text("import torch\ndef f(:\n")
    out = tmp_path / "out"
    code = main(["migrate", str(src), "--out", str(out), "--isolated"])
    assert code == 2  # broken.py could not be migrated; the others were
    assert "broken.py" in capsys.readouterr().err
    net = (out / "pkg" / "net.py").read_text()
    assert "class Net(Base):\n    def construct(self, x):\n        return mindspore." in net
    assert "torch" not in net and not (out / "pkg" / "broken.py").exists()
    assert (out / "pkg" / "__init__.py").exists()
    before = (src / "pkg" / "net.py").read_text()
    assert main(["migrate", str(src / "pkg" / "base.py"), str(src / "pkg" / "net.py"), "--diff", "--isolated"]) == 0
    assert "+    def construct(self, x):" in capsys.readouterr().out  # net.py's Base is a Cell: base.py is migrated too
    assert (src / "pkg" / "net.py").read_text() == before
    assert main(["migrate", str(src / "pkg" / "base.py"), "--in-place", "--isolated"]) == 0
    assert "class Base(mindspore.nn.Cell)" in (src / "pkg" / "base.py").read_text()
    assert not list(src.rglob("*.torch2ms-tmp"))
    assert main(["migrate", str(src), "--out", str(src), "--isolated"]) == 2  # would overwrite the sources


# ---------------------------------------------------------------------------------------------- end to end
def _benchmark() -> Any:
    return load_script(ROOT / "benchmarks" / "migrate_models.py", "migrate_models_under_test")


REAL = [
    ("sam", "common", "LayerNorm2d", {"num_channels": 8}, ((2, 8, 5, 5),)),
    ("dino", "layer_scale", "LayerScale", {"dim": 16, "init_values": 0.5}, ((2, 5, 16),)),
    ("dino", "mlp", "Mlp", {"in_features": 16, "hidden_features": 32,
                            "act_layer": {"torch": "torch.nn.ReLU", "mindspore": "mindspore.mint.nn.ReLU"}},
     ((2, 5, 16),)),
    # attention: items unpacked from one tensor, softmax(dim=), transpose; Dropout(0.0) by keyword
    ("dino", "attention", "Attention", {"dim": 16, "num_heads": 4}, ((2, 5, 16),)),
    # x.chunk(2, dim=-1) in GRAPH mode on CPU
    ("dino", "swiglu_ffn", "SwiGLUFFN", {"in_features": 16, "hidden_features": 32}, ((2, 5, 16),)),
    # LayerNorm(int), a ModuleList filled by append (parameter names), ReLU passed as a class
    ("sam", "transformer", "TwoWayTransformer", {"depth": 2, "embedding_dim": 32, "num_heads": 4, "mlp_dim": 64},
     ((1, 32, 4, 4), (1, 32, 4, 4), (1, 3, 32))),
]


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.slow
@pytest.mark.parametrize("package, module, factory, kwargs, inputs", REAL, ids=[f"{r[0]}/{r[1]}" for r in REAL])
def test_real_model_file_runs_in_mindspore_like_torch(tmp_path: Path, package: str, module: str, factory: str,
                                                      kwargs: dict[str, object],
                                                      inputs: tuple[tuple[int, ...], ...]) -> None:
    original = tmp_path / "original"
    shutil.copytree(DATA, original)
    ported = tmp_path / "ported"
    proc = subprocess.run([sys.executable, "-m", "torch2ms", "migrate", str(original / package), "--out",
                           str(ported / package), "--isolated", "-q"], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    assert proc.returncode in (0, 1), proc.stderr
    text = (ported / package / f"{module}.py").read_text()
    assert "torch" not in {n.id for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Name)}
    bench = _benchmark()
    model = bench.Model(f"{package}/{module}.py", package, module, factory, kwargs, inputs)
    work = tmp_path / "work"
    work.mkdir()
    outcome = bench.compare(str(original), str(ported), model, str(work))
    assert outcome.get("stage") == "compared", outcome
    assert outcome["max_abs_diff"] <= 1e-4


# ---------------------------------------------------------------------------------------------- devices
DEVICE_SOURCE = """
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self, dim, act_layer=nn.GELU, norm_layer=nn.InstanceNorm2d):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, 1, 1)
            self.drop = nn.Dropout(0.0)
            self.norm = nn.LayerNorm(dim)
            self.pool = nn.MaxPool2d(2)
            self.act = act_layer()

        def forward(self, x, act: nn.GELU = None):
            y = self.act(self.norm(self.drop(self.conv(x))))
            same = type(self.act) is nn.GELU or self.act.__class__ == nn.GELU
            return y, x.size(1), x.size(dim=0), x.size(), isinstance(self.act, nn.GELU), same
"""


def test_forms_written_for_the_device_with_their_parameter_translation() -> None:
    cpu = migrate(DEVICE_SOURCE)  # the default device: forms with a CPU kernel
    assert "mindspore.nn.Conv2d(3, 8, 3, 1, padding=1, pad_mode='pad', has_bias=True)" in cpu
    assert "mindspore.nn.Dropout(p=0.0)" in cpu  # keep_prob is MindSpore's first parameter
    assert "mindspore.nn.LayerNorm((dim,), epsilon=1e-05)" in cpu
    assert "mindspore.nn.MaxPool2d(2, stride=2, pad_mode='pad')" in cpu
    # a class passed as a value is the support module's torch-signature layer where the tables give it one (it
    # takes whatever torch's class is called with later); else it gets the keywords its form needs where it is
    # written; as a type it stays a class
    assert "act_layer=t2ms_support.GELU" in cpu
    assert "norm_layer=functools.partial(mindspore.nn.InstanceNorm2d, affine=False)" in cpu
    assert "\nimport functools\n" in cpu and "\nimport t2ms_support\n" in cpu
    assert "isinstance(self.act, mindspore.nn.GELU)" in cpu and "act: mindspore.nn.GELU = None" in cpu
    assert "return y, x.shape[1], x.shape[0], x.shape, " in cpu
    assert "same = type(self.act) is mindspore.nn.GELU or self.act.__class__ == mindspore.nn.GELU" in cpu
    ascend = migrate_text(textwrap.dedent(DEVICE_SOURCE), "m.py", Options(Config(device="ascend"))).text
    assert "mindspore.mint.nn.Conv2d(3, 8, 3, 1, 1)" in ascend and "mindspore.mint.nn.Dropout(0.0)" in ascend
    assert "act_layer=t2ms_support.GELU" in ascend


def test_cli_device_flag_and_configuration_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "m.py"
    source.write_text("import torch.nn as nn\nconv = nn.Conv2d(3, 8, 3)\n")
    main(["migrate", str(source), "--diff", "--isolated", "--device", "ascend"])
    assert "+conv = mindspore.mint.nn.Conv2d(3, 8, 3)\n" in capsys.readouterr().out
    (tmp_path / "pyproject.toml").write_text('[tool.torch2ms]\ndevice = "ascend"\n')
    main(["migrate", str(source), "--diff"])
    assert "+conv = mindspore.mint.nn.Conv2d(3, 8, 3)\n" in capsys.readouterr().out
    main(["migrate", str(source), "--diff", "--device", "cpu"])  # the flag wins over the configuration
    assert "+conv = mindspore.nn.Conv2d(3, 8, 3, pad_mode='pad', has_bias=True)\n" in capsys.readouterr().out


def test_module_list_filled_by_append_is_built_from_a_list() -> None:
    out = migrate("""
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self, depth):
                super().__init__()
                layers = 0
                self.layers = nn.ModuleList()
                for _ in range(depth):
                    self.layers.append(nn.Linear(4, 4))
                self.layers[0].bias = None
                self.head = nn.Linear(4, 2)
                self.blocks = nn.ModuleList([])
                self.blocks.extend([nn.ReLU()])
                self.seq = nn.Sequential()
                self.seq.append(nn.ReLU())
                self.heads = nn.ModuleDict()
                self.heads["a"] = nn.Linear(4, 2)
                self.kept = nn.ModuleList()
                self.kept.append(nn.ReLU())
                self.callback = lambda: self.kept  # a use a list cannot stand in for: left as it is
    """)
    assert ("        layers_ = []\n        for _ in range(depth):\n            layers_.append(mindspore.mint.nn.Linear(4, 4))\n"
            "        layers_[0].bias = None\n        self.layers = mindspore.nn.CellList(layers_)\n") in out
    assert "blocks = []\n        blocks.extend([mindspore.mint.nn.ReLU()])\n        self.blocks = mindspore.nn.CellList(blocks)" \
        in out
    assert "seq = []\n        seq.append(mindspore.mint.nn.ReLU())\n        self.seq = mindspore.nn.SequentialCell(*seq)" in out
    assert 'heads = {}\n        heads["a"] = mindspore.mint.nn.Linear(4, 2)\n        self.heads = mindspore.nn.CellDict(heads)' \
        in out
    assert "self.kept = mindspore.nn.CellList()\n        self.kept.append(" in out


_NAMES_TORCH = r'''
import importlib, json, sys
sys.path.insert(0, sys.argv[1])
net = importlib.import_module("names").Net(2)
print(json.dumps(sorted(net.state_dict())))
'''
_NAMES_MINDSPORE = r'''
import importlib, json, sys
sys.modules["torch"] = None  # `import torch` fails here
sys.path.insert(0, sys.argv[1])
net = importlib.import_module("names").Net(2)
renames = {"gamma": "weight", "beta": "bias"}
print(json.dumps(sorted(".".join([*p.name.split(".")[:-1], renames.get(p.name.split(".")[-1], p.name.split(".")[-1])])
                        for p in net.get_parameters())))
'''


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.slow
def test_parameter_names_of_a_filled_module_list_keep_their_prefix(tmp_path: Path) -> None:
    """MindSpore names the parameters of Cells appended to an empty CellList without the list's attribute
    (`1.norm.gamma`); built from a list, they are named as torch's state_dict keys (`layers.1.norm.weight`)."""
    source = textwrap.dedent("""
        import torch.nn as nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.norm = nn.LayerNorm(4)
                self.fc = nn.Linear(4, 4)

        class Net(nn.Module):
            def __init__(self, depth):
                super().__init__()
                self.layers = nn.ModuleList()
                for _ in range(depth):
                    self.layers.append(Block())
                self.head = nn.Linear(4, 2)
                self.tail = nn.Sequential()
                self.tail.append(Block())
                self.heads = nn.ModuleDict()
                self.heads["a"] = Block()
    """)
    (tmp_path / "torch_side").mkdir()
    (tmp_path / "torch_side" / "names.py").write_text(source)
    (tmp_path / "ms_side").mkdir()
    (tmp_path / "ms_side" / "names.py").write_text(migrate_text(source, "names.py").text)
    names = []
    for script, folder in ((_NAMES_TORCH, "torch_side"), (_NAMES_MINDSPORE, "ms_side")):
        proc = subprocess.run([sys.executable, "-c", script, str(tmp_path / folder)], capture_output=True, text=True,
                              env=dict(os.environ, GLOG_v="3"))
        assert proc.returncode == 0, proc.stderr
        names.append(proc.stdout.strip().splitlines()[-1])
    assert "layers.1.norm.weight" in names[0]
    assert names[1] == names[0]


def test_parameter_names_of_the_form_inside_isinstance_branches_and_graph_safe_calls() -> None:
    out = migrate("""
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                for m in self.modules():
                    if isinstance(m, (nn.BatchNorm2d, nn.BatchNorm1d)):
                        m.weight.data.fill_(1)
                        m.running_var.data.fill_(1)
                    elif isinstance(m, nn.Linear):
                        m.weight.data.zero_()
                    elif isinstance(m, (nn.LayerNorm, nn.Linear)):  # the names differ between the two forms
                        m.bias.data.zero_()
                    elif isinstance(m, nn.BatchNorm2d):
                        m = m.weight  # rebound: left as it is
                    if isinstance(m, nn.BatchNorm2d):
                        print(m.weight)

            def forward(self, x):
                a, b = x.chunk(2, dim=-1)
                return a.chunk(chunks=2)[0] + b
    """)
    assert "m.gamma.set_data(mindspore.common.initializer.initializer(mindspore.common.initializer.Constant(" \
        "value=1), m.gamma.shape, m.gamma.dtype))" in out
    assert "m.moving_variance.set_data(" in out
    assert "m.weight.set_data(mindspore.common.initializer.initializer(mindspore.common.initializer.Zero()" in out
    assert "m = m.weight" in out and "print(m.gamma)" in out
    # where the names differ between the forms, each instance reads its own form's name
    assert "(m.beta if isinstance(m, mindspore.nn.LayerNorm) else m.bias).set_data(" in out
    # in GRAPH mode on the CPU, x.chunk(2, dim=-1) compiles to a kernel the CPU lacks, x.chunk(2, -1) does not
    assert "a, b = x.chunk(2, -1)" in out and "a.chunk(2)[0]" in out


_GATES = """\
import torch
import torch.nn as nn


class Gates(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.width = width

    def forward(self, x):
        value, gate = x.split(self.width, dim=-1)
        first, rest = value.split(split_size=[1, 2], dim=1)
        low, high = torch.split(gate, self.width // 2, dim=2)
        even, odd = x.chunk(2, dim=1)
        return (first * rest.sum(-1, keepdim=True)).sum() + (torch.sigmoid(low) * high).sum() + (even * odd).mean()
"""
_GATES_RUN = """\
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
x = np.linspace(-1.0, 1.0, 2 * 3 * 8, dtype=np.float32).reshape(2, 3, 8)
if sys.argv[2] == "torch":
    import torch
    import gates
    t = torch.tensor(x, requires_grad=True)
    out = gates.Gates(4)(t)
    out.backward()
    value, grad = out.item(), t.grad.numpy()
else:
    import mindspore
    mindspore.set_context(mode=mindspore.GRAPH_MODE)
    import gates
    step = mindspore.jit(mindspore.value_and_grad(gates.Gates(4)))
    out, g = step(mindspore.Tensor(x))
    value, grad = float(out), g.asnumpy()
np.save(sys.argv[3], np.concatenate([[value], grad.ravel()]))
"""


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
def test_split_and_chunk_with_a_dim_keyword_run_in_graph_mode_on_cpu(tmp_path: Path) -> None:
    """In GRAPH mode on the CPU, `x.split(n, dim=d)` compiles to SplitTensor and `x.chunk(n, dim=d)` to Chunk,
    kernels the CPU lacks; by position they compile to kernels it has (the `positional_in_graph` rule): the
    port's value and gradient, compiled, are torch's."""
    out = migrate(_GATES)
    assert "value, gate = x.split(self.width, -1)" in out
    assert "first, rest = value.split([1, 2], 1)" in out
    assert "even, odd = x.chunk(2, 1)" in out
    for side in ("torch", "mindspore"):
        folder = tmp_path / side
        folder.mkdir()
        (folder / "gates.py").write_text(_GATES if side == "torch" else out, encoding="utf-8")
        proc = subprocess.run([sys.executable, "-c", _GATES_RUN, str(folder), side, str(tmp_path / f"{side}.npy")],
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-2000:]
    import numpy as np
    expected, got = np.load(tmp_path / "torch.npy"), np.load(tmp_path / "mindspore.npy")
    assert np.allclose(expected, got, rtol=1e-5, atol=1e-6), (expected, got)
    # the keyword form the rule writes away is what the CPU cannot compile
    keyword = tmp_path / "keyword"
    keyword.mkdir()
    (keyword / "gates.py").write_text(out.replace("x.split(self.width, -1)", "x.split(self.width, dim=-1)"),
                                      encoding="utf-8")
    proc = subprocess.run([sys.executable, "-c", _GATES_RUN, str(keyword), "mindspore", str(tmp_path / "k.npy")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0 and "SplitTensor" in proc.stderr, proc.stderr[-2000:]


def test_a_torch_name_the_port_still_uses_with_no_finding_gets_one_never_zero_remaining() -> None:
    # `getattr(nn, name)` cannot be rewritten: the port imports torch, and the use has a finding
    result = migrate_text(textwrap.dedent("""\
        import torch.nn as nn
        import torch.nn.functional as F


        class Pool(nn.Module):
            def __init__(self, fmt: F = "NCHW", kind=None):
                super().__init__()
                self.layer = getattr(nn, kind or "ReLU")()

            def forward(self, x):
                return F.relu(x)
    """), "m.py")
    # the annotation names no MindSpore type: it becomes typing.Any and keeps no import (migrate/plain_types.py)
    assert 'def __init__(self, fmt: typing.Any = "NCHW", kind=None):' in result.text
    assert "import torch.nn.functional as F" not in result.text and "getattr(nn," in result.text
    left = [d for d in result.result.diagnostics if d.code == "TMS407"]
    assert {(d.span.start_line, d.torch_api) for d in left} >= {(9, "torch.nn")}
    assert result.remaining > 0 and not unreported(result)


def test_a_branch_under_isinstance_reads_the_name_as_that_layer() -> None:
    """`if isinstance(m, nn.Linear):` over the modules of a network (whose class the scan cannot know): inside
    the branch `m` is that layer, so `m.weight` is a tensor and its torch methods are rewritten
    (`m.weight.size(0)` is `m.weight.shape[0]`; MindSpore's `size` is the element count)."""
    out = migrate("""
        import math
        import torch.nn as nn

        def reset(model):
            for _, m in model.named_modules():
                if isinstance(m, nn.Linear) and m.bias is not None:
                    fan_out = m.weight.size(0)
                    nn.init.uniform_(m.bias, -1 / math.sqrt(fan_out), 1 / math.sqrt(fan_out))
                elif isinstance(m, (nn.Linear, nn.Identity)):
                    print(m.weight.size(1))
                m.weight.size(0)  # after the branch: nothing is known about m
    """)
    assert "if isinstance(m, mindspore.mint.nn.Linear) and m.bias is not None:" in out
    assert "fan_out = m.weight.shape[0]" in out and "print(m.weight.shape[1])" in out
    assert "\n        m.weight.size(0)  # after" in out
