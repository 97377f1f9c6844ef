"""The support module `torch2ms migrate` writes into a port's tree (torch2ms.transforms.support): its classes
train as torch's do (real steps in both frameworks, PyNative and GRAPH mode), the tables name them, migrate
writes the module once at the top of the tree it writes and the port trains like the original; a text fix,
which cannot write the module, leaves the finding."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from torch2ms.cli import main
from torch2ms.config import Config
from torch2ms.engine import scan_source
from torch2ms.mappings import load_table
from torch2ms.migrate.pipeline import migrate_text, torch_references
from torch2ms.migrate.support import module_text
from torch2ms.transforms.support import imported_support, support_source

ROOT = Path(__file__).resolve().parents[1]
MODULE = "t2ms_support"

# Five steps of each optimizer in both frameworks from the same start, on gradients of very different sizes
# (so eps matters), flat or in groups with their own weight decay and learning rate; prints the largest
# difference of the parameters after the steps, per case.
_OPTIMIZERS = """\
import sys
import numpy as np
import torch
import mindspore
sys.path.insert(0, sys.argv[1])
if sys.argv[2] == "graph":
    mindspore.set_context(mode=mindspore.GRAPH_MODE)
import t2ms_support

rng = np.random.RandomState(3)
shapes = [(4, 3), (3,)]
start = [rng.randn(*s).astype(np.float32) for s in shapes]
grads = [[rng.randn(*s).astype(np.float32) * scale for s in shapes] for scale in (1.0, 1e-3, 1e-5, 0.3, 1e-4)]


def flat(ps):
    return ps


def grouped(ps):
    return [{"params": [ps[0]], "weight_decay": 0.05}, {"params": [ps[1]], "weight_decay": 0.0, "lr": 0.02}]


def torch_run(cls, groups, kw):
    ps = [torch.nn.Parameter(torch.tensor(a)) for a in start]
    opt = cls(groups(ps), **kw)
    for g in grads:
        for p, a in zip(ps, g):
            p.grad = torch.tensor(a)
        opt.step()
    return [p.detach().numpy() for p in ps]


def ms_run(cls, groups, kw):
    ps = [mindspore.Parameter(mindspore.Tensor(a), name=f"p{i}") for i, a in enumerate(start)]
    opt = cls(groups(ps), **kw)
    for g in grads:
        opt(tuple(mindspore.Tensor(a) for a in g))
    return [p.asnumpy() for p in ps]


cases = [
    ("adam", torch.optim.Adam, t2ms_support.Adam, flat, dict(lr=0.01, eps=1e-4)),
    ("adam-l2-amsgrad", torch.optim.Adam, t2ms_support.Adam, flat, dict(lr=0.05, weight_decay=0.1, amsgrad=True)),
    ("adam-groups-maximize", torch.optim.Adam, t2ms_support.Adam, grouped,
     dict(lr=0.01, betas=(0.8, 0.9), maximize=True)),
    ("adam-decoupled", torch.optim.Adam, t2ms_support.Adam, flat,
     dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("adamw", torch.optim.AdamW, mindspore.experimental.optim.AdamW, grouped, dict(lr=0.01, eps=1e-4)),
    ("experimental-adam", torch.optim.Adam, mindspore.experimental.optim.Adam, flat, dict(lr=0.01, eps=1e-4)),
]
for name, t, m, groups, kw in cases:
    a, b = torch_run(t, groups, kw), ms_run(m, groups, kw)
    print(name, max(float(np.abs(x - y).max()) for x, y in zip(a, b)))
"""

# Three SGD steps with momentum on an embedding with a padding row, both frameworks from torch's table; prints
# the largest difference of the tables after the steps and how far the padding row moved in MindSpore.
_EMBEDDING = """\
import sys
import numpy as np
import torch
import mindspore
sys.path.insert(0, sys.argv[1])
if sys.argv[2] == "graph":
    mindspore.set_context(mode=mindspore.GRAPH_MODE)
import t2ms_support

ids = np.array([[1, 5, 4, 0], [5, 2, 3, 4]], np.int64)  # every padding row below is looked up
weights = np.linspace(-1.0, 1.0, 4, dtype=np.float32)
targets = np.array([[0.5, -1.0, 0.2, 0.0], [1.0, 0.3, -0.4, 0.8]], np.float32)
for padding in (5, -2, 0):
    theirs = torch.nn.Embedding(6, 4, padding_idx=padding)
    ours = t2ms_support.Embedding(6, 4, padding_idx=padding)
    start = ours.weight.asnumpy()
    row = padding % 6
    assert not start[row].any(), "the padding row starts at zero"
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(np.random.RandomState(row).randn(6, 4).astype(np.float32)))
        theirs.weight[row] = 0.0
    ours.weight.set_data(mindspore.Tensor(theirs.weight.detach().numpy()))
    t_opt = torch.optim.SGD(theirs.parameters(), lr=0.3, momentum=0.9)
    m_opt = mindspore.experimental.optim.SGD(ours.trainable_params(), lr=0.3, momentum=0.9)

    def forward(i, y):
        return ((ours(i) * mindspore.Tensor(weights)).sum(-1) - y).square().mean()

    step = mindspore.value_and_grad(forward, None, m_opt.parameters)
    for _ in range(3):
        t_opt.zero_grad()
        loss = ((theirs(torch.tensor(ids)) * torch.tensor(weights)).sum(-1) - torch.tensor(targets)).square().mean()
        loss.backward()
        t_opt.step()
        m_loss, g = step(mindspore.Tensor(ids.astype(np.int32)), mindspore.Tensor(targets))
        m_opt(g)
    table = ours.weight.asnumpy()
    print(padding, float(np.abs(table - theirs.weight.detach().numpy()).max()), float(np.abs(table[row]).max()),
          abs(float(loss.detach()) - float(m_loss)))
"""


def _support_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "support"
    folder.mkdir()
    text = support_source(MODULE)
    assert text is not None
    (folder / f"{MODULE}.py").write_text(text, encoding="utf-8")
    return folder


def _run(script: str, folder: Path, *args: str) -> str:
    path = folder / "steps.py"  # a file: GRAPH mode reads the source of what it compiles
    path.write_text(script, encoding="utf-8")
    proc = subprocess.run([sys.executable, str(path), str(folder), *args], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_adam_steps_of_the_support_class_and_adamw_agree_with_torch(tmp_path: Path, mode: str) -> None:
    out = _run(_OPTIMIZERS, _support_folder(tmp_path), mode)
    found = {name: float(value) for name, value in (line.split() for line in out.splitlines())}
    for name in ("adam", "adam-l2-amsgrad", "adam-groups-maximize", "adam-decoupled", "adamw"):
        assert found[name] <= 2e-6, (name, found)
    # the fact the tables record: mindspore.experimental.optim.Adam adds eps before the bias correction (if a
    # MindSpore release agrees with torch here, the fact and the support class can go)
    assert found["experimental-adam"] > 1e-4, found


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_the_support_embedding_keeps_its_padding_row_as_torch_does(tmp_path: Path, mode: str) -> None:
    out = _run(_EMBEDDING, _support_folder(tmp_path), mode)
    rows = [line.split() for line in out.splitlines()]
    assert [r[0] for r in rows] == ["5", "-2", "0"]
    for _padding, table, row, loss in rows:
        assert float(table) <= 1e-6 and float(row) == 0.0 and float(loss) <= 1e-6, rows


_BAG = """\
import torch
import torch.nn as nn

VOCAB, WIDTH = 12, 6


class Bag(nn.Module):
    def __init__(self):
        super().__init__()
        self.words = nn.Embedding(VOCAB, WIDTH, 0)
        self.head = nn.Linear(WIDTH, 2)
        with torch.no_grad():
            self.words.weight.copy_(torch.linspace(-1.0, 1.0, VOCAB * WIDTH).reshape(VOCAB, WIDTH))
            self.words.weight[0] = 0.0
            self.head.weight.fill_(0.1)
            self.head.bias.fill_(0.0)

    def forward(self, ids):
        return self.head(self.words(ids).sum(1))


model = Bag()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=0.01, amsgrad=True)
loss_fn = nn.CrossEntropyLoss()
ids = torch.tensor([[1, 2, 0, 0], [3, 4, 5, 0], [6, 0, 0, 0], [7, 8, 9, 10]])
labels = torch.tensor([0, 1, 0, 1])
for step in range(6):
    loss = loss_fn(model(ids), labels)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print(f"{loss.item():.6f}")
print(f"{float(model.words.weight[0].abs().sum()):.6f}")
"""


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_migrate_writes_the_support_module_once_and_the_port_trains_like_torch(tmp_path: Path,
                                                                               capsys: pytest.CaptureFixture[str]
                                                                               ) -> None:
    project = tmp_path / "project"
    (project / "models").mkdir(parents=True)
    (project / "bag.py").write_text(_BAG, encoding="utf-8")
    (project / "models" / "second.py").write_text(_BAG.replace("lr=0.05", "lr=0.02"), encoding="utf-8")
    out = tmp_path / "out"
    main(["migrate", str(project), "--out", str(out), "-q"])
    printed = capsys.readouterr().out
    assert printed.count(": support module") == 1 and f"{out / MODULE}.py: support module" in printed  # one per tree
    assert sorted(p.name for p in out.rglob(f"{MODULE}.py")) == [f"{MODULE}.py"]
    assert (out / f"{MODULE}.py").read_text(encoding="utf-8") == _whole_module()
    port = (out / "bag.py").read_text(encoding="utf-8")
    assert torch_references(port) == [], port
    assert f"import {MODULE}\n" in port and imported_support(port).keys() == {MODULE}
    assert "self.words = t2ms_support.Embedding(VOCAB, WIDTH, 0)" in port
    assert "optimizer = t2ms_support.Adam(model.trainable_params(), lr=0.05, weight_decay=0.01, " \
           "amsgrad=True)" in port
    runs = []
    for path in (project / "bag.py", out / "bag.py"):
        proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600,
                              cwd=path.parent, env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
        assert proc.returncode == 0, proc.stderr[-3000:]
        runs.append([float(x) for x in re.findall(r"-?\d+\.\d+", proc.stdout)])
    expected, got = runs
    assert len(expected) == len(got) == 7 and expected[-1] == got[-1] == 0.0  # the padding row never moved
    for a, b in zip(expected, got):
        assert abs(a - b) <= 2e-5 * max(1.0, abs(a)), (expected, got)


def _whole_module() -> str:
    """What migrate writes: the torch-signature layers, then the static classes (one module per tree)."""
    text = module_text(load_table(), Config().version, "cpu")
    static = support_source(MODULE)
    assert static is not None and "class Adam(" in text and "class Embedding(" in text
    return text


def test_where_the_class_cannot_apply_the_finding_stays() -> None:
    table = load_table()
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn
        ps = [nn.Parameter(torch.ones(2))]
        a = torch.optim.Adam(ps, lr=0.1)
        b = nn.Embedding(5, 3, padding_idx=0)
        c = nn.Embedding(5, 3, padding_idx=0, max_norm=1.0)
        d = nn.Embedding(5, 3)
        """)
    # a text fix cannot write the support module: no fix where the class is needed, the plain form elsewhere
    found = {d.span.start_line: d for d in scan_source(source, "m.py", Config(device="cpu"), table).diagnostics
             if d.torch_api in ("torch.optim.Adam", "torch.nn.Embedding")}
    assert found[4].fix is None and "eps" in found[4].message
    assert found[5].fix is None and found[6].fix is None and found[7].fix is not None
    migration = migrate_text(source, "m.py")
    assert "a = t2ms_support.Adam(ps, lr=0.1)" in migration.text
    assert "b = t2ms_support.Embedding(5, 3, padding_idx=0)" in migration.text
    # max_norm: a parameter the class does not take: the torch layer and its finding stay
    assert "c = nn.Embedding(5, 3, padding_idx=0, max_norm=1.0)" in migration.text
    assert "d = mindspore.nn.Embedding(5, 3)" in migration.text
    assert migration.support is True
    line = migration.text.splitlines().index("c = nn.Embedding(5, 3, padding_idx=0, max_norm=1.0)") + 1
    assert [(d.span.start_line, d.torch_api) for d in migration.result.diagnostics
            if d.torch_api == "torch.nn.Embedding"] == [(line, "torch.nn.Embedding")]
    assert imported_support("import os\nimport numpy\n") == {}


def test_in_place_the_support_module_goes_to_the_folder_argument(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "train").mkdir(parents=True)
    (project / "train" / "loop.py").write_text(textwrap.dedent("""\
        import torch
        weights = [torch.nn.Parameter(torch.ones(3))]
        optimizer = torch.optim.Adam(weights, lr=0.1)
        """), encoding="utf-8")
    (project / "plain.py").write_text("import torch\nx = torch.ones(2)\n", encoding="utf-8")
    single = tmp_path / "single.py"
    single.write_text("import torch.nn as nn\ntable = nn.Embedding(4, 2, padding_idx=1)\n", encoding="utf-8")
    main(["migrate", str(project), str(single), "--in-place", "-q"])
    assert "t2ms_support.Adam(weights, lr=0.1)" in (project / "train" / "loop.py").read_text(encoding="utf-8")
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob(f"{MODULE}.py")) == \
        [f"project/{MODULE}.py", f"{MODULE}.py"]  # the folder argument's top; a file argument's own folder
    assert (project / f"{MODULE}.py").read_text(encoding="utf-8") == _whole_module()
