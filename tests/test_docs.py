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


def _console_blocks(text: str) -> list[list[str]]:
    """The ```console blocks of a document, as lines; each starts with a `$ torch2ms ...` command."""
    return [block.splitlines() for block in re.findall(r"^```console\n(.*?)^```$", text, flags=re.MULTILINE | re.S)]


def test_readme_sample_output_is_the_real_output() -> None:
    """Each sample in the README is a command and lines of its output ("..." for lines left out): the
    command is run, its first and last lines must be the sample's, the rest in the sample's order."""
    import shlex

    from conftest import run_cli

    blocks = _console_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert blocks, "the README shows sample output"
    for block in blocks:
        command = shlex.split(block[0].removeprefix("$ "))
        assert command[0] == "torch2ms", block[0]
        actual = run_cli(*command[1:], cwd=ROOT).stdout.splitlines()
        shown = block[1:]
        if shown[0] != "...":
            assert actual[0] == shown[0]
        if shown[-1] != "...":
            assert actual[-1] == shown[-1]
        position = 0
        for line in shown:
            if line == "...":
                continue
            assert line in actual[position:], f"not in the output of {block[0]} (in this order): {line}"
            position = actual.index(line, position) + 1
