"""`torch2ms migrate` never loses or corrupts work: same-named files of several roots never overwrite each
other, an output onto its own input is an error, a resumed or repeated run writes what one uninterrupted run
writes (no Cell keeps ``def forward``), every input file is reported, and the weight-map reader reads a source
as Python does (BOM, coding line)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from torch2ms.cli import main

BASE = ("import torch\nimport torch.nn as nn\n\n\nclass Base(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = nn.Linear(4, 4)\n\n    def forward(self, x):\n"
        "        return self.fc(x)\n")
NET = ("import torch\nfrom base import Base\n\n\nclass Net(Base):\n    def forward(self, x):\n"
       "        return torch.relu(super().forward(x))\n")
HELPER = "import torch\n\n\ndef helper(x):\n    return torch.abs(x) + {n}\n"


def tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def package(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "base.py").write_text(BASE)
    (root / "model.py").write_text(NET)
    return root


def test_same_named_files_of_several_roots_keep_their_trees(tmp_path: Path) -> None:
    for name, n in (("a", 1), ("b", 2)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "helpers.py").write_text(HELPER.format(n=n))
    out = tmp_path / "merged"
    assert main(["migrate", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(out), "--isolated"]) == 0
    written = tree(out)
    assert set(written) == {"a/helpers.py", "b/helpers.py"}
    assert "+ 1" in written["a/helpers.py"] and "+ 2" in written["b/helpers.py"]


def test_a_collision_is_an_error_and_nothing_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for side, n in (("one", 1), ("two", 2)):
        (tmp_path / side / "pkg").mkdir(parents=True)
        (tmp_path / side / "pkg" / "helpers.py").write_text(HELPER.format(n=n))
    out = tmp_path / "merged"
    code = main(["migrate", str(tmp_path / "one" / "pkg"), str(tmp_path / "two" / "pkg"), "--out", str(out),
                 "--isolated"])
    assert code == 2
    err = capsys.readouterr().err
    assert "would both be written to" in err and "nothing written" in err
    assert not out.exists()


def test_two_files_of_one_name_collide(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for side in ("x", "y"):
        (tmp_path / side).mkdir()
        (tmp_path / side / "util.py").write_text(HELPER.format(n=0))
    code = main(["migrate", str(tmp_path / "x" / "util.py"), str(tmp_path / "y" / "util.py"), "--out",
                 str(tmp_path / "out"), "--isolated"])
    assert code == 2 and "would both be written to" in capsys.readouterr().err


def test_a_file_migrated_into_its_own_folder_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.py").write_text(HELPER.format(n=3))
    code = main(["migrate", str(src / "a.py"), "--out", str(src), "--isolated"])
    assert code == 2
    assert f"{src / 'a.py'}: is an input of this run; not overwritten" in capsys.readouterr().err
    assert (src / "a.py").read_text() == HELPER.format(n=3)


def test_a_resumed_in_place_run_writes_what_one_run_writes(tmp_path: Path) -> None:
    whole = package(tmp_path / "whole")
    resumed = package(tmp_path / "resumed")
    assert main(["migrate", str(whole), "--in-place", "--isolated"]) == 0
    # interrupted after the first file, then run again over the tree
    assert main(["migrate", str(resumed / "base.py"), "--in-place", "--isolated"]) == 0
    assert main(["migrate", str(resumed), "--in-place", "--isolated"]) == 0
    assert tree(resumed) == tree(whole)
    net = tree(whole)["model.py"]
    assert "def construct(self, x)" in net and "super().construct(x)" in net and "forward" not in net


def test_a_repeated_run_into_an_output_tree_changes_nothing(tmp_path: Path) -> None:
    src = package(tmp_path / "src")
    out = tmp_path / "out"
    assert main(["migrate", str(src), "--out", str(out), "--isolated"]) == 0
    first = tree(out)
    again = tmp_path / "again"
    assert main(["migrate", str(out), "--out", str(again), "--isolated"]) == 0
    assert {k: v for k, v in tree(again).items() if k.endswith(".py")} == \
        {k: v for k, v in first.items() if k.endswith(".py")}


def test_every_input_file_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = package(tmp_path / "src")
    (src / "plain.py").write_text("x = 1\n")
    assert main(["migrate", str(src), "--out", str(tmp_path / "out"), "--isolated", "--quiet"]) == 0
    printed = capsys.readouterr().out
    for name in ("base.py", "model.py", "plain.py"):
        assert f"{tmp_path / 'out' / name}: " in printed


@pytest.mark.parametrize("head, encoding", [("\ufeff", "utf-8"), ("# -*- coding: latin-1 -*-\n", "latin-1")])
def test_the_weight_map_reads_sources_as_python_does(tmp_path: Path, head: str, encoding: str) -> None:
    src = tmp_path / "src"
    src.mkdir()
    text = ("import torch.nn as nn\n\n\nclass Net(nn.Module):\n    \"\"\"caf\u00e9\"\"\"\n\n"
            "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 2)\n\n"
            "    def forward(self, x):\n        return self.fc(x)\n")
    (src / "net.py").write_bytes((head + text).encode(encoding))
    out = tmp_path / "out"
    assert main(["migrate", str(src), "--out", str(out), "--isolated"]) == 0
    weights = json.loads((out / "net.weights.json").read_text())
    assert "Net" in json.dumps(weights)
    assert (out / "net.py").read_bytes().startswith(head.encode(encoding))


def test_a_link_in_the_output_tree_is_not_replaced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = package(tmp_path / "src")
    out = tmp_path / "out"
    out.mkdir()
    elsewhere = tmp_path / "elsewhere.py"
    elsewhere.write_text("kept\n")
    os.symlink(elsewhere, out / "base.py")
    assert main(["migrate", str(src), "--out", str(out), "--isolated"]) == 2
    assert "is a symbolic link" in capsys.readouterr().err
    assert elsewhere.read_text() == "kept\n" and (out / "base.py").is_symlink()
    shutil.rmtree(out)


def test_a_package_keeps_its_data_files_and_the_summary_adds_up(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    src = package(tmp_path / "src")
    (src / "labels.txt").write_text("cat\ndog\n")
    (src / "conf").mkdir()
    (src / "conf" / "model.yaml").write_text("depth: 2\n")
    (src / "__pycache__").mkdir()
    (src / "__pycache__" / "base.cpython-311.pyc").write_bytes(b"\0")
    out = tmp_path / "out"
    assert main(["migrate", str(src), "--out", str(out), "--isolated", "--quiet"]) == 0
    assert (out / "labels.txt").read_text() == "cat\ndog\n"
    assert (out / "conf" / "model.yaml").read_text() == "depth: 2\n"
    assert not (out / "__pycache__").exists()
    printed = capsys.readouterr().out.splitlines()
    rows = [line for line in printed if " finding(s) before, " in line and not line.startswith("torch2ms")]
    before = sum(int(line.split(": ")[1].split()[0]) for line in rows)
    after = sum(int(line.split("before, ")[1].split()[0]) for line in rows)
    assert printed[-1] == (f"torch2ms migrate: 2 of 2 Python file(s) migrated, 2 other file(s) copied; "
                           f"{before} finding(s) before, {after} after, "
                           f"{sum(int(r.split('after, ')[1].split()[0]) for r in rows)} rewrite(s); 0 error(s)")


def test_parallel_migration_writes_what_a_serial_one_writes(tmp_path: Path) -> None:
    src = package(tmp_path / "src")
    for n in range(5):
        (src / f"helpers{n}.py").write_text(HELPER.format(n=n))
    assert main(["migrate", str(src), "--out", str(tmp_path / "serial"), "--isolated", "-j", "1"]) == 0
    assert main(["migrate", str(src), "--out", str(tmp_path / "parallel"), "--isolated", "-j", "2"]) == 0
    serial, parallel = tree(tmp_path / "serial"), tree(tmp_path / "parallel")
    assert sorted(serial) == sorted(parallel)  # the ports, and the weight maps and records of the files with cells
    ports = {k: v for k, v in serial.items() if k.endswith(".py")}
    assert len(ports) == 7 and ports == {k: v for k, v in parallel.items() if k.endswith(".py")}
