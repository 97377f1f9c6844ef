"""Ports that ran and computed something else, with nothing on the output's to-do list: a layer added by name to a
Sequential built with children, tensor methods in an ``isinstance`` branch, a BatchNorm's tensor read by torch's
name from outside its class. Each is rewritten where the rewrite is exact, else reported by the output's scan;
the ports run against torch."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from case_runner import assert_port_agrees, migrate_program
from torch2ms.config import Config
from torch2ms.engine import scan_source
from torch2ms.fix import fix_text
from torch2ms.migrate.pipeline import migrate_text

PROGRAM = textwrap.dedent("""\
    import numpy as np
    import torch
    from torch import nn

    POINTS = np.random.RandomState(3).rand(5, 6).astype(np.float32) - 0.5


    class Encoder(nn.Module):
        def __init__(self, width=6):
            super().__init__()
            self.trunk = nn.Sequential(nn.Linear(width, width), nn.Sigmoid())
            self.trunk.add_module("proj", nn.Linear(width, 3))
            self.trunk.add_module("squash", nn.Tanh())
            for layer in self.modules():
                if isinstance(layer, nn.Linear):
                    layer.weight.data.mul_(0.5)
                    layer.bias.data.add_(0.25)
                elif isinstance(layer, (nn.Sigmoid, nn.Tanh)):
                    pass

        def forward(self, x):
            return self.trunk(x)


    def case_children_added_to_a_built_sequential():
        torch.manual_seed(0)
        net = Encoder()
        for p in net.parameters():
            nn.init.constant_(p, 0.2)
        return net(torch.tensor(POINTS))


    def case_inplace_methods_in_an_isinstance_branch():
        torch.manual_seed(0)
        net = Encoder()
        for p in net.parameters():
            nn.init.constant_(p, 0.3)
        for m in net.modules():
            if isinstance(m, nn.Linear) and m.bias is not None:
                m.bias.data.sub_(1.0)
                m.weight.data.div_(3.0)
        return net(torch.tensor(POINTS))
""")


def _findings(text: str) -> list[tuple[int, str]]:
    return [(d.span.start_line, d.code) for d in scan_source(text, "prog.py", Config()).diagnostics]


def test_a_sequential_built_with_children_and_filled_by_name_is_built_from_named_items() -> None:
    out = migrate_text(PROGRAM, "prog.py").text
    assert "trunk = collections.OrderedDict([('0', mindspore.mint.nn.Linear(width, width)), ('1', " in out
    assert 'trunk["proj"] = mindspore.mint.nn.Linear(width, 3)' in out
    assert "self.trunk = mindspore.nn.SequentialCell(trunk)" in out and "insert_child_to_cell" not in out


def test_a_child_added_to_a_sequential_elsewhere_is_left_and_reported() -> None:
    text = textwrap.dedent("""\
        import torch.nn as nn

        def widen(trunk: nn.Sequential):
            trunk.add_module("gate", nn.Sigmoid())

        stack = nn.Sequential(nn.Linear(2, 2))
        stack.add_module("gate", nn.Sigmoid())
        widen(stack)
    """)
    found = [(d.span.start_line, d.code) for d in scan_source(text, "prog.py", Config()).diagnostics
             if d.torch_api == "torch.nn.Sequential.add_module"]
    assert found == [(4, "TMS103"), (7, "TMS103")]
    migration = migrate_text(text, "prog.py")
    assert 'trunk.add_module("gate", mindspore.mint.nn.Sigmoid())' in migration.text
    assert 'stack.add_module("gate", mindspore.mint.nn.Sigmoid())' in migration.text
    lines = migration.text.splitlines()
    assert [(d.code, lines[d.span.start_line - 1].strip()) for d in migration.result.diagnostics] == [
        ("TMS403", 'trunk.add_module("gate", mindspore.mint.nn.Sigmoid())'),  # (trunk: annotated SequentialCell)
        ("TMS403", 'stack.add_module("gate", mindspore.mint.nn.Sigmoid())')]


def test_a_sequential_appended_to_is_left_to_mindsporess_append() -> None:
    out = migrate_text(textwrap.dedent("""\
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.trunk = nn.Sequential(nn.ReLU())
                self.trunk.append(nn.Tanh())
    """), "prog.py").text
    assert "self.trunk = mindspore.nn.SequentialCell(mindspore.mint.nn.ReLU())" in out
    assert "self.trunk.append(mindspore.mint.nn.Tanh())" in out


def test_an_isinstance_branch_makes_the_name_that_torch_value() -> None:
    text = textwrap.dedent("""\
        import torch
        from torch import nn

        def init(net, extra):
            for m in net.modules():
                if isinstance(m, (nn.Conv1d, nn.Linear)):
                    m.bias.data.add_(1.0)
                m.bias.data.add_(1.0)
            if isinstance(extra, torch.Tensor):
                print(extra.numpy())
            return extra.numpy()
    """)
    found = _findings(text)
    assert (7, "TMS102") in found  # the in-place add on the layer's bias: a Tensor method, proven
    assert (8, "TMS105") in found and (8, "TMS102") not in found  # after the branch, m is unknown again
    assert (10, "TMS101") in found and (11, "TMS105") in found


def test_a_name_known_to_be_something_else_is_not_narrowed() -> None:
    text = textwrap.dedent("""\
        import torch
        from torch import nn

        def f(x):
            isinstance = lambda a, b: True
            n = 3
            if isinstance(n, nn.Linear):
                n.bias.add_(1.0)
    """)
    assert (8, "TMS102") not in _findings(text)


def test_a_layers_tensor_read_by_torchs_name_outside_its_class_is_reported_on_the_port() -> None:
    port = textwrap.dedent("""\
        import mindspore


        class Head(mindspore.nn.Cell):
            def __init__(self):
                super().__init__()
                self.norm = mindspore.nn.LayerNorm((4,)).set_train()
                self.table = mindspore.nn.Embedding(7, 4)
                self.plain = mindspore.mint.nn.LayerNorm(4)

            def construct(self, x):
                return self.norm(x)


        head = Head()
        scale = head.norm.weight
        rows = head.table.weight
        kept = head.norm.gamma, head.table.embedding_table, head.plain.weight
    """)
    diags = [d for d in scan_source(port, "port.py", Config()).diagnostics if d.code == "TMS403"]
    assert [(d.span.start_line, d.mindspore_api) for d in diags] == [
        (16, "mindspore.nn.LayerNorm"), (17, "mindspore.nn.Embedding")]
    assert "'gamma'" in diags[0].message and "'embedding_table'" in diags[1].message


def test_a_migrated_batchnorm_read_from_outside_is_on_the_remaining_list() -> None:
    migration = migrate_text(textwrap.dedent("""\
        import torch
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.norm = nn.BatchNorm1d(3)

            def forward(self, x):
                return self.norm(x)

        net = Net()
        print(net.norm.running_var)
    """), "prog.py")
    lines = migration.text.splitlines()
    assert [(d.code, lines[d.span.start_line - 1]) for d in migration.result.diagnostics] == [
        ("TMS403", "print(net.norm.running_var)")]
    assert "'moving_variance'" in migration.result.diagnostics[0].message


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_ports_agree_with_torch(tmp_path: Path) -> None:
    out = migrate_program(tmp_path, PROGRAM, support=False)
    assert_port_agrees(tmp_path / "src", out, ("mindspore",), rtol=1e-5, atol=1e-6,
                       context=(out / "prog.py").read_text())


LOOP = textwrap.dedent("""\
    import torch
    from torch import nn


    def case_layers_scaled_in_a_loop_over_modules():
        head = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
        for p in head.parameters():
            p.data.fill_(0.5)
        for unit in head.modules():
            if isinstance(unit, nn.Linear):
                unit.weight.data.mul_(0.1)
                unit.bias.data.sub_(0.2)
        return head(torch.ones(2, 3))
""")


def test_the_fix_writes_the_cells_of_a_loop_over_modules() -> None:
    fixed = fix_text(LOOP, "prog.py", Config(), unsafe=True).text
    assert "for unit in [_cell for _, _cell in head.cells_and_names()]:" in fixed
    assert "unit.weight.data.copy_(unit.weight.data.mul(0.1))" in fixed


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_the_fixed_loop_agrees_with_torch(tmp_path: Path) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    (src / "prog.py").write_text(LOOP)
    (out / "prog.py").write_text(fix_text(LOOP, "prog.py", Config(), unsafe=True).text)
    assert_port_agrees(src, out, ("mindspore",), rtol=1e-5, atol=1e-6, context=(out / "prog.py").read_text())
