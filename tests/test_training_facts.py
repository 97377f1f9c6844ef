"""Training differences a forward pass does not show are table facts, and still hold in the installed MindSpore:
a port that would train otherwise keeps its finding instead of running silently (nn.Embedding's padding_idx)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from torch2ms.config import Config
from torch2ms.engine import scan_source
from torch2ms.mappings import load_table

SOURCE = textwrap.dedent("""\
    import torch.nn as nn

    class Tagger(nn.Module):
        def __init__(self, vocab, width):
            super().__init__()
            self.words = nn.Embedding(vocab, width, padding_idx=0)
            self.chars = nn.Embedding(vocab, width)
""")


def test_an_embedding_with_a_padding_row_keeps_its_finding_and_gets_no_fix() -> None:
    found = {d.span.start_line: d for d in scan_source(SOURCE, "m.py", Config(device="cpu"), load_table()).diagnostics
             if d.torch_api == "torch.nn.Embedding"}
    assert found[6].code == "TMS102" and "padding_idx" in found[6].message and found[6].fix is None
    assert found[7].code == "TMS101" and found[7].fix is not None


@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
def test_mindspore_trains_the_padding_row_as_the_fact_says() -> None:
    """If a MindSpore release zeroes the padding row's gradient as torch does, this fails: drop the fact."""
    program = textwrap.dedent("""\
        import mindspore as ms, numpy as np
        from mindspore import nn
        table = nn.Embedding(5, 3, padding_idx=0)
        ids = ms.Tensor(np.array([[0, 1, 2]]), ms.int32)
        grads = ms.grad(lambda i: table(i).sum(), None, table.trainable_params())(ids)
        print(float(abs(grads[0].asnumpy()[0]).sum()))
    """)
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert float(out.stdout.strip().splitlines()[-1]) > 0  # the padding row's gradient is not zero
