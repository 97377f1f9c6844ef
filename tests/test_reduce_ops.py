"""The reduction a collective applies (`dist.all_reduce(t, op=dist.ReduceOp.SUM)`, `ReduceOp.MAX` imported from
torch.distributed): written as MindSpore's names of it, `mindspore.ops.ReduceOp.SUM` ... (PRODUCT is PROD), the
strings MindSpore's collectives take; the port imports mindspore for them, not a module of the class's name."""

from __future__ import annotations

import textwrap

import pytest

from case_runner import assert_torch_free_port

PROGRAM = textwrap.dedent("""\
    import torch
    import torch.distributed as dist
    from torch.distributed import ReduceOp


    def average(t, world):
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        return t / world


    def peak(t):
        dist.all_reduce(t, op=ReduceOp.MAX)
        return t


    def reductions():
        return [torch.distributed.ReduceOp.PRODUCT, ReduceOp.MIN]
""")


def test_reductions_are_mindspores_names() -> None:
    ported = assert_torch_free_port(PROGRAM, (
        "mindspore.mint.distributed.all_reduce(t, op=mindspore.ops.ReduceOp.SUM)",
        "mindspore.mint.distributed.all_reduce(t, op=mindspore.ops.ReduceOp.MAX)",
        "return [mindspore.ops.ReduceOp.PROD, mindspore.ops.ReduceOp.MIN]"))
    assert ported.startswith("import mindspore\n\n") and "import mindspore.ops.ReduceOp" not in ported


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_the_names_are_the_reductions_both_libraries_have() -> None:
    import mindspore
    import torch.distributed

    namespace: dict[str, object] = {}
    exec(assert_torch_free_port(PROGRAM, ()), namespace)  # noqa: S102  (the port of the program above)
    reductions = namespace["reductions"]
    assert callable(reductions) and reductions() == ["prod", "min"]
    assert (mindspore.ops.ReduceOp.SUM, mindspore.ops.ReduceOp.MAX) == ("sum", "max")
    assert all(hasattr(torch.distributed.ReduceOp, name) for name in ("SUM", "PRODUCT", "MAX", "MIN"))
