"""The documented install path without PyPI: a wheel built from the clone holds the whole tool (tables,
report templates, language server) and runs from where it is installed."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT
from test_precommit import copy_package

pytestmark = [pytest.mark.e2e]  # builds and installs the wheel


def test_a_wheel_built_from_the_clone_installs_and_runs(tmp_path: Path) -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    dist = tmp_path / "dist"
    clone = copy_package(tmp_path / "clone")  # the build writes beside the sources: not into the checkout
    # README: python -m pip wheel --no-deps -w dist . (here without build isolation: no network needed)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(dist), "."], cwd=clone, capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr
    wheel = dist / f"torch2ms-{version}-py3-none-any.whl"
    assert wheel.is_file(), list(dist.iterdir())
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("torch2ms/cli.py", "torch2ms/data/torch.yaml", "torch2ms/data/meta.yaml",
                   "torch2ms/data/verification.json", "torch2ms/report/templates/report.js",
                   "torch2ms/lsp/server.py", "torch2ms/py.typed"):
        assert needed in names, needed
    site = tmp_path / "site"
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site),
                                str(wheel)], capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stderr
    env = dict(os.environ, PYTHONPATH=str(site))  # its dependencies come from this environment
    where = subprocess.run([sys.executable, "-c", "import torch2ms; print(torch2ms.__file__)"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=60)
    assert where.stdout.startswith(str(site)), where.stdout + where.stderr
    script = site / "bin" / "torch2ms"
    assert script.is_file()
    (tmp_path / "m.py").write_text("import torch\nx = torch.cat([a, b], dim=0)\n", encoding="utf-8")
    scan = subprocess.run([sys.executable, str(script), "scan", "m.py", "--isolated", "--no-cache"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    assert scan.returncode == 1 and "m.py:2:5: TMS101 [*] info: torch.cat -> mindspore.mint.cat" in scan.stdout
    lsp = subprocess.run([sys.executable, str(script), "lsp", "--help"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)
    assert lsp.returncode == 0 and "--tcp" in lsp.stdout


def test_an_editable_install_gives_no_setuptools_warning(tmp_path: Path) -> None:
    """The package folder is named after the import (src layout): setuptools has nothing to warn about."""
    clone = copy_package(tmp_path / "clone")
    editable = subprocess.run([sys.executable, "-c", (
        "import os, sys, tempfile\n"
        "from setuptools import build_meta\n"
        "os.chdir(sys.argv[1])\n"
        "print(build_meta.build_editable(tempfile.mkdtemp()))\n"), str(clone)],
        capture_output=True, text=True, timeout=600)
    assert editable.returncode == 0, editable.stderr
    output = editable.stdout + editable.stderr
    assert "Warning" not in output and "Please be careful" not in output, output
