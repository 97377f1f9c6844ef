"""Attributes of layers that MindSpore's class names otherwise or lacks (the targets' `attributes`): the facts
introspected at table-build time, the finding and fix on torch code (`scan --fix`, `migrate`), and the port check on
MindSpore code. The programs are small networks of the kinds other projects write (a text CNN, an audio encoder,
an embedding model), not the model files of the benchmarks."""

from __future__ import annotations

import textwrap
import warnings
from pathlib import Path
from typing import Any

import pytest

from conftest import load_script
from torch2ms.config import Config
from torch2ms.engine import scan_source
from torch2ms.fix import fix_text
from torch2ms.mappings import load_table
from torch2ms.migrate.pipeline import migrate_text
from torch2ms.model import Diagnostic

ROOT = Path(__file__).resolve().parent.parent


def _scan(code: str) -> list[Diagnostic]:
    return list(scan_source(textwrap.dedent(code), "net.py", Config()).diagnostics)


def _at(code: str, line: int, code_name: str | None = None) -> list[Diagnostic]:
    return [d for d in _scan(code) if d.span.start_line == line and (code_name is None or d.code == code_name)]


# ---------------------------------------------------------------------------------------------- the build step
class _Base:
    def __init__(self, width: int) -> None:
        self.width = width
        self._private = 1


class _Layer(_Base):
    scale: float

    def __init__(self, width: int, groups: int) -> None:
        super().__init__(width)
        self.groups, self.extra = groups, 0
        self.scale = 1.0
        self.register_buffer("moving", None)
        setattr(self, "flag", True)  # noqa: B010 - the form the build step reads
        self.weight = Parameter(width)

    def register_buffer(self, name: str, value: object) -> None:
        setattr(self, name, value)


class Parameter:  # a stand-in for a framework's Parameter class: set_attributes reads the name of the call
    def __init__(self, value: object) -> None:
        self.value = value


def test_set_attributes_reads_what_the_methods_set_on_self_up_to_the_base_left_out() -> None:
    build = load_script(ROOT / "scripts" / "build_tables.py", "build_tables_attrs")
    names, tensors = build.set_attributes(_Layer, ())
    assert names == {"width", "groups", "extra", "scale", "moving", "flag", "weight"}
    assert tensors == {"moving", "weight"}
    names, _ = build.set_attributes(_Layer, (_Base,))
    assert "width" not in names and "groups" in names


def test_attribute_facts_rename_only_through_a_renamed_constructor_parameter() -> None:
    build = load_script(ROOT / "scripts" / "build_tables.py", "build_tables_attrs")
    params = [{"kind": "renamed", "torch": "groups", "ms": "group"},
              {"kind": "default_differs", "torch": "bias", "ms": "has_bias"},
              {"kind": "renamed", "torch": "dim", "ms": "axis"}]
    facts = build.attribute_facts({"groups", "bias", "stride", "padding_mode", "dim"},
                                  {"group", "has_bias", "stride"}, params, {"bias"})
    # bias is a tensor (the weight facts' business); dim's MindSpore name is not an attribute of the class
    assert facts == {"dim": None, "groups": "group", "padding_mode": None}


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_the_committed_attribute_facts_hold_for_built_layers() -> None:
    """Each fact of these targets, on real instances: torch's attribute is MindSpore's renamed one with the same
    value, or MindSpore's instance has none."""
    import mindspore
    import torch

    warnings.simplefilter("ignore")
    table = load_table()
    view = table.view((2, 10), "cpu")
    built = {
        "torch.nn.Conv1d": ((4, 8, 3), {"groups": 2}, (4, 8, 3), {"group": 2}),
        "torch.nn.Linear": ((5, 3), {}, None, None),  # the CPU form keeps torch's names: no facts
        "torch.nn.LayerNorm": ((6,), {"eps": 1e-3}, ((6,),), {"epsilon": 1e-3}),
        "torch.nn.Embedding": ((11, 7), {}, (11, 7), {}),
        "torch.nn.LeakyReLU": ((0.3,), {}, (0.3,), {}),
        "torch.nn.BatchNorm3d": ((5,), {}, (5,), {}),
        "torch.nn.AvgPool2d": ((2,), {}, (2,), {}),
    }
    checked = 0
    for api, (args, kwargs, ms_args, ms_kwargs) in built.items():
        entry = table.lookup(api)
        assert entry is not None
        target = view.target(entry)
        assert target is not None
        if ms_args is None:
            assert target.attributes == ()
            continue
        assert target.attributes, api
        torch_layer = getattr(torch.nn, api.rpartition(".")[2])(*args, **kwargs)
        module, _, leaf = target.api.rpartition(".")
        ms_layer = getattr(__import__(module, fromlist=[leaf]), leaf)(*ms_args, **(ms_kwargs or {}))
        for torch_name, ms_name in target.attributes:
            assert hasattr(torch_layer, torch_name), (api, torch_name)
            if ms_name is None:
                assert not hasattr(ms_layer, torch_name), (target.api, torch_name)
            else:
                assert not hasattr(ms_layer, torch_name), (target.api, torch_name)
                assert getattr(ms_layer, ms_name) == getattr(torch_layer, torch_name), (target.api, ms_name)
            checked += 1
    assert checked >= 15
    assert isinstance(mindspore.nn.Conv1d(4, 8, 3, group=2).group, int)


# ---------------------------------------------------------------------------------------------- the scan and fix
TEXT_CNN = """\
import torch
import torch.nn as nn


class TextCNN(nn.Module):
    def __init__(self, vocab, dim, channels):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.convs = nn.ModuleList([nn.Conv1d(dim, channels, k, groups=1) for k in (3, 4, 5)])
        self.norm = nn.LayerNorm(channels * 3, eps=1e-3)
        self.out = nn.Linear(channels * 3, 2)
        for m in self.modules():
            if isinstance(m, (nn.Conv1d, nn.Conv2d)):
                fan_in = m.in_channels * m.kernel_size[0] // m.groups
                nn.init.uniform_(m.weight, -fan_in ** -0.5, fan_in ** -0.5)
        self.width = self.embed.embedding_dim + self.embed.num_embeddings * 0
        self.eps = self.norm.eps
        self.norm.eps = 1e-5

    def forward(self, tokens):
        x = self.embed(tokens).transpose(1, 2)
        x = torch.cat([torch.amax(conv(x), dim=2) for conv in self.convs], dim=1)
        return self.out(self.norm(x))


net = TextCNN(50, 8, 4)
y = net(torch.randint(0, 50, (2, 9)))
"""


def test_attributes_on_layers_typed_by_the_scan_get_a_fix_with_mindsporess_name() -> None:
    found = {(d.span.start_line, d.span.start_col, d.code): d for d in _scan(TEXT_CNN)
             if d.torch_api and d.torch_api.count(".") == 3}
    # m under an isinstance test with a tuple of classes: both MindSpore classes call it `group`
    groups = found[(14, 61, "TMS101")]
    assert groups.torch_api == "torch.nn.Conv1d.groups" and groups.mindspore_api == "mindspore.nn.Conv1d.group"
    assert groups.fix is not None and groups.fix.safe and [e.text for e in groups.fix.edits] == ["group"]
    assert found[(16, 21, "TMS101")].mindspore_api == "mindspore.nn.Embedding.embedding_size"
    assert found[(16, 48, "TMS101")].mindspore_api == "mindspore.nn.Embedding.vocab_size"
    assert found[(17, 19, "TMS101")].mindspore_api == "mindspore.nn.LayerNorm.epsilon"
    # a write: MindSpore's LayerNorm holds its epsilon in the primitive it builds; no fix can move the value there
    write = found[(18, 8, "TMS102")]
    assert write.fix is None and "'epsilon' in mindspore.nn.LayerNorm" in write.message
    # a read of what the classes keep (in_channels) is no finding; kernel_size is one: mindspore.nn.Conv1d holds
    # (1, 3) where torch's Conv1d holds (3,) (measured: `differing_attributes`), so kernel_size[0] reads 1
    assert not [d for d in found.values() if d.torch_api and d.torch_api.endswith(".in_channels")]
    kernel, = [d for d in found.values() if d.torch_api and d.torch_api.endswith(".kernel_size")]
    assert kernel.code == "TMS102" and kernel.span.start_line == 14
    assert "mindspore.nn.Conv1d holds 'kernel_size' with another value (torch (3,), MindSpore (1, 3)" in kernel.message


def test_an_attribute_mindspore_lacks_is_an_error_when_read_and_a_warning_when_written() -> None:
    code = """\
        import torch.nn as nn

        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.pool = nn.AvgPool2d(2, ceil_mode=True)
                self.bn = nn.BatchNorm1d(16)
                self.rounding = self.pool.ceil_mode
                self.bn.track_running_stats = False
                if self.bn.track_running_stats:
                    self.rounding = False
    """
    read = _at(code, 8, "TMS103")
    assert len(read) == 1 and "mindspore.nn.AvgPool2d has no attribute 'ceil_mode'" in read[0].message
    assert read[0].fix is None
    written = [d for d in _scan(code) if d.span.start_line == 9 and d.torch_api and "track" in d.torch_api]
    assert [(d.code, d.fix) for d in written] == [("TMS102", None)]
    assert "mindspore.nn.BatchNorm1d has no attribute 'track_running_stats'" in written[0].message
    assert len([d for d in _at(code, 10, "TMS103") if "track_running_stats" in d.message]) == 1


def test_a_class_tuple_whose_mindspore_classes_disagree_gets_a_finding_without_fix() -> None:
    code = """\
        import torch.nn as nn

        def widths(net):
            for m in net.modules():
                if isinstance(m, (nn.Linear, nn.Bilinear)):
                    print(m.out_features)
    """
    found = [d for d in _at(code, 6) if d.torch_api and d.torch_api.endswith(".out_features")]
    # Linear's CPU form (mint) keeps out_features; BiDense calls it out_channels
    assert [d.code for d in found] == ["TMS102"] and found[0].fix is None
    assert "'out_features' in mindspore.mint.nn.Linear" in found[0].message
    assert "'out_channels' in mindspore.nn.BiDense" in found[0].message


def test_scan_fix_writes_mindspores_names() -> None:
    fixed = fix_text(TEXT_CNN, "net.py", unsafe=True).text
    assert "// m.group\n" in fixed
    assert "self.embed.embedding_size + self.embed.vocab_size * 0" in fixed
    assert "self.eps = self.norm.epsilon" in fixed and "self.norm.eps = 1e-5" in fixed


@pytest.mark.needs_mindspore
def test_migrate_writes_mindspores_names_and_the_port_builds_and_runs() -> None:
    port = migrate_text(TEXT_CNN, "net.py")
    assert "// m.group\n" in port.text and "self.eps = self.norm.epsilon" in port.text
    # the write stays on the port's to-do list: MindSpore's LayerNorm never reads an attribute named eps
    assert [d.code for d in port.result.diagnostics] == ["TMS403"]
    assert port.text.splitlines()[port.result.diagnostics[0].span.start_line - 1].strip() == "self.norm.eps = 1e-5"
    assert "'eps' is its 'epsilon'" in port.result.diagnostics[0].message
    import mindspore

    warnings.simplefilter("ignore")
    mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    namespace: dict[str, Any] = {}
    exec(compile(port.text, "net.py", "exec"), namespace)  # noqa: S102 - the test's own port
    net = namespace["net"]
    assert net.width == 8 and abs(net.eps - 1e-3) < 1e-9 and net.norm.epsilon == 1e-3
    assert tuple(namespace["y"].shape) == (2, 2)


# ---------------------------------------------------------------------------------------------- the port check
@pytest.mark.needs_mindspore
def test_the_port_check_flags_torchs_attribute_names_on_mindspore_cells_and_they_raise() -> None:
    code = """\
        import mindspore
        import mindspore.nn as nn

        class Stem(nn.Cell):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 6, 3, group=3, pad_mode='pad')
                self.drop = nn.Dropout2d(p=0.2)
                for _, m in self.cells_and_names():
                    if isinstance(m, nn.Conv2d):
                        self.per_group = m.out_channels // m.group
                self.kept = self.drop.keep_prob

        stem = Stem()
    """
    assert not [d for d in _scan(code) if d.code.startswith("TMS4")]
    import mindspore

    warnings.simplefilter("ignore")
    mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    namespace: dict[str, Any] = {}
    exec(compile(textwrap.dedent(code), "stem.py", "exec"), namespace)  # noqa: S102 - the test's own snippet
    assert namespace["stem"].per_group == 2
    for wrong, line, words, raised in (
            (code.replace("// m.group", "// m.groups"), 11, "torch's attribute 'groups' is its 'group'", "groups"),
            (code.replace("self.drop.keep_prob", "self.drop.p"), 12, "no such attribute", "'p'")):
        found = [d for d in _scan(wrong) if d.code.startswith("TMS4")]
        assert [(d.span.start_line, d.code) for d in found] == [(line, "TMS403")]
        assert words in found[0].message
        with pytest.raises(AttributeError, match=raised):
            exec(compile(textwrap.dedent(wrong), "stem.py", "exec"), {})  # noqa: S102 - the test's own snippet


@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
def test_support_layers_keep_torchs_names_and_the_narrowed_rename_holds_for_them() -> None:
    """A layer built with unpacked keywords is the support module's torch-signature layer, which keeps torch's
    attribute names; under ``isinstance(m, nn.Conv2d)`` the value may be either class, and MindSpore's name is the
    one both have (the support layer derives from MindSpore's)."""
    from torch2ms.migrate.files import migrate_paths  # the whole tree: the support module is written beside it
    from torch2ms.migrate.pipeline import Options

    code = """\
        import torch
        import torch.nn as nn


        class Mixer(nn.Module):
            def __init__(self, dim, **kw):
                super().__init__()
                self.dw = nn.Conv2d(dim, dim, 3, padding=1, groups=dim, **kw)
                self.pw = nn.Conv2d(dim, dim * 2, 1, groups=2)
                self.groups = self.dw.groups + self.pw.groups
                for m in self.modules():
                    if isinstance(m, nn.Conv2d):
                        m.weight.data.fill_(1.0 / (m.kernel_size[0] * m.kernel_size[1] * m.in_channels // m.groups))

            def forward(self, x):
                return self.pw(self.dw(x))


        net = Mixer(4, bias=False)
        y = net(torch.ones(1, 4, 5, 5))
    """
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        source, out = Path(folder) / "src", Path(folder) / "out"
        source.mkdir()
        (source / "mixer.py").write_text(textwrap.dedent(code))
        migrate_paths([str(source)], Options(), str(out))
        text = (out / "mixer.py").read_text()
        assert "self.dw.groups + self.pw.group" in text and "// m.group)" in text
        import sys

        import mindspore
        import numpy

        warnings.simplefilter("ignore")
        mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
        sys.path.insert(0, str(out))
        try:
            namespace: dict[str, Any] = {"__name__": "mixer_port"}
            exec(compile(text, str(out / "mixer.py"), "exec"), namespace)  # noqa: S102 - the test's own port
        finally:
            sys.path.remove(str(out))
            sys.modules.pop("t2ms_support", None)
    net = namespace["net"]
    assert net.groups == 6 and tuple(namespace["y"].shape) == (1, 8, 5, 5)
    # every weight is 1 / (k * k * in / groups): the depthwise (support) layer's 1 / 9, the pointwise one's 1 / 2
    assert net.dw.weight.asnumpy() == pytest.approx(numpy.full((4, 1, 3, 3), 1 / 9), rel=1e-6)
    assert net.pw.weight.asnumpy() == pytest.approx(numpy.full((8, 2, 1, 1), 0.5), rel=1e-6)


@pytest.mark.needs_mindspore
def test_add_module_on_a_parameter_annotated_as_a_sequential_is_on_the_ports_to_do_list() -> None:
    code = """\
        import torch
        import torch.nn as nn


        def deepen(stack: nn.Sequential, depth: int) -> None:
            for i in range(depth):
                stack.add_module(f"act{i}", nn.Tanh())


        body = nn.Sequential(nn.Linear(3, 3))
        deepen(body, 2)
        y = body(torch.ones(2, 3))
    """
    port = migrate_text(textwrap.dedent(code), "stack.py")
    assert "stack: mindspore.nn.SequentialCell" in port.text
    found = [d for d in port.result.diagnostics if d.code == "TMS403"]
    assert len(found) == 1 and "'add_module'" in found[0].message
    assert "stack.add_module(" in port.text.splitlines()[found[0].span.start_line - 1]
    import mindspore

    warnings.simplefilter("ignore")
    mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    with pytest.raises(AttributeError, match="add_module"):
        exec(compile(port.text, "stack.py", "exec"), {})  # noqa: S102 - the test's own port


def test_a_cell_annotation_admits_subclasses_whose_own_methods_are_not_judged() -> None:
    code = """\
        import mindspore

        def widen(block: mindspore.nn.SequentialCell, cell: mindspore.nn.Cell) -> None:
            block.append(mindspore.nn.ReLU())
            block.grow(2)
            cell.reset_state()
            cell.zero_grad()
    """
    found = [(d.span.start_line, d.code) for d in _scan(code) if d.code.startswith("TMS4")]
    assert found == [(7, "TMS403")]  # torch's Module.zero_grad; grow and reset_state may be a subclass's


# ---------------------------------------------------------------------------------------------- forward defaults
@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
@pytest.mark.parametrize("layer", ["GRUCell", "RNNCell", "LSTMCell"])
def test_a_recurrent_cell_called_without_its_state_gets_torchs_zero_state(layer: str) -> None:
    """torch's cell starts from zeros when a call leaves the state out; MindSpore's construct requires it: the fix
    passes the zero state the tables write (`forward_defaults`), and the port computes what torch does."""
    import mindspore
    import numpy
    import torch

    code = f"""\
        import torch
        import torch.nn as nn


        class Speller(nn.Module):
            def __init__(self):
                super().__init__()
                self.cell = nn.{layer}(4, 6)

            def forward(self, x):
                state = self.cell(x)
                return state[0] if isinstance(state, tuple) else state


        speller = Speller()
    """
    found = [d for d in _scan(code) if d.span.start_line == 11 and d.code == "TMS102"]
    assert len(found) == 1 and "called without 'hx'" in found[0].message and found[0].fix is not None
    port = migrate_text(textwrap.dedent(code), "speller.py")
    assert "self.cell(x, " in port.text and "self.cell.hidden_size" in port.text
    assert not [d for d in port.result.diagnostics if d.code.startswith("TMS4")]
    warnings.simplefilter("ignore")
    mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    namespace: dict[str, Any] = {}
    exec(compile(port.text, "speller.py", "exec"), namespace)  # noqa: S102 - the test's own port
    torch_side: dict[str, Any] = {}
    exec(compile(textwrap.dedent(code), "speller.py", "exec"), torch_side)  # noqa: S102 - the test's own code
    torch_cell, ms_cell = torch_side["speller"].cell, namespace["speller"].cell
    for name, tensor in torch_cell.named_parameters():  # the weight facts keep these names for the three cells
        getattr(ms_cell, name).set_data(mindspore.Tensor(tensor.detach().numpy()))
    x = numpy.random.default_rng(5).standard_normal((3, 4)).astype(numpy.float32)
    expected = torch_side["speller"](torch.from_numpy(x)).detach().numpy()
    got = namespace["speller"](mindspore.Tensor(x)).asnumpy()
    assert got.shape == expected.shape and numpy.abs(got - expected).max() < 1e-5


# ---------------------------------------------------------------------------------------------- set after built
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
def test_a_hyperparameter_set_on_a_built_layer_that_mindspore_reads_only_when_built_is_reported() -> None:
    """A detector's initializer sets its batch norms' eps and momentum after building them; torch's forward reads
    them, MindSpore's BatchNorm holds them in the primitive it built (`built_attributes`): the set changes nothing."""
    code = """\
        import torch
        import torch.nn as nn


        class Neck(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 3, 1, bias=False)
                self.bn = nn.BatchNorm2d(3)
                for m in self.modules():
                    if isinstance(m, nn.BatchNorm2d):
                        m.eps = 1e-3
                        m.momentum = 0.03
                self.scale = self.bn.eps * 2

            def forward(self, x):
                return self.bn(self.conv(x))


        neck = Neck()
    """
    found = [(d.span.start_line, d.code) for d in _scan(code)
             if d.torch_api and d.torch_api.startswith("torch.nn.BatchNorm2d.")]
    assert found == [(12, "TMS102"), (13, "TMS102")]  # the read of eps (line 14) is the same value: no finding
    assert "reads 'eps' only when built" in _at(code, 12, "TMS102")[0].message
    port = migrate_text(textwrap.dedent(code), "neck.py")
    lines = port.text.splitlines()
    assert [(d.code, lines[d.span.start_line - 1].strip()) for d in port.result.diagnostics] == [
        ("TMS403", "m.eps = 1e-3"), ("TMS403", "m.momentum = 0.03")]
    import mindspore
    import numpy

    warnings.simplefilter("ignore")
    mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    bn = mindspore.nn.BatchNorm2d(3).set_train(False)
    bn.moving_variance.set_data(mindspore.Tensor(numpy.full(3, 1e-2, numpy.float32)))
    x = mindspore.Tensor(numpy.ones((1, 3, 2, 2), numpy.float32))
    before = bn(x).asnumpy()
    bn.eps = 1.0  # torch's BatchNorm would now divide by sqrt(0.01 + 1)
    assert numpy.array_equal(bn(x).asnumpy(), before)


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_an_attribute_held_by_the_same_name_with_another_value_is_measured_and_a_read_reported() -> None:
    import mindspore
    import torch

    build = load_script(ROOT / "scripts" / "build_tables.py", "build_tables_differing")
    entry = {"api": "torch.nn.Conv2d", "examples": [
        {"torch": "torch.nn.Conv2d(2, 4, 3)(x)", "mindspore": "mindspore.mint.nn.Conv2d(2, 4, 3)(x)"},
        {"torch": "torch.nn.Conv2d(2, 4, 3, padding=1)(x)",
         "mindspore": "mindspore.nn.Conv2d(2, 4, 3, pad_mode='pad', padding=1)(x)"}]}
    found = build.differing_attributes(entry, "mindspore.nn.Conv2d", {"padding", "stride", "in_channels"})
    assert found == {"padding": "torch (1, 1), MindSpore 1 for torch.nn.Conv2d(2, 4, 3, padding=1)"}
    assert torch.nn.Conv2d(2, 4, 3, padding=1).padding == (1, 1)
    assert mindspore.nn.Conv2d(2, 4, 3, pad_mode="pad", padding=1).padding == 1
    # MindSpore's BatchNorm keeps 1 - its momentum: torch's value, up to rounding (no fact)
    entry = {"api": "torch.nn.BatchNorm2d", "examples": [
        {"torch": "torch.nn.BatchNorm2d(3, momentum=0.01)", "mindspore": "mindspore.nn.BatchNorm2d(3, momentum=0.99)"}]}
    assert build.differing_attributes(entry, "mindspore.nn.BatchNorm2d", {"momentum", "eps"}) == {}
    assert abs(mindspore.nn.BatchNorm2d(3, momentum=0.99).momentum - 0.01) < 1e-9

    code = """\
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3, padding=1)
                self.pad = self.conv.padding
                self.stride = self.conv.stride
    """
    read, = _at(code, 8, "TMS102")
    assert "mindspore.nn.Conv2d holds 'padding' with another value" in read.message
    assert _at(code, 9, "TMS102") == []  # (stride: (1, 1) on both sides)


@pytest.mark.needs_mindspore
def test_scan_fix_renames_a_layers_tensor_under_an_isinstance_test_as_migrate_does() -> None:
    code = textwrap.dedent("""\
        import torch
        from torch import nn


        def statistics(layers):
            out = []
            for m in layers:
                if isinstance(m, nn.BatchNorm2d):
                    out.append(m.weight)
                    out.append(m.running_mean)
            return out
    """)
    found = _at(code, 9, "TMS101")
    assert [d.mindspore_api for d in found] == ["mindspore.nn.BatchNorm2d.gamma"] and found[0].fix is not None
    fixed = fix_text(code, "net.py", Config()).text
    assert "out.append(m.gamma)" in fixed and "out.append(m.moving_mean)" in fixed
    assert not [d for d in scan_source(fixed, "net.py", Config()).diagnostics if d.code.startswith("TMS4")]
    import mindspore

    warnings.simplefilter("ignore")
    namespace: dict[str, Any] = {}
    exec(compile(fixed.replace("import torch\nfrom torch import nn\n", ""), "net.py", "exec"), namespace)  # noqa: S102
    got = namespace["statistics"]([mindspore.nn.BatchNorm2d(3), mindspore.nn.ReLU()])
    assert [tuple(p.shape) for p in got] == [(3,), (3,)] and got[0].name.endswith("gamma")


@pytest.mark.needs_mindspore
@pytest.mark.needs_torch
def test_a_layers_tensor_read_on_the_way_to_a_method_call_is_renamed() -> None:
    """``bn.weight`` in ``bn.weight.data.fill_(...)`` and ``bn.weight.sum()``: the layer's attribute is read on the
    way to a method call (at module level, no class to follow): it is found, and the port names MindSpore's
    tensor and computes what torch does."""
    code = """\
        import torch
        import torch.nn as nn

        bn = nn.BatchNorm1d(2)
        bn.weight.data.fill_(2.0)
        bn.bias.data.zero_()
        total = float(bn.weight.sum()) + float(bn.bias.abs().sum())
    """
    found = _scan(textwrap.dedent(code))
    renamed = sorted((d.span.start_line, d.mindspore_api) for d in found if d.code == "TMS101" and "." in
                     (d.torch_api or "") and d.torch_api.startswith("torch.nn.BatchNorm1d."))
    assert renamed == [(5, "mindspore.nn.BatchNorm1d.gamma"), (6, "mindspore.nn.BatchNorm1d.beta"),
                       (7, "mindspore.nn.BatchNorm1d.beta"), (7, "mindspore.nn.BatchNorm1d.gamma")]
    torch_namespace: dict[str, Any] = {}
    exec(compile(textwrap.dedent(code), "bn.py", "exec"), torch_namespace)  # noqa: S102 - the test's own snippet
    port = migrate_text(textwrap.dedent(code), "bn.py")
    assert "bn.gamma" in port.text and ".weight" not in port.text and not port.result.diagnostics
    import mindspore

    warnings.simplefilter("ignore")
    mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    namespace: dict[str, Any] = {}
    exec(compile(port.text, "bn.py", "exec"), namespace)  # noqa: S102 - the test's own port
    assert namespace["total"] == torch_namespace["total"] == 4.0
