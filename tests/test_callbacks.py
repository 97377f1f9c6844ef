"""Functions an API calls back (the tables' `callbacks`, meta.yaml): a function of the project given to
`net.apply(fn)` or a hook registration gets what the API passes it, so the module or tensor it receives is typed,
its uses are found and rewritten, and the port runs as torch does."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from case_runner import assert_port_agrees, migrate_program
from torch2ms.engine import scan_source

PROGRAM = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def fill(module):
        for p in module.parameters(recurse=False):
            nn.init.constant_(p, 0.25)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
            self.count = 0
            self.apply(self._count)

        def _count(self, module):
            self.count += len(list(module.parameters(recurse=False)))

        def forward(self, x):
            return self.body(x)


    NET = Net()
    NET.apply(fill)


    def case_filled():
        x = torch.tensor([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]])
        return NET(x)


    def case_counted():
        return [float(NET.count)]
""")


POSSIBLE = "TMS105"  # a method on a receiver not proven a tensor: what an untyped receiver gets at most


def _apis(text: str) -> list[tuple[int, str]]:
    """(line, torch API) of the uses the scan proves (not those only possible)."""
    result = scan_source(textwrap.dedent(text), "prog.py")
    return [(d.span.start_line, d.torch_api) for d in result.diagnostics if d.torch_api and d.code != POSSIBLE]


def test_a_function_given_to_apply_receives_modules() -> None:
    found = _apis(PROGRAM)
    assert (6, "torch.nn.Module.parameters") in found  # in `fill`, reached only through NET.apply(fill)
    assert (18, "torch.nn.Module.parameters") in found  # a method given as self.apply(self._count)


def test_without_the_callback_the_parameter_stays_unknown() -> None:
    # the same function called by nothing that passes a module: its parameter is not typed, nothing is claimed
    found = _apis("""\
        import torch.nn as nn


        def fill(module):
            for p in module.parameters(recurse=False):
                p.requires_grad = False
        """)
    assert not any(api == "torch.nn.Module.parameters" for _, api in found)


def test_a_hook_registered_on_a_tensor_receives_a_tensor() -> None:
    found = _apis("""\
        import torch


        def halve(grad):
            return grad.clamp(min=0.0) * 0.5


        w = torch.ones(3, requires_grad=True)
        w.register_hook(halve)
        """)
    assert (5, "torch.Tensor.clamp") in found


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_the_port_of_apply_callbacks_runs_as_torch_does(tmp_path: Path) -> None:
    port = migrate_program(tmp_path, PROGRAM, support=False)
    text = (port / "prog.py").read_text()
    assert "parameters(" not in text and "torch" not in text, text
    assert_port_agrees(tmp_path / "src", port, ("mindspore",), rtol=1e-6, atol=1e-6, context=text)


def test_a_lambda_given_to_apply_receives_modules() -> None:
    found = _apis("""\
        import torch.nn as nn

        net = nn.Linear(3, 2)
        net.apply(lambda m: [nn.init.zeros_(p) for p in m.parameters(recurse=False)])
        """)
    assert (4, "torch.nn.Module.parameters") in found
