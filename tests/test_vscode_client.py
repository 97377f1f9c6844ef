"""Builds, lints, packages and tests the VS Code extension in vscode-client/.

Runs the npm scripts the way a developer or CI would and inspects the packaged
.vsix. The Node tests (`npm test`) include an end-to-end test that starts the
real language server with this interpreter (TORCH2MS_PYTHON=sys.executable).
Needs Node.js 20+ and npm; `npm ci` runs only when node_modules is missing.
"""

from __future__ import annotations

import json
import os
import posixpath
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLIENT = ROOT / "vscode-client"
NPM = shutil.which("npm")

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(
    NPM is None or shutil.which("node") is None, reason="Node.js and npm are needed for the VS Code client"
)]

EXPECTED_SETTINGS = {
    "torch2ms.interpreter",
    "torch2ms.importStrategy",
    "torch2ms.args",
    "torch2ms.select",
    "torch2ms.ignore",
    "torch2ms.targetVersion",
    "torch2ms.debounce",
    "torch2ms.trace.server",
}
EXPECTED_COMMANDS = {"torch2ms.restart", "torch2ms.scanWorkspace", "torch2ms.showOutput"}


def npm(*args: str, timeout: int = 600, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Runs `npm <args>` in vscode-client/ and fails the test with its output when it fails."""
    assert NPM is not None
    try:
        proc = subprocess.run(
            [NPM, *args],
            cwd=CLIENT,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"npm {' '.join(args)} timed out after {timeout} s\n--- output ---\n{exc.stdout}\n{exc.stderr}")
    if proc.returncode != 0:
        pytest.fail(
            f"npm {' '.join(args)} failed with exit code {proc.returncode}\n"
            f"--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}"
        )
    return proc


@pytest.fixture(scope="module")
def node_modules() -> Path:
    modules = CLIENT / "node_modules"
    if not modules.is_dir():
        npm("ci", "--no-audit", "--no-fund")
    return modules


@pytest.fixture(scope="module")
def manifest_source() -> dict:
    return json.loads((CLIENT / "package.json").read_text(encoding="utf-8"))


def test_typecheck_and_lint(node_modules: Path) -> None:
    npm("run", "check")
    npm("run", "lint")


def test_build_and_package(node_modules: Path, manifest_source: dict) -> None:
    npm("run", "build")
    bundle = CLIENT / "dist" / "extension.js"
    assert bundle.is_file(), "npm run build wrote no dist/extension.js"

    vsix = CLIENT / f"torch2ms-{manifest_source['version']}.vsix"
    vsix.unlink(missing_ok=True)
    npm("run", "package")
    assert vsix.is_file(), f"npm run package wrote no {vsix.name}"

    with zipfile.ZipFile(vsix) as archive:
        names = set(archive.namelist())
        assert "extension.vsixmanifest" in names
        assert "[Content_Types].xml" in names
        manifest = json.loads(archive.read("extension/package.json"))

        main = manifest["main"]
        relative = posixpath.normpath(main)
        entries = [f"extension/{relative}", f"extension/{relative}.js"]
        main_entry = next((entry for entry in entries if entry in names), None)
        assert main_entry, f"main {main!r} is not in the package: {sorted(names)}"
        main_code = archive.read(main_entry).decode("utf-8")
        # Bundled: only 'vscode' stays external, the language client is inside.
        assert 'require("vscode")' in main_code
        assert "require(\"vscode-languageclient" not in main_code
        assert "torch2ms.scanWorkspace" in main_code

        assert not any(name.startswith(("extension/node_modules/", "extension/src/", "extension/test/")) for name in names)
        assert any(name.lower().startswith("extension/license") for name in names)
        assert any(name.lower() == "extension/readme.md" for name in names)

    assert "onLanguage:python" in manifest["activationEvents"]
    commands = {command["command"] for command in manifest["contributes"]["commands"]}
    assert EXPECTED_COMMANDS <= commands
    properties = manifest["contributes"]["configuration"]["properties"]
    assert EXPECTED_SETTINGS <= set(properties)
    assert properties["torch2ms.interpreter"]["type"] == "array"
    assert set(properties["torch2ms.importStrategy"]["enum"]) == {"useBundled", "fromEnvironment"}
    assert properties["torch2ms.trace.server"]["enum"] == ["off", "messages", "verbose"]
    assert properties["torch2ms.targetVersion"]["default"] == "2.10"
    assert properties["torch2ms.debounce"]["default"] == 300
    assert manifest["engines"]["vscode"] == manifest_source["engines"]["vscode"]


def test_node_tests_with_real_server(node_modules: Path) -> None:
    env = dict(os.environ)
    env["TORCH2MS_PYTHON"] = sys.executable
    proc = npm("test", env=env, timeout=600)
    output = proc.stdout + proc.stderr
    assert "# fail 0" in output, output
    # The end-to-end test ran, not only the unit tests.
    assert "the real torch2ms server" in output, output
