"""Migrate real model files from public packages and check that the output runs and computes what torch does.

    python benchmarks/migrate_models.py [--cache DIR] [--only NAME,...] [--device cpu]

1. download: `pip download --no-deps PACKAGE==VERSION` into the cache folder (default
   benchmarks/.cache, not committed) and unpack the model files into a tree per package;
2. migrate: `torch2ms migrate TREE --out PORTED` (the command as a user runs it);
   migrate also writes the parameter-name map of each file's cell classes beside it (the "maps" column);
3. compare (`compare`, one function): `torch2ms verify-model` (its Python entry point,
   torch2ms.verify.model.check) builds the network from its config (random weights, no model hub)
   in a torch worker and the migrated Cell in a MindSpore worker where `import torch` fails, copies
   the weights by the parameter-name map of the two files (the tables' weight facts: no rename list
   of our own), runs the same inputs in PyNative and in GRAPH mode and compares every output, with
   the tolerance 1e-4 (absolute). A factory argument that is not a literal (a class) is passed
   through a small module written beside each side's file for the run.

Prints per file: findings, rewritten, remaining, maps, the stage reached, the weights copied, the max
abs difference and verify-model's verdict.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass, field
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TOLERANCE = 1e-4
if ROOT not in sys.path:  # torch2ms from this checkout (verify-model is the comparison stage)
    sys.path.insert(0, ROOT)


@dataclass(frozen=True)
class Package:
    name: str  # the tree's folder (an importable package name)
    requirement: str  # what pip downloads
    members: tuple[str, ...]  # files of the archive to unpack (their license headers stay)


@dataclass(frozen=True)
class Model:
    name: str
    package: str
    module: str  # file stem inside the package tree
    factory: str  # class or function of the module
    # "@Name": a name of the module; {"torch": dotted name, "mindspore": dotted name}: each side's own object
    kwargs: dict[str, Any] = field(default_factory=dict)
    inputs: tuple[tuple[int, ...], ...] = ((2, 5, 16),)


PACKAGES = {
    "sam": Package("sam", "segment-anything==1.0",
                   ("segment_anything/modeling/common.py", "segment_anything/modeling/transformer.py")),
    "dino": Package("dino", "dinov2==0.0.1.dev2",
                    ("dinov2/layers/mlp.py", "dinov2/layers/attention.py", "dinov2/layers/patch_embed.py",
                     "dinov2/layers/swiglu_ffn.py", "dinov2/layers/layer_scale.py")),
    "pm": Package("pm", "pretrainedmodels==0.7.4",
                  ("pretrainedmodels/models/senet.py", "pretrainedmodels/models/fbresnet.py")),
    "legere": Package("legere", "legere==0.11.0", ("legere/model.py", "legere/charset.py")),
}

MODELS = (
    Model("sam/common.py", "sam", "common", "MLPBlock", {"embedding_dim": 16, "mlp_dim": 32}),
    Model("sam/transformer.py", "sam", "transformer", "TwoWayTransformer",
          {"depth": 2, "embedding_dim": 32, "num_heads": 4, "mlp_dim": 64},
          ((1, 32, 4, 4), (1, 32, 4, 4), (1, 3, 32))),
    Model("dinov2/mlp.py", "dino", "mlp", "Mlp", {"in_features": 16, "hidden_features": 32}),
    Model("dinov2/attention.py", "dino", "attention", "Attention", {"dim": 16, "num_heads": 4}),
    Model("dinov2/patch_embed.py", "dino", "patch_embed", "PatchEmbed",
          {"img_size": 16, "patch_size": 4, "in_chans": 3, "embed_dim": 8}, ((2, 3, 16, 16),)),
    Model("dinov2/swiglu_ffn.py", "dino", "swiglu_ffn", "SwiGLUFFN", {"in_features": 16, "hidden_features": 32}),
    Model("dinov2/layer_scale.py", "dino", "layer_scale", "LayerScale", {"dim": 16, "init_values": 0.5}),
    Model("pretrainedmodels/senet.py", "pm", "senet", "SENet",
          {"block": "@SEResNeXtBottleneck", "layers": [1, 1, 1, 1], "groups": 4, "reduction": 4, "dropout_p": None,
           "inplanes": 64, "input_3x3": False, "downsample_kernel_size": 1, "downsample_padding": 0,
           "num_classes": 10}, ((1, 3, 224, 224),)),
    Model("pretrainedmodels/fbresnet.py", "pm", "fbresnet", "FBResNet",
          {"block": "@BasicBlock", "layers": [1, 1, 1, 1], "num_classes": 10}, ((1, 3, 224, 224),)),
    Model("legere/model.py", "legere", "model", "CompactCRNN", {}, ((2, 1, 32, 64),)),
)


# ---------------------------------------------------------------------------------------------- download
def download(cache: str) -> str:
    """Fetch each package with pip (cached) and unpack its model files into cache/trees/NAME/."""
    archives = os.path.join(cache, "archives")
    trees = os.path.join(cache, "trees")
    os.makedirs(archives, exist_ok=True)
    for package in PACKAGES.values():
        folder = os.path.join(trees, package.name)
        if all(os.path.exists(os.path.join(folder, os.path.basename(m))) for m in package.members):
            continue
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", archives,
                        package.requirement], check=True)
        stem = package.requirement.split("==")[0].replace("-", "_").lower()
        version = package.requirement.split("==")[1]
        found = [f for f in os.listdir(archives) if f.lower().replace("-", "_").startswith(f"{stem}_{version}")]
        if not found:
            raise SystemExit(f"download of {package.requirement} left no archive in {archives}")
        os.makedirs(folder, exist_ok=True)
        open(os.path.join(folder, "__init__.py"), "w").close()
        _unpack(os.path.join(archives, found[0]), package.members, folder)
    return trees


def _unpack(archive: str, members: tuple[str, ...], folder: str) -> None:
    def wanted(name: str) -> str | None:
        return next((m for m in members if name.endswith("/" + m) or name == m), None)

    if archive.endswith((".whl", ".zip")):
        with zipfile.ZipFile(archive) as zf:
            for name in zf.namelist():
                if wanted(name):
                    with open(os.path.join(folder, os.path.basename(name)), "wb") as out:
                        out.write(zf.read(name))
    else:
        with tarfile.open(archive) as tf:
            for info in tf.getmembers():
                if wanted(info.name) and info.isfile():
                    data = tf.extractfile(info)
                    assert data is not None
                    with open(os.path.join(folder, os.path.basename(info.name)), "wb") as out:
                        out.write(data.read())


# ---------------------------------------------------------------------------------------------- migrate
def migrate(trees: str, ported: str, device: str, target_version: str | None = None) -> dict[str, dict[str, Any]]:
    """`torch2ms migrate` over every tree; per file: findings, rewritten, remaining, error."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out: dict[str, dict[str, Any]] = {}
    for package in PACKAGES.values():
        proc = subprocess.run([sys.executable, "-m", "torch2ms", "migrate", os.path.join(trees, package.name),
                               "--out", os.path.join(ported, package.name), "--device", device, "--isolated", "-q",
                               *(["--target-version", target_version] if target_version else [])],
                              capture_output=True, text=True, env=env)
        for line in proc.stdout.splitlines():  # "PATH: F finding(s) before, N after, R rewrite(s)"
            path, _, counts = line.partition(": ")  # or "PATH: parameter-name map of N cell class(es): MAP"
            key = f"{package.name}/{os.path.basename(path)}"
            if counts.startswith("parameter-name map of "):
                out.setdefault(key, {})["maps"] = int(counts.split()[3])
                continue
            numbers = {part.split()[1]: int(part.split()[0]) for part in counts.split(", ") if part.split()[0].isdigit()}
            out.setdefault(key, {}).update(findings=numbers.get("finding(s)"), rewritten=numbers.get("rewrite(s)"),
                                           remaining=numbers.get("after"))
        for line in proc.stderr.splitlines():
            if "error:" in line:
                print(line, file=sys.stderr)
    return out


# ---------------------------------------------------------------------------------------------- compare
def _factory(tree: str, model: Model, side: str) -> tuple[str, str | None]:
    """FILE.py:FACTORY for verify-model, and the module written to build it when an argument is not a literal
    (a class of the module, or each side's own class): `_bench_MODULE.py` beside the model's file."""
    path = os.path.join(tree, model.package, f"{model.module}.py")
    if all(not (isinstance(v, str) and v.startswith("@")) and not isinstance(v, dict) for v in model.kwargs.values()):
        args = ", ".join(f"{k}={v!r}" for k, v in model.kwargs.items())
        return f"{path}:{model.factory}({args})", None
    lines = [f"from .{model.module} import {model.factory}"]
    args = []
    for key, value in model.kwargs.items():
        if isinstance(value, str) and value.startswith("@"):
            lines.append(f"from .{model.module} import {value[1:]}")
            code = value[1:]
        elif isinstance(value, dict):
            lines.append(f"import {value[side].rpartition('.')[0]}")
            code = value[side]
        else:
            code = repr(value)
        args.append(f"{key}={code}")
    lines += ["", "", "def build():", f"    return {model.factory}({', '.join(args)})", ""]
    wrapper = os.path.join(tree, model.package, f"_bench_{model.module}.py")
    with open(wrapper, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines))
    return f"{wrapper}:build()", wrapper


def compare(original_tree: str, ported_tree: str, model: Model, workdir: str, timeout: float = 600,
            device: str = "cpu", pools: dict[str, Any] | None = None) -> dict[str, Any]:
    """The comparison stage: `torch2ms verify-model` (torch2ms.verify.model.check) on the original file and
    its port. It builds both networks in their own worker processes (the MindSpore one cannot import
    torch), copies the weights by the parameter-name map built from the two files and the tables' weight
    facts, and runs the same inputs in PyNative and in GRAPH mode. Returns the stage reached ("build",
    "torch", "pynative", "graph", "compared"), the max abs difference over both modes, verify-model's exit
    code and the first problem it reported. `pools`: warm worker pools to reuse (torch2ms.verify.model.side_pool)."""
    import contextlib
    import io

    from torch2ms.verify.model import check

    del workdir  # verify-model keeps its files in a temporary folder of its own
    original, t_wrapper = _factory(original_tree, model, "torch")
    ported, m_wrapper = _factory(ported_tree, model, "mindspore")
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors):
            code, result = check(original, ported, [",".join(map(str, shape)) for shape in model.inputs], pools=pools,
                                 device=device, rtol=0.0, atol=TOLERANCE, timeout=timeout)
    finally:
        for wrapper in (t_wrapper, m_wrapper):
            if wrapper is not None:
                os.unlink(wrapper)
    if not result:
        return {"stage": "build", "exit": code, "error": (errors.getvalue().strip().splitlines() or ["?"])[-1][:200]}
    problems = list(result.get("problems") or [])
    weights = result.get("weights", {})
    outcome: dict[str, Any] = {"exit": code, "weights": weights.get("copied"),
                               "tensors": weights.get("torch_tensors"), "unplaced": weights.get("unplaced") or {}}
    if problems:
        outcome["error"] = problems[0][:200]
    modes = result.get("modes")
    if modes is None:
        outcome["stage"] = "torch" if problems and problems[0].startswith("torch:") else "build"
        return outcome
    worst = 0.0
    for mode in ("pynative", "graph"):
        report = modes.get(mode, {})
        if report.get("error"):
            outcome["stage"] = mode
            return outcome
        for row in report.get("outputs", []):
            worst = max(worst, float(row.get("max_abs") or 0.0))
    outcome.update(stage="compared", max_abs_diff=worst)
    return outcome


# ---------------------------------------------------------------------------------------------- main
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", default=os.path.join(HERE, ".cache"), help="download and work folder")
    parser.add_argument("--only", default="", help="comma-separated model names (default: all)")
    parser.add_argument("--device", default="cpu", choices=("cpu", "gpu", "ascend"))
    parser.add_argument("--target-version", default=None, metavar="X.Y",
                        help="MindSpore version migrate targets (default: the tables' current one)")
    args = parser.parse_args()
    trees = download(args.cache)
    ported = os.path.join(args.cache, "ported")
    counts = migrate(trees, ported, args.device, args.target_version)
    chosen = [m for m in MODELS if not args.only or m.name in args.only.split(",")]
    rows = []
    outcomes: list[dict[str, Any]] = []
    from torch2ms.verify.model import side_pool

    with side_pool("torch", args.device) as t_pool, side_pool("mindspore", args.device) as m_pool:
        for model in chosen:
            with tempfile.TemporaryDirectory() as work:
                outcome = compare(trees, ported, model, work, device=args.device,
                                  pools={"torch": t_pool, "mindspore": m_pool})
            outcomes.append(outcome)
            stats = counts.get(f"{model.package}/{model.module}.py", {})
            ok = outcome.get("exit") == 0 and outcome.get("stage") == "compared"
            rows.append((model.name, stats.get("findings", "-"), stats.get("rewritten", "-"),
                         stats.get("remaining", "-"), stats.get("maps", "-"), outcome.get("stage", "?"),
                         outcome.get("weights", "-"), outcome.get("max_abs_diff"), ok, outcome.get("error", "")))
    header = (f"{'file':30} {'findings':>8} {'rewritten':>9} {'remaining':>9} {'maps':>4}  {'stage':9} {'weights':>7} "
              f"{'max abs diff':>12}  verify-model")
    print(header)
    print("-" * len(header))
    for name, findings, rewritten, remaining, maps, stage, weights, diff, ok, error in rows:
        shown = f"{diff:.2e}" if isinstance(diff, float) else "-"
        print(f"{name:30} {findings:>8} {rewritten:>9} {remaining:>9} {maps:>4}  {stage:9} {weights!s:>7} "
              f"{shown:>12}  {'passed' if ok else 'failed'}")
        if error:
            print(f"    {error}")
    passed = sum(1 for row in rows if row[8])
    tensors = sum(int(o.get("tensors") or 0) for o in outcomes)
    unplaced = [(name, why) for o in outcomes for name, why in (o.get("unplaced") or {}).items()]
    print(f"weight maps place {tensors - len(unplaced)} of {tensors} torch tensors"
          + (f"; unplaced, with the reason: {len(unplaced)}" if unplaced else ""))
    for name, why in unplaced[:20]:
        print(f"    {name}: {why}")
    print(f"{passed} of {len(rows)} files run as migrate leaves them and agree with torch within {TOLERANCE:g} "
          f"(PyNative and GRAPH mode, device {args.device}"
          + (f", targets of MindSpore {args.target_version}" if args.target_version else "") + ")")
    return 0 if passed >= len(rows) - 1 else 1


if __name__ == "__main__":
    sys.exit(main())
