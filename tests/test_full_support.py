"""`torch.full(size, value)` where the value is known only at run time: mindspore.ops.full without a dtype gives
int64 for every fill value, so the port calls the support module's full, which takes torch's result dtype from
the value (float32 for a float, int64 for an int, bool for a bool); a literal value keeps the fix's dtype. An
in-place method on the new tensor (``torch.full(s, v).scatter_(...)``, which nothing else holds) is its
out-of-place form."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from case_runner import assert_port_agrees_with_torch, assert_torch_free_port

PROGRAM = textwrap.dedent("""\
    import torch


    def smooth_targets(labels, classes, smoothing):
        off = smoothing / classes
        out = torch.full((labels.shape[0], classes), off, device=labels.device)
        out.scatter_(1, labels.unsqueeze(1), 1.0 - smoothing + off)
        return out


    def one_hot(labels, classes, off, on):
        return torch.full((labels.size(0), classes), off).scatter_(1, labels.view(-1, 1), on)


    def start_counts(x, start):
        return torch.full((x.shape[0],), start)


    def mask(n, value):
        return torch.full([n, 2], value)


    def case_full():
        labels = torch.tensor([2, 0, 1])
        smooth, counts, flags = smooth_targets(labels, 4, 0.1), start_counts(labels, 3), mask(2, True)
        halves = torch.full((2,), 0.5)
        hot = one_hot(labels, 3, 0.0, 1.0)
        return [smooth, counts, flags, halves, hot, float(smooth.dtype == torch.float32),
                float(counts.dtype == torch.int64), float(flags.dtype == torch.bool), float(halves.dtype == torch.float32)]
""")


def test_a_fill_value_known_at_run_time_is_the_support_modules_full() -> None:
    assert_torch_free_port(PROGRAM, ("t2ms_support.full((labels.shape[0], classes), off, device=labels.device)",
                    "return t2ms_support.full((x.shape[0],), start)", "return t2ms_support.full([n, 2], value)",
                    "mindspore.ops.full((2,), 0.5, dtype=mindspore.float32)",
                    # an in-place update of the new tensor nobody else holds: the out-of-place form
                    "t2ms_support.full((labels.shape[0], classes), off).scatter(1, labels.view(-1, 1), on)"))


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_the_ported_fills_have_torchs_values_and_dtypes(tmp_path: Path) -> None:
    results = assert_port_agrees_with_torch(tmp_path, PROGRAM)
    assert results["case_full"][5:] == [[1.0]] * 4
