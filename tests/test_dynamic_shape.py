"""Dynamic-shape risk analysis (TMS2xx): golden files, unit rules, and robustness scans.

Each tests/golden/dynamic/<case>.py is scanned with only the TMS2 codes selected
(so the growing mapping table does not churn these files) and compared with
<case>.txt, one finding a line: `line:col CODE confidence torch_api`.
The inputs also annotate themselves: a line whose comment names TMS2xx codes
must report exactly those codes, and a line whose comment starts with
`# fine` must report none, so a golden file cannot silently drift into
accepting a false positive or losing a finding.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from torch2ms.api import scan_paths
from torch2ms.codes import CODES
from torch2ms.config import Config
from torch2ms.dynamic_shape import DATA_SUFFIX, network_contexts
from torch2ms.engine import parse, scan_source
from torch2ms.mappings import load_table
from torch2ms.model import Confidence, Severity
from torch2ms.source import SourceText
from torch2ms.resolve import resolve_with_events

from conftest import GOLDEN, ROOT, check_golden

CASES = sorted((GOLDEN / "dynamic").glob("*.py"))
ONLY_DYNAMIC = Config(select=("TMS2",))
_CODE = re.compile(r"TMS2\d\d")


def findings(source: str, path: str = "case.py"):
    return scan_source(source, path, ONLY_DYNAMIC).diagnostics


def render(source: str, path: str) -> str:
    rows = [f"{d.span.start_line}:{d.span.start_col + 1} {d.code} {d.confidence.value} {d.torch_api or '-'}"
            for d in findings(source, path)]
    return "".join(row + "\n" for row in rows)


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_dynamic_golden(case: Path) -> None:
    source = case.read_text(encoding="utf-8")
    diags = findings(source, case.name)
    assert not any(d.code.startswith("TMS9") for d in diags)
    check_golden(case.with_suffix(".txt"), render(source, case.name))
    by_line: dict[int, set[str]] = {}
    for diag in diags:
        by_line.setdefault(diag.span.start_line, set()).add(diag.code)
    for number, line in enumerate(source.splitlines(), start=1):
        if "#" not in line:
            continue
        comment = line.split("#", 1)[1].strip()
        if comment.startswith("fine"):
            assert number not in by_line, f"{case.name}:{number} is marked fine but reports {by_line[number]}"
        elif _CODE.search(comment):
            expected = set(_CODE.findall(comment))
            assert by_line.get(number, set()) == expected, \
                f"{case.name}:{number}: expected {sorted(expected)}, got {sorted(by_line.get(number, set()))}"


def test_golden_cases_exist() -> None:
    assert {c.stem for c in CASES} >= {"always_ops", "bool_mask_index", "conditional_args", "slicing",
                                       "control_flow", "scope"}


def test_every_dynamic_code_is_registered_and_documented() -> None:
    doc = (ROOT / "docs" / "dynamic-shapes.md").read_text(encoding="utf-8")
    for code in ("TMS201", "TMS202", "TMS203", "TMS204", "TMS205", "TMS206",
                 "TMS251", "TMS252", "TMS253", "TMS254"):
        assert code in CODES, code
        assert code in doc, f"{code} is not described in docs/dynamic-shapes.md"
        # the data-processing counterpart of TMS20x is TMS25x with the same last digit, one severity lower
        if code.startswith("TMS25"):
            network = CODES["TMS20" + code[-1]]
            assert CODES[code].severity.rank < network.severity.rank
    assert CODES["TMS203"].severity is Severity.WARNING


WRAP = '''import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, k=2):
        super().__init__()
        self.k = k

    def forward(self, x):
        {body}
'''


def codes_of(body: str) -> list[str]:
    return [d.code for d in findings(WRAP.format(body=body))]


@pytest.mark.parametrize("body, expected", [
    ("return x.topk(3)", []),
    ("return x.topk(self.k + 1)", []),
    ("return x.topk(int(x.max()))", ["TMS206", "TMS202"]),
    ("return x.topk(x.shape[-1] // 2)", []),
    ("return torch.where(x)", ["TMS201"]),
    ("return torch.where(x > 0, x, 0)", []),
    ("return x[x != 0]", ["TMS203"]),
    ("return x[x.argmax()]", []),
    ("return x[: x.size(0)]", []),
    ("return x[: x.argmax()]", ["TMS204"]),
    ("return x[: len(x.nonzero())]", ["TMS201", "TMS204"]),
    ("return x.tolist()", ["TMS206"]),
    ("return x.numpy()", ["TMS206"]),
    ("return float(x)", ["TMS206"]),
    ("return x if x.max() > 0 else x + 1", ["TMS205"]),
    ("return x.permute(0, int(x[0]))", ["TMS206", "TMS202"]),
    ("return torch.max(x, x + 1), x.max(x.min())", []),  # the binary form: a tensor is not an axis
    ("return x if torch.jit.is_scripting() else x + 1", []),  # a flag, not a tensor value
    ("return x if not torch.is_grad_enabled() else x + 1", []),
    ("return x[x.sum(1) > 0, :]", ["TMS203"]),
    ("n = x.size(0)\n        return x[: n - 1], x.topk(n // 2)", []),
])
def test_rules_in_forward(body: str, expected: list[str]) -> None:
    assert sorted(codes_of(body)) == sorted(expected)


def test_messages_explain_mindspore_and_remedy() -> None:
    source = WRAP.format(body="m = x > 0\n        n = int(m.sum())\n        if m.any():\n"
                              "            x = x + 1\n        return x.masked_select(m), x[m], x[:n], x.topk(n)")
    by_code = {d.code: d.message for d in findings(source)}
    assert set(by_code) == {"TMS201", "TMS202", "TMS203", "TMS204", "TMS205", "TMS206"}
    assert "multiply by the mask" in by_code["TMS201"] and "where" in by_code["TMS201"]
    assert "fixed maximum" in by_code["TMS202"] and "mask" in by_code["TMS202"]
    assert "where(mask, x, 0)" in by_code["TMS203"]
    assert "bucket" in by_code["TMS204"]
    assert "where/select" in by_code["TMS205"]
    assert "out of forward" in by_code["TMS206"]
    for message in by_code.values():
        assert "MindSpore" in message


def test_data_processing_gets_the_lower_severity_code() -> None:
    source = ("import torch\n\n\ndef collate(batch):\n    t = torch.stack(batch)\n"
              "    return t[t > 0], torch.unique(t), t.item()\n")
    diags = findings(source)
    assert [d.code for d in diags] == ["TMS253", "TMS251"]  # no TMS206: host syncs are normal in data code
    assert all(d.severity is Severity.INFO and DATA_SUFFIX in d.message for d in diags)


def test_unknown_count_is_low_confidence() -> None:
    source = ("import torch\nimport torch.nn as nn\n\n\ndef top(x: torch.Tensor, k):\n    return x.topk(k)\n\n\n"
              "class Net(nn.Module):\n    def forward(self, x):\n        return top(x, 3)\n")
    diags = findings(source)
    assert [(d.code, d.confidence) for d in diags] == [("TMS202", Confidence.LOW)]
    # the same helper without a network that calls it: the data-processing code, still low confidence
    assert [(d.code, d.confidence) for d in findings(source.split("class Net")[0])] == [("TMS252", Confidence.LOW)]


def test_network_graph_follows_calls_transitively() -> None:
    source = ("import torch\nimport torch.nn as nn\n\n\ndef a(x):\n    return b(x)\n\n\ndef b(x):\n"
              "    return x\n\n\ndef c(x):\n    return x\n\n\nclass Net(nn.Module):\n"
              "    def forward(self, x):\n        return self.step(x)\n\n    def step(self, x):\n        return a(x)\n")
    tree = parse(source)
    calls, events = resolve_with_events(tree, load_table(), SourceText(source))
    network = network_contexts(calls, events)
    assert {"Net.forward", "Net.step", "a", "b"} <= network
    assert "c" not in network


def test_disabled_by_select_and_noqa() -> None:
    body = "return torch.nonzero(x)  # noqa: TMS201"
    assert codes_of(body) == []
    source = WRAP.format(body="return torch.nonzero(x)")
    assert [d.code for d in findings(source)] == ["TMS201"]
    assert not any(d.code.startswith("TMS2") for d in scan_source(source, "x.py", Config(ignore=("TMS2",))).diagnostics)


@pytest.mark.needs_torch
@pytest.mark.slow
def test_scan_examples_and_torch_sources_without_internal_errors() -> None:
    """The analysis survives real code: the examples project and all of torch's own sources."""
    import torch

    targets = [str(ROOT / "examples"), os.path.dirname(torch.__file__)]
    start = time.perf_counter()
    results = scan_paths(targets, ONLY_DYNAMIC, jobs=2)
    elapsed = time.perf_counter() - start
    internal = [(r.path, d.message) for r in results for d in r.diagnostics if d.code == "TMS904"]
    assert internal == [], internal[:5]
    assert len(results) > 2000  # torch ships well over 2,000 Python files
    codes = {d.code for r in results for d in r.diagnostics}
    assert {"TMS205", "TMS206", "TMS251", "TMS253"} <= codes  # torch's own code has such patterns
    example_files = [r for r in results if "examples" in Path(r.path).parts]
    assert example_files, "examples/ was not scanned"
    print(f"scanned {len(results)} files in {elapsed:.1f} s")


# ---------------------------------------------------------------- the rules are the tables' facts
NORM_AND_INPLACE = """import torch
import torch.nn as nn


class Net(nn.Module):
    def forward(self, x):
        p = int(x.sum().item())
        a = torch.norm(x, p)
        k = int(x.max().item())
        b = torch.norm(x, 2, k)
        c = x.transpose_(0, k)
        return a + b + c
"""


def _codes_on(diags, line: int) -> set[str]:
    return {d.code for d in diags if d.span.start_line == line}


def test_norms_order_is_not_its_axis_and_an_inplace_form_shares_its_bases_rule() -> None:
    diags = findings(NORM_AND_INPLACE)
    assert "TMS202" not in _codes_on(diags, 8)  # torch.norm(x, p): p is the order, not an axis
    assert "TMS202" in _codes_on(diags, 10)  # torch.norm(x, 2, k): k, the axis, is read from data
    assert "TMS202" in _codes_on(diags, 11)  # x.transpose_(0, k): the rule of torch.Tensor.transpose


def test_a_call_is_judged_dynamic_by_its_table_fact_alone() -> None:
    from dataclasses import replace

    table = load_table()
    source = "import torch\nimport torch.nn as nn\n\nclass Net(nn.Module):\n    def forward(self, x):\n" \
             "        return torch.nonzero(x)\n"
    assert "TMS201" in {d.code for d in scan_source(source, "m.py", ONLY_DYNAMIC, table).diagnostics}
    entries = dict(table.entries)
    entries["torch.nonzero"] = replace(entries["torch.nonzero"], dynamic_shape=None)
    without = replace(table, entries=entries, digest=table.digest + "-no-nonzero-fact")
    assert "TMS201" not in {d.code for d in scan_source(source, "m.py", ONLY_DYNAMIC, without).diagnostics}
    remedy = next(d for d in scan_source(source, "m.py", ONLY_DYNAMIC, table).diagnostics if d.code == "TMS201")
    assert table.entries["torch.nonzero"].dynamic_shape is not None
    assert table.entries["torch.nonzero"].dynamic_shape.remedy in remedy.message


def test_what_a_result_is_comes_from_the_tables_shape_result() -> None:
    """A boolean mask is known as one from its call's `shape_result` in the tables (no name in code): the
    mask of `isfinite`, kept through a reshape, selects a dynamic number of elements; without the entry's
    `shape_result` the scan cannot know the index is a mask."""
    from dataclasses import replace

    table = load_table()
    source = "import torch\nimport torch.nn as nn\n\nclass Net(nn.Module):\n    def forward(self, x):\n" \
             "        keep = x.isfinite().reshape(-1)\n        return x.reshape(-1)[keep]\n"
    assert "TMS203" in {d.code for d in scan_source(source, "m.py", ONLY_DYNAMIC, table).diagnostics}
    for api in ("torch.Tensor.isfinite", "torch.Tensor.reshape"):
        entries = dict(table.entries)
        entries[api] = replace(entries[api], shape_result=None)
        without = replace(table, entries=entries, digest=f"{table.digest}-no-result-of-{api}")
        assert "TMS203" not in {d.code for d in scan_source(source, "m.py", ONLY_DYNAMIC, without).diagnostics}, api
