"""The usage corpus (tests/data/usage_corpus) through the fix engine, run in torch and MindSpore on CPU.

A fixed sample of programs across the topics runs through the same harness as
benchmarks/fix_corpus.py. No program may silently compute something else, and every verdict
must be what the harness says it is (a program that "still imports torch" really does; one that
gives torch's result does not import torch; one that raises names its error).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from torch2ms.verify.corpus import (
    DIFFERENT, FIX_FAILED, IMPORTS_TORCH, MIGRATE, RAISES, SAME, TORCH_FAILED, Program, imports_torch, load_corpus,
    run_corpus, split_programs,
)

pytestmark = [pytest.mark.needs_torch, pytest.mark.needs_mindspore, pytest.mark.slow]  # programs run in both

CORPUS = Path(__file__).resolve().parent / "data" / "usage_corpus"
SAMPLE = 30


def _sample(programs: list[Program], size: int) -> list[Program]:
    """`size` programs spread over every topic: round-robin over the topics, evenly spaced in each."""
    by_topic: dict[str, list[Program]] = {}
    for program in programs:
        by_topic.setdefault(program.topic, []).append(program)
    picked: list[Program] = []
    rank = 0
    while len(picked) < size:
        for topic in sorted(by_topic):
            mine = by_topic[topic]
            step = max(1, len(mine) // 4)
            index = (rank * step + rank // 4) % len(mine)
            if mine[index] not in picked and len(picked) < size:
                picked.append(mine[index])
        rank += 1
    return picked


@pytest.fixture(scope="module")
def verdicts():
    programs = load_corpus(CORPUS)
    assert len(programs) >= 400
    return run_corpus(_sample(programs, SAMPLE), jobs=2, timeout=120)


def test_corpus_programs_are_unique_and_cover_the_topics():
    programs = load_corpus(CORPUS)
    assert len({p.ident for p in programs}) == len(programs)
    topics = {p.topic for p in programs}
    assert {"creation", "elementwise", "functional", "inplace", "layers", "losses", "models", "optim",
            "reductions", "rnn", "dtype_device", "indexing", "linalg", "tensor_methods", "keywords"} <= topics
    assert all(sum(p.topic == t for p in programs) >= 10 for t in topics)
    sample = _sample(programs, SAMPLE)
    assert len({p.ident for p in sample}) == SAMPLE and {p.topic for p in sample} == topics


def test_no_sampled_program_differs_silently(verdicts):
    silent = [f"{v.program.ident}: {v.detail}" for v in verdicts if v.verdict == DIFFERENT]
    assert not silent, "\n".join(silent)


def test_no_program_of_the_whole_corpus_differs_silently():
    # every program (a few seconds with two workers): a rewrite that changes a result without a word is
    # the worst kind of bug, so none may hide outside the sample
    found = run_corpus(load_corpus(CORPUS), jobs=2, timeout=120)
    silent = [f"{v.program.ident}: {v.detail}" for v in found if v.verdict == DIFFERENT]
    assert not silent, "\n".join(silent)
    broken = [f"{v.program.ident}: {v.verdict}" for v in found if v.verdict in (TORCH_FAILED, FIX_FAILED)]
    assert not broken, "\n".join(broken)


def test_each_verdict_is_what_it_says(verdicts):
    for v in verdicts:
        where = v.program.ident
        assert v.verdict not in (TORCH_FAILED, FIX_FAILED), f"{where}: {v.verdict}: {v.detail}"
        if v.verdict == SAME:
            assert not imports_torch(v.fixed), where
            assert v.fixed != v.program.source, where  # the fix rewrote it
        elif v.verdict == IMPORTS_TORCH:
            assert imports_torch(v.fixed), where
            assert v.torch_uses and v.cause == v.torch_uses[0], where
        else:
            assert v.verdict == RAISES, where
            assert not imports_torch(v.fixed), where
            assert v.cause and v.detail, where
            if v.cause.startswith("no CPU kernel"):
                assert "kernel" in v.detail.lower() or "ascend" in v.detail.lower(), where


def test_the_harness_sees_a_silent_difference_and_a_kept_import():
    # In-place updates through a view made by a call are not rewritten (nothing can name the view),
    # and MindSpore's views do not write through: the harness must call that silently different.
    text = textwrap.dedent("""
        # %% view_update
        import numpy as np
        import torch

        x = torch.from_numpy(np.arange(6, dtype=np.float32))


        def run():
            x.view(2, 3)[0].add_(1)
            return x

        # %% keeps_torch
        import torch

        x = torch.ones(2, 3)


        def run():
            return torch.vdot(x[0], x[1])
        """)
    programs = split_programs(text, "control.py", "control")
    found = {v.program.ident: v for v in run_corpus(programs, jobs=1, timeout=120)}
    assert found["control/view_update"].verdict == DIFFERENT
    assert "values differ" in found["control/view_update"].detail
    assert found["control/keeps_torch"].verdict == IMPORTS_TORCH
    assert found["control/keeps_torch"].cause == "torch.vdot (TMS103)"


# Programs that silently differed, raised or kept torch before the fixes named: a float fill value's dtype
# written out for mindspore.ops.full, abs of a complex result as mindspore.ops.ComplexAbs, the CPU form of
# cross_entropy; unbiased= as ddof=, int dims as a tuple, int scale factors as floats, axes=1 for dot,
# pad_mode='pad', fill_/zero_ as copies, dynamic-shape calls rewritten, new_tensor/new_full with the
# receiver's dtype, element_size() as itemsize.
FIXED_CLASSES = ("creation/full_value", "creation/full_int", "linalg/fft_rfft_abs",
                 "losses/cross_entropy_functional", "losses/cross_entropy_label_smoothing",
                 "reductions/std_dim_unbiased_false", "tensor_methods/flip_dims", "functional/interpolate_nearest",
                 "layers/upsample_nearest", "linalg/dot_vectors", "functional/conv2d_padding",
                 "inplace/fill_inplace", "inplace/zero_inplace", "creation/empty_fill", "indexing/masked_select",
                 "indexing/nonzero_indices", "creation/new_tensor", "creation/new_full",
                 "dtype_device/numel_dtype_itemsize")


def test_the_programs_of_each_fix_class_give_torchs_result():
    programs = [p for p in load_corpus(CORPUS) if p.ident in FIXED_CLASSES]
    assert len(programs) == len(FIXED_CLASSES)
    found = {v.program.ident: v for v in run_corpus(programs, jobs=2, timeout=120)}
    assert {name: found[name].verdict for name in FIXED_CLASSES} == dict.fromkeys(FIXED_CLASSES, SAME)
    assert "dtype=mindspore.float32" in found["creation/full_value"].fixed
    assert "mindspore.ops.ComplexAbs()(" in found["linalg/fft_rfft_abs"].fixed
    assert "ddof=0" in found["reductions/std_dim_unbiased_false"].fixed
    assert "mindspore.ops.full_like(" in found["inplace/fill_inplace"].fixed


def test_migrate_writes_a_method_as_the_fix_engine_does_and_ports_the_training_step():
    # `migrate` rewrites each program as a port (--through migrate of benchmarks/fix_corpus.py). A Tensor
    # method whose MindSpore form is a function is the fix engine's, with the target's own rewrite: a pass of
    # migrate's own once moved the receiver into the arguments (`mindspore.ops.full(t, (3,), 2)`, a TypeError)
    # and hid the device move after it from the fix (`.cpu()` left on a MindSpore tensor).
    text = textwrap.dedent("""
        # %% receiver_dtype
        import numpy as np
        import torch

        t = torch.from_numpy(np.linspace(0, 1, 4).astype(np.float64))


        def run():
            filled = t.new_full((3,), 2)
            return filled, filled.dtype == t.dtype, (t * 2).detach().cpu().numpy()

        # %% fit_steps
        import numpy as np
        import torch
        from torch import nn

        grid = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(6, 2)
        net = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
        sgd = torch.optim.SGD(net.parameters(), lr=0.2)


        def run():
            inputs = torch.from_numpy(grid)
            for _ in range(2):
                sgd.zero_grad()
                err = torch.nn.functional.mse_loss(net(inputs), inputs.sum(1, keepdim=True) ** 2)
                err.backward()
                sgd.step()
            return net[2].bias

        # %% adam_support
        import numpy as np
        import torch
        from torch import nn

        points = torch.from_numpy(np.linspace(0.0, 2.0, 8, dtype=np.float32).reshape(4, 2))
        head = nn.Linear(2, 1)
        adam = torch.optim.Adam(head.parameters(), lr=0.1, weight_decay=0.01)


        def run():
            for _ in range(3):
                adam.zero_grad()
                gap = (head(points) - 1.0).abs().mean()
                gap.backward()
                adam.step()
            return head.weight
        """)
    programs = split_programs(text, "ported.py", "ported")
    found = {v.program.ident: v for v in run_corpus(programs, jobs=1, timeout=120, through=MIGRATE)}
    # (a port that uses the support module migrate writes beside it runs with that module importable)
    assert {name: v.verdict for name, v in found.items()} == {
        "ported/receiver_dtype": SAME, "ported/fit_steps": SAME, "ported/adam_support": SAME}, \
        {name: v.detail for name, v in found.items()}
    assert "t2ms_support.Adam(" in found["ported/adam_support"].fixed
    assert "mindspore.ops.full((3,), 2, dtype=t.dtype)" in found["ported/receiver_dtype"].fixed
    assert ".cpu()" not in found["ported/receiver_dtype"].fixed
    assert "value_and_grad" in found["ported/fit_steps"].fixed
    with pytest.raises(ValueError, match="unknown rewriter"):
        run_corpus(programs, through="sed")


def test_composed_forms_for_ops_without_a_cpu_kernel_give_torchs_result():
    # round to decimals (MindSpore's round takes only 0), take and Tensor.scatter_add (no CPU kernel; the src
    # larger than the index, as torch allows), the default dtype, soft margin loss as a function and as a layer
    text = textwrap.dedent("""
        # %% decimals
        import numpy as np
        import torch

        grid = torch.from_numpy(np.linspace(-7.5, 7.5, 10, dtype=np.float32)) * 13.0771


        def run():
            return torch.round(grid, decimals=1), grid.round(decimals=-1), torch.round(grid), grid.round(decimals=0)

        # %% gather_scatter
        import numpy as np
        import torch

        base = torch.from_numpy(np.arange(12, dtype=np.float32).reshape(4, 3))
        where = torch.tensor([[2, 0], [1, 1], [0, 2]])


        def run():
            flat = torch.take(base, where * 3)
            into_rows = torch.scatter_add(torch.ones(3, 3), 0, where, base[:3, :2])
            into_cols = torch.zeros(4, 3)[:3].scatter_add(1, where, base[1:] - 1)
            return flat, into_rows, into_cols

        # %% margin
        import numpy as np
        import torch
        import torch.nn.functional as F

        scores = torch.from_numpy(np.cos(np.arange(8, dtype=np.float32)))
        signs = torch.from_numpy(np.where(np.arange(8) % 3 == 0, 1.0, -1.0).astype(np.float32))


        def run():
            per_item = F.soft_margin_loss(scores, signs, reduction="none")
            layer = torch.nn.SoftMarginLoss(reduction="sum")
            return per_item, F.soft_margin_loss(scores * 2, signs), layer(scores, signs), torch.get_default_dtype()
        """)
    programs = split_programs(text, "composed.py", "composed")
    found = {v.program.ident: v for v in run_corpus(programs, jobs=1, timeout=120)}
    assert {name: v.verdict for name, v in found.items()} == dict.fromkeys(found, SAME), \
        {name: v.detail for name, v in found.items()}
    decimals = found["composed/decimals"].fixed
    assert decimals.count("mindspore.ops.round(__v * 10.0 ** __d)") == 2  # decimals=0, passed or not: the call
    assert "x.take(" not in decimals and ".take(" in found["composed/gather_scatter"].fixed
    assert found["composed/gather_scatter"].fixed.count("tensor_scatter_elements") == 2


def test_legacy_typed_tensor_classes_become_mindspore_tensors_of_their_dtype():
    # torch.LongTensor(data) and torch.FloatTensor(sizes): data keeps its values and dtype; sizes give torch's
    # uninitialised memory, so only the shape is compared. A lone name (data or a size?) keeps its finding.
    text = textwrap.dedent("""
        # %% typed
        import torch

        widths = [3, 1, 4]


        def run():
            ids = torch.LongTensor([[5, 0], [2, 7]])
            mask = torch.BoolTensor((True, False, True))
            scratch = torch.DoubleTensor(2, 5)
            counts = torch.ByteTensor(3)
            return ids * 2, mask, list(scratch.shape), list(counts.shape), torch.FloatTensor([w / 2 for w in widths])

        # %% ambiguous
        import torch

        n = 3


        def run():
            return torch.IntTensor(n)
        """)
    programs = split_programs(text, "legacy.py", "legacy")
    found = {v.program.ident: v for v in run_corpus(programs, jobs=1, timeout=120)}
    assert found["legacy/typed"].verdict == SAME, found["legacy/typed"].detail
    assert "mindspore.ops.zeros((2, 5), mindspore.float64)" in found["legacy/typed"].fixed
    assert "mindspore.tensor([[5, 0], [2, 7]], dtype=mindspore.int64)" in found["legacy/typed"].fixed
    assert found["legacy/ambiguous"].verdict == IMPORTS_TORCH and "torch.IntTensor" in found["legacy/ambiguous"].cause


def test_a_forward_pass_on_data_the_loop_does_not_bind_stays_in_the_trained_function():
    # `scores = net(features)` on module-level data, then a held loss on what it returns: the forward pass must
    # be inside the function value_and_grad differentiates, or every gradient is zero and the port trains
    # nothing, silently
    text = textwrap.dedent("""
        # %% held_loss
        import numpy as np
        import torch
        from torch import nn

        features = torch.from_numpy(np.sin(np.arange(20, dtype=np.float32)).reshape(5, 4))
        wanted = torch.from_numpy(np.cos(np.arange(10, dtype=np.float32)).reshape(5, 2))
        net = nn.Linear(4, 2)
        criterion = nn.MSELoss()
        opt = torch.optim.SGD(net.parameters(), lr=0.5)


        def run():
            for _ in range(3):
                opt.zero_grad()
                scores = net(features)
                err = criterion(scores, wanted)
                err.backward()
                opt.step()
            return net.weight, net.bias
        """)
    programs = split_programs(text, "held.py", "held")
    [verdict] = run_corpus(programs, jobs=1, timeout=120, through=MIGRATE)
    assert verdict.verdict == SAME, verdict.detail
    forward = verdict.fixed[verdict.fixed.index("def forward_fn"):verdict.fixed.index("grad_fn =")]
    assert "net(features)" in forward
