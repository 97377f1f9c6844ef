"""Torch helpers a library reaches at import time or in its utilities, written so that the port imports and runs
without torch: checkpoints (`torch.save` / `torch.load` and the weights-only allow-list), torch.hub's download
cache, a transformer's activation by name, a batch norm folded into a convolution, the data loader's
`default_collate` (called or passed as a value), a generic `Sampler[...]` base, `isinstance(d, IterableDataset)`,
an initializer given its range by `*args`, and GELU's approximation by name. The programs are written the way
many libraries write these constructs."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from torch2ms.mappings import load_table
from torch2ms.migrate.pipeline import migrate_text

HELPERS = textwrap.dedent("""\
    import os
    import random
    from typing import Iterator, List

    import torch
    import torch.nn as nn
    import torch.utils.data
    from torch.hub import HASH_REGEX, download_url_to_file, get_dir, urlparse
    from torch.nn.modules.transformer import _get_activation_fn
    from torch.nn.utils.fusion import fuse_conv_bn_eval
    from torch.utils.data import Sampler, default_collate


    def cached_file(url, check_hash=True):
        name = os.path.basename(urlparse(url).path)
        target = os.path.join(get_dir(), "checkpoints", name)
        if not os.path.exists(target):
            found = HASH_REGEX.search(name)
            download_url_to_file(url, target, found.group(1) if found and check_hash else None, progress=False)
        return target


    def save_run(state, epoch, path):
        torch.save({"state": state, "epoch": epoch}, path)


    def load_run(path, **options):
        kwargs = dict(map_location="cpu", weights_only=True)
        kwargs.update(options)
        try:
            return torch.load(path, **kwargs)
        except TypeError:
            raise RuntimeError(f"version {torch.__version__} cannot read {path}")


    class Shuffled(Sampler[List[int]]):
        def __init__(self, n, size):
            self.n, self.size = n, size

        def __iter__(self) -> Iterator[List[int]]:
            order = list(range(self.n))
            random.Random(0).shuffle(order)
            return iter([order[i:i + self.size] for i in range(0, self.n, self.size)])


    class Stream(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(3))


    class Table(torch.utils.data.Dataset):
        def __getitem__(self, index):
            return index

        def __len__(self):
            return 3


    def streaming(dataset):
        return isinstance(dataset, torch.utils.data.IterableDataset)


    def collate_for(fast):
        return list if fast else torch.utils.data.dataloader.default_collate


    class Gate(nn.Module):
        def __init__(self, n, init_range=(2.0, 3.0)):
            super().__init__()
            self.init_range = init_range
            self.a = nn.Parameter(torch.empty(n))
            nn.init.uniform_(self.a, *self.init_range)
            self.act = _get_activation_fn("gelu")
            self.smooth = nn.GELU(approximate="tanh")

        def forward(self, x):
            return self.smooth(self.act(x * self.a))


    def case_checkpoint():
        import tempfile
        path = os.path.join(tempfile.mkdtemp(), "run.pt")
        save_run({"w": torch.arange(6.0).reshape(2, 3)}, 7, path)
        run = load_run(path)
        return [run["state"]["w"], float(run["epoch"])]


    def case_collate():
        batch = default_collate([(torch.ones(2) * i, i, 0.5 * i) for i in range(3)])
        dicts = collate_for(False)([{"x": torch.ones(2) * i} for i in range(2)])
        return [batch[0], batch[1], batch[2], dicts["x"]]


    def case_protocols():
        return [float(streaming(Stream())), float(streaming(Table())), float(len(list(Shuffled(5, 2))))]


    def case_gate():
        torch.manual_seed(0)
        gate = Gate(4)
        inside = float(((gate.a >= 2.0) & (gate.a <= 3.0)).all())
        return [inside, gate.smooth(torch.linspace(-2.0, 2.0, 5)), gate.act(torch.linspace(-2.0, 2.0, 5))]


    def case_folded():
        conv, bn = nn.Conv2d(3, 4, 3, bias=False), nn.BatchNorm2d(4)
        conv.eval()
        bn.eval()
        x = torch.rand(1, 3, 6, 6)
        return [float((fuse_conv_bn_eval(conv, bn)(x) - bn(conv(x))).abs().max() < 1e-5)]


    def case_hub():
        name = "weights-0123abcd.pth"
        return [float(HASH_REGEX.search(name).group(1) == "0123abcd"), float(os.path.isabs(get_dir()))]
""")


def _port(text: str) -> str:
    return migrate_text(text, "helpers.py", table=load_table()).text


def test_checkpoints_hub_collate_and_protocols_need_no_torch() -> None:
    ported = _port(HELPERS)
    assert "torch" not in ported.replace("t2ms_support", "")
    for written in ("t2ms_support.save({", "return t2ms_support.load(path, **kwargs)", "t2ms_support.hub_dir()",
                    "t2ms_support.HASH_REGEX.search(name)", "t2ms_support.download_url_to_file(",
                    "os.path.basename(urllib.parse.urlparse(url).path)", "import urllib.parse\n",
                    "mindspore.__version__", "class Shuffled:", "class Stream:", "isinstance(dataset, t2ms_support.IterableDataset)",
                    "return list if fast else t2ms_support.default_collate\n", "t2ms_support.default_collate([(",
                    "t2ms_support.activation_fn(\"gelu\")", "t2ms_support.fuse_conv_bn_eval(conv, bn)",
                    "mindspore.nn.GELU(approximate=True)",
                    "(lambda a=0.0, b=1.0: self.a.set_data("):
        assert written in ported, written
    assert ported.rstrip().endswith("*self.init_range)") or "(*self.init_range)\n" in ported


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_the_port_of_the_helpers_gives_torchs_results(tmp_path: Path) -> None:
    from case_runner import assert_port_agrees, port_in_process

    original, port, _ = port_in_process(tmp_path, HELPERS)
    assert_port_agrees(original, port, ("mindspore",), rtol=1e-5, atol=1e-5)


READER = textwrap.dedent("""\
    import argparse

    import mindspore
    import t2ms_support


    def case_read():
        run = t2ms_support.load(PATH)
        state = run["state"]
        refused = 0.0
        try:
            t2ms_support.load(OTHER)
        except Exception:
            refused = 1.0
        with t2ms_support.safe_globals([argparse.Namespace]):
            allowed = t2ms_support.load(OTHER)["args"].lr
        return [state["w"], state["b"], state["t"], float(run["epoch"]), float(isinstance(run["p"], mindspore.Parameter)),
                refused, allowed, float(t2ms_support.unsafe_globals(OTHER) == ["argparse.Namespace"])]
""")


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
def test_a_file_torch_wrote_is_read_without_torch(tmp_path: Path) -> None:
    """torch.save's archive (storages, a strided view, a Parameter, an OrderedDict) read by the support module's
    load in a process where torch cannot be imported; a pickled class is refused unless safe_globals allows it."""
    import argparse
    import collections

    import numpy as np
    import torch
    from case_runner import case_results, port_in_process

    w = torch.randn(3, 4)
    t = torch.randn(4, 6)[:, 1::2]  # a view with strides of its own
    state = collections.OrderedDict(w=w, b=torch.arange(5), t=t)
    torch.save({"state": state, "epoch": 3, "p": torch.nn.Parameter(torch.ones(2))}, tmp_path / "a.pth")
    torch.save({"args": argparse.Namespace(lr=0.5), "w": torch.ones(1)}, tmp_path / "b.pth")
    assert torch.serialization.get_unsafe_globals_in_checkpoint(str(tmp_path / "b.pth")) == ["argparse.Namespace"]
    _, port, _ = port_in_process(tmp_path, "x = 1\n")
    (port / "prog.py").write_text(f"PATH = {str(tmp_path / 'a.pth')!r}\nOTHER = {str(tmp_path / 'b.pth')!r}\n"
                                  + READER, encoding="utf-8")
    code, stderr, got = case_results(port, "mindspore")
    assert code == 0, stderr[-3000:]
    read = got["case_read"]
    assert np.allclose(read[0], w.numpy().ravel()) and read[1] == [0, 1, 2, 3, 4]
    assert np.allclose(read[2], t.contiguous().numpy().ravel())
    assert read[3:] == [[3.0], [1.0], [1.0], [0.5], [1.0]]


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_the_hub_cache_folders_are_torchs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import importlib.util

    import torch.hub

    from torch2ms.data import folder

    spec = importlib.util.spec_from_file_location("support_for_test", str(folder().joinpath("t2ms_support.py")))
    assert spec is not None and spec.loader is not None
    support = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(support)
    for env in ({}, {"TORCH_HOME": str(tmp_path / "th")}, {"XDG_CACHE_HOME": str(tmp_path / "xdg")}):
        monkeypatch.delenv("TORCH_HOME", raising=False)
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        assert support.hub_dir() == torch.hub.get_dir() and support.torch_home() == torch.hub._get_torch_home()
    assert support.HASH_REGEX.pattern == torch.hub.HASH_REGEX.pattern
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        support.activation_fn("tanh")


RUNTIME = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    def to_sync(bn, group=None):
        return nn.SyncBatchNorm(bn.num_features, bn.eps, bn.momentum, bn.affine, bn.track_running_stats, group)


    class Resample(nn.Module):
        def __init__(self, mode):
            super().__init__()
            self.mode = mode
            self.table = nn.Parameter(torch.arange(32.0).reshape(1, 2, 4, 4))

        def forward(self, grid):
            return F.grid_sample(self.table.expand(grid.shape[0], -1, -1, -1).float(), grid, mode=self.mode,
                                 padding_mode="border", align_corners=False)


    def stage_sizes(widths):
        sizes, depths = torch.unique(torch.tensor(widths), return_counts=True)
        return sizes, depths


    def case_resample():
        grid = torch.linspace(-1.2, 1.2, 12).reshape(1, 3, 2, 2)
        return [Resample("bilinear")(grid), Resample("nearest")(grid)]


    def case_unique():
        sizes, depths = stage_sizes([48, 96, 96, 48, 240, 96])
        values, inverse = torch.unique(torch.tensor([[3, 1], [1, 2]]), return_inverse=True)
        return [sizes, depths, values, inverse]


    def case_expanded():
        return [torch.expand_copy(torch.tensor([[1.0], [2.0]]), (2, -1, 3))]
""")


def test_runtime_values_a_form_takes_are_written() -> None:
    """A process group passed by position (a port's groups are MindSpore's group names), a grid_sample mode known
    only at run time (the support module's, which also samples bicubic, the mode MindSpore lacks), unique's counts and inverse (the support module's)
    and expand_copy (broadcast_to)."""
    ported = _port(RUNTIME)
    assert "torch" not in ported.replace("t2ms_support", "")
    assert "mindspore.mint.nn.SyncBatchNorm(bn.num_features, bn.eps, bn.momentum, bn.affine, bn.track_running_stats, " \
           "group)" in ported
    assert "t2ms_support.grid_sample(" in ported and "mode=self.mode" in ported
    assert "t2ms_support.unique(mindspore.tensor(widths), return_counts=True)" in ported
    assert "mindspore.ops.broadcast_to(mindspore.tensor([[1.0], [2.0]]), (2, -1, 3))" in ported


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_the_runtime_forms_give_torchs_results(tmp_path: Path) -> None:
    from case_runner import assert_port_agrees, port_in_process

    original, port, _ = port_in_process(tmp_path, RUNTIME)
    assert_port_agrees(original, port, ("mindspore",), rtol=1e-6, atol=1e-6)


def test_normal_values_of_a_size_take_mindspores_shape_first() -> None:
    """torch.normal's overload of number mean and std with a size (a probe input built in a utility)."""
    ported = _port(textwrap.dedent("""\
        import torch


        def probe(model, input_shape=(2, 3, 8, 8)):
            x = torch.normal(0., 1., input_shape)
            return model(x)
    """))
    assert "x = mindspore.ops.normal(tuple(input_shape), 0., 1.)" in ported and "torch" not in ported


@pytest.mark.needs_mindspore
def test_normal_of_a_size_gives_torchs_shape_and_dtype() -> None:
    import mindspore

    value = eval("mindspore.ops.normal(tuple([2, 3]), 0., 1.)", {"mindspore": mindspore})  # the form as written
    assert value.shape == (2, 3) and value.dtype == mindspore.float32
