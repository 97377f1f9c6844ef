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


def test_readme_sample_output_is_the_real_output(tmp_path) -> None:
    """Each sample in the README is a command and lines of its output ("..." for lines left out): the
    command is run (in a copy of the checkout's examples, so that its cache is not written into the
    checkout), its first and last lines must be the sample's, the rest in the sample's order."""
    import shlex
    import shutil

    from conftest import run_cli

    shutil.copytree(ROOT / "examples", tmp_path / "examples")

    blocks = _console_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert blocks, "the README shows sample output"
    for block in blocks:
        command = shlex.split(block[0].removeprefix("$ "))
        assert command[0] == "torch2ms", block[0]
        actual = run_cli(*command[1:], cwd=tmp_path).stdout.splitlines()
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


# ---------------------------------------------------------------- every snippet of the documentation
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs" / "editors").glob("*.md"))]
KINDS = ("sh", "console", "toml", "yaml", "json", "python", "lua", "layers")  # layers: tests/test_layers.py


def snippets(kind: str | None = None) -> list[tuple[str, str, str]]:
    """(file, language, text) of every fenced block with a language, in the README and docs/."""
    out = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for lang, body in re.findall(r"^```([a-z]+)\n(.*?)^```$", text, flags=re.MULTILINE | re.S):
            if kind is None or lang == kind:
                out.append((str(path.relative_to(ROOT)), lang, body))
    return out


def test_every_snippet_is_of_a_kind_the_tests_check() -> None:
    found = {lang for _, lang, _ in snippets()}
    assert found <= set(KINDS), found - set(KINDS)
    assert len(snippets()) >= 25


def _commands(body: str) -> list[list[str]]:
    """The shell commands of a sh/console block (prompts, comments and redirections dropped)."""
    import shlex

    text = re.sub(r"\\\n", " ", body)
    out = []
    for line in text.splitlines():
        line = line.removeprefix("$ ").strip()
        if not line or line.startswith("#"):
            continue
        words = shlex.split(line, comments=True)
        for stop in ("<", ">", "|", "&&"):
            if stop in words:
                words = words[:words.index(stop)]
        while words and re.match(r"^[A-Za-z_]\w*=", words[0]):  # VAR=value command
            words = words[1:]
        out.append(words)
    return out


def _torch2ms_args(words: list[str]) -> list[str] | None:
    if words[0] == "torch2ms":
        return words[1:]
    if len(words) > 2 and words[0].endswith(("python", "python3", "python.exe")) and words[1:3] == ["-m", "torch2ms"]:
        return words[3:]
    return None


def _check_pip(words: list[str]) -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = set(project["optional-dependencies"])
    action = words[3]
    assert action in ("install", "wheel"), words
    for requirement in (w for w in words[4:] if not w.startswith("-") and w != "dist"):
        where, _, extra = requirement.partition("[")
        assert where in (".", "/path/to/torch2ms") or where.startswith("dist/torch2ms-"), \
            f"torch2ms is installed from a clone or a built wheel, not from an index: {words}"
        if where.startswith("dist/"):
            assert where == f"dist/torch2ms-{project['version']}-py3-none-any.whl", where
        if extra:
            assert extra.rstrip("]") in extras, requirement


OTHER_COMMANDS = {"git", "cd", "./run", "npm", "code"}


def test_shell_snippets_name_real_commands_and_options() -> None:
    """Every torch2ms command line of the docs parses with the real parser (the options and values
    exist); pip lines install from a clone or a wheel with extras that exist; scripts exist."""
    import contextlib
    import io

    from torch2ms.cli import build_parser

    checked = 0
    for file, _, body in snippets("sh") + snippets("console"):
        if body.startswith("$ torch2ms scan examples/"):
            continue  # sample output: test_readme_sample_output_is_the_real_output runs it
        for words in _commands(body):
            args = _torch2ms_args(words)
            if args is not None:
                errors = io.StringIO()
                with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
                    try:
                        build_parser().parse_args(args)
                    except SystemExit as exc:
                        assert exc.code == 0, f"{file}: {' '.join(words)}: {errors.getvalue()}"
            elif words[1:3] == ["-m", "pip"]:
                _check_pip(words)
            elif words[0] == "python":
                assert (ROOT / words[1]).is_file(), f"{file}: {' '.join(words)}"
            else:
                assert words[0] in OTHER_COMMANDS, f"{file}: unknown command {' '.join(words)}"
            checked += 1
    assert checked >= 40


def test_toml_snippets_are_valid_configuration(tmp_path) -> None:
    from torch2ms.config import load_config

    for file, _, body in snippets("toml"):
        pyproject = tmp_path / "pyproject.toml"
        pyproject.write_text(body, encoding="utf-8")
        config = load_config(pyproject)
        assert config.source == str(pyproject), file


def test_json_and_yaml_snippets_parse() -> None:
    import json

    import yaml

    for _, _, body in snippets("json"):
        json.loads(body)
    configs = [yaml.safe_load(body) for _, _, body in snippets("yaml")]
    assert configs and all(set(c) == {"repos"} for c in configs)  # pre-commit configurations: test_precommit


def test_python_snippets_run(tmp_path, monkeypatch) -> None:
    """The API examples of docs/fixes.md and docs/verify.md run as written; illustrations of code
    (docs/readiness.md) at least parse."""
    import ast

    monkeypatch.chdir(tmp_path)
    for file, _, body in snippets("python"):
        if file.endswith("readiness.md"):
            ast.parse(body)
            continue
        text = "import torch\nx = torch.cat([a, b], dim=0)\n"
        (tmp_path / "model.py").write_text(text, encoding="utf-8")
        exec(compile(body, file, "exec"), {"text": text})  # noqa: S102 - our own documentation
        if file.endswith("fixes.md"):
            assert (tmp_path / "model.py").read_text(encoding="utf-8") == \
                "import mindspore\nx = mindspore.mint.cat([a, b], dim=0)\n"


def test_architecture_describes_every_module_and_only_real_ones() -> None:
    """docs/architecture.md has a line for every module of the package, and every module it names exists."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`torch2ms/([\w/]+\.py)`", text))
    package = ROOT / "src" / "torch2ms"
    modules = {p.relative_to(package).as_posix() for p in package.rglob("*.py") if "data" not in p.parts}
    assert named, "the architecture document names the modules"
    assert modules - named == set(), "modules without a paragraph in docs/architecture.md"
    assert named - modules == set(), "docs/architecture.md names modules that do not exist"
