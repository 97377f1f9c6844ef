"""Torch runtime helpers a port meets at import or build time, each written as the MindSpore or plain-Python
value the tables name: autocast's dtype queries (torch's default for the device, as autocast is never on),
context managers that only steer torch's tape or autocast among others in one `with`. The programs are written
the way libraries write these constructs."""

from __future__ import annotations

import textwrap

import pytest

from torch2ms.mappings import load_table
from torch2ms.migrate.pipeline import migrate_text


def _port(text: str) -> str:
    return migrate_text(text, "helpers.py", table=load_table()).text


AUTOCAST = textwrap.dedent("""\
    import torch


    def low_precision(device_kind="cuda"):
        if device_kind == "cpu":
            return torch.get_autocast_cpu_dtype()
        if device_kind == "any":
            return torch.get_autocast_gpu_dtype()
        return torch.get_autocast_dtype(device_kind)

""")


def test_autocast_dtype_queries_are_torchs_defaults() -> None:
    ported = _port(AUTOCAST)
    assert "return mindspore.bfloat16\n" in ported and "return mindspore.float16\n" in ported
    assert "(mindspore.bfloat16 if device_kind in ('cpu', 'hpu', 'xla', 'maia') else mindspore.float16)" in ported
    assert "torch" not in ported.replace("mindspore", "")


@pytest.mark.needs_torch
@pytest.mark.needs_mindspore
def test_autocast_dtype_defaults_agree_with_torch() -> None:
    import mindspore
    import torch

    namespace: dict[str, object] = {}
    exec(compile(_port(AUTOCAST), "helpers.py", "exec"), namespace)
    low = namespace["low_precision"]
    assert callable(low)
    same = {torch.bfloat16: mindspore.bfloat16, torch.float16: mindspore.float16}
    for device in ("cpu", "cuda", "xpu", "mps", "hpu", "xla", "maia", "mtia"):
        assert low(device) == same[torch.get_autocast_dtype(device)], device


CONTEXTS = textwrap.dedent("""\
    import threading
    import torch

    LOCK = threading.Lock()


    def cached(fn, x):
        with torch.inference_mode(False), torch.autocast(device_type="cpu", enabled=False), LOCK:
            y = fn(x)
        with torch.no_grad(), torch.autocast("cpu", enabled=False):
            z = fn(y)
        with LOCK, torch.autocast("cpu"):
            return z
""")


def test_tape_and_autocast_switches_go_from_a_with_of_several_and_the_others_stay() -> None:
    ported = _port(CONTEXTS)
    assert "    with LOCK:\n        y = fn(x)\n    z = fn(y)\n" in ported
    assert "    with LOCK, torch.autocast(\"cpu\"):\n" in ported  # autocast on: a person's decision, kept
