"""A worker that runs whole usage programs on one side: torch, or MindSpore with torch made unimportable.

Started by `torch2ms.verify.pool.Pool` (its ``worker``) as ``python -m
torch2ms.verify.program_worker --side torch|mindspore --device D --memory-mb N``; it speaks the
pool's protocol (a ``ready`` line, then one JSON result line per JSON job line).

A program (see `torch2ms.verify.corpus`) is module source that builds its data and
layers at top level and exposes its result as ``run()`` (or a global ``result``).
A job is ``{"id", "source", "filename", "timeout", "out"[, "weights", "modules"]}`` (`modules`: a folder put
first on the module path, holding modules the program imports, as a port's support module):

1. the source runs as a fresh module after seeding NumPy and the library;
2. torch side: the parameters and buffers of every top-level ``nn.Module`` are saved to
   ``OUT/ID-weights.npz`` (``GLOBAL.param`` keys); MindSpore side: the job's ``weights`` file
   is copied into the top-level Cells of the same names (`worker.load_state`), as a user
   copies a checkpoint;
3. ``run()`` is called and its value saved as a plain value (`compare.plain_to_json`, arrays
   in ``OUT/ID-result.npz``).

The result line is ``{"id", "status": "ok", "result", "arrays"[, "weights"], "notes"}`` or
``{"id", "status": "raised", "stage", "error", "message", "kernel"}`` (stage: ``import``,
``weights``, ``run`` or ``convert``; kernel: the op MindSpore has no kernel for, if that is
the error), or ``{"id", "status": "timeout"}``.
"""

from __future__ import annotations

import argparse
import builtins
import importlib.abc
import os
import re
import signal
import sys
from collections.abc import Callable, Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

from .compare import plain_to_json
from .worker import Handler, Timeout, error_line, flush_pending, load_state, missing_kernel, module_state, serve, to_plain

# Packages that must not import on the MindSpore side: a rewritten program has to run without them.
BLOCKED = frozenset({"torch", "torchvision", "torchaudio", "torchtext", "functorch"})


class _NoTorch(importlib.abc.MetaPathFinder):
    """Makes ``import torch`` (and the other BLOCKED packages) fail as if they were not installed."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named '{fullname}' (torch is not available on the MindSpore side)",
                                      name=fullname)
        return None


class Side:
    """One library, imported once, and what running a program needs of it."""

    def __init__(self, side: str, device: str = "cpu") -> None:
        import warnings

        warnings.filterwarnings("ignore")
        import numpy as np

        self.np = np
        self.side = side
        self.torch: Any = None
        self.ms: Any = None
        if side == "torch":
            import torch

            torch.set_num_threads(1)
            self.torch = torch
            self.version = str(torch.__version__)
        else:
            sys.meta_path.insert(0, _NoTorch())
            for name in list(sys.modules):
                if name.split(".")[0] in BLOCKED:
                    del sys.modules[name]
            import mindspore

            mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
            mindspore.set_device({"cpu": "CPU", "gpu": "GPU", "ascend": "Ascend"}[device])
            self.ms = mindspore
            self.version = str(mindspore.__version__)
            self.flush()

    def seed(self) -> None:
        self.np.random.seed(0)
        if self.torch is not None:
            self.torch.manual_seed(0)
        else:
            self.ms.set_seed(0)

    def flush(self) -> None:
        """Clear MindSpore's pending asynchronous error, so the next program does not inherit it."""
        if self.ms is not None:
            flush_pending(self.ms, self.np)

    def modules(self, env: dict[str, Any]) -> dict[str, Any]:
        """Top-level layers of the program: torch Modules or MindSpore Cells, by global name."""
        base = self.torch.nn.Module if self.torch is not None else self.ms.nn.Cell
        return {name: value for name, value in env.items() if isinstance(value, base)}

    def save_weights(self, env: dict[str, Any], path: str) -> int:
        arrays = {f"{name}.{key}": value for name, module in self.modules(env).items()
                  for key, value in module_state(module).items()}
        self.np.savez(path, **arrays)
        return len(arrays)

    def load_weights(self, env: dict[str, Any], path: str) -> list[str]:
        notes: list[str] = []
        with self.np.load(path, allow_pickle=False) as data:
            stored = {key: data[key] for key in data.files}
        for name, cell in self.modules(env).items():
            source = {key[len(name) + 1:]: value for key, value in stored.items() if key.startswith(name + ".")}
            if source:
                found, _missing = load_state(source, cell, self.np, self.ms)
                notes.extend(f"{name}: {note}" for note in found)
        return notes


def _raised(stage: str, exc: BaseException) -> dict[str, Any]:
    message = error_line(exc)
    return {"status": "raised", "stage": stage, "error": type(exc).__name__, "message": message,
            "kernel": missing_kernel(str(exc))}


def run_program(side: Side, job: dict[str, Any]) -> dict[str, Any]:
    ident = str(job["id"])
    out = str(job["out"])
    modules = job.get("modules")  # a folder of modules the program imports (a port's support module)
    if modules and str(modules) not in sys.path:
        sys.path.insert(0, str(modules))
    stem = re.sub(r"[^\w.-]", "_", ident)
    env: dict[str, Any] = {"__name__": "usage_program", "__file__": str(job.get("filename", ident)),
                           "__builtins__": builtins}
    result: dict[str, Any] = {"notes": []}
    stage = "import"
    try:
        side.flush()
        side.seed()
        code = compile(str(job["source"]), str(job.get("filename", ident)), "exec")
        exec(code, env)  # noqa: S102 - the benchmark's own corpus, in a worker process with limits
        stage = "weights"
        if side.torch is not None:
            weights = os.path.join(out, f"{stem}-weights.npz")
            if side.save_weights(env, weights):
                result["weights"] = weights
        elif job.get("weights"):
            result["notes"].extend(side.load_weights(env, str(job["weights"])))
        stage = "run"
        side.seed()
        if callable(env.get("run")):
            value = env["run"]()
        elif "result" in env:
            value = env["result"]
        else:
            raise LookupError("the program defines neither run() nor result")
        stage = "convert"  # MindSpore raises many kernel errors only when a value is read
        plain = to_plain(value, side.np, side.torch, side.ms)
        arrays: dict[str, Any] = {}
        result["result"] = plain_to_json(plain, arrays)
        result["arrays"] = os.path.join(out, f"{stem}-result.npz")
        side.np.savez(result["arrays"], **arrays)
        result["status"] = "ok"
    except Timeout:
        return {"status": "timeout"}
    except MemoryError:
        return {"status": "raised", "stage": stage, "error": "MemoryError",
                "message": "ran out of memory (the worker's memory limit)", "kernel": None}
    except BaseException as exc:  # noqa: BLE001 - any failure of the program is its result
        if isinstance(exc, KeyboardInterrupt):
            raise
        return _raised(stage, exc)
    return result


Runner = Callable[[Side, dict[str, Any]], dict[str, Any]]


def run_job(side: Side, job: dict[str, Any], runner: Runner = run_program) -> dict[str, Any]:
    """One job under its time limit (`runner`: how a program runs, `run_program` or a training run)."""
    signal.setitimer(signal.ITIMER_REAL, float(job.get("timeout", 30)))
    try:
        result = runner(side, job)
    except Timeout:
        result = {"status": "timeout"}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    try:
        side.flush()
    except BaseException:  # noqa: BLE001 - a late alarm or the like; the next program flushes again
        pass
    result["id"] = job.get("id")
    return result


def main(argv: list[str] | None = None, runner: Runner = run_program, prog: str = "torch2ms-program-worker") -> int:
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--side", required=True, choices=("torch", "mindspore"))
    parser.add_argument("--device", choices=("cpu", "gpu", "ascend"), default="cpu")
    parser.add_argument("--memory-mb", type=int, default=4096)
    args = parser.parse_args(argv)

    def start() -> tuple[dict[str, Any], Handler]:
        side = Side(args.side, args.device)
        return {"side": args.side, "version": side.version}, lambda job, _emit: run_job(side, job, runner)

    return serve(start, args.memory_mb)


if __name__ == "__main__":
    sys.exit(main())
