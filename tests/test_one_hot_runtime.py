"""`F.one_hot(labels, num_classes)` with a number of classes known only at run time: MindSpore's one_hot raises for
torch's default -1 (it cannot infer the count: ValueError, MindSpore 2.10), so a value known only at run time is
passed on (the port gives torch's result or stops, never another one); a literal -1 or a call leaving the count
out keeps its finding."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from case_runner import assert_port_agrees_with_torch, assert_torch_free_port
from torch2ms.config import Config
from torch2ms.engine import scan_source
from torch2ms.mappings import load_table

PROGRAM = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class SmoothedNLL(nn.Module):
        def __init__(self, classes, smoothing=0.1):
            super().__init__()
            self.classes, self.smoothing = classes, smoothing

        def forward(self, logits, labels):
            target = F.one_hot(labels.long(), self.classes).float()
            target = target * (1 - self.smoothing) + self.smoothing / self.classes
            return -(target * logits.log_softmax(-1)).sum(-1).mean()


    def case_loss():
        logits = torch.linspace(-2.0, 2.0, 12).reshape(3, 4)
        return [SmoothedNLL(4)(logits, torch.tensor([3, 0, 2]))]
""")


def test_a_class_count_known_at_run_time_is_passed_on() -> None:
    assert_torch_free_port(PROGRAM, ("target = mindspore.ops.one_hot(labels.long(), self.classes).float()",))
    for kept in ("F.one_hot(labels, -1)", "F.one_hot(labels)"):
        text = f"import torch.nn.functional as F\nlabels = None\nout = {kept}\n"
        found = [d for d in scan_source(text, "kept.py", Config(), load_table()).diagnostics
                 if d.torch_api == "torch.nn.functional.one_hot"]
        assert len(found) == 1 and found[0].fix is None, kept


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_the_ported_loss_gives_torchs_value(tmp_path: Path) -> None:
    assert_port_agrees_with_torch(tmp_path, PROGRAM, ("mindspore", "graph"), rtol=1e-5, atol=1e-6)
