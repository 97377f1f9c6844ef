"""Migrate real model files from public packages and check that the output runs and computes what torch does.

    python benchmarks/migrate_models.py [--cache DIR] [--only NAME,...] [--device cpu]

1. download: `pip download --no-deps PACKAGE==VERSION` into the cache folder (default
   benchmarks/.cache, not committed) and unpack the model files into a tree per package;
2. migrate: `torch2ms migrate TREE --out PORTED` (the command as a user runs it);
3. compare (`compare`, one function): a torch worker builds the network from its config (random
   weights, no model hub), saves its parameters, inputs and outputs; a MindSpore worker, in a
   process where `import torch` fails, imports the migrated file, builds the Cell, copies the
   weights (walking both models' parameters by name, with shape checks), runs forward in PyNative
   and in GRAPH mode and compares.

Prints per file: findings, rewritten, remaining, the stage reached and the max abs difference.
"""

from __future__ import annotations

import argparse
import json
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
        for line in proc.stdout.splitlines():  # "PATH: F finding(s), R rewritten, N remaining"
            path, _, rest = line.rpartition(": ")
            path, _, counts = line.partition(": ")
            numbers = [int(part.split()[0]) for part in counts.split(", ")]
            key = f"{package.name}/{os.path.basename(path)}"
            out[key] = {"findings": numbers[0], "rewritten": numbers[1], "remaining": numbers[2]}
        for line in proc.stderr.splitlines():
            if "error:" in line:
                print(line, file=sys.stderr)
    return out


# ---------------------------------------------------------------------------------------------- compare
_TORCH_WORKER = r'''
import importlib, json, sys
import numpy as np
import torch
tree, module, factory, kwargs, shapes, out = sys.argv[1:7]
sys.path.insert(0, tree)
mod = importlib.import_module(module)
def value(v):  # "@Name": a name of the module; {"torch": dotted, "mindspore": dotted}: each side's object
    if isinstance(v, dict):
        owner, _, attr = v["torch"].rpartition(".")
        return getattr(importlib.import_module(owner), attr)
    return getattr(mod, v[1:]) if isinstance(v, str) and v.startswith("@") else v
kwargs = {k: value(v) for k, v in json.loads(kwargs).items()}
torch.manual_seed(0)
net = getattr(mod, factory)(**kwargs).eval()
rng = np.random.default_rng(0)
inputs = [rng.standard_normal(s).astype("float32") for s in json.loads(shapes)]
with torch.no_grad():
    outputs = net(*[torch.from_numpy(x) for x in inputs])
outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
state = {k: v.detach().numpy() for k, v in net.state_dict().items() if not k.endswith("num_batches_tracked")}
np.savez(out + "/weights.npz", **state)
np.savez(out + "/io.npz", *inputs, **{f"out{i}": o.numpy() for i, o in enumerate(outputs)})
print(json.dumps({"inputs": len(inputs), "outputs": len(outputs)}))
'''

_MINDSPORE_WORKER = r'''
import importlib, json, sys
for blocked in ("torch", "torchvision", "torchaudio"):
    sys.modules[blocked] = None  # `import torch` fails in this process
stage = "import"
result = {"stage": stage}
try:
    import numpy as np
    import mindspore as ms
    tree, module, factory, kwargs, out, n_in, n_out, device = sys.argv[1:9]
    sys.path.insert(0, tree)
    mod = importlib.import_module(module)
    def value(v):
        if isinstance(v, dict):
            owner, _, attr = v["mindspore"].rpartition(".")
            return getattr(importlib.import_module(owner), attr)
        return getattr(mod, v[1:]) if isinstance(v, str) and v.startswith("@") else v
    kwargs = {k: value(v) for k, v in json.loads(kwargs).items()}
    weights = dict(np.load(out + "/weights.npz"))
    io = np.load(out + "/io.npz")
    inputs = [io[f"arr_{i}"] for i in range(int(n_in))]
    expected = [io[f"out{i}"] for i in range(int(n_out))]
    RENAMES = {"gamma": "weight", "beta": "bias", "moving_mean": "running_mean",
               "moving_variance": "running_var", "embedding_table": "weight"}
    worst = 0.0
    for mode_name, mode in (("pynative", ms.PYNATIVE_MODE), ("graph", ms.GRAPH_MODE)):
        ms.set_context(mode=mode, device_target=device)
        stage = result["stage"] = "build"
        net = getattr(mod, factory)(**kwargs)
        stage = result["stage"] = "weights"
        params = list(net.parameters_and_names())
        unused = dict(weights)
        for name, param in params:
            head, _, last = name.rpartition(".")
            if last == "num_batches_tracked":
                continue  # torch keeps it as a buffer that forward in inference mode never reads
            torch_name = name if name in unused else (head + "." if head else "") + RENAMES.get(last, last)
            value = unused.pop(torch_name, None)
            if value is None:
                raise KeyError(f"no torch weight for MindSpore parameter {name} (looked for {torch_name})")
            if tuple(value.shape) != tuple(param.shape):
                raise ValueError(f"{name}: torch shape {value.shape}, MindSpore shape {tuple(param.shape)}")
            param.set_data(ms.Tensor(value, param.dtype))
        if unused:
            raise KeyError("torch weights with no MindSpore parameter: " + ", ".join(sorted(unused)))
        net.set_train(False)
        stage = result["stage"] = mode_name
        outputs = net(*[ms.Tensor(x) for x in inputs])
        outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
        if len(outputs) != len(expected):
            raise ValueError(f"{len(outputs)} outputs, torch gave {len(expected)}")
        for got, want in zip(outputs, expected):
            got = got.asnumpy()
            if got.shape != want.shape:
                raise ValueError(f"output shape {got.shape}, torch {want.shape}")
            worst = max(worst, float(np.max(np.abs(got - want))) if want.size else 0.0)
    result.update(stage="compared", max_abs_diff=worst)
except BaseException as exc:
    lines = [l.strip() for l in str(exc).splitlines() if l.strip() and not set(l.strip()) <= set("-")]
    result.update(error=f"{type(exc).__name__}: {lines[0][:160] if lines else ''}")
print("RESULT " + json.dumps(result))
'''


def compare(original_tree: str, ported_tree: str, model: Model, workdir: str, timeout: float = 600,
            device: str = "cpu") -> dict[str, Any]:
    """The comparison stage: torch and MindSpore in separate processes, weights copied by parameter name.
    Returns the stage reached ("import", "build", "weights", "pynative", "graph", "compared"), the max abs
    difference over both modes, and the error that stopped it."""
    module = f"{model.package}.{model.module}"
    shapes = json.dumps([list(s) for s in model.inputs])
    kwargs = json.dumps(model.kwargs)
    torch_run = subprocess.run([sys.executable, "-c", _TORCH_WORKER, original_tree, module, model.factory, kwargs,
                                shapes, workdir], capture_output=True, text=True, timeout=timeout)
    if torch_run.returncode != 0:
        return {"stage": "torch", "error": torch_run.stderr.strip().splitlines()[-1][:160]}
    counts = json.loads(torch_run.stdout.strip().splitlines()[-1])
    ms_run = subprocess.run([sys.executable, "-c", _MINDSPORE_WORKER, ported_tree, module, model.factory, kwargs,
                             workdir, str(counts["inputs"]), str(counts["outputs"]),
                             {"cpu": "CPU", "gpu": "GPU", "ascend": "Ascend"}[device]],
                            capture_output=True, text=True, timeout=timeout,
                            env=dict(os.environ, GLOG_v="3"))
    for line in ms_run.stdout.splitlines():
        if line.startswith("RESULT "):
            return dict(json.loads(line[len("RESULT "):]))
    return {"stage": "import", "error": (ms_run.stderr.strip().splitlines() or ["no result"])[-1][:160]}


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
    for model in chosen:
        with tempfile.TemporaryDirectory() as work:
            outcome = compare(trees, ported, model, work, device=args.device)
        stats = counts.get(f"{model.package}/{model.module}.py", {})
        ok = outcome.get("stage") == "compared" and outcome.get("max_abs_diff", 1.0) <= TOLERANCE
        rows.append((model.name, stats.get("findings", "-"), stats.get("rewritten", "-"), stats.get("remaining", "-"),
                     outcome.get("stage", "?"), outcome.get("max_abs_diff"), ok, outcome.get("error", "")))
    header = f"{'file':30} {'findings':>8} {'rewritten':>9} {'remaining':>9}  {'stage':9} {'max abs diff':>12}  ok"
    print(header)
    print("-" * len(header))
    for name, findings, rewritten, remaining, stage, diff, ok, error in rows:
        shown = f"{diff:.2e}" if isinstance(diff, float) else "-"
        print(f"{name:30} {findings:>8} {rewritten:>9} {remaining:>9}  {stage:9} {shown:>12}  {'yes' if ok else 'no'}")
        if error:
            print(f"    {error}")
    passed = sum(1 for row in rows if row[6])
    print(f"{passed} of {len(rows)} files run as migrate leaves them and agree with torch within {TOLERANCE:g} "
          f"(PyNative and GRAPH mode, device {args.device}"
          + (f", targets of MindSpore {args.target_version}" if args.target_version else "") + ")")
    return 0 if passed >= len(rows) - 1 else 1


if __name__ == "__main__":
    sys.exit(main())
