"""Shared test helpers."""

from __future__ import annotations

import ast
import gc
import importlib.util
import io
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


# The heavy extras a marker stands for: a marked test runs only where the module is installed.
EXTRA_OF_MARKER = {"needs_torch": ("torch", "verify"), "needs_mindspore": ("mindspore", "verify"),
                   "needs_numpy": ("numpy", "verify"), "needs_einops": ("einops", "verify")}


def _missing(marker: str) -> str | None:
    """Why a test with `marker` cannot run here (None: it can)."""
    module, extra = EXTRA_OF_MARKER[marker]
    return None if importlib.util.find_spec(module) is not None else f"needs {module} (the {extra} extra), not installed"


def _module_markers(path: Path) -> set[str]:
    """The needs_* markers of a test module's `pytestmark`, read without importing the module (its
    imports may be the very library that is missing)."""
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError):
        return set()
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            found |= {n.attr for n in ast.walk(node.value) if isinstance(n, ast.Attribute) and n.attr in EXTRA_OF_MARKER}
    return found


class _ModuleNeedingExtra(pytest.Module):
    """A test module marked as needing a library that is not installed: skipped as a whole, not imported."""

    reason = ""

    def _getobj(self) -> Any:
        raise pytest.skip.Exception(self.reason, allow_module_level=True)


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    reasons = sorted(filter(None, map(_missing, _module_markers(module_path))))
    if not reasons:
        return None
    module = _ModuleNeedingExtra.from_parent(parent, path=module_path)
    module.reason = "; ".join(reasons)
    return module


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test marked needs_torch, needs_mindspore or needs_numpy is skipped, with the extra named, where that
    library is not installed at all (a fast-lane environment: core and dev extras only). Where it
    is installed but broken, the test runs and fails."""
    for marker in EXTRA_OF_MARKER:
        reason = _missing(marker)
        if reason is None:
            continue
        skip = pytest.mark.skip(reason=reason)
        for item in items:
            if item.get_closest_marker(marker) is not None:
                item.add_marker(skip)


def run_cli_process(*args: str, cwd: Path | None = None, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real `torch2ms` command line in a subprocess: for what only a process shows (exit
    on a signal, a terminal, the environment, what the process imports)."""
    return subprocess.run(
        [sys.executable, "-m", "torch2ms", *args],
        cwd=cwd, input=input, capture_output=True, text=True, timeout=300,
    )


def _universal(data: bytes) -> str:
    """What `subprocess.run(text=True)` makes of a stream: UTF-8, universal newlines."""
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def run_cli(*args: str, cwd: Path | None = None, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the `torch2ms` command line in this process (its `main`, as the console script does), with
    its own standard streams and working directory; the result reads as a subprocess's would."""
    from torch2ms.cli import main

    out, err = io.BytesIO(), io.BytesIO()
    streams = (io.TextIOWrapper(out, encoding="utf-8", write_through=True),
               io.TextIOWrapper(err, encoding="utf-8", write_through=True))
    stdin = io.TextIOWrapper(io.BytesIO((input or "").encode("utf-8")), encoding="utf-8")
    saved, here, threshold = (sys.stdin, sys.stdout, sys.stderr), os.getcwd(), gc.get_threshold()
    try:
        sys.stdin, (sys.stdout, sys.stderr) = stdin, streams
        if cwd is not None:
            os.chdir(cwd)
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's usage errors and --help
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    finally:
        os.chdir(here)
        sys.stdin, sys.stdout, sys.stderr = saved
        gc.unfreeze()  # the scan froze what it had loaded (process.freeze_long_lived): this process goes on
        gc.set_threshold(*threshold)
    return subprocess.CompletedProcess(["torch2ms", *args], code, _universal(out.getvalue()),
                                       _universal(err.getvalue()))


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


@pytest.fixture(autouse=True)
def _same_sys_path() -> Any:
    """Each test starts from the same sys.path: MindSpore's amp and graph compiler add folders of their own (one,
    mindspore/nn/layer, holds a math.py that shadows the standard module in any interpreter started with it)."""
    saved = list(sys.path)
    yield
    sys.path[:] = saved
