"""Shared test helpers."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from torch2ms.process import configure_process

# The test process is an entry point like the CLI: the analysis of deep expressions needs the
# recursion limit the entry points set (torch2ms.process), not CPython's default.
configure_process()

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE_GOLDEN = os.environ.get("TORCH2MS_UPDATE_GOLDEN") == "1"


def run_cli(*args: str, cwd: Path | None = None, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real `torch2ms` command line in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "torch2ms", *args],
        cwd=cwd, input=input, capture_output=True, text=True, timeout=300,
    )


def load_script(path: Path, name: str) -> Any:
    """Import a script of the repository (scripts/, benchmarks/) as a module under `name`."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def check_golden(path: Path, actual: str) -> None:
    """Compare with the expected file; TORCH2MS_UPDATE_GOLDEN=1 rewrites it (review the diff!)."""
    if UPDATE_GOLDEN:
        path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"missing golden file {path.name}; run with TORCH2MS_UPDATE_GOLDEN=1"
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"output differs from {path.name}:\n--- expected\n{expected}\n--- actual\n{actual}"


def as_tuples(results):
    return [(r.path, r.lines, r.diagnostics) for r in results]


def scan_every_way(project: Path, cache_dir: Path) -> dict:
    """The scan of `project` plain, with a cold and a warm cache, and on two jobs without and
    with a (fresh) cache; "warm_cache" is the cache the warm scan used, for its hit counts."""
    from torch2ms.api import scan_paths
    from torch2ms.cache import Cache
    from torch2ms.config import Config
    from torch2ms.mappings import load_table

    config = Config()

    def cache(name: str) -> Cache:
        return Cache(cache_dir / name, config, load_table())

    runs = {"plain": scan_paths([str(project)], config),
            "cold": scan_paths([str(project)], config, cache=cache("c"))}
    runs["warm_cache"] = cache("c")
    runs["warm"] = scan_paths([str(project)], config, cache=runs["warm_cache"])
    runs["parallel"] = scan_paths([str(project)], config, jobs=2)
    runs["parallel_cached"] = scan_paths([str(project)], config, jobs=2, cache=cache("c2"))
    return runs


@pytest.fixture
def example_project() -> Path:
    return ROOT / "examples" / "vision_project"
