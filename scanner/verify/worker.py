"""A long-lived verify worker: imports torch and MindSpore once, then runs jobs one at a time.

Started by `torch2ms.verify.pool` as ``python -m torch2ms.verify.worker --device cpu
--memory-mb N``. Protocol, one JSON object per line: the worker first writes
``{"ready": true, ...versions...}``, then for every job line read from stdin it
writes one result line. Only this module (and only inside the worker process)
imports torch and MindSpore; the scanner core never does.

Library output printed to stdout would corrupt the protocol, so the worker keeps
a private copy of its stdout for results and points file descriptor 1 at stderr.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import resource
import signal
import sys
import time
import traceback
import zlib
from collections.abc import Callable
from typing import Any

from .code import call_forms, receiver, split_layer
from . import fixtures
from .compare import Arr, Outcome, canonical_dtype, compare

STEPS = 3  # optimizer steps
SCHEDULER_STEPS = 6

# Names of MindSpore cell parameters that torch spells differently (last path component).
PARAM_RENAMES = {
    "gamma": "weight",
    "beta": "bias",
    "moving_mean": "running_mean",
    "moving_variance": "running_var",
    "embedding_table": "weight",
}


class ExampleError(Exception):
    """The example could not run; `side` is 'torch', 'mindspore' or 'setup'."""

    def __init__(self, side: str, exc: BaseException) -> None:
        self.side = side
        self.exc = exc
        super().__init__(f"{type(exc).__name__}: {error_line(exc)}")


def error_line(exc: BaseException) -> str:
    """The useful first line of an exception's message (MindSpore puts it after a header)."""
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    for line in text:
        if line.strip() and not line.startswith("-") and "Error Message" not in line:
            first = line.strip()
            break
    return first[:300]


class Timeout(BaseException):
    """Raised by SIGALRM inside a job (a BaseException so example code cannot swallow it easily)."""


def _alarm(_signum: int, _frame: Any) -> None:
    raise Timeout()


def _seed_of(name: str, seed: int) -> list[int]:
    return [seed, zlib.crc32(name.encode())]


def to_plain(value: Any, np: Any, torch: Any = None, ms: Any = None, depth: int = 0) -> Any:
    """A result as a plain value for `compare` (NumPy only); `torch` or `ms` may be None (not imported here)."""
    if depth > 6:
        return ("object", type(value).__name__)
    if torch is not None and isinstance(value, torch.Tensor):
        t = value.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        if t.is_quantized:
            return ("object", "quantized tensor")
        if t.layout != torch.strided:
            t = t.to_dense()
        dtype = canonical_dtype(str(t.dtype))
        if t.is_complex():
            t = t.resolve_conj()
        if t.dtype == torch.bfloat16:
            t = t.float()
        return Arr(t.resolve_neg().numpy(), dtype)
    if ms is not None and isinstance(value, ms.Tensor):
        dtype = canonical_dtype(str(value.dtype))
        if dtype == "bfloat16":
            value = value.astype(ms.float32)
        return Arr(value.asnumpy(), dtype)
    if isinstance(value, bool):
        return Arr(np.array(value), "py:bool")
    if isinstance(value, int):
        return Arr(np.array(value), "py:int")
    if isinstance(value, float):
        return Arr(np.array(value), "py:float")
    if isinstance(value, complex):
        return Arr(np.array(value), "py:complex")
    if isinstance(value, (np.ndarray, np.generic)):
        return Arr(np.asarray(value), canonical_dtype(str(np.asarray(value).dtype)))
    if isinstance(value, (list, tuple)):
        return [to_plain(v, np, torch, ms, depth + 1) for v in value]
    if torch is not None and isinstance(value, torch.dtype):
        return ("dtype", canonical_dtype(str(value)))
    if ms is not None and isinstance(value, ms.dtype.Type):
        return ("dtype", canonical_dtype(str(value)))
    return ("object", type(value).__name__)


def module_state(t_layer: Any) -> dict[str, Any]:
    """A torch module's parameters and buffers by name, as NumPy arrays (floats as float32)."""
    source: dict[str, Any] = {}
    for name, tensor in list(t_layer.named_parameters()) + list(t_layer.named_buffers()):
        source[name] = tensor.detach().cpu().float().numpy() if tensor.dtype.is_floating_point else \
            tensor.detach().cpu().numpy()
    return source


def load_state(source: dict[str, Any], m_layer: Any, np: Any, ms: Any) -> tuple[list[str], list[str]]:
    """Copy torch tensors (`module_state`) into a cell's parameters: by name (with MindSpore's spellings,
    `PARAM_RENAMES`), then by order among tensors of the same size. Returns (notes, torch names not copied)."""
    notes: list[str] = []
    used: set[str] = set()
    pending = []
    for m_name, param in m_layer.parameters_and_names():
        head, _, last = m_name.rpartition(".")
        alt = f"{head}.{PARAM_RENAMES[last]}" if head and last in PARAM_RENAMES else PARAM_RENAMES.get(last)
        match = next((n for n in (m_name, alt) if n and n in source and n not in used
                      and source[n].size == int(np.prod(param.shape))), None)
        if match is None:
            pending.append((m_name, param))
            continue
        used.add(match)
        param.set_data(ms.Tensor(source[match].reshape(param.shape), dtype=param.dtype))
    for m_name, param in pending:  # by order, where the sizes agree
        size = int(np.prod(param.shape))
        match = next((n for n in source if n not in used and source[n].size == size), None)
        if match is None:
            continue
        used.add(match)
        param.set_data(ms.Tensor(source[match].reshape(param.shape), dtype=param.dtype))
        notes.append(f"weights: torch {match} -> MindSpore {m_name} by order")
    missing = [n for n in source if n not in used and not n.endswith("num_batches_tracked")]
    if missing:
        notes.append("weights not copied: " + ", ".join(missing))
    return notes, missing


def flush_pending(ms: Any, np: Any) -> None:
    """Clear MindSpore's pending asynchronous error, so it is not reported by the next job's first op."""
    one = ms.Tensor(np.ones(1, np.float32))
    for _ in range(3):
        try:
            ms.mint.add(one, one).asnumpy()
            return
        except Exception:  # noqa: BLE001 - the error of an earlier job
            continue


class Runtime:
    """torch, MindSpore and NumPy, imported once; turns specs into tensors and results into plain values."""

    def __init__(self, device: str) -> None:
        import warnings

        warnings.filterwarnings("ignore")
        import numpy as np
        import torch
        import mindspore

        self.np, self.torch, self.ms = np, torch, mindspore
        torch.set_num_threads(1)
        mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
        self.device = device
        self.torch_device = "cpu"
        if device == "gpu":
            if not torch.cuda.is_available():
                raise RuntimeError("torch reports no CUDA device")
            mindspore.set_device("GPU")
            self.torch_device = "cuda"
        elif device == "ascend":
            mindspore.set_device("Ascend")  # torch runs on the CPU as the reference
        else:
            mindspore.set_device("CPU")
        try:  # MindSpore 2.10 with NumPy 2 leaves one pending error behind on its first conversion
            mindspore.mint.add(mindspore.Tensor([1.0]), mindspore.Tensor([1.0]))
        except Exception:  # noqa: BLE001
            pass
        # Warm up the kernels most examples use, so the first job's time is not the import's.
        a = mindspore.Tensor(np.ones((2, 2), np.float32))
        mindspore.grad(lambda v: mindspore.mint.sin(v).sum())(a)
        t = torch.ones(2, 2, requires_grad=True)
        torch.sin(t).sum().backward()

    def flush(self) -> None:
        flush_pending(self.ms, self.np)

    # ------------------------------------------------------------------ inputs
    def make_array(self, name: str, spec: dict[str, Any], seed: int) -> Any:
        np = self.np
        dtype = spec.get("dtype", "float32")
        if "value" in spec:
            return np.array(spec["value"], dtype=None if dtype == "bfloat16" else dtype)
        shape = tuple(spec.get("shape", ()))
        rng = np.random.default_rng(_seed_of(name, seed))
        kind = np.dtype("float32" if dtype == "bfloat16" else dtype).kind
        if kind == "b":
            return rng.random(shape) < 0.5
        if kind in "iu":
            low, high = int(spec.get("low", 0)), int(spec.get("high", 5))
            return rng.integers(low, max(high, low + 1), size=shape).astype(dtype)
        lo, hi = float(spec.get("low", -1.0)), float(spec.get("high", 1.0))
        if kind == "c":
            real = rng.uniform(lo, hi, size=shape)
            imag = rng.uniform(lo, hi, size=shape)
            return (real + 1j * imag).astype(dtype)
        return rng.uniform(lo, hi, size=shape).astype("float32" if dtype == "bfloat16" else dtype)

    def to_torch(self, array: Any, dtype: str) -> Any:
        tensor = self.torch.from_numpy(self.np.array(array, copy=True))
        if dtype == "bfloat16":
            tensor = tensor.to(self.torch.bfloat16)
        return tensor.to(self.torch_device) if self.torch_device != "cpu" else tensor

    def to_ms(self, array: Any, dtype: str) -> Any:
        tensor = self.ms.Tensor(self.np.array(array, copy=True))
        if dtype == "bfloat16":
            tensor = tensor.astype(self.ms.bfloat16)
        return tensor

    def inputs(self, specs: dict[str, Any], seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
        t_env: dict[str, Any] = {}
        m_env: dict[str, Any] = {}
        for name, spec in specs.items():
            dtype = str(spec.get("dtype", "float32"))
            array = self.make_array(name, spec, seed)
            t_env[name] = self.to_torch(array, dtype)
            m_env[name] = self.to_ms(array, dtype)
        return t_env, m_env

    # ------------------------------------------------------------------ results
    def plain(self, value: Any) -> Any:
        return to_plain(value, self.np, self.torch, self.ms)

    def seed(self, seed: int) -> None:
        self.torch.manual_seed(seed)
        self.ms.set_seed(seed)
        self.np.random.seed(seed % (2**32))


def _eval(side: str, code: str, env: dict[str, Any]) -> Any:
    try:
        return eval(compile(code, f"<{side} example>", "eval"), env)  # noqa: S307 - the table's own examples
    except (Timeout, MemoryError):
        raise
    except BaseException as exc:  # noqa: BLE001 - any failure of the example is a result
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise ExampleError(side, exc) from exc


def _run(side: str, code: str, env: dict[str, Any], rt: Runtime) -> tuple[Any, Any]:
    """Evaluate and convert to a plain value; MindSpore raises many kernel errors only on conversion."""
    value = _eval(side, code, env)
    try:
        return value, rt.plain(value)
    except (Timeout, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001
        raise ExampleError(side, exc) from exc


def _exec_setup(side: str, lines: list[str], env: dict[str, Any]) -> None:
    for line in lines:
        try:
            exec(compile(line, f"<{side} setup>", "exec"), env)  # noqa: S102 - import lines of the user's file
        except BaseException as exc:  # noqa: BLE001
            if isinstance(exc, (KeyboardInterrupt, Timeout, MemoryError)):
                raise
            raise ExampleError("setup", exc) from exc


class Job:
    """One example run: the two environments, the comparison and the result."""

    def __init__(self, rt: Runtime, spec: dict[str, Any]) -> None:
        self.rt = rt
        self.spec = spec
        self.kind = spec.get("kind") or "function"
        self.torch_code = spec["torch"]
        self.ms_code = spec["mindspore"]
        self.specs = dict(spec.get("inputs") or {})
        self.seed_value = int(spec.get("seed", 0))
        self.rtol = spec.get("rtol")
        self.atol = spec.get("atol")
        self.mode = str(spec.get("compare") or ("statistics" if spec.get("random") else "values"))
        self.dtypes = {canonical_dtype(k): canonical_dtype(v) for k, v in (spec.get("dtypes") or {}).items()}
        self.notes: list[str] = []

    def cmp(self, a: Any, b: Any, where: str = "result", mode: str | None = None) -> Outcome:
        return compare(a, b, self.rtol, self.atol, where=where, mode=mode or self.mode, dtypes=self.dtypes)

    # environments ---------------------------------------------------------
    def envs(self, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
        if self.spec.get("fixture"):
            try:
                fixtures.ensure(str(self.spec["fixture"]), self.rt.torch, self.rt.ms)
            except fixtures.FixtureError as exc:
                raise ExampleError("setup", exc) from exc
        t_in, m_in = self.rt.inputs(self.specs, seed)
        t_env: dict[str, Any] = {"torch": self.rt.torch, "__builtins__": __builtins__}
        m_env: dict[str, Any] = {"mindspore": self.rt.ms, "__builtins__": __builtins__}
        _exec_setup("torch", self.spec.get("torch_setup") or [], t_env)
        _exec_setup("mindspore", self.spec.get("mindspore_setup") or [], m_env)
        t_env.update(t_in)
        m_env.update(m_in)
        return t_env, m_env

    # kinds ------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        if self.kind == "optimizer":
            return self.run_optimizer()
        if self.kind == "scheduler":
            return self.run_scheduler()
        return self.run_expr()

    def _layers(self, t_env: dict[str, Any], m_env: dict[str, Any]) -> tuple[str, str, bool]:
        """Build both layers of a `Ctor(...)(...)` example and copy torch's weights; returns the call codes."""
        t_split, m_split = split_layer(self.torch_code), split_layer(self.ms_code)
        if t_split is None or m_split is None:
            return self.torch_code, self.ms_code, False
        self.rt.seed(self.seed_value)
        t_layer = _eval("torch", t_split[0], t_env)
        m_layer = _eval("mindspore", m_split[0], m_env)
        t_env["__layer"], m_env["__layer"] = t_layer, m_layer
        copied = False
        if isinstance(t_layer, self.rt.torch.nn.Module) and isinstance(m_layer, self.rt.ms.nn.Cell):
            if self.rt.torch_device != "cpu":
                t_layer.to(self.rt.torch_device)
            t_layer.train(True)
            m_layer.set_train(True)
            copied = self.copy_weights(t_layer, m_layer)
        return t_split[1], m_split[1], copied

    def copy_weights(self, t_layer: Any, m_layer: Any) -> bool:
        """Copy torch's parameters and buffers into the cell; True when every torch tensor found a home."""
        source = module_state(t_layer)
        if not source:
            return False
        notes, missing = load_state(source, m_layer, self.rt.np, self.rt.ms)
        self.notes.extend(notes)
        return not missing

    def run_expr(self) -> dict[str, Any]:
        rt = self.rt
        t_env, m_env = self.envs(self.seed_value)
        t_code, m_code, copied = self.torch_code, self.ms_code, False
        if self.kind in ("layer", "loss"):
            t_code, m_code, copied = self._layers(t_env, m_env)
        rt.seed(self.seed_value)
        _t_out, a = _run("torch", t_code, t_env, rt)
        inplace_after = None
        if self.kind == "inplace":
            name = receiver(t_code)
            if name and name in self.specs:
                inplace_after = rt.plain(t_env[name])
        rt.seed(self.seed_value)
        _m_out, b = _run("mindspore", m_code, m_env, rt)
        if self.mode == "statistics" and copied and self.kind == "layer":
            # Flagged random for its initial weights; with torch's weights copied, try the values.
            if self.cmp(a, b, mode="values").ok:
                self.mode = "values"
                self.notes.append("values compared after copying torch's weights")
        outcome = self.cmp(a, b)
        if not outcome.ok and self.mode == "values":
            # Is torch itself random here (same inputs, another seed)? Then compare statistics only.
            t_env2, _ = self.envs(self.seed_value)
            if "__layer" in t_env:
                t_env2["__layer"] = t_env["__layer"]
            rt.seed(self.seed_value + 1)
            _, again = _run("torch", t_code, t_env2, rt)
            if not self.cmp(a, again).ok and self.cmp(a, again, mode="statistics").ok:
                self.notes.append("random result detected (torch differs between seeds)")
                self.mode = "statistics"
                outcome = self.cmp(a, b)
        if outcome.ok and inplace_after is not None:
            outcome.merge(self.cmp(inplace_after, b, "torch input after the in-place call"))
        if outcome.ok and self.mode == "values" and (self.spec.get("grad") or self.kind == "loss"):
            self.check_grad(t_code, m_code, t_env, m_env, outcome)
        return self.result(outcome)

    def _first_float(self, value: Any, lib: Any) -> Any:
        if isinstance(value, (list, tuple)):
            for v in value:
                found = self._first_float(v, lib)
                if found is not None:
                    return found
            return None
        if isinstance(value, lib.Tensor) and (value.is_floating_point() if lib is self.rt.torch
                                              else self.rt.ms.ops.is_floating_point(value)):
            return value
        return None

    def check_grad(self, t_code: str, m_code: str, t_env: dict[str, Any], m_env: dict[str, Any],
                   outcome: Outcome) -> None:
        """d(sum of the first float output)/d(first float input), where both libraries can compute it."""
        rt = self.rt
        floats = [n for n, s in self.specs.items()
                  if rt.np.dtype(str(s.get("dtype", "float32")).replace("bfloat16", "float32")).kind == "f"]
        name = floats[0] if floats else None
        if name is None:
            self.notes.append("grad: no float input")
            return
        t_env = dict(t_env)
        t_env[name] = t_env[name].detach().clone().requires_grad_(True)
        rt.seed(self.seed_value)
        try:
            out = self._first_float(_eval("torch", t_code, t_env), rt.torch)
            (t_grad,) = rt.torch.autograd.grad(out.sum(), [t_env[name]], allow_unused=True)
        except Exception as exc:  # noqa: BLE001
            self.notes.append(f"grad: torch cannot compute it ({type(exc).__name__})")
            return

        def forward(value: Any) -> Any:
            env = dict(m_env)
            env[name] = value
            return self._first_float(_eval("mindspore", m_code, env), rt.ms).sum()

        rt.seed(self.seed_value)
        try:
            m_grad = rt.ms.grad(forward, grad_position=0)(m_env[name])
        except Exception as exc:  # noqa: BLE001
            self.notes.append(f"grad: MindSpore cannot compute it ({type(exc).__name__})")
            return
        if t_grad is None:
            self.notes.append("grad: torch output does not depend on the input")
            return
        outcome.merge(self.cmp(rt.plain(t_grad), rt.plain(m_grad), f"gradient wrt {name}", mode="values"))
        self.notes.append(f"gradient wrt {name} compared")

    def run_optimizer(self) -> dict[str, Any]:
        rt = self.rt
        np = rt.np
        t_env, m_env = self.envs(self.seed_value)
        t_opt = _eval("torch", self.torch_code, t_env)
        m_opt = _eval("mindspore", self.ms_code, m_env)
        t_params = [p for group in t_opt.param_groups for p in group["params"]]
        try:
            m_params = list(m_opt.parameters)
        except Exception as exc:  # noqa: BLE001
            raise ExampleError("mindspore", exc) from exc
        outcome = Outcome()
        if len(t_params) != len(m_params):
            outcome.fail(f"torch optimizer has {len(t_params)} parameters, MindSpore {len(m_params)}")
            return self.result(outcome)
        rng = np.random.default_rng(_seed_of("grad", self.seed_value))
        for step in range(STEPS):
            grads = [rng.standard_normal(tuple(p.shape)).astype(np.float32) for p in t_params]
            try:
                for p, g in zip(t_params, grads):
                    p.grad = rt.to_torch(g, "float32").to(p.dtype)
                t_opt.step()
            except Exception as exc:  # noqa: BLE001
                raise ExampleError("torch", exc) from exc
            try:
                m_opt(tuple(rt.ms.Tensor(g).astype(p.dtype) for p, g in zip(m_params, grads)))
            except Exception as exc:  # noqa: BLE001
                raise ExampleError("mindspore", exc) from exc
            a = [rt.plain(p) for p in t_params]
            try:
                b = [rt.plain(p) for p in m_params]
            except Exception as exc:  # noqa: BLE001 - MindSpore reports kernel errors when the value is read
                raise ExampleError("mindspore", exc) from exc
            outcome.merge(self.cmp(a, b, f"parameters after step {step + 1}", mode="values"))
            if not outcome.ok:
                break
        self.notes.append(f"{STEPS} optimizer steps on the same parameters and gradients")
        return self.result(outcome)

    def run_scheduler(self) -> dict[str, Any]:
        rt = self.rt
        t_env, m_env = self.envs(self.seed_value)
        t_sched = _eval("torch", self.torch_code, t_env)
        m_sched = _eval("mindspore", self.ms_code, m_env)
        plateau = "Plateau" in type(t_sched).__name__
        a: list[Any] = []
        b: list[Any] = []
        for _ in range(SCHEDULER_STEPS):
            try:
                a.append(rt.plain(list(t_sched.get_last_lr()) if hasattr(t_sched, "get_last_lr") else
                                  [g["lr"] for g in t_sched.optimizer.param_groups]))
                t_sched.optimizer.step()
                t_sched.step(1.0) if plateau else t_sched.step()
            except Exception as exc:  # noqa: BLE001
                raise ExampleError("torch", exc) from exc
            try:
                lrs = m_sched.get_last_lr() if hasattr(m_sched, "get_last_lr") else \
                    [g["lr"] for g in m_sched.optimizer.param_groups]
                b.append(rt.plain(list(lrs)))
                m_sched.step(1.0) if plateau else m_sched.step()
            except Exception as exc:  # noqa: BLE001
                raise ExampleError("mindspore", exc) from exc
        outcome = self.cmp(a, b, "learning rates", mode="values")
        self.notes.append(f"learning rates over {SCHEDULER_STEPS} steps")
        return self.result(outcome)

    def result(self, outcome: Outcome) -> dict[str, Any]:
        if outcome.compared == 0 and outcome.ok and self.mode == "values":
            return {"status": "skipped", "reason": "the results are objects, not values: nothing to compare",
                    "notes": self.notes + outcome.notes}
        return {
            "status": "passed" if outcome.ok else "failed",
            "reason": outcome.reason,
            "max_abs_err": outcome.max_abs_err,
            "max_rel_err": outcome.max_rel_err,
            "compare": self.mode,
            "notes": self.notes + outcome.notes,
        }


FORM_KINDS = {"function": 1, "layer": 0, "loss": 0, "optimizer": 1, "scheduler": 1}


def _torch_params(rt: Runtime, spec: dict[str, Any], layer: bool) -> tuple[list[tuple[str, bool]], set[str]] | None:
    """The torch callable's parameters (name, has a default) in order, and the positional-only names."""
    import inspect

    try:
        node = ast.parse(spec["torch"].strip(), mode="eval").body
        if not isinstance(node, ast.Call):
            return None
        if layer:
            if not isinstance(node.func, ast.Call):
                return None
            node = node.func
        env: dict[str, Any] = {"torch": rt.torch}
        target = eval(compile(ast.Expression(node.func), "<torch callee>", "eval"), env)  # noqa: S307
        signature = inspect.signature(target)
    except (Exception, Timeout):  # noqa: BLE001 - builtins have no signature; no forms then
        return None
    params: list[tuple[str, bool]] = []
    positional_only: set[str] = set()
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            break
        if param.kind == param.POSITIONAL_ONLY:
            positional_only.add(param.name)
        params.append((param.name, param.default is not param.empty))
    return params, positional_only


def run_forms(rt: Runtime, spec: dict[str, Any], result: dict[str, Any]) -> None:
    """Also run the keyword and defaults forms of the example's call; a form that fails fails the result."""
    kind = str(spec.get("kind") or "function")
    if kind not in FORM_KINDS or spec.get("compare") == "shape":
        return
    layer = kind in ("layer", "loss")
    found = _torch_params(rt, spec, layer)
    if found is None:
        return
    params, positional_only = found
    renames = dict(spec.get("renames") or {})
    forms = call_forms(spec["torch"], spec["mindspore"], params, layer, FORM_KINDS[kind], renames,
                       set(spec.get("defaults_differ") or ()), set(spec.get("dropped") or ()) | positional_only)
    notes = result.setdefault("notes", [])
    for form, t_code, m_code in forms:
        sub = dict(spec, torch=t_code, mindspore=m_code, forms=False)
        signal.setitimer(signal.ITIMER_REAL, float(spec.get("timeout", 30)))  # each form has its own time
        try:
            rt.flush()
            outcome = Job(rt, sub).run()
        except ExampleError as exc:
            if exc.side == "torch":
                notes.append(f"{form} form not run: torch rejects {t_code}")
                continue
            kernel = missing_kernel(str(exc))
            if kernel is not None:
                notes.append(f"{form} form not run: no kernel for {kernel}")
                continue
            outcome = {"status": "failed", "reason": f"the MindSpore code raised {exc}"}
        if outcome.get("status") == "failed":
            result["status"] = "failed"
            result["reason"] = f"{form} form: {outcome.get('reason')} (torch: {t_code}; MindSpore: {m_code})"
            return
        if outcome.get("status") == "passed":
            for key in ("max_abs_err", "max_rel_err"):
                result[key] = max(float(result.get(key) or 0.0), float(outcome.get(key) or 0.0))
            notes.append(f"{form} form passed: {t_code}")


_NO_KERNEL = (
    re.compile(r"The kernel (\w+) unregistered"),
    re.compile(r"Create kernelmod for op (\w+) failed"),
    re.compile(r"Unsupported op \[(\w+)\] on (?:CPU|GPU)"),
    re.compile(r"(\w+) only supports Ascend"),
    re.compile(r"Not found op (\w+) on device (?:CPU|GPU)"),
)


def missing_kernel(message: str) -> str | None:
    """The op MindSpore has no kernel for on this device, from its error message."""
    for pattern in _NO_KERNEL:
        found = pattern.search(message)
        if found:
            return found.group(1)
    return None


def run_one(rt: Runtime, spec: dict[str, Any]) -> dict[str, Any]:
    start = time.perf_counter()
    timeout = float(spec.get("timeout", 30))
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        rt.flush()
        result = Job(rt, spec).run()
        if result.get("status") == "passed" and spec.get("forms", True):
            run_forms(rt, spec, result)
    except Timeout:
        result = {"status": "failed", "reason": f"timed out after {timeout:g} s"}
    except ExampleError as exc:
        if exc.side == "torch":
            result = {"status": "error", "reason": f"the torch code raised {exc}"}
        elif exc.side == "setup":
            result = {"status": "error", "reason": f"the setup raised {exc}"}
        else:
            kernel = missing_kernel(str(exc))
            if kernel is not None:
                result = {"status": "skipped", "reason": f"MindSpore {rt.ms.__version__} has no {rt.device.upper()} "
                                                         f"kernel for {kernel}: not verifiable on this device"}
            else:
                result = {"status": "failed", "reason": f"the MindSpore code raised {exc}"}
    except MemoryError:
        result = {"status": "failed", "reason": "ran out of memory (the worker's memory limit)"}
    except Exception as exc:  # noqa: BLE001 - a bug in the comparison is still one result
        tb = traceback.format_exc(limit=3).strip().splitlines()
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        result = {"status": "error", "reason": f"verify backend error: {type(exc).__name__}: {first}",
                  "notes": tb[-3:]}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    try:
        rt.flush()
    except BaseException:  # noqa: BLE001 - a late alarm or the like; the next job flushes again
        pass
    result["id"] = spec.get("id")
    result["seconds"] = round(time.perf_counter() - start, 4)
    return result


def _limit_memory(megabytes: int) -> None:
    """Cap the address space at what the worker uses now plus `megabytes`."""
    if megabytes <= 0:
        return
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            size_kb = next(int(line.split()[1]) for line in handle if line.startswith("VmSize:"))
    except (OSError, StopIteration, ValueError):
        size_kb = 0
    limit = size_kb * 1024 + megabytes * 1024 * 1024
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def serve(start: Callable[[], tuple[dict[str, Any], Callable[[dict[str, Any]], dict[str, Any]]]],
          memory_mb: int) -> int:
    """The worker protocol: `start()` imports the libraries and returns (ready facts, job handler); then one
    JSON result line per JSON job line on a private copy of stdout (library prints go to stderr)."""
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)  # library prints go to stderr, never into the protocol
    try:
        info, handle = start()
    except BaseException as exc:  # noqa: BLE001
        proto.write(json.dumps({"ready": False, "reason": f"{type(exc).__name__}: {exc}"}) + "\n")
        return 1
    signal.signal(signal.SIGALRM, _alarm)
    _limit_memory(memory_mb)
    proto.write(json.dumps(dict({"ready": True}, **info, pid=os.getpid())) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        result = handle(json.loads(line))
        proto.write(json.dumps(result, default=str) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="torch2ms-verify-worker")
    parser.add_argument("--device", default="cpu", choices=("cpu", "gpu", "ascend"))
    parser.add_argument("--memory-mb", type=int, default=4096)
    args = parser.parse_args(argv)

    def start() -> tuple[dict[str, Any], Callable[[dict[str, Any]], dict[str, Any]]]:
        rt = Runtime(args.device)
        info = {"torch_version": rt.torch.__version__, "mindspore_version": rt.ms.__version__, "device": args.device}
        return info, lambda spec: run_one(rt, spec)

    return serve(start, args.memory_mb)


if __name__ == "__main__":
    sys.exit(main())
