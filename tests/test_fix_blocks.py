"""`scan --fix` on what `migrate` rewrites structurally: a block or function run without torch's tape (transform
dropped_context, named by the tables for torch.no_grad and its spellings) and the labels of a loss call that
MindSpore's class takes in another dtype (checks.layer_call, data/training.yaml's label_casts). The fixed
programs run against torch."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from case_runner import assert_port_agrees
from torch2ms.config import Config
from torch2ms.engine import scan_source
from torch2ms.fix import fix_text

TAPE = textwrap.dedent("""\
    import numpy as np
    import torch
    from torch.autograd import no_grad

    WEIGHTS = np.linspace(-1.0, 1.0, 6).astype(np.float32).reshape(2, 3)


    class Averager:
        def __init__(self, keep):
            self.keep = keep
            self.mean = torch.zeros(2, 3)

        @torch.no_grad()
        def update(self, value):
            self.mean = self.mean * self.keep + value * (1 - self.keep)
            return self.mean


    def case_tape_free_blocks():
        avg = Averager(0.5)
        w = torch.tensor(WEIGHTS)
        with torch.inference_mode():
            # both updates see the same weights
            first = avg.update(w)
            if first.sum() > -10:
                second = avg.update(w * 2 +
                                    1)
        with no_grad():
            third = torch.tanh(second)
        return first, second, third
""")


def _fixed(text: str) -> str:
    return fix_text(text, "prog.py", Config(), unsafe=True).text


def test_a_tape_free_block_is_written_as_its_body() -> None:
    fixed = _fixed(TAPE)
    ast.parse(fixed)
    assert "no_grad" not in fixed and "inference_mode" not in fixed and "torch" not in fixed
    assert "\n    def update(self, value):\n" in fixed  # the decorator's line gone
    assert "\n    # both updates see the same weights\n    first = avg.update(w)\n" in fixed
    assert "        second = avg.update(w * 2 +\n                            1)\n" in fixed
    assert "\n    third = mindspore.mint.tanh(second)\n" in fixed


def test_the_block_fix_is_unsafe_and_left_where_the_text_would_change() -> None:
    text = textwrap.dedent('''\
        import torch

        def f(x):
            with torch.no_grad(): y = x * 2
            with torch.no_grad():
                doc = """two
        lines"""
            with torch.no_grad(), open("a") as fh:
                pass
            return y, doc
    ''')
    assert fix_text(text, "prog.py", Config(), unsafe=False).text == text  # the safe fixes do not drop a tape
    assert _fixed(text) == text
    codes = [(d.span.start_line, d.code) for d in scan_source(text, "prog.py", Config()).diagnostics]
    assert codes == [(4, "TMS103"), (5, "TMS103"), (8, "TMS103")]


LOSS = textwrap.dedent("""\
    import numpy as np
    import torch
    import torch.nn as nn

    SCORES = np.random.RandomState(7).rand(5, 4).astype(np.float32)


    def case_class_labels():
        scores = torch.tensor(SCORES)
        picked = torch.tensor([3, 0, 0, 2, 1])
        spread = torch.softmax(torch.tensor(SCORES) * 3, dim=1)
        weigh = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 0.5, 1.0]), reduction="none")
        return weigh(scores, picked), weigh(scores, target=spread), weigh(input=scores, target=(picked + 1) % 4)


    def labels_of(scores):
        return scores.argmax(dim=1).flip(0)


    def case_labels_a_call_computes():
        scores = torch.tensor(SCORES)
        loss = nn.CrossEntropyLoss(reduction="none")
        return loss(scores, labels_of(scores))
""")


def test_the_labels_of_a_loss_call_are_cast_once() -> None:
    fixed = _fixed(LOSS)
    assert "weigh(scores, (picked.astype(mindspore.int32) if picked.dtype == mindspore.int64 else picked))" in fixed
    assert ("weigh(scores, labels=(spread.astype(mindspore.int32) if spread.dtype == mindspore.int64 else spread))"
            in fixed)  # float labels (probabilities) pass as they are
    assert ("weigh(logits=scores, labels=(((picked + 1) % 4).astype(mindspore.int32) if ((picked + 1) % 4).dtype == "
            "mindspore.int64 else ((picked + 1) % 4)))") in fixed
    assert _fixed(fixed) == fixed  # the rescan finds them cast: nothing more to do
    assert not [d for d in scan_source(fixed, "prog.py", Config()).diagnostics if d.code == "TMS102"]


def test_the_label_cast_is_an_unsafe_fix_with_its_finding() -> None:
    found = [d for d in scan_source(LOSS, "prog.py", Config()).diagnostics if d.span.start_line == 13]
    casts = [d for d in found if "another dtype" in d.message]
    assert len(casts) == 3 and all(d.fix is not None and not d.fix.safe for d in casts)
    computed = "import torch\nloss = torch.nn.CrossEntropyLoss()\nout = loss(torch.ones(2, 3), torch.tensor([0, 1]).flip(0))\n"
    left = [d for d in scan_source(computed, "prog.py", Config()).diagnostics if "another dtype" in d.message]
    # labels computed by calls: evaluated once, passed to the form as a lambda's argument
    assert len(left) == 1 and left[0].fix is not None and not left[0].fix.safe
    assert "(lambda __arg: (__arg.astype(mindspore.int32) if __arg.dtype == mindspore.int64 else __arg))" \
        "(torch.tensor([0, 1]).flip(0))" in [e.text for e in left[0].fix.edits]
    fixed = _fixed(computed)
    assert fixed.count("lambda __arg") == 1 and _fixed(fixed) == fixed  # the rescan finds it cast


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.parametrize("program", [TAPE, LOSS], ids=["tape", "loss"])
def test_fixed_programs_agree_with_torch(tmp_path: Path, program: str) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    (src / "prog.py").write_text(program)
    (out / "prog.py").write_text(_fixed(program))
    assert_port_agrees(src, out, ("mindspore",), rtol=1e-5, atol=1e-6, context=(out / "prog.py").read_text())


UNUSED = textwrap.dedent("""\
    import numpy as np
    import torch
    import torch.nn as nn


    def case_layer_tensors_set_in_place():
        bn = nn.BatchNorm1d(3)
        for m in [bn, nn.LayerNorm(3)]:
            if isinstance(m, nn.BatchNorm1d):
                m.weight.data.fill_(2.0)
                m.bias.data.zero_()
        bn.eval()
        return bn(nn.Identity()(torch.ones(2, 3) * 0.5)), bn.weight
""")


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_a_fix_that_repeats_a_renamed_layer_tensor_repeats_the_rename_and_torchs_unused_import_goes(
        tmp_path: Path) -> None:
    """The in-place fix repeats its receiver (`m.weight.data.copy_(full_like(m.weight.data, ...))`) while the
    layer's tensor is renamed in place (`m.gamma`): the repeat is renamed too. `import torch`, unused in the
    original as in the port, is removed: the port runs without torch."""
    fixed = _fixed(UNUSED)
    assert "m.gamma.data.copy_(mindspore.ops.full_like(m.gamma.data, 2.0))" in fixed
    assert "m.beta.data.copy_(mindspore.ops.zeros_like(m.beta.data))" in fixed
    assert "torch" not in fixed and ".weight" not in fixed and ".bias" not in fixed and "bn.gamma" in fixed
    assert not [d for d in scan_source(fixed, "prog.py", Config()).diagnostics if d.severity.value != "info"]
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    (src / "prog.py").write_text(UNUSED)
    (out / "prog.py").write_text(fixed)
    assert_port_agrees(src, out, ("mindspore",), rtol=1e-5, atol=1e-6, context=fixed)
