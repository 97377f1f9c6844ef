"""torch's list ops (`torch._foreach_add_`, `_foreach_mul_`, `_foreach_lerp_`, `_foreach_copy_`, ... and their
out-of-place forms), which fused optimizers and weight averages call on lists of parameters: the port calls the
support module's loops over the lists, every overload (the other operand as tensors, one tensor, a number or
numbers), and gives torch's values without torch."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from case_runner import assert_port_agrees_with_torch, assert_torch_free_port

PROGRAM = textwrap.dedent("""\
    import torch


    def momentum_step(params, grads, bufs, lr, momentum, dampening=0.0):
        torch._foreach_mul_(bufs, momentum)
        torch._foreach_add_(bufs, grads, alpha=1 - dampening)
        torch._foreach_add_(params, bufs, alpha=-lr)


    def average_into(avg, current, count):
        if hasattr(torch, "_foreach_lerp_"):
            torch._foreach_lerp_(avg, current, 1.0 / (count + 1))
        else:
            for a, c in zip(avg, current):
                a.lerp_(c, 1.0 / (count + 1))


    def tensors(offset):
        return [torch.arange(4.0).reshape(2, 2) + offset, torch.linspace(-1.0, 1.0, 3) * offset]


    def case_momentum():
        params, grads, bufs = tensors(1.0), tensors(0.5), tensors(0.0)
        for _ in range(3):
            momentum_step(params, grads, bufs, lr=0.1, momentum=0.9, dampening=0.1)
        return params + bufs


    def case_average():
        avg = tensors(0.0)
        for count in range(3):
            average_into(avg, tensors(float(count + 1)), count)
        return avg


    def case_overloads():
        xs = tensors(2.0)
        torch._foreach_add_(xs, scalar=1.5)
        torch._foreach_sub_(xs, [0.5, 0.25])
        torch._foreach_mul_(xs, torch.tensor(2.0))
        torch._foreach_div_(xs, scalars=[4.0, 2.0])
        halves = torch._foreach_mul(xs, 0.5)
        sums = torch._foreach_add(xs, halves, alpha=2.0)
        ends = torch._foreach_lerp(xs, tensors(3.0), [0.25, 0.75])
        copies = tensors(0.0)
        returned = torch._foreach_copy_(copies, sums)
        return xs + list(halves) + list(sums) + list(ends) + copies + [float(returned[0] is copies[0])]
""")


def test_list_ops_are_written_as_the_support_modules_loops() -> None:
    assert_torch_free_port(PROGRAM, ("t2ms_support.foreach_mul_(bufs, momentum)", "t2ms_support.foreach_add_(params, bufs, alpha=-lr)",
                    "t2ms_support.foreach_lerp_(avg, current, 1.0 / (count + 1))", "if True:",
                    "t2ms_support.foreach_add_(xs, scalar=1.5)", "t2ms_support.foreach_div_(xs, scalars=[4.0, 2.0])",
                    "halves = t2ms_support.foreach_mul(xs, 0.5)", "returned = t2ms_support.foreach_copy_(copies, sums)"))


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_the_ported_list_ops_give_torchs_values(tmp_path: Path) -> None:
    assert_port_agrees_with_torch(tmp_path, PROGRAM)
