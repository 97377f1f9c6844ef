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
import functools
import ast
import json
import math
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

from ..process import configure_process
from ..transforms.support import MODULE as SUPPORT
from .code import receiver, split_layer
from . import fixtures
from . import generate as generate_module
from .generate import MIN_CASES, Case, Signature, generate, seed_cases
from .compare import Arr, Outcome, canonical_dtype, compare, compare_draws

STEPS = 3  # optimizer steps
SAMPLE_SOURCES = ("opinfo", "moduleinfo")  # cases from torch's own test database (verify/samples.py)
# Notes of a layer case whose weights were copied by the table's facts; a job's generated cases pass them on.
WEIGHTS_COPIED = "weights copied by the facts of"
INFERENCE_COMPARED = "inference mode compared"
STATE_COMPARED = "buffers compared after the call"
SCHEDULER_STEPS = 6



@functools.cache
def param_renames() -> dict[str, str]:
    """Names of MindSpore cell parameters that torch spells differently (last path component), from the
    tables' weight facts (their one source)."""
    from ..mappings import load_table
    from ..weights.facts import Facts

    return Facts.from_entries(load_table().entries.values()).renames()


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
        source[name] = tensor.detach().cpu().float().numpy().copy() if tensor.dtype.is_floating_point else \
            tensor.detach().cpu().numpy().copy()
    return source


def load_state(source: dict[str, Any], m_layer: Any, np: Any, ms: Any) -> tuple[list[str], list[str]]:
    """Copy torch tensors (`module_state`) into a cell's parameters: by name (with MindSpore's spellings,
    `param_renames`), then by order among tensors of the same size. Returns (notes, torch names not copied)."""
    renames = param_renames()
    notes: list[str] = []
    used: set[str] = set()
    pending = []
    for m_name, param in m_layer.parameters_and_names():
        head, _, last = m_name.rpartition(".")
        alt = f"{head}.{renames[last]}" if head and last in renames else renames.get(last)
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
    """Clear MindSpore's pending asynchronous error, so it is not reported by the next job's first op, and the
    state of a gradient computation that raised: MindSpore 2.10 keeps recording after it, and every later
    in-place write into a parameter then raises ("a leaf tensor that requires grad")."""
    executor = getattr(getattr(getattr(ms, "common", None), "api", None), "_pynative_executor", None)
    if executor is not None and hasattr(executor, "clear_res"):
        try:
            executor.clear_res()
        except Exception:  # noqa: BLE001 - nothing recorded to clear
            pass
    one = ms.Tensor(np.ones(1, np.float32))
    for _ in range(3):
        try:
            ms.mint.add(one, one).asnumpy()
            return
        except Exception:  # noqa: BLE001 - the error of an earlier job
            continue


def check_numpy(version: str) -> None:
    """MindSpore 2.10 is built against NumPy 1.x: with NumPy 2 plain calls raise SystemError, so refuse
    to start (the pool reports the reason and `torch2ms verify` exits 2)."""
    try:
        major = int(version.split(".")[0])
    except ValueError:
        return
    if major >= 2:
        raise RuntimeError(f"NumPy {version} is installed, but MindSpore 2.10 needs NumPy 1.x "
                           "(pip install 'numpy<2'); not running with it")


def _same_tensor(out: Any, receiver: Any) -> bool:
    """Whether MindSpore's result is its receiver: the same object, or a tensor object over the same
    memory (`x.copy_(...)` returns a new Python object whose writes reach `x`, and the other way round)."""
    if out is receiver:
        return True
    try:
        return bool(out.data_ptr() == receiver.data_ptr() and out.shape == receiver.shape
                    and out.dtype == receiver.dtype)
    except Exception:  # noqa: BLE001 - not a tensor, or one without memory of its own
        return False


class Runtime:
    """torch, MindSpore and NumPy, imported once; turns specs into tensors and results into plain values."""

    def __init__(self, device: str) -> None:
        import warnings

        warnings.filterwarnings("ignore")
        import numpy as np

        check_numpy(np.__version__)
        import torch
        import mindspore

        self.np, self.torch, self.ms = np, torch, mindspore
        torch.set_num_threads(1)
        mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
        # Synchronous kernel launches: an error belongs to the op that raised it, and a small op
        # costs microseconds instead of milliseconds of hand-over to the launch thread.
        mindspore.runtime.launch_blocking()
        self.device = device
        self.held: dict[str, Any] = {}  # arrays the current job made itself, by key (input specs name them)
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
        if "held" in spec:  # made in this worker (a sample of torch's test database): its values as they are
            return self.held[str(spec["held"])]
        if "value" in spec:
            return np.array(spec["value"], dtype=None if dtype == "bfloat16" else dtype)
        shape = tuple(spec.get("shape", ()))
        rng = np.random.default_rng(_seed_of(name, seed))
        kind = np.dtype("float32" if dtype == "bfloat16" else dtype).kind
        if kind == "b":
            return rng.random(shape) < 0.5
        if kind in "iu":
            low, high = int(spec.get("low", 0)), int(spec.get("high", 5))
            array = rng.integers(low, max(high, low + 1), size=shape).astype(dtype)
        else:
            lo, hi = float(spec.get("low", -1.0)), float(spec.get("high", 1.0))
            if kind == "c":
                real = rng.uniform(lo, hi, size=shape)
                imag = rng.uniform(lo, hi, size=shape)
                return (real + 1j * imag).astype(dtype)
            array = rng.uniform(lo, hi, size=shape).astype("float32" if dtype == "bfloat16" else dtype)
        if spec.get("zeros"):  # a share of the elements zero
            array[rng.random(shape) < float(spec["zeros"])] = 0
        return array

    def to_torch(self, array: Any, dtype: str, strided: bool = False) -> Any:
        np = self.np
        if strided:  # the same values as a view of a transposed buffer: not contiguous
            tensor = self.torch.from_numpy(np.ascontiguousarray(np.swapaxes(array, -1, -2))).transpose(-1, -2)
        else:
            tensor = self.torch.from_numpy(np.array(array, copy=True))
        if dtype == "bfloat16":
            tensor = tensor.to(self.torch.bfloat16)
        return tensor.to(self.torch_device) if self.torch_device != "cpu" else tensor

    def to_ms(self, array: Any, dtype: str, strided: bool = False) -> Any:
        np = self.np
        if strided:
            tensor = self.ms.Tensor(np.ascontiguousarray(np.swapaxes(array, -1, -2))).swapaxes(-1, -2)
        else:
            tensor = self.ms.Tensor(np.array(array, copy=True))
        if dtype == "bfloat16":
            tensor = tensor.astype(self.ms.bfloat16)
        return tensor

    def inputs(self, specs: dict[str, Any], seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
        t_env: dict[str, Any] = {}
        m_env: dict[str, Any] = {}
        for name, spec in specs.items():
            dtype = str(spec.get("dtype", "float32"))
            array = self.make_array(name, spec, seed)
            strided = spec.get("layout") == "noncontiguous" and array.ndim >= 2
            t_env[name] = self.to_torch(array, dtype, strided)
            m_env[name] = self.to_ms(array, dtype, strided)
        return t_env, m_env

    # ------------------------------------------------------------------ results
    def plain(self, value: Any) -> Any:
        return to_plain(value, self.np, self.torch, self.ms)

    def seed(self, seed: int) -> None:
        if self.torch_device == "cpu":  # torch.manual_seed also queues CUDA/XPU seeding: a millisecond each
            self.torch.random.default_generator.manual_seed(seed)
        else:
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


DRAWS = 20  # independent draws of a random case, compared by their statistics (compare.compare_draws)


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
        self.weights: dict[str, Any] | None = spec.get("weights")  # the table's weight facts for the layer
        self.weights_outcome: Outcome | None = None

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

    def _torch_layer(self, t_env: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
        """Build torch's layer of a `Ctor(...)(...)` example; the call code and a copy of its weights."""
        t_split = split_layer(self.torch_code)
        if t_split is None:
            return self.torch_code, None
        self.rt.seed(self.seed_value)
        t_layer = _eval("torch", t_split[0], t_env)
        t_env["__layer"] = t_layer
        if not isinstance(t_layer, self.rt.torch.nn.Module):
            return t_split[1], None
        if self.rt.torch_device != "cpu":
            t_layer.to(self.rt.torch_device)
        t_layer.train(self.spec.get("train") is not False)
        if self.weights is not None:
            return t_split[1], self.random_weights(t_layer)
        return t_split[1], module_state(t_layer)

    def _ms_layer(self, m_env: dict[str, Any], weights: dict[str, Any] | None) -> tuple[str, bool]:
        """Build MindSpore's layer and copy torch's weights into it; the call code and whether all were copied."""
        m_split = split_layer(self.ms_code)
        if m_split is None:
            return self.ms_code, False
        self.rt.seed(self.seed_value)
        m_layer = _eval("mindspore", m_split[0], m_env)
        m_env["__layer"] = m_layer
        copied = False
        if weights is not None and isinstance(m_layer, self.rt.ms.nn.Cell):
            m_layer.set_train(True)
            try:
                if self.weights is not None:
                    self.weights_outcome = self.copy_by_facts(weights, m_layer, self.weights)
                    copied = self.weights_outcome.ok
                else:
                    copied = self.copy_weights(weights, m_layer)
            except Exception as exc:  # noqa: BLE001 - a cell that refuses the values is MindSpore's failure
                raise ExampleError("mindspore", exc) from exc
        if isinstance(self.spec.get("train"), bool) and isinstance(m_layer, self.rt.ms.nn.Cell):
            m_layer.set_train(self.spec["train"])  # the mode the case names (a ModuleInfo's train or eval)
        return m_split[1], copied

    def compare_state(self, t_env: dict[str, Any], m_env: dict[str, Any], outcome: Outcome) -> None:
        """The layers' floating buffers after the call (running statistics after a training step), each
        against the cell's parameter of the same name or MindSpore's spelling of it (`param_renames`)."""
        t_layer, m_layer = t_env.get("__layer"), m_env.get("__layer")
        if t_layer is None or m_layer is None or not isinstance(m_layer, self.rt.ms.nn.Cell):
            return
        renames = param_renames()  # MindSpore's last name component -> torch's
        params: dict[str, Any] = {}
        for m_name, param in m_layer.parameters_and_names():
            head, _, last = m_name.rpartition(".")
            params.setdefault((f"{head}." if head else "") + renames.get(last, last), param)
        for name, buffer in t_layer.named_buffers():
            if not buffer.is_floating_point():
                continue
            param = params.get(name)
            if param is None:  # a cell that wraps its inner one (bn2d.moving_mean): the one name ending so
                ending = [p for n, p in params.items() if n.endswith("." + name)]
                param = ending[0] if len(ending) == 1 else None
            if param is None:
                outcome.fail(f"the cell has no parameter for torch's buffer {name}")
                return
            outcome.merge(self.cmp(self.rt.plain(buffer), self.rt.plain(param), f"{name} after the call",
                                   mode="values"))
        self.notes.append(STATE_COMPARED)

    def random_weights(self, t_layer: Any) -> dict[str, Any]:
        """Give torch's floating tensors seeded random values, distinct so that a wrong pairing shows in the
        outputs (running variances stay positive); a copy of the state_dict, by its names."""
        rt, np = self.rt, self.rt.np
        buffers = {name for name, _ in t_layer.named_buffers()}
        rng = np.random.default_rng(_seed_of("weights", self.seed_value))
        out: dict[str, Any] = {}
        for name, tensor in t_layer.state_dict().items():
            if tensor.is_floating_point():
                low, high = (0.5, 1.5) if name in buffers else (-0.5, 0.5)
                with rt.torch.no_grad():
                    tensor.copy_(rt.torch.from_numpy(rng.uniform(low, high, tuple(tensor.shape)).astype(np.float32)))
            out[name] = tensor.detach().cpu().numpy().copy()
        return out

    def copy_by_facts(self, source: dict[str, Any], m_layer: Any, weights: dict[str, Any]) -> Outcome:
        """Copy torch's tensors (`source`, by state_dict name) into the cell by the table's weight facts.
        Every torch tensor must have a fact, every fact must name a parameter of the cell with the right
        shape, and every parameter of the cell must be filled: otherwise the example fails."""
        from ..weights.facts import Facts, apply_transform

        facts = Facts.from_json(weights["forms"])
        layer, ms_class = str(weights["layer"]), str(weights["ms"])
        out = Outcome()
        targets = dict(m_layer.parameters_and_names())
        plan: list[tuple[str, Any, Any]] = []
        for name, array in source.items():
            placed = facts.place(layer, ms_class, name)
            if isinstance(placed, str):
                out.fail(f"weights: torch {name}: {placed}")
                continue
            if placed.ms is None:
                continue
            param = targets.get(placed.ms)
            if param is None:
                out.fail(f"weights: the fact {name} -> {placed.ms} ({placed.form}) names no parameter of the "
                         f"cell (it has {', '.join(sorted(targets)) or 'none'})")
                continue
            if any(ms_name == placed.ms for ms_name, _, _ in plan):
                out.fail(f"weights: two torch tensors go to the cell's {placed.ms} (the second is {name})")
                continue
            value = apply_transform(array, placed.transform)
            if tuple(value.shape) != tuple(param.shape):
                out.fail(f"weights: torch {name} {list(array.shape)} becomes {list(value.shape)} by the fact "
                         f"{name} -> {placed.ms}, but the cell's {placed.ms} is {list(param.shape)}")
                continue
            plan.append((placed.ms, param, value))
        filled = {ms_name for ms_name, _, _ in plan}
        for ms_name in targets:
            if ms_name not in filled and facts.ms_only(layer, ms_class, ms_name) is None and out.ok:
                out.fail(f"weights: the cell's parameter {ms_name} gets no torch tensor by the facts of "
                         f"{layer} -> {ms_class}")
        if out.ok:
            for _, param, value in plan:
                param.set_data(self.rt.ms.Tensor(value, dtype=param.dtype))
            self.notes.append(f"{WEIGHTS_COPIED} {layer} -> {ms_class} ({len(plan)} tensors, "
                              "seeded random values)")
        return out

    def inference(self, side: str, code: str, env: dict[str, Any]) -> Any:
        """The layer's output in inference mode (eval / set_train(False)): what copied weights are for."""
        layer = env["__layer"]
        layer.eval() if side == "torch" else layer.set_train(False)
        try:
            self.rt.seed(self.seed_value)
            return _run(side, code, env, self.rt)[1]
        finally:
            layer.train(True) if side == "torch" else layer.set_train(True)

    def copy_weights(self, source: dict[str, Any], m_layer: Any) -> bool:
        """Copy torch's parameters and buffers into the cell; True when every torch tensor found a home."""
        if not source:
            return False
        notes, missing = load_state(source, m_layer, self.rt.np, self.rt.ms)
        self.notes.extend(notes)
        return not missing

    def run_expr(self) -> dict[str, Any]:
        """Torch first (a case torch rejects is not MindSpore's failure), then MindSpore, then compare."""
        rt = self.rt
        t_env, m_env = self.envs(self.seed_value)
        t_code, m_code, copied, weights = self.torch_code, self.ms_code, False, None
        layered = self.kind in ("layer", "loss")
        if layered:
            t_code, weights = self._torch_layer(t_env)
        by_facts = self.weights is not None and weights is not None
        t_inference = self.inference("torch", t_code, t_env) if by_facts else None
        name = receiver(t_code) if self.kind == "inplace" else None
        t_receiver = t_env.get(name) if name else None
        rt.seed(self.seed_value)
        t_out, a = _run("torch", t_code, t_env, rt)
        t_after = rt.plain(t_receiver) if t_receiver is not None else None
        inference = None
        if layered:
            m_code, copied = self._ms_layer(m_env, weights)
            if self.weights_outcome is not None:
                if not self.weights_outcome.ok:
                    return self.result(self.weights_outcome)
                inference = self.cmp(t_inference, self.inference("mindspore", m_code, m_env), "inference mode",
                                     mode="values")
                self.notes.append(INFERENCE_COMPARED)
        m_receiver = m_env.get(name) if name else None
        rt.seed(self.seed_value)
        m_out, b = _run("mindspore", m_code, m_env, rt)
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
        if self.mode == "statistics" and (not layered or not weights or copied):
            # The randomness is in the call (not in weights each library draws for itself): compare
            # statistics over independent draws, which one draw of a few elements cannot show.
            outcome = self.cmp(a, b, mode="shape")
            outcome.notes.clear()
            if outcome.ok:
                a_draws, b_draws = self.redraw(t_code, m_code, t_env, m_env)
                outcome.merge(compare_draws([a] + a_draws, [b] + b_draws))
        if inference is not None:
            outcome.merge(inference)
        if outcome.ok and layered and self.spec.get("train") is True and copied:
            self.compare_state(t_env, m_env, outcome)
        if outcome.ok and t_after is not None and m_receiver is not None:
            try:
                m_after = rt.plain(m_receiver)
            except Exception as exc:  # noqa: BLE001
                raise ExampleError("mindspore", exc) from exc
            # (a random in-place draw that returns its receiver: the draws above compared its statistics; one
            # draw of a 0-d receiver has none to compare)
            drawn = self.mode == "statistics" and t_out is t_receiver
            outcome.merge(self.cmp(t_after, m_after, "the receiver after the in-place call", "shape" if drawn else None))
            if outcome.ok and (t_out is t_receiver) != _same_tensor(m_out, m_receiver):
                outcome.fail("torch returns its receiver, MindSpore a new tensor" if t_out is t_receiver
                             else "MindSpore returns its receiver, torch a new tensor")
        if outcome.ok and self.mode == "values" and (self.spec.get("grad") or self.kind == "loss"):
            self.check_grad(t_code, m_code, t_env, m_env, outcome)
        return self.result(outcome)

    def redraw(self, t_code: str, m_code: str, t_env: dict[str, Any], m_env: dict[str, Any]) -> tuple[list[Any], list[Any]]:
        """DRAWS - 1 more results of both codes on the same inputs (and layers), each with another seed."""
        a_draws: list[Any] = []
        b_draws: list[Any] = []
        for k in range(1, DRAWS):
            t_env2, m_env2 = self.envs(self.seed_value)
            for env, built in ((t_env2, t_env), (m_env2, m_env)):
                if "__layer" in built:
                    env["__layer"] = built["__layer"]
            seed = self.seed_value + 7919 * k
            self.rt.seed(seed)
            a_draws.append(_run("torch", t_code, t_env2, self.rt)[1])
            self.rt.seed(seed)
            b_draws.append(_run("mindspore", m_code, m_env2, self.rt)[1])
        return a_draws, b_draws

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


_NO_KERNEL = (
    re.compile(r"The kernel (\w+) unregistered"),
    re.compile(r"Create kernelmod for op (\w+) failed"),
    re.compile(r"Unsupported op \[(\w+)\] on (?:CPU|GPU)"),
    re.compile(r"(\w+) only supports Ascend"),
    re.compile(r"Not found op (\w+) on device"),
    re.compile(r"^RuntimeError: (Not implement) exception"),
)


def missing_kernel(message: str) -> str | None:
    """The op MindSpore has no kernel for on this device, from its error message."""
    for pattern in _NO_KERNEL:
        found = pattern.search(message)
        if found:
            return found.group(1)
    return None


# ------------------------------------------------------------------ one case
def _outcome(rt: Runtime, spec: dict[str, Any]) -> dict[str, Any]:
    """Run one case (both codes given) under the time limit; a result with a status:
    passed, failed, error (the torch code or the setup raised), skipped (nothing to compare,
    or no kernel on this device: `kernel` names it), rejected is not decided here."""
    timeout = float(spec.get("timeout", 30))
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        result = Job(rt, spec).run()
    except Timeout:
        result = {"status": "failed", "reason": f"timed out after {timeout:g} s"}
    except ExampleError as exc:
        if exc.side == "torch":
            result = {"status": "error", "side": "torch", "reason": f"the torch code raised {exc}"}
        elif exc.side == "setup":
            result = {"status": "error", "side": "setup", "reason": f"the setup raised {exc}"}
        else:
            kernel = missing_kernel(str(exc))
            if kernel is not None:
                result = {"status": "skipped", "kernel": kernel,
                          "reason": f"MindSpore {rt.ms.__version__} has no {rt.device.upper()} "
                                    f"kernel for {kernel}: not verifiable on this device"}
            else:
                result = {"status": "failed", "reason": f"the MindSpore code raised {exc}"}
    except MemoryError:
        result = {"status": "failed", "reason": "ran out of memory (the worker's memory limit)"}
    except Exception as exc:  # noqa: BLE001 - a bug in the comparison is still one result
        tb = traceback.format_exc(limit=3).strip().splitlines()
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        result = {"status": "error", "side": "backend",
                  "reason": f"verify backend error: {type(exc).__name__}: {first}", "notes": tb[-3:]}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if result.get("status") != "passed":
        try:
            rt.flush()
        except BaseException:  # noqa: BLE001 - a late alarm or the like; the next failure flushes again
            pass
    return result


def _torch_accepts(rt: Runtime, spec: dict[str, Any]) -> bool:
    """Whether torch runs the case (for a case the fix did not rewrite: counted only if torch takes it)."""
    signal.setitimer(signal.ITIMER_REAL, float(spec.get("timeout", 30)))
    try:
        job = Job(rt, spec)
        t_env, _ = job.envs(job.seed_value)
        code = job.torch_code
        if job.kind in ("layer", "loss"):
            code, _w = job._torch_layer(t_env)
        rt.seed(job.seed_value)
        if job.kind in ("optimizer", "scheduler"):
            _eval("torch", code, t_env)
        else:
            _run("torch", code, t_env, rt)
        return True
    except (Timeout, MemoryError, ExampleError, Exception):  # noqa: BLE001
        return False
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


# ------------------------------------------------------------------ the torch signature
def _literal_default(text: str) -> Any:
    """A docstring signature's default as a value (None when it is not a literal)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def signature_of(rt: Runtime, code: str, kind: str, inputs: dict[str, Any]) -> Signature | None:
    """The torch callable's parameters for the call of `code` (inspect, else its docstring), or None."""
    import inspect

    from ..mapping_tools import _callable_of, _doc_signatures, _positional_names, split_params

    tree = generate_module._parse(code)
    call = generate_module.target_call(tree, kind) if tree is not None else None
    if call is None:
        return None
    try:
        if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) \
                and call.func.value.id in inputs:
            name = call.func.attr
            obj = getattr(rt.torch.Tensor, name)
        else:
            name = ast.unparse(call.func).rpartition(".")[2]
            obj = eval(compile(ast.Expression(call.func), "<torch callee>", "eval"), {"torch": rt.torch})  # noqa: S307
    except (Exception, Timeout):  # noqa: BLE001
        return None
    try:
        sig = inspect.signature(_callable_of(obj))
    except (TypeError, ValueError):
        sig = None
    if sig is not None:
        params: list[tuple[str, bool]] = []
        defaults: list[tuple[str, Any]] = []
        positional_only: set[str] = set()
        keyword_only: set[str] = set()
        for param in sig.parameters.values():
            if param.kind is param.VAR_POSITIONAL:
                return None if not params else Signature(tuple(params), frozenset(positional_only))
            if param.kind is param.VAR_KEYWORD or param.name == "self":
                continue
            if param.kind is param.POSITIONAL_ONLY:
                positional_only.add(param.name)
            if param.kind is param.KEYWORD_ONLY:
                keyword_only.add(param.name)
            params.append((param.name, param.default is not param.empty))
            if isinstance(param.default, (bool, int, float)):
                defaults.append((param.name, param.default))
        return Signature(tuple(params), frozenset(positional_only), frozenset(keyword_only), tuple(defaults))
    keywords = {k.arg for k in call.keywords if k.arg}
    for text in _doc_signatures(obj, name):
        positional = _positional_names(text)
        every = [(n, d is not None) for n, d in split_params(text) if n not in ("self",)]
        names = {n for n, _ in every}
        if len(call.args) <= len(positional) and keywords <= names:
            ordered = [p for p in every if p[0] in positional] + [p for p in every if p[0] not in positional]
            return Signature(tuple(ordered), frozenset(), frozenset(n for n, _ in every if n not in positional),
                             tuple((n, v) for n, d in split_params(text) if d is not None
                                   for v in [_literal_default(d)] if isinstance(v, (bool, int, float))))
    return None


# ------------------------------------------------------------------ the fix engine
class Rewriter:
    """The torch code of each case rewritten by the fix engine itself (`torch2ms.fix.fix_text`, what
    ``scan --fix --unsafe-fixes`` runs), for a MindSpore version and a device."""

    def __init__(self) -> None:
        self._table: Any = None
        self.setup: dict[str, tuple[str, ...]] = {}  # a written code -> the imports it needs beside mindspore

    def rewrite(self, codes: list[str], names: list[str], version: str, device: str,
                form: str | None, api: str | None = None, measure: bool = False,
                runs_on: str | None = None) -> dict[str, tuple[str | None, str]]:
        """code -> (the rewritten expression, "") or (None, why there is none to run); (the expression,
        MIGRATE) where the fix engine leaves torch in it and `torch2ms migrate` writes it whole.

        `measure`: the form was measured to have no kernel on every device the fix writes it for, so
        the fix writes nothing there; write it as if it had one, to measure it again. `runs_on`: the
        device the cases run on; where the fix writes the entry's own rewrite instead of the form's
        name for that very device, the cases measure that rewrite (`rewrites_for`)."""
        from dataclasses import replace

        from ..config import Config
        from ..fix import FixError, fix_text

        table = self.table()
        if measure and api in table.entries:
            entry = table.entries[api]
            targets = tuple(replace(t, no_kernel=()) if t.api == form else t for t in entry.targets)
            table = replace(table, entries={**table.entries, api: replace(entry, targets=targets)})
        params = ", ".join(f"{n}: torch.Tensor" for n in names)
        program = "import torch\n\n\n" + "".join(
            f"def case_{k}({params}):\n    return {code}\n\n\n" for k, code in enumerate(codes))
        try:
            fixed = ast.parse(fix_text(program, "<verify>", Config(target_version=version, device=device), True,
                                       table).text)
            functions = {n.name: n for n in fixed.body if isinstance(n, ast.FunctionDef)}
        except (FixError, SyntaxError, ValueError) as exc:
            return dict.fromkeys(codes, (None, f"the fix failed: {exc}"))
        imports = _imports(fixed)
        ported: dict[str, ast.FunctionDef] = {}
        if any(_names_torch(_returned(functions.get(f"case_{k}"))) for k in range(len(codes))):
            migrated_tree = self._migrated(program, table, version, device)
            ported = {n.name: n for n in migrated_tree.body if isinstance(n, ast.FunctionDef)}
            imports = {**_imports(migrated_tree), **imports}
        out: dict[str, tuple[str | None, str]] = {}
        for k, code in enumerate(codes):
            value = _returned(functions.get(f"case_{k}"))
            if value is None:
                out[code] = (None, "the fix rewrote more than the expression")
                continue
            written = ast.unparse(value)
            by = ""
            migrated = _returned(ported.get(f"case_{k}"))
            if _names_torch(value) and migrated is not None and not _names_torch(migrated):
                written, by = ast.unparse(migrated), MIGRATE  # where the fix stops, what `migrate` writes
                value = migrated
            if _names_torch(value):
                out[code] = (None, f"the fix writes no complete rewrite: {written}")
            elif form is not None and not writes_form(written, form) and not (not measure and device == runs_on and (
                    by == MIGRATE or rewrites_for(table, api, form, version, device))):
                out[code] = (None, f"the fix writes another form: {written}")
            else:
                out[code] = (written, by)
                named = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
                self.setup[written] = tuple(sorted(imports[n] for n in named if n in imports))
        return out

    def _migrated(self, program: str, table: Any, version: str, device: str) -> ast.Module:
        """The cases' program as `torch2ms migrate` writes it (its structural passes and the support module's
        forms, which the fix engine leaves); an empty module where migrate stops."""
        from ..config import Config
        from ..migrate.pipeline import MigrateError, Options, migrate_text

        try:
            text = migrate_text(program, "<verify>", Options(Config(target_version=version, device=device)),
                                table=table).text
            return ast.parse(text)
        except (MigrateError, SyntaxError, ValueError):
            return ast.Module(body=[], type_ignores=[])

    def table(self) -> Any:
        from ..mappings import load_table

        if self._table is None:
            self._table = load_table()
        return self._table


MIGRATE = "migrate"  # the reason given with a case's code that `migrate` wrote where the fix engine stopped


def _imports(tree: ast.Module) -> dict[str, str]:
    """The module-level imports of a written program beside torch and mindspore: bound name -> import line (the
    modules a composed form names, `math`, `numpy`; the support module migrate writes)."""
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                out[alias.asname or alias.name.partition(".")[0]] = ast.unparse(ast.Import(names=[alias]))
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            for alias in node.names:
                out[alias.asname or alias.name] = ast.unparse(ast.ImportFrom(module=node.module, names=[alias], level=0))
    return {name: line for name, line in out.items() if name not in ("torch", "mindspore")}


def _returned(node: ast.FunctionDef | None) -> ast.expr | None:
    """The expression a case's function returns, if the function is that one return and nothing more."""
    if node is None or len(node.body) != 1 or not isinstance(node.body[0], ast.Return):
        return None
    return node.body[0].value


def _names_torch(node: ast.expr | None) -> bool:
    return node is not None and any(isinstance(n, ast.Name) and n.id == "torch" for n in ast.walk(node))


_SUPPORT_BUILT: set[tuple[str, str]] = set()


def support_module(table: Any, version: str, device: str) -> None:
    """Build the support module migrate writes for this version and device (`migrate.support.module_text`) and
    register it under its import name, once per worker process (only a worker: it imports MindSpore, and the
    module stands for a port's own file): the cases' MindSpore code imports it."""
    import types

    from ..mappings import parse_version
    from ..migrate.support import module_text

    if (version, device) in _SUPPORT_BUILT and SUPPORT in sys.modules:
        return
    module = types.ModuleType(SUPPORT)
    module.__file__ = f"<{SUPPORT} for MindSpore {version} on {device}>"
    exec(compile(module_text(table, parse_version(version), device), module.__file__, "exec"),  # noqa: S102
         module.__dict__)  # our own generated module (the tables' data and src/torch2ms/data/t2ms_support.py)
    sys.modules[SUPPORT] = module
    _SUPPORT_BUILT.clear()
    _SUPPORT_BUILT.add((version, device))


def rewrites_for(table: Any, api: str | None, form: str, version: str, device: str) -> bool:
    """Whether the fix, where it writes another text than `form`, writes the entry's own rewrite for
    it: a transform of the entry or of the target, and `form` the target the fix chooses on this
    version and device. Its cases then measure that rewrite (diag's composition, for instance)."""
    from ..mappings import parse_version

    entry = table.entries.get(api) if api is not None else None
    if entry is None:
        return False
    target = entry.target_for(parse_version(version), device)
    return target is not None and target.api == form and (entry.rewrite is not None or target.rewrite is not None)


def writes_form(code: str, form: str) -> bool:
    """Whether `code` calls or names the MindSpore form (a method of a class, such as
    mindspore.Tensor.abs or mindspore.nn.Cell.set_train, by its method name)."""
    if any(part[:1].isupper() for part in form.split(".")[:-1]):
        return re.search(rf"\.{re.escape(form.rpartition('.')[2])}\b", code) is not None
    return re.search(rf"(?<![\w.]){re.escape(form)}(?![\w])", code) is not None


_REWRITER = Rewriter()


# ------------------------------------------------------------------ all cases of one example and form
MAX_FAILURES = 5
MAX_EXTRA_SEEDS = 40


MakeCases = Callable[[Runtime, dict[str, Any]], list[Case]]


def run_cases(rt: Runtime, spec: dict[str, Any], progress: Any = None,
              make_cases: MakeCases | None = None) -> dict[str, Any]:
    """Generate the example's cases (or take those `make_cases` makes: samples of torch's test
    database), rewrite each with the fix engine for the job's version and device, run both codes and
    tally: every case torch accepts is agreed, stated (disagrees as a fact of the form says, by its
    `covers` tags), failed, or not rewritten (no_fix)."""
    start = time.perf_counter()
    budget = float(spec.get("budget", 120))
    kind = str(spec.get("kind") or "function")
    rewrite = dict(spec["rewrite"])
    covers = set(spec.get("covers") or ())
    inputs = dict(spec.get("inputs") or {})
    if make_cases is None:
        cases = generate(spec, signature_of(rt, spec["torch"], kind, inputs))
        names = list(inputs)
    else:
        cases = make_cases(rt, spec)
        names = sorted({name for case in cases for name in case.inputs})
    tally: dict[str, int] = dict.fromkeys(("agreed", "stated", "failed", "rejected", "no_fix", "uncompared"), 0)
    failures: list[dict[str, Any]] = []
    failed_tags: dict[str, int] = {}
    stated_tags: dict[str, int] = {}
    differences: dict[str, str] = {}
    notes: list[str] = []
    errs = [0.0, 0.0]
    modes: set[str] = set()
    written: dict[str, tuple[str | None, str]] = {}
    status_error: str | None = None
    skipped: str | None = None
    no_fix_reason = ""
    by_migrate = 0
    extra = 0
    index = 0
    crashed = {int(c["index"]): str(c.get("how") or "") for c in spec.get("crashes") or [] if c.get("index") is not None}
    while index < len(cases):
        case = cases[index]
        index += 1
        ms_code: str | None
        if index - 1 in crashed:  # this case killed a worker before: a disagreement, not run again
            ms_code = written.get(case.torch, (None, ""))[0] or "?"
            result: dict[str, Any] = {"status": "failed",
                                      "reason": f"the MindSpore code raised a fatal error: {crashed[index - 1]}"}
        else:
            if time.perf_counter() - start > budget:
                notes.append(f"stopped after {index - 1} of {len(cases)} cases: the time budget of {budget:g} s is spent")
                break
            if progress is not None:
                progress(index - 1, case.tags)
            if case.torch not in written:
                todo = sorted({c.torch for c in cases if c.torch not in written})
                written.update(_REWRITER.rewrite(todo, names, str(rewrite.get("version", "2.10")),
                                                 str(rewrite.get("device", "cpu")),
                                                 None if spec.get("own") else spec.get("form"), spec.get("api"),
                                                 bool(rewrite.get("measure")), rt.device))
            ms_code, why = written[case.torch]
            case_spec = {k: v for k, v in spec.items()
                         if k not in ("rewrite", "covers", "form", "budget", "crashes", "own")}
            case_spec.update(case.to_dict())
            case_spec.pop("tags", None)
            by_migrate += ms_code is not None and why == MIGRATE
            setup = _REWRITER.setup.get(ms_code or "", ())
            if setup:  # the modules the written code names: imported as the written file imports them
                if f"import {SUPPORT}" in setup:  # the support module migrate writes beside the port
                    support_module(_REWRITER.table(), str(rewrite.get("version", "2.10")), str(rewrite.get("device", "cpu")))
                case_spec["mindspore_setup"] = [*setup, *(case_spec.get("mindspore_setup") or ())]
            if ms_code is None:
                if _torch_accepts(rt, dict(case_spec, mindspore="None")):
                    tally["no_fix"] += 1
                    no_fix_reason = no_fix_reason or why
                elif case.tags[0] == "example":
                    status_error = "the torch code of the example does not run"
                    break
                else:
                    tally["rejected"] += 1
                continue
            case_spec["mindspore"] = ms_code
            result = _outcome(rt, case_spec)
        status = result.get("status")
        if status == "error":
            if case.tags[0] == "example":
                status_error = str(result.get("reason"))
                break
            if result.get("side") == "torch":
                tally["rejected"] += 1
                continue
            status = "failed"
        if status == "skipped":
            if result.get("kernel"):
                skipped = str(result.get("reason"))
                notes.append(f"stopped: {ms_code} needs a kernel this device lacks ({result.get('kernel')})")
                break
            tally["uncompared"] += 1
            continue
        for note in result.get("notes") or ():
            if str(note).startswith((WEIGHTS_COPIED, INFERENCE_COMPARED, STATE_COMPARED)) and note not in notes:
                notes.append(str(note))
        if result.get("compare"):
            modes.add(str(result["compare"]))
        for k, key in enumerate(("max_abs_err", "max_rel_err")):
            value = result.get(key)
            if isinstance(value, (int, float)) and math.isfinite(value):
                errs[k] = max(errs[k], float(value))
        if status == "passed":
            tally["agreed"] += 1
            continue
        for tag in case.tags:  # what disagreed, by tag: the evidence a fact's `covers` cites
            differences.setdefault(tag, str(result.get("reason") or "")[:200])
        if covers & set(case.tags) or "all" in covers:
            tally["stated"] += 1
            for tag in case.tags:
                stated_tags[tag] = stated_tags.get(tag, 0) + 1
        else:
            tally["failed"] += 1
            for tag in case.tags:
                failed_tags[tag] = failed_tags.get(tag, 0) + 1
            if len(failures) < MAX_FAILURES:
                failures.append({"tags": case.tags, "torch": case.torch, "mindspore": ms_code,
                                 "inputs": case.inputs, "reason": result.get("reason")})
        ran = tally["agreed"] + tally["stated"] + tally["failed"]
        if make_cases is None and index == len(cases) and ran < MIN_CASES and extra < MAX_EXTRA_SEEDS and ran:
            more = seed_cases(spec, len(cases) + 1 + extra, min(8, MAX_EXTRA_SEEDS - extra))
            extra += len(more)
            cases.extend(more)
    ran = tally["agreed"] + tally["stated"] + tally["failed"]
    if by_migrate:
        notes.append(f"{by_migrate} case(s) ran as `migrate` writes them: the fix engine leaves them")
    forms = sorted({w for w, _ in written.values() if w})
    ran_on_device = ran + tally["uncompared"] > 0
    # where every case ran the entry's own rewrite instead of the form's name (`rewrites_for`), the form's
    # kernel did not run: nothing is measured of it (its devices come from elsewhere)
    named = spec.get("own") or not spec.get("form") or any(writes_form(w, str(spec["form"])) for w in forms)
    out: dict[str, Any] = {"cases": ran, **tally, "form": spec.get("form"), "written": forms[:3],
                           "runs": (True if named else None) if ran_on_device else (False if skipped is not None else None),
                           "max_abs_err": errs[0], "max_rel_err": errs[1], "notes": notes,
                           "compare": "/".join(sorted(modes)) or None}
    if differences:
        out["differences"] = differences
    if failed_tags:
        out["failed_tags"] = failed_tags
    if stated_tags:
        out["stated_tags"] = stated_tags
    if failures:
        out["failures"] = failures
    if status_error is not None:
        out.update(status="error", reason=status_error)
    elif skipped is not None:
        out.update(status="skipped", reason=skipped)
    elif tally["failed"]:
        first = failures[0]
        out.update(status="failed",
                      reason=f"{tally['failed']} of {ran} cases disagree ({', '.join(first['tags'])}: "
                             f"{first['reason']}; torch: {first['torch']}; MindSpore: {first['mindspore']})")
    elif tally["agreed"]:
        out.update(status="passed", reason="")
    elif ran:  # every case differs, each as a fact states: known, but the form reproduces torch nowhere
        tag, why = next(iter(differences.items()))
        out.update(status="differs", reason=f"every case differs, as the form's facts state ({tag}: {why})")
    elif tally["no_fix"]:
        out.update(status="skipped", reason=f"no case to run: {no_fix_reason}")
    else:
        out.update(status="skipped", reason="the results are objects, not values: nothing to compare"
                      if tally["uncompared"] else "no case ran")
    return out


def run_one(rt: Runtime, spec: dict[str, Any], progress: Any = None,
            make_cases: MakeCases | None = None) -> dict[str, Any]:
    """One job: an example's generated cases as the fix writes them (`rewrite` in the spec), or
    one explicit pair of codes (`mindspore` in the spec: FILE:LINE and the backend's own tests).
    `progress(index, tags)` is told each case before it runs (the pool resubmits a job whose case
    crashed the worker, with that case in `crashes`)."""
    start = time.perf_counter()
    try:
        if spec.get("rewrite"):
            result = run_cases(rt, spec, progress, make_cases)
        else:
            result = _outcome(rt, spec)
            result.pop("side", None)
            result.pop("kernel", None)
    except Timeout:
        result = {"status": "failed", "reason": "timed out"}
    except Exception as exc:  # noqa: BLE001 - a bug in the backend is still one result
        tb = traceback.format_exc(limit=3).strip().splitlines()
        result = {"status": "error", "reason": f"verify backend error: {type(exc).__name__}: {exc}", "notes": tb[-3:]}
    result["id"] = spec.get("id")
    if spec.get("rewrite"):
        result["source"] = str(spec.get("source") or "generator")
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


def protocol_stream() -> Any:
    """A private copy of stdout for the protocol; file descriptor 1 then points at stderr, so that library
    prints never corrupt the protocol."""
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    return proto
Emit = Callable[[dict[str, Any]], None]
Handler = Callable[[dict[str, Any], Emit], dict[str, Any]]


def serve(start: Callable[[], tuple[dict[str, Any], Handler]], memory_mb: int) -> int:
    """The worker protocol: `start()` imports the libraries and returns (ready facts, job handler); then one
    JSON result line per JSON job line on a private copy of stdout (library prints go to stderr)."""
    configure_process()  # among others: end with the pool's process (process.PARENT_ENV)
    proto = protocol_stream()
    try:
        info, handle = start()
    except BaseException as exc:  # noqa: BLE001
        proto.write(json.dumps({"ready": False, "reason": f"{type(exc).__name__}: {exc}"}) + "\n")
        return 1
    signal.signal(signal.SIGALRM, _alarm)
    _limit_memory(memory_mb)
    proto.write(json.dumps(dict({"ready": True}, **info, pid=os.getpid())) + "\n")

    def emit(message: dict[str, Any]) -> None:  # a line before the result (e.g. which case runs now)
        proto.write(json.dumps(message) + "\n")

    for line in sys.stdin:
        if not line.strip():
            continue
        result = handle(json.loads(line), emit)
        proto.write(json.dumps(result, default=str) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="torch2ms-verify-worker")
    parser.add_argument("--device", default="cpu", choices=("cpu", "gpu", "ascend"))
    parser.add_argument("--memory-mb", type=int, default=4096)
    args = parser.parse_args(argv)

    def start() -> tuple[dict[str, Any], Handler]:
        rt = Runtime(args.device)
        info = {"torch_version": rt.torch.__version__, "mindspore_version": rt.ms.__version__, "device": args.device}

        def handle(spec: dict[str, Any], emit: Emit) -> dict[str, Any]:
            if spec.get("catalog") or spec.get("source") in SAMPLE_SOURCES:
                from . import samples  # torch's test database: imported by the first job that needs it

                return samples.handle(rt, spec, emit)
            # the pool learns which case a crash hit
            return run_one(rt, spec, lambda index, tags: emit({"progress": index, "tags": tags}))

        return info, handle

    return serve(start, args.memory_mb)


if __name__ == "__main__":
    sys.exit(main())
