"""Per-file limits of CPU time and memory for `scan` and `migrate`: a file that passes one gets a TMS905
finding that names it (the others are analysed as usual), and such a result is never cached."""

from __future__ import annotations

from pathlib import Path

import pytest

from torch2ms.cli import main

from conftest import run_cli_process

SMALL = "import torch\nx = torch.zeros(3)\n"


def heavy(path: Path, blocks: int = 400) -> Path:
    """A file whose analysis takes far more than 10 ms of CPU time and 5 MB of memory."""
    body = "".join(f"    y{i} = torch.relu(torch.cat([x, x], dim=1).sum(dim=1)) + F.softmax(x, dim=-1)\n"
                   for i in range(blocks))
    path.write_text("import torch\nimport torch.nn.functional as F\n\n\ndef f(x):\n" + body + "    return x\n")
    return path


@pytest.mark.parametrize("option, reason", [
    (["--file-timeout", "0.01"], "stopped at the per-file limit of 0.01 s of CPU time"),
    (["--file-memory-mb", "5"], "stopped at the per-file memory limit of 5 MB"),
])
def test_scan_stops_one_file_at_a_limit(tmp_path: Path, option: list[str], reason: str) -> None:
    big = heavy(tmp_path / "big.py", 1500)
    (tmp_path / "small.py").write_text(SMALL)
    # a process of its own: the memory limit counts what the analysis adds to a fresh process
    proc = run_cli_process("scan", str(tmp_path), "--isolated", "--no-cache", "-j", "1", *option)
    out = proc.stdout
    assert proc.returncode == 1, proc.stderr
    assert f"{big}:1:1: TMS905 error: analysis {reason}" in out
    assert out.count("TMS905") == 1
    assert "small.py:2:5: TMS" in out  # the other file is analysed


def test_a_result_stopped_at_a_limit_is_not_cached(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    big = heavy(tmp_path / "big.py", 200)
    cache = tmp_path / "cache"
    assert main(["scan", str(big), "--isolated", "--cache-dir", str(cache), "--file-timeout", "0.01"]) == 1
    assert "TMS905" in capsys.readouterr().out
    assert main(["scan", str(big), "--isolated", "--cache-dir", str(cache)]) == 1
    out = capsys.readouterr().out
    assert "TMS905" not in out and "TMS101" in out


def test_migrate_stops_one_file_at_a_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "src"
    src.mkdir()
    heavy(src / "big.py", 100)
    (src / "small.py").write_text(SMALL)
    out = tmp_path / "out"
    code = main(["migrate", str(src), "--out", str(out), "--isolated", "--file-timeout", "0.01"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{src / 'big.py'}: TMS905 migration stopped at the per-file limit of 0.01 s of CPU time" in err
    assert not (out / "big.py").exists()
