"""ruff's conventions on the command line: strict option values with "did you mean", output formats,
colour, the closing summary, `rule`, standard input, extend-select/exclude, .gitignore, --add-noqa,
--fail-on."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from torch2ms.ignore import IgnoreRules, parse
from torch2ms.report.text import MESSAGE_WIDTH, WRAP_WIDTH

from conftest import run_cli
from test_cli import TORCH_CODE, codes_of, finding_lines, write

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def run_env(*args: str, cwd: Path, env: dict[str, str], input: str | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    full.update(env)
    return subprocess.run([sys.executable, "-m", "torch2ms", *args], cwd=cwd, env=full, input=input,
                          capture_output=True, text=True, timeout=300)


# ---------------------------------------------------------------- strict values
@pytest.mark.parametrize(("args", "message"), [
    (("--select", "FOO"), "unknown code or prefix 'FOO'"),
    (("--select", "TMS999"), "did you mean TMS905"),
    (("--ignore", "TMS1O1"), "did you mean"),
    (("--extend-select", "TMS7"), "unknown code or prefix 'TMS7'"),
    (("--target-version", "1.0"), "did you mean 2.10"),
    (("--target-version", "two"), "not a version"),
    (("--jobs", "-3"), "at least 1 worker process"),
    (("--jobs", "0"), "at least 1 worker process"),
    (("--output-format", "jsno"), "did you mean json"),
    (("--statistic",), "unrecognized arguments: --statistic"),
    (("--fix-only",), "unrecognized arguments"),
])
def test_bad_values_are_errors_with_exit_2(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    write(tmp_path, "m.py", TORCH_CODE)
    proc = run_cli("scan", "m.py", "--isolated", *args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize(("setting", "message"), [
    ('select = ["TMS999"]', "select: unknown code or prefix 'TMS999'"),
    ('select = "TMS1"', 'select: expected a list of strings, got the string "TMS1" (write select = ["TMS1"])'),
    ('ignore = ["FOO"]', "ignore: unknown code or prefix 'FOO'"),
    ('extend-select = ["TMS7"]', "extend-select: unknown code"),
    ('target-version = "1.0"', "target-version: MindSpore 1.0 is not a version"),
    ('selct = ["TMS1"]', "unknown key 'selct'; did you mean 'select'?"),
    ('respect-gitignore = "no"', "respect-gitignore: expected true or false"),
])
def test_bad_configuration_is_an_error_naming_file_and_key(tmp_path: Path, setting: str, message: str) -> None:
    write(tmp_path, "pyproject.toml", f"[tool.torch2ms]\n{setting}\n")
    write(tmp_path, "m.py", TORCH_CODE)
    proc = run_cli("scan", "m.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert "pyproject.toml" in proc.stderr and message in proc.stderr, proc.stderr


def test_all_selects_every_code(tmp_path: Path) -> None:
    write(tmp_path, "m.py", TORCH_CODE)
    proc = run_cli("scan", "m.py", "--isolated", "--select", "ALL", "--ignore", "TMS101", cwd=tmp_path)
    assert codes_of(proc.stdout) == ["TMS103"]


# ---------------------------------------------------------------- formats
def test_format_is_an_alias_of_output_format(tmp_path: Path) -> None:
    write(tmp_path, "m.py", TORCH_CODE)
    one = run_cli("scan", "m.py", "--isolated", "--format", "json", "--date", "x", cwd=tmp_path)
    two = run_cli("scan", "m.py", "--isolated", "--output-format", "json", "--date", "x", cwd=tmp_path)
    assert one.stdout == two.stdout and json.loads(one.stdout)["summary"]["findings"] == 2
    text = run_cli("scan", "m.py", "--isolated", "--format", "text", cwd=tmp_path)
    concise = run_cli("scan", "m.py", "--isolated", "--output-format", "concise", cwd=tmp_path)
    assert text.stdout == concise.stdout and finding_lines(text.stdout)


def test_full_format_shows_the_source_with_a_caret_line(tmp_path: Path) -> None:
    write(tmp_path, "m.py", TORCH_CODE)
    proc = run_cli("scan", "m.py", "--isolated", "--output-format", "full", cwd=tmp_path)
    assert proc.returncode == 1
    out = proc.stdout
    assert "m.py:2:5: TMS101 [*] info: torch.cat -> mindspore.mint.cat\n" in out
    assert "  |\n1 | import torch\n2 | x = torch.cat([a, b], dim=0)\n  |     ^^^^^^^^^^^^^^^^^^^^^^^^ TMS101\n" in out
    assert "  = fix: " in out and "  = docs: https://" in out
    # the whole message, wrapped, not cut
    histogram = out.split("TMS103 error: ", 1)[1].split("  |", 1)[0]
    assert "\u2026" not in histogram and "equivalent" in histogram


def test_grouped_format(tmp_path: Path) -> None:
    write(tmp_path, "pkg/m.py", TORCH_CODE)
    proc = run_cli("scan", "pkg", "--isolated", "--output-format", "grouped", cwd=tmp_path)
    lines = proc.stdout.splitlines()
    assert lines[0] == "pkg/m.py:"
    assert lines[1] == "  2:5 TMS101 [*] info: torch.cat -> mindspore.mint.cat"
    assert lines[2].startswith("  3:5 TMS103 error: torch.histogram")


def test_github_format_annotations(tmp_path: Path) -> None:
    write(tmp_path, "m.py", TORCH_CODE)
    proc = run_cli("scan", "m.py", "--isolated", "--output-format", "github", cwd=tmp_path)
    lines = proc.stdout.splitlines()
    assert lines[0] == ("::notice title=torch2ms TMS101,file=m.py,line=2,col=5,endLine=2,endColumn=29::"
                        "TMS101 torch.cat -> mindspore.mint.cat")
    assert lines[1].startswith("::error title=torch2ms TMS103,file=m.py,line=3,col=5,")
    assert len(lines) == 2  # no summary in a machine format


def test_terminal_lines_are_bounded(example_project: Path) -> None:
    concise = run_cli("scan", str(example_project), "--isolated", "--no-cache")
    messages = [line.split(": ", 2)[2] for line in finding_lines(concise.stdout)]
    assert messages and max(len(m) for m in messages) <= MESSAGE_WIDTH
    assert any(m.endswith("\u2026") for m in messages)  # the long dynamic-shape messages were cut
    full = run_cli("scan", str(example_project), "--isolated", "--no-cache", "--output-format", "full")
    longest_path = max(len(line.split(":", 1)[0]) for line in finding_lines(concise.stdout))
    assert max(len(line) for line in full.stdout.splitlines()) <= longest_path + 40 + WRAP_WIDTH


def test_summary_counts_findings_and_fixes(example_project: Path) -> None:
    doc = json.loads(run_cli("scan", str(example_project), "--isolated", "--format", "json").stdout)
    diags = [d for f in doc["files"] for d in f["diagnostics"]]
    safe = sum(1 for d in diags if d["fix"] and d["fix"]["safe"])
    unsafe = sum(1 for d in diags if d["fix"] and not d["fix"]["safe"])
    proc = run_cli("scan", str(example_project), "--isolated")
    last = proc.stdout.splitlines()[-1]
    sev = doc["summary"]["by_severity"]
    assert last == (f"Found {len(diags)} findings ({sev['error']} errors, {sev['warning']} warnings, {sev['info']} info; "
                    f"{safe} fixable with --fix, {unsafe} more with --unsafe-fixes).")


# ---------------------------------------------------------------- colour
def test_colour_choices_and_environment(tmp_path: Path) -> None:
    write(tmp_path, "m.py", TORCH_CODE)
    base = ("scan", "m.py", "--isolated")
    assert not ANSI.search(run_env(*base, cwd=tmp_path, env={}).stdout)  # a pipe: no colour
    always = run_env(*base, "--color", "always", cwd=tmp_path, env={"NO_COLOR": "1"}).stdout
    assert ANSI.search(always) and ANSI.sub("", always) == run_env(*base, cwd=tmp_path, env={}).stdout
    assert ANSI.search(run_env(*base, cwd=tmp_path, env={"FORCE_COLOR": "1"}).stdout)
    assert not ANSI.search(run_env(*base, "--color", "never", cwd=tmp_path, env={"FORCE_COLOR": "1"}).stdout)


def _on_tty(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    main, child = pty.openpty()
    full = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    full.update(env, TERM="xterm")
    proc = subprocess.Popen([sys.executable, "-m", "torch2ms", *args], cwd=cwd, env=full, stdout=child,
                            stderr=subprocess.DEVNULL)
    os.close(child)
    chunks = []
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(main)
    return b"".join(chunks).decode()


def test_colour_on_a_terminal_unless_no_color(tmp_path: Path) -> None:
    write(tmp_path, "m.py", TORCH_CODE)
    args = ["scan", "m.py", "--isolated", "--no-cache"]
    assert ANSI.search(_on_tty(args, tmp_path, {}))
    assert not ANSI.search(_on_tty(args, tmp_path, {"NO_COLOR": "1"}))


# ---------------------------------------------------------------- rule
def test_rule_explains_a_code() -> None:
    proc = run_cli("rule", "TMS103")
    assert proc.returncode == 0
    assert proc.stdout.startswith("TMS103 missing-api\n")
    assert "level:     error" in proc.stdout and "docs:      https://" in proc.stdout
    prefix = run_cli("rule", "TMS36")
    assert re.findall(r"^(TMS\d+) ", prefix.stdout, re.MULTILINE) == [f"TMS36{i}" for i in range(1, 6)]
    every = json.loads(run_cli("rule", "--all", "--output-format", "json").stdout)
    assert {r["code"] for r in every} >= {"TMS101", "TMS205", "TMS365", "TMS904"}
    bad = run_cli("rule", "TMS999")
    assert bad.returncode == 2 and "did you mean TMS905" in bad.stderr


# ---------------------------------------------------------------- standard input
def test_stdin_with_and_without_a_file_name(tmp_path: Path) -> None:
    plain = run_cli("scan", "-", "--isolated", cwd=tmp_path, input=TORCH_CODE)
    assert plain.returncode == 1
    assert finding_lines(plain.stdout)[0] == "-:2:5: TMS101 [*] info: torch.cat -> mindspore.mint.cat"
    write(tmp_path, "pkg/pyproject.toml", '[tool.torch2ms]\nignore = ["TMS103"]\n')
    named = run_cli("scan", "--stdin-filename", "pkg/model.py", cwd=tmp_path, input=TORCH_CODE)
    assert finding_lines(named.stdout) == ["pkg/model.py:2:5: TMS101 [*] info: torch.cat -> mindspore.mint.cat"]
    fixed = run_cli("scan", "-", "--isolated", "--fix", "--select", "TMS101", cwd=tmp_path, input=TORCH_CODE)
    assert fixed.stdout == "import torch\nimport mindspore\nx = mindspore.mint.cat([a, b], dim=0)\ny = torch.histogram(x)\n"
    assert not (tmp_path / "-").exists()
    diff = run_cli("scan", "-", "--isolated", "--diff", cwd=tmp_path, input=TORCH_CODE)
    assert "+x = mindspore.mint.cat([a, b], dim=0)" in diff.stdout
    mixed = run_cli("scan", "-", "other.py", "--isolated", cwd=tmp_path, input=TORCH_CODE)
    assert mixed.returncode == 2


# ---------------------------------------------------------------- selection and files
def test_extend_select_adds_to_the_configured_selection(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[tool.torch2ms]\nselect = ["TMS103"]\n')
    write(tmp_path, "m.py", TORCH_CODE)
    assert codes_of(run_cli("scan", "m.py", cwd=tmp_path).stdout) == ["TMS103"]
    assert codes_of(run_cli("scan", "m.py", "--extend-select", "TMS101", cwd=tmp_path).stdout) == ["TMS101", "TMS103"]
    # select on the command line replaces the configured list
    assert codes_of(run_cli("scan", "m.py", "--select", "TMS101", cwd=tmp_path).stdout) == ["TMS101"]


def test_extend_exclude_adds_and_exclude_replaces_with_a_warning(tmp_path: Path) -> None:
    write(tmp_path, "src/m.py", TORCH_CODE)
    write(tmp_path, "src/generated_x.py", TORCH_CODE)
    write(tmp_path, "src/.venv/lib.py", TORCH_CODE)
    files = lambda out: sorted({line.split(":")[0] for line in finding_lines(out)})  # noqa: E731
    extended = run_cli("scan", "src", "--isolated", "--extend-exclude", "generated_*", cwd=tmp_path)
    assert files(extended.stdout) == ["src/m.py"] and "warning" not in extended.stderr
    replaced = run_cli("scan", "src", "--isolated", "--exclude", "generated_*", cwd=tmp_path)
    assert files(replaced.stdout) == ["src/.venv/lib.py", "src/m.py"]
    assert "`exclude` replaces the default excludes" in replaced.stderr and ".venv" in replaced.stderr


def test_gitignore_is_respected_by_default(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()  # a repository root; no git command is run
    write(tmp_path, ".gitignore", "# generated code\n/out/\n*_pb2.py\n!keep_pb2.py\ndocs/**/ex*.py\nlogs\n")
    write(tmp_path, "src/.gitignore", "local.py\n")
    for name in ("src/m.py", "out/a.py", "src/out/b.py", "src/x_pb2.py", "src/keep_pb2.py", "docs/a/b/ex1.py",
                 "docs/ex2.py", "src/local.py", "src/deep/local.py", "logs/c.py"):
        write(tmp_path, name, TORCH_CODE)

    def files(*extra: str, cwd: Path = tmp_path, target: str = ".") -> list[str]:
        out = run_cli("scan", target, "--isolated", "--no-cache", *extra, cwd=cwd).stdout
        return sorted({line.split(":")[0] for line in finding_lines(out)})

    assert files() == ["src/keep_pb2.py", "src/m.py", "src/out/b.py"]
    # scanning a sub-folder still applies the repository's rules above it
    assert files(cwd=tmp_path / "src") == ["keep_pb2.py", "m.py", "out/b.py"]
    assert len(files("--no-respect-gitignore")) == 10
    write(tmp_path, "pyproject.toml", "[tool.torch2ms]\nrespect-gitignore = false\n")
    configured = run_cli("scan", ".", "--no-cache", cwd=tmp_path).stdout
    assert len({line.split(":")[0] for line in finding_lines(configured)}) == 10


def test_gitignore_rules() -> None:
    rules = IgnoreRules().extended("a/**/b\n**/c\nd/**\n\\#e\n\\!f\ng \n[hj]?.py\n!hx.py\n/k\nl/\n", "/r")
    hit = lambda p, d=False: rules.ignored("/r/" + p, d)  # noqa: E731
    assert hit("a/b") and hit("a/x/y/b") and not hit("x/a/b")
    assert hit("c") and hit("x/y/c")
    assert hit("d/x") and hit("d/x/y") and not hit("d", True)
    assert hit("#e") and hit("!f") and hit("g") and hit("x/g")
    assert hit("h1.py") and hit("j2.py") and not hit("hx.py") and not hit("i1.py")
    assert hit("k") and not hit("x/k")
    assert hit("l", True) and not hit("l", False) and hit("x/l", True)
    assert not rules.ignored("/other/c", False)  # outside the .gitignore's folder
    assert parse("# only a comment\n\n   \n", "/r") == []


# ---------------------------------------------------------------- add-noqa
def test_add_noqa_silences_every_finding_once(tmp_path: Path) -> None:
    source = (
        "import torch\n"
        "a = torch.cat([x])  # noqa: TMS999\n"
        "b = torch.histogram(x)\n"
        "doc = '''torch.cat(x)\n"
        "'''\n"
        "c = torch.cat(\n"
        "    [torch.histogram(x)])\n"
        "d = torch.cat([x]) + \\\n"
        "    1\n"
    )
    target = write(tmp_path, "m.py", source)
    proc = run_cli("scan", "m.py", "--isolated", "--add-noqa", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = target.read_text(encoding="utf-8")
    assert "a = torch.cat([x])  # noqa: TMS999, TMS101\n" in text
    assert "b = torch.histogram(x)  # noqa: TMS103\n" in text
    assert "c = torch.cat(  # noqa: TMS101\n    [torch.histogram(x)])  # noqa: TMS103\n" in text
    # a comment after a continuation is a syntax error: it goes at the end of the continued statement
    assert "d = torch.cat([x]) + \\\n    1  # noqa: TMS101\n" in text
    assert "Added 5 noqa comments in 1 file." in proc.stderr
    after = run_cli("scan", "m.py", "--isolated", cwd=tmp_path)
    assert codes_of(after.stdout) == [] and after.returncode == 0  # one pass silences everything
    again = run_cli("scan", "m.py", "--isolated", "--add-noqa", cwd=tmp_path)
    assert target.read_text(encoding="utf-8") == text and "Added 0 noqa comments" in again.stderr


# ---------------------------------------------------------------- fail-on
def test_fail_on_a_level(tmp_path: Path) -> None:
    write(tmp_path, "info.py", "import torch\nx = torch.cat([a])\n")
    write(tmp_path, "warn.py", "import torch\nx = torch.topk(a, 2)\n")
    assert run_cli("scan", "info.py", "--isolated", cwd=tmp_path).returncode == 1  # default: any finding
    assert run_cli("scan", "info.py", "--isolated", "--fail-on", "warning", cwd=tmp_path).returncode == 0
    assert run_cli("scan", "warn.py", "--isolated", "--fail-on", "warning", cwd=tmp_path).returncode == 1
    assert run_cli("scan", "warn.py", "--isolated", "--fail-on", "error", cwd=tmp_path).returncode == 0
    write(tmp_path, "broken.py", "import torch\ndef f(:\n")
    assert run_cli("scan", "broken.py", "--isolated", "--fail-on", "error", cwd=tmp_path).returncode == 1
