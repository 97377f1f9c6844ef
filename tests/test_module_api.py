"""The Module API in ports (containers filled by name, containers built from a generator, a layer's tensors
read in isinstance branches and through self's layers, tied weights, parameters set and frozen in loops, the
results of MultiheadAttention): the text `migrate` writes, and the port run in MindSpore (torch blocked, PyNative and GRAPH mode) against torch, on small programs
written the way model libraries write these constructs."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from case_runner import assert_port_agrees, migrate_program
from torch2ms.migrate.pipeline import migrate_text

PROGRAM = textwrap.dedent("""\
    import numpy as np
    import torch
    import torch.nn as nn

    IMAGES = np.random.RandomState(0).rand(2, 3, 5, 5).astype(np.float32) - 0.5
    ROWS = np.random.RandomState(1).rand(2, 4, 6).astype(np.float32) - 0.5


    def constant_init(net: nn.Module):
        for index, m in enumerate(net.modules()):
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.constant_(m.weight, 0.05 + 0.01 * index)
                nn.init.constant_(m.bias, -0.1)


    class Stages(nn.Module):
        \"\"\"Layers added by name to an empty Sequential, in a loop (as classic image classifiers build them).\"\"\"

        def __init__(self, depth=3):
            super().__init__()
            self.features = nn.Sequential()
            for i in range(depth):
                self.features.add_module('conv%d' % i, nn.Conv2d(3, 3, 3, padding=1))
                self.features.add_module('act%d' % i, nn.Tanh())
            self.features.register_module('pool', nn.AvgPool2d(2))
            constant_init(self)

        def forward(self, x):
            return self.features(x)


    class Grown(nn.Module):
        \"\"\"Layers added by name to a Sequential built with some, in a method called before the last one.\"\"\"

        def __init__(self, depth=2, pool=True):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(3, 3, 3, padding=1), nn.Tanh())
            self._grow(depth)
            if pool:
                self.features.add_module('pool', nn.AvgPool2d(2))
            constant_init(self)

        def _grow(self, depth):
            for i in range(depth):
                self.features.add_module(f'block{i}', nn.Conv2d(3, 3, 1))

        def forward(self, x):
            return self.features(x)


    class Named(nn.Module):
        \"\"\"Children added to the module itself, looked up by name in forward.\"\"\"

        def __init__(self, depth=2):
            super().__init__()
            self.depth = depth
            for i in range(depth):
                self.add_module('layer%d' % i, nn.Conv2d(3, 3, 1))
            self.register_module('head', nn.Conv2d(3, 2, 1))
            constant_init(self)

        def forward(self, x):
            for i in range(self.depth):
                x = getattr(self, 'layer%d' % i)(x)
            return self.head(x)


    class Tower(nn.Module):
        \"\"\"A ModuleList built from a generator, a Sequential from an unpacked list.\"\"\"

        def __init__(self, width=6, depth=2):
            super().__init__()
            self.blocks = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))
            head = [nn.Linear(width, 3), nn.Sigmoid()]
            self.head = nn.Sequential(*head)
            constant_init(self)

        def forward(self, x):
            for block in self.blocks:
                x = torch.tanh(block(x))
            return self.head(x)


    def case_sequential_filled_by_name():
        return Stages()(torch.tensor(IMAGES))

    def case_sequential_grown_in_a_method():
        return Grown()(torch.tensor(IMAGES))

    def case_children_added_to_the_module():
        return Named()(torch.tensor(IMAGES))

    def case_containers_from_iterables():
        return Tower()(torch.tensor(ROWS))
""")


def test_a_container_filled_by_name_is_built_from_an_ordered_dict() -> None:
    out = migrate_text(PROGRAM, "prog.py").text
    assert "features = collections.OrderedDict()" in out and "\nimport collections\n" in out
    assert "features['conv%d' % i] = mindspore.nn.Conv2d(" in out
    assert "features['pool'] = " in out
    assert "self.features = mindspore.nn.SequentialCell(features)" in out  # the items by name, not unpacked
    assert "setattr(self, 'layer%d' % i, " in out  # a Cell's own children: attributes (named parameters)
    assert "setattr(self, 'head', " in out
    assert "mindspore.nn.CellList(list((mindspore.mint.nn.Linear(width, width) for _ in range(depth))))" in out


def test_a_layer_added_to_a_sequential_outside_its_block_rebuilds_it_with_the_names() -> None:
    out = migrate_text(PROGRAM, "prog.py").text
    # built where it is (a method of self runs before the last addition and reads it), then rebuilt per layer
    assert "self.features = mindspore.nn.SequentialCell(mindspore.nn.Conv2d(3, 3, 3, padding=1" in out
    assert "self.features = mindspore.nn.SequentialCell(collections.OrderedDict([*self.features.name_cells()" \
           ".items(), (f'block{i}', mindspore.nn.Conv2d(3, 3, 1, " in out
    assert ".items(), ('pool', mindspore.nn.AvgPool2d(2, stride=2, pad_mode='pad'))]))" in out
    assert "add_module" not in out and "register_module" not in out


def test_a_list_display_and_an_other_container_are_left_as_they_are() -> None:
    out = migrate_text(textwrap.dedent("""\
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self, layers):
                super().__init__()
                self.a = nn.ModuleList([nn.ReLU(), nn.Tanh()])
                self.b = nn.ModuleList(layers)
                self.c = nn.ModuleList()
                for i in range(2):
                    self.c.append(nn.ReLU())
    """), "prog.py").text
    assert "self.a = mindspore.nn.CellList([mindspore.mint.nn.ReLU(), mindspore.mint.nn.Tanh()])" in out
    assert "self.b = mindspore.nn.CellList(layers)" in out  # a name: the finding says what it must hold
    assert "c = []" in out and "self.c = mindspore.nn.CellList(c)" in out  # filled as a list (no name)


LAYERS = textwrap.dedent("""\
    import numpy as np
    import torch
    import torch.nn as nn

    IMAGES = np.random.RandomState(2).rand(2, 3, 5, 5).astype(np.float32) - 0.5
    TABLE = np.random.RandomState(3).rand(7, 4).astype(np.float32) - 0.5
    TOKENS = np.random.RandomState(4).rand(2, 4, 8).astype(np.float32) - 0.5


    def fill(module: nn.Module):
        \"\"\"Every parameter set from its place in the list (a test helper many repositories write).\"\"\"
        with torch.no_grad():
            for i, p in enumerate(module.parameters()):
                values = np.linspace(-0.5, 0.5, p.numel()).astype(np.float32).reshape(tuple(p.size()))
                p.copy_(torch.tensor(values * (1 + 0.1 * i)))


    class ConvNormBlock(nn.Module):
        \"\"\"An init loop over modules(), norms of two kinds in one isinstance branch (as detection code writes it).\"\"\"

        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.bn = nn.BatchNorm2d(4)
            self.gn = nn.GroupNorm(2, 4)
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.constant_(m.weight, 0.05)
                    nn.init.zeros_(m.bias)
                elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                    nn.init.constant_(m.weight, 1.5)
                    nn.init.constant_(m.bias, 0.25)
            self.bn.bias.data.add_(torch.full((4,), 0.5))
            self.bn.bias.requires_grad = False
            self.channels = self.bn.weight.size(0)

        def forward(self, x):
            return self.gn(self.bn(self.conv(x))) * self.bn.weight.mean()


    class TinyLM(nn.Module):
        \"\"\"A language-model head tied to the embedding (as GPT-style code ties them).\"\"\"

        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(7, 4)
            self.head = nn.Linear(4, 7, bias=False)
            self.head.weight = self.embed.weight
            self.embed.weight.data.copy_(torch.tensor(TABLE))

        def forward(self, idx):
            return self.head(self.embed(idx))


    def case_norms_initialised_in_a_loop():
        net = ConvNormBlock()
        net.eval()
        trainable = [p for p in net.parameters() if p.requires_grad]
        return net(torch.tensor(IMAGES)), len(trainable), sum(p.numel() for p in trainable), net.channels

    def case_tied_head():
        net = TinyLM()
        return net(torch.tensor([[1, 2, 6]])), len(list(net.parameters()))

    def case_attention_batch_first():
        attn = nn.MultiheadAttention(8, 2, batch_first=True)
        fill(attn)
        q = torch.tensor(TOKENS)
        out, weights = attn(q, q, q)
        return out, weights

    def case_attention_sequence_first():
        attn = nn.MultiheadAttention(8, 2)
        fill(attn)
        q = torch.tensor(TOKENS).transpose(0, 1)
        return attn(q, q, q, need_weights=False)[0]

    def case_frozen_layers():
        net = ConvNormBlock()
        for p in net.conv.parameters():
            p.requires_grad_(False)
        for p in net.gn.parameters():
            p.requires_grad = False
        return sum(p.numel() for p in net.parameters() if p.requires_grad)
""")


def test_a_layers_tensors_are_read_by_the_ports_names() -> None:
    out = migrate_text(LAYERS, "prog.py").text
    assert "(m.gamma if isinstance(m, mindspore.nn.BatchNorm2d) else m.weight).set_data(" in out
    assert "self.bn.beta.requires_grad = False" in out and "self.bn.gamma.mean()" in out
    # the tensor methods of a renamed tensor are still the fix engine's (MindSpore's x.size counts elements;
    # its in-place add_ leaves the receiver unchanged on the CPU)
    assert "self.channels = self.bn.gamma.shape[0]" in out
    assert "self.bn.beta.data.copy_(self.bn.beta.data.add(" in out
    assert "self.head.weight = self.embed.embedding_table" in out
    assert "reshape(tuple(p.shape))" in out  # enumerate(m.parameters()) yields tensors


TWO_KINDS = textwrap.dedent("""\
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self, batch):
            super().__init__()
            self.norm = nn.BatchNorm1d(4)
            if not batch:
                self.norm = nn.LayerNorm(4)
            self.scale = self.norm.weight
""")


def test_a_name_set_to_two_kinds_of_layer_is_left() -> None:
    # MindSpore names the two layers' tensors differently (BatchNorm1d's gamma, Dense's weight): which layer it is is
    # known when it runs, so the read is left
    out = migrate_text(TWO_KINDS.replace("nn.LayerNorm(4)", "nn.Linear(4, 4)"), "prog.py").text
    assert "self.scale = self.norm.weight" in out
    # both kinds' MindSpore layers name it gamma (mindspore.nn.LayerNorm as BatchNorm1d): the one name is written
    out = migrate_text(TWO_KINDS, "prog.py").text
    assert "self.scale = self.norm.gamma" in out


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.parametrize("mode", ["mindspore", "graph"])
@pytest.mark.parametrize("program", [PROGRAM, LAYERS], ids=["containers", "layer_tensors"])
def test_ports_agree_with_torch(tmp_path: Path, program: str, mode: str) -> None:
    out = migrate_program(tmp_path, program, support=False)
    assert_port_agrees(tmp_path / "src", out, (mode,), rtol=1e-4, atol=1e-5, context=(out / "prog.py").read_text())
