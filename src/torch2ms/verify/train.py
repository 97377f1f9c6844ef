"""`torch2ms verify-train`: does the port train as the original does?

The original program runs twice in torch (one thread, then two: the calibration of torch's own
run-to-run drift) and the port once in MindSpore (torch made unimportable), each for N optimizer
steps, in worker processes (`torch2ms.verify.train_worker`): every dropout at p=0, loaders
unshuffled, the port's optimizer starting from the original's initial parameters (copied in the
optimizer's parameter order). Per step the check compares the losses, each group's learning rate and
every parameter after the step; a value agrees when its difference is within
``atol + rtol * |torch| + DRIFT_FACTOR * drift``, drift being the largest difference of the same value
between the two torch runs over the whole run. The report names the first step and value that diverge.
Without a PORTED file the original is migrated first (`torch2ms.migrate`), as ``torch2ms migrate``
would leave it.

Exit codes: 0 the runs agree, 1 they diverge, 2 a program could not run (or bad input).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ..config import Config
from ..mappings import load_table
from ..migrate.support import module_text
from ..transforms.support import imported_support
from .pool import Pool, VerifyError

DEFAULT_STEPS = 20
DEFAULT_TIMEOUT_S = 300.0
DRIFT_FACTOR = 10.0


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float


LR = Tolerance(1e-9, 1e-6)  # MindSpore keeps the rate in a float32 Parameter


def value_tolerance() -> Tolerance:
    """Losses and parameters: the verify backend's float32 tolerance for one op, its relative part ten times
    wider for values that went through many steps (each step's rounding carries into the next); torch's own
    drift comes on top (DRIFT_FACTOR)."""
    from .compare import tolerance  # NumPy: not at the command line's start

    rtol, atol = tolerance("float32", None, None)
    return Tolerance(atol, 10 * rtol)


class UsageError(Exception):
    pass


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("original", help="the torch training program (run as __main__ with its default arguments)")
    parser.add_argument("ported", nargs="?",
                        help="its MindSpore port (default: the original as `torch2ms migrate` leaves it)")
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS, help="optimizer steps to compare (default 20)")
    parser.add_argument("--mode", choices=("pynative", "graph"), default="pynative",
                        help="MindSpore's execution mode for the port (default pynative)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="seconds per program run")
    parser.add_argument("--memory-mb", type=int, default=8192, help="memory limit of each worker")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def _pool(side: str, args: argparse.Namespace) -> Pool:
    return Pool(jobs=1, memory_mb=args.memory_mb, timeout=args.timeout + 30,
                worker="torch2ms.verify.train_worker", worker_args=("--side", side))


def _load(result: dict[str, Any]) -> list[list[Any]]:
    import numpy as np

    with np.load(result["arrays"], allow_pickle=False) as data:
        stored = {key: data[key] for key in data.files}
    steps = int(result["steps"])
    out: list[list[Any]] = []
    for s in range(steps):
        count = sum(1 for key in stored if key.startswith(f"s{s}_"))
        out.append([stored[f"s{s}_p{i}"] for i in range(count)])
    return out


def _over(a: Any, b: Any, tol: Tolerance, drift: float) -> tuple[float, bool]:
    """The largest difference of two values (or arrays), and whether it exceeds the tolerance."""
    import numpy as np

    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.shape != y.shape:
        return float("inf"), True
    diff = np.abs(x - y)
    allowed = tol.atol + tol.rtol * np.abs(x) + DRIFT_FACTOR * drift
    bad = bool(np.any(~(diff <= allowed)))  # NaN counts as a difference
    return float(np.max(diff)) if diff.size else 0.0, bad


def compare(ref: dict[str, Any], again: dict[str, Any], port: dict[str, Any]) -> dict[str, Any]:
    """Per step: the torch run `ref` against the MindSpore run `port`, within the drift of `again`."""
    ref_params, again_params, port_params = _load(ref), _load(again), _load(port)
    names = list(port.get("names") or [])
    drift: dict[str, float] = {}
    rows: list[dict[str, Any]] = []
    first: dict[str, Any] | None = None
    steps = min(int(ref["steps"]), int(port["steps"]))
    values = value_tolerance()
    plan: list[list[tuple[str, str, Any, Any, Any, Tolerance]]] = []
    for s in range(steps):
        checks: list[tuple[str, str, Any, Any, Any, Tolerance]] = []
        plan.append(checks)
        checks.append(("loss", "loss", ref["losses"][s], port["losses"][s],
                       again["losses"][s] if s < len(again["losses"]) else None, values))
        for g, value in enumerate(ref["lrs"][s]):
            checks.append((f"lr{g}", f"learning rate of group {g}", value,
                           port["lrs"][s][g] if g < len(port["lrs"][s]) else None,
                           again["lrs"][s][g] if s < len(again["lrs"]) else None, LR))
        for i, value in enumerate(ref_params[s]):
            name = names[i] if i < len(names) else f"parameter {i}"
            checks.append((f"p{i}", name, value, port_params[s][i] if i < len(port_params[s]) else None,
                           again_params[s][i] if s < len(again_params) else None, values))
    # torch's own drift of each value over the whole run: a tensor torch itself cannot reproduce late in the
    # run (Adam on a gradient that is zero but for rounding) may differ as much from the first step on
    for checks in plan:
        for key, _what, a, _b, c, _tol in checks:
            if c is not None:
                d, _ = _over(a, c, Tolerance(0.0, 0.0), 0.0)
                drift[key] = max(drift.get(key, 0.0), d if d != float("inf") else 0.0)
    for s, checks in enumerate(plan):
        row: dict[str, Any] = {"step": s, "loss_torch": ref["losses"][s], "loss_mindspore": port["losses"][s]}
        for key, what, a, b, _c, tol in checks:
            if b is None:
                diff, bad = float("inf"), True
            else:
                diff, bad = _over(a, b, tol, drift.get(key, 0.0))
            if key == "loss":
                row["loss_diff"] = diff
            elif key.startswith("p"):
                row["param_diff"] = max(row.get("param_diff", 0.0), diff)
            if bad and first is None:
                first = {"step": s, "value": what, "difference": diff, "drift": drift.get(key, 0.0),
                         "torch": _short(a), "mindspore": _short(b)}
        row["lr_torch"] = ref["lrs"][s]
        row["lr_mindspore"] = port["lrs"][s]
        rows.append(row)
    return {"steps": steps, "rows": rows, "first_divergence": first,
            "max_loss_difference": max((r["loss_diff"] for r in rows), default=0.0),
            "drift": {"loss": drift.get("loss", 0.0),
                      "parameters": max((v for k, v in drift.items() if k.startswith("p")), default=0.0)}}


def _short(value: Any) -> Any:
    import numpy as np

    if value is None:
        return None
    array = np.asarray(value, dtype=np.float64)
    if array.size <= 4:
        return array.tolist()
    return f"array{tuple(array.shape)} first {array.reshape(-1)[:3].tolist()}"


def verify(original: Path, ported_text: str, steps: int, args: argparse.Namespace) -> dict[str, Any]:
    source = original.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="torch2ms-train-") as out:
        for module in imported_support(ported_text):  # as migrate writes it beside the port
            config = Config()
            Path(out, f"{module}.py").write_text(module_text(load_table(), config.version, "cpu"), encoding="utf-8")
        job = {"source": source, "filename": original.name, "steps": steps, "out": out, "timeout": args.timeout}
        with _pool("torch", args) as torch_pool:
            ref, again = torch_pool.run([dict(job, id="torch", threads=1), dict(job, id="torch-again", threads=2)])
        if ref.get("status") != "ok":
            return {"status": "error", "side": "torch", "run": ref}
        with _pool("mindspore", args) as ms_pool:
            port, = ms_pool.run([dict(job, id="mindspore", source=ported_text, initial=ref.get("initial"),
                                      mode=getattr(args, "mode", "pynative"))])
        if port.get("status") != "ok":
            return {"status": "error", "side": "mindspore", "run": port}
        if again.get("status") != "ok":
            again = ref  # no calibration: no drift allowed
        result = compare(ref, again, port)
    if result["steps"] < min(steps, int(ref["steps"])) or int(port["steps"]) != int(ref["steps"]):
        result["first_divergence"] = result["first_divergence"] or {
            "step": result["steps"], "value": "the number of optimizer steps",
            "torch": ref["steps"], "mindspore": port["steps"], "difference": None, "drift": 0.0}
    result["status"] = "diverged" if result["first_divergence"] else "agree"
    result["torch_steps"] = ref["steps"]
    result["mindspore_steps"] = port["steps"]
    result["mode"] = getattr(args, "mode", "pynative")
    return result


def print_text(result: dict[str, Any], out: TextIO) -> None:
    if result["status"] == "error":
        run = result["run"]
        where = f" ({run.get('kernel')} has no kernel)" if run.get("kernel") else ""
        print(f"the {result['side']} program did not train: {run.get('error', run.get('status'))}: "
              f"{run.get('message', '')}{where} after {run.get('steps', 0)} step(s)", file=out)
        return
    drift = result["drift"]
    print(f"torch against itself (1 and 2 threads): loss drift {drift['loss']:.3g}, "
          f"parameter drift {drift['parameters']:.3g}", file=out)
    print("step  loss torch    loss MindSpore  |diff|     max |param diff|  lr torch / MindSpore", file=out)
    for row in result["rows"]:
        lt = ",".join(f"{v:.6f}" for v in row["loss_torch"])
        lm = ",".join(f"{v:.6f}" for v in row["loss_mindspore"])
        lr = ",".join(f"{v:.4g}" for v in row["lr_torch"]) + " / " + ",".join(f"{v:.4g}" for v in row["lr_mindspore"])
        print(f"{row['step']:>4}  {lt:<12}  {lm:<14}  {row['loss_diff']:<9.3g}  "
              f"{row.get('param_diff', 0.0):<16.3g}  {lr}", file=out)
    first = result["first_divergence"]
    if first is None:
        print(f"agree: {result['steps']} steps, largest loss difference {result['max_loss_difference']:.3g}",
              file=out)
    else:
        print(f"diverged at step {first['step']}: {first['value']}: torch {_fmt(first['torch'])}, "
              f"MindSpore {_fmt(first['mindspore'])} (difference {_fmt(first['difference'])}, torch's own drift "
              f"{first['drift']:.3g})", file=out)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, list):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    return str(value)


def ported_text(original: Path, ported: str | None) -> str:
    if ported is not None:
        return Path(ported).read_text(encoding="utf-8")
    from ..migrate.pipeline import MigrateError, migrate_text

    try:
        return migrate_text(original.read_text(encoding="utf-8"), str(original)).text
    except MigrateError as exc:
        raise UsageError(str(exc)) from None


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    original = Path(args.original)
    try:
        if not original.is_file():
            raise UsageError(f"{original}: not a file")
        if args.ported is not None and not Path(args.ported).is_file():
            raise UsageError(f"{args.ported}: not a file")
        if args.steps < 1:
            raise UsageError("--steps must be at least 1")
        text = ported_text(original, args.ported)
        result = verify(original, text, args.steps, args)
    except (UsageError, OSError, UnicodeDecodeError) as exc:
        print(f"torch2ms verify-train: {exc}", file=sys.stderr)
        return 2
    except VerifyError as exc:
        print(f"torch2ms verify-train: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result, indent=1, default=str), file=out)
    else:
        print_text(result, out)
    return {"agree": 0, "diverged": 1}.get(result["status"], 2)
