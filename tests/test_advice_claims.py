"""Every "what to do" is filled, and what the advice says about MindSpore is checked by running it in
MindSpore (and torch, where it claims the same result): the replacements the notes name, the forms the
tables call equivalent, the inputs they say MindSpore raises for, the kernels they say are missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from torch2ms.effort import advice, entry_effort
from torch2ms.engine import scan_source
from torch2ms.mappings import load_table

pytestmark = [pytest.mark.needs_torch, pytest.mark.needs_mindspore, pytest.mark.needs_numpy]

TABLE = load_table()
VERSION = (2, 10)


def test_every_entry_has_advice_on_every_device() -> None:
    for device in ("cpu", "gpu", "ascend"):
        empty = [e.api for e in TABLE.entries.values() if not advice(e, VERSION, device).strip()]
        assert empty == [], (device, empty[:10])


@pytest.mark.parametrize("api", ["torch.einsum", "torch.nn.functional.layer_norm", "torch.Tensor.normal_",
                                 "torch.roll", "torch.nn.Unfold"])
def test_the_blockers_without_a_note_say_where_their_form_runs(api: str) -> None:
    entry = TABLE.lookup(api)
    assert entry is not None and not entry.note
    text = advice(entry, VERSION, "cpu")
    target = entry.target_for(VERSION, "cpu")
    assert target is not None and f"{target.api} has no CPU kernel in MindSpore 2.10" in text
    assert "--device" in text and "Custom op" in text


def test_no_custom_op_advice_where_there_is_a_simple_answer() -> None:
    for api, effort in (("torch.inference_mode", "remove"), ("torch.autocast", "manual"),
                        ("torch.finfo", "manual"), ("torch.iinfo", "manual")):
        entry = TABLE.lookup(api)
        assert entry is not None and entry_effort(entry, VERSION, "cpu") == effort
        assert "Custom op" not in advice(entry, VERSION, "cpu")


def test_finfo_and_iinfo_advice_give_torchs_figures() -> None:
    import mindspore
    import numpy
    import torch

    for name in ("float16", "float32", "float64"):
        ours = numpy.finfo(getattr(numpy, name))  # the NumPy type named as the MindSpore dtype
        assert str(getattr(mindspore, name)).lower() == name
        theirs = torch.finfo(getattr(torch, name))
        assert (float(ours.eps), float(ours.max), float(ours.min), float(ours.tiny)) == \
            (theirs.eps, theirs.max, theirs.min, theirs.tiny)
    for name in ("int8", "int16", "int32", "int64", "uint8"):
        assert str(getattr(mindspore, name)).lower() == name
        ours_i = numpy.iinfo(getattr(numpy, name))
        theirs_i = torch.iinfo(getattr(torch, name))
        assert (int(ours_i.min), int(ours_i.max), ours_i.bits) == (theirs_i.min, theirs_i.max, theirs_i.bits)


def test_autocast_advice_runs_a_network_in_mixed_precision(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import mindspore
    import numpy

    monkeypatch.chdir(tmp_path)  # MindSpore's amp writes the rewritten network's source into the working folder

    net = mindspore.nn.Dense(4, 3)
    amp = mindspore.amp.auto_mixed_precision(net, amp_level="O1")
    out = amp(mindspore.Tensor(numpy.ones((2, 4), numpy.float32)))
    assert out.shape == (2, 3)


def test_inference_mode_advice_a_plain_forward_runs_and_gradients_come_only_from_grad() -> None:
    import mindspore
    import numpy

    net = mindspore.nn.Dense(4, 1)
    x = mindspore.Tensor(numpy.ones((2, 4), numpy.float32))
    plain = net(x)  # no context manager: it runs as plain code
    grads = mindspore.grad(lambda t: net(t).sum())(x)
    assert plain.shape == (2, 1) and grads.shape == (2, 4)


def test_sequential_cell_takes_cells_as_arguments_as_torch_does() -> None:
    import mindspore
    import numpy
    import torch

    data = numpy.linspace(-2, 2, 12, dtype=numpy.float32).reshape(3, 4)
    ours = mindspore.nn.SequentialCell(mindspore.mint.nn.ReLU(), mindspore.mint.nn.Tanh())(mindspore.Tensor(data))
    theirs = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Tanh())(torch.from_numpy(data))
    assert numpy.allclose(ours.asnumpy(), theirs.numpy(), atol=1e-6)


def test_tanh_takes_float_inputs_with_zeros_and_raises_for_integers_as_the_message_says() -> None:
    import mindspore
    import numpy
    import torch

    (diag,) = scan_source("import torch\ny = torch.tanh(x)\n", "m.py").diagnostics
    assert "zeros" not in diag.message and "int32 input" in diag.message
    data = numpy.array([[0.0, 0.5, 0.0], [-1.0, 0.0, 2.0]], numpy.float32)
    assert numpy.allclose(mindspore.mint.tanh(mindspore.Tensor(data)).asnumpy(),
                          torch.tanh(torch.from_numpy(data)).numpy(), atol=1e-6)
    for dtype in (numpy.int32, numpy.int64, numpy.bool_):
        with pytest.raises(TypeError):  # (the kernel is chosen when the result is read)
            mindspore.mint.tanh(mindspore.Tensor(numpy.ones((2,), dtype))).asnumpy()


def test_no_quoted_error_in_a_message_is_cut_mid_word() -> None:
    import re

    cut = []
    for entry in TABLE.entries.values():
        for target in entry.targets:
            for fact in target.params:
                quoted = re.search(r"\(e\.g\. (.*)\)$", fact.note)
                if quoted and len(quoted.group(1)) >= 120 and not quoted.group(1).endswith("…"):
                    cut.append((entry.api, quoted.group(1)[-20:]))
    assert cut == []


@pytest.mark.parametrize("api", ["torch.roll", "torch.einsum"])
def test_a_form_the_tables_say_has_no_cpu_kernel_raises_on_cpu(api: str) -> None:
    import mindspore
    import numpy

    entry = TABLE.lookup(api)
    assert entry is not None
    target = entry.target_for(VERSION, "cpu")
    assert target is not None and "cpu" in target.no_kernel
    x = mindspore.Tensor(numpy.ones((2, 3), numpy.float32))
    with pytest.raises(Exception):  # noqa: B017 - MindSpore's kernel selection raises RuntimeError or TypeError
        if api == "torch.roll":
            mindspore.mint.roll(x, 1, 0).asnumpy()
        else:
            mindspore.mint.einsum("ij->ji", x).asnumpy()
