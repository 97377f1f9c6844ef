"""Runs a program's `case_*` functions in torch, or in MindSpore with torch blocked (PyNative or GRAPH mode), in a
child process, and hands back their results as lists of floats: the tests that compare a port with torch share it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

RUN = """
import importlib, json, sys
import numpy as np
if sys.argv[2] != "torch":
    sys.modules["torch"] = None  # the port must not need torch
    import mindspore
    if sys.argv[2] == "graph":
        mindspore.set_context(mode=mindspore.GRAPH_MODE)
sys.path.insert(0, sys.argv[1])
prog = importlib.import_module("prog")
out = {}
for name in sorted(n for n in dir(prog) if n.startswith("case_")):
    value = getattr(prog, name)()
    values = value if isinstance(value, (tuple, list)) else [value]
    flat = []
    for v in values:
        v = v.asnumpy() if hasattr(v, "asnumpy") else v.detach().numpy() if hasattr(v, "detach") else np.asarray(v)
        flat.append([float(f) for f in np.asarray(v, dtype=np.float64).ravel()])
    out[name] = flat
print(json.dumps(out))
"""


def case_results(folder: Path, side: str, timeout: int = 300) -> tuple[int, str, dict[str, list[list[float]]]]:
    """(exit code, stderr, results) of `folder`/prog.py's cases; `side`: torch, mindspore or graph."""
    proc = subprocess.run([sys.executable, "-c", RUN, str(folder), side], capture_output=True, text=True,
                          env=dict(os.environ, GLOG_v="3"), timeout=timeout)
    if proc.returncode != 0:
        return proc.returncode, proc.stderr, {}
    return 0, proc.stderr, json.loads(proc.stdout.strip().splitlines()[-1])


def assert_same_results(expected: dict[str, list[list[float]]], got: dict[str, list[list[float]]],
                        rtol: float, atol: float, context: str = "") -> None:
    """Every case of `expected` (torch's) has `got`'s values within the bounds; `context` ends a failure's message."""
    import numpy as np

    assert got.keys() == expected.keys()
    for name, values in expected.items():
        assert len(got[name]) == len(values), name
        for a, b in zip(values, got[name]):
            assert len(a) == len(b) and np.allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol), \
                f"{name}: {a} != {b}\n{context}"


def assert_port_agrees(original: Path, port: Path, sides: tuple[str, ...], rtol: float, atol: float,
                       context: str = "") -> dict[str, list[list[float]]]:
    """`original`/prog.py's cases run in torch, and `port`/prog.py's on each side (mindspore, graph), run to the end
    and give the same values; torch's results, for further checks."""
    code, stderr, expected = case_results(original, "torch")
    assert code == 0, f"torch:\n{stderr[-3000:]}"
    for side in sides:
        code, stderr, got = case_results(port, side)
        assert code == 0, f"{side}:\n{stderr[-3000:]}\n{context}"
        assert_same_results(expected, got, rtol=rtol, atol=atol, context=f"{side}\n{context}")
    return expected


def migrate_program(tmp_path: Path, text: str, support: bool = True) -> Path:
    """`torch2ms migrate` of a folder holding `text` as prog.py, run as a user runs it; the output folder, which
    holds the support module (`support`: the program needs it)."""
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "prog.py").write_text(text)
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.run([sys.executable, "-m", "torch2ms", "migrate", str(src), "--out", str(out)],
                          capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(root / "src")),
                          timeout=600)
    assert proc.returncode in (0, 1), proc.stderr
    assert ("t2ms_support.py: support module" in proc.stdout) == support, proc.stdout
    return out


def port_in_process(tmp_path: Path, text: str) -> tuple[Path, Path, str]:
    """`text` as prog.py in a folder, and its port (`migrate_text`, in this process) beside the support module in
    another: (the original's folder, the port's folder, the port's text)."""
    from torch2ms.config import Config
    from torch2ms.mappings import load_table
    from torch2ms.migrate.pipeline import migrate_text
    from torch2ms.migrate.support import module_text

    original, port = tmp_path / "torch", tmp_path / "port"
    original.mkdir()
    port.mkdir()
    (original / "prog.py").write_text(text, encoding="utf-8")
    ported = migrate_text(text, "prog.py").text
    (port / "prog.py").write_text(ported, encoding="utf-8")
    (port / "t2ms_support.py").write_text(module_text(load_table(), Config().version, "cpu"), encoding="utf-8")
    return original, port, ported


def assert_torch_free_port(text: str, written: tuple[str, ...]) -> str:
    """`text` ported (`migrate_text`, in this process): no torch name is left but the support module's, and each
    of `written` is in the port; the port's text."""
    from torch2ms.mappings import load_table
    from torch2ms.migrate.pipeline import migrate_text

    ported = migrate_text(text, "prog.py", table=load_table()).text
    assert "torch" not in ported.replace("t2ms_support", ""), ported
    for expected in written:
        assert expected in ported, f"{expected!r} not in\n{ported}"
    return ported


def assert_port_agrees_with_torch(tmp_path: Path, text: str, sides: tuple[str, ...] = ("mindspore",),
                                  rtol: float = 1e-6, atol: float = 1e-6) -> dict[str, list[list[float]]]:
    """`text` and its port (`port_in_process`) run their cases, in torch and on each side, to the same values;
    torch's results."""
    original, port, _ = port_in_process(tmp_path, text)
    return assert_port_agrees(original, port, sides, rtol=rtol, atol=atol)
