"""A worker that runs a training program on one side and records its first N optimizer steps.

Started by `torch2ms.verify.pool.Pool` as ``python -m torch2ms.verify.train_worker --side
torch|mindspore``; it speaks the pool's protocol. A job is ``{"id", "source", "filename", "steps",
"out", "threads"[, "initial", "mode"]}``: the program runs as ``__main__`` (its own argument defaults, from a
copy in the job's ``out`` folder, its working directory) with:

- MindSpore side: PyNative, or GRAPH mode (``"mode": "graph"``) for the whole program;
- the ``out`` folder first on the module path, as Python puts a script's folder there: the modules written
  beside the program (a port's support module, `torch2ms.transforms.support`) import;
- every dropout an identity (Dropout at p=0 on both sides) and data loaders unshuffled, so both sides
  see the same batches in the same order;
- torch side: the first optimizer's parameters, in its group order, saved as they are when it is
  built (``OUT/ID-initial.npz``); MindSpore side: the job's ``initial`` arrays copied into the first
  optimizer's parameters when it is built, in the same order (the shapes must agree);
- per optimizer step: the losses computed since the previous step (torch: each ``backward()``;
  MindSpore: each call of a ``value_and_grad`` function), the learning rate of each group as the step
  uses it, and every parameter after the step (``OUT/ID-steps.npz``); the program is stopped after
  ``steps`` steps.

The result line is ``{"id", "status": "ok", "steps", "losses", "lrs", "names", "arrays"[, "initial"]}``
or ``{"id", "status": "raised", "stage", "error", "message", "kernel", "steps"}``.
"""

from __future__ import annotations

import builtins
import os
import re
import sys
from types import ModuleType
from typing import Any

from . import program_worker
from .program_worker import Side
from .worker import Timeout, error_line, missing_kernel


class Enough(BaseException):
    """Raised inside the program once the steps asked for are recorded."""


class Recorder:
    def __init__(self, np: Any, steps: int) -> None:
        self.np = np
        self.steps = steps
        self.pending: list[float] = []  # losses since the last step
        self.losses: list[list[float]] = []
        self.lrs: list[list[float]] = []
        self.params: list[list[Any]] = []
        self.names: list[str] = []
        self.optimizer: Any = None
        self.initial: list[Any] | None = None
        self.notes: list[str] = []

    def loss(self, value: float) -> None:
        self.pending.append(float(value))

    def step(self, lrs: list[float], params: list[Any]) -> None:
        self.losses.append(self.pending)
        self.pending = []
        self.lrs.append(lrs)
        self.params.append(params)
        if len(self.losses) >= self.steps:
            raise Enough()


def _identity(x: Any, *_args: Any, **_kwargs: Any) -> Any:
    return x


def _pass_through(self: Any, x: Any) -> Any:
    """A dropout Cell's construct at p=0 (a function of its own line: GRAPH mode parses its source)."""
    return x


def _instrument_torch(torch: Any, rec: Recorder) -> list[tuple[Any, str, Any]]:
    np = rec.np
    saved: list[tuple[Any, str, Any]] = []

    def patch(owner: Any, name: str, value: Any) -> None:
        saved.append((owner, name, getattr(owner, name)))
        setattr(owner, name, value)

    functional = torch.nn.functional
    for name in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"):
        if hasattr(functional, name):
            patch(functional, name, _identity)
    loader_init = torch.utils.data.DataLoader.__init__

    def unshuffled(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs["shuffle"] = False
        loader_init(self, *args, **kwargs)

    patch(torch.utils.data.DataLoader, "__init__", unshuffled)
    backward = torch.Tensor.backward

    def recorded_backward(self: Any, *args: Any, **kwargs: Any) -> Any:
        rec.loss(float(self.detach().float()))
        return backward(self, *args, **kwargs)

    patch(torch.Tensor, "backward", recorded_backward)
    optimizer_init = torch.optim.Optimizer.__init__

    def recorded_init(self: Any, *args: Any, **kwargs: Any) -> None:
        optimizer_init(self, *args, **kwargs)
        if rec.optimizer is None:
            rec.optimizer = self
            rec.initial = [p.detach().numpy().copy() for g in self.param_groups for p in g["params"]]

    patch(torch.optim.Optimizer, "__init__", recorded_init)

    def after_step(optimizer: Any, _args: Any, _kwargs: Any) -> None:
        if optimizer is rec.optimizer:
            rec.step([float(g["lr"]) for g in optimizer.param_groups],
                     [np.array(p.detach().numpy(), copy=True) for g in optimizer.param_groups for p in g["params"]])

    import torch.optim.optimizer as optimizer_module

    handle = optimizer_module.register_optimizer_step_post_hook(after_step)
    saved.append((handle, "", None))
    return saved


def _instrument_mindspore(ms: Any, rec: Recorder, initial: dict[str, Any] | None) -> list[tuple[Any, str, Any]]:
    np = rec.np
    saved: list[tuple[Any, str, Any]] = []

    def patch(owner: Any, name: str, value: Any) -> None:
        saved.append((owner, name, getattr(owner, name)))
        setattr(owner, name, value)

    for cls in (ms.nn.Dropout, ms.mint.nn.Dropout, ms.nn.Dropout2d):
        patch(cls, "construct", _pass_through)
    patch(ms.ops, "dropout", _identity)
    patch(ms.mint.nn.functional, "dropout", _identity)
    generator_init = ms.dataset.GeneratorDataset.__init__

    def unshuffled(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs["shuffle"] = False
        generator_init(self, *args, **kwargs)

    patch(ms.dataset.GeneratorDataset, "__init__", unshuffled)
    value_and_grad = ms.value_and_grad

    def recorded_value_and_grad(fn: Any, *args: Any, **kwargs: Any) -> Any:
        inner = value_and_grad(fn, *args, **kwargs)
        has_aux = bool(kwargs.get("has_aux", args[3] if len(args) > 3 else False))

        def run(*a: Any, **k: Any) -> Any:
            values, grads = inner(*a, **k)
            loss = values[0] if has_aux or isinstance(values, tuple) else values
            rec.loss(float(loss.asnumpy()))
            return values, grads

        return run

    patch(ms, "value_and_grad", recorded_value_and_grad)
    optimizer_cls = ms.experimental.optim.Optimizer
    optimizer_init = optimizer_cls.__init__

    def recorded_init(self: Any, *args: Any, **kwargs: Any) -> None:
        optimizer_init(self, *args, **kwargs)
        if rec.optimizer is not None:
            return
        rec.optimizer = self
        rec.names = [p.name for p in self.parameters]
        if initial is None:
            return
        arrays = [initial[f"p{i}"] for i in range(len(initial))]
        if len(arrays) != len(self.parameters):
            raise ValueError(f"the torch optimizer updates {len(arrays)} tensors, the MindSpore one "
                             f"{len(self.parameters)} ({', '.join(rec.names)})")
        for index, (param, array) in enumerate(zip(self.parameters, arrays)):
            if tuple(param.shape) != tuple(array.shape):
                raise ValueError(f"parameter {index} ({param.name}): MindSpore shape {tuple(param.shape)}, "
                                 f"torch {tuple(array.shape)} (the groups or their order differ)")
            param.set_data(ms.Tensor(array.astype(np.dtype(str(param.asnumpy().dtype)))))

    patch(optimizer_cls, "__init__", recorded_init)
    call = optimizer_cls.__call__

    def recorded_call(self: Any, *args: Any, **kwargs: Any) -> Any:
        lrs = [float(np.asarray(g["lr"].asnumpy() if hasattr(g["lr"], "asnumpy") else g["lr"]))
               for g in self.param_groups]
        out = call(self, *args, **kwargs)
        if self is rec.optimizer:
            rec.step(lrs, [np.array(p.asnumpy(), copy=True) for p in self.parameters])
        return out

    patch(optimizer_cls, "__call__", recorded_call)
    return saved


def _beside(module: ModuleType | None, folder: str) -> bool:
    path = getattr(module, "__file__", None)
    return isinstance(path, str) and os.path.dirname(os.path.abspath(path)) == os.path.abspath(folder)


def _restore(saved: list[tuple[Any, str, Any]]) -> None:
    for owner, name, value in reversed(saved):
        if not name:
            owner.remove()
        else:
            setattr(owner, name, value)


def run_training(side: Side, job: dict[str, Any]) -> dict[str, Any]:
    np = side.np
    ident = str(job["id"])
    out = str(job["out"])
    stem = re.sub(r"[^\w.-]", "_", ident)
    rec = Recorder(np, int(job.get("steps", 20)))
    initial: dict[str, Any] | None = None
    if job.get("initial"):
        with np.load(str(job["initial"]), allow_pickle=False) as data:
            initial = {key: data[key] for key in data.files}
    filename = str(job.get("filename", ident))
    program = ModuleType("__main__")  # a module of its own: GRAPH mode resolves names through sys.modules
    env: dict[str, Any] = program.__dict__
    env.update({"__file__": filename, "__builtins__": builtins})
    main_module = sys.modules.get("__main__")
    result: dict[str, Any] = {}
    saved: list[tuple[Any, str, Any]] = []
    cwd = os.getcwd()
    argv = sys.argv
    stage = "run"
    try:
        side.flush()
        side.seed()
        if side.torch is not None:
            side.torch.set_num_threads(int(job.get("threads", 1)))
            saved = _instrument_torch(side.torch, rec)
        else:
            saved = _instrument_mindspore(side.ms, rec, initial)
            if job.get("mode") == "graph":
                side.ms.set_context(mode=side.ms.GRAPH_MODE)
        os.chdir(out)
        # a file on disk: MindSpore's GRAPH mode reads the source of what it compiles
        path = os.path.join(out, f"{stem}-{os.path.basename(filename)}")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(str(job["source"]))
        env["__file__"] = path
        sys.argv = [path]
        sys.path.insert(0, out)  # the program's folder, as Python runs a script: the modules beside it import
        code = compile(str(job["source"]), path, "exec")
        sys.modules["__main__"] = program
        try:
            exec(code, env)  # noqa: S102 - the user's own program, in a worker process with limits
        except Enough:
            pass
        stage = "record"
        result = {"status": "ok", "steps": len(rec.losses), "losses": rec.losses, "lrs": rec.lrs,
                  "names": rec.names}
        arrays = {f"s{s}_p{i}": a for s, params in enumerate(rec.params) for i, a in enumerate(params)}
        result["arrays"] = os.path.join(out, f"{stem}-steps.npz")
        np.savez(result["arrays"], **arrays)
        if rec.initial is not None and side.torch is not None:
            result["initial"] = os.path.join(out, f"{stem}-initial.npz")
            np.savez(result["initial"], **{f"p{i}": a for i, a in enumerate(rec.initial)})
    except Timeout:
        return {"status": "timeout", "steps": len(rec.losses)}
    except BaseException as exc:  # noqa: BLE001 - any failure of the program is its result
        if isinstance(exc, KeyboardInterrupt):
            raise
        return {"status": "raised", "stage": stage, "error": type(exc).__name__, "message": error_line(exc),
                "kernel": missing_kernel(str(exc)), "steps": len(rec.losses)}
    finally:
        os.chdir(cwd)
        sys.argv = argv
        if sys.path and sys.path[0] == out:
            del sys.path[0]
        for name in [n for n, m in sys.modules.items() if _beside(m, out)]:
            del sys.modules[name]  # a module of the program's folder (the next job's may differ)
        if main_module is not None:
            sys.modules["__main__"] = main_module
        _restore(saved)
        if side.ms is not None:
            side.ms.set_context(mode=side.ms.PYNATIVE_MODE)
    return result


def main(argv: list[str] | None = None) -> int:
    return program_worker.main(argv, run_training, "torch2ms-train-worker")


if __name__ == "__main__":
    sys.exit(main())
