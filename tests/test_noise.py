"""Findings a team can trust on real code (issue: no noise): a torch type named where nothing runs is
a type reference (TMS106), not an API use; one finding per class line; `nn.Sequential(a, b)` is
equivalent; `--add-noqa` converges in one pass; a file-level `# torch2ms: noqa`."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from torch2ms.engine import scan_source
from torch2ms.fix import fix_text
from torch2ms.model import Category, Severity
from torch2ms.noqa import add_noqa, unplaceable

from conftest import run_cli
from test_cli import codes_of, finding_lines, write

MODULE = '''\
from typing import Optional, Type
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim: int, act_layer: Type[nn.Module] = nn.ReLU):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(dim, dim), act_layer())

    def forward(self, x: torch.Tensor, m: Optional[torch.Tensor] = None) -> torch.Tensor:
        if isinstance(x, (torch.Tensor, nn.Linear)):
            x = self.fc(x)
        y: torch.Tensor = x
        try:
            y = y + 1
        except torch.OutOfMemoryError:
            pass
        return y
'''


def by_line(text: str) -> dict[int, list[tuple[str, str | None]]]:
    out: dict[int, list[tuple[str, str | None]]] = {}
    for diag in scan_source(text, "m.py").diagnostics:
        out.setdefault(diag.span.start_line, []).append((diag.code, diag.torch_api))
    return out


def test_annotations_isinstance_targets_and_except_clauses_are_type_references() -> None:
    diags = scan_source(MODULE, "m.py").diagnostics
    refs = [d for d in diags if d.code == "TMS106"]
    assert {(d.span.start_line, d.torch_api) for d in refs} == {
        (7, "torch.nn.Module"), (11, "torch.Tensor"), (12, "torch.Tensor"), (12, "torch.nn.Linear"),
        (14, "torch.Tensor"), (17, "torch.OutOfMemoryError")}
    assert len([d for d in refs if d.span.start_line == 11]) == 3  # x, m and the return annotation
    for diag in refs:
        assert diag.severity is Severity.INFO and diag.category is Category.TYPE_REFERENCE
        assert "nothing runs" in diag.message
        assert "float32" not in diag.message and "construct" not in diag.message  # no constructor facts
    # nothing on those lines is a warning: the facts about calling torch.Tensor(...) are not told
    assert not [d for d in diags if d.severity is not Severity.INFO and d.span.start_line in (7, 11, 12, 14, 17)]
    # what runs is still a use: the layers called on lines 9 and the nn.ReLU default value
    assert ("torch.nn.Linear" in {d.torch_api for d in diags if d.span.start_line == 9 and d.code != "TMS106"})


def test_a_class_line_has_one_finding_that_carries_the_base_rewrite() -> None:
    diags = [d for d in scan_source(MODULE, "m.py").diagnostics if d.span.start_line == 6]
    assert [d.code for d in diags] == ["TMS331"] and diags[0].fix is not None
    fixed = fix_text(MODULE, "m.py", unsafe=True).text
    assert "class Block(mindspore.nn.Cell):" in fixed and "def construct(self, x" in fixed


def test_type_references_are_renamed_by_the_fix() -> None:
    fixed = fix_text(MODULE, "m.py", unsafe=True).text
    assert "def construct(self, x: mindspore.Tensor, m: Optional[mindspore.Tensor] = None) -> mindspore.Tensor:" \
        in fixed
    assert "isinstance(x, (mindspore.Tensor, mindspore.mint.nn.Linear))" in fixed
    assert "y: mindspore.Tensor = x" in fixed


def test_type_references_are_not_api_uses_in_any_total(tmp_path: Path) -> None:
    write(tmp_path, "m.py", "import torch\n\ndef f(x: torch.Tensor) -> torch.Tensor:\n    return torch.relu(x)\n")
    stats = run_cli("scan", "m.py", "--isolated", "--statistics", cwd=tmp_path)
    assert "1 use of 1 torch API" in stats.stdout, stats.stdout  # torch.relu; the annotations are no uses


def test_sequential_with_cells_as_arguments_is_equivalent() -> None:
    text = "import torch.nn as nn\nblock = nn.Sequential(nn.Identity(), nn.Identity())\n"
    (diag,) = [d for d in scan_source(text, "m.py").diagnostics if d.torch_api == "torch.nn.Sequential"]
    assert diag.code == "TMS101" and "list" not in diag.message


def test_add_noqa_converges_where_findings_of_one_use_were_joined(tmp_path: Path) -> None:
    # .to(device) on an unproven receiver: TMS105 and TMS341 are one finding; a noqa naming the one shown
    # must not bring the other back on the next scan
    source = ("import torch\n"
              "def go(model, device):\n"
              "    return model.to(device)\n"
              "class Net(torch.nn.Module):\n"
              "    pass\n"
              "y = torch.cat([a]) + \\\n"
              "    torch.cat([b]) + \\\n"
              "    1\n")
    first = scan_source(source, "m.py").diagnostics
    assert len([d for d in first if d.span.start_line == 3]) == 1
    text, changed = add_noqa(source, first)
    assert changed == 3
    assert "    1  # noqa: TMS101\n" in text  # both continued lines' findings, at the statement's end
    assert scan_source(text, "m.py").diagnostics == ()
    target = write(tmp_path, "m.py", source)
    proc = run_cli("scan", "m.py", "--isolated", "--add-noqa", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert target.read_text(encoding="utf-8") == text
    rescan = run_cli("scan", "m.py", "--isolated", cwd=tmp_path)
    assert rescan.returncode == 0 and codes_of(rescan.stdout) == []


def test_a_finding_no_comment_can_reach_is_named(tmp_path: Path) -> None:
    source = "import torch\nx = torch.cat([a]), '''\n'''\n"
    diags = scan_source(source, "m.py").diagnostics
    assert unplaceable(source, diags) == [2]
    write(tmp_path, "m.py", source)
    proc = run_cli("scan", "m.py", "--isolated", "--add-noqa", cwd=tmp_path)
    assert proc.returncode == 1
    assert "m.py:2: cannot take a noqa comment (the line ends inside a multi-line string)" in proc.stderr


def test_file_level_noqa_turns_off_every_code_or_the_listed_ones() -> None:
    source = "import torch\nx = torch.cat([a])\ny = torch.histogram(a)\n"
    assert {d.code for d in scan_source(source, "m.py").diagnostics} == {"TMS101", "TMS103"}
    assert scan_source("# torch2ms: noqa\n" + source, "m.py").diagnostics == ()
    only = scan_source(source + "# torch2ms: noqa: TMS101\n", "m.py").diagnostics
    assert [d.code for d in only] == ["TMS103"]
    # a noqa comment that is not on a line of its own is a line's noqa, not the file's
    assert {d.code for d in scan_source(source + "z = 1  # torch2ms: noqa\n", "m.py").diagnostics} == \
        {"TMS101", "TMS103"}


PROJECT = '''\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.cat([self.fc(x), x], dim=1)
        z = torch.histogram(y)
        return self.act(y).view(-1), z, x.mean(1).sum()
'''


def test_compare_after_a_fix_shows_readiness_up_and_nothing_new(tmp_path: Path) -> None:
    import json
    import re

    (tmp_path / "proj").mkdir()
    write(tmp_path / "proj", "net.py", PROJECT)
    base = ["scan", "proj", "--isolated", "--no-cache", "--exit-zero"]
    run_cli(*base, "--output-format", "json", "-o", "old.json", cwd=tmp_path)
    old = json.loads((tmp_path / "old.json").read_text(encoding="utf-8"))["summary"]
    fixed = run_cli(*base, "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert "fixed" in fixed.stderr and (tmp_path / "proj" / "net.py").read_text() != PROJECT
    run_cli(*base, "--html", "r.html", "--compare", "old.json", cwd=tmp_path)
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    line = re.sub(r"<[^>]+>|\s+", " ", re.search(r'id="progress-line">(.*?)</p>', page, re.S).group(1))
    found = re.search(r"([\d,]+) fixed, ([\d,]+) new\. Readiness ([\d.]+)% &rarr; ([\d.]+)%", line)
    assert found is not None, line
    assert int(found.group(1)) > 0 and found.group(2) == "0"
    assert float(found.group(3)) == old["readiness"]["percent"] < float(found.group(4))
    detail = re.search(r'id="progress-detail">([\d,]+) uses ported', page)
    assert detail is not None and int(detail.group(1)) > 0
    assert re.search(r"[\d,]+ findings are checks of MindSpore code a fix wrote", page)


KEPT_CLASS = '''\
import torch


def convert(module):
    out = torch.nn.SyncBatchNorm(4, momentum=0.2)
    out.add_module("inner", module)
    return out
'''


def test_a_method_the_fix_renamed_on_an_object_of_a_class_left_to_port_is_changed_not_new(tmp_path: Path) -> None:
    import json
    import re

    (tmp_path / "proj").mkdir()
    write(tmp_path / "proj", "conv.py", KEPT_CLASS)
    base = ["scan", "proj", "--isolated", "--no-cache", "--exit-zero"]
    run_cli(*base, "--output-format", "json", "-o", "old.json", cwd=tmp_path)
    run_cli(*base, "--fix", cwd=tmp_path)
    fixed = (tmp_path / "proj" / "conv.py").read_text(encoding="utf-8")
    assert "out.insert_child_to_cell(" in fixed and "torch.nn.SyncBatchNorm(4, momentum=0.2)" in fixed
    run_cli(*base, "--output-format", "json", "-o", "new.json", cwd=tmp_path)
    now = json.loads((tmp_path / "new.json").read_text(encoding="utf-8"))
    apis = {d["torch_api"] for f in now["files"] for d in f["diagnostics"]}
    assert any(api.endswith(".insert_child_to_cell") for api in apis)  # the receiver's class is still torch's
    run_cli(*base, "--html", "r.html", "--compare", "old.json", cwd=tmp_path)
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    line = re.sub(r"<[^>]+>|\s+", " ", re.search(r'id="progress-line">(.*?)</p>', page, re.S).group(1))
    found = re.search(r"([\d,]+) fixed, ([\d,]+) new\.", line)
    assert found is not None and found.group(2) == "0", line


def test_compare_pairs_moved_changed_and_created_findings_apart_from_new_ones(tmp_path: Path) -> None:
    from torch2ms.model import Diagnostic, FileResult, Span
    from torch2ms.report.progress import match

    def diag(code: str, api: str | None, category: Category, line: int) -> Diagnostic:
        return Diagnostic(code=code, severity=Severity.INFO, category=category, span=Span(line, 0, line, 5),
                          message="m", torch_api=api)

    def old_entry(code: str, api: str, category: str, line_text: str) -> dict[str, object]:
        return {"code": code, "torch_api": api, "category": category, "context": "f", "fingerprint": line_text}

    source = "def f(x):\n    a = 1\n    b = 2\n    c = 3\n    d = 4\n"
    path = write(tmp_path, "m.py", source)
    results = [FileResult(str(path), (
        diag("TMS101", "torch.cat", Category.EQUIVALENT, 2),       # same code and API, its line edited: moved
        diag("TMS105", "torch.Tensor.view", Category.UNCERTAIN, 3),  # same API, other code: changed
        diag("TMS402", None, Category("port_check"), 4),            # a check of MindSpore code a fix wrote
        diag("TMS103", "torch.histogram", Category.MISSING, 5),     # a new API in the file: new
    ), 5)]
    old = {"files": [{"path": str(path), "diagnostics": [
        old_entry("TMS101", "torch.cat", "equivalent", "x"), old_entry("TMS101", "torch.Tensor.view", "equivalent", "y"),
        old_entry("TMS102", "torch.topk", "diff_params", "z")]}]}
    paired = match(old, results, lambda p: source)
    assert paired == {"old": 3, "same": 0, "moved": 1, "changed": 1, "created": 1, "new": 1, "fixed": 1, "ported": 1}


# ---------------------------------------------------------------- ruff's command-line conventions
def test_scan_without_a_path_scans_the_current_folder(tmp_path: Path) -> None:
    empty = run_cli("scan", cwd=tmp_path)  # nothing to scan is an error: a CI job on the wrong folder fails
    assert empty.returncode == 2 and "error: no Python files found under ." in empty.stderr
    assert empty.stdout == ""  # and never "all checks passed"
    (tmp_path / "notes.txt").write_text("torch.cat\n", encoding="utf-8")
    assert "no Python files found" in run_cli("scan", cwd=tmp_path).stderr  # a non-Python file is not read
    named = run_cli("scan", "notes.txt", "--isolated", cwd=tmp_path)  # nor one named on the command line
    assert named.returncode == 2 and "no Python files found under notes.txt" in named.stderr and not named.stdout
    for flag in ("--show-files", "--fix", "--diff", "--add-noqa"):  # every way of scanning says it alike
        nothing = run_cli("scan", flag, cwd=tmp_path)
        assert nothing.returncode == 2 and "no Python files found under ." in nothing.stderr, flag
    missing = run_cli("scan", "nothere", "--add-noqa", cwd=tmp_path)
    assert missing.returncode == 2 and "nothere: no such file or directory" in missing.stderr
    write(tmp_path, "m.py", "import torch\nx = torch.histogram(a)\n")
    found = run_cli("scan", "--isolated", cwd=tmp_path)
    assert found.returncode == 1 and codes_of(found.stdout) == ["TMS103"] and "no Python files" not in found.stderr


def test_a_script_named_by_its_python_shebang_is_scanned(tmp_path: Path) -> None:
    (tmp_path / "train").write_text("#!/usr/bin/env python3\nimport torch\nx = torch.histogram(a)\n",
                                    encoding="utf-8")
    (tmp_path / "run.sh").write_text("#!/bin/sh\ntorch.histogram\n", encoding="utf-8")
    proc = run_cli("scan", "train", "run.sh", "--isolated", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 1 and [line.split(":")[0] for line in finding_lines(proc.stdout)] == ["train"]


def test_a_file_that_is_not_python_is_never_clean_even_without_torch(tmp_path: Path) -> None:
    write(tmp_path, "util.py", "def helper(:\n    return 1\n")
    proc = run_cli("scan", ".", "--isolated", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 1
    [line] = finding_lines(proc.stdout)
    assert line.startswith("util.py:1:") and ": TMS901 error: syntax error" in line
    assert scan_source("x = (1,\n", "m.py").diagnostics[0].code == "TMS901"  # the core says the same
    assert scan_source("x = 1\n", "m.py").diagnostics == ()  # a clean file without torch stays clean


def test_an_unknown_option_is_one_line_with_the_nearest_option(tmp_path: Path) -> None:
    write(tmp_path, "m.py", "x = 1\n")
    near = run_cli("scan", "m.py", "--quite", cwd=tmp_path)
    assert near.returncode == 2 and near.stdout == ""
    assert near.stderr.splitlines() == [
        "torch2ms: error: unrecognized arguments: --quite; did you mean --quiet? (see torch2ms --help)"]
    far = run_cli("scan", "m.py", "--zzzz", cwd=tmp_path)
    assert far.stderr.splitlines() == ["torch2ms: error: unrecognized arguments: --zzzz (see torch2ms --help)"]
    command = run_cli("scna", cwd=tmp_path)
    assert command.returncode == 2 and len(command.stderr.splitlines()) == 1 and "invalid choice: 'scna'" in command.stderr


def test_watch_scans_again_when_a_file_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--watch: a real change of a scanned file makes a second scan; the loop is ended (as Ctrl-C does)
    after a bounded number of polls, and the exit code is the last scan's."""
    from torch2ms import watch

    model = write(tmp_path, "m.py", "import torch\nx = torch.histogram(a)\n")
    polls: list[int] = []

    def poll(_seconds: float) -> None:
        polls.append(1)
        if len(polls) == 2:  # a quiet poll first (no change: no scan), then a real edit
            model.write_text("import torch\ny = torch.cat([a])\nx = torch.histogram(a)\n", encoding="utf-8")
            os.utime(model, ns=(model.stat().st_atime_ns, model.stat().st_mtime_ns + 10**9))
        if len(polls) == 4:
            raise KeyboardInterrupt

    monkeypatch.setattr(watch, "sleep", poll)
    proc = run_cli("scan", ".", "--isolated", "--watch", "--output-format", "concise", cwd=tmp_path)
    scans = proc.stdout.count("Found ")
    assert scans == 2, proc.stdout
    first, second = proc.stdout.split("Found ", 1)[0], proc.stdout.split("Found ", 1)[1]
    assert codes_of(first) == ["TMS103"] and codes_of(second) == ["TMS101", "TMS103"]
    assert proc.stderr.count("changed: scanning again") == 1 and "[watch] m.py changed: scanning again" in proc.stderr
    assert proc.returncode == 1 and len(polls) == 4
    refused = run_cli("scan", ".", "--watch", "--fix", cwd=tmp_path)
    assert refused.returncode == 2 and "--watch goes with a scan of files" in refused.stderr


def test_quiet_prints_the_findings_only(tmp_path: Path) -> None:
    write(tmp_path, "m.py", "import torch\nx = torch.histogram(a)\n")
    loud = run_cli("scan", "m.py", "--isolated", cwd=tmp_path)
    quiet = run_cli("scan", "m.py", "--isolated", "--quiet", cwd=tmp_path)
    assert "Found 1 finding" in loud.stdout and "Found" not in quiet.stdout
    assert quiet.stdout.splitlines() == [line for line in loud.stdout.splitlines() if ": TMS103 " in line]
    assert quiet.returncode == 1


def test_show_settings_and_show_files(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.torch2ms]\nignore = ["TMS101"]\ndevice = "gpu"\n',
                                             encoding="utf-8")
    write(tmp_path, "a.py", "import torch\n")
    (tmp_path / "pkg").mkdir()
    write(tmp_path / "pkg", "b.py", "x = 1\n")
    (tmp_path / ".venv").mkdir()
    write(tmp_path / ".venv", "c.py", "import torch\n")
    settings = run_cli("scan", "--show-settings", cwd=tmp_path)
    assert settings.returncode == 0
    assert "ignore: TMS101" in settings.stdout and "device: gpu" in settings.stdout
    assert f"settings file: {tmp_path / 'pyproject.toml'}" in settings.stdout.replace(str(tmp_path.resolve()),
                                                                                         str(tmp_path))
    files = run_cli("scan", "--show-files", cwd=tmp_path)
    assert files.returncode == 0
    assert files.stdout.splitlines() == ["a.py", os.path.join("pkg", "b.py")]  # not .venv: excluded
    missing = run_cli("scan", "nothere", "--show-files", cwd=tmp_path)
    assert missing.returncode == 2 and "nothere: no such file or directory" in missing.stderr


def test_per_file_ignores_turn_codes_off_in_the_files_a_glob_matches(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.torch2ms.per-file-ignores]\n"tests/*" = ["TMS1"]\n"legacy.py" = ["TMS103"]\n', encoding="utf-8")
    code = "import torch\nx = torch.histogram(a)\ny = torch.cat([a])\n"
    write(tmp_path, "legacy.py", code)
    write(tmp_path, "main.py", code)
    (tmp_path / "tests" / "unit").mkdir(parents=True)
    write(tmp_path / "tests" / "unit", "test_a.py", code)
    proc = run_cli("scan", ".", "--no-cache", cwd=tmp_path)
    found = sorted((line.split(":")[0].replace("\\", "/").removeprefix("./"), line.split()[1])
                   for line in proc.stdout.splitlines() if ": TMS" in line)
    assert found == [("legacy.py", "TMS101"), ("main.py", "TMS101"), ("main.py", "TMS103")], proc.stdout
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "pyproject.toml").write_text('[tool.torch2ms]\nper-file-ignores = ["x"]\n', encoding="utf-8")
    write(bad, "m.py", code)
    err = run_cli("scan", ".", cwd=bad)
    assert err.returncode == 2 and "per-file-ignores: expected a table" in err.stderr


def test_the_editor_offers_verify_only_where_torch_and_mindspore_are_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    pytest.importorskip("pygls")
    from torch2ms.lsp import server

    real = importlib.util.find_spec
    server.verify_runs_here.cache_clear()
    assert server.verify_runs_here() is (real("torch") is not None and real("mindspore") is not None)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mindspore" else real(name))
    server.verify_runs_here.cache_clear()
    try:
        assert server.verify_runs_here() is False
    finally:
        monkeypatch.undo()
        server.verify_runs_here.cache_clear()


def test_verify_names_the_whole_call_and_keeps_its_flag_hint_for_the_command_line(tmp_path: Path) -> None:
    """A call whose inputs' shapes verify cannot tell: the command line's error gives the --shape hint;
    the JSON answer (what the editor reads) gives the reason alone; the call is never cut."""
    import json

    write(tmp_path, "m.py", "import torch\n\ny = torch.clamp(a * b * c * d, min=0.0)\n")
    proc = run_cli("verify", "--json", "m.py:3", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("torch2ms verify: error: m.py:3: cannot tell the shape of 'c' in "
                                   "torch.clamp(a * b * c * d, min=0.0); give it with --shape c=2,3 (and :DTYPE "
                                   "for a non-float32 input)")
    assert json.loads(proc.stdout) == {"location": "m.py:3", "hint": "give it with --shape c=2,3 (and :DTYPE for a "
                                                                     "non-float32 input)",
                                       "error": "cannot tell the shape of 'c' in torch.clamp(a * b * c * d, min=0.0)"}


def test_the_html_report_names_no_absolute_path(tmp_path: Path) -> None:
    project = tmp_path / "deep" / "proj"
    project.mkdir(parents=True)
    write(project, "m.py", "import torch\nx = torch.histogram(a)\n")
    run_cli("scan", str(project), "--isolated", "--no-cache", "--exit-zero", "--html", "r.html", cwd=tmp_path)
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert str(tmp_path) not in page and str(tmp_path.resolve()) not in page
    assert "Paths are relative to deep/proj." in page


def test_shell_completion_completes_commands_and_each_commands_options(tmp_path: Path) -> None:
    import shutil
    import subprocess

    script = run_cli("completion", "bash", cwd=tmp_path)
    assert script.returncode == 0 and "complete -o filenames -F _torch2ms torch2ms" in script.stdout
    (tmp_path / "complete.bash").write_text(script.stdout, encoding="utf-8")
    bash = shutil.which("bash")
    assert bash is not None

    def complete(*words: str) -> list[str]:
        probe = (f"source complete.bash; COMP_WORDS=(torch2ms {' '.join(words)}); COMP_CWORD={len(words)}; "
                 f"_torch2ms; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
        done = subprocess.run([bash, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=60)
        return done.stdout.split()

    assert complete("sc") == ["scan"]
    assert complete("scan", "--show-") == ["--show-files", "--show-settings"]
    assert "--out" in complete("migrate", "--o")
    assert complete("rule", "--a") == ["--all"]
    zsh = run_cli("completion", "zsh", cwd=tmp_path)
    assert zsh.stdout.startswith("autoload -U +X bashcompinit && bashcompinit\n")
    assert run_cli("completion", "tcsh", cwd=tmp_path).returncode == 2


def test_fish_completion_lists_every_command_and_option(tmp_path: Path) -> None:
    import re

    from torch2ms.cli import build_parser

    fish = run_cli("completion", "fish", cwd=tmp_path)
    assert fish.returncode == 0
    word = r"(?:'(?:[^'\\]|\\.)*'|[^\s']+)"  # fish's words: a quoted string (\' and \\ inside) or a plain one
    commands, options = set(), set()
    for line in fish.stdout.splitlines()[1:]:
        assert re.fullmatch(rf"{word}(?: {word})*", line), line  # every quote closed
        parts = re.findall(word, line)
        assert parts[:4] == ["complete", "-c", "torch2ms", "-n"], line
        if parts[4] == "__fish_use_subcommand":
            commands.add(parts[parts.index("-a") + 1])
        else:
            command = parts[4].strip("'").split()[-1]
            options.update((command, "--" + parts[k + 1]) for k, p in enumerate(parts) if p == "-l")
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert commands == set(sub.choices)
    assert ("scan", "--watch") in options and ("scan", "--show-files") in options and ("migrate", "--out") in options
    assert ("rule", "--watch") not in options
