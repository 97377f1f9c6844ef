"""The command line end to end: exit codes, formats, noqa, select/ignore, config precedence."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import run_cli

TORCH_CODE = "import torch\nx = torch.cat([a, b], dim=0)\ny = torch.histogram(x)\n"


def finding_lines(stdout: str) -> list[str]:
    """The concise lines of findings (`path:line:col: ...`), without the closing summary."""
    return [line for line in stdout.splitlines() if re.match(r"^\S.*:\d+:\d+: TMS\d{3} ", line)]


def codes_of(stdout: str) -> list[str]:
    return [line.split(": ", 1)[1].split()[0] for line in finding_lines(stdout)]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_text_output_has_path_line_col_code(tmp_path: Path) -> None:
    write(tmp_path, "m.py", TORCH_CODE)
    proc = run_cli("scan", "m.py", "--isolated", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines == [
        "m.py:2:5: TMS101 [*] info: torch.cat -> mindspore.mint.cat",
        "m.py:3:5: TMS103 error: torch.histogram has no MindSpore 2.10 equivalent: "
        + lines[1].split("equivalent: ", 1)[1],
        "1 message shortened to 160 characters; --output-format full shows them whole.",
        "Found 2 findings (1 error, 1 info; 1 fixable with --fix).",
    ]


def test_exit_zero_when_clean_and_with_exit_zero(tmp_path: Path) -> None:
    write(tmp_path, "clean.py", "import os\nprint(os.getcwd())\n")
    assert run_cli("scan", "clean.py", "--isolated", cwd=tmp_path).returncode == 0
    write(tmp_path, "dirty.py", TORCH_CODE)
    proc = run_cli("scan", "dirty.py", "--isolated", "--exit-zero", cwd=tmp_path)
    assert proc.returncode == 0 and "TMS101" in proc.stdout


def test_usage_error_exits_2(tmp_path: Path) -> None:
    bad = run_cli("scan", ".", "--format", "xml", cwd=tmp_path)
    assert bad.returncode == 2
    # one line, as ruff's: the error and where the usage is, not the usage block
    assert bad.stderr.count("\n") == 1 and bad.stderr.startswith("torch2ms scan: error: argument --output-format")
    assert bad.stderr.rstrip().endswith("(see torch2ms scan --help)")
    assert run_cli("scan", ".", "--target-version", "two", cwd=tmp_path).returncode == 2
    assert run_cli(cwd=tmp_path).returncode == 2


def test_missing_path_is_reported_and_the_scan_goes_on(tmp_path: Path) -> None:
    write(tmp_path, "m.py", TORCH_CODE)
    proc = run_cli("scan", "no/such/dir", "m.py", "--isolated", cwd=tmp_path)
    assert proc.returncode == 2
    assert "no/such/dir:1:1: TMS903 error: no such file or directory" in proc.stdout
    assert "m.py:2:5: TMS101 [*] info: " in proc.stdout


def test_json_format(tmp_path: Path) -> None:
    write(tmp_path, "pkg/m.py", TORCH_CODE)
    proc = run_cli("scan", "pkg", "--isolated", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert doc["schema_version"] >= 1
    assert doc["summary"]["files"] == 1
    assert doc["summary"]["by_code"] == {"TMS101": 1, "TMS103": 1}
    (file,) = doc["files"]
    assert file["path"] == "pkg/m.py"
    first = file["diagnostics"][0]
    assert first["code"] == "TMS101" and first["torch_api"] == "torch.cat"
    assert first["mindspore_api"] == "mindspore.mint.cat"
    assert first["span"] == {"start_line": 2, "start_col": 4, "end_line": 2, "end_col": 28}
    assert first["doc_url"].startswith("https://")


def test_select_and_ignore_by_code_and_prefix(tmp_path: Path) -> None:
    write(tmp_path, "m.py", TORCH_CODE)
    only_missing = run_cli("scan", "m.py", "--isolated", "--select", "TMS103", cwd=tmp_path)
    assert codes_of(only_missing.stdout) == ["TMS103"]
    prefix = run_cli("scan", "m.py", "--isolated", "--ignore", "TMS1", cwd=tmp_path)
    assert finding_lines(prefix.stdout) == [] and prefix.returncode == 0
    assert prefix.stdout == "No findings: all checks passed!\n"
    # The longer prefix wins: select TMS1 but ignore TMS101.
    mixed = run_cli("scan", "m.py", "--isolated", "--select", "TMS1", "--ignore", "TMS101", cwd=tmp_path)
    assert codes_of(mixed.stdout) == ["TMS103"]


def test_noqa_bare_and_with_codes(tmp_path: Path) -> None:
    write(tmp_path, "m.py", (
        "import torch\n"
        "a = torch.cat([x]) # noqa\n"
        "b = torch.cat([x])  # noqa: TMS101\n"
        "c = torch.cat([x])  # noqa: TMS103\n"
        "d = torch.cat([x])  # NOQA:TMS1,TMS2\n"
    ))
    proc = run_cli("scan", "m.py", "--isolated", cwd=tmp_path)
    assert [line.split(":")[1] for line in finding_lines(proc.stdout)] == ["4"]


def test_statistics_count_uses_not_findings(tmp_path: Path) -> None:
    # torch.manual_seed is one use, whatever number of findings the readiness checks add to it.
    write(tmp_path, "m.py", TORCH_CODE + "z = torch.cat([x])\ntorch.manual_seed(0)\n")
    proc = run_cli("scan", "m.py", "--isolated", "--statistics", cwd=tmp_path)
    out = proc.stdout
    assert re.search(r"^  3  TMS101  equivalent-api \(info\)$", out, re.MULTILINE), out
    assert re.search(r"^  2  torch\.cat\b", out, re.MULTILINE), out
    assert re.search(r"^  1  torch\.manual_seed\b", out, re.MULTILINE), out
    assert "1 file (0 failed), 5 lines: 4 uses of 3 torch APIs" in out
    assert finding_lines(out) == []  # like ruff: the statistics instead of each finding
    assert out.splitlines()[-1].startswith("Found ")


def test_config_from_nearest_pyproject_and_cli_precedence(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[tool.torch2ms]\nignore = ["TMS101"]\nexclude = ["skipped"]\n')
    write(tmp_path, "src/m.py", TORCH_CODE)
    write(tmp_path, "src/skipped/n.py", TORCH_CODE)
    from_config = run_cli("scan", "src", cwd=tmp_path)
    assert codes_of(from_config.stdout) == ["TMS103"]
    # --select overrides the file's setting, --ignore adds to it (as ruff's flags do).
    overridden = run_cli("scan", "src", "--select", "TMS101", cwd=tmp_path)
    assert codes_of(overridden.stdout) == []  # TMS101 selected, and still ignored by the file
    overridden = run_cli("scan", "src", "--select", "TMS1", "--ignore", "TMS103", cwd=tmp_path)
    assert codes_of(overridden.stdout) == [] and overridden.returncode == 0
    isolated = run_cli("scan", "src", "--isolated", "--ignore", "TMS103", cwd=tmp_path)
    assert codes_of(isolated.stdout) == ["TMS101", "TMS101"]  # src/m.py and src/skipped/n.py
    assert "skipped" not in overridden.stdout


def test_target_version_from_config_and_flag(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[tool.torch2ms]\ntarget-version = "2.2"\n')
    write(tmp_path, "m.py", "import torch\nx = torch.cat([a, b], dim=0)\n")
    old = run_cli("scan", "m.py", cwd=tmp_path)
    assert "TMS102 [*] warning: torch.cat -> mindspore.ops.cat" in old.stdout and "'dim' is 'axis'" in old.stdout
    new = run_cli("scan", "m.py", "--target-version", "2.10", cwd=tmp_path)
    assert "TMS101 [*] info: torch.cat -> mindspore.mint.cat" in new.stdout


def test_bad_config_is_a_clear_error(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[tool.torch2ms]\nselct = ["TMS1"]\n')
    write(tmp_path, "m.py", TORCH_CODE)
    proc = run_cli("scan", "m.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert "pyproject.toml" in proc.stderr and "selct" in proc.stderr


def test_default_excludes_skip_virtualenvs_and_git(tmp_path: Path) -> None:
    write(tmp_path, "m.py", TORCH_CODE)
    for folder in (".venv/lib", ".git", "build", "node_modules/x"):
        write(tmp_path, f"{folder}/hidden.py", TORCH_CODE)
    proc = run_cli("scan", ".", "--isolated", cwd=tmp_path)
    assert "hidden.py" not in proc.stdout and "m.py" in proc.stdout


def test_jobs_give_the_same_output(tmp_path: Path, example_project: Path) -> None:
    single = run_cli("scan", str(example_project), "--isolated", "--jobs", "1", cwd=tmp_path)
    parallel = run_cli("scan", str(example_project), "--isolated", "--jobs", "2", cwd=tmp_path)
    assert single.stdout == parallel.stdout and single.stdout


def test_example_project_reports_each_kind_of_finding(example_project: Path) -> None:
    proc = run_cli("scan", str(example_project), "--isolated", "--format", "json")
    doc = json.loads(proc.stdout)
    codes = set(doc["summary"]["by_code"])
    assert {"TMS101", "TMS102", "TMS103"} <= codes
    # dynamic shapes: TMS20x in forward and what it calls, TMS25x elsewhere (docs/dynamic-shapes.md)
    assert codes & {"TMS201", "TMS251"} and codes & {"TMS202", "TMS252"}
    apis = set(doc["summary"]["by_api"])
    assert {"torch.nn.functional.interpolate", "torch.histc", "torch.masked_select",
            "torch.optim.SGD", "torch.optim.lr_scheduler.StepLR", "torch.Tensor.backward"} <= apis


CONV = "import torch\n\nlayer = torch.nn.Conv2d(3, 8, 3)\n"


def test_device_chooses_the_form_that_runs_there_in_scan_and_fix(tmp_path: Path) -> None:
    """`mindspore.mint.nn.Conv2d` has no CPU kernel in MindSpore 2.10: on the CPU (the default) the scan
    names `mindspore.nn.Conv2d` and the fix writes it with the parameter it needs; on Ascend, mint."""
    path = write(tmp_path, "m.py", CONV)
    cpu = run_cli("scan", "m.py", "--output-format", "full", cwd=tmp_path)  # the whole message, with the note
    assert "torch.nn.Conv2d -> mindspore.nn.Conv2d" in cpu.stdout and "mindspore.mint.nn.Conv2d" in cpu.stdout
    assert run_cli("scan", "m.py", "--output-format", "full", "--device", "cpu", cwd=tmp_path).stdout == cpu.stdout
    ascend = run_cli("scan", "m.py", "--device", "ascend", cwd=tmp_path)
    assert "torch.nn.Conv2d -> mindspore.mint.nn.Conv2d" in ascend.stdout
    run_cli("scan", "m.py", "--fix", "--device", "ascend", cwd=tmp_path)
    assert "mindspore.mint.nn.Conv2d(3, 8, 3)" in path.read_text(encoding="utf-8")
    path.write_text(CONV, encoding="utf-8")
    run_cli("scan", "m.py", "--fix", "--unsafe-fixes", cwd=tmp_path)
    fixed = path.read_text(encoding="utf-8")
    assert "mindspore.nn.Conv2d(3, 8, 3" in fixed and "has_bias=True" in fixed
    # the config key, overridden by the flag; a bad value is a clear error
    path.write_text(CONV, encoding="utf-8")
    write(tmp_path, "pyproject.toml", '[tool.torch2ms]\ndevice = "ascend"\n')
    assert "-> mindspore.mint.nn.Conv2d" in run_cli("scan", "m.py", cwd=tmp_path).stdout
    assert "-> mindspore.nn.Conv2d" in run_cli("scan", "m.py", "--device", "cpu", cwd=tmp_path).stdout
    doc = json.loads(run_cli("scan", "m.py", "--format", "json", cwd=tmp_path).stdout)
    assert doc["tool"]["target_device"] == "ascend"
    assert doc["apis"][0]["mindspore_api"] == "mindspore.mint.nn.Conv2d"
    assert doc["apis"][0]["verification"].startswith("not verified on Ascend")
    write(tmp_path, "pyproject.toml", '[tool.torch2ms]\ndevice = "tpu"\n')
    bad = run_cli("scan", "m.py", cwd=tmp_path)
    assert bad.returncode == 2 and "pyproject.toml" in bad.stderr and "device" in bad.stderr


def test_a_scan_starts_without_what_only_other_commands_need(tmp_path: Path) -> None:
    """Start-up: a scan (text report, no results cache, one process) imports no YAML or schema library (the
    table is read from its compiled copy), no libcst, no jinja2, no multiprocessing, nothing of verify, nor
    the standard modules only a configuration file, a written file or a zipped install needs. In a
    fresh interpreter, as a user starts it, once the compiled copies of the table and the training rules exist
    (the rules are read where a layer is called with keywords)."""
    (tmp_path / "m.py").write_text("import torch\nimport mindspore\nx = torch.nonzero(y)\n"
                                   "loss = torch.nn.CrossEntropyLoss()\nz = loss(input=x, target=y)\n", encoding="utf-8")
    env = dict(os.environ, TORCH2MS_CACHE_DIR=str(tmp_path / "cache"))
    first = subprocess.run([sys.executable, "-c", "from torch2ms.mappings import load_table; load_table()\n"
                            "from torch2ms.training_rules import load_rules; load_rules()"],
                           env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    heavy = ["yaml", "jsonschema", "libcst", "jinja2", "multiprocessing", "torch2ms.baseline", "torch2ms.trace",
             "torch2ms.migrate.command", "torch2ms.verify", "torch2ms.weights",
             # what only reading a pyproject.toml, writing, an error's traceback or a zipped install needs
             "tomllib", "difflib", "ctypes", "secrets", "traceback", "importlib.resources", "zipfile"]
    program = ("import sys\nfrom torch2ms.cli import main\n"
               "code = main(['scan', 'm.py', '--isolated', '--no-cache', '--jobs', '1'])\n"
               f"print(code, [m for m in {heavy!r} if m in sys.modules], file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.stderr.splitlines()[-1] == "1 []", done.stderr
