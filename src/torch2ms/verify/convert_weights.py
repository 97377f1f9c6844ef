"""`torch2ms convert-weights CHECKPOINT --map MAP --out MODEL.ckpt`: a torch state_dict as a MindSpore checkpoint.

The checkpoint is read in a torch worker process (``torch.load(..., weights_only=True)`` for
.pt/.pth/.bin, safetensors for .safetensors); its names are placed through the map (`place`);
the MindSpore checkpoint is written by a MindSpore worker process (which never imports torch),
atomically. Every name that finds no place is reported with the reason.

Before anything is written the placement is checked against the map: a tensor of another shape or
kind of dtype than the map states is unplaced, and a parameter the map names that no tensor of the
checkpoint fills is "uncovered" (a checkpoint of part of the network would leave it at its initial
value). float64 tensors are written as float32 (MindSpore's layers hold float32 and
`load_param_into_net` refuses a float64 value for them) unless the map states float64 or
--keep-float64.

Exit codes: 0 every tensor placed, every parameter of the map covered, the checkpoint written; 1 some
tensor unplaced or some parameter uncovered (nothing is written unless --allow-partial); 2 a usage
error, an unreadable file or map, no backend.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, Any, TextIO

from .. import writing
from ..extras import require
from ..writing import add_arguments as add_write_arguments

if TYPE_CHECKING:  # the command line registers this command without loading the map code
    from ..weights.mapping import Node, WeightMap
    from ..weights.place import Result

EXIT_OK, EXIT_UNPLACED, EXIT_USAGE = 0, 1, 2


class ConvertError(Exception):
    """A usage error or a file that cannot be read: exit 2."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("checkpoint", metavar="CHECKPOINT", help="a torch state_dict: .pt/.pth/.bin or .safetensors")
    parser.add_argument("--map", required=True, metavar="MAP.json",
                        help="the parameter-name map (torch2ms migrate writes one beside each ported file; "
                             "verify-model --write-map writes one resolved for a checkpoint)")
    parser.add_argument("--out", required=True, metavar="MODEL.ckpt", help="the MindSpore checkpoint to write")
    parser.add_argument("--root", metavar="NAME", help="the map's root to use (a cell class or a factory call); "
                                                       "default: the one that names every tensor")
    parser.add_argument("--strip-prefix", default="", metavar="PREFIX",
                        help="remove PREFIX from every checkpoint name first (e.g. module. of DataParallel)")
    parser.add_argument("--allow-partial", "--allow-unplaced", dest="allow_partial", action="store_true",
                        help="write the checkpoint even when some tensors find no place or some parameters of the "
                             "map get no tensor (both still listed; exit 0)")
    parser.add_argument("--reverse", action="store_true",
                        help="the other way: CHECKPOINT is a MindSpore .ckpt, --out a torch state_dict (.pt/.pth, "
                             "or .safetensors), each tensor under its torch name(s) by the map read backwards")
    parser.add_argument("--keep-float64", action="store_true",
                        help="write float64 tensors as float64 (default: as float32, unless the map states float64)")
    parser.add_argument("--timeout", type=float, default=600.0, metavar="S", help="seconds for each step (default 600)")
    parser.add_argument("--memory-mb", type=int, default=16384, metavar="MB",
                        help="address space each worker may add after its imports (default 16384)")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON document")
    add_write_arguments(parser)


def choose_root(weight_map: WeightMap, keys: list[str], wanted: str | None) -> tuple[str, Node, Result, str]:
    """The root to apply: the one asked for, the only one, or the one that places every key (fewest unplaced)."""
    from ..weights.place import place

    if wanted is not None:
        if wanted not in weight_map.roots:
            raise ConvertError(f"the map has no root {wanted!r} (it has: {', '.join(weight_map.roots)})")
        node = weight_map.roots[wanted]
        return wanted, node, place(node, keys), "asked for"
    if not weight_map.roots:
        raise ConvertError("the map has no roots")
    tries = [(name, node, place(node, keys)) for name, node in weight_map.roots.items()]
    tries.sort(key=lambda t: len(t[2].unplaced))
    best = [t for t in tries if len(t[2].unplaced) == len(tries[0][2].unplaced)]
    if len(best) > 1 and len(tries) > 1:
        placements = {tuple(sorted((k, p.ms) for k, p in t[2].placed.items())) for t in best}
        if len(placements) > 1:
            raise ConvertError("several roots of the map fit the checkpoint equally well: "
                               + ", ".join(t[0] for t in best) + "; choose one with --root")
    name, node, result = best[0]
    why = "the only root" if len(tries) == 1 else (
        "it names every tensor" if not result.unplaced else "it leaves the fewest tensors unplaced")
    return name, node, result, why


def _read(args: argparse.Namespace, pools: dict[str, Any] | None, side: str, op: str, npz: str) -> dict[str, Any]:
    """The checkpoint's tensors into `npz`, read by the side's worker; its names, shapes and dtypes."""
    from .model import pool_for

    with pool_for(side, args, pools) as pool:
        read: dict[str, Any] = pool.run([{"op": op, "path": os.path.abspath(args.checkpoint), "out": npz,
                                          "timeout": args.timeout}])[0]
    if read.get("status") != "ok":
        raise ConvertError(f"{args.checkpoint}: cannot read the checkpoint: {read.get('reason')}")
    return read


def reverse(args: argparse.Namespace, pools: dict[str, Any] | None = None) -> dict[str, Any]:
    """`--reverse`: a MindSpore checkpoint as a torch state_dict, through the map read backwards."""
    from .model import pool_for
    from ..weights.mapping import read_map
    from ..weights.place import place_reverse

    if not os.path.isfile(args.checkpoint):
        raise ConvertError(f"{args.checkpoint}: no such file")
    weight_map = read_map(args.map)
    writing.check_target(args.out)
    if not weight_map.roots:
        raise ConvertError("the map has no roots")
    report: dict[str, Any] = {"checkpoint": args.checkpoint, "map": args.map, "out": args.out, "written": False,
                              "reverse": True, "notes": []}
    with writing.temporary_folder("convert") as tmp:
        npz = os.path.join(tmp, "ms.npz")
        keys: dict[str, dict[str, Any]] = _read(args, pools, "mindspore", "read_checkpoint", npz)["keys"]
        names = list(weight_map.roots) if args.root is None else [args.root]
        if args.root is not None and args.root not in weight_map.roots:
            raise ConvertError(f"the map has no root {args.root!r} (it has: {', '.join(weight_map.roots)})")
        tries = sorted(((name, *place_reverse(weight_map.roots[name], keys)) for name in names),
                       key=lambda t: len(t[2]))
        root, placed, unplaced = tries[0]
        plan = [{"ms": key, "torch": p.torch, "dtype": keys[key]["dtype"],
                 "transform": {a: list(b) if isinstance(b, tuple) else b for a, b in p.transform}}
                for key, found in sorted(placed.items()) for p in found]
        report.update(root=root, root_reason="asked for" if args.root else "it leaves the fewest tensors unplaced",
                      tensors=len(keys), placed=[{"ms": s["ms"], "torch": s["torch"]} for s in plan],
                      unplaced=dict(sorted(unplaced.items())), uncovered={}, dropped=[], tied=[], buffers=[],
                      decisions=[])
        if unplaced and not args.allow_partial:
            return report
        if not plan:
            raise ConvertError(f"{args.checkpoint}: no tensor of the checkpoint has a place in the map")
        with pool_for("torch", args, pools) as pool:
            write = pool.run([{"op": "write_state", "npz": npz, "plan": plan, "out": os.path.abspath(args.out),
                               "timeout": args.timeout}])[0]
        if write.get("status") != "ok":
            raise ConvertError(f"{args.out}: cannot write the torch state_dict: {write.get('reason')}")
        report["written"] = True
    return report


def convert(args: argparse.Namespace, pools: dict[str, Any] | None = None) -> dict[str, Any]:
    from ..weights.mapping import read_map
    from ..weights.place import place, uncovered
    from .model import pool_for

    if not os.path.isfile(args.checkpoint):
        raise ConvertError(f"{args.checkpoint}: no such file")
    if not os.access(args.checkpoint, os.R_OK):
        raise ConvertError(f"{args.checkpoint}: not readable")
    weight_map = read_map(args.map)
    writing.check_target(args.out)  # a device, a link, the checkpoint itself: refused before any work
    # Bad input is named first; then the arrays need NumPy here (torch and MindSpore run in the workers).
    require("torch2ms convert-weights", "verify", "numpy")
    from .model_worker import load_arrays

    report: dict[str, Any] = {"checkpoint": args.checkpoint, "map": args.map, "out": args.out, "written": False}
    with writing.temporary_folder("convert") as tmp:
        npz = os.path.join(tmp, "state.npz")
        read = _read(args, pools, "torch", "read", npz)
        report["notes"] = list(read.get("notes", []))
        keys: dict[str, dict[str, Any]] = read["keys"]
        names = {k: k[len(args.strip_prefix):] if args.strip_prefix and k.startswith(args.strip_prefix) else k
                 for k in keys}
        shapes = {names[k]: tuple(v["shape"]) for k, v in keys.items()}
        root, node, _, why = choose_root(weight_map, list(shapes), args.root)
        result = place(node, list(shapes), shapes)
        report.update(root=root, root_reason=why, tensors=len(keys), decisions=result.decisions)
        arrays = load_arrays(npz)
        by_name = {names[k]: k for k in keys}
        tied_differ = [k for k, p in result.placed.items()
                       if p.kind == "tie" and p.tied_to in by_name
                       and not _same(arrays[by_name[k]], arrays[by_name[p.tied_to]])]
        for key in tied_differ:
            result.unplaced[key] = (f"tied to {result.placed[key].tied_to} by the map, but the checkpoint holds "
                                    "other values for it")
            del result.placed[key]
        for key, p in list(result.placed.items()):
            have = keys[by_name[key]]["dtype"]
            if p.dtype is not None and p.ms is not None and _is_float(have) != _is_float(p.dtype):
                result.unplaced[key] = f"dtype mismatch: the checkpoint's {key} is {have}, the map expects " \
                                       f"{p.dtype} for {p.ms}"
                del result.placed[key]
        # A tied name whose tensor the checkpoint holds under that name only (safetensors keeps one name of
        # a shared tensor) carries the values.
        written = {k: p for k, p in sorted(result.placed.items()) if p.ms is not None and (
            p.kind == "parameter" or (p.kind == "tie" and p.tied_to not in by_name))}
        plan = []
        narrowed = []
        for key, p in written.items():
            step = {"torch": by_name[key], "ms": p.ms, "dtype": keys[by_name[key]]["dtype"],
                    "transform": {a: list(b) if isinstance(b, tuple) else b for a, b in p.transform}}
            if p.dtype is not None and p.dtype != step["dtype"]:
                step["ms_dtype"] = p.dtype
            elif p.dtype is None and step["dtype"] == "float64" and not args.keep_float64:
                step["ms_dtype"] = "float32"
                narrowed.append(key)
            plan.append(step)
        if narrowed:
            report["notes"].append(f"{len(narrowed)} float64 tensor(s) written as float32: MindSpore's layers hold "
                                   "float32 and refuse a float64 value (--keep-float64 keeps them)")
        report.update(
            placed=[{"torch": k, "ms": p.ms, "transform": dict(p.transform) or None} for k, p in written.items()],
            dropped=[{"torch": k, "note": p.note} for k, p in sorted(result.placed.items()) if p.ms is None],
            tied=[{"torch": k, "tied_to": p.tied_to} for k, p in sorted(result.placed.items()) if p.kind == "tie"],
            buffers=[{"torch": k, "ms": p.ms} for k, p in sorted(result.placed.items()) if p.kind == "buffer"],
            unplaced=dict(sorted(result.unplaced.items())),
            uncovered=dict(sorted(uncovered(node, result).items())))
        if (result.unplaced or report["uncovered"]) and not args.allow_partial:
            return report
        if not plan:
            raise ConvertError(f"{args.checkpoint}: no tensor of the checkpoint has a place in the map")
        # the atomic writer's temporary file beside --out, filled by the MindSpore worker, renamed when complete
        with writing.reserve(args.out, suffix=".ckpt") as partial, pool_for("mindspore", args, pools) as pool:
            write = pool.run([{"op": "write", "npz": npz, "plan": plan, "out": os.path.abspath(partial),
                               "timeout": args.timeout}])[0]
            if write.get("status") != "ok":
                raise ConvertError(f"{args.out}: cannot write the MindSpore checkpoint: {write.get('reason')}")
        report["written"] = True
    return report


def _is_float(dtype: str) -> bool:
    return dtype.startswith(("float", "bfloat", "complex"))


def _same(a: Any, b: Any) -> bool:
    return bool(a.shape == b.shape and (a == b).all())


def grouped(items: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(name, reason) pairs with one line per reason: a reason shared by several names is given once, with
    the count and the names' common ending (57 `num_batches_tracked` of BatchNorm layers become one line)."""
    by_reason: dict[str, list[str]] = {}
    for name, reason in items:
        by_reason.setdefault(reason, []).append(name)
    out = []
    for reason, names in by_reason.items():
        if len(names) == 1:
            out.append((names[0], reason))
            continue
        tails = {n.rpartition(".")[2] for n in names}
        what = f"*.{tails.pop()}" if len(tails) == 1 else f"{names[0]}, ..."
        out.append((f"{len(names)} tensors ({what})", reason))
    return out


def print_text(report: dict[str, Any], out: TextIO) -> None:
    for note in report.get("notes", []):
        out.write(f"note: {note}\n")
    out.write(f"map root {report['root']} ({report['root_reason']})\n")
    for decision in report.get("decisions", []):
        out.write(f"chose {decision}\n")
    out.write(f"{len(report['placed'])} of {report['tensors']} tensors placed, {len(report['dropped'])} dropped by "
              f"the tables' facts, {len(report['tied'])} tied, {len(report['buffers'])} buffers not written "
              f"(MindSpore checkpoints hold parameters only), {len(report['unplaced'])} unplaced; "
              f"{len(report['uncovered'])} parameter(s) of the map get no tensor\n")
    for name, note in grouped([(item["torch"], item["note"]) for item in report["dropped"]]):
        out.write(f"dropped {name}: {note}\n")
    for name, why in grouped(list(report["unplaced"].items())):
        out.write(f"unplaced {name}: {why}\n")
    for ms_name, torch_name in report["uncovered"].items():
        out.write(f"uncovered {ms_name}: the checkpoint has no {torch_name} (it would keep its initial value)\n")
    if report["written"]:
        out.write(f"wrote {report['out']}\n")
    else:
        out.write(f"no checkpoint written: {len(report['unplaced'])} tensor(s) unplaced, {len(report['uncovered'])} "
                  "parameter(s) uncovered (--allow-partial writes the others)\n")


def run(args: argparse.Namespace, out: TextIO | None = None, pools: dict[str, Any] | None = None) -> int:
    """Run `torch2ms convert-weights`; `pools` ({"torch": ..., "mindspore": ...}) lets a caller reuse warm workers."""
    from ..weights.mapping import MapError
    from .pool import VerifyError

    out = out or sys.stdout
    try:
        report = reverse(args, pools) if getattr(args, "reverse", False) else convert(args, pools)
    except (ConvertError, MapError, VerifyError, writing.WriteError) as exc:
        print(f"torch2ms convert-weights: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        out.write(json.dumps(report, indent=1, default=str) + "\n")
    else:
        print_text(report, out)
    partial = bool(report["unplaced"] or report["uncovered"])
    return EXIT_UNPLACED if partial and not args.allow_partial else EXIT_OK
