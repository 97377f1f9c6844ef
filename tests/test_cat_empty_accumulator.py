"""torch.cat skips a 1-D tensor with no elements among tensors of another rank (an accumulator started as
`torch.tensor([])` or `torch.empty(0)`); MindSpore's cat raises ("element rank must be same"). The resolver tags
such a tensor (the tables' `from_data` / `from_sizes` results, `dynamic_shape.EMPTY`) and a sequence holding one;
the tables' composed form for cat (`tagged: {tensors: empty_1d}`) leaves the empty 1-D tensors out as torch does,
and every other cat keeps its single call."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from case_runner import assert_port_agrees, port_in_process
from torch2ms.dynamic_shape import EMPTY
from torch2ms.fix import fix_source
from torch2ms.mappings import load_table
from torch2ms.resolve import resolve_module
from torch2ms.source import SourceText

_PROGRAM = textwrap.dedent('''\
    import numpy as np
    import torch

    RNG = np.random.RandomState(5)
    ROWS = [torch.tensor(RNG.uniform(-1.0, 1.0, (2, 3)).astype(np.float32)) for _ in range(3)]


    def stack_rows(rows):
        acc = torch.tensor([])
        for row in rows:
            acc = torch.cat([acc, row], dim=0)
        return acc


    def side_by_side(rows):
        acc = torch.zeros(0)
        for row in rows:
            acc = torch.cat((acc, row), 1)
        return acc


    def collect_labels(rows):
        ids = torch.empty(0, dtype=torch.long)
        for row in rows:
            ids = torch.cat([ids, row.argmax(1)])
        return ids


    def collect_predictions(rows):
        preds = torch.tensor([])  # float32: torch's result is float32 although every prediction is int64
        for row in rows:
            preds = torch.cat((preds, row.argmax(1)))
        return float(preds.dtype == torch.float32)

    def case_accumulators():
        return stack_rows(ROWS), side_by_side(ROWS), collect_labels(ROWS)

    def case_the_result_dtype_is_torchs_promotion():
        return collect_predictions(ROWS)

    def case_every_tensor_empty():
        return torch.cat([torch.tensor([]), torch.tensor([])]), torch.concat([torch.Tensor(), ROWS[0][0]])

    def case_ordinary_cats():
        return torch.cat(ROWS, 1), torch.cat([ROWS[0], ROWS[1]])
    ''')


def _fixed(text: str) -> str:
    return fix_source(text, "m.py")[0]


def test_only_a_cat_that_the_data_flow_sees_an_empty_tensor_reach_is_composed() -> None:
    out = _fixed(textwrap.dedent('''\
        import torch

        def run(batches, parts, device):
            acc = torch.tensor([]).to(device)
            for b in batches:
                acc = torch.cat([acc, b], dim=0)
            pieces = []
            for b in batches:
                pieces.append(b)
            return acc, torch.cat(pieces), torch.cat([b, b], 1), torch.cat(parts), torch.cat([torch.zeros(3), b])
        '''))
    assert "mindspore.mint.cat([__t.astype(__d) for __t in __ts if __t.shape != (0,)] or [__ts[0].astype(__d)], 0)" \
        in out and ".dtype))([acc, b])" in out
    # an empty Python list filled later, a parameter, tensors of known size: the single call
    assert "mindspore.mint.cat(pieces)" in out
    assert "mindspore.mint.cat([b, b], 1)" in out
    assert "mindspore.mint.cat(parts)" in out
    assert "mindspore.mint.cat([mindspore.mint.zeros(3), b])" in out
    assert out.count("__t.shape") == 1


def test_the_resolver_tags_the_empty_literals_the_tables_name() -> None:
    text = textwrap.dedent('''\
        import torch
        a = torch.cat([torch.tensor([]), x])
        b = torch.cat([torch.empty((0,)), x])
        c = torch.cat([torch.ones(size=[0]), x])
        d = torch.cat([torch.Tensor(), x])
        e = torch.cat([torch.tensor([0]), x])
        f = torch.cat([torch.empty(0, 3), x])
        g = torch.cat([torch.zeros(False), x])
        ''')
    calls = resolve_module(ast.parse(text), load_table(), SourceText(text)).calls
    cats = [c for c in calls if c.api == "torch.cat"]
    assert [c.args[0].tag == EMPTY for c in cats] == [True, True, True, True, False, False, False]


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
@pytest.mark.parametrize("mode", ["mindspore", "graph"])
def test_a_ported_accumulator_gives_torchs_result(tmp_path: Path, mode: str) -> None:
    original, port, text = port_in_process(tmp_path, _PROGRAM)
    assert text.count("__t.shape != (0,)") == 6, text
    expected = assert_port_agrees(original, port, (mode,), rtol=1e-6, atol=1e-6, context=text)
    assert [len(v) for v in expected["case_accumulators"]] == [18, 18, 6]
    assert [len(v) for v in expected["case_every_tensor_empty"]] == [0, 3]
    assert expected["case_the_result_dtype_is_torchs_promotion"] == [[1.0]]
