"""`F.kl_div(log_p, log_q, reduction="batchmean", log_target=True)` (a distillation loss between two
distributions given as log-probabilities): mindspore.ops.kl_div has no `log_target`, so the port calls the support module's kl_div, torch's
pointwise loss (0 where a probability target is 0) and reductions; a call without it keeps MindSpore's function."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from case_runner import assert_port_agrees_with_torch, assert_torch_free_port

PROGRAM = textwrap.dedent("""\
    import torch
    import torch.nn.functional as F


    def normalized(weights):
        return weights / weights.sum(-1, keepdim=True)


    def distill(student, teacher, scale=4.0):
        log_s, log_t = normalized(student).log(), normalized(teacher).log()
        return F.kl_div(log_s, log_t, reduction="batchmean", log_target=True) * scale


    def per_item(student, teacher):
        return F.kl_div(normalized(student).log(), normalized(teacher).log(), reduction="none", log_target=True).sum(-1)


    def to_probabilities(student, target):
        return F.kl_div(normalized(student).log(), target, reduction="batchmean")


    def case_losses():
        student = torch.linspace(0.5, 3.0, 12).reshape(3, 4)
        teacher = torch.linspace(2.0, 0.25, 12).reshape(3, 4)
        target = torch.tensor([[0.5, 0.5, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25], [1.0, 0.0, 0.0, 0.0]])
        return [distill(student, teacher), per_item(student, teacher), to_probabilities(student, target)]
""")


def test_log_targets_are_the_support_modules_kl_div() -> None:
    assert_torch_free_port(PROGRAM, ("return t2ms_support.kl_div(log_s, log_t, reduction=\"batchmean\", log_target=True)",
                                     "return t2ms_support.kl_div(normalized(student).log(), normalized(teacher).log(),",
                                     "return mindspore.ops.kl_div(normalized(student).log(), target, reduction="))


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_the_ported_losses_give_torchs_values(tmp_path: Path) -> None:
    assert_port_agrees_with_torch(tmp_path, PROGRAM, ("mindspore", "graph"), rtol=1e-5, atol=1e-6)
