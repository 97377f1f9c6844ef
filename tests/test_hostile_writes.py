"""Hostile targets for every writer (`scan -o`, `--html`, SARIF, `trace -o`, migrate's files and maps,
`convert-weights --out`): a device or a link to one is never replaced, a symbolic link is replaced only
through `--write-through-links`, an input of the same run is never overwritten, a full disk or another
OS error is one line with exit code 2, and no temporary file stays behind, also after a kill -9."""

from __future__ import annotations

import errno
import json
import os
import resource
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from torch2ms import writing
from torch2ms.cli import main

from conftest import run_cli, run_cli_process

SOURCE = "import torch\n\n\ndef f(x):\n    return torch.nn.functional.softmax(x, dim=0) + torch.abs(x)\n"


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if writing.TEMP_TAG in p.name or ".tmp" in p.name)


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.fixture(autouse=True)
def _fresh_run() -> None:
    writing.begin_run([])


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "model.py"
    path.write_text(SOURCE)
    return path


# ---------------------------------------------------------------- special targets
@pytest.mark.parametrize("option", [["-o"], ["--html"], ["--output-format", "sarif", "-o"],
                                    ["--output-format", "json", "-o"]])
def test_a_fifo_target_is_refused_and_kept(tmp_path: Path, source: Path, option: list[str]) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    proc = run_cli("scan", str(source), "--isolated", "--no-cache", *option, str(fifo))
    assert proc.returncode == 2, proc.stderr
    assert "is a FIFO (named pipe), not a regular file; not replaced" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("option", [["-o"], ["--html"], ["--output-format", "sarif", "-o"]])
def test_a_link_to_a_device_is_refused_and_kept(tmp_path: Path, source: Path, option: list[str]) -> None:
    link = tmp_path / "report.out"
    link.symlink_to("/dev/zero")
    proc = run_cli("scan", str(source), "--isolated", "--no-cache", "--write-through-links", *option, str(link))
    assert proc.returncode == 2, proc.stderr
    assert "is a symbolic link to /dev/zero, a character device; not replaced" in proc.stderr
    assert os.path.islink(link) and os.readlink(link) == "/dev/zero"


def test_a_device_itself_is_refused_before_anything_is_made() -> None:
    with pytest.raises(writing.WriteError, match="is a character device, not a regular file; not replaced"):
        writing.check_target("/dev/zero")


def test_a_link_is_refused_unless_written_through(tmp_path: Path, source: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old\n")
    link = tmp_path / "link.json"
    link.symlink_to(real.name)
    proc = run_cli("scan", str(source), "--isolated", "--no-cache", "--output-format", "json", "-o", str(link))
    assert proc.returncode == 2
    assert "is a symbolic link" in proc.stderr and "--write-through-links" in proc.stderr
    assert real.read_text() == "old\n" and link.is_symlink()

    proc = run_cli("scan", str(source), "--isolated", "--no-cache", "--output-format", "json", "-o", str(link),
                   "--write-through-links")
    assert proc.returncode == 1, proc.stderr
    assert link.is_symlink() and os.readlink(link) == real.name  # the link stays a link
    assert '"torch.abs"' in real.read_text()  # and the file it points to holds the report
    assert leftovers(tmp_path) == []


def test_an_input_of_the_run_is_never_overwritten(tmp_path: Path, source: Path) -> None:
    proc = run_cli("scan", str(source), "--isolated", "--no-cache", "-o", str(source))
    assert proc.returncode == 2
    assert f"{source}: is an input of this run; not overwritten" in proc.stderr
    assert source.read_text() == SOURCE
    other = tmp_path / "alias.py"
    os.link(source, other)  # the same file under another name
    proc = run_cli("scan", str(tmp_path), "--isolated", "--no-cache", "--html", str(other))
    assert proc.returncode == 2 and "is an input of this run" in proc.stderr
    assert source.read_text() == SOURCE


@pytest.mark.needs_torch
def test_trace_output_onto_its_script_is_refused(tmp_path: Path) -> None:
    script = tmp_path / "run.py"
    script.write_text("import torch\nprint(torch.zeros(2).sum().item())\n")
    proc = run_cli("trace", "-o", str(script), "--", str(script))
    assert proc.returncode == 2
    assert "is an input of this run; not overwritten" in proc.stderr
    assert script.read_text().startswith("import torch")


# ---------------------------------------------------------------- OS errors
def _small_files() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))


@pytest.mark.parametrize("option", [["--output-format", "json", "-o"], ["--html"]])
def test_a_write_that_fails_is_one_line_and_leaves_nothing(tmp_path: Path, option: list[str]) -> None:
    folder = tmp_path / "src"
    folder.mkdir()
    for i in range(20):
        (folder / f"m{i}.py").write_text(SOURCE)
    target = tmp_path / "report.out"
    proc = subprocess.run([sys.executable, "-m", "torch2ms", "scan", str(folder), "--isolated", "--no-cache",
                           *option, str(target)], capture_output=True, text=True, timeout=300,
                          preexec_fn=_small_files)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == f"torch2ms: error: {target}: cannot write the report: File too large"
    assert not target.exists()
    assert leftovers(tmp_path) == []


def test_a_full_disk_is_one_line(tmp_path: Path, source: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    def full(_fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(writing.os, "fsync", full)
    target = tmp_path / "report.json"
    code = main(["scan", str(source), "--isolated", "--no-cache", "--output-format", "json", "-o", str(target)])
    assert code == 2
    assert capsys.readouterr().err == f"torch2ms: error: {target}: cannot write the report: No space left on device\n"
    assert not target.exists() and leftovers(tmp_path) == []


def test_a_failure_inside_the_block_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "keep.txt"
    target.write_text("old\n")
    with pytest.raises(RuntimeError):
        with writing.atomic(str(target)) as handle:
            handle.write("half")
            raise RuntimeError("stop")
    assert target.read_text() == "old\n" and leftovers(tmp_path) == []


# ---------------------------------------------------------------- after kill -9
def test_stale_temporary_files_of_dead_processes_are_swept(tmp_path: Path, source: Path) -> None:
    dead = tmp_path / f".report.json.{dead_pid()}.ab12cd34{writing.TEMP_TAG}"
    dead.write_text("partial")
    live = tmp_path / f".report.json.{os.getpid()}.ab12cd34{writing.TEMP_TAG}"
    live.write_text("a write in progress")
    proc = run_cli("scan", str(source), "--isolated", "--no-cache", "--output-format", "json", "-o",
                   str(tmp_path / "report.json"))
    assert proc.returncode == 1, proc.stderr
    assert not dead.exists()
    assert live.exists()  # its process still runs


def test_stale_temporary_folders_are_swept_at_start(tmp_path: Path, source: Path) -> None:
    base = tmp_path / "tmp"
    base.mkdir()
    stale = base / f"torch2ms-convert-{dead_pid()}-x1y2"
    stale.mkdir()
    (stale / "state.npz").write_bytes(b"\0" * 1000)
    running = base / f"torch2ms-convert-{os.getpid()}-x1y2"
    running.mkdir()
    unrelated = base / "torch2ms-convert-abc"
    unrelated.mkdir()
    env = {**os.environ, "TMPDIR": str(base)}
    proc = subprocess.run([sys.executable, "-m", "torch2ms", "scan", str(source), "--isolated", "--no-cache"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 1, proc.stderr
    assert not stale.exists()
    assert running.exists() and unrelated.exists()


def test_a_killed_writer_leaves_a_file_the_next_write_sweeps(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    code = ("import os, sys\nfrom torch2ms import writing\n"
            "with writing.atomic(sys.argv[1]) as h:\n    h.write('x')\n    h.flush()\n"
            "    print('ready', flush=True)\n    os.kill(os.getpid(), 9)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(target)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == -9 and proc.stdout == "ready\n"
    assert len(leftovers(tmp_path)) == 1 and not target.exists()
    writing.write_text(str(target), "done\n")
    assert target.read_text() == "done\n" and leftovers(tmp_path) == []


# ---------------------------------------------------------------- trace: the script's own ending
@pytest.mark.needs_torch
def test_trace_shows_the_scripts_traceback_and_exit_code(tmp_path: Path) -> None:
    script = tmp_path / "fails.py"
    script.write_text("import torch\n\n\ndef step():\n    torch.zeros(2)\n    raise ValueError('boom in step')\n\n\n"
                      "step()\n")
    proc = run_cli_process("trace", "-o", "t.json", "--", "python", "fails.py", cwd=tmp_path)  # the child's stderr
    assert proc.returncode == 1, proc.stderr
    assert "internal error" not in proc.stderr and "please report" not in proc.stderr
    assert "Traceback (most recent call last):" in proc.stderr
    assert 'fails.py", line 6, in step' in proc.stderr and "ValueError: boom in step" in proc.stderr
    assert "tracer.py" not in proc.stderr and "runpy" not in proc.stderr  # the script's frames only
    assert "ended with exit code 1" in proc.stderr
    assert [c["api"] for c in json.loads((tmp_path / "t.json").read_text())["calls"]] == ["torch.zeros"]


@pytest.mark.needs_torch
@pytest.mark.parametrize("ending, code", [("os._exit(0)", 2), ("os._exit(4)", 4),
                                          ("os.kill(os.getpid(), signal.SIGKILL)", 2)])
def test_trace_says_when_no_trace_could_be_written(tmp_path: Path, ending: str, code: int) -> None:
    (tmp_path / "quits.py").write_text(f"import os\nimport signal\nimport torch\ntorch.ones(1)\n{ending}\n")
    proc = run_cli_process("trace", "-o", "t.json", "--", "python", "quits.py", cwd=tmp_path)
    assert proc.returncode == code
    assert "torch2ms trace: error: no trace written" in proc.stderr
    assert not (tmp_path / "t.json").exists() and leftovers(tmp_path) == []
