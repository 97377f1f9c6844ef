"""torch.einsum where MindSpore 2.10 has no CPU kernel (mindspore.mint.einsum runs on Ascend only): `migrate`
writes the support module's `einsum` (torch2ms.transforms.support, `missing_only`), built from diagonals,
sums, transposes and batched matrix products; run against torch on equations of every kind, in PyNative and in
GRAPH mode, with torch blocked on the MindSpore side; a text fix, which cannot write the module, leaves the
finding; on a device with a kernel the ordinary rewrite stays."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from case_runner import assert_port_agrees, port_in_process
from torch2ms.config import Config
from torch2ms.engine import scan_source
from torch2ms.mappings import load_table
from torch2ms.migrate.pipeline import Options, migrate_text

# every case is one equation in one call form; the shapes broadcast, repeat subscripts, leave the output implicit
_PROGRAM = textwrap.dedent('''\
    import numpy as np
    import torch
    import torch.nn as nn

    RNG = np.random.RandomState(7)


    def data(*shape):
        return torch.tensor(RNG.uniform(-1.0, 1.0, shape).astype(np.float32))


    A, B, C = data(2, 3, 4), data(2, 4, 5), data(5, 6)
    SQUARE, CUBE = data(4, 4), data(3, 2, 3)
    HEADS_Q, HEADS_K = data(2, 3, 4, 5), data(2, 3, 6, 5)
    ROW, COLUMN, WIDE, STACKED = data(3, 1), data(3, 4), data(2, 3, 4, 5), data(3, 3, 4)


    class Scores(nn.Module):
        def forward(self, q, k):
            weights = torch.einsum("bhqd,bhkd->bhqk", q, k).softmax(dim=-1)
            return torch.einsum("...ii->...i", weights[..., :4, :4])


    def case_batched_matmul():
        return torch.einsum("bij,bjk->bik", A, B)

    def case_implicit_output_upper_case_first():
        return torch.einsum("ba,Ab", SQUARE[:3, :2], SQUARE[:2, :3])

    def case_trace_and_diagonal():
        return torch.einsum("ii", SQUARE), torch.einsum("ii->i", SQUARE), torch.einsum("iji->j", CUBE)

    def case_outer_inner_and_total():
        return torch.einsum("i,j->ij", ROW[:, 0], COLUMN[0]), torch.einsum("i,i->", COLUMN[0], COLUMN[1]), \\
            torch.einsum("ij->", COLUMN)

    def case_transpose_implicit():
        return torch.einsum("ji", COLUMN)

    def case_ellipsis_broadcast():
        return torch.einsum("...ij,...jk->...ik", A, B[0]), torch.einsum("b...d,d->b...", WIDE, C[:, 0])

    def case_ellipsis_only_and_summed_ellipsis():
        return torch.einsum("...", COLUMN), torch.einsum("i...->...", A)

    def case_size_one_broadcasts():
        return torch.einsum("ij,ij->ij", ROW, COLUMN)

    def case_three_operands_as_a_list():
        return torch.einsum("abc,cd,de->abe", [A, B[0], C])

    def case_diagonal_then_contraction_spaced():
        return torch.einsum("i i j , j k -> i k", STACKED, B[0])

    def case_scalar_operand():
        return torch.einsum(",ij->ij", torch.tensor(2.5), COLUMN)

    def case_bilinear():
        return torch.einsum("bn,anm,bm->ba", A[0, :2, :3], B[:, :3, :], C[:2, :5])

    def case_sublist_form():
        return torch.einsum(A[0], [0, 1], B[0], [1, 2], [0, 2]), torch.einsum(SQUARE, [0, 0])

    def case_attention_module():
        return Scores()(HEADS_Q, HEADS_K)
    ''')


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
@pytest.mark.parametrize("mode", ["mindspore", "graph"])
def test_the_support_einsum_gives_torchs_results_on_every_kind_of_equation(tmp_path: Path, mode: str) -> None:

    original, port, text = port_in_process(tmp_path, _PROGRAM)
    assert "torch" not in text.replace("t2ms_support", "")
    assert text.count("t2ms_support.einsum(") == _PROGRAM.count("torch.einsum(")
    expected = assert_port_agrees(original, port, (mode,), rtol=1e-5, atol=1e-5, context=text)
    assert len(expected) == 14


def test_a_text_fix_leaves_einsum_and_a_device_with_a_kernel_keeps_its_form() -> None:
    source = "import torch\n\n\ndef f(a, b):\n    return torch.einsum('ij,jk->ik', a, b)\n"
    table = load_table()
    cpu = [d for d in scan_source(source, "m.py", Config(device="cpu"), table).diagnostics
           if d.torch_api == "torch.einsum"]
    assert len(cpu) == 1 and cpu[0].fix is None  # no form runs on the CPU, and a text fix cannot write the module
    ascend = migrate_text(source, "m.py", Options(config=Config(device="ascend")), table=table)
    assert "mindspore.mint.einsum('ij,jk->ik', a, b)" in ascend.text and not ascend.support
    cpu_port = migrate_text(source, "m.py", table=table)
    assert "t2ms_support.einsum('ij,jk->ik', a, b)" in cpu_port.text and cpu_port.support
    # operands unpacked from a list stay as they are written
    unpacked = migrate_text(source.replace("', a, b)", "', *[a, b])"), "m.py", table=table)
    assert "t2ms_support.einsum('ij,jk->ik', *[a, b])" in unpacked.text
