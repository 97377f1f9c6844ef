"""Golden tests for the resolver: every torch use it finds, with its location, kind and confidence.

Each tests/golden/resolve/<case>.py is resolved and compared with <case>.txt. The
expected files list `line:col api kind confidence` (1-based line and column). Lines
marked `# expect: none` in the inputs are negatives: the .txt must not list them;
`# expect: low` allows only a low-confidence Tensor method there.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from torch2ms.engine import parse
from torch2ms.mappings import load_table
from torch2ms.source import SourceText
from torch2ms.resolve import resolve

from conftest import GOLDEN, check_golden

CASES = sorted((GOLDEN / "resolve").glob("*.py"))


def render(source: str) -> str:
    calls = resolve(parse(source), load_table(), SourceText(source))
    lines = [
        f"{c.span.start_line}:{c.span.start_col + 1} {c.api} {c.kind} {c.confidence.value}"
        for c in sorted(calls, key=lambda c: (c.span.start_line, c.span.start_col, c.api))
    ]
    return "".join(line + "\n" for line in lines)


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_resolve_golden(case: Path) -> None:
    source = case.read_text(encoding="utf-8")
    actual = render(source)
    check_golden(case.with_suffix(".txt"), actual)
    # Negatives stay negative: nothing on a line marked `# expect: none`, and only
    # low-confidence Tensor methods on a line marked `# expect: low`.
    reported: dict[int, set[str]] = {}
    for row in actual.splitlines():
        reported.setdefault(int(row.split(":")[0]), set()).add(row.rsplit(" ", 1)[1])
    for number, line in enumerate(source.splitlines(), start=1):
        if "# expect: none" in line:
            assert number not in reported, f"{case.name}:{number} reported but marked expect: none"
        if "# expect: low" in line:
            assert reported.get(number, set()) <= {"low"}, f"{case.name}:{number} resolved with high confidence"


def test_golden_cases_exist() -> None:
    names = {c.stem for c in CASES}
    assert {"imports", "aliases", "shadowing", "structure", "tensor_receivers", "negatives", "instances"} <= names
