"""A real client: Debian's Neovim (0.7+) run headless against `python -m torch2ms lsp`.

The Lua script (tests/nvim/lsp_client.lua) opens a file, waits for the
diagnostics, applies the quick-fix of the torch.clamp finding and the
"# noqa" action of the dynamic-shape finding, writes the file and records
what Neovim saw; this test checks the file on disk and that record.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from torch2ms.engine import scan_source

pytestmark = [pytest.mark.e2e]  # a real Neovim client

LUA = Path(__file__).resolve().parent / "nvim" / "lsp_client.lua"
NVIM = shutil.which("nvim")

SOURCE = """\
import torch
import torch.nn.functional as F


def f(x):
    s = "中文 😀"; y = torch.clamp(x, min=0.0)
    z = F.softmax(y, dim=1)
    return torch.nonzero(z)
"""


@pytest.mark.skipif(NVIM is None, reason="neovim is not installed (the project's setup installs it: apt-get install neovim)")
def test_neovim_headless_quick_fix_and_noqa(tmp_path: Path) -> None:
    target = tmp_path / "model.py"
    target.write_text(SOURCE, encoding="utf-8")
    out = tmp_path / "report.json"
    expected = scan_source(SOURCE, "model.py").diagnostics
    dyn_code = next(d.code for d in expected if d.span.start_line == 8)
    clamp_code = next(d.code for d in expected if d.span.start_line == 6)  # TMS101 or TMS102, as the tables say
    env = dict(os.environ, TORCH2MS_PYTHON=sys.executable, TORCH2MS_FILE=str(target), TORCH2MS_OUT=str(out),
               TORCH2MS_DYN_CODE=dyn_code, TORCH2MS_CLAMP_CODE=clamp_code,
               HOME=str(tmp_path), XDG_STATE_HOME=str(tmp_path / "state"), XDG_DATA_HOME=str(tmp_path / "data"))
    proc = subprocess.run([NVIM, "--headless", "--clean", "-u", str(LUA)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=150)
    assert out.exists(), f"nvim wrote no report (rc {proc.returncode}): {proc.stdout}\n{proc.stderr}"
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["errors"] == [], report
    assert proc.returncode == 0, proc.stderr

    # what Neovim received first: the scanner's findings, at the right characters
    before = report["before"]
    assert sorted(d["code"] for d in before) == sorted(d.code for d in expected)
    assert all(d["source"] == "torch2ms" for d in before)
    clamp = next(d for d in before if d["lnum"] == 5)
    line = SOURCE.splitlines()[5]
    # Neovim converted the server's UTF-16 columns to byte columns of the line: the call, exactly
    assert line.encode()[clamp["col"]:clamp["end_col"]].decode() == "torch.clamp(x, min=0.0)"
    assert clamp["href"].startswith("https://")

    # what it wrote: the quick-fix rewrite and the noqa comment
    written = target.read_text(encoding="utf-8")
    assert 's = "中文 😀"; y = mindspore.mint.clamp(x, min=0.0)\n' in written
    assert f"return torch.nonzero(z)  # noqa: {dyn_code}\n" in written
    assert any(title.startswith("Call mindspore.mint.clamp") for title in report["actions"])

    # and the diagnostics it shows afterwards are those of the written file
    after = report["after"]
    assert sorted(d["code"] for d in after) == sorted(d.code for d in scan_source(written, "model.py").diagnostics)
    assert dyn_code not in [d["code"] for d in after]
    assert not any(d["lnum"] == 5 for d in after)


def _lua_snippets() -> list[str]:
    import re

    text = (Path(__file__).resolve().parent.parent / "docs" / "editors" / "neovim.md").read_text(encoding="utf-8")
    return re.findall(r"^```lua\n(.*?)^```$", text, flags=re.MULTILINE | re.S)


@pytest.mark.skipif(NVIM is None, reason="neovim is not installed (the project's setup installs it: apt-get install neovim)")
def test_every_lua_snippet_of_the_neovim_guide_compiles(tmp_path: Path) -> None:
    snippets = _lua_snippets()
    assert len(snippets) >= 5
    checks = []
    for index, body in enumerate(snippets):
        path = tmp_path / f"snippet{index}.lua"
        path.write_text(body, encoding="utf-8")
        checks.append(f"local f, err = loadfile({json.dumps(str(path))}); if not f then table.insert(errors, err) end")
    script = tmp_path / "check.lua"
    script.write_text("local errors = {}\n" + "\n".join(checks) + f"\nlocal h = io.open({json.dumps(str(tmp_path / 'out.json'))}, 'w')"
                      "\nh:write(vim.fn.json_encode({errors = errors, n = " + str(len(snippets)) + "}))\nh:close()\nvim.cmd('qall!')\n",
                      encoding="utf-8")
    subprocess.run([NVIM, "--headless", "--clean", "-u", str(script)], cwd=tmp_path, capture_output=True, timeout=60,
                   env=dict(os.environ, HOME=str(tmp_path)))
    report = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert report == {"errors": [], "n": len(snippets)}


@pytest.mark.skipif(NVIM is None, reason="neovim is not installed (the project's setup installs it: apt-get install neovim)")
def test_the_neovim_07_snippet_starts_the_server_as_written(tmp_path: Path) -> None:
    """The guide's Neovim 0.7 configuration, unchanged, with the torch2ms console script on PATH (as after
    `pip install '/path/to/torch2ms[lsp]'` into the environment Neovim runs in) shows the findings."""
    snippet = next(s for s in _lua_snippets() if s.startswith("-- torch2ms language server (Neovim 0.7)"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "torch2ms"
    root = Path(__file__).resolve().parent.parent
    script.write_text(f"#!/bin/sh\nPYTHONPATH={root} exec {sys.executable} -m torch2ms \"$@\"\n", encoding="utf-8")
    script.chmod(0o755)
    init = tmp_path / "init.lua"
    init.write_text(snippet + "\n" + (LUA.parent / "run_doc_snippet.lua").read_text(encoding="utf-8"), encoding="utf-8")
    target = tmp_path / "model.py"
    target.write_text(SOURCE, encoding="utf-8")
    out = tmp_path / "report.json"
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", TORCH2MS_FILE=str(target),
               TORCH2MS_OUT=str(out), HOME=str(tmp_path), XDG_STATE_HOME=str(tmp_path / "state"),
               XDG_DATA_HOME=str(tmp_path / "data"))
    proc = subprocess.run([NVIM, "--headless", "--clean", "-u", str(init)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=150)
    assert out.exists(), f"nvim wrote no report (rc {proc.returncode}): {proc.stdout}\n{proc.stderr}"
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["ok"] is True, report
    assert report["clients"] == [{"name": "torch2ms", "cmd": ["torch2ms", "lsp"]}]
    expected = scan_source(SOURCE, "model.py").diagnostics
    assert sorted(d["code"] for d in report["diagnostics"]) == sorted(d.code for d in expected)
