"""Composed forms for ops whose single MindSpore call has no CPU kernel or another behaviour (a diagonal of a
matrix, in-place diagonal and index fills, (bi)linear resizing, the triplet loss), written the way model code
writes them: as text after `migrate`, and run in torch and, ported, in MindSpore on CPU."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_binding import assert_same, port, run_both


def test_resizing_is_composed_only_for_a_listed_mode_and_a_size() -> None:
    out = port("""
        import torch.nn.functional as F


        def resize(feat, h, w, scale):
            a = F.interpolate(feat, size=(h, w), mode="bilinear", align_corners=True)
            b = F.interpolate(feat, (h, w), None, "linear")
            c = F.interpolate(feat, scale_factor=scale, mode="bilinear")
            d = F.interpolate(feat, size=(h, w), mode="nearest")
            e = F.interpolate(feat, size=(h, w), mode="bicubic")
            return a, b, c, d, e
    """)
    assert "a = mindspore.ops.interpolate(feat, (h, w), mode=\"bilinear\", align_corners=True)" in out
    # the 1-D linear mode: ops.interpolate samples another position for an output size of 1 (the support function)
    assert "b = t2ms_support.interpolate(feat, (h, w), None, \"linear\")" in out
    # a scale factor (ops.interpolate refuses it on the CPU) or the cubic mode (mint has no CPU kernel for it, and
    # ops.interpolate's cubic weights differ from torch's): the support module's interpolate; nearest keeps mint's
    assert "c = t2ms_support.interpolate(feat, scale_factor=scale, mode=\"bilinear\")" in out
    assert "d = mindspore.mint.nn.functional.interpolate(feat, size=(h, w), mode=\"nearest\")" in out
    assert "e = t2ms_support.interpolate(feat, size=(h, w), mode=\"bicubic\")" in out


def test_an_in_place_fill_writes_only_into_a_named_tensor() -> None:
    out = port("""
        import torch
        import torch.nn as nn


        class Mask(nn.Module):
            def forward(self, scores, rows, blocks):
                scores.index_fill_(-1, rows, float("-inf"))
                blocks[0].index_fill_(0, rows, 0.0)
                scores.fill_diagonal_(0)
                return scores
    """)
    assert "scores.copy_(scores.index_fill(-1, rows.astype(mindspore.int32), float(\"-inf\")))" in out
    assert "blocks[0].index_fill_(0, rows, 0.0)" in out  # a view: MindSpore would not write through it
    assert "scores.copy_(scores.fill_diagonal(float(0), False))" in out


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
@pytest.mark.slow
def test_composed_ops_give_torchs_results_on_cpu(tmp_path: Path) -> None:
    ported, torch_side, ms_side = run_both(tmp_path, """
        import numpy as np
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        R = np.random.RandomState(11)
        FEAT = R.rand(2, 3, 5, 4).astype(np.float32) - 0.5
        SEQ = R.rand(2, 4, 6).astype(np.float32)
        EMB = R.rand(3, 5, 8).astype(np.float32)


        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.loss = nn.TripletMarginLoss(margin=0.3, p=1.0, swap=True, reduction="sum")

            def forward(self, a, p, n):
                return self.loss(a * 2, p, n - 1)


        def case_diagonals():
            m = torch.tensor(EMB[0])
            v = torch.tensor(EMB[1, 0])
            return torch.diag(m, 2), torch.diag(v, -1), m.diag(), v.diag()

        def case_fills():
            tall = torch.tensor(EMB[0].T.copy())
            tall.fill_diagonal_(-2.0, wrap=True)
            square = torch.tensor(EMB[1, :5, :5].copy())
            square.fill_diagonal_(7)
            keep = torch.tensor([4, 1])
            cube = torch.tensor(EMB.copy())
            cube.index_fill_(-1, keep, 0.25)
            picked = torch.index_fill(torch.tensor(EMB), 1, torch.tensor([0, 3]), -1.0)
            return tall, square, cube, picked, torch.tensor(EMB).index_fill(2, keep, 9.0)

        def case_legacy_types():
            x = torch.tensor(FEAT[0, 0] * 10)
            return x.type(torch.LongTensor), x.type(torch.DoubleTensor) / 3, x.type(torch.IntTensor) % 2

        def case_pretrained_tables():
            ids = torch.tensor([[2, 0], [1, 2]])
            frozen = nn.Embedding.from_pretrained(torch.tensor(EMB[0]))
            tuned = nn.Embedding.from_pretrained(torch.tensor(EMB[1]) * 2, freeze=False)
            return frozen(ids), tuned(ids)

        def case_squeezed():
            t = torch.tensor(FEAT[:1, :1])
            return torch.squeeze(t), torch.squeeze(t, 1), torch.squeeze(torch.tensor(EMB[:1])), t.squeeze(())

        def case_distinct_values():
            labels = torch.tensor(np.array([[4, 1, 4], [0, 9, 1]]))
            scores = torch.tensor((EMB[0] * 4).round())
            return torch.unique(labels), scores.unique(), torch.unique(scores[:0], sorted=True)

        def case_resize():
            feat = torch.tensor(FEAT)
            return (F.interpolate(feat, size=(7, 3), mode="bilinear"),
                    F.interpolate(feat, size=(9, 8), mode="bilinear", align_corners=True),
                    F.interpolate(torch.tensor(SEQ), 11, mode="linear", align_corners=False))

        def case_triplet():
            head = Head()
            a, p, n = (torch.tensor(EMB[k]) for k in range(3))
            return (head(a, p, n), F.triplet_margin_loss(a, p, n, margin=2.0, reduction="none"),
                    F.triplet_margin_loss(a[0], p[0], n[0], p=3, eps=0.01))
    """)
    assert "import torch" not in ported
    assert "mindspore.ops.interpolate(" in ported and "TripletMarginLoss" not in ported
    assert "mindspore.ops.squeeze(t), mindspore.mint.squeeze(t, 1)" in ported  # mint's requires a dim
    # the table's trainability as torch's freeze says (True by default)
    assert "embedding_table=__e)))(mindspore.tensor(EMB[0]), True)" in ported
    assert "embedding_table=__e)))((mindspore.tensor(EMB[1]) * 2), False)" in ported
    assert_same(ported, torch_side, ms_side)


def test_a_method_form_keeps_its_receiver_so_a_torch_call_in_it_is_fixed_beside_it() -> None:
    out = port("""
        import torch


        def table(rows, index):
            return torch.tensor(rows).index_fill(1, index, 0.0), torch.ones(2, 3).diag()
    """)
    assert "mindspore.tensor(rows).index_fill(1, index.astype(mindspore.int32), 0.0)" in out  # once, not per round
    assert "(lambda __self: (mindspore.ops.diag_embed(__self, 0) if __self.ndim == 1 else " \
           "mindspore.ops.diagonal(__self, 0)))(mindspore.mint.ones((2, 3)))" in out


def test_a_legacy_tensor_class_read_as_a_value_is_its_dtype_by_an_unsafe_fix() -> None:
    from torch2ms.config import Config
    from torch2ms.fix import fix_text

    source = "import torch\n\nlabels = torch.zeros(3)\nkind = torch.ShortTensor\nout = labels.type(kind)\n"
    assert fix_text(source, "prog.py", Config(device="cpu")).text.count("torch.ShortTensor") == 1  # safe only
    fixed = fix_text(source, "prog.py", Config(device="cpu"), unsafe=True).text
    assert "kind = mindspore.int16\n" in fixed and "import torch" not in fixed


def test_an_out_tensor_of_a_composed_form_is_written_by_a_copy() -> None:
    out = port("""
        import torch


        def quantize(levels, scaled, rows):
            torch.round(levels, out=levels)
            torch.round(scaled, decimals=2, out=scaled)
            torch.round(scaled, decimals=1, out=rows[0])
            return levels, scaled
    """)
    assert "    levels.copy_(mindspore.mint.round(levels))\n" in out  # the single call (decimals 0), out by a copy
    assert "    scaled.copy_((lambda __v, __d: mindspore.ops.round(" in out  # the composed form, out by a copy
    assert "torch.round(scaled, decimals=1, out=rows[0])" in out  # a view: MindSpore would not write through it


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
def test_out_tensors_of_composed_forms_hold_torchs_results(tmp_path: Path) -> None:
    ported, torch_side, ms_side = run_both(tmp_path, """
        import numpy as np
        import torch

        MIXED = np.random.RandomState(5).rand(3, 4).astype(np.float32) * 255


        def case_rounded_in_place():
            levels = torch.tensor(MIXED)
            scaled = torch.tensor(MIXED / 7)
            torch.round(levels, out=levels)
            torch.round(scaled, decimals=1, out=scaled)
            return levels, scaled
    """)
    assert "import torch" not in ported
    assert_same(ported, torch_side, ms_side)
