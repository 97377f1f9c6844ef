"""The pre-commit hooks, run by the real `pre-commit` on a temporary git repository.

pre-commit clones the hook repository at a commit, so the test commits a copy of
this working tree's package files to a temporary repository and points the hook
configuration at it. pre-commit then pip-installs torch2ms (with its pure-Python
dependencies from PyPI, never torch or MindSpore) into its own virtualenv.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = [pytest.mark.e2e]  # git and pre-commit run the hooks

PACKAGE_PARTS = ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "src")
TORCH_CODE = "import torch\n\n\ndef join(a, b):\n    return torch.cat([a, b], dim=0)\n"
# torch.cat is an info finding (equivalent API), torch.histogram an error (missing in MindSpore)
CHECK_CODE = TORCH_CODE + "\n\ndef hist(a):\n    return torch.histogram(a)\n"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "torch2ms test", "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "torch2ms test", "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def _pre_commit() -> list[str]:
    exe = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which("pre-commit")
    assert exe is not None, "pre-commit is not installed (pip install -e .[dev])"
    return [exe]


def _git(*args: str, cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"git {' '.join(args)} failed: {proc.stderr}"
    return proc.stdout.strip()


def _package_files() -> list[str]:
    """Tracked and untracked, not ignored, files of the package (as `git ls-files` sees them)."""
    proc = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", *PACKAGE_PARTS],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return sorted({line for line in proc.stdout.splitlines()
                   if line and ((ROOT / line).is_symlink() or (ROOT / line).is_file())})


def copy_package(folder: Path) -> Path:
    """The package's files as a clone of the repository has them, copied into `folder`."""
    for rel in _package_files():
        dest = folder / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dest)
    return folder


@pytest.fixture(scope="module")
def hook_setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict[str, str]]:
    base = tmp_path_factory.mktemp("precommit")
    home = base / "home"
    home.mkdir()
    env = {**os.environ, **GIT_ENV, "HOME": str(home), "PRE_COMMIT_HOME": str(base / "pre-commit-cache"),
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("VIRTUAL_ENV", None)
    hooks = copy_package(base / "hooks")
    assert (hooks / ".pre-commit-hooks.yaml").is_file()
    _git("init", "-q", cwd=hooks, env=env)
    _git("add", "-A", cwd=hooks, env=env)
    _git("commit", "-q", "-m", "torch2ms hooks", cwd=hooks, env=env)
    sha = _git("rev-parse", "HEAD", cwd=hooks, env=env)
    return hooks, sha, env


def _user_repo(base: Path, hooks: Path, sha: str, hook_id: str, env: dict[str, str], code: str = TORCH_CODE) -> Path:
    repo = base / "user"
    repo.mkdir()
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hooks.as_posix()}\n    rev: {sha}\n    hooks:\n      - id: {hook_id}\n",
        encoding="utf-8")
    (repo / "model.py").write_text(code, encoding="utf-8")
    (repo / "notes.txt").write_text("torch.cat is not Python here\n", encoding="utf-8")
    _git("init", "-q", cwd=repo, env=env)
    _git("add", "-A", cwd=repo, env=env)
    return repo


def _run(repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*_pre_commit(), "run", "--all-files", "--color", "never"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=600)


def test_check_hook_fails_on_warnings_and_errors_not_on_info(hook_setup, tmp_path: Path):
    hooks, sha, env = hook_setup
    repo = _user_repo(tmp_path, hooks, sha, "torch2ms", env, CHECK_CODE)
    first = _run(repo, env)
    output = first.stdout + first.stderr
    assert first.returncode == 1, output
    assert "model.py:5:12: TMS101 [*] info: torch.cat -> mindspore.mint.cat" in output
    assert "model.py:9:12: TMS103 error: torch.histogram has no MindSpore" in output
    assert "notes.txt" not in output  # types: [python]
    model = repo / "model.py"
    # the error accepted: the info finding left (torch.cat) does not fail the hook
    model.write_text(CHECK_CODE.replace("torch.histogram(a)", "torch.histogram(a)  # noqa: TMS103"), encoding="utf-8")
    second = _run(repo, env)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "Passed" in second.stdout


def test_fix_hook_rewrites_then_passes(hook_setup, tmp_path: Path):
    hooks, sha, env = hook_setup
    repo = _user_repo(tmp_path, hooks, sha, "torch2ms-fix", env)
    first = _run(repo, env)
    assert first.returncode == 1, first.stdout + first.stderr  # the hook changed a file
    assert "files were modified by this hook" in first.stdout
    fixed = (repo / "model.py").read_text(encoding="utf-8")
    assert fixed == "import mindspore\n\n\ndef join(a, b):\n    return mindspore.mint.cat([a, b], dim=0)\n"
    second = _run(repo, env)
    assert second.returncode == 0, second.stdout + second.stderr
    assert (repo / "model.py").read_text(encoding="utf-8") == fixed


def _readme_configs() -> dict[str, str]:
    """The .pre-commit-config.yaml snippets of the README and docs/fixes.md, by their first repo."""
    import re

    out = {}
    for doc in ("README.md", "docs/fixes.md"):
        text = (ROOT / doc).read_text(encoding="utf-8")
        for body in re.findall(r"^```yaml\n(.*?)^```$", text, flags=re.MULTILINE | re.S):
            repo = re.search(r"- repo: (\S+)", body)
            assert repo, body
            out[f"{doc}:{repo.group(1)}"] = body
    return out


def _run_snippet(repo: Path, config: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    (repo / ".pre-commit-config.yaml").write_text(config, encoding="utf-8")
    (repo / "model.py").write_text(CHECK_CODE, encoding="utf-8")
    _git("init", "-q", cwd=repo, env=env)
    _git("add", "-A", cwd=repo, env=env)
    return _run(repo, env)


@pytest.mark.parametrize("doc", ["README.md", "docs/fixes.md"])
def test_the_documented_clone_configuration_works(hook_setup, tmp_path: Path, doc: str):
    hooks, sha, env = hook_setup
    config = _readme_configs()[f"{doc}:/path/to/torch2ms"]
    assert "rev: 0123abcd" in config
    config = config.replace("/path/to/torch2ms", hooks.as_posix()).replace("0123abcd", sha)
    repo = tmp_path / "user"
    repo.mkdir()
    proc = _run_snippet(repo, config, env)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "model.py:9:12: TMS103 error: torch.histogram" in output, output


def test_the_documented_local_configuration_works(hook_setup, tmp_path: Path):
    _, _, env = hook_setup
    config = _readme_configs()["README.md:local"]
    env = dict(env, PATH=f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}")
    repo = tmp_path / "user"
    repo.mkdir()
    proc = _run_snippet(repo, config, env)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "model.py:9:12: TMS103 error: torch.histogram" in output, output
    (repo / "model.py").write_text(CHECK_CODE.replace("torch.histogram(a)", "torch.histogram(a)  # noqa: TMS103"),
                                   encoding="utf-8")
    again = _run(repo, env)
    assert again.returncode == 0, again.stdout + again.stderr
