"""Switches of torch's TorchScript executor and fusers (`torch._C._jit_set_profiling_executor(False)`, ...), which
training scripts and libraries set before scripting a model: MindSpore code runs no TorchScript, so a statement that
only makes such a call goes (``pass`` where it was alone in its block), a feature probe on one answers that it is
there, and a call whose value is used keeps its finding."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from torch2ms.config import Config
from torch2ms.engine import scan_source
from torch2ms.mappings import load_table
from torch2ms.migrate.pipeline import migrate_text

from case_runner import assert_port_agrees_with_torch, assert_torch_free_port

PROGRAM = textwrap.dedent("""\
    import torch


    def configure_fusion(mode):
        if mode == "legacy":
            assert hasattr(torch._C, "_jit_set_profiling_executor"), "no legacy executor"
            torch._C._jit_set_profiling_executor(False)
            torch._C._jit_set_profiling_mode(False)
        elif mode == "cpu":
            torch._C._jit_override_can_fuse_on_cpu(True); torch._C._jit_can_fuse_on_cpu()
        else:
            try:
                torch._C._jit_set_nvfuser_enabled(True)
            except RuntimeError:
                pass
        return mode


    def case_modes():
        return [float(len(configure_fusion(m))) for m in ("legacy", "cpu", "nv")]
""")


def test_torchscript_switches_go_and_a_used_value_keeps_its_finding() -> None:
    ported = assert_torch_free_port(PROGRAM, ())
    assert "_jit_" not in ported
    assert "assert True, " in ported and "    elif mode == \"cpu\":\n        pass; pass\n" in ported
    assert "        try:\n            pass\n        except RuntimeError:" in ported
    kept = "import torch\n\n\ndef previous():\n    return torch._C._jit_set_profiling_mode(True)\n"
    result = scan_source(kept, "kept.py", Config(), load_table())
    found = [d for d in result.diagnostics if d.torch_api == "torch._C._jit_set_profiling_mode"]
    assert [(d.code, d.fix) for d in found] == [("TMS103", None)]
    assert migrate_text(kept, "kept.py", table=load_table()).text.count("torch._C._jit_set_profiling_mode(True)") == 1


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_the_port_runs_without_torch(tmp_path: Path) -> None:
    assert_port_agrees_with_torch(tmp_path, PROGRAM, rtol=0, atol=0)
