"""Torch runtime helpers a port meets at import or build time, each written as the MindSpore or plain-Python
value the tables name: autocast's dtype queries (torch's default for the device, as autocast is never on),
context managers that only steer torch's tape or autocast among others in one `with`. The programs are written
the way libraries write these constructs."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from torch2ms.mappings import load_table
from torch2ms.migrate.pipeline import migrate_text


def _port(text: str) -> str:
    return migrate_text(text, "helpers.py", table=load_table()).text


AUTOCAST = textwrap.dedent("""\
    import torch


    def low_precision(device_kind="cuda"):
        if device_kind == "cpu":
            return torch.get_autocast_cpu_dtype()
        if device_kind == "any":
            return torch.get_autocast_gpu_dtype()
        return torch.get_autocast_dtype(device_kind)

""")


def test_autocast_dtype_queries_are_torchs_defaults() -> None:
    ported = _port(AUTOCAST)
    assert "return mindspore.bfloat16\n" in ported and "return mindspore.float16\n" in ported
    assert "(mindspore.bfloat16 if device_kind in ('cpu', 'hpu', 'xla', 'maia') else mindspore.float16)" in ported
    assert "torch" not in ported.replace("mindspore", "")


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_autocast_dtype_defaults_agree_with_torch() -> None:
    import mindspore
    import torch

    namespace: dict[str, object] = {}
    exec(compile(_port(AUTOCAST), "helpers.py", "exec"), namespace)
    low = namespace["low_precision"]
    assert callable(low)
    same = {torch.bfloat16: mindspore.bfloat16, torch.float16: mindspore.float16}
    for device in ("cpu", "cuda", "xpu", "mps", "hpu", "xla", "maia", "mtia"):
        assert low(device) == same[torch.get_autocast_dtype(device)], device


CONTEXTS = textwrap.dedent("""\
    import threading
    import torch

    LOCK = threading.Lock()


    def cached(fn, x):
        with torch.inference_mode(False), torch.autocast(device_type="cpu", enabled=False), LOCK:
            y = fn(x)
        with torch.no_grad(), torch.autocast("cpu", enabled=False):
            z = fn(y)
        with LOCK, torch.autocast("cpu"):
            return z
""")


def test_tape_and_autocast_switches_go_from_a_with_of_several_and_the_others_stay() -> None:
    ported = _port(CONTEXTS)
    assert "    with LOCK:\n        y = fn(x)\n    z = fn(y)\n" in ported
    assert "    with LOCK, torch.autocast(\"cpu\"):\n" in ported  # autocast on: a person's decision, kept


FOLDING = textwrap.dedent('''\
    import argparse
    from typing import List

    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    COLS = torch.tensor(np.random.RandomState(5).uniform(-1.0, 1.0, (2, 18, 16)).astype(np.float32))


    class Merge(nn.Module):
        def __init__(self, k=3, stride=2):
            super().__init__()
            self.k, self.stride = k, stride

        def forward(self, cols, h: int, w: int):
            outs = torch.jit.annotate(List[torch.Tensor], [])
            outs.append(F.fold(cols, output_size=(h, w), kernel_size=self.k, padding=1, stride=self.stride))
            outs.append(F.fold(cols[:, :, :9], h - 1, self.k, 1, 1, self.stride + 1))
            return outs[0].sum() + outs[1].sum(), outs[0]


    def grid_cells(size, k):
        torch._assert_async(torch.tensor(size % k == 0))
        return size // k


    def restore(path):
        with torch.serialization.safe_globals([argparse.Namespace]):
            return path


    def case_fold():
        return list(Merge()(COLS, 8, 8)) + [F.fold(COLS[:, :, :12], (6, 10), (3, 2), dilation=(1, 2), stride=(1, 3))]

    def case_assert_and_allow_list():
        try:
            grid_cells(10, 3)
            raised = 0.0
        except RuntimeError:
            raised = 1.0
        return [float(grid_cells(12, 3)), raised, float(restore(4))]
    ''')


def test_annotate_assert_fold_and_the_unpicklers_allow_list_need_no_torch(tmp_path: Path) -> None:
    from case_runner import port_in_process

    _, _, ported = port_in_process(tmp_path, FOLDING)
    assert "torch" not in ported.replace("t2ms_support", "")
    assert "outs = []\n" in ported and "t2ms_support.assert_async(mindspore.tensor(size % k == 0))" in ported
    # the allow-list stays: the support module's load (torch.load's form) reads only what it allows
    assert "    with t2ms_support.safe_globals([argparse.Namespace]):\n        return path\n" in ported
    assert ported.count("mindspore.ops.fold(") == 3


def test_a_layer_named_through_its_private_module_is_the_public_layer() -> None:
    """`torch.nn.modules.batchnorm.BatchNorm2d` (an attribute chain through torch's private module) is
    torch.nn.BatchNorm2d, as `from torch.nn.modules.batchnorm import BatchNorm2d` already is."""
    from torch2ms.config import Config
    from torch2ms.engine import scan_source

    source = textwrap.dedent("""\
        import torch
        from torch import nn


        def norms(model):
            return [m for m in model.modules() if isinstance(m, (torch.nn.modules.batchnorm.BatchNorm2d,
                                                                 nn.modules.conv.Conv2d))]
    """)
    apis = [d.torch_api for d in scan_source(source, "m.py", Config(), load_table()).diagnostics]
    assert "torch.nn.BatchNorm2d" in apis and "torch.nn.Conv2d" in apis
    assert not [a for a in apis if a and a.startswith("torch.nn.modules.")]


FROZEN = textwrap.dedent("""\
    import torch.nn as nn
    from torchvision.ops.misc import FrozenBatchNorm2d


    class Stem(nn.Module):
        def __init__(self, chans=4, norm_layer=FrozenBatchNorm2d):
            super().__init__()
            self.conv = nn.Conv2d(3, chans, 3, padding=1)
            self.norm = norm_layer(chans)

        def forward(self, x):
            return self.norm(self.conv(x))


    def freeze(module):
        if isinstance(module, nn.BatchNorm2d):
            return FrozenBatchNorm2d(module.num_features, eps=module.eps)
        return module


    def is_frozen(module):
        return isinstance(module, FrozenBatchNorm2d)
""")


def test_a_support_class_for_every_call_is_also_the_type_and_the_value() -> None:
    """torchvision's FrozenBatchNorm2d is the support module's class wherever it is named: called, passed as a
    value, or named as a type; the file no longer imports torchvision."""
    ported = _port(FROZEN)
    assert "def __init__(self, chans=4, norm_layer=t2ms_support.FrozenBatchNorm2d):" in ported
    assert "return t2ms_support.FrozenBatchNorm2d(module.num_features, eps=module.eps)" in ported
    assert "return isinstance(module, t2ms_support.FrozenBatchNorm2d)" in ported
    assert "torchvision" not in ported


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
def test_the_frozen_batch_norm_is_torchs_batch_norm_on_fixed_statistics() -> None:
    import mindspore
    import numpy as np
    import torch

    from torch2ms.config import Config
    from torch2ms.migrate.support import module_text

    namespace: dict[str, object] = {}
    exec(compile(module_text(load_table(), Config().version, "cpu"), "t2ms_support.py", "exec"), namespace)
    rng = np.random.RandomState(11)
    x, weight, bias, mean = (rng.uniform(-1.0, 1.0, shape).astype(np.float32) for shape in ((2, 5, 3, 4), 5, 5, 5))
    var = rng.uniform(0.5, 2.0, 5).astype(np.float32)
    layer = namespace["FrozenBatchNorm2d"](5, eps=1e-3)  # type: ignore[operator]
    for name, value in (("weight", weight), ("bias", bias), ("running_mean", mean), ("running_var", var)):
        getattr(layer, name).set_data(mindspore.Tensor(value))
    assert not layer.trainable_params()
    expected = torch.nn.functional.batch_norm(torch.tensor(x), torch.tensor(mean), torch.tensor(var),
                                              torch.tensor(weight), torch.tensor(bias), training=False, eps=1e-3)
    for train in (False, True):  # fixed statistics in training too
        got = layer.set_train(train)(mindspore.Tensor(x)).asnumpy()
        assert np.allclose(got, expected.numpy(), rtol=1e-5, atol=1e-6)


BATCH_NORM = textwrap.dedent('''\
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    X = torch.tensor(np.random.RandomState(2).uniform(-1.0, 1.0, (4, 3, 5)).astype(np.float32))


    class Norm(nn.Module):
        def __init__(self, channels=3, track=True):
            super().__init__()
            self.weight = nn.Parameter(torch.linspace(0.5, 1.5, channels))
            self.bias = nn.Parameter(torch.linspace(-0.2, 0.2, channels))
            self.track = track
            self.register_buffer("running_mean", torch.zeros(channels))
            self.register_buffer("running_var", torch.ones(channels))

        def forward(self, x):
            use_batch = self.training or not self.track
            return F.batch_norm(x, self.running_mean if self.track else None, self.running_var if self.track else None,
                                self.weight, self.bias, use_batch, 0.3, 1e-5)


    def case_training_updates_the_running_statistics():
        norm = Norm().train()
        first = norm(X)
        second = norm(X * 2.0 + 1.0)
        return first, second, norm.running_mean, norm.running_var

    def case_evaluation_uses_them_and_untracked_uses_the_batch():
        norm = Norm().train()
        norm(X)
        norm.eval()
        return norm(X + 0.5), Norm(track=False).eval()(X)
    ''')


def test_a_batch_norm_with_statistics_known_at_run_time_is_the_support_modules() -> None:
    from torch2ms.config import Config
    from torch2ms.engine import scan_source

    ported = _port(BATCH_NORM)
    assert "return t2ms_support.batch_norm(x, self.running_mean if self.track else None," in ported
    assert "torch" not in ported.replace("t2ms_support", "")
    # literal absent statistics keep the composed form; a text fix leaves the call its finding
    literal = "import torch.nn.functional as F\n\n\ndef f(x):\n    return F.batch_norm(x, None, None, training=True)\n"
    assert "t2ms_support" not in _port(literal) and "mindspore.ops.sqrt" in _port(literal)
    found = [d for d in scan_source(BATCH_NORM, "m.py", Config(), load_table()).diagnostics
             if d.torch_api == "torch.nn.functional.batch_norm"]
    assert len(found) == 1 and found[0].fix is None


CHECKPOINTED = textwrap.dedent('''\
    import numpy as np
    import torch
    import torch.nn as nn
    from torch.utils.checkpoint import checkpoint

    X = torch.tensor(np.random.RandomState(4).uniform(-1.0, 1.0, (3, 4)).astype(np.float32))


    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Tanh(), nn.Sigmoid()])
            self.grad_checkpointing = True

        def forward(self, x):
            for blk in self.blocks:
                x = checkpoint(blk, x, use_reentrant=False) if self.grad_checkpointing else blk(x)
            return x


    def scaled(x, factor=1.0, shift=0.0):
        return x * factor + shift


    def run(fn, *args, **kwargs):
        return torch.utils.checkpoint.checkpoint(fn, *args, use_reentrant=False, preserve_rng_state=True, **kwargs)


    def case_function_with_unpacked_arguments():
        return run(scaled, X, 2.0, shift=0.5), run(torch.tanh, X)

    def case_blocks():
        stack = Stack()
        return [stack(X)]
    ''')


def test_a_checkpointed_call_is_the_call() -> None:
    ported = _port(CHECKPOINTED)
    assert "x = blk(x) if self.grad_checkpointing else blk(x)" in ported
    assert "return fn(*args, **kwargs)" in ported
    assert "torch" not in ported.replace("mindspore", "")


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
@pytest.mark.parametrize("mode", ["mindspore", "graph"])
@pytest.mark.parametrize("program", [FOLDING, BATCH_NORM, CHECKPOINTED], ids=["fold_assert", "batch_norm", "checkpoint"])
def test_the_ported_programs_agree_with_torch(tmp_path: Path, program: str, mode: str) -> None:
    from case_runner import assert_port_agrees, port_in_process

    original, port, ported = port_in_process(tmp_path, program)
    expected = assert_port_agrees(original, port, (mode,), rtol=1e-5, atol=1e-5, context=ported)
    assert len(expected) == 2
    if program is FOLDING:  # the assertion raised on both sides
        assert expected["case_assert_and_allow_list"] == [[4.0], [1.0], [4.0]]


DATA = textwrap.dedent("""\
    import math
    import torch.utils.data as data
    from torch.utils.data import Sampler


    class Stream(data.IterableDataset):
        def __init__(self, n):
            super().__init__()
            self.n = n

        def __iter__(self):
            info = data.get_worker_info()
            start, step = (0, 1) if info is None else (info.id, info.num_workers)
            for i in range(start, self.n, step):
                yield (float(i) * 0.5,)


    class EveryOther(Sampler):
        def __init__(self, dataset):
            self.dataset = dataset

        def __iter__(self):
            return iter(range(0, len(self.dataset), 2))

        def __len__(self):
            return math.ceil(len(self.dataset) / 2)
""")


def test_iterable_datasets_and_samplers_lose_their_torch_base() -> None:
    ported = _port(DATA)
    assert "class Stream:\n" in ported and "class EveryOther:\n" in ported and "torch" not in ported
    assert "info = None\n" in ported  # not in a loader worker


@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
def test_the_ported_stream_and_sampler_feed_a_mindspore_pipeline() -> None:
    import mindspore.dataset as ds

    namespace: dict[str, object] = {}
    exec(compile(_port(DATA), "data.py", "exec"), namespace)
    stream = ds.GeneratorDataset(namespace["Stream"](5), column_names=["x"], shuffle=False)  # type: ignore[operator]
    assert [float(row[0]) for row in stream.create_tuple_iterator(output_numpy=True)] == [0.0, 0.5, 1.0, 1.5, 2.0]
    source = [(float(i),) for i in range(7)]
    picked = ds.GeneratorDataset(source, column_names=["x"], sampler=namespace["EveryOther"](source))  # type: ignore[operator]
    assert [float(row[0]) for row in picked.create_tuple_iterator(output_numpy=True)] == [0.0, 2.0, 4.0, 6.0]


PRIVATE_BASE = textwrap.dedent("""\
    import torch
    from torch import nn


    def norm_layers(model):
        return [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)
                and not isinstance(m, nn.modules.instancenorm._InstanceNorm)]


    class Custom(nn.modules.batchnorm._BatchNorm):
        pass
""")


def test_a_private_base_named_as_a_type_is_its_subclasses_mindspore_classes() -> None:
    """isinstance against torch's private batch-norm base: the MindSpore classes its public subclasses are written
    as; subclassing it keeps its finding (a tuple is no base)."""
    ported = _port(PRIVATE_BASE)
    assert "isinstance(m, (mindspore.nn.BatchNorm1d, mindspore.nn.BatchNorm2d," in ported
    assert "isinstance(m, (mindspore.nn.InstanceNorm1d, mindspore.nn.InstanceNorm2d, mindspore.nn.InstanceNorm3d))" in ported
    assert "class Custom(nn.modules.batchnorm._BatchNorm):" in ported


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_the_private_bases_types_are_the_targets_of_every_public_subclass() -> None:
    import importlib
    import inspect

    import torch

    table = load_table()
    for api in ("torch.nn.modules.batchnorm._BatchNorm", "torch.nn.modules.instancenorm._InstanceNorm"):
        entry = table.lookup(api)
        assert entry is not None and entry.rewrite is not None
        types = set(entry.rewrite.arg("types", ()))
        base = getattr(importlib.import_module(api.rpartition(".")[0]), api.rpartition(".")[2])
        subclasses = [f"torch.nn.{n}" for n, c in vars(torch.nn).items()
                      if inspect.isclass(c) and issubclass(c, base) and c is not base]
        written = [table.lookup(name) for name in subclasses]
        assert len([sub for sub in written if sub is not None and sub.targets]) >= 3  # (the lazy ones have none)
        for name, sub in zip(subclasses, written):
            assert sub is not None and {t.api for t in sub.targets} <= types, name
        for dotted in types:  # each a MindSpore class
            module, _, cls = dotted.rpartition(".")
            assert inspect.isclass(getattr(importlib.import_module(module), cls)), dotted
