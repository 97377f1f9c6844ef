"""Print, for a migrated timm, whether each model that fails in MindSpore has a finding where it fails.

Usage: python benchmarks/timm_silent.py --port DIR [--families a,b] [--graph] [--timeout S]

The port's scan is the user's to-do list: whatever raises must be on it. For each family under timm/models
(its smallest model, chosen as benchmarks/timm_zoo.py chooses), a MindSpore process with torch refused
imports the port as `timm`, builds the model (`pretrained=False`, 8 classes) and runs one forward pass on a
random input of the model's own input size in PyNative mode (and GRAPH with `--graph`). Where that raises,
the frames of the traceback inside the port are compared with the warnings and errors of `torch2ms scan`
over the port:

- pointed: a finding on a line of a frame of the traceback inside the port;
- before: none there, but a finding on a line of the port that ran before the failure (traced; in GRAPH mode
  also the lines of every construct of the model's cells, which the compiler reads);
- silent: neither (the port's to-do list says nothing about what ran up to the failure).

A model that runs is not judged here (whether it computes torch's values is benchmarks/timm_zoo.py's
question). Prints one row per model and a summary line.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE / "benchmarks"))

from timm_zoo import smallness  # noqa: E402

RUN = r'''
import json, re, sys, traceback, warnings
warnings.simplefilter("ignore")


class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("torch", "torchvision", "torchaudio"):
            raise ModuleNotFoundError(f"No module named '{name}' (refused: the port runs without torch)")
        return None


sys.meta_path.insert(0, Refuse())
port, what, mode = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, port)


def frames(exc):
    """The traceback's frames inside the port, then the lines of the port a GRAPH-mode compile error names
    ("In file PATH:LINE"), innermost last."""
    out = []
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename.startswith(port):
            out.append([frame.filename[len(port):].lstrip("/"), frame.lineno])
    named = re.findall(r"In file (\S+?):(\d+)", str(exc))
    out.extend([path[len(port):].lstrip("/"), int(line)] for path, line in reversed(named) if path.startswith(port))
    return out


try:
    import numpy
    import mindspore
    mindspore.set_context(mode=mindspore.GRAPH_MODE if mode == "graph" else mindspore.PYNATIVE_MODE)
    import timm
except BaseException as exc:  # noqa: BLE001 - the import itself failed: report it
    print(json.dumps({"stage": "import", "error": f"{type(exc).__name__}: {exc}"[:300], "frames": frames(exc)}))
    sys.exit(0)
if what == "list":
    from timm.models._registry import _model_to_module
    print(json.dumps({n: _model_to_module.get(n, "").rpartition(".")[2] for n in timm.list_models()}))
    sys.exit(0)
ran = set()  # the lines of the port that ran (build and forward), for "before"


def trace(frame, event, arg):
    if not frame.f_code.co_filename.startswith(port):
        return None
    ran.add((frame.f_code.co_filename[len(port):].lstrip("/"), frame.f_lineno))
    return trace_lines


def trace_lines(frame, event, arg):
    if event == "line":
        ran.add((frame.f_code.co_filename[len(port):].lstrip("/"), frame.f_lineno))
    return trace_lines


stage = "build"
sys.settrace(trace)
try:
    model = timm.create_model(what, pretrained=False, num_classes=8)
    model.set_train(False)
    stage = "forward"
    if mode == "graph":  # GRAPH mode compiles every cell's construct rather than running it: count its lines
        import inspect
        for _, cell in model.cells_and_names():
            construct = type(cell).construct
            path = inspect.getsourcefile(construct) or ""
            if path.startswith(port):
                source, first = inspect.getsourcelines(construct)
                ran.update((path[len(port):].lstrip("/"), first + i) for i in range(len(source)))
    size = tuple(getattr(model, "pretrained_cfg", {}).get("input_size", (3, 224, 224)))
    x = mindspore.Tensor(numpy.random.default_rng(0).uniform(-1, 1, (1, *size)).astype(numpy.float32))
    out = model(x)
    (out[0] if isinstance(out, (tuple, list)) else out).asnumpy()
    print(json.dumps({"stage": "ran"}))
except BaseException as exc:  # noqa: BLE001 - what failed, and where in the port
    sys.settrace(None)
    print(json.dumps({"stage": stage, "error": f"{type(exc).__name__}: {exc}"[:300], "frames": frames(exc),
                      "ran": sorted(ran)}))
'''


def side(port: Path, what: str, mode: str, timeout: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as work:
        script = Path(work) / "run.py"
        script.write_text(RUN, encoding="utf-8")
        try:
            done = subprocess.run([sys.executable, str(script), str(port), what, mode], capture_output=True,
                                  text=True, timeout=timeout, env=dict(os.environ, GLOG_v="3"))
        except subprocess.TimeoutExpired:
            return {"stage": "timeout", "error": f"no answer within {timeout:.0f} s", "frames": []}
    lines = done.stdout.strip().splitlines()
    if not lines:
        return {"stage": "crash", "error": done.stderr.strip()[-300:], "frames": []}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def findings(port: Path) -> dict[str, list[int]]:
    """The lines of the port's warnings and errors, by file (relative to the port)."""
    done = subprocess.run([sys.executable, "-m", "torch2ms", "scan", str(port / "timm"), "--output-format", "json",
                           "--no-progress"], capture_output=True, text=True, cwd=HERE)
    out: dict[str, list[int]] = {}
    for entry in json.loads(done.stdout)["files"]:
        path = str(Path(entry["path"]).resolve().relative_to(port))
        for item in entry["diagnostics"]:
            if item["severity"] in ("warning", "error"):
                out.setdefault(path, []).append(int(item["span"]["start_line"]))
    return out


def judge(result: dict[str, Any], lines: dict[str, list[int]]) -> str:
    port_frames = [(path, line) for path, line in result.get("frames", [])]
    if any(line in lines.get(path, []) for path, line in port_frames):
        return "pointed"
    if any(line in lines.get(path, []) for path, line in result.get("ran", [])):
        return "before"
    return "silent"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=Path, required=True, help="a folder holding a migrated timm/")
    parser.add_argument("--families", help="only these families (files under timm/models), comma-separated")
    parser.add_argument("--graph", action="store_true", help="also run in GRAPH mode")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds for one model in one mode")
    args = parser.parse_args()
    port = args.port.resolve()
    start = time.perf_counter()
    listed = side(port, "list", "pynative", args.timeout)
    if "stage" in listed:
        print(f"the port does not import: {listed['error']}")
        return 1
    families: dict[str, list[str]] = {}
    for name, family in listed.items():
        families.setdefault(family, []).append(name)
    wanted = {f.strip() for f in args.families.split(",")} if args.families else set(families)
    chosen = [sorted(names, key=smallness)[0] for family, names in sorted(families.items()) if family in wanted]
    lines = findings(port)
    print(f"port scan: {sum(map(len, lines.values()))} warnings and errors in {len(lines)} files")
    counts: dict[str, int] = {}
    modes = ["pynative", "graph"] if args.graph else ["pynative"]
    for name in chosen:
        for mode in modes:
            result = side(port, name, mode, args.timeout)
            verdict = "ran" if result["stage"] == "ran" else judge(result, lines)
            counts[verdict] = counts.get(verdict, 0) + 1
            where = result["frames"][-1] if result.get("frames") else None
            print(f"{listed[name]:>20} {name:<32} {mode:<8} {verdict:<8} "
                  + (f"{where[0]}:{where[1]} " if where else "") + result.get("error", "")[:100], flush=True)
    failed = sum(n for verdict, n in counts.items() if verdict != "ran")
    print(f"summary: {len(chosen)} models, {len(modes)} mode(s): ran {counts.get('ran', 0)}, failed {failed}: "
          f"pointed {counts.get('pointed', 0)}, before {counts.get('before', 0)}, silent {counts.get('silent', 0)}; "
          f"{time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
