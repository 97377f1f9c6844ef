"""Print, architecture family by family, whether timm's models run as `torch2ms migrate` leaves them.

Usage: python benchmarks/timm_zoo.py [--port DIR] [--per-family N | --all] [--families a,b] [--models N]
                                     [--graph] [--classes 8]

timm (PyTorch Image Models) is migrated as a whole package (`torch2ms migrate TIMM --out DIR/timm`, or
`--port DIR` names a port made earlier, e.g. by benchmarks/timm_migrate.py --out DIR). A family is a file
under timm/models; by default one model of each (the smallest by its name: test_, pico, nano, tiny, ...),
`--per-family N` takes N, `--all` every name of timm.list_models(). For each model:

1. torch (a helper process with torch and the installed timm) builds it with `pretrained=False`, a few
   classes and, where the architecture takes `img_size`, a small one; the input size is the smallest of
   64, 96, 128, 160, 224 and the model's own that runs forward;
2. the verify-model workers (`torch2ms.verify.model`) build the same configuration: the torch worker from
   the installed timm, the MindSpore worker (torch refused) from the port imported as `timm`; the random
   torch weights go through the parameter-name map `migrate` wrote beside the model's file (the tool's
   own map, applied as `convert-weights` applies it); the outputs are compared within 1e-4 in PyNative
   (and GRAPH with `--graph`). A mode counts as matching only where every torch tensor was copied and every
   MindSpore parameter filled (verify-model's `weights.complete`): a random network's output may hardly depend
   on the tensors left at their initial values, so agreeing outputs prove nothing then (such rows say so).

timm imports torchvision's FrozenBatchNorm2d when it is imported; the torchvision wheels here do not load
beside CPU torch, so the torch side gets a small stand-in package holding that one class (written here,
used only by `freeze_batch_norm_2d`, which no model build calls). The port gets nothing: its imports are
its own.

Prints a table per family (model, build, PyNative, GRAPH, tensors placed, the first problem) and a summary
line: the families whose models build, match in PyNative, match in GRAPH, and have every torch tensor placed.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE / "src"))

from timm_noise import timm_folder  # noqa: E402
from torch2ms.verify.model import Target, UsageError, side_pool, verify  # noqa: E402
from torch2ms.verify.pool import VerifyError  # noqa: E402
from torch2ms.weights.mapping import MapError, WeightMap, read_map, save_map  # noqa: E402

SIZES = (64, 96, 128, 160, 224)
SMALL = ("test_", "pico", "nano", "atto", "femto", "xxxs", "xxs", "tiny", "xs", "mobile", "lite", "small", "18",
         "b0", "_s", "_t")

PLACEHOLDERS = '''\
"""A stand-in for torchvision (written by benchmarks/timm_zoo.py): any module, any name; using one raises."""
import importlib.abc
import importlib.machinery
import sys
import types


class _Placeholder(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Placeholder(f"{cls.__name__}.{name}", (), {})

    def __call__(cls, *args, **kwargs):
        raise RuntimeError(f"{cls.__name__}: torchvision is not installed (a stand-in)")


class _Module(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = _Placeholder(f"{self.__name__}.{name}", (), {})
        setattr(self, name, value)
        return value


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        if fullname.startswith("torchvision."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        return _Module(spec.name)

    def exec_module(self, module):
        module.__path__ = []


sys.meta_path.append(_Finder())  # after the real finders: files of the stand-in come first


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Placeholder(f"torchvision.{name}", (), {})
'''

FROZEN_BATCH_NORM = '''\
"""torchvision.ops.misc's FrozenBatchNorm2d for the torch side (written by benchmarks/timm_zoo.py)."""
import torch


class FrozenBatchNorm2d(torch.nn.Module):
    """Batch normalization with fixed statistics and affine parameters (buffers, not trained)."""

    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.eps = eps
        for name, value in (("weight", 1.0), ("bias", 0.0), ("running_mean", 0.0), ("running_var", 1.0)):
            self.register_buffer(name, torch.full((num_features,), value))

    def forward(self, x):
        scale = self.weight * (self.running_var + self.eps).rsqrt()
        shift = self.bias - self.running_mean * scale
        return x * scale.reshape(1, -1, 1, 1) + shift.reshape(1, -1, 1, 1)
'''


def stand_in(folder: Path, torch_side: bool) -> Path:
    """A torchvision package of placeholders in `folder` (with the real FrozenBatchNorm2d on the torch side)."""
    package = folder / "torchvision"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(PLACEHOLDERS)
    if torch_side:
        (package / "ops").mkdir()
        (package / "ops" / "__init__.py").write_text("")
        (package / "ops" / "misc.py").write_text(FROZEN_BATCH_NORM)
    return folder


TORCH_HELPER = '''\
import json, signal, sys
sys.path.insert(0, sys.argv[1])
import timm, torch
from timm.models._registry import _model_to_module


def family(name):
    return _model_to_module.get(name, "?").rsplit(".", 1)[-1]


def alarm(*_):
    raise TimeoutError("probe timed out")


signal.signal(signal.SIGALRM, alarm)
if sys.argv[2] == "list":
    print(json.dumps({name: family(name) for name in timm.list_models()}))
    sys.exit(0)
out = {}
for name in json.loads(sys.argv[3]):
    cfg = timm.models.get_pretrained_cfg(name)
    own = int((cfg.input_size if cfg is not None and cfg.input_size else (3, 224, 224))[-1])
    chans = int((cfg.input_size if cfg is not None and cfg.input_size else (3, 224, 224))[0])
    sizes = sorted({s for s in SIZES if s <= own} | {own})
    found, errors = None, []
    signal.alarm(120)
    try:
        for size in sizes:
            for kwargs in ({"num_classes": CLASSES, "img_size": size}, {"num_classes": CLASSES}):
                try:
                    torch.manual_seed(0)
                    model = timm.create_model(name, pretrained=False, **kwargs).eval()
                    with torch.no_grad():
                        model(torch.rand(2, chans, size, size))
                except TimeoutError:
                    raise
                except Exception as exc:
                    errors.append(f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}")
                    continue
                found = {"kwargs": kwargs, "input": [2, chans, size, size], "class": type(model).__name__,
                         "module": type(model).__module__}
                break
            if found:
                break
    except TimeoutError as exc:
        errors.append(str(exc))
    finally:
        signal.alarm(0)
    out[name] = found or {"error": errors[-1] if errors else "no size runs"}
print(json.dumps(out))
'''

PORT_FACTORY = '''\
"""The port's factory (benchmarks/timm_zoo.py): timm imported from the migrated tree."""
import sys

sys.path[:0] = {folders!r}
import timm  # noqa: E402


def build(name, **kwargs):
    return timm.create_model(name, pretrained=False, **kwargs)
'''

TORCH_FACTORY = '''\
"""The original's factory (benchmarks/timm_zoo.py): the installed timm."""
import sys

sys.path.insert(0, {folder!r})
import timm  # noqa: E402


def build(name, **kwargs):
    return timm.create_model(name, pretrained=False, **kwargs)
'''


def helper(work: Path, *argv: str, classes: int) -> Any:
    script = TORCH_HELPER.replace("SIZES", repr(SIZES)).replace("CLASSES", str(classes))
    done = subprocess.run([sys.executable, "-c", script, str(work / "stand_in"), *argv], capture_output=True,
                          text=True, timeout=7200)
    if done.returncode != 0:
        sys.exit(f"the torch helper failed: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def smallness(name: str) -> tuple[int, int, str]:
    hits = [i for i, token in enumerate(SMALL) if token in name]
    return (min(hits) if hits else len(SMALL), len(name), name)


def choose(families: dict[str, list[str]], per_family: int | None) -> list[str]:
    chosen = []
    for names in families.values():
        ranked = sorted(names, key=smallness)
        chosen.extend(ranked if per_family is None else ranked[:per_family])
    return chosen


def migrate(work: Path) -> Path:
    source = str(timm_folder(None))
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "torch2ms", "migrate", source, "--out", str(work / "port" / "timm"),
                           "--jobs", "2", "-q"], env=dict(os.environ, PYTHONPATH=str(HERE / "src")),
                          capture_output=True, text=True, timeout=7200)
    summary = [line for line in done.stdout.splitlines() if line.startswith("torch2ms migrate:")]
    print(f"migrated timm in {time.perf_counter() - start:.0f} s: {summary[-1] if summary else done.stderr[-500:]}")
    return work / "port"


def family_maps(port: Path, work: Path, families: set[str]) -> dict[str, str]:
    """One map per family of `families`: the roots of every map `migrate` wrote, the family's own file's last
    (they win)."""
    maps: dict[str, WeightMap] = {}
    for path in sorted((port / "timm").rglob("*.weights.json")):
        try:
            maps[str(path)] = read_map(str(path))
        except MapError as exc:
            print(f"unreadable map: {exc}")
    everything: dict[str, Any] = {}
    for weight_map in maps.values():
        everything.update(weight_map.roots)
    out: dict[str, str] = {}
    for path, weight_map in maps.items():
        stem = Path(path).name[: -len(".weights.json")]
        if stem not in families:
            continue
        merged = WeightMap(weight_map.torch_source, weight_map.ported_source, {**everything, **weight_map.roots})
        target = work / "maps" / f"{stem}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        save_map(merged, str(target))
        out[stem] = str(target)
    return out


def _imports_torch(node: ast.AST) -> bool:
    names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
        [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
    return any(n.split(".")[0] in ("torch", "torchvision") for n in names)


def torch_at_import(port: Path, folders: tuple[str, ...] = ("layers", "models")) -> tuple[list[str], int, int]:
    """The files under the port's timm/FOLDER (for each of `folders`; "" is timm/ itself, without its
    subfolders) that import torch or torchvision outside any function (importing the package fails without
    torch), how many more import it inside functions only (they fail when those run), and how many files
    there are."""
    blocked, inside, files = [], 0, 0
    paths = [p for f in folders for p in ((port / "timm").glob("*.py") if not f else (port / "timm" / f).rglob("*.py"))]
    for path in sorted(paths):
        files += 1
        tree = ast.parse(path.read_text(encoding="utf-8"))
        stack: list[ast.AST] = list(tree.body)
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if _imports_torch(node):
                blocked.append(str(path.relative_to(port)))
                break
            stack.extend(ast.iter_child_nodes(node))
        else:
            inside += any(_imports_torch(node) for node in ast.walk(tree))
    return blocked, inside, files


def reasons(unplaced: dict[str, str]) -> list[tuple[str, int, str]]:
    """The torch tensors the map did not place, grouped by reason: (reason, how many, one of them)."""
    groups: dict[str, list[str]] = defaultdict(list)
    for name, why in sorted(unplaced.items()):
        groups[re.sub(r"\s+", " ", str(why))[:150]].append(name)
    return sorted(((why, len(names), names[0]) for why, names in groups.items()), key=lambda g: -g[1])


def first_problem(result: dict[str, Any]) -> str:
    problems = [p for p in result.get("problems", []) if not p.startswith("unplaced torch tensor")]
    text = problems[0] if problems else (result.get("problems") or [""])[0]
    return re.sub(r"\s+", " ", text)[:110]


def check(name: str, family: str, probe: dict[str, Any], work: Path, maps: dict[str, str], modes: list[str],
          pools: dict[str, Any], timeout: float) -> dict[str, Any]:
    """Verify one model with the map of its family's file: the file that registers the model configures the
    network (its class may live in another file, given this file's blocks)."""
    row: dict[str, Any] = {"model": name, "build": False, "modes": {}, "placed": 0, "tensors": 0, "problem": ""}
    if "error" in probe:
        row["problem"] = f"torch: {probe['error']}"
        row["torch"] = False
        return row
    row["torch"] = True
    kwargs = dict(probe["kwargs"])
    text = f"build({name!r}, " + ", ".join(f"{k}={v!r}" for k, v in kwargs.items()) + ")"
    original = Target(str(work / "zoo_torch.py"), text, "build", (name,), kwargs)
    ported = Target(str(work / "zoo_port.py"), text, "build", (name,), kwargs)
    args = SimpleNamespace(rtol=1e-4, atol=1e-4, seed=0, weights=None, map=maps.get(family), train_step=False,
                           loss="mse", locate=False, write_map=None, device="cpu", memory_mb=8192, timeout=timeout,
                           inputs_from=None)
    if args.map is None:
        row["problem"] = f"no parameter-name map beside the port of {family}.py"
        return row
    try:
        result = verify(args, original, ported, [{"shape": probe["input"], "dtype": "float32"}], modes, pools)
    except (UsageError, MapError, VerifyError) as exc:
        row["problem"] = re.sub(r"\s+", " ", str(exc))[:110]
        return row
    weights = result.get("weights") or {}
    row["tensors"] = int(weights.get("torch_tensors", 0))
    unplaced = weights.get("unplaced") or {}
    row["placed"] = row["tensors"] - len(unplaced)
    row["unplaced"] = reasons(unplaced)
    row["build"] = "class" in result.get("ported", {})
    row["chance"] = []
    for mode in modes:
        report = (result.get("modes") or {}).get(mode) or {}
        outputs = report.get("outputs") or []
        agree = bool(outputs) and not report.get("error") and all(o.get("ok") for o in outputs)
        # outputs within the tolerance prove nothing while tensors were not copied (the network's output may hardly
        # depend on them): such a mode does not count as agreeing, and the row says so
        row["modes"][mode] = agree and weights.get("complete") is True
        if agree and weights.get("complete") is not True:
            row["chance"].append(mode)
    row["problem"] = first_problem(result) if result.get("status") != "passed" else ""
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=Path, help="a folder holding a migrated timm/ (default: migrate now)")
    parser.add_argument("--per-family", type=int, default=1, help="models per family (default 1)")
    parser.add_argument("--all", action="store_true", help="every model name of timm.list_models()")
    parser.add_argument("--families", help="only these families (files under timm/models), comma-separated")
    parser.add_argument("--models", type=int, help="stop after N models")
    parser.add_argument("--graph", action="store_true", help="also compare in GRAPH mode")
    parser.add_argument("--classes", type=int, default=8, help="num_classes of every model (default 8)")
    parser.add_argument("--lend-torchvision", action="store_true",
                        help="give the port the torch-free placeholder torchvision too (its use still fails), so that "
                             "the models are measured past a port that imports torchvision (timm.data does)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds for each side of one model")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="torch2ms-timm-zoo-"))
    stand_in(work / "stand_in", torch_side=True)
    lent = [str(stand_in(work / "port_stand_in", torch_side=False))] if args.lend_torchvision else []
    port = args.port.resolve() if args.port else migrate(work)
    if not (port / "timm" / "__init__.py").is_file():
        sys.exit(f"{port}: no migrated timm/ in it")
    blocked, inside, files = torch_at_import(port)
    print(f"port: {len(blocked)} of {files} files under timm/layers and timm/models import torch or torchvision "
          f"outside functions, {inside} more inside functions" + (f" (e.g. {', '.join(blocked[:3])})" if blocked else ""))
    (work / "zoo_torch.py").write_text(TORCH_FACTORY.format(folder=str(work / "stand_in")))
    (work / "zoo_port.py").write_text(PORT_FACTORY.format(folders=[str(port), *lent]))
    start = time.perf_counter()
    names = helper(work, "list", classes=args.classes)
    families: dict[str, list[str]] = defaultdict(list)
    for name, family in names.items():
        families[family].append(name)
    print(f"timm: {len(names)} model names in {len(families)} families")
    if args.families:
        wanted = {f.strip() for f in args.families.split(",") if f.strip()}
        families = defaultdict(list, {f: n for f, n in families.items() if f in wanted})
    chosen = choose(dict(sorted(families.items())), None if args.all else args.per_family)
    if args.models:
        chosen = chosen[: args.models]
    print(f"checking {len(chosen)} model(s) of {len(families)} famil{'y' if len(families) == 1 else 'ies'}")
    probes = helper(work, "probe", json.dumps(chosen), classes=args.classes)
    maps = family_maps(port, work, {names[name] for name in chosen})
    modes = ["pynative", "graph"] if args.graph else ["pynative"]
    rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    pools = {"torch": side_pool("torch", memory_mb=8192, timeout=args.timeout),
             "mindspore": side_pool("mindspore", memory_mb=8192, timeout=args.timeout)}
    try:
        for name in chosen:
            probe = probes[name]
            family = names[name]
            rows[family].append(check(name, family, probe, work, maps, modes, pools, args.timeout))
            row = rows[family][-1]
            print(f"[{sum(map(len, rows.values()))}/{len(chosen)}] {family}: {name} build={row['build']} "
                  f"{row['modes']} {row['problem'][:80]}", file=sys.stderr, flush=True)
    finally:
        for pool in pools.values():
            pool.close()
    report(rows, modes, time.perf_counter() - start)
    if args.lend_torchvision:
        print("(the port was lent a placeholder torchvision: --lend-torchvision)")
    return 0


def report(rows: dict[str, list[dict[str, Any]]], modes: list[str], seconds: float) -> None:
    families = sorted(rows)
    counted = [f for f in families if all(r.get("torch") for r in rows[f])]
    for family in families:
        print(f"\n{family}")
        for row in rows[family]:
            marks = " ".join(f"{mode}={'ok' if row['modes'].get(mode) else '--'}" for mode in modes)
            chance = f" (outputs agree in {', '.join(row['chance'])} but the weights are incomplete: not counted)" \
                if row.get("chance") else ""
            print(textwrap.shorten(f"  {row['model']:<34} build={'ok' if row['build'] else '--'} {marks} "
                                   f"placed {row['placed']}/{row['tensors']}{chance}  {row['problem']}", 240))
            for why, count, example in row.get("unplaced", []):
                print(textwrap.shorten(f"      not placed: {count} (e.g. {example}): {why}", 200))

    def share(test: Any) -> str:
        hits = sum(1 for f in counted if all(test(r) for r in rows[f]))
        return f"{hits}/{len(counted)} ({100 * hits / max(len(counted), 1):.0f}%)"

    models = [r for f in counted for r in rows[f]]
    print(f"\nsummary: {len(counted)} families whose models torch builds ({len(families) - len(counted)} others left "
          f"out); build {share(lambda r: r['build'])}"
          + "".join(f"; match {mode} {share(lambda r, m=mode: r['modes'].get(m))}" for mode in modes)
          + f"; every tensor placed {share(lambda r: r['tensors'] and r['placed'] == r['tensors'])}"
          + f"; outputs agreeing with incomplete weights (not counted) {sum(1 for r in models if r.get('chance'))}"
          + f"; models {len(models)}, tensors placed {sum(r['placed'] for r in models)}/"
          f"{sum(r['tensors'] for r in models)}; {seconds:.0f} s")


if __name__ == "__main__":
    sys.exit(main())
