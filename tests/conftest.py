"""Shared test helpers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE_GOLDEN = os.environ.get("TORCH2MS_UPDATE_GOLDEN") == "1"


def run_cli(*args: str, cwd: Path | None = None, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real `torch2ms` command line in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "torch2ms", *args],
        cwd=cwd, input=input, capture_output=True, text=True, timeout=300,
    )


def check_golden(path: Path, actual: str) -> None:
    """Compare with the expected file; TORCH2MS_UPDATE_GOLDEN=1 rewrites it (review the diff!)."""
    if UPDATE_GOLDEN:
        path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"missing golden file {path.name}; run with TORCH2MS_UPDATE_GOLDEN=1"
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"output differs from {path.name}:\n--- expected\n{expected}\n--- actual\n{actual}"


@pytest.fixture
def example_project() -> Path:
    return ROOT / "examples" / "vision_project"
