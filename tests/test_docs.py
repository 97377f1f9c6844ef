"""Documentation generated from data stays in step with the data."""

from __future__ import annotations

import re

from torch2ms.codes import CODES

from conftest import ROOT


def test_readme_code_table_matches_the_registry() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (TMS\d{3}) \| ([a-z0-9-]+) \| (\w+) \| (.+) \|$", readme, flags=re.MULTILINE)
    documented = {code: (name, severity, summary) for code, name, severity, summary in rows}
    expected = {c.code: (c.name, c.severity.value, c.summary) for c in CODES.values()}
    assert documented == expected


def test_every_code_has_a_documentation_link() -> None:
    for info in CODES.values():
        assert info.doc_url.startswith("https://"), info.code
