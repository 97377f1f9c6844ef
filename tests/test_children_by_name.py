"""Children added by name (`add_module`, `register_module`) to a network itself and to a Sequential subclass that
fills itself: the port calls them (MindSpore's SequentialCell calls only the cells of its `cell_list`) and names
their parameters as torch's state_dict does (an attribute, not `insert_child_to_cell`, which keeps the names the
child's parameters had). Small programs written the way model libraries write these constructs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from case_runner import assert_port_agrees, migrate_program
from torch2ms.migrate.pipeline import migrate_text

PROGRAM = textwrap.dedent("""\
    import numpy as np
    import torch
    import torch.nn as nn

    IMAGES = np.random.RandomState(3).rand(2, 3, 6, 6).astype(np.float32) - 0.5


    class Transition(nn.Sequential):
        \"\"\"A block that fills itself by name and runs as a Sequential.\"\"\"

        def __init__(self, cin, cout):
            super().__init__()
            self.add_module('conv', nn.Conv2d(cin, cout, 1))
            self.add_module('act', nn.Tanh())
            self.add_module('pool', nn.AvgPool2d(2, stride=2))


    class Tower(nn.Module):
        \"\"\"Stages added to the network itself under computed names.\"\"\"

        def __init__(self, widths=(3, 4, 5)):
            super().__init__()
            self.stage_names = []
            for i in range(len(widths) - 1):
                stage = nn.Sequential(nn.Conv2d(widths[i], widths[i + 1], 3, padding=1), nn.ReLU())
                name = 'stage%d' % (i + 1)
                self.add_module(name, stage)
                self.stage_names.append(name)
            self.register_module('down', Transition(widths[-1], 2))
            self.head = nn.Linear(2 * 3 * 3, 3)
            for index, m in enumerate(self.modules()):
                if isinstance(m, (nn.Conv2d, nn.Linear)):
                    nn.init.constant_(m.weight, 0.05 + 0.01 * index)
                    nn.init.constant_(m.bias, -0.1)

        def forward(self, x):
            for name in self.stage_names:
                x = getattr(self, name)(x)
            x = self.down(x)
            return self.head(x.flatten(1))


    def case_network_with_named_stages():
        return Tower()(torch.tensor(IMAGES))


    def case_sequential_filling_itself():
        block = Transition(3, 2)
        for m in block.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.constant_(m.weight, 0.2)
                nn.init.constant_(m.bias, 0.1)
        return block(torch.tensor(IMAGES))
""")

NAMES = """
import sys
if sys.argv[2] != "torch":
    sys.modules["torch"] = None
sys.path.insert(0, sys.argv[1])
import json, prog
net = prog.Tower()
print(json.dumps(list(net.state_dict()) if sys.argv[2] == "torch" else [p.name for p in net.get_parameters()]))
"""


def test_children_added_by_name_are_attributes_and_a_sequential_subclass_calls_its_own() -> None:
    out = migrate_text(PROGRAM, "prog.py").text
    assert "setattr(self, name, stage)" in out and "setattr(self, 'down', Transition(" in out
    assert "insert_child_to_cell" not in out and "add_module" not in out
    # the subclass sets each child, then its cell_list (what SequentialCell's construct runs) is its cells again
    assert "        setattr(self, 'conv', mindspore.nn.Conv2d(" in out
    assert out.count("        self.cell_list = list(self.cells())\n") == 3


def _names(folder: Path, side: str) -> list[str]:
    proc = subprocess.run([sys.executable, "-c", NAMES, str(folder), side], capture_output=True, text=True,
                          env=dict(os.environ, GLOG_v="3"), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    names: list[str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return names


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_the_port_agrees_and_names_the_parameters_as_torch(tmp_path: Path) -> None:
    out = migrate_program(tmp_path, PROGRAM, support=False)
    assert_port_agrees(tmp_path / "src", out, ("mindspore", "graph"), rtol=1e-5, atol=1e-6,
                       context=(out / "prog.py").read_text())
    torch_names = _names(tmp_path / "src", "torch")
    assert "stage1.0.weight" in torch_names and "down.conv.bias" in torch_names
    assert _names(out, "mindspore") == torch_names


def test_a_pair_passed_unpacked_and_a_call_ending_in_a_comma() -> None:
    out = migrate_text(textwrap.dedent("""\
        import torch.nn as nn


        class Stack(nn.Module):
            def __init__(self, pairs):
                super().__init__()
                self.add_module('first', nn.Linear(2, 2)),
                for pair in pairs:
                    self.add_module(*pair)
        """), "prog.py").text
    assert "        setattr(self, 'first', mindspore.mint.nn.Linear(2, 2))\n" in out
    assert "            setattr(self, pair[0], pair[1])\n" in out
