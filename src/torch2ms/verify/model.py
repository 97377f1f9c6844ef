"""`torch2ms verify-model`: run a torch network and its MindSpore port on the same weights and inputs.

The torch side runs in a torch worker process, the MindSpore side in a MindSpore worker process
that refuses `import torch` (`model_worker`); both under a time and a memory limit. The weights
travel through the parameter-name map (`--map`, or built from both files and the tables), the
outputs are compared in inference mode in PyNative and in GRAPH mode, and with `--train-step` also
the loss, every gradient and the buffers after one training step.

Exit codes: 0 everything agrees within the tolerance, 1 something differs or could not run,
2 a usage error (a missing file, a bad factory or input, an unreadable map, no backend).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import json
import os
import re
import sys
import time
from dataclasses import dataclass
from typing import Any, TextIO

from .model_record import RECORD_FORMAT, write_model_record
from ..writing import add_arguments as add_write_arguments, temporary_folder
from .pool import Pool, VerifyError

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
DEFAULT_TIMEOUT_S = 600.0
DEFAULT_MEMORY_MB = 8192
DEFAULT_RTOL = 1e-4
DEFAULT_ATOL = 1e-4
MODES = ("pynative", "graph")
_DTYPES = ("float16", "float32", "float64", "int32", "int64", "int8", "uint8", "bool")


class UsageError(Exception):
    """Bad command-line input: exit 2."""


@dataclass(frozen=True)
class Target:
    """FILE.py:FACTORY: the file, the factory's text, its name, and its literal arguments."""

    path: str
    text: str
    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]

    def factory(self) -> dict[str, Any]:
        return {"name": self.name, "args": list(self.args), "kwargs": self.kwargs}


def parse_target(text: str) -> Target:
    """`model.py:resnet18(num_classes=10)`; the arguments must be literals (ast.literal_eval)."""
    from ..weights.mapping import parse_call

    found = re.match(r"^(.+?\.py):(.+)$", text.strip())
    if not found:
        raise UsageError(f"expected FILE.py:FACTORY, e.g. model.py:resnet18(num_classes=10), got {text!r}")
    path, factory = found.group(1), found.group(2).strip()
    try:
        name, args, kwargs = parse_call(factory)
    except ValueError as exc:
        raise UsageError(f"{path}: bad factory: {exc}") from None
    try:
        with open(path, "rb") as handle:
            tree = ast.parse(handle.read(), path)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (SyntaxError, ValueError) as exc:
        raise UsageError(f"{path}: not valid Python: {exc}") from None
    defined = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    defined |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    if name not in defined:
        raise UsageError(f"{path}: bad factory: no class or function named {name} at the top level of the file")
    return Target(path, factory, name, args, kwargs)


def parse_input(text: str) -> dict[str, Any]:
    """SHAPE[:DTYPE[:LOW:HIGH]], e.g. 2,3,32,32 or 4,16:int64:0:1000 (integers in [LOW, HIGH)); a tuple of them
    in parentheses, separated by semicolons, e.g. (2,4,12;2,4,12) for an LSTM's (h, c)."""
    text = text.strip()
    if text.startswith("(") and text.endswith(")"):
        parts_of = [p for p in text[1:-1].split(";") if p.strip()]
        if not parts_of or any(p.strip().startswith("(") for p in parts_of):
            raise UsageError(f"bad --input {text!r}: a tuple holds one or more SHAPE[:DTYPE] separated by ';'")
        return {"tuple": [parse_input(p) for p in parts_of]}
    parts = text.strip().split(":")
    try:
        shape = [int(d) for d in parts[0].split(",") if d.strip()]
    except ValueError:
        raise UsageError(f"bad --input {text!r}: the shape is comma-separated integers, e.g. 2,3,32,32") from None
    if not shape or any(d < 0 for d in shape):
        raise UsageError(f"bad --input {text!r}: give a shape of non-negative sizes, e.g. 2,3,32,32")
    spec: dict[str, Any] = {"shape": shape, "dtype": "float32"}
    if len(parts) > 1 and parts[1]:
        if parts[1] not in _DTYPES:
            raise UsageError(f"bad --input {text!r}: dtype {parts[1]!r} is not one of {', '.join(_DTYPES)}")
        spec["dtype"] = parts[1]
    if len(parts) == 4:
        try:
            spec["low"], spec["high"] = float(parts[2]), float(parts[3])
        except ValueError:
            raise UsageError(f"bad --input {text!r}: LOW and HIGH must be numbers") from None
        if spec["dtype"].startswith(("int", "uint")):
            spec["low"], spec["high"] = int(spec["low"]), int(spec["high"])
    elif len(parts) not in (1, 2):
        raise UsageError(f"bad --input {text!r}: expected SHAPE[:DTYPE[:LOW:HIGH]]")
    return spec


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("original", metavar="ORIGINAL.py:FACTORY", nargs="?",
                        help="the torch file and what builds the network: a class or function, with literal "
                             "keyword arguments, e.g. model.py:resnet18(num_classes=10)")
    parser.add_argument("ported", metavar="PORTED.py:FACTORY", nargs="?", help="the MindSpore file and its factory")
    parser.add_argument("--spec", metavar="SPEC.json",
                        help="check every network a spec file lists, in one run with warm workers: "
                             '{"networks": [{"original": "a.py:F", "ported": "b.py:F", "inputs": ["2,3"], '
                             '"options": {"train_step": true}}]}, relative paths from the spec\'s folder; prints a '
                             "summary table (--json: one document); instead of ORIGINAL and PORTED")
    parser.add_argument("--input", dest="inputs", action="append", default=[], metavar="SHAPE[:DTYPE[:LOW:HIGH]]",
                        help="one per positional input of forward, e.g. --input 2,3,32,32 or --input 4,16:int64:0:1000, "
                             "or a tuple such as --input '(2,4,12;2,4,12)' for an LSTM's state "
                             "(random values, seeded: floats in [-1, 1), integers in [0, 10) unless LOW:HIGH)")
    parser.add_argument("--inputs-from", metavar="FILE.py:FUNCTION",
                        help="make the inputs with FUNCTION(seed) of FILE.py, run in the torch worker: a list of "
                             "arrays or tensors (a tuple of them for a recurrent state); instead of --input")
    parser.add_argument("--weights", metavar="CHECKPOINT",
                        help="load this torch state_dict (.pth/.pt/.safetensors) into the torch network first "
                             "(default: the network's own initial weights)")
    parser.add_argument("--map", metavar="MAP.json", help="the parameter-name map (default: built from both files "
                                                         "and the mapping tables)")
    parser.add_argument("--train-step", action="store_true",
                        help="also compare the loss, the gradients and the buffers after one training step")
    parser.add_argument("--loss", choices=("sum", "mse"), default="mse",
                        help="the training step's loss over the float outputs: their sum, or the mean squared error "
                             "to a seeded random target (default)")
    parser.add_argument("--modes", default="pynative,graph", metavar="MODES",
                        help="MindSpore modes to run, comma-separated (default: pynative,graph)")
    parser.add_argument("--rtol", type=float, default=DEFAULT_RTOL, help=f"relative tolerance (default {DEFAULT_RTOL:g})")
    parser.add_argument("--atol", type=float, default=DEFAULT_ATOL, help=f"absolute tolerance (default {DEFAULT_ATOL:g})")
    parser.add_argument("--seed", type=int, default=0, help="seed of the inputs, targets and initial weights")
    parser.add_argument("--device", choices=("cpu", "gpu", "ascend"), default="cpu")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="S",
                        help=f"seconds for each side (default {DEFAULT_TIMEOUT_S:g})")
    parser.add_argument("--memory-mb", type=int, default=DEFAULT_MEMORY_MB, metavar="MB",
                        help=f"address space each side may add after its imports (default {DEFAULT_MEMORY_MB})")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON document")
    parser.add_argument("--record", metavar="FILE",
                        help="write the result to FILE (JSON), for `torch2ms scan --html ... --model-record FILE`")
    add_write_arguments(parser)
    parser.add_argument("--locate", dest="locate", action="store_true", default=None,
                        help="report where the two networks part: the first layer whose output differs while its "
                             "inputs agree, with the port's and the original's lines and the rewrite behind them, "
                             "and every layer's error (default: on failure)")
    parser.add_argument("--no-locate", dest="locate", action="store_false",
                        help="do not trace the layers (one forward less on each side)")
    parser.add_argument("--write-map", metavar="FILE",
                        help="write the map as applied (every key of the checkpoint, with its MindSpore name and "
                             "shape) for `torch2ms convert-weights`")


# ---------------------------------------------------------------------------------- running
def side_pool(side: str, device: str = "cpu", memory_mb: int = DEFAULT_MEMORY_MB,
              timeout: float = DEFAULT_TIMEOUT_S) -> Pool:
    """A pool of one model worker for one side ("torch" or "mindspore")."""
    return Pool(jobs=1, device=device, memory_mb=memory_mb, timeout=timeout,
                worker="torch2ms.verify.model_worker", worker_args=("--side", side))


def pool_for(side: str, args: argparse.Namespace, pools: dict[str, Pool] | None) -> Any:
    """The caller's warm pool for the side (left open), or a new one (closed after use)."""
    if pools and side in pools:
        return contextlib.nullcontext(pools[side])
    return side_pool(side, getattr(args, "device", "cpu"), args.memory_mb, args.timeout)


def _root(args: argparse.Namespace, original: Target, ported: Target, torch_class: str) -> tuple[str, Any]:
    """The map's node for this network: from --map (the factory's root, else the class's), or built now."""
    from ..mappings import load_table
    from ..weights.facts import Facts
    from ..weights.mapping import MapError, build_map, read_map, root_name

    name = root_name(original.text, ported.text)
    if args.map:
        weight_map = read_map(args.map)
        for candidate in (name, original.text, torch_class):
            if candidate in weight_map.roots:
                return candidate, weight_map.roots[candidate]
        raise MapError(f"{args.map}: no root for {name} or {torch_class} (it has: {', '.join(weight_map.roots)})")
    texts = []
    for path in (original.path, ported.path):
        try:
            with open(path, encoding="utf-8") as handle:
                texts.append(handle.read())
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"{path}: cannot read it as UTF-8 text: {exc}") from None
    facts = Facts.from_entries(load_table().entries.values())
    weight_map = build_map(texts[0], texts[1], facts, original.path, ported.path, [(original.text, ported.text)],
                           on_disk=True)
    return name, weight_map.roots[name]


def _compare(a: Any, b: Any, t_dtype: str, m_dtype: str, rtol: float, atol: float) -> dict[str, Any]:
    from .compare import Arr, canonical_dtype, compare_arrays

    from .tolerance import measure

    outcome = compare_arrays(Arr(a, canonical_dtype(t_dtype)), Arr(b, canonical_dtype(m_dtype)), rtol, atol)
    row = {"ok": outcome.ok, "max_abs": outcome.max_abs_err, "max_rel": outcome.max_rel_err, "reason": outcome.reason}
    if getattr(a, "dtype", None) is not None and a.dtype.kind in "fc":  # msprobe's measures of a float result
        m = measure(a, b)
        if m.same_shape:
            row.update(relative=m.relative, cosine=m.cosine)
    return row


def verify(args: argparse.Namespace, original: Target, ported: Target, inputs: list[dict[str, Any]],
           modes: list[str], pools: dict[str, Pool] | None = None) -> dict[str, Any]:
    """Run both sides and compare; the result document (see docs/weights.md)."""
    from ..weights.facts import transformed_shape
    from ..weights.place import check, place
    from .model_worker import load_arrays

    start = time.perf_counter()
    result: dict[str, Any] = {
        "format": RECORD_FORMAT, "date": time.strftime("%Y-%m-%d"),
        "original": {"file": original.path, "factory": original.text},
        "ported": {"file": ported.path, "factory": ported.text},
        "inputs": inputs, "tolerance": {"rtol": args.rtol, "atol": args.atol},
        "torch_weights": args.weights or "the network's initial weights",
        "train_step": args.loss if args.train_step else None, "status": "failed", "problems": [],
        "locate_requested": getattr(args, "locate", None) is True,
    }
    problems: list[str] = result["problems"]
    with temporary_folder("model") as tmp:
        t_npz, m_npz = os.path.join(tmp, "torch.npz"), os.path.join(tmp, "mindspore.npz")
        job = {"op": "run", "seed": args.seed, "inputs": inputs, "timeout": args.timeout,
               "train": args.loss if args.train_step else None, "locate": getattr(args, "locate", None) is not False,
               "inputs_from": _inputs_from(getattr(args, "inputs_from", None))}
        weights = os.path.abspath(args.weights) if args.weights else None
        with pool_for("torch", args, pools) as pool:
            t_res = pool.run([dict(job, path=os.path.abspath(original.path), factory=original.factory(), out=t_npz,
                                   weights=weights)])[0]
            result["ran_on"] = {"torch": pool.info.get("torch_version")}
        if t_res.get("status") != "ok":
            if t_res.get("stage") in ("build", "import"):
                raise UsageError(f"{original.path}: cannot build {original.text}: {t_res.get('reason')}")
            if t_res.get("stage") == "inputs":
                raise UsageError(f"{args.inputs_from}: cannot make the inputs: {t_res.get('reason')}")
            if t_res.get("stage") == "weights":
                raise UsageError(f"{args.weights}: cannot load into {original.text}: {t_res.get('reason')}")
            problems.append(f"torch: {t_res.get('reason')}")
            return result
        result["original"]["class"] = t_res["class"]
        root, node = _root(args, original, ported, str(t_res["class"]))
        result["map_root"] = root
        placement = place(node, t_res["state"])
        plan = [{"torch": k, "ms": p.ms, "kind": p.kind, "dtype": t_res["state"][k]["dtype"],
                 "transform": {a: list(b) if isinstance(b, tuple) else b for a, b in p.transform}}
                for k, p in placement.placed.items() if p.ms is not None and p.kind != "tie"]
        m_job = dict(job, path=os.path.abspath(ported.path), factory=ported.factory(), out=m_npz, npz=t_npz,
                     plan=plan, modes=modes, loss_paths=(t_res.get("train") or {}).get("loss_paths"),
                     input_structure=t_res.get("input_structure"), inputs_from=None)
        with pool_for("mindspore", args, pools) as pool:
            m_res = pool.run([m_job])[0]
            result["ran_on"]["mindspore"] = pool.info.get("mindspore_version")
            result["ran_on"]["device"] = args.device
        result["weights"] = _weights_report(placement, t_res, m_res)
        if m_res.get("status") != "ok":
            problems.append(f"MindSpore: {m_res.get('reason')}")
            return result
        result["ported"]["class"] = m_res["class"]
        torch_shapes = {k: tuple(v["shape"]) for k, v in t_res["state"].items()}
        before = len(problems)
        problems.extend(f"unplaced torch tensor {k}: {why}" for k, why in placement.unplaced.items())
        problems.extend(check(placement, torch_shapes, {k: tuple(v) for k, v in m_res["params"].items()},
                              {k: tuple(v) for k, v in m_res.get("buffers", {}).items()}))
        problems.extend(f"MindSpore names the parameter at {path} {name!r}: checkpoints use that name, so a "
                        f"checkpoint cannot fill {path} (a cell was added to a CellList or SequentialCell after it "
                        "was assigned: build it with its cells)" for path, name in m_res.get("renamed", {}).items())
        # every torch tensor copied and every MindSpore parameter filled: only then can agreeing outputs prove the
        # port (a network whose output hardly depends on the weights left at their initial values agrees anyway)
        result["weights"]["complete"] = len(problems) == before
        if args.write_map:
            _write_resolved(args.write_map, original, ported, root, placement, m_res["params"],
                            m_res.get("param_dtypes", {}))
        a, b = load_arrays(t_npz), load_arrays(m_npz)
        result["warnings"] = _insensitive(t_res["outputs"], a, args.rtol, args.atol)
        result["modes"] = {}
        for mode in modes:
            entry = m_res["modes"].get(mode, {})
            report: dict[str, Any] = {"outputs": []}
            result["modes"][mode] = report
            if entry.get("error"):
                report["error"] = entry["error"]
                problems.append(f"{mode}: {entry['error']}")
                continue
            report["outputs"] = _outputs(t_res["outputs"], entry.get("outputs", []), a, b, mode, args, problems)
            if args.train_step and "train" in entry:
                report["train"] = _train(t_res, entry["train"], placement, a, b, mode, args, problems,
                                         transformed_shape, _reduction(inputs))
        if t_res.get("layers") is not None and m_res.get("layers") is not None:
            result["locate"] = _locate(t_res, m_res, placement, a, b, args, ported, result)
        elif m_res.get("trace_error"):
            result["locate"] = {"error": m_res["trace_error"]}
    result["seconds"] = round(time.perf_counter() - start, 2)
    result["status"] = "failed" if problems else "passed"
    return result


def _inputs_from(text: str | None) -> dict[str, str] | None:
    """`--inputs-from FILE.py:FUNC` as the job gives it to the torch worker."""
    if not text:
        return None
    path, sep, name = text.rpartition(":")
    if not sep or not path.endswith(".py") or not name.isidentifier():
        raise UsageError(f"--inputs-from {text!r}: expected FILE.py:FUNCTION, e.g. inputs.py:make_inputs")
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file (--inputs-from)")
    return {"path": os.path.abspath(path), "name": name}


def _shape_text(spec: dict[str, Any]) -> str:
    if "tuple" in spec:
        return "(" + ", ".join(_shape_text(s) for s in spec["tuple"]) + ")"
    return f"{spec['dtype']}{spec['shape']}"


def _reduction(inputs: list[dict[str, Any]]) -> int:
    """How many terms a gradient of a weight may sum over: the elements of the first input."""
    size = 1
    first = inputs[0] if inputs else {}
    while "tuple" in first and first["tuple"]:
        first = first["tuple"][0]
    for dim in first.get("shape", ()):
        size *= int(dim)
    return size


def _locate(t_res: dict[str, Any], m_res: dict[str, Any], placement: Any, a: dict[str, Any], b: dict[str, Any],
            args: argparse.Namespace, ported: Target, result: dict[str, Any]) -> dict[str, Any]:
    from .layers import compare_layers, describe, first_divergence, gradient_divergence, module_pairs, \
        provenance_lookup

    rows = compare_layers(t_res["layers"], m_res["layers"], a, b, module_pairs(placement.placed), args.rtol)
    out: dict[str, Any] = {"layers": rows}
    failure = [c["error"] for c in m_res["layers"] if c.get("name") is None and c.get("error")]
    if failure:
        out["error"] = f"the MindSpore network failed while traced: {failure[0]}"
    found = first_divergence(rows)
    lookup = provenance_lookup(ported.path)
    if found is not None:
        out["first"] = describe(found, lookup)
        return out
    for report in (result.get("modes") or {}).values():
        grads = (report.get("train") or {}).get("rows")
        if grads:
            backward = gradient_divergence(rows, grads)
            if backward is not None:
                if lookup is not None:
                    from .layers import _rewrites

                    backward["rewrites"] = _rewrites(backward, lookup)
                out["first"] = backward
                return out
    return out


def _write_resolved(path: str, original: Target, ported: Target, root: str, placement: Any,
                    ms_shapes: dict[str, list[int]], ms_dtypes: dict[str, str]) -> None:
    from ..weights.mapping import WeightMap, save_map
    from ..weights.place import resolved_node

    shapes = {name: tuple(shape) for name, shape in ms_shapes.items()}
    save_map(WeightMap(original.path, ported.path, {root: resolved_node(placement, root, shapes, ms_dtypes)}), path)


def _weights_report(placement: Any, t_res: dict[str, Any], m_res: dict[str, Any]) -> dict[str, Any]:
    placed = placement.placed
    return {
        "torch_tensors": len(t_res.get("state", {})),
        "copied": sum(1 for p in placed.values() if p.ms is not None and p.kind in ("parameter", "buffer")),
        "dropped": [{"torch": k, "note": p.note} for k, p in placed.items() if p.ms is None],
        "tied": [{"torch": k, "tied_to": p.tied_to, "ms": p.ms} for k, p in placed.items() if p.kind == "tie"],
        "unplaced": dict(placement.unplaced),
        "not_loaded": list(m_res.get("skipped", [])),
        "decisions": list(placement.decisions),
        "ms_parameters": len(m_res.get("params", {})),
    }


def _insensitive(t_outs: list[dict[str, Any]], a: dict[str, Any], rtol: float, atol: float) -> list[str]:
    """A warning for each torch output that another input (the next seed's) leaves within the tolerance: a port that
    ignored its input, or computed the layers that matter wrongly, would agree with it all the same."""
    from .compare import Arr, canonical_dtype, compare_arrays

    warnings = []
    for t_out in t_outs:
        path = t_out["path"]
        first, other = a.get(f"output/{path}"), a.get(f"moved/{path}")
        if first is None or other is None or "dtype" not in t_out or first.dtype.kind not in "fc":
            continue
        dtype = canonical_dtype(t_out["dtype"])
        outcome = compare_arrays(Arr(first, dtype), Arr(other, dtype), rtol, atol)
        if outcome.ok:
            warnings.append(f"torch's output{path} barely depends on the input: for another random input it moves by "
                            f"{outcome.max_abs_err:.3g} at most, within the tolerance, so outputs that agree prove "
                            "little (give inputs that matter with --inputs-from, or a smaller --atol/--rtol)")
    return warnings


def _outputs(t_outs: list[dict[str, Any]], m_outs: list[dict[str, Any]], a: dict[str, Any], b: dict[str, Any],
             mode: str, args: argparse.Namespace, problems: list[str]) -> list[dict[str, Any]]:
    rows = []
    m_by_path = {o["path"]: o for o in m_outs}
    if [o["path"] for o in t_outs] != [o["path"] for o in m_outs]:
        problems.append(f"{mode}: the outputs differ in structure: torch {[o['path'] for o in t_outs]}, "
                        f"MindSpore {[o['path'] for o in m_outs]}")
    for t_out in t_outs:
        path = t_out["path"]
        m_out = m_by_path.get(path)
        row: dict[str, Any] = {"path": path, "torch": {k: t_out.get(k) for k in ("shape", "dtype", "value") if k in t_out}}
        rows.append(row)
        if m_out is None:
            continue
        row["mindspore"] = {k: m_out.get(k) for k in ("shape", "dtype", "value") if k in m_out}
        if "value" in t_out or "value" in m_out:
            row["ok"] = t_out.get("value") == m_out.get("value")
            if not row["ok"]:
                problems.append(f"{mode}: output{path}: torch {t_out.get('value')}, MindSpore {m_out.get('value')}")
            continue
        row.update(_compare(a[f"output/{path}"], b[f"{mode}/output/{path}"], t_out["dtype"], m_out["dtype"],
                            args.rtol, args.atol))
        if not row["ok"]:
            problems.append(f"{mode}: output{path}: {row['reason']}")
    return rows


def _train(t_res: dict[str, Any], m_train: dict[str, Any], placement: Any, a: dict[str, Any], b: dict[str, Any],
           mode: str, args: argparse.Namespace, problems: list[str], transformed_shape: Any,
           reduction: int = 1) -> dict[str, Any]:
    """The loss, each gradient and each buffer after the step. A gradient's absolute tolerance scales with its
    magnitude and the reduction it sums over (`tolerance.relative_bound`): float32 noise over a long sum is
    not a difference."""
    import numpy as np

    from ..weights.facts import apply_transform
    from .tolerance import relative_bound

    loss = _compare(a["train/loss"], b[f"{mode}/train/loss"], "float32", "float32", args.rtol, args.atol)
    if not loss["ok"]:
        problems.append(f"{mode} training step: loss: {loss['reason']}")
    worst: dict[str, Any] = {"max_abs": 0.0, "max_rel": 0.0}
    compared = 0
    grad_rows: list[dict[str, Any]] = []
    for group, names, key in (("gradient", t_res["train"]["grads"], "grad"),
                              ("buffer after the step", t_res["train"]["buffers_after"], "after")):
        for name in names:
            placed = placement.placed.get(name)
            if placed is None or placed.ms is None:
                continue
            m_key = f"{mode}/{key}/{placed.ms}"
            if m_key not in b:
                problems.append(f"{mode} training step: no MindSpore {group} for {placed.ms} (torch {name})")
                if key == "grad":
                    grad_rows.append({"torch": name, "ms": placed.ms, "ok": False, "max_abs": None})
                continue
            expected = apply_transform(a[f"{key}/{name}"], placed.transform)
            atol = args.atol
            if key == "grad" and expected.size:
                atol = max(atol, relative_bound("float32", reduction, args.rtol) * float(np.max(np.abs(expected))))
            row = _compare(expected, b[m_key], "float32", "float32", args.rtol, atol)
            if key == "grad":
                grad_rows.append({"torch": name, "ms": placed.ms, "ok": row["ok"], "max_abs": row["max_abs"]})
            compared += 1
            for stat in ("max_abs", "max_rel"):
                if isinstance(row[stat], float) and row[stat] > worst[stat]:
                    worst[stat] = row[stat]
            if not row["ok"]:
                problems.append(f"{mode} training step: {group} of {name} ({placed.ms}): {row['reason']}")
    return {"loss": loss, "compared": compared, **worst, "rows": grad_rows}


# ---------------------------------------------------------------------------------- printing
def _err(value: Any) -> str:
    return f"{value:.3g}" if isinstance(value, (int, float)) else "-"


def print_text(result: dict[str, Any], out: TextIO) -> None:
    o, p = result["original"], result["ported"]
    out.write(f"torch:     {o['file']}:{o['factory']}" + (f" ({o['class']})" if o.get("class") else "") + "\n")
    out.write(f"MindSpore: {p['file']}:{p['factory']}" + (f" ({p['class']})" if p.get("class") else "") + "\n")
    out.write("inputs:    " + (", ".join(_shape_text(s) for s in result["inputs"]) or "from --inputs-from") + "\n")
    weights = result.get("weights")
    if weights:
        out.write(f"weights:   {weights['copied']} of {weights['torch_tensors']} torch tensors copied, "
                  f"{len(weights['dropped'])} dropped by the tables' facts, {len(weights['tied'])} tied, "
                  f"{len(weights['unplaced'])} unplaced; the MindSpore network has {weights['ms_parameters']} "
                  f"parameters (map: {result.get('map_root')})\n")
        for decision in weights["decisions"]:
            out.write(f"  chose     {decision}\n")
    for mode, report in (result.get("modes") or {}).items():
        if report.get("error"):
            out.write(f"{mode.upper():9}  {report['error']}\n")
            continue
        for row in report["outputs"]:
            ms_side = row.get("mindspore") or {}
            shape = f"{row['torch'].get('dtype', '')}{row['torch'].get('shape', '')}"
            verdict = "ok" if row.get("ok") else "DIFFERS"
            out.write(f"{mode.upper():9}  output{row['path']} {shape}: max abs {_err(row.get('max_abs'))}, "
                      f"max rel {_err(row.get('max_rel'))}"
                      + (f", cosine {row['cosine']:.6f}" if isinstance(row.get("cosine"), float) else "")
                      + f" {verdict}"
                      + ("" if ms_side.get("shape") == row["torch"].get("shape") else
                         f" (MindSpore {ms_side.get('dtype')}{ms_side.get('shape')})") + "\n")
        train = report.get("train")
        if train:
            out.write(f"{mode.upper():9}  training step ({result['train_step']}): loss max abs "
                      f"{_err(train['loss']['max_abs'])}; {train['compared']} gradients and buffers, worst max abs "
                      f"{_err(train['max_abs'])}, max rel {_err(train['max_rel'])}\n")
    located = result.get("locate") or {}
    show = result["status"] != "passed" or result.get("locate_requested")
    if located.get("first") and show:
        _print_location(located["first"], out)
    if located.get("layers") and show:
        _print_layers(located["layers"], out)
    for warning in result.get("warnings", []):
        out.write(f"warning:   {warning}\n")
    for problem in _grouped(result["problems"]):
        out.write(f"problem:   {problem}\n")
    tol = result["tolerance"]
    out.write(f"result:    {result['status'].upper()} (rtol {tol['rtol']:g}, atol {tol['atol']:g}"
              + (f", {result['seconds']} s" if "seconds" in result else "") + ")\n")


def _grouped(problems: list[str]) -> list[str]:
    """Problems with one line for many tensors left unplaced for one reason (the cause first)."""
    from .convert_weights import grouped

    unplaced = [p[len("unplaced torch tensor "):].partition(": ") for p in problems
                if p.startswith("unplaced torch tensor ")]
    lines = [f"unplaced torch tensor {name}: {why}" for name, why in grouped([(n, w) for n, _, w in unplaced])]
    return [p for p in problems if not p.startswith("unplaced torch tensor ")] + lines


def _print_location(first: dict[str, Any], out: TextIO) -> None:
    out.write(f"located:   {first['message']}\n")
    out.write(f"  port     {first.get('port') or '?'}" + (f" (called at {first['port_call']})"
                                                         if first.get("port_call") else "") + "\n")
    out.write(f"  original {first.get('original') or '?'}" + (f" (called at {first['original_call']})"
                                                             if first.get("original_call") else "") + "\n")
    for rewrite in first.get("rewrites") or []:
        for item in rewrite.get("rewrites") or []:
            out.write(f"  rewrite  line {rewrite['line']} `{rewrite['text']}`: {item['code']} {item.get('torch_api')}"
                      f" -> {item.get('mindspore_api')}" + (f" ({item['fix']})" if item.get("fix") else "") + "\n")


def _print_layers(rows: list[dict[str, Any]], out: TextIO) -> None:
    out.write("layers:    (in the order they finish; relative error = max |torch - MindSpore| / max |torch|)\n")
    for row in rows:
        err = row.get("outputs") or {}
        rel, cos = err.get("relative"), err.get("cosine")
        out.write(f"  {row['torch'] or '(network)':32} {row['class']:18} rel {_err(rel):>9}  cos "
                  f"{_err(cos):>7}  {row['verdict']}\n")


def run(args: argparse.Namespace, out: TextIO | None = None, pools: dict[str, Pool] | None = None) -> int:
    """Run `torch2ms verify-model`; `pools` ({"torch": ..., "mindspore": ...}) lets a caller reuse warm workers."""
    from ..weights.mapping import MapError

    out = out or sys.stdout
    if getattr(args, "spec", None):
        return run_spec(args, out, pools)
    try:
        if not args.original or not args.ported:
            raise UsageError("give ORIGINAL.py:FACTORY and PORTED.py:FACTORY, or --spec SPEC.json")
        original, ported = parse_target(args.original), parse_target(args.ported)
        inputs = [parse_input(text) for text in args.inputs]
        if not inputs and not getattr(args, "inputs_from", None):
            raise UsageError("give the inputs of forward with --input SHAPE[:DTYPE], e.g. --input 2,3,32,32 "
                             "(or --inputs-from FILE.py:FUNCTION)")
        if inputs and getattr(args, "inputs_from", None):
            raise UsageError("give the inputs with --input or with --inputs-from, not both")
        modes = [m.strip().lower() for m in str(args.modes).split(",") if m.strip()]
        if not modes or any(m not in MODES for m in modes):
            raise UsageError(f"--modes takes {', '.join(MODES)} (comma-separated), got {args.modes!r}")
        if args.rtol < 0 or args.atol < 0:
            raise UsageError("--rtol and --atol must not be negative")
        for option, path in (("--map", args.map), ("--weights", args.weights)):
            if path and not os.path.isfile(path):
                raise UsageError(f"{path}: no such file ({option})")
        result = verify(args, original, ported, inputs, modes, pools)
    except (UsageError, MapError, VerifyError) as exc:
        print(f"torch2ms verify-model: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        out.write(json.dumps(result, indent=1, default=str) + "\n")
    else:
        print_text(result, out)
    if args.record:
        try:
            write_model_record(args.record, result)
        except OSError as exc:
            print(f"torch2ms verify-model: error: {args.record}: cannot write the record: {exc.strerror or exc}",
                  file=sys.stderr)
            return EXIT_USAGE
    return EXIT_OK if result["status"] == "passed" else EXIT_FAILED


def read_spec(path: str) -> list[dict[str, Any]]:
    """The networks of a spec file, paths made absolute from its folder (UsageError naming what is wrong)."""
    from ..jsonfile import read_json

    data = read_json(path, "spec", UsageError)
    networks = data.get("networks") if isinstance(data, dict) else None
    if not isinstance(networks, list) or not networks:
        raise UsageError(f"{path}: expected {{\"networks\": [...]}} with at least one network")
    folder = os.path.dirname(os.path.abspath(path))
    out = []
    for k, item in enumerate(networks):
        where = f"{path}: networks[{k}]"
        if not isinstance(item, dict) or not all(isinstance(item.get(key), str) for key in ("original", "ported")):
            raise UsageError(f"{where}: needs \"original\" and \"ported\" as FILE.py:FACTORY texts")
        inputs = item.get("inputs", [])
        options = item.get("options", {})
        if not isinstance(inputs, list) or not all(isinstance(i, str) for i in inputs) or not isinstance(options, dict):
            raise UsageError(f"{where}: \"inputs\" is a list of --input texts, \"options\" an object")
        out.append({"original": os.path.join(folder, item["original"]), "ported": os.path.join(folder, item["ported"]),
                    "inputs": inputs, "options": options, "name": str(item.get("name") or item["original"])})
    return out


def run_spec(args: argparse.Namespace, out: TextIO, pools: dict[str, Pool] | None = None) -> int:
    """`verify-model --spec`: every network of the spec with the same warm workers; a summary table."""
    try:
        networks = read_spec(args.spec)
    except UsageError as exc:
        print(f"torch2ms verify-model: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    common = {k: getattr(args, k) for k in ("modes", "rtol", "atol", "seed", "device", "timeout", "memory_mb",
                                            "train_step", "loss", "locate")}
    rows: list[dict[str, Any]] = []
    own = pools is None
    warm = pools or {side: side_pool(side, args.device, args.memory_mb, args.timeout) for side in ("torch", "mindspore")}
    try:
        for network in networks:
            stderr = io.StringIO()
            with contextlib.redirect_stderr(stderr):
                code, result = check(network["original"], network["ported"], network["inputs"], warm,
                                     **{**common, **network["options"]})
            first = ((result.get("locate") or {}).get("first") or {})
            rows.append({"name": network["name"], "exit": code, "status": result.get("status", "error"),
                         "problems": result.get("problems", []) or stderr.getvalue().strip().splitlines()[-1:],
                         "located": first.get("message"), "port": first.get("port"), "seconds": result.get("seconds")})
    except TypeError as exc:
        print(f"torch2ms verify-model: error: {args.spec}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        if own:
            for pool in warm.values():
                pool.close()
    passed = sum(1 for row in rows if row["exit"] == EXIT_OK)
    if args.json:
        out.write(json.dumps({"spec": args.spec, "networks": rows, "passed": passed, "total": len(rows)},
                             indent=1, default=str) + "\n")
    else:
        for row in rows:
            out.write(f"{row['name']:40} {row['status'].upper():7} {_err(row['seconds']):>6} s"
                      + (f"  {row['problems'][0]}" if row["problems"] else "") + "\n")
            if row["located"]:
                out.write(f"{'':40} located: {row['located']} ({row['port']})\n")
        out.write(f"{passed} of {len(rows)} networks agree\n")
    if any(row["exit"] == EXIT_USAGE for row in rows):
        return EXIT_USAGE
    return EXIT_OK if passed == len(rows) else EXIT_FAILED


def check(original: str, ported: str, inputs: list[str], pools: dict[str, Pool] | None = None,
          **options: Any) -> tuple[int, dict[str, Any]]:
    """`torch2ms verify-model` from Python (for scripts such as a benchmark's comparison stage).

    `original`/`ported`: FILE.py:FACTORY; `inputs`: the --input texts; `options`: the command's long
    options with underscores (`train_step=True`, `rtol=1e-5`, `map="model.weights.json"`, `modes="graph"`).
    Returns the exit code and the result document (docs/weights.md); the document is empty on a usage
    error (exit 2, with the message on stderr)."""
    parser = argparse.ArgumentParser(prog="torch2ms verify-model")
    add_arguments(parser)
    args = parser.parse_args([original, ported] + [f"--input={text}" for text in inputs])
    for name, value in options.items():
        if not hasattr(args, name):
            raise TypeError(f"verify-model has no option --{name.replace('_', '-')}")
        setattr(args, name, value)
    args.json = True
    out = io.StringIO()
    code = run(args, out, pools)
    return code, json.loads(out.getvalue()) if out.getvalue().strip() else {}
