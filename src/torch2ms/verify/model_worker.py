"""A worker for one side of a whole network: torch (`--side torch`) or MindSpore (`--side mindspore`).

Started by `torch2ms.verify.pool.Pool` as ``python -m torch2ms.verify.model_worker --side S``,
with the verify worker's protocol (a ready line, then one JSON result line per JSON job line)
and its limits (SIGALRM per job, an address-space cap). The torch side never imports MindSpore;
the MindSpore side never imports torch: it refuses ``import torch`` outright, so a port that
still needs torch fails here as it would on a machine without torch.

Jobs (``op``):
- torch ``read``: load a checkpoint (.pt/.pth/.bin with ``torch.load(weights_only=True)``, or
  .safetensors) and write its tensors to an .npz file;
- torch ``run`` / mindspore ``run``: import a file, build the network with a factory, copy the
  weights (MindSpore: by a placement plan), run the inputs in inference mode (MindSpore: in
  PyNative and in GRAPH mode) and optionally one training step; write everything to an .npz;
- mindspore ``write``: write a MindSpore checkpoint from an .npz and a plan.

Arrays travel in .npz files (`save_arrays` / `load_arrays`); results are small JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.abc
import importlib.util
import json
import os
import signal
import sys
import time
import traceback
import zlib
from typing import Any

from ..writing import temp_path
from .worker import Handler, Timeout, serve

BLOCKED = ("torch",)  # what the MindSpore side refuses to import


class _Refuse(importlib.abc.MetaPathFinder):
    """Make `import torch` fail in the MindSpore worker, as on a machine without torch."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named '{fullname}' (the MindSpore side of torch2ms runs "
                                      "without torch)", name=fullname)
        return None


# ---------------------------------------------------------------------------------- arrays
def save_arrays(path: str, arrays: dict[str, Any]) -> None:
    """Arrays by name in one .npz file (names kept in a manifest: any text is a valid name)."""
    import numpy as np

    names = list(arrays)
    payload = {f"a{k}": np.asarray(arrays[name]) for k, name in enumerate(names)}
    payload["__names__"] = np.array(json.dumps(names))
    tmp = f"{path}.tmp{os.getpid()}.npz"
    np.savez(tmp, **payload)
    os.replace(tmp, path)


def load_arrays(path: str) -> dict[str, Any]:
    import numpy as np

    with np.load(path, allow_pickle=False) as data:
        names = json.loads(str(data["__names__"]))
        return {name: data[f"a{k}"] for k, name in enumerate(names)}


def make_inputs(specs: list[dict[str, Any]], seed: int, prefix: str = "input") -> list[Any]:
    """Seeded arrays for the input specs; a spec {"tuple": [...]} gives a tuple of arrays (a recurrent state)."""
    import numpy as np

    out: list[Any] = []
    for index, spec in enumerate(specs):
        if "tuple" in spec:
            out.append(tuple(make_inputs(list(spec["tuple"]), seed, f"{prefix}{index}.")))
            continue
        rng = np.random.default_rng([seed, zlib.crc32(f"{prefix}{index}".encode())])
        dtype = str(spec.get("dtype") or "float32")
        shape = tuple(int(d) for d in spec["shape"])
        kind = np.dtype(dtype).kind
        if kind == "b":
            out.append(rng.random(shape) < 0.5)
        elif kind in "iu":
            low, high = int(spec.get("low", 0)), int(spec.get("high", 10))
            out.append(rng.integers(low, max(high, low + 1), size=shape).astype(dtype))
        else:
            low_f, high_f = float(spec.get("low", -1.0)), float(spec.get("high", 1.0))
            out.append(rng.uniform(low_f, high_f, size=shape).astype(dtype))
    return out


def store_inputs(inputs: list[Any], arrays: dict[str, Any]) -> list[int | None]:
    """The inputs under input/K (a tuple's items under input/K.J); the structure: None or a tuple's length."""
    structure: list[int | None] = []
    for k, value in enumerate(inputs):
        if isinstance(value, tuple):
            for j, item in enumerate(value):
                arrays[f"input/{k}.{j}"] = item
            structure.append(len(value))
        else:
            arrays[f"input/{k}"] = value
            structure.append(None)
    return structure


def load_inputs(arrays: dict[str, Any], structure: list[int | None], convert: Any) -> list[Any]:
    return [convert(arrays[f"input/{k}"]) if n is None else tuple(convert(arrays[f"input/{k}.{j}"]) for j in range(n))
            for k, n in enumerate(structure)]


def import_file(path: str, name: str) -> Any:
    """Import a source file. Inside a package (folders with __init__.py) it is imported by its dotted name, with
    the folder above the package first on sys.path, so that its relative imports work; otherwise as a module
    named `name`, with its folder first on sys.path (sibling imports). Modules of an earlier job of the same
    package are forgotten first."""
    folder, stem = os.path.split(os.path.abspath(path))
    parts = [stem[:-3] if stem.endswith(".py") else stem]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        folder, package = os.path.split(folder)
        parts.insert(0, package)
    for loaded in [m for m in sys.modules if m == parts[0] or m.startswith(parts[0] + ".")]:
        del sys.modules[loaded]
    if folder in sys.path:
        sys.path.remove(folder)
    sys.path.insert(0, folder)
    if len(parts) > 1:
        importlib.invalidate_caches()
        return importlib.import_module(".".join(parts))
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def build(module: Any, factory: dict[str, Any]) -> Any:
    target = getattr(module, str(factory["name"]), None)
    if target is None:
        raise LookupError(f"{factory['name']} is not defined in {module.__file__}")
    return target(*factory.get("args", []), **factory.get("kwargs", {}))


class StageError(Exception):
    """A stage of a job failed; `stage` names it (import, build, load, forward, graph, train)."""

    def __init__(self, stage: str, exc: BaseException) -> None:
        self.stage = stage
        text = str(exc).strip().splitlines()
        first = next((line.strip() for line in text if line.strip() and not line.startswith("-")
                      and "Error Message" not in line), "")
        super().__init__(f"{type(exc).__name__}: {first[:400]}")


def _stage(name: str, func: Any, *args: Any) -> Any:
    try:
        return func(*args)
    except (Timeout, MemoryError, KeyboardInterrupt):
        raise
    except BaseException as exc:  # noqa: BLE001 - any failure of the user's code is a result
        raise StageError(name, exc) from exc


# ---------------------------------------------------------------------------------- layer tracing
def user_frame(roots: tuple[str, ...], skip: Any = None) -> str | None:
    """`file:line` of the innermost frame of the user's code (a file under one of `roots`, not an installed
    package) whose `self` is not `skip`: where a layer was built, or from where it was called."""
    frame: Any = sys._getframe(1)
    while frame is not None:
        name = os.path.abspath(frame.f_code.co_filename)
        if name.startswith(roots) and "site-packages" not in name and \
                (skip is None or frame.f_locals.get("self") is not skip):
            return f"{name}:{frame.f_lineno}"
        frame = frame.f_back
    return None


class Tracer:
    """Hooks on every layer of a network: for each call, in the order the calls finish, the layer's qualified
    name, class, where it was built and from where it was called (in the user's files), and its inputs and
    outputs (arrays under `layer/K/in...` and `layer/K/out...`)."""

    def __init__(self, side: _Side, base: type, roots: list[str]) -> None:
        self.side, self.base = side, base
        self.roots = tuple(os.path.join(os.path.abspath(r), "") for r in roots)
        self.created: dict[int, str | None] = {}
        self.keep: list[Any] = []  # every object built while recording (its id stays its own)
        self.calls: list[dict[str, Any]] = []
        self.original_init: Any = None

    def __enter__(self) -> Tracer:
        """Record where each layer is built (the base class's __init__ wrapped while the network is built)."""
        base: Any = self.base
        original, tracer = base.__init__, self
        self.original_init = original

        def init(obj: Any, *args: Any, **kwargs: Any) -> None:
            if id(obj) not in tracer.created:
                tracer.created[id(obj)] = user_frame(tracer.roots, obj)
                tracer.keep.append(obj)
            original(obj, *args, **kwargs)

        base.__init__ = init
        return self

    def __exit__(self, *exc: Any) -> None:
        base: Any = self.base
        base.__init__ = self.original_init

    def code(self, cls: type) -> str | None:
        """`file:first-last` of the forward (construct) of a layer class of the user's files."""
        import inspect

        for method in ("construct", "forward"):
            func = cls.__dict__.get(method)
            if func is None:
                continue
            try:
                path = os.path.abspath(inspect.getsourcefile(func) or "")
                lines, first = inspect.getsourcelines(func)
            except (OSError, TypeError):
                return None
            return f"{path}:{first}-{first + len(lines) - 1}" if path.startswith(self.roots) else None
        return None

    def hook(self, layers: list[tuple[str, Any]], arrays: dict[str, Any]) -> list[Any]:
        handles = []
        for name, layer in layers:
            def record(layer: Any, inputs: Any, output: Any, name: str = name) -> None:
                k = len(self.calls)
                call: dict[str, Any] = {"name": name, "class": type(layer).__name__, "built": self.created.get(id(layer)),
                        "called": user_frame(self.roots), "code": self.code(type(layer)), "in": [], "out": []}
                for group, value in (("in", tuple(inputs)), ("out", output)):
                    for path, item in self.side.flatten(value):
                        if isinstance(item, self.side.tensor):
                            call[group].append(self.side.describe(path, item, arrays, f"layer/{k}/{group}"))
                self.calls.append(call)

            handles.append(layer.register_forward_hook(record))
        return handles


def write_whole(out: str, suffix: str, save: Any, data: Any) -> None:
    """`save(data, path)` to a temporary file beside `out` renamed into place (swept by the next write there if
    this worker is killed): `out` is written whole or not at all."""
    tmp = temp_path(out, suffix)
    try:
        _stage("write", save, data, tmp)
        os.replace(tmp, out)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def _transform(step: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in (step.get("transform") or {}).items())


class _Side:
    """What both sides do alike: flatten a network's output into named tensors and describe them."""

    tensor: type = object
    ops: tuple[str, ...] = ()  # the jobs it takes

    def array(self, tensor: Any) -> tuple[Any, str]:
        raise NotImplementedError

    def flatten(self, value: Any, path: str = "") -> list[tuple[str, Any]]:
        """`(out, (h, c))` -> [("[0]", out), ("[1][0]", h), ("[1][1]", c)]; a lone tensor is ("", tensor)."""
        if isinstance(value, (list, tuple)):
            return [item for k, v in enumerate(value) for item in self.flatten(v, f"{path}[{k}]")]
        if isinstance(value, dict):
            return [item for k, v in value.items() for item in self.flatten(v, f"{path}[{k!r}]")]
        return [(path, value)]

    def describe(self, path: str, value: Any, arrays: dict[str, Any], group: str) -> dict[str, Any]:
        if isinstance(value, self.tensor):
            array, dtype = self.array(value)
            arrays[f"{group}/{path}"] = array
            return {"path": path, "shape": list(array.shape), "dtype": dtype}
        return {"path": path, "value": repr(value)[:200]}


# ---------------------------------------------------------------------------------- torch side
class TorchSide(_Side):
    ops = ("read", "run", "write_state")

    def __init__(self, device: str) -> None:
        import numpy as np
        import torch

        self.np, self.torch = np, torch
        self.tensor = torch.Tensor
        torch.set_num_threads(1)
        self.device = device
        self.info = {"torch_version": torch.__version__}

    def array(self, tensor: Any) -> tuple[Any, str]:
        tensor = tensor.detach().cpu()
        dtype = str(tensor.dtype).rpartition(".")[2]
        if tensor.dtype == self.torch.bfloat16:
            tensor = tensor.float()
        return tensor.numpy().copy(), dtype  # a copy: a later step may change the tensor in place

    def read(self, job: dict[str, Any]) -> dict[str, Any]:
        path = str(job["path"])
        notes: list[str] = []
        state, where = self.find_state(_stage("read", self.load_file, path))
        if where:
            notes.append(f"the state_dict is under {where!r} of the checkpoint")
        arrays, keys = {}, {}
        for name, tensor in state.items():
            array, dtype = self.array(tensor)
            arrays[name] = array
            keys[name] = {"shape": list(array.shape), "dtype": dtype}
        save_arrays(str(job["out"]), arrays)
        return {"status": "ok", "keys": keys, "notes": notes}

    def write_state(self, job: dict[str, Any]) -> dict[str, Any]:
        """A torch state_dict from an .npz and a plan (`convert-weights --reverse`): each MindSpore tensor under
        its torch name(s), the transform undone; .safetensors by the suffix, else torch.save; atomically."""
        from ..weights.facts import undo_transform

        torch = self.torch
        arrays = load_arrays(str(job["npz"]))
        state = {}
        for step in job["plan"]:
            value = undo_transform(arrays[str(step["ms"])], _transform(step))
            tensor = torch.from_numpy(self.np.array(value, copy=True, order="C"))  # a tie: two tensors
            if step.get("dtype") == "bfloat16":
                tensor = tensor.to(torch.bfloat16)
            state[str(step["torch"])] = tensor
        out = str(job["out"])
        if out.endswith(".safetensors"):
            from safetensors.torch import save_file

            write_whole(out, ".pt", save_file, {k: v.contiguous() for k, v in state.items()})
        else:
            write_whole(out, ".pt", torch.save, state)
        return {"status": "ok", "written": len(state)}

    def load_file(self, path: str) -> Any:
        """A checkpoint's contents: safetensors by its suffix, anything else with torch.load(weights_only=True)."""
        if path.endswith(".safetensors"):
            from safetensors.torch import load_file

            return load_file(path)
        return self.torch.load(path, map_location="cpu", weights_only=True)

    def find_state(self, obj: Any) -> tuple[dict[str, Any], str]:
        """The name -> tensor mapping in a checkpoint: the object itself, or the one entry of it that is one."""
        torch = self.torch

        def is_state(value: Any) -> bool:
            return isinstance(value, dict) and bool(value) and all(
                isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in value.items())

        if is_state(obj):
            return dict(obj), ""
        if isinstance(obj, dict):
            found = [(k, v) for k, v in obj.items() if is_state(v)]
            if len(found) == 1:
                return dict(found[0][1]), str(found[0][0])
            if found:
                raise StageError("read", ValueError(
                    "the checkpoint holds several state dicts: " + ", ".join(repr(k) for k, _ in found)))
        raise StageError("read", ValueError(f"no state_dict (a dict of names to tensors) in the checkpoint "
                                            f"(it holds a {type(obj).__name__})"))

    def run(self, job: dict[str, Any]) -> dict[str, Any]:
        torch = self.torch
        module = _stage("import", import_file, str(job["path"]), "torch2ms_original")
        seed = int(job.get("seed", 0))
        torch.manual_seed(seed)
        tracer = Tracer(self, torch.nn.Module, [os.path.dirname(str(job["path"]))])
        with tracer if job.get("locate") else contextlib.nullcontext():
            model = _stage("build", build, module, job["factory"])
        if not isinstance(model, torch.nn.Module):
            raise StageError("build", TypeError(f"the factory returned a {type(model).__name__}, not a torch.nn.Module"))
        if job.get("weights"):
            state, _ = self.find_state(_stage("weights", self.load_file, str(job["weights"])))
            _stage("weights", model.load_state_dict, state)
        arrays: dict[str, Any] = {}
        state = {}
        for name, tensor in model.state_dict().items():
            array, dtype = self.array(tensor)
            arrays[f"state/{name}"] = array
            state[name] = {"shape": list(array.shape), "dtype": dtype}
        if job.get("inputs_from"):
            inputs = _stage("inputs", self.inputs_from, dict(job["inputs_from"]), seed)
        else:
            inputs = make_inputs(list(job["inputs"]), seed)
        structure = store_inputs(inputs, arrays)
        model.eval()
        with torch.no_grad():
            torch.manual_seed(seed)
            out = _stage("forward", lambda: model(*self.tensors(inputs)))
        outputs = []
        for path, value in self.flatten(out):
            outputs.append(self.describe(path, value, arrays, "output"))
        # the outputs for other inputs (the next seed's): how much the output depends on its input (`moved/`)
        if job.get("inputs_from"):
            others = _stage("inputs", self.inputs_from, dict(job["inputs_from"]), seed + 1)
        else:
            others = make_inputs(list(job["inputs"]), seed + 1)
        with torch.no_grad():
            torch.manual_seed(seed)
            moved = _stage("forward", lambda: model(*self.tensors(others)))
        for path, value in self.flatten(moved):
            self.describe(path, value, arrays, "moved")
        result: dict[str, Any] = {"status": "ok", "class": type(model).__name__, "state": state, "outputs": outputs,
                                  "input_structure": structure}
        if job.get("locate"):
            result["layers"] = self.trace(model, inputs, seed, tracer, arrays)
        if job.get("train"):
            result["train"] = self.train_step(model, inputs, str(job["train"]), seed, arrays)
        save_arrays(str(job["out"]), arrays)
        return result

    def tensors(self, inputs: list[Any]) -> list[Any]:
        torch = self.torch
        return [tuple(torch.from_numpy(a.copy()) for a in x) if isinstance(x, tuple) else torch.from_numpy(x.copy())
                for x in inputs]

    def inputs_from(self, spec: dict[str, Any], seed: int) -> list[Any]:
        """`--inputs-from FILE.py:FUNC`: FUNC(seed) returns the inputs (arrays or tensors; a tuple for a state)."""
        module = import_file(str(spec["path"]), "torch2ms_inputs")
        made = getattr(module, str(spec["name"]))(seed)
        if not isinstance(made, (list, tuple)):
            made = [made]

        def array(value: Any) -> Any:
            return self.array(value)[0] if isinstance(value, self.torch.Tensor) else self.np.asarray(value)

        return [tuple(array(v) for v in x) if isinstance(x, (list, tuple)) else array(x) for x in made]

    def trace(self, model: Any, inputs: list[Any], seed: int, tracer: Tracer, arrays: dict[str, Any]) -> Any:
        """One more inference forward with a hook on every module: the calls in the order they finish."""
        torch = self.torch
        handles = tracer.hook(list(model.named_modules()), arrays)
        try:
            with torch.no_grad():
                torch.manual_seed(seed)
                _stage("trace", lambda: model(*self.tensors(inputs)))
        finally:
            for handle in handles:
                handle.remove()
        return tracer.calls

    def train_step(self, model: Any, inputs: list[Any], loss: str, seed: int, arrays: dict[str, Any]) -> dict[str, Any]:
        np, torch = self.np, self.torch
        model.train()
        for layer in model.modules():  # dropout at p=0: the step is deterministic on both sides
            if isinstance(layer, torch.nn.modules.dropout._DropoutNd):
                layer.eval()
        model.zero_grad(set_to_none=True)
        torch.manual_seed(seed)
        out = _stage("train", lambda: model(*self.tensors(inputs)))
        floats = [(p, v) for p, v in self.flatten(out) if isinstance(v, torch.Tensor) and v.is_floating_point()]
        if not floats:
            raise StageError("train", ValueError("the network returns no float tensor to take a loss of"))
        total = torch.zeros(())
        for k, (path, value) in enumerate(floats):
            if loss == "mse":
                rng = np.random.default_rng([seed, zlib.crc32(f"target{k}".encode())])
                target = rng.standard_normal(tuple(value.shape)).astype(np.float32)
                arrays[f"target/{path}"] = target
                total = total + ((value - torch.from_numpy(target)) ** 2).mean()
            else:
                total = total + value.sum()
        _stage("train", total.backward)
        arrays["train/loss"] = total.detach().numpy()
        grads = []
        for name, param in model.named_parameters():
            if param.grad is not None:
                arrays[f"grad/{name}"] = self.array(param.grad)[0]
                grads.append(name)
        after = []
        buffers = {name for name, _ in model.named_buffers()}
        for name, tensor in model.state_dict().items():
            if name in buffers and tensor.is_floating_point():
                arrays[f"after/{name}"] = self.array(tensor)[0]
                after.append(name)
        return {"loss_paths": [p for p, _ in floats], "grads": grads, "buffers_after": after}


# ---------------------------------------------------------------------------------- MindSpore side
class MindSporeSide(_Side):
    ops = ("run", "write", "read_checkpoint")

    def __init__(self, device: str) -> None:
        sys.meta_path.insert(0, _Refuse())
        import numpy as np
        import mindspore

        self.np, self.ms = np, mindspore
        self.tensor = mindspore.Tensor
        mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
        mindspore.set_device({"gpu": "GPU", "ascend": "Ascend"}.get(device, "CPU"))
        self.info = {"mindspore_version": mindspore.__version__}

    def write(self, job: dict[str, Any]) -> dict[str, Any]:
        arrays = load_arrays(str(job["npz"]))
        written = self.save(list(job["plan"]), arrays, str(job["out"]), prefix="")
        return {"status": "ok", "written": written}

    def read_checkpoint(self, job: dict[str, Any]) -> dict[str, Any]:
        """A MindSpore checkpoint's parameters into an .npz (for `convert-weights --reverse`)."""
        params = _stage("read", self.ms.load_checkpoint, str(job["path"]))
        arrays, keys = {}, {}
        for name, value in params.items():
            array, dtype = self.array(value)
            arrays[name] = array
            keys[name] = {"shape": list(array.shape), "dtype": dtype}
        save_arrays(str(job["out"]), arrays)
        return {"status": "ok", "keys": keys}

    def save(self, plan: list[dict[str, Any]], arrays: dict[str, Any], out: str, prefix: str,
             dtypes: dict[str, Any] | None = None) -> int:
        """Write the plan's tensors (torch's, transformed) as a MindSpore checkpoint, atomically."""
        from ..weights.facts import apply_transform

        ms = self.ms
        items = []
        for step in plan:
            value = apply_transform(arrays[prefix + step["torch"]], _transform(step))
            tensor = ms.Tensor(self.np.ascontiguousarray(value))
            if dtypes is not None and step["ms"] in dtypes:
                tensor = tensor.astype(dtypes[step["ms"]])
            elif step.get("ms_dtype"):
                tensor = tensor.astype(getattr(ms, str(step["ms_dtype"])))
            elif step.get("dtype") == "bfloat16":
                tensor = tensor.astype(ms.bfloat16)
            items.append({"name": step["ms"], "data": tensor})
        write_whole(out, ".ckpt", ms.save_checkpoint, items)
        return len(items)

    @staticmethod
    def dtype_name(dtype: Any) -> str:
        """A MindSpore dtype as numpy and torch name it: Float32 -> float32."""
        name = str(dtype).lower()
        return {"float": "float32", "double": "float64", "half": "float16"}.get(name, name)

    def array(self, tensor: Any) -> tuple[Any, str]:
        dtype = self.dtype_name(tensor.dtype)
        if dtype == "bfloat16":
            tensor = tensor.astype(self.ms.float32)
        return tensor.asnumpy(), dtype

    def load(self, net: Any, plan: list[dict[str, Any]], arrays: dict[str, Any], ckpt: str) -> list[str]:
        """Copy torch's tensors into the cell by the plan, the way a user would: parameters through a
        MindSpore checkpoint and `load_param_into_net`, buffers (which checkpoints do not hold) directly.
        A parameter whose MindSpore name is not its place in the network (reported by the caller) is set
        directly, so that the outputs still say whether the port computes the same. Returns the names that
        could not be copied."""
        from ..weights.facts import apply_transform

        ms, np = self.ms, self.np
        params = dict(net.parameters_and_names())
        buffers = dict(net.named_buffers()) if hasattr(net, "named_buffers") else {}
        skipped = []
        to_save = []
        for step in plan:
            name = step["ms"]
            value = apply_transform(arrays[f"state/{step['torch']}"], _transform(step))
            target = buffers.get(name) if step.get("kind") == "buffer" else params.get(name)
            if target is None or tuple(target.shape) != tuple(value.shape):
                skipped.append(name)
            elif step.get("kind") == "buffer":
                target.assign_value(ms.Tensor(value, dtype=target.dtype))
            elif target.name != name:
                target.set_data(ms.Tensor(np.ascontiguousarray(value), dtype=target.dtype))
            else:
                to_save.append(step)
        if to_save:
            self.save(to_save, arrays, ckpt, prefix="state/", dtypes={p.name: p.dtype for p in params.values()})
            not_loaded, _ = ms.load_param_into_net(net, ms.load_checkpoint(ckpt), strict_load=True)
            saved = {step["ms"] for step in to_save}
            skipped.extend(n for n in not_loaded if n in saved)
        return skipped

    def run(self, job: dict[str, Any]) -> dict[str, Any]:
        ms = self.ms
        module = _stage("import", import_file, str(job["path"]), "torch2ms_ported")
        seed = int(job.get("seed", 0))
        ms.set_seed(seed)
        tracer = Tracer(self, ms.nn.Cell, [os.path.dirname(str(job["path"]))])
        with tracer if job.get("locate") else contextlib.nullcontext():
            net = _stage("build", build, module, job["factory"])
        if not isinstance(net, ms.nn.Cell):
            raise StageError("build", TypeError(f"the factory returned a {type(net).__name__}, not a mindspore.nn.Cell"))
        params = {name: list(p.shape) for name, p in net.parameters_and_names()}
        param_dtypes = {name: self.dtype_name(p.dtype) for name, p in net.parameters_and_names()}
        renamed = {name: p.name for name, p in net.parameters_and_names() if p.name != name}
        buffers = {name: list(b.shape) for name, b in net.named_buffers()} if hasattr(net, "named_buffers") else {}
        torch_arrays = load_arrays(str(job["npz"]))
        plan = list(job["plan"])
        ckpt = str(job["out"]) + ".ckpt"
        skipped = _stage("load", self.load, net, plan, torch_arrays, ckpt)
        structure = job.get("input_structure") or [None] * len(job["inputs"])
        inputs = load_inputs(torch_arrays, structure, ms.Tensor)
        arrays: dict[str, Any] = {}
        result: dict[str, Any] = {"status": "ok", "class": type(net).__name__, "params": params, "buffers": buffers,
                                  "param_dtypes": param_dtypes,
                                  "renamed": renamed,
                                  "trainable": [p.name for p in net.trainable_params()], "skipped": skipped,
                                  "modes": {}}
        for mode in job.get("modes", ["pynative", "graph"]):
            entry: dict[str, Any] = {}
            result["modes"][mode] = entry
            try:
                ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
                net.set_train(False)
                ms.set_seed(seed)
                # MindSpore reports some kernel errors only when a result is read: run and read as one stage.
                entry["outputs"] = _stage(mode, self.outputs, net, inputs, arrays, f"{mode}/output")
                if job.get("train"):
                    _stage("load", self.load, net, plan, torch_arrays, ckpt)  # the same start for every mode
                    entry["train"] = self.train_step(net, inputs, job, torch_arrays, arrays, mode)
                    _stage("load", self.load, net, plan, torch_arrays, ckpt)
            except StageError as exc:
                entry["error"] = str(exc) if exc.stage == mode else f"{exc.stage}: {exc}"
        ms.set_context(mode=ms.PYNATIVE_MODE)
        if job.get("locate"):
            try:
                result["layers"] = self.trace(net, inputs, seed, tracer, arrays)
            except StageError as exc:
                result["trace_error"] = str(exc)
        save_arrays(str(job["out"]), arrays)
        return result

    def trace(self, net: Any, inputs: list[Any], seed: int, tracer: Tracer, arrays: dict[str, Any]) -> Any:
        """One more inference run in PyNative mode (hooks run there only) with a hook on every cell."""
        ms = self.ms
        net.set_train(False)
        handles = tracer.hook(list(net.cells_and_names()), arrays)
        try:
            ms.set_seed(seed)
            _stage("trace", lambda: [self.array(v) for _, v in self.flatten(net(*inputs))
                                     if isinstance(v, self.tensor)])
        except StageError as exc:  # the calls up to the failure still say where the networks part
            tracer.calls.append({"name": None, "error": str(exc)})
        finally:
            for handle in handles:
                handle.remove()
        return tracer.calls

    def outputs(self, net: Any, inputs: list[Any], arrays: dict[str, Any], group: str) -> list[dict[str, Any]]:
        return [self.describe(path, value, arrays, group) for path, value in self.flatten(net(*inputs))]

    def train_step(self, net: Any, inputs: list[Any], job: dict[str, Any], torch_arrays: dict[str, Any],
                   arrays: dict[str, Any], mode: str) -> dict[str, Any]:
        from .ms_loss import LossCell

        ms = self.ms
        paths = [str(p) for p in job.get("loss_paths") or [""]]
        mse = str(job["train"]) == "mse"
        targets = tuple(ms.Tensor(torch_arrays[f"target/{p}"]) for p in paths) if mse else ()
        loss_net = LossCell(net, tuple(output_path(p) for p in paths), targets, mse)
        net.set_train(True)
        dropout = tuple(getattr(space, name) for space in (ms.nn, ms.mint.nn)
                        for name in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d") if hasattr(space, name))
        for _, cell in net.cells_and_names():  # dropout at p=0, as on the torch side
            if isinstance(cell, dropout):
                cell.set_train(False)
        weights = net.trainable_params()
        ms.set_seed(int(job.get("seed", 0)))
        grad_fn = ms.value_and_grad(loss_net, None, weights)
        loss, grads = _stage(f"{mode} train", grad_fn, *inputs)
        arrays[f"{mode}/train/loss"] = _stage(f"{mode} train", loss.asnumpy)
        by_id = {id(p): name for name, p in net.parameters_and_names()}
        names = []
        for param, grad in zip(weights, grads):
            name = by_id.get(id(param), param.name)
            arrays[f"{mode}/grad/{name}"] = self.array(grad)[0]
            names.append(name)
        after = []
        trainable = {id(p) for p in weights}
        state = list(net.parameters_and_names()) + (list(net.named_buffers()) if hasattr(net, "named_buffers") else [])
        for name, value in state:
            if id(value) not in trainable:
                arrays[f"{mode}/after/{name}"] = self.array(value)[0]
                after.append(name)
        net.set_train(False)
        return {"grads": names, "after": after}


def output_path(text: str) -> tuple[Any, ...]:
    """"[1][0]" -> (1, 0); "['logits']" -> ("logits",); "" (the output itself) -> ()."""
    import ast

    if not text:
        return ()
    return tuple(ast.literal_eval(part) for part in text[1:-1].split("]["))


# ---------------------------------------------------------------------------------- serving
def run_one(side: Any, job: dict[str, Any]) -> dict[str, Any]:
    start = time.perf_counter()
    timeout = float(job.get("timeout", 300))
    signal.setitimer(signal.ITIMER_REAL, timeout)
    result: dict[str, Any]
    try:
        handler = getattr(side, str(job.get("op")), None) if job.get("op") in side.ops else None
        if handler is None:
            result = {"status": "error", "reason": f"unknown job {job.get('op')!r}"}
        else:
            result = handler(job)
    except StageError as exc:
        result = {"status": "failed", "stage": exc.stage, "reason": f"{exc.stage}: {exc}"}
    except Timeout:
        result = {"status": "failed", "stage": "time", "reason": f"timed out after {timeout:g} s"}
    except MemoryError:
        result = {"status": "failed", "stage": "memory", "reason": "ran out of memory (the worker's memory limit)"}
    except Exception as exc:  # noqa: BLE001 - a bug of the backend is still one result
        tail = traceback.format_exc(limit=4).strip().splitlines()[-3:]
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        result = {"status": "error", "reason": f"backend error: {type(exc).__name__}: {first}", "notes": tail}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    result["id"] = job.get("id")
    result["seconds"] = round(time.perf_counter() - start, 3)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="torch2ms-model-worker")
    parser.add_argument("--side", choices=("torch", "mindspore"), required=True)
    parser.add_argument("--device", default="cpu", choices=("cpu", "gpu", "ascend"))
    parser.add_argument("--memory-mb", type=int, default=4096)
    args = parser.parse_args(argv)

    def start() -> tuple[dict[str, Any], Handler]:
        import warnings

        warnings.filterwarnings("ignore")
        side: Any = TorchSide(args.device) if args.side == "torch" else MindSporeSide(args.device)
        return {"side": args.side, "device": args.device, **side.info}, lambda job, _emit: run_one(side, job)

    return serve(start, args.memory_mb)

if __name__ == "__main__":
    sys.exit(main())
