"""Generate the mapping tables (src/torch2ms/data/torch*.yaml) from the reference data and the installed libraries.

Run:  python scripts/build_tables.py REFERENCE_DIR [--jobs N] [--cache FILE]

REFERENCE_DIR holds the CSV facts taken from MindSpore's official PyTorch mapping
tables (pytorch_ms_api_mapping.csv, pytorch_ms_api_mapping_r2.4.10.csv,
pytorch_ms_param_diffs.csv, torch_public_api_inventory.csv, dynamic_shape_apis.csv).
The script needs torch and mindspore installed (the `verify` extra). It

1. lists the torch APIs to classify: the public callables of the namespaces in
   NAMESPACES (from src/torch2ms/data/inventory.json) plus every torch-side row of the
   official tables;
2. collects candidate MindSpore targets: the official tables' targets (the
   newest table for MindSpore >= 2.3, the r2.4.10 table before), then
   same-named functions in mint / ops / nn / Tensor found in the installed
   MindSpore;
3. confirms a candidate by running an example in both libraries on CPU
   (worker processes; a crash or hang drops the candidate), comparing shape,
   dtype and values (only shape and dtype for random results);
4. compares signatures with `inspect` / torch docstrings and records the
   parameter facts, merging the official parameter-difference rows that still
   hold for the installed versions;
5. applies the hand-written entries of scripts/mapping_overrides.yaml, which
   win over generated facts, and writes one YAML file per torch namespace;
6. adds the weight facts of scripts/mapping_overrides_weights.yaml (`weights:` of the layer
   entries). `--weights-only` does this step alone on the committed tables;
7. names the transforms of scripts/mapping_rewrites.yaml (`rewrite:` of an entry or of one of its
   targets: what code rewrites, src/torch2ms/transforms/). `--rewrites-only` does this step alone;
8. names the structural rewrites of scripts/mapping_structure.yaml (`structure:` of an entry: what
   `torch2ms migrate` rewrites at a call or a name beyond a text fix). `--structure-only` does this step alone;
9. marks the renamed parameters whose MindSpore name sits at another position than torch's
   (`by_keyword`, from src/torch2ms/data/mindspore_api.json). `--keywords-only` does this step alone;
10. writes the dynamic-shape facts of scripts/mapping_dynamic.yaml (`dynamic_shape:` of an entry: which
   calls make a shape depend on data). `--dynamic-only` does this step alone;
11. gives each layer's target the forward keywords MindSpore's construct names otherwise (`forward:`, from
   torch's forward and the construct of src/torch2ms/data/mindspore_api.json) and the forward parameters a
   call may leave out in torch and not in MindSpore (`forward_defaults:`, scripts/mapping_forward_defaults.yaml). `--forward-only` does this
   step alone;
12. gives the layer classes of scripts/mapping_adapters.yaml their `adapter:` (torch's constructor
   parameters, read from the installed torch, and the facts written there): the torch-signature layer
   `torch2ms migrate` writes into its support module. `--adapters-only` does this step alone;
13. gives each layer's target the attributes it names otherwise or lacks (`attributes:`, torch's name -> the
   MindSpore class's, or null), read from the installed torch and MindSpore: the attributes each class's
   methods set on `self` (its bases' up to nn.Module / Cell) and its class members, renamed where the
   target's parameter facts rename the constructor parameter of the same name. The layer's tensors are the
   weight facts'. `--attributes-only` does this step alone.

`--facts-only API...` applies the amendments of scripts/mapping_facts.yaml for the entries named (and their
facts' positions) to the committed tables alone, for facts `torch2ms verify` found after the last full build.
`--record-only API...` gives the targets of the entries named the devices and `verified` of the verification
record alone (after `torch2ms verify --write-record API...`).

The generated YAML is committed; the product reads only the YAML.
"""

from __future__ import annotations

import argparse
import ast
import copy
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from pathlib import Path
from collections.abc import Callable, Iterable, Iterator
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
from torch2ms.mapping_tools import (  # noqa: E402
    GENERAL_PARAMS, documented_devices, ms_params, ms_positional, resolve, torch_params, torch_positions,
)
MAPPINGS = ROOT / "src" / "torch2ms" / "data"
# Weight facts (per torch layer, per MindSpore class): a `weights:` list, not `entries:`.
WEIGHT_FACTS = Path(__file__).resolve().parent / "mapping_overrides_weights.yaml"
# Hand-written entries: mapping_overrides.yaml plus any mapping_overrides_*.yaml beside it
# (one file per topic; the weight facts apart); an API may be overridden in one file only.
OVERRIDES = sorted(p for p in Path(__file__).resolve().parent.glob("mapping_overrides*.yaml") if p != WEIGHT_FACTS)
# The transforms the fixes apply, by entry or by target (a `rewrites:` list).
REWRITES = Path(__file__).resolve().parent / "mapping_rewrites.yaml"
# The structural rewrites migrate does (a `structure:` list): the entries' `structure:`.
STRUCTURE = Path(__file__).resolve().parent / "mapping_structure.yaml"
# The torch layer classes that get a torch-signature layer in migrate's support module (an `adapters:` list).
ADAPTERS = Path(__file__).resolve().parent / "mapping_adapters.yaml"
# Hand-written tables of libraries outside torch that work on torch tensors (einops)
HAND_LIBRARIES = Path(__file__).resolve().parent / "mapping_libraries.yaml"
# Which calls make a shape depend on data (a `dynamic:` list): the entries' `dynamic_shape:`.
DYNAMIC = Path(__file__).resolve().parent / "mapping_dynamic.yaml"

# The namespaces the tables classify (the issue's list), in file order.
NAMESPACES = [
    "torch", "torch.nn", "torch.nn.functional", "torch.Tensor", "torch.linalg", "torch.fft",
    "torch.special", "torch.optim", "torch.optim.lr_scheduler", "torch.nn.init",
    "torch.distributions", "torch.utils.data", "torch.amp", "torch.distributed",
]
# Extra files for official-table rows outside those namespaces.
EXTRA_FILES = ["torch.nn.utils", "torch.cuda", "torch.autograd", "torch.utils"]


# ---------------------------------------------------------------------------------- inputs
# Input specs shared by the generated examples (see the `inputs` key of the schema).
INPUTS: dict[str, dict[str, Any]] = {
    "x": {"shape": [3, 4], "dtype": "float32", "low": 0.1, "high": 0.9},
    "y": {"shape": [3, 4], "dtype": "float32", "low": 0.1, "high": 0.9},
    "z": {"shape": [3, 4], "dtype": "float32", "low": 0.1, "high": 0.9},
    "i": {"value": [[0, 1, 2, 3], [1, 2, 3, 0], [3, 2, 1, 0]], "dtype": "int64"},
    "j": {"value": [[1, 1, 2, 2], [3, 1, 0, 2], [2, 3, 1, 1]], "dtype": "int64"},
    "b": {"value": [[True, False, True, False], [False, False, True, True], [True, True, False, False]],
          "dtype": "bool"},
    "c": {"value": [[True, True, False, False], [False, True, False, True], [True, False, True, False]],
          "dtype": "bool"},
    "m": {"value": [[2.0, 0.5, 0.1], [0.5, 3.0, 0.2], [0.1, 0.2, 4.0]], "dtype": "float32"},
    "v": {"shape": [4], "dtype": "float32", "low": 0.1, "high": 0.9},
    "t": {"value": [0, 2, 1], "dtype": "int64"},
    "x3": {"shape": [2, 3, 8], "dtype": "float32", "low": 0.1, "high": 0.9},
    "x4": {"shape": [1, 3, 8, 8], "dtype": "float32", "low": 0.1, "high": 0.9},
    "x5": {"shape": [1, 3, 4, 4, 4], "dtype": "float32", "low": 0.1, "high": 0.9},
}

# Call templates: (torch form, kind). "{f}" is the callee, "{m}" a method name.
FUNCTION_TEMPLATES = [
    "{f}(x)", "{f}(x, y)", "{f}(x, 1)", "{f}(x, dim=1)", "{f}(x, y, z)", "{f}(i)", "{f}(i, j)",
    "{f}(b)", "{f}(b, c)", "{f}(m)", "{f}(m, m)", "{f}(v)", "{f}(v, v)", "{f}(x, 2)", "{f}(x, 0.5)",
    "{f}(x4)", "{f}(x4, 2)", "{f}(x3)", "{f}(x3, 2)", "{f}(x5)", "{f}(x5, 2)", "{f}(x, 1, i)",
    "{f}(x, 1, t)", "{f}(x, (1, 0))", "{f}(x, 0, 1)", "{f}(x, (2, 6))", "{f}(x, x > 0.5)",
    "{f}(x > 0.5, x, y)", "{f}(x, t)", "{f}(x, i)", "{f}(x, y, 0.5)", "{f}(x, m)", "{f}(m, x)",
    "{f}([x, y])", "{f}([x, y], 1)", "{f}(x, 4)", "{f}(2, 3)", "{f}((2, 3))", "{f}(5)", "{f}(3)",
    "{f}(1, 5, 4)", "{f}([1.0, 2.0])", "{f}(x, y, 1)", "{f}(x, 1, 2)", "{f}(x, 0)", "{f}(i, 2)",
    "{f}(x4, (2, 2))", "{f}(x, 0.2, 0.8)", "{f}(x, 3)", "{f}(v, 2)", "{f}(x, [2, 2], 1)",
    "{f}(x4, 4)", "{f}(x, 1.0)", "{f}(x, 1, True)", "{f}(x, 1, 1, 1)", "{f}(1, x)", "{f}(2, x)",
    "{f}(x, 2.0)", "{f}(x, m, x)", "{f}(x3, q)", "{f}(r, x3, q)", "{f}(m, x3, q)", "{f}(u, x, v)",
    "{f}(x, u, v)", "{f}(x, v)", "{f}(x4, k4)", "{f}(x3, k3)", "{f}(x5, k5)", "{f}(x4, kt)", "{f}(x, [4])",
    "{f}(x, v, v)", "{f}(i, e)", "{f}(i, 5)", "{f}((2, 3), 1.5)", "{f}(x, 1.5)", "{f}(0, 5, (2, 3))",
    "{f}(0.0, 1.0, (2, 3))", "{f}(1, 5)", "{f}(0, 1, 5)", "{f}(x, 1, 1)", "{f}(x, 1, t, m)",
    "{f}(x, 1, t, 0.5)", "{f}(x, 1, i, y)", "{f}(x, b, 0.5)", "{f}('ij->ji', x)", "{f}(v, (3, 4))",
    "{f}(x, y, s)", "{f}(x, s2)", "{f}(v, v, s4)", "{f}(x, 1, i, 0.5)", "{f}(x, [1])", "{f}(n)",
    "{f}(x, 1, [0, 1])", "{f}(x, 2, 0, 1.0)",
]
METHOD_TEMPLATES = [
    "x.{m}()", "x.{m}(y)", "x.{m}(1)", "x.{m}(dim=1)", "x.{m}(y, z)", "i.{m}()", "i.{m}(j)",
    "b.{m}()", "b.{m}(c)", "m.{m}()", "m.{m}(m)", "v.{m}()", "v.{m}(v)", "x.{m}(2)", "x.{m}(0.5)",
    "x4.{m}()", "x.{m}(1, i)", "x.{m}(1, t)", "x.{m}(1, 0)", "x.{m}(0, 1)", "x.{m}(2, 6)",
    "x.{m}((2, 6))", "x.{m}(x > 0.5)", "x.{m}(t)", "x.{m}(i)", "x.{m}(y, 0.5)", "x.{m}(m)",
    "m.{m}(x)", "x.{m}(4)", "x.{m}(3)", "x.{m}(y, 1)", "x.{m}(1, 2)", "x.{m}(0)", "i.{m}(2)",
    "x.{m}(0.2, 0.8)", "x.{m}(x > 0.5, 0.0)", "x.{m}(1, i, y)", "x.{m}(1, t, v)", "x.{m}([2, 2], 1)",
    "x.{m}(torch.float64)", "x.{m}(1, True)", "x.{m}(1.0)", "x.{m}(2, 2)", "x.{m}(1, 2, 1)",
    "x.{m}(0, 2, 1)", "x.{m}(3, 4)", "x.{m}(1, 1, 1)", "x.{m}(m, x)", "m.{m}(x3, q)", "r.{m}(x3, q)",
    "u.{m}(x, v)", "x.{m}(u, v)", "x.{m}(v)", "x.{m}(1, t, m)", "x.{m}(1, t, 0.5)", "x.{m}(1, i, y)",
    "x.{m}(b, 0.5)", "x.{m}(1, i, 0.5)", "x.{m}(1, 1)", "x.{m}((1, 2))", "x.{m}((3, 4), 1.5)", "x.{m}(0.5, 0.5)",
    "x.{m}(b, y)", "x.{m}(x)", "v.{m}(1, 2)", "x.{m}([1])", "n.{m}()", "x3.{m}(q)", "x.{m}(1, [0, 1])",
    "x.{m}(2, 0, 1.0)",
]
LAYER_TEMPLATES = [
    "{f}()(x)", "{f}(4)(x)", "{f}(4, 5)(x)", "{f}(3)(x4)", "{f}(3, 8, 3)(x4)", "{f}(2)(x4)",
    "{f}(3)(x3)", "{f}(3, 8, 3)(x3)", "{f}(2)(x3)", "{f}(3)(x5)", "{f}(3, 8, 3)(x5)", "{f}(2)(x5)",
    "{f}()(x, y)", "{f}()(x, t)", "{f}(1)(x)", "{f}((2, 2))(x4)", "{f}(0.5)(x)", "{f}([4])(x)",
    "{f}(1, 3)(x4)", "{f}(8, 5)(x3)", "{f}(10, 3)(i)", "{f}()(x4)", "{f}(1)(x4)", "{f}(4, 4, 5)(x, y)",
    "{f}()(x, y, t)", "{f}(2, 3)(x4)", "{f}((1, 2))(x4)", "{f}(dim=1)(x)", "{f}()(x3)", "{f}(1, (2, 3))(x)",
    "{f}(2)(x)", "{f}(4, 2)(x)", "{f}(0.2, 0.8)(x)", "{f}(8, 2)(x3)", "{f}(3, 3)(x4)", "{f}()(x, y, z)",
    "{f}()(x, b)", "{f}(1.0)(x)", "{f}()(v, v, t)", "{f}(1, 2)(x4)", "{f}((4, 4))(x4)", "{f}(1, (2, 2))(x)",
]
PARAM = "torch.nn.Parameter(w)"
OPTIMIZER_TEMPLATES = [
    "{f}([torch.nn.Parameter(w)], lr=0.1)", "{f}([torch.nn.Parameter(w)])",
]
SCHEDULER_TEMPLATES = [
    "{f}(torch.optim.SGD([torch.nn.Parameter(w)], lr=0.1), 2)",
    "{f}(torch.optim.SGD([torch.nn.Parameter(w)], lr=0.1), [2, 4])",
    "{f}(torch.optim.SGD([torch.nn.Parameter(w)], lr=0.1), 0.5)",
    "{f}(torch.optim.SGD([torch.nn.Parameter(w)], lr=0.1))",
    "{f}(torch.optim.SGD([torch.nn.Parameter(w)], lr=0.1), 0.01, 0.1)",
    "{f}(torch.optim.SGD([torch.nn.Parameter(w)], lr=0.1), lambda ep: 0.9)",
]
INPUTS["w"] = {"shape": [4], "dtype": "float32", "low": 0.1, "high": 0.9}
INPUTS.update({
    "q": {"shape": [2, 8, 3], "dtype": "float32", "low": 0.1, "high": 0.9},
    "r": {"shape": [2, 3, 3], "dtype": "float32", "low": 0.1, "high": 0.9},
    "u": {"shape": [3], "dtype": "float32", "low": 0.1, "high": 0.9},
    "k3": {"shape": [4, 3, 3], "dtype": "float32", "low": -0.5, "high": 0.5},
    "k4": {"shape": [8, 3, 3, 3], "dtype": "float32", "low": -0.5, "high": 0.5},
    "k5": {"shape": [2, 3, 3, 3, 3], "dtype": "float32", "low": -0.5, "high": 0.5},
    "kt": {"shape": [3, 2, 3, 3], "dtype": "float32", "low": -0.5, "high": 0.5},
    "e": {"shape": [10, 3], "dtype": "float32", "low": -1.0, "high": 1.0},
    "s": {"value": [1.0, -1.0, 1.0], "dtype": "float32"},
    "s2": {"value": [[1.0, -1.0, 1.0, 1.0], [-1.0, -1.0, 1.0, -1.0], [1.0, 1.0, -1.0, 1.0]], "dtype": "float32"},
    "s4": {"value": [1.0, -1.0, 1.0, -1.0], "dtype": "float32"},
    "n": {"value": [0, 1, 1, 3, 2], "dtype": "int64"},
})
MS_SCHED_OPT = "mindspore.experimental.optim.SGD([mindspore.Parameter(w)], lr=0.1)"


# Error texts of MindSpore 2.10 (CPU build) when an op has no CPU kernel.
NO_CPU_MARKS = ("unregistered", "only supports Ascend", "Create kernelmod for op", "Kernel select failed",
                "on device CPU")


def _names_in(code: str) -> list[str]:
    return sorted({n for n in re.findall(r"(?<![\w.])([a-z][a-z0-9]?)(?![\w(])", code) if n in INPUTS}
                  | set(re.findall(r"(?<![\w.])(x[345])(?![\w(])", code)))


def _ms_code(torch_code: str, torch_name: str, ms_name: str, kind: str) -> str:
    """The MindSpore form of a generated torch example."""
    code = torch_code
    if kind == "attribute":
        return code.rpartition(".")[0] + "." + ms_name.rpartition(".")[2]
    if kind in ("method", "inplace") and not ms_name.startswith("mindspore.Tensor."):
        recv, _, rest = code.partition("." + torch_name.rpartition(".")[2] + "(")
        args = rest[:-1]
        code = f"{ms_name}({recv}{', ' + args if args else ''})"
    elif kind in ("method", "inplace"):
        code = code.replace("." + torch_name.rpartition(".")[2] + "(", "." + ms_name.rpartition(".")[2] + "(", 1)
    else:
        code = code.replace(torch_name + "(", ms_name + "(", 1)
    code = code.replace("torch.optim.SGD([torch.nn.Parameter(w)], lr=0.1)", MS_SCHED_OPT)
    code = code.replace("torch.nn.Parameter(w)", "mindspore.Parameter(w)")
    code = code.replace("torch.float64", "mindspore.float64")
    return code


# ---------------------------------------------------------------------------------- worker
def _worker(jobs_path: str, out_path: str) -> None:
    """Run the jobs of `jobs_path` (JSON lines); append one JSON result line per job to `out_path`."""
    import signal
    import warnings

    warnings.filterwarnings("ignore")
    import numpy as np
    import torch
    import mindspore

    from torch2ms.verify.worker import check_numpy

    check_numpy(np.__version__)
    mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    # What torch and MindSpore import on first use, imported before any example's time limit runs: an import
    # the limit interrupts leaves its module half-made for every later example (on a loaded machine the first
    # optimizer example took over 10 s to import torch's compiler stack, and every optimizer, scheduler and
    # unpooling example after it failed on a half-imported sympy).
    import mindspore.experimental.optim  # noqa: F401
    import torch._dynamo  # noqa: F401
    import torch.distributions  # noqa: F401
    import torch.optim  # noqa: F401
    import torch.utils.checkpoint  # noqa: F401

    def make(spec: dict[str, Any], seed: int) -> Any:  # a NumPy array
        if "value" in spec:
            return np.array(spec["value"], dtype=spec.get("dtype", "float32"))
        rng = np.random.RandomState(seed)
        low, high = spec.get("low", -1.0), spec.get("high", 1.0)
        return rng.uniform(low, high, size=spec["shape"]).astype(spec.get("dtype", "float32"))

    arrays = {name: make(spec, k) for k, (name, spec) in enumerate(sorted(INPUTS.items()))}

    def to_np(value: Any, depth: int = 0) -> Any:
        if depth > 3:
            return ("obj",)
        if isinstance(value, torch.Tensor):
            t = value.detach()
            if t.is_complex():
                t = t.resolve_conj()
            if t.dtype == torch.bfloat16:
                t = t.float()
            if t.is_sparse or t.layout != torch.strided or t.is_quantized:
                return ("obj",)
            return t.numpy()
        if isinstance(value, mindspore.Tensor):
            return value.asnumpy()
        if isinstance(value, np.ndarray):
            return value
        if isinstance(value, (bool, int, float, complex)):
            return np.array(value)
        if isinstance(value, (list, tuple)):
            return [to_np(v, depth + 1) for v in value]
        return ("obj",)

    def same(a: Any, b: Any, random: bool) -> str:
        """'ok', 'dtype' (values agree, dtypes differ) or a reason."""
        if isinstance(a, list) or isinstance(b, list):
            if not (isinstance(a, list) and isinstance(b, list)) or len(a) != len(b):
                return "structure differs"
            worst = "ok"
            for x, y in zip(a, b):
                r = same(x, y, random)
                if r not in ("ok", "dtype"):
                    return r
                if r == "dtype":
                    worst = "dtype"
            return worst
        if isinstance(a, tuple) or isinstance(b, tuple):
            return "ok" if (isinstance(a, tuple) and isinstance(b, tuple)) else "structure differs"
        if a.shape != b.shape:
            return f"shape {a.shape} != {b.shape}"
        dtype_ok = str(a.dtype) == str(b.dtype) or (a.dtype == bool and b.dtype == bool)
        if not random:
            try:
                if a.dtype.kind in "fc" or b.dtype.kind in "fc":
                    ok = np.allclose(a.astype(np.complex128) if a.dtype.kind == "c" else a.astype(np.float64),
                                     b.astype(np.complex128) if b.dtype.kind == "c" else b.astype(np.float64),
                                     rtol=1e-4, atol=1e-5, equal_nan=True)
                else:
                    ok = np.array_equal(a.astype(np.int64), b.astype(np.int64))
            except Exception as exc:  # noqa: BLE001
                return f"compare failed: {exc}"
            if not ok:
                return "values differ"
        return "ok" if dtype_ok else "dtype"

    def magnitudes(value: Any) -> Any:
        if isinstance(value, list):
            return [magnitudes(v) for v in value]
        return np.abs(value) if isinstance(value, np.ndarray) and value.dtype.kind in "fc" else value

    def run(code: str, lib: str, seed: int, specs: dict[str, Any] | None, fixture: str | None = None) -> Any:
        if fixture:
            from torch2ms.verify import fixtures

            fixtures.ensure(fixture, torch, mindspore)
        env: dict[str, Any] = {"torch": torch, "mindspore": mindspore}
        names = list(specs) if specs else _names_in(code)
        for k, name in enumerate(names):
            arr = make(specs[name], 100 + k) if specs else arrays[name]
            env[name] = torch.from_numpy(arr.copy()) if lib == "torch" else mindspore.Tensor(arr.copy())
        if lib == "torch":
            torch.manual_seed(seed)
        else:
            mindspore.set_seed(seed)
        return eval(code, env)  # noqa: S307 - our own generated examples

    def alarm(*_: Any) -> None:
        raise TimeoutError("example took too long")

    def a_ok(cand: dict[str, Any]) -> bool:
        """Whether the torch side of a candidate runs and gives tensors (for MindSpore-kernel failures)."""
        try:
            signal.alarm(10)
            value = to_np(run(cand["torch"], "torch", 0, cand.get("inputs"), cand.get("fixture")))
            signal.alarm(0)
            return not isinstance(value, tuple)
        except BaseException:  # noqa: BLE001
            signal.alarm(0)
            return False

    signal.signal(signal.SIGALRM, alarm)
    with open(jobs_path, encoding="utf-8") as jobs, open(out_path, "a", encoding="utf-8") as out:
        for line in jobs:
            job = json.loads(line)
            result = {"id": job["id"], "ok": False, "tried": 0}
            for cand in job["candidates"]:
                result["tried"] += 1
                signal.alarm(10)
                try:
                    t1 = run(cand["torch"], "torch", 0, cand.get("inputs"), cand.get("fixture"))
                    a = to_np(t1)
                    if not isinstance(a, tuple):  # a tensor result: a comparison was possible
                        result["torch_ran"] = True
                    if isinstance(a, tuple) and not cand.get("object_ok"):
                        raise ValueError("torch result is not a tensor")
                    random = False
                    if not isinstance(a, tuple):
                        a2 = to_np(run(cand["torch"], "torch", 1, cand.get("inputs"), cand.get("fixture")))
                        random = same(a, a2, False) != "ok" and same(a, a2, True) in ("ok", "dtype")
                    m1 = to_np(run(cand["mindspore"], "mindspore", 0, cand.get("inputs"), cand.get("fixture")))
                    if cand.get("compare") == "abs":  # values unique only up to sign (singular vectors)
                        verdict = same(magnitudes(a), magnitudes(m1), random)
                    else:
                        verdict = same(a, m1, random)
                    if cand.get("object_ok") and (isinstance(a, tuple) or isinstance(m1, tuple)):
                        verdict = "ok"  # an object (module, optimizer, None): running both is the check
                    signal.alarm(0)
                except BaseException as exc:  # noqa: BLE001 - any failure rejects the candidate
                    signal.alarm(0)
                    if isinstance(exc, KeyboardInterrupt):
                        raise
                    if any(m in str(exc) for m in NO_CPU_MARKS) and "nocpu" not in result and a_ok(cand):
                        result["nocpu"] = cand
                    result.setdefault("errors", []).append(f"{cand['torch']}: {type(exc).__name__}: {str(exc)[:120]}")
                    continue
                if verdict in ("ok", "dtype"):
                    returns = "tensor" if isinstance(t1, torch.Tensor) or (
                        isinstance(t1, tuple) and t1 and all(isinstance(v, torch.Tensor) for v in t1)) else "other"
                    if isinstance(t1, (torch.nn.Module, torch.optim.Optimizer)):
                        returns = "instance"
                    dtypes = None
                    if verdict == "dtype":
                        pairs = list(zip(a, m1)) if isinstance(a, list) else [(a, m1)]
                        for pa, pm in pairs:
                            da, dm = str(getattr(pa, "dtype", "?")), str(getattr(pm, "dtype", "?"))
                            if da != dm:
                                dtypes = [da, dm]
                                break
                    result.update(ok=True, cand=cand, random=random, verdict=verdict, returns=returns,
                                  dtypes=dtypes)
                    break
                result.setdefault("errors", []).append(f"{cand['torch']}: {verdict}")
            result["errors"] = result.get("errors", [])[:80]
            out.write(json.dumps(result) + "\n")
            out.flush()


# A worker that writes no result for this long is stuck in a call that the per-example alarm cannot
# interrupt (e.g. a point-to-point send to a peer that never comes, blocking inside the C++ library).
STALL_SECONDS = 120


def _wait_or_kill_stalled(proc: subprocess.Popen[bytes], out_file: Path) -> None:
    """Wait for a worker; kill it when its result file has not grown for STALL_SECONDS.

    The caller then treats the job it was running as a crash and restarts the rest of its chunk.
    """
    size, last_change = -1, time.monotonic()
    while True:
        try:
            proc.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            pass
        now_size = out_file.stat().st_size if out_file.exists() else 0
        if now_size != size:
            size, last_change = now_size, time.monotonic()
        elif time.monotonic() - last_change > STALL_SECONDS:
            proc.kill()
            proc.wait()
            return


def _transient(result: dict[str, Any]) -> bool:
    """A failed example whose failure says more about the machine than the example (out of time, a crashed
    worker): not kept in the cache, so the next build runs it again."""
    return not result.get("ok") and any("TimeoutError" in str(e) or "worker crashed" in str(e)
                                        for e in result.get("errors", ()))


def run_jobs(jobs: list[dict[str, Any]], workers: int, cache: Path | None) -> dict[str, dict[str, Any]]:
    """Run example jobs in worker processes, surviving crashes; results by job id."""
    done: dict[str, dict[str, Any]] = {}

    def key(job: dict[str, Any]) -> str:
        return json.dumps(job["candidates"], sort_keys=True)

    cached: dict[str, dict[str, Any]] = {}
    if cache and cache.exists():
        for line in cache.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            cached[rec["key"]] = rec["result"]
    todo = []
    for job in jobs:
        if key(job) in cached:
            done[job["id"]] = dict(cached[key(job)], id=job["id"])
        else:
            todo.append(job)
    print(f"examples: {len(done)} cached, {len(todo)} to run on {workers} workers", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        chunks = [todo[k::workers] for k in range(workers)]
        procs = []
        for n, chunk in enumerate(chunks):
            if chunk:
                procs.append((n, chunk))
        pending = dict(procs)
        while pending:
            running = []
            for n, chunk in pending.items():
                jobs_file = Path(tmp) / f"jobs{n}.jsonl"
                out_file = Path(tmp) / f"out{n}.jsonl"
                jobs_file.write_text("".join(json.dumps(j) + "\n" for j in chunk), encoding="utf-8")
                proc = subprocess.Popen([sys.executable, __file__, "--worker", str(jobs_file), str(out_file)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                running.append((n, chunk, proc, out_file))
            pending = {}
            for n, chunk, proc, out_file in running:
                _wait_or_kill_stalled(proc, out_file)
                results = []
                if out_file.exists():
                    results = [json.loads(x) for x in out_file.read_text(encoding="utf-8").splitlines() if x]
                    out_file.unlink()
                for r in results:
                    done[r["id"]] = r
                if len(results) < len(chunk):  # crashed on the next job: record it and go on
                    bad = chunk[len(results)]
                    done[bad["id"]] = {"id": bad["id"], "ok": False, "errors": ["worker crashed"]}
                    rest = chunk[len(results) + 1:]
                    if rest:
                        pending[n] = rest
    if cache:
        by_id = {job["id"]: job for job in jobs}
        with cache.open("w", encoding="utf-8") as handle:
            for job_id, res in done.items():
                if job_id in by_id and not _transient(res):
                    handle.write(json.dumps({"key": key(by_id[job_id]), "result": res}) + "\n")
    return done


# ---------------------------------------------------------------------------------- the build
def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def namespace_of(api: str, files: list[str]) -> str:
    best = "torch"
    for ns in files:
        if (api == ns or api.startswith(ns + ".")) and len(ns) > len(best):
            best = ns
    return best


def fix_ms_name(name: str) -> str | None:
    """The installed spelling of a MindSpore name from the docs (case typos), or None."""
    if resolve(name) is not None:
        return name
    parent, _, last = name.rpartition(".")
    owner = resolve(parent)
    if owner is None:
        return None
    for attr in dir(owner):
        if attr.lower() == last.lower():
            return f"{parent}.{attr}"
    return None


# Known MindSpore spellings of torch APIs whose names differ (facts checked by running the examples).
ALIASES: dict[str, list[str]] = {
    "torch.special.expit": ["mindspore.mint.sigmoid"],
    "torch.special.psi": ["mindspore.mint.digamma", "mindspore.ops.digamma"],
    "torch.special.digamma": ["mindspore.mint.digamma", "mindspore.ops.digamma"],
    "torch.special.gammaln": ["mindspore.mint.lgamma", "mindspore.ops.lgamma"],
    "torch.special.i0": ["mindspore.mint.i0", "mindspore.ops.i0"],
    "torch.special.i0e": ["mindspore.ops.bessel_i0e"],
    "torch.special.i1": ["mindspore.ops.bessel_i1"],
    "torch.special.i1e": ["mindspore.ops.bessel_i1e"],
    "torch.special.gammainc": ["mindspore.ops.igamma"],
    "torch.special.gammaincc": ["mindspore.ops.igammac"],
    "torch.special.multigammaln": ["mindspore.ops.mvlgamma"],
    "torch.special.modified_bessel_i0": ["mindspore.ops.bessel_i0"],
    "torch.special.modified_bessel_i1": ["mindspore.ops.bessel_i1"],
    "torch.special.modified_bessel_k0": ["mindspore.ops.bessel_k0"],
    "torch.special.modified_bessel_k1": ["mindspore.ops.bessel_k1"],
    "torch.special.scaled_modified_bessel_k0": ["mindspore.ops.bessel_k0e"],
    "torch.special.scaled_modified_bessel_k1": ["mindspore.ops.bessel_k1e"],
    "torch.special.ndtri": ["mindspore.ops.ndtri"],
    "torch.special.exp2": ["mindspore.mint.special.exp2", "mindspore.mint.exp2"],
    "torch.special.logit": ["mindspore.mint.logit", "mindspore.ops.logit"],
    "torch.special.logsumexp": ["mindspore.mint.logsumexp", "mindspore.ops.logsumexp"],
    "torch.special.log_softmax": ["mindspore.mint.special.log_softmax", "mindspore.mint.nn.functional.log_softmax"],
    "torch.nn.init.uniform_": ["mindspore.Tensor.uniform_"],
    "torch.nn.init.normal_": ["mindspore.Tensor.normal_"],
    "torch.nn.init.zeros_": ["mindspore.Tensor.zero_"],
    "torch.nn.init.constant_": ["mindspore.Tensor.fill_"],
    "torch.clip": ["mindspore.mint.clamp"],
    "torch.clamp_min": ["mindspore.mint.clamp"],
    "torch.tensor": ["mindspore.tensor", "mindspore.Tensor"],
    "torch.as_tensor": ["mindspore.tensor", "mindspore.Tensor"],
    "torch.asarray": ["mindspore.tensor", "mindspore.Tensor"],
    "torch.detach": ["mindspore.ops.stop_gradient"],
    "torch.Tensor.detach": ["mindspore.ops.stop_gradient"],
    "torch.pinverse": ["mindspore.ops.pinv"],
    "torch.linalg.pinv": ["mindspore.ops.pinv"],
    "torch.dropout": ["mindspore.mint.nn.functional.dropout", "mindspore.ops.dropout"],
    "torch.Tensor.clip": ["mindspore.Tensor.clamp"],
    "torch.absolute": ["mindspore.mint.abs"],
    "torch.negative": ["mindspore.mint.neg"],
    "torch.multiply": ["mindspore.mint.mul"],
    "torch.divide": ["mindspore.mint.div"],
    "torch.subtract": ["mindspore.mint.sub"],
    "torch.greater": ["mindspore.mint.gt"],
    "torch.greater_equal": ["mindspore.mint.ge"],
    "torch.less": ["mindspore.mint.lt"],
    "torch.less_equal": ["mindspore.mint.le"],
    "torch.not_equal": ["mindspore.mint.ne"],
    "torch.arccos": ["mindspore.mint.acos"],
    "torch.arcsin": ["mindspore.mint.asin"],
    "torch.arctan": ["mindspore.mint.atan"],
    "torch.arccosh": ["mindspore.mint.acosh"],
    "torch.arcsinh": ["mindspore.mint.asinh"],
    "torch.arctanh": ["mindspore.mint.atanh"],
    "torch.arctan2": ["mindspore.mint.atan2"],
    "torch.concat": ["mindspore.mint.cat"],
    "torch.concatenate": ["mindspore.mint.cat"],
    "torch.swapaxes": ["mindspore.mint.transpose"],
    "torch.swapdims": ["mindspore.mint.transpose"],
    "torch.det": ["mindspore.ops.det"],
    "torch.linalg.det": ["mindspore.ops.det"],
    "torch.nn.functional.sigmoid": ["mindspore.mint.sigmoid"],
    "torch.nn.functional.tanh": ["mindspore.mint.tanh"],
}


def ms_candidates(api: str) -> list[tuple[str, str]]:
    """(target, era) pairs to try for a torch API by name: era 'new' (mint) or 'old' (ops/nn/Tensor), or
    'any' (a Tensor method, a known other name, or, where none of those exists, mindspore.numpy and
    mindspore.scipy.linalg: the search for entries that would be missing)."""
    ns, _, last = api.rpartition(".")
    out: list[tuple[str, str]] = []
    if ns == "torch.Tensor":
        out = [(f"mindspore.Tensor.{last}", "any")]
    elif ns == "torch":
        out = [(f"mindspore.mint.{last}", "new"), (f"mindspore.ops.{last}", "old"), (f"mindspore.{last}", "any")]
    elif ns == "torch.nn.functional":
        out = [(f"mindspore.mint.nn.functional.{last}", "new"), (f"mindspore.ops.{last}", "old")]
    elif ns == "torch.nn":
        out = [(f"mindspore.mint.nn.{last}", "new"), (f"mindspore.nn.{last}", "old")]
    elif ns == "torch.linalg":
        out = [(f"mindspore.mint.linalg.{last}", "new"), (f"mindspore.ops.{last}", "old"),
               (f"mindspore.ops.matrix_{last}", "old")]
    elif ns == "torch.special":
        out = [(f"mindspore.mint.special.{last}", "new"), (f"mindspore.mint.{last}", "new"),
               (f"mindspore.ops.{last}", "old"), (f"mindspore.ops.special_{last}", "old")]
    elif ns == "torch.fft":
        out = [(f"mindspore.ops.{last}", "any")]
    elif ns == "torch.optim":
        out = [(f"mindspore.mint.optim.{last}", "new"), (f"mindspore.experimental.optim.{last}", "any")]
    elif ns == "torch.optim.lr_scheduler":
        out = [(f"mindspore.experimental.optim.lr_scheduler.{last}", "any")]
    elif ns == "torch.distributed":
        out = [(f"mindspore.mint.distributed.{last}", "new")]
    elif ns == "torch.distributions":
        out = [(f"mindspore.nn.probability.distribution.{last}", "any")]
    out = [(name, "any") for name in ALIASES.get(api, [])] + out
    found = [(name, era) for name, era in out if resolve(name) is not None]
    if not found and ns in ("torch", "torch.linalg", "torch.special"):
        # Nothing under torch's name in mint/ops/nn/Tensor (the entry would be missing): MindSpore's
        # NumPy and SciPy interfaces hold some of torch's functions under their names.
        found = [(name, "any") for name in (f"mindspore.numpy.{last}", f"mindspore.scipy.linalg.{last}")
                 if resolve(name) is not None]
    return found


def example_kind(api: str, obj: Any) -> str:
    ns, _, last = api.rpartition(".")
    if ns == "torch.Tensor" and obj is not None and not callable(obj):
        return "attribute"
    if ns == "torch.Tensor":
        return "inplace" if last.endswith("_") and not last.endswith("__") else "method"
    if ns == "torch.optim.lr_scheduler":
        return "scheduler"
    if ns == "torch.optim" and isinstance(obj, type):
        return "optimizer"
    if ns == "torch.nn" and isinstance(obj, type):
        return "loss" if last.endswith("Loss") else "layer"
    return "function"


ATTRIBUTE_TEMPLATES = ["x.{m}", "m.{m}", "i.{m}"]


def templates_for(kind: str) -> list[str]:
    return {"method": METHOD_TEMPLATES, "inplace": METHOD_TEMPLATES, "layer": LAYER_TEMPLATES,
            "attribute": ATTRIBUTE_TEMPLATES,
            "loss": LAYER_TEMPLATES, "optimizer": OPTIMIZER_TEMPLATES,
            "scheduler": SCHEDULER_TEMPLATES}.get(kind, FUNCTION_TEMPLATES)


def make_candidates(api: str, target: str, kind: str) -> list[dict[str, Any]]:
    last = api.rpartition(".")[2]
    out = []
    for tpl in templates_for(kind):
        torch_code = tpl.format(f=api, m=last)
        out.append({"torch": torch_code, "mindspore": _ms_code(torch_code, api, target, kind), "target": target,
                    "kind": kind})
    return out


def inventory_apis(inventory: dict[str, Any]) -> list[str]:
    apis = []
    for ns in NAMESPACES:
        for name in inventory["namespaces"].get(ns, []):
            apis.append(f"{ns}.{name}")
    return apis


def param_facts(api: str, torch_obj: Any, target: str, ms_obj: Any,
                ref_rows: list[dict[str, str]], current: bool = True) -> list[dict[str, Any]]:
    """Parameter facts for one pair: the official rows that still hold, plus signature drift.

    For a target used by current MindSpore (`current`) whose signature cannot be read (Tensor
    methods), rows of the r2.4.10 table are not trusted: 2.10 rewrote those methods around torch's
    parameter names.
    """
    facts: list[dict[str, Any]] = []
    if current and ms_obj is not None and ms_params(ms_obj) is None:
        ref_rows = [r for r in ref_rows if r["source_ref"] == "master"]
    last = api.rpartition(".")[2]
    tparams = torch_params(torch_obj, last) if torch_obj is not None else None
    tnames = {n for overload in tparams or [] for n, _ in overload}
    mlist = ms_params(ms_obj) if ms_obj is not None else None
    mnames = {n for n, _ in mlist} if mlist is not None else None
    seen: set[tuple[str, str]] = set()

    def add(fact: dict[str, Any]) -> None:
        ident = (fact["kind"], fact.get("torch") or fact.get("ms") or fact.get("note", ""))
        if ident not in seen:
            seen.add(ident)
            facts.append(fact)

    for row in ref_rows:
        kind = row["kind"]
        tp, mp = row["torch_param"], row["mindspore_param"]
        if tp and tnames and tp not in tnames:
            continue  # stale: torch 2.13 has no such parameter
        if kind == "renamed" and tp and mp and ";" not in mp:
            if mnames is not None and (mp not in mnames or tp in mnames):
                continue
            add({"kind": "renamed", "torch": tp, "ms": mp})
        elif kind == "removed_in_ms" and tp:
            if tp in GENERAL_PARAMS or (mnames is not None and tp in mnames):
                continue
            add({"kind": "dropped", "torch": tp})
        elif kind == "added_in_ms" and mp and row["ms_default_installed"] == "<required>":
            add({"kind": "added_required", "ms": mp})
        elif kind == "default_differs" and (tp or mp):
            td, md = row["torch_default_installed"], row["ms_default_installed"]
            if td.startswith("<") or md.startswith("<") or td == md:
                continue
            fact = {"kind": "default_differs", "torch": tp or mp, "torch_default": _literal(td),
                    "ms_default": _literal(md)}
            if mp and mp != tp:
                fact["ms"] = mp
            add(fact)
    # Signature drift: torch parameters the MindSpore signature lacks. Each is matched to a MindSpore
    # parameter by name first (alike names, or known synonyms: dim/axis, correction/ddof), then by
    # position where both are required operands (input/x, A/input); otherwise it is dropped. Two
    # optional parameters that only share a position (validate_args/seed) are not a rename.
    if tparams and mlist is not None:
        declared = {f.get("torch") for f in facts}
        free = [n for n in (mnames or set()) if n not in tnames]
        required = {n for overload in tparams for n, default in overload if default is None}
        mpos = ms_positional(ms_obj) or []
        if api.startswith("torch.Tensor.") and not target.startswith("mindspore.Tensor."):
            mpos = mpos[1:]  # a Tensor method mapped to a function: its first parameter is the tensor
        positions = torch_positions(torch_obj, last)
        for overload in tparams:
            for name, _default in overload:
                if name in GENERAL_PARAMS or name in (mnames or ()) or name in declared or name.startswith("_"):
                    continue
                negated, best = min(((-_alike(name, m), m) for m in free), default=(0.0, None))
                match = best if negated < 0 else None  # the most alike name, the first in order on a tie
                pos = positions.get(name)
                if match is None and pos is not None and pos < len(mpos) and name in required:
                    m_name, m_required = mpos[pos]
                    if (m_required or pos == 0) and m_name in free:
                        match = m_name
                if match is not None:
                    free.remove(match)
                    add({"kind": "renamed", "torch": name, "ms": match})
                else:
                    add({"kind": "dropped", "torch": name})
                declared.add(name)
    return facts


# Parameter names that mean the same in both frameworks though they are not spelt alike.
SYNONYMS = {frozenset(pair) for pair in (
    ("dim", "axis"), ("dim0", "axis0"), ("dim1", "axis1"), ("dim2", "axis2"), ("dims", "axis"),
    ("correction", "ddof"), ("p", "ord"), ("lr", "learning_rate"), ("negative_slope", "alpha"),
    ("num_classes", "depth"), ("tensors", "inputs"), ("in_features", "in_channels"),
    ("out_features", "out_channels"), ("loc", "mean"), ("scale", "sd"), ("std", "stddev"),
    ("num_embeddings", "vocab_size"), ("embedding_dim", "embedding_size"), ("weight", "gamma"),
    ("num_parameters", "channel"), ("init", "w"), ("k", "bias"), ("dilation", "rates"),
    ("exponent", "other"), ("threshold", "thr"), ("num_workers", "num_parallel_workers"),
    ("dataset", "source"), ("rank", "shard_id"), ("p", "prob"), ("a", "from_"), ("b", "to"), ("num_replicas", "num_shards"),
)}


def _alike(torch_name: str, ms_name: str) -> float:
    """How surely two parameter names mean the same, 0 when they do not: a known synonym (3), one a
    prefix of the other (2: eps/epsilon, keepdim/keepdims, input/input_x), or spelt nearly alike
    (the similarity ratio, at least 0.6: bias/has_bias)."""
    from difflib import SequenceMatcher

    if frozenset((torch_name, ms_name)) in SYNONYMS:
        return 3.0
    if len(torch_name) > 1 and len(ms_name) > 1 and (
            ms_name.startswith(torch_name) or torch_name.startswith(ms_name)):
        return 2.0
    ratio = SequenceMatcher(None, torch_name, ms_name).ratio()
    return ratio if ratio >= 0.6 else 0.0


def _literal(text: str) -> Any:
    if text in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[text]
    try:
        return json.loads(text)
    except ValueError:
        return text.strip("'\"")


INIT_CLASSES = {
    "normal_": "Normal(sigma, mean)", "uniform_": "Uniform(scale)", "constant_": "Constant(value)",
    "ones_": "One()", "zeros_": "Zero()", "xavier_uniform_": "XavierUniform(gain)",
    "xavier_normal_": "XavierNormal(gain)", "kaiming_uniform_": "HeUniform(negative_slope, mode, nonlinearity)",
    "kaiming_normal_": "HeNormal(negative_slope, mode, nonlinearity)", "trunc_normal_": "TruncatedNormal(sigma)",
    "orthogonal_": "Orthogonal(gain)", "dirac_": "Dirac(groups)", "eye_": "Identity()", "sparse_": "Sparse(sparsity, sigma)",
}


def missing_note(api: str) -> str:
    """A workaround, in our words, for a torch API without a MindSpore 2.10 counterpart."""
    return missing_fact(api)[0]


# How much work a use of a missing API is, for the reports (schema: effort): "remove" (the call can go),
# "manual" (the note names a workaround), "blocker" (compose it yourself or write a custom op).
def missing_fact(api: str) -> tuple[str, str]:
    """(note, effort) of a torch API without a MindSpore 2.10 counterpart."""
    ns, _, last = api.rpartition(".")
    low = last.lower()
    if ns == "torch.Tensor" and last.endswith("_") and not last.endswith("__"):
        return (f"no in-place form in MindSpore; compute the out-of-place result and assign it "
                f"(x = x.{last[:-1]}(...))"), "manual"
    if last.endswith("_") and not last.endswith("__") and ns in ("torch", "torch.nn.functional"):
        return (f"no in-place form in MindSpore; call the out-of-place {ns}.{last[:-1]} counterpart "
                f"(see its entry) and assign the result"), "manual"
    if "cuda" in low or "mps" in low or "xpu" in low or "mtia" in low or "ipu" in low or low in (
            "cpu", "pin_memory", "is_pinned", "share_memory_", "get_device", "record_stream"):
        return "MindSpore places data on the device chosen by mindspore.set_device; drop device moves", "remove"
    if "quant" in low or low.startswith("q_") or low in ("int_repr", "dequantize", "fake_quantize_per_tensor_affine",
                                                         "fake_quantize_per_channel_affine"):
        return "quantised tensors are not a MindSpore tensor type; quantise with MindSpore Golden Stick (mindspore_gs)", "manual"
    if "sparse" in low or low.startswith(("to_sparse", "coalesce", "indices", "values", "crow_", "col_", "ccol_",
                                          "row_indices")) or low in ("is_coalesced", "dense_dim", "nnz"):
        return "use mindspore.COOTensor / mindspore.CSRTensor for sparse data, or keep the data dense", "manual"
    if low in ("refine_names", "rename", "rename_", "align_to", "align_as", "unflatten_names") or "names" in low:
        return "MindSpore has no named tensors; track dimensions by position", "manual"
    if low.endswith("storage") or "storage" in low:
        return "MindSpore does not expose tensor storages; work on the tensor (asnumpy() for raw data)", "manual"
    if ns == "torch" and last.endswith("Tensor") and last[:1].isupper():
        return "legacy typed tensor class: create mindspore.Tensor(data, dtype=...) instead", "manual"
    if ns == "torch" and last[:1].isupper():
        return ("a torch runtime/TorchScript/type-system class with no MindSpore counterpart; "
                "MindSpore code does not need it (compile with mindspore.jit where TorchScript was used)"), "remove"
    if low.startswith(("is_", "has_")) or low.endswith(("_enabled", "_available")):
        return "a torch runtime query without a MindSpore counterpart; answer it from the tensor's dtype/shape or drop it", "remove"
    if low.startswith(("set_", "get_", "use_", "enable_", "disable_")):
        return "a torch runtime setting; set MindSpore behaviour with mindspore.set_context / mindspore.set_device", "manual"
    if ns == "torch.distributions":
        return "not in mindspore.nn.probability.distribution; compute log_prob/sample from mindspore.mint ops", "manual"
    if ns == "torch.distributed":
        return "use mindspore.communication (init, get_rank, create_group) or mindspore.mint.distributed collectives", "manual"
    if ns == "torch.utils.data":
        return "build the input pipeline with mindspore.dataset (GeneratorDataset plus samplers and map/batch)", "manual"
    if ns == "torch.nn.init":
        cls = INIT_CLASSES.get(last, "the matching initializer class")
        return (f"initialise with mindspore.common.initializer: "
                f"param.set_data(initializer({cls}, param.shape, param.dtype))"), "manual"
    if ns == "torch.nn":
        return "compose it from mindspore.mint.nn layers in a mindspore.nn.Cell, or write the op with mindspore.ops.Custom", "blocker"
    if ns == "torch.amp":
        return "use mindspore.amp (auto_mixed_precision, DynamicLossScaler) instead", "manual"
    return "no MindSpore 2.10 counterpart; compose it from mindspore.mint / mindspore.ops ops or write a mindspore.ops.Custom op", "blocker"


def version_targets(primary: str, official_new: str | None, official_old: str | None,
                    discovered: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """Targets by MindSpore version: the confirmed primary, plus an older-version target where known."""
    targets: list[dict[str, Any]] = []
    is_new = primary.startswith("mindspore.mint.") or primary == official_new
    if is_new:
        old = official_old or next((n for n, era in discovered if era in ("old", "any") and n != primary), None)
        if old and old != primary:
            targets.append({"api": primary, "since": "2.3"})
            targets.append({"api": old, "until": "2.3"})
        elif old == primary or not primary.startswith("mindspore.mint."):
            targets.append({"api": primary})  # the same spelling before and after 2.3
        else:
            targets.append({"api": primary, "since": "2.3"})
    else:
        targets.append({"api": primary})
    return targets


def example_job(api: str, n: int) -> str:
    """The id of the job that runs example `n` (after the first) of a hand-written entry by itself."""
    return f"{api}#example{n}"


def manual_examples_that_ran(api: str, examples: list[dict[str, Any]], results: dict[str, dict[str, Any]],
                             log: list[str]) -> list[dict[str, Any]]:
    """The examples of a hand-written entry that ran: the one its own job ran first (the job tries them in
    order), then each other one whose job (`example_job`) ran; a failed one is logged and left out."""
    first = results[api]["cand"]["torch"]
    kept = [e for e in examples if e["torch"] == first]
    for n, example in enumerate(examples[1:], 1):
        if example["torch"] == first:
            continue
        result = results.get(example_job(api, n), {})
        if result.get("ok"):
            kept.append(example)
        else:
            log.append(f"FAILED manual example {api} #{n}: {result.get('errors')}")
    return kept


def build(ref: Path, jobs: int, cache: Path | None, report: Path | None, only: str | None = None) -> None:
    import yaml

    sys.path.insert(0, str(ROOT))
    new_rows = read_csv(ref / "pytorch_ms_api_mapping.csv")
    old_rows = read_csv(ref / "pytorch_ms_api_mapping_r2.4.10.csv")
    diff_rows = read_csv(ref / "pytorch_ms_param_diffs.csv")
    dyn_rows = read_csv(ref / "dynamic_shape_apis.csv")
    inventory = json.loads((MAPPINGS / "inventory.json").read_text(encoding="utf-8"))
    manual: dict[str, dict[str, Any]] = {}
    for path in OVERRIDES:
        for entry in (yaml.safe_load(path.read_text(encoding="utf-8")) or {})["entries"]:
            if entry["api"] in manual:
                raise SystemExit(f"{path.name}: {entry['api']} is already overridden in another overrides file")
            manual[entry["api"]] = entry

    def torch_name(row: dict[str, str]) -> str:
        return row["torch_resolved_name"] or row["torch_api"]

    official_new: dict[str, str] = {}
    official_old: dict[str, str] = {}
    official_category: dict[str, str] = {}
    for row in old_rows + new_rows:  # newest table last, so it wins
        official_category[torch_name(row)] = row["category"]
    for row in new_rows:
        if torch_name(row).startswith("torch.") and row["mindspore_api"]:
            name = fix_ms_name(row["mindspore_api"]) or row["ms_alternative_2_10"]
            if name:
                official_new.setdefault(torch_name(row), name)
    for row in old_rows:
        if torch_name(row).startswith("torch.") and row["mindspore_api"]:
            name = fix_ms_name(row["mindspore_api"]) or row["ms_alternative_2_10"]
            if name:
                official_old.setdefault(torch_name(row), name)
    diffs: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
    for row in diff_rows:
        diffs[(row["torch_api"], fix_ms_name(row["mindspore_api"]) or row["mindspore_api"])].append(row)
        diffs[(row["torch_api"], "*")].append(row)

    apis = inventory_apis(inventory)
    for name in list(official_new) + list(official_old) + list(manual):
        if resolve(name) is not None or name in manual:
            apis.append(name)
    # torch.Tensor.log_normal does not exist (only log_normal_); names that do not resolve are dropped.
    apis = sorted({a for a in apis if a in manual or resolve(a) is not None})
    if only:
        apis = [a for a in apis if a.startswith(only)]

    # ---- example jobs
    job_list = []
    plan: dict[str, dict[str, Any]] = {}
    for api in apis:
        obj = resolve(api)
        kind = example_kind(api, obj)
        discovered = ms_candidates(api)
        order: list[str] = []
        for candidate in [official_new.get(api)] + [n for n, era in discovered if era in ("new", "any")] + \
                [official_old.get(api)] + [n for n, _ in discovered]:
            if candidate and candidate not in order and resolve(candidate) is not None:
                order.append(candidate)
        if kind == "inplace" and api.endswith("_") and not order:
            order = [f"mindspore.Tensor.{api.rpartition('.')[2][:-1]}"] if resolve(
                f"mindspore.Tensor.{api.rpartition('.')[2][:-1]}") is not None else []
        if kind in ("method", "inplace"):
            base_name = api.rpartition(".")[2].rstrip("_")
            for fallback in (f"mindspore.ops.{base_name}", f"mindspore.mint.{base_name}"):
                if fallback not in order and resolve(fallback) is not None:
                    order.append(fallback)
        plan[api] = {"kind": kind, "order": order, "discovered": discovered}
        man = manual.get(api)
        if man is not None and "examples" in man:
            cands = [{"torch": e["torch"], "mindspore": e["mindspore"], "target": None, "kind": e.get("kind"),
                      "object_ok": True, "inputs": e.get("inputs")} for e in man["examples"]]
            for cand, e in zip(cands, man["examples"]):
                for key in ("fixture", "compare"):  # state the example needs (a process group); compare: abs
                    if e.get(key):
                        cand[key] = e[key]
            job_list.append({"id": api, "candidates": cands})
            for n, cand in enumerate(cands[1:], 1):  # every further example is run on its own
                job_list.append({"id": example_job(api, n), "candidates": [cand]})
        elif man is not None and man.get("category") == "missing":
            continue
        elif order:
            cands = []
            for target in order[:4]:
                cands.extend(make_candidates(api, target, kind))
            if kind in ("optimizer", "scheduler") or (isinstance(obj, type) and kind == "function"):
                for c in cands:
                    c["object_ok"] = True
            job_list.append({"id": api, "candidates": cands})
        # A same-named function of an older namespace (ops.gather beside mint.gather) is an older
        # version's target only if it reproduces torch's result too: same names can mean other ops.
        if not official_old.get(api):
            for name, era in discovered:
                if era in ("old", "any"):
                    job_list.append({"id": f"{api}@old:{name}", "candidates": make_candidates(api, name, kind)})
    results = run_jobs(job_list, jobs, cache)
    for api in apis:
        plan[api]["discovered"] = [
            (name, era) for name, era in plan[api]["discovered"]
            if era == "new" or official_old.get(api) or any(
                results.get(f"{api}@old:{name}", {}).get(k) for k in ("ok", "nocpu"))]

    # ---- entries
    entries: dict[str, dict[str, Any]] = {}
    log: list[str] = []
    for api in apis:
        info = plan[api]
        res = results.get(api)
        man = manual.get(api)
        torch_obj = resolve(api)
        entry = {"api": api}
        if man is not None and (man.get("category") == "missing" or "examples" in man or man.get("ms")):
            entry = dict(man.items())
            if man.get("category") == "missing":
                entry.setdefault("effort", "manual")  # a hand-written note names the workaround
            if "examples" in man and not (res and res.get("ok")) and res and res.get("nocpu"):
                # torch runs it but MindSpore has no CPU kernel: keep it (verify says where it cannot run)
                log.append(f"NOCPU manual example {api}")
                entry["examples"] = [e for e in man["examples"] if e["torch"] == res["nocpu"]["torch"]]
            elif "examples" in man and not (res and res.get("ok")):
                log.append(f"FAILED manual example {api}: {res and res.get('errors')}")
                entry.pop("examples", None)
            elif res and res.get("ok") and "examples" in man:  # an entry without examples stays without
                entry["examples"] = manual_examples_that_ran(api, man["examples"], results, log)
        elif (res and res.get("ok")) or (res and res.get("nocpu")):
            cand = res["cand"] if res.get("ok") else res["nocpu"]
            target = cand["target"]
            example_note = None
            nocpu = res.get("nocpu")
            if not res.get("ok"):
                example_note = (f"not run here: MindSpore 2.10 has no CPU kernel for {target}; "
                                f"run it on Ascend/GPU")
                log.append(f"NOCPU {api} -> {target}")
            elif nocpu and nocpu["target"] != target and nocpu["target"].startswith(("mindspore.mint.",
                                                                                        "mindspore.Tensor.")):
                example_note = (f"{nocpu['target']} has no CPU kernel in MindSpore 2.10; "
                                f"this example runs {target} on CPU")
                fallback_target = target
                target = nocpu["target"]
                if fallback_target not in info["order"]:
                    info["order"].append(fallback_target)
                if target.startswith("mindspore.mint.") and not official_old.get(api):
                    official_old[api] = fallback_target
            tgt_obj = resolve(target)
            facts = param_facts(api, torch_obj, target, tgt_obj,
                                diffs.get((api, target), []) or [])
            if info["kind"] == "inplace" and not target.endswith("_"):
                facts.append({"kind": "semantics_differ",
                              "note": f"no in-place form in MindSpore here: assign the result of {target}"})
            dtype_fact = None
            if res.get("verdict") == "dtype":
                dtype_fact = {"kind": "semantics_differ",
                              "note": f"result dtype differs (torch {res['dtypes'][0]}, MindSpore {res['dtypes'][1]})",
                              "result_dtype": {"torch": res["dtypes"][0], "ms": res["dtypes"][1]}}
                if cand["target"] == target:  # measured on this target itself
                    facts.append(dtype_fact)
            targets = version_targets(target, official_new.get(api), official_old.get(api), info["discovered"])
            targets[0]["params"] = facts
            for extra in targets[1:]:
                old_facts = param_facts(api, torch_obj, extra["api"], resolve(extra["api"]),
                                        diffs.get((api, extra["api"]), []), current=False)
                if dtype_fact is not None and extra["api"] == cand["target"]:
                    old_facts.append(dtype_fact)
                if old_facts:
                    extra["params"] = old_facts
                    extra["category"] = "diff_params"
            entry["category"] = "diff_params" if facts else "equivalent"
            for t in targets:
                if not t.get("params"):
                    t.pop("params", None)
            if entry["category"] == "diff_params":
                for t in targets[1:]:
                    if "params" not in t:
                        t["category"] = "equivalent"
                    else:
                        t.pop("category", None)
            entry["ms"] = targets
            example: dict[str, Any] = {"torch": cand["torch"], "mindspore": cand["mindspore"]}
            names = _names_in(cand["torch"] + " " + cand["mindspore"])
            if names:
                example["inputs"] = {n: INPUTS[n] for n in names}
            if api.rpartition(".")[2].startswith(("empty", "new_empty")):
                example["compare"] = "shape"  # uninitialised memory may hold anything, NaN and inf included
                example["note"] = "uninitialised memory: verify compares shape and dtype only"
            elif res.get("random"):  # a random op, or a layer with randomly initialised weights
                example["random"] = True
            if res.get("verdict") == "dtype" and res.get("dtypes"):
                example["dtypes"] = {res["dtypes"][0]: res["dtypes"][1]}
            if example_note:
                example["note"] = example_note
            if cand["kind"] != "function":
                example["kind"] = "method" if cand["kind"] == "attribute" else cand["kind"]
            entry["examples"] = [example]
            if res.get("returns") == "other":
                entry["returns"] = "other"
        elif official_new.get(api) or official_old.get(api):
            target = official_new.get(api) or official_old[api]
            log.append(f"UNCONFIRMED-OFFICIAL {api} -> {target}: {(res or {}).get('errors')}")
            facts = param_facts(api, torch_obj, target, resolve(target), diffs.get((api, target), []))
            official_cat = official_category.get(api, "consistent")
            if (res or {}).get("torch_ran"):
                facts.append({"kind": "semantics_differ",
                              "note": "the official table maps it, but it did not reproduce torch's result in our "
                                      "example; compare the behaviour before relying on it"})
            elif official_cat == "diff_function":
                facts.append({"kind": "semantics_differ",
                              "note": "the official table documents a behaviour difference; read its difference page"})
            entry["category"] = "diff_params" if facts or official_cat != "consistent" else "equivalent"
            if not (res or {}).get("torch_ran"):
                entry["note"] = ("mapping from the official table, checked by signature only: the call needs "
                                 "state that a standalone example cannot set up (process group, dataset, model)")
            entry["ms"] = version_targets(target, official_new.get(api), official_old.get(api), info["discovered"])
            entry["ms"][0]["params"] = facts
            if len(entry["ms"]) > 1:
                entry["ms"] = entry["ms"][:1]
                entry["ms"][0].pop("since", None)
        else:
            if info["order"]:
                log.append(f"UNCONFIRMED {api} -> {info['order'][:3]}: {(res or {}).get('errors')}")
            entry["category"] = "missing"
            entry["note"], entry["effort"] = missing_fact(api)
            near = info["order"][:1]
            if near and not (info["kind"] == "inplace" and not near[0].endswith("_")):  # not the out-of-place op
                entry["note"] += f" ({near[0]} exists but did not reproduce torch's result in our checks)"
            entry.pop("ms", None)
            last = api.rpartition(".")[2]
            if last.startswith(("is_", "has_", "set_")) or last in ("manual_seed", "seed", "typename"):
                entry["returns"] = "other"
        if man is not None:
            for key in ("note", "returns", "doc", "inplace_of", "effort"):
                if key in man:
                    entry[key] = man[key]
        entries[api] = entry

    # In-place Tensor methods: link to the out-of-place entry.
    for api, entry in entries.items():
        ns, _, last = api.rpartition(".")
        if ns == "torch.Tensor" and last.endswith("_") and not last.endswith("__"):
            base = f"torch.Tensor.{last[:-1]}"
            if base in entries and "inplace_of" not in entry and entries[base].get("category") != "missing":
                entry["inplace_of"] = base

    apply_fact_amendments(entries)
    record = read_verification()
    inplace_forms(entries, record)
    add_weight_facts(entries)
    add_rewrites(entries)
    add_structure(entries)
    add_adapters(entries)
    add_dynamic(entries, always_dynamic(dyn_rows))
    add_positions(entries)
    add_keyword_moves(entries)
    add_forward_keywords(entries)
    add_attributes(entries)
    annotate_devices(entries.values(), record)
    derive_case_facts(entries.values(), record)
    if only:
        for api in apis:
            print(json.dumps(entries[api]))
    else:
        write_files(entries)
    if report:
        report.write_text("\n".join(log) + "\n", encoding="utf-8")
    counts: dict[str, int] = defaultdict(int)
    for e in entries.values():
        counts[e.get("category", "inherited")] += 1
    print(f"entries: {len(entries)} {dict(counts)}; log lines: {len(log)}", file=sys.stderr)


# ------------------------------------------------------------------ torchvision / torchaudio / torchtext
# The official tables also map 89 APIs of torch's domain libraries (sections torchvision,
# torchaudio, torchtext) to mindspore.dataset.* and a few mindspore.ops operators. These
# libraries are not installed beside torch here (no CPU build of them matches torch 2.13
# without replacing torch), so their entries come from the reference rows alone: the
# MindSpore target is resolved in the installed MindSpore, the torch side is not.
LIBRARIES = ("torchvision", "torchaudio", "torchtext")
_DIFF_PAGE_URL = "https://www.mindspore.cn/docs/en/master/note/api_mapping/pytorch_diff/{}.html"
_MS_API_URL = "https://www.mindspore.cn/docs/en/master/api_python/{}/{}.html"
_MS_API_DIRS = (("mindspore.dataset.vision.", "dataset_vision"), ("mindspore.dataset.transforms.", "dataset_transforms"),
                ("mindspore.dataset.audio.", "dataset_audio"), ("mindspore.dataset.text.", "dataset_text"),
                ("mindspore.dataset.", "dataset"), ("mindspore.ops.", "ops"))

# What to do, in our words, by torch namespace (the longest matching prefix wins) ...
LIBRARY_NOTES = {
    "torchvision.transforms": (
        "MindSpore's image transforms run inside a mindspore.dataset pipeline (dataset.map(operations=[...])) "
        "on NumPy/PIL images in HWC layout, not on CHW torch tensors; convert to CHW at the end "
        "(vision.ToTensor or vision.HWC2CHW)"),
    "torchvision.datasets": (
        "MindSpore's dataset classes read a copy already on disk (dataset_dir) and cannot download it; "
        "they return a pipeline object: apply transforms with .map(operations=..., input_columns=...) "
        "and batch with .batch() instead of passing transform= and wrapping it in a DataLoader"),
    "torchvision.ops": "a mindspore.ops operator with a different calling convention; see the parameter facts",
    "torchaudio.transforms": (
        "MindSpore's audio transforms run in a mindspore.dataset pipeline (dataset.map) or eagerly on NumPy "
        "arrays; torchaudio's are modules applied to tensors"),
    "torchaudio.datasets": (
        "MindSpore's audio dataset classes read a copy already on disk (dataset_dir) and cannot download it; "
        "they return a pipeline object to chain with .map() and .batch()"),
    "torchtext.datasets": (
        "MindSpore's text dataset classes read a copy already on disk (dataset_dir), select the split with "
        "usage= ('train', 'test', 'all', ...) and return a pipeline object; the official row describes "
        "torchtext 0.9.1, whose API changed up to its final release 0.18"),
    "torchtext.data": (
        "torchtext's helper works on Python lists/iterators; the MindSpore counterpart is a text transform "
        "applied to a dataset column with dataset.map(operations=...)"),
}
# ... and by API, where one needs more than its namespace's note.
LIBRARY_API_NOTES = {
    "torchvision.transforms.Normalize": (
        "MindSpore's Normalize expects HWC input by default (is_hwc=True) and uses mean/std on the pixel scale "
        "of its input: pass 0-255 values for decoded uint8 images, or normalise after ToTensor with is_hwc=False"),
    "torchvision.transforms.ConvertImageDtype": (
        "TypeCast only changes the dtype; torch also rescales the values to the new dtype's range "
        "(uint8 0..255 to float 0..1): add vision.Rescale(1.0 / 255, 0.0) for that"),
    "torchvision.transforms.ColorJitter": "the MindSpore name is RandomColorAdjust (same four factors)",
    "torchvision.transforms.ToPILImage": "the MindSpore name is ToPIL; it takes no mode argument",
    "torchvision.ops.nms": (
        "create mindspore.ops.NMSWithMask(iou_threshold) and call it on one (N, 5) tensor of boxes with the "
        "score as fifth column; it returns boxes, indices and a keep mask: take the indices where the mask is True"),
    "torchvision.ops.roi_align": (
        "create mindspore.ops.ROIAlign(pooled_height, pooled_width, spatial_scale, sample_num, roi_end_mode) "
        "and call it on the features and a (K, 5) rois tensor whose first column is the batch index"),
    "torchvision.ops.deform_conv2d": (
        "mindspore.ops.deformable_conv2d needs kernel_size, strides and padding given explicitly (4-element, "
        "NCHW order) and one offsets tensor whose layout differs from torch's and also carries the modulation "
        "mask; rearrange offset and mask before calling"),
    "torchaudio.transforms.ComplexNorm": (
        "removed from later torchaudio releases (absent from torchaudio 2.11): torch code should use "
        "torch.abs(spec) ** power; mindspore.dataset.audio.ComplexNorm still exists in MindSpore 2.10"),
    "torchtext.data.functional.custom_replace": (
        "torchtext takes a list of (pattern, replacement) pairs; MindSpore's RegexReplace applies one pattern: "
        "chain one RegexReplace per pair"),
    "torchtext.data.functional.load_sp_model": (
        "no model object to load in MindSpore: pass the model file path (or a text.SentencePieceVocab) as "
        "mode= of SentencePieceTokenizer"),
    "torchtext.data.functional.sentencepiece_numericalizer": (
        "use SentencePieceTokenizer(mode=model, out_type=SPieceTokenizerOutType.INT) to get ids"),
    "torchtext.data.functional.sentencepiece_tokenizer": (
        "use SentencePieceTokenizer(mode=model, out_type=SPieceTokenizerOutType.STRING) to get pieces"),
    "torchtext.data.functional.numericalize_tokens_from_iterator": (
        "build a mindspore.dataset.text.Vocab and map text.Lookup(vocab, unknown_token=...) over the token column"),
    "torchtext.data.utils.ngrams_iterator": (
        "torchtext yields every 1..ngrams-gram; MindSpore's Ngram(n=[1, 2, ...]) takes the list of sizes and "
        "joins the tokens with separator"),
}
# Notes for parameter facts whose difference is in meaning, not only in name.
LIBRARY_PARAM_NOTES = {
    "window_fn": "torch takes a window function (torch.hann_window); MindSpore takes a WindowType value",
    "spm": "torch takes a loaded model; MindSpore's mode takes a model file path or a SentencePieceVocab",
    "sp_model": "torch takes a loaded model; MindSpore's mode takes a model file path or a SentencePieceVocab",
    "ngrams": "torch's ngrams=k means all sizes up to k; MindSpore's n is the list of sizes",
    "iou_threshold": "set once when creating NMSWithMask, not per call",
    "output_size": "torch's (height, width) pair becomes the two arguments pooled_height and pooled_width",
    "aligned": "torch's half-pixel alignment flag has no exact counterpart; roi_end_mode only chooses how box ends round",
    "offset": "MindSpore's offsets tensor has another layout and also carries the modulation mask",
    "train": "MindSpore selects the split with usage='train' / 'test' instead of a train flag",
}
# Renames that the reference rows list only as a signature difference.
LIBRARY_RENAMES = {("torchvision.transforms.ConvertImageDtype", "dtype"): "data_type",
                   ("torchvision.ops.deform_conv2d", "dilation"): "dilations"}
# Call inputs that an operator class takes when called, not when created.
LIBRARY_CALL_INPUTS = {
    ("torchvision.ops.nms", "boxes"): "pass boxes and scores together as one (N, 5) tensor when calling NMSWithMask",
    ("torchvision.ops.nms", "scores"): "the fifth column of the (N, 5) tensor given to NMSWithMask",
    ("torchvision.ops.roi_align", "input"): "the features tensor, given when calling the ROIAlign instance",
    ("torchvision.ops.roi_align", "boxes"): "a (K, 5) rois tensor (batch index first), given when calling ROIAlign",
}


def _library_doc(row: dict[str, str], target: str) -> str:
    if row.get("diff_page"):
        return _DIFF_PAGE_URL.format(Path(row["diff_page"]).stem)
    for prefix, folder in _MS_API_DIRS:
        if target.startswith(prefix):
            return _MS_API_URL.format(folder, target)
    return _MS_API_URL.format("mindspore", target)


def _library_note(api: str) -> str:
    best = ""
    for prefix in LIBRARY_NOTES:
        if api.startswith(prefix + ".") and len(prefix) > len(best):
            best = prefix
    parts = [LIBRARY_API_NOTES[api]] if api in LIBRARY_API_NOTES else []
    if best and not api.startswith("torchvision.ops."):
        parts.append(LIBRARY_NOTES[best])
    return "; ".join(parts) or LIBRARY_NOTES.get(best, "")


def _library_facts(api: str, row: dict[str, str], diff_rows: list[dict[str, str]]) -> list[dict[str, Any]]:
    facts: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()

    def add(fact: dict[str, Any]) -> None:
        ident = (fact["kind"], fact.get("torch") or fact.get("ms") or "")
        if ident not in seen:
            seen.add(ident)
            facts.append(fact)

    for d in diff_rows:
        kind, tp, mp = d["kind"], d["torch_param"], d["mindspore_param"]
        if tp and d["torch_default_installed"].startswith("<absent"):
            continue  # a parameter of the old release the table describes, gone from the current one
        if (api, tp) in LIBRARY_CALL_INPUTS:
            add({"kind": "semantics_differ", "torch": tp, "note": LIBRARY_CALL_INPUTS[(api, tp)]})
        elif kind == "renamed" and tp and mp:
            add({"kind": "renamed", "torch": tp, "ms": mp.replace(";", ", ")})
        elif kind == "removed_in_ms" and tp in LIBRARY_PARAM_NOTES:
            add({"kind": "semantics_differ", "torch": tp, "note": LIBRARY_PARAM_NOTES[tp]})
        elif kind == "removed_in_ms" and tp and tp not in GENERAL_PARAMS:
            add({"kind": "dropped", "torch": tp})
        elif kind == "added_in_ms" and mp and d["ms_default_installed"] in ("<required>", "<no_signature>"):
            add({"kind": "added_required", "ms": mp})  # <no_signature>: a call input of an operator class
        elif kind == "default_differs" and (tp or mp):
            td, md = d["torch_default_installed"], d["ms_default_installed"]
            if not (td.startswith("<") or md.startswith("<") or td == md):
                add({"kind": "default_differs", "torch": tp or mp, "torch_default": _literal(td),
                     "ms_default": _literal(md)})
        elif kind == "semantics_differ" and tp:
            add({"kind": "semantics_differ", "torch": tp,
                 "note": LIBRARY_PARAM_NOTES.get(tp, "behaves differently; read the difference page")})
    # Parameters of the current torch library that the MindSpore signature lacks (the reference data
    # compared torchvision 0.28 / torchaudio 2.11 / torchtext 0.18 with MindSpore 2.10).
    declared = {f.get("torch") for f in facts}
    for name in filter(None, row.get("torch_params_not_in_ms_sig", "").split(";")):
        if name == "?" or name in declared or name in GENERAL_PARAMS or name.startswith("_"):
            continue
        if (api, name) in LIBRARY_RENAMES:
            add({"kind": "renamed", "torch": name, "ms": LIBRARY_RENAMES[(api, name)]})
        elif name in LIBRARY_PARAM_NOTES:
            add({"kind": "semantics_differ", "torch": name, "note": LIBRARY_PARAM_NOTES[name]})
        else:
            add({"kind": "dropped", "torch": name})
    if row["category"] == "diff_function":
        add({"kind": "semantics_differ",
             "note": "the official table documents a behaviour difference; read its difference page"})
    return facts


# Why the entries of the other libraries have no example that verify could run.
LIBRARY_NOT_RUNNABLE = {
    "datasets": "a dataset class: it reads the dataset's files, which no test machine has",
    "torchvision": ("torchvision cannot run beside the CPU build of torch 2.13 here: the torchvision 0.28 wheel on "
                    "PyPI is a CUDA build whose C++ operators do not load (import fails on torchvision::nms)"),
    "torchaudio": ("torchaudio cannot run beside the CPU build of torch 2.13 here: its newest wheel on PyPI (2.11, "
                   "built for torch 2.11) is a CUDA build whose library needs libc10_cuda.so"),
    "torchtext": "torchtext was discontinued at 0.18 (torch 2.3) and has no release for torch 2.13",
}


def library_entries(ref: Path) -> dict[str, list[dict[str, Any]]]:
    """Entries for the official rows of LIBRARIES, by library (file) name; the newest table wins."""
    rows: dict[str, dict[str, str]] = {}
    for name in ("pytorch_ms_api_mapping_r2.4.10.csv", "pytorch_ms_api_mapping.csv"):
        for row in read_csv(ref / name):
            if row["torch_api"].split(".")[0] in LIBRARIES and row["mindspore_api"]:
                rows[row["torch_resolved_name"] or row["torch_api"]] = row
    diffs: dict[str, list[dict[str, str]]] = defaultdict(list)
    for d in read_csv(ref / "pytorch_ms_param_diffs.csv"):
        if d["torch_api"].split(".")[0] in LIBRARIES and d["source_ref"] == "master":
            diffs[d["torch_api"]].append(d)
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for api in sorted(rows):
        row = rows[api]
        documented = row["mindspore_api"]
        target = fix_ms_name(documented) or (row["ms_alternative_2_10"] or None)
        if target is not None and resolve(target) is None:
            target = None
        entry: dict[str, Any] = {"api": api}
        if target is None:  # the documented target is gone from the installed MindSpore
            entry["category"] = "missing"
            entry["effort"] = "manual"
            entry["note"] = (f"the official table maps it to {documented}, which MindSpore 2.10 does not have; "
                             + (_library_note(api) or "compose it from mindspore.dataset transforms"))
        else:
            facts = _library_facts(api, row, diffs.get(api, []))
            entry["category"] = "diff_params" if facts or row["category"] != "consistent" else "equivalent"
            entry["ms"] = [{"api": target, "params": facts} if facts else {"api": target}]
            note = _library_note(api)
            if target != documented:
                note = f"the official table spells the target {documented}; " + note
            if note:
                entry["note"] = note
            entry["doc"] = _library_doc(row, target)
        if api.startswith("torchtext.data."):
            entry["returns"] = "other"  # lists and generators of tokens, not tensors
        if "ms" in entry:
            entry["not_runnable"] = (LIBRARY_NOT_RUNNABLE["datasets"] if ".datasets." in api
                                     else LIBRARY_NOT_RUNNABLE[api.split(".")[0]])
        out[api.split(".")[0]].append(entry)
    return out


def write_library_files(ref: Path) -> None:
    """Write src/torch2ms/data/<library>.yaml for the torchvision / torchaudio / torchtext rows."""
    record = read_verification()
    for lib, entries in library_entries(ref).items():
        annotate_devices(entries, record)
        lines = [f"# Generated by scripts/build_tables.py from the official tables' {lib} rows; the MindSpore",
                 f"# targets are checked against the installed MindSpore, the {lib} names are not",
                 f"# ({lib} is not installed: `torch2ms mappings check` reports them as not checked).",
                 f"namespace: {lib}", "entries:"]
        for entry in entries:
            lines.extend(_entry_lines(entry))
        (MAPPINGS / f"{lib}.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"{lib}.yaml: {len(entries)} entries", file=sys.stderr)


def write_hand_libraries() -> None:
    """Write src/torch2ms/data/<library>.yaml for each library of scripts/mapping_libraries.yaml, as written there."""
    import yaml

    doc = yaml.safe_load(HAND_LIBRARIES.read_text(encoding="utf-8")) or {}
    for lib, spec in doc.get("libraries", {}).items():
        lines = [f"# Generated by scripts/build_tables.py from scripts/mapping_libraries.yaml ({lib}: "
                 f"{spec['note']}).", f"namespace: {lib}", "entries:"]
        for entry in sorted(spec["entries"], key=lambda e: e["api"]):
            lines.extend(_entry_lines(entry))
        path = MAPPINGS / f"{lib}.yaml"
        text = "\n".join(lines) + "\n"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"{lib}.yaml: {len(spec['entries'])} entries", file=sys.stderr)


# ---------------------------------------------------------------------------------- weight facts
def weight_facts() -> dict[str, list[dict[str, Any]]]:
    """The weight forms of scripts/mapping_overrides_weights.yaml, by torch layer."""
    import yaml

    doc = yaml.safe_load(WEIGHT_FACTS.read_text(encoding="utf-8")) or {}
    out: dict[str, list[dict[str, Any]]] = {}
    for item in doc.get("weights", []):
        if item["api"] in out:
            raise SystemExit(f"{WEIGHT_FACTS.name}: {item['api']} is listed twice")
        out[item["api"]] = json.loads(json.dumps(item["forms"]))  # plain data (no shared YAML anchors)
    return out


def add_weight_facts(entries: dict[str, dict[str, Any]]) -> None:
    for api, forms in weight_facts().items():
        if api not in entries:
            raise SystemExit(f"{WEIGHT_FACTS.name}: {api} is not an entry of the tables")
        entries[api]["weights"] = forms


def refresh_weight_facts() -> None:
    """Rewrite only the `weights:` of the committed tables' entries (nothing else is re-run or re-read)."""
    facts = weight_facts()
    placed: set[str] = set()
    for path in sorted(MAPPINGS.glob("torch*.yaml")):
        lines = path.read_text(encoding="utf-8").splitlines()
        out: list[str] = []
        api = None
        in_weights = False
        for line in lines + ["  - api: null"]:  # a sentinel closes the last entry
            if line.startswith("  - api: "):
                if api in facts:
                    out.extend(_entry_lines({"api": api, "weights": facts[api]})[1:])
                    placed.add(api)
                api = json.loads(line[len("  - api: "):])
                in_weights = False
                if api is None:
                    break
            elif line.startswith("    weights:"):
                in_weights = True
                continue
            elif in_weights and line.startswith("      - "):
                continue
            else:
                in_weights = False
            out.append(line)
        text = "\n".join(out) + "\n"
        if text != path.read_text(encoding="utf-8"):
            path.write_text(text, encoding="utf-8")
            print(f"{path.name}: weight facts updated", file=sys.stderr)
    for api in sorted(set(facts) - placed):
        raise SystemExit(f"{WEIGHT_FACTS.name}: {api} is not an entry of the tables")


# ---------------------------------------------------------------------------------- rewrites
def rewrite_facts() -> list[dict[str, Any]]:
    """The items of scripts/mapping_rewrites.yaml: {api, target (optional), rewrite}."""
    import yaml

    doc = yaml.safe_load(REWRITES.read_text(encoding="utf-8")) or {}
    items: list[dict[str, Any]] = json.loads(json.dumps(doc.get("rewrites", [])))  # plain data (no YAML anchors)
    seen: set[tuple[str, str | None]] = set()
    for item in items:
        key = (item["api"], item.get("target"))
        if key in seen:
            raise SystemExit(f"{REWRITES.name}: {key[0]} {key[1] or ''} is listed twice")
        seen.add(key)
    return items


REWRITES_SOURCE = "rewrites"  # an example's `from:` where scripts/mapping_rewrites.yaml gave it


def add_rewrites(entries: dict[str, dict[str, Any]]) -> None:
    """Give the entries and targets of scripts/mapping_rewrites.yaml their `rewrite:` (and no other one), and
    the entries its examples, each marked as its (``from: rewrites``): an example an earlier run of this step
    gave whose call the file no longer has goes, so it leaves the committed tables too (`--rewrites-only`); the
    others are replaced where they stand, in the order the full build gives them."""
    items = rewrite_facts()
    calls = {(item["api"], example["torch"]) for item in items for example in item.get("examples", ())}
    for api, entry in entries.items():
        entry.pop("rewrite", None)
        for target in entry.get("ms", ()):
            target.pop("rewrite", None)
        if "examples" in entry:
            entry["examples"] = [e for e in entry["examples"]
                                 if e.get("from") != REWRITES_SOURCE or (api, e["torch"]) in calls]
            if not entry["examples"]:
                del entry["examples"]
    for item in items:
        if item["api"] not in entries:
            raise SystemExit(f"{REWRITES.name}: {item['api']} is not an entry of the tables")
        entry = entries[item["api"]]
        for example in item.get("examples", ()):  # the transform's own examples (once): what it writes for a
            example = {**example, "from": REWRITES_SOURCE}  # torch text an example already has replaces that one
            examples = entry.setdefault("examples", [])
            same = [k for k, e in enumerate(examples) if e["torch"] == example["torch"]]
            if same:
                examples[same[0]] = example
            else:
                examples.append(example)
        if "target" not in item:
            entry["rewrite"] = item["rewrite"]
            continue
        targets = [t for t in entry.get("ms", ()) if t["api"] == item["target"]]
        if not targets:
            raise SystemExit(f"{REWRITES.name}: {item['target']} is not a target of {item['api']}")
        for target in targets:
            target["rewrite"] = item["rewrite"]


def refresh_rewrites() -> None:
    """Rewrite only the `rewrite:` of the committed tables' entries and targets (nothing else is re-run)."""
    refresh_committed(add_rewrites, "rewrites")


# ---------------------------------------------------------------------------------- structure
def add_structure(entries: dict[str, dict[str, Any]]) -> None:
    """Give the entries of scripts/mapping_structure.yaml their `structure:` (and no other entry one)."""
    import yaml

    doc = yaml.safe_load(STRUCTURE.read_text(encoding="utf-8")) or {}
    for entry in entries.values():
        entry.pop("structure", None)
    seen: set[str] = set()
    for item in doc.get("structure", []):
        api = item["api"]
        if api in seen:
            raise SystemExit(f"{STRUCTURE.name}: {api} is listed twice")
        seen.add(api)
        if api not in entries:
            raise SystemExit(f"{STRUCTURE.name}: {api} is not an entry of the tables")
        entries[api]["structure"] = item["structure"]


def refresh_structure() -> None:
    """Rewrite only the `structure:` of the committed tables' entries (nothing else is re-run)."""
    refresh_committed(add_structure, "structure")


# ---------------------------------------------------------------------------------- adapters
def torch_signature(api: str) -> list[dict[str, Any]]:
    """torch's constructor parameters of the class `api`, in order (the installed torch): ``{"name": N}`` for a
    required one, with ``"default"`` for one that has a default and ``"kw_only": true`` after a bare ``*``."""
    import inspect

    cls = resolve(api)
    if not isinstance(cls, type):
        raise SystemExit(f"{ADAPTERS.name}: {api} is not a class of the installed torch")
    out: list[dict[str, Any]] = []
    init = cls.__init__  # type: ignore[misc]
    for param in list(inspect.signature(init).parameters.values())[1:]:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise SystemExit(f"{ADAPTERS.name}: {api} takes *{param.name}: no signature to adapt")
        item: dict[str, Any] = {"name": param.name}
        if param.default is not inspect.Parameter.empty:
            if param.default is not None and not isinstance(param.default, (bool, int, float, str)):
                raise SystemExit(f"{ADAPTERS.name}: {api}: the default of {param.name} is not a literal")
            item["default"] = param.default
        if param.kind is param.KEYWORD_ONLY:
            item["kw_only"] = True
        out.append(item)
    return out


def add_adapters(entries: dict[str, dict[str, Any]]) -> None:
    """Give the layer classes of scripts/mapping_adapters.yaml their `adapter:` (and no other entry one)."""
    import yaml

    doc = yaml.safe_load(ADAPTERS.read_text(encoding="utf-8")) or {}
    for entry in entries.values():
        entry.pop("adapter", None)
    for item in doc.get("adapters", []):
        item = dict(item)
        api = item.pop("api")
        if api not in entries:
            raise SystemExit(f"{ADAPTERS.name}: {api} is not an entry of the tables")
        if "adapter" in entries[api]:
            raise SystemExit(f"{ADAPTERS.name}: {api} is listed twice")
        entries[api]["adapter"] = {"params": torch_signature(api), **item}


def refresh_adapters() -> None:
    """Rewrite only the `adapter:` of the committed tables' entries (nothing else is re-run)."""
    refresh_committed(add_adapters, "adapters")


# ---------------------------------------------------------------------------------- dynamic shapes
def always_dynamic(rows: Iterable[dict[str, str]]) -> set[str]:
    """The APIs the reference table (dynamic_shape_apis.csv) lists as always dynamic (not the samplers:
    torch.where is dynamic only with one argument)."""
    return {name for row in rows if row["condition_kind"] == "always" and row["op"] != "Sampler"
            for name in row["torch_apis"].split(";") if name and "__" not in name}


def add_dynamic(entries: dict[str, dict[str, Any]], always: set[str] | None = None) -> None:
    """Give the entries of scripts/mapping_dynamic.yaml their `dynamic_shape:` (and no other entry one).
    `always`: APIs the reference lists as always dynamic, each of which must be written so."""
    import yaml

    doc = yaml.safe_load(DYNAMIC.read_text(encoding="utf-8")) or {}
    items: list[dict[str, Any]] = json.loads(json.dumps(doc.get("dynamic", [])))  # plain data (no YAML anchors)
    for entry in entries.values():
        entry.pop("dynamic_shape", None)
    for item in items:
        api = item.pop("api")
        if api not in entries:
            raise SystemExit(f"{DYNAMIC.name}: {api} is not an entry of the tables")
        if "dynamic_shape" in entries[api]:
            raise SystemExit(f"{DYNAMIC.name}: {api} is listed twice")
        entries[api]["dynamic_shape"] = item
    for api in sorted((always or set()) & set(entries)):
        if not entries[api].get("dynamic_shape", {}).get("always"):
            raise SystemExit(f"{DYNAMIC.name}: {api} is always dynamic in the reference table; write it so")
    for entry in entries.values():
        entry.pop("shape_result", None)
    for result, apis in (doc.get("results") or {}).items():
        for api in apis:
            if api not in entries:
                raise SystemExit(f"{DYNAMIC.name}: {api} is not an entry of the tables")
            if "shape_result" in entries[api]:
                raise SystemExit(f"{DYNAMIC.name}: {api} has two results")
            entries[api]["shape_result"] = result


def refresh_dynamic() -> None:
    """Rewrite only the `dynamic_shape:` of the committed tables' entries (nothing else is re-run)."""
    refresh_committed(add_dynamic, "dynamic-shape facts")


def refresh_committed(step: Callable[[dict[str, dict[str, Any]]], None], what: str) -> None:
    """Apply one build step to the committed tables and write back the files it changes."""
    import yaml

    docs: dict[Path, tuple[list[str], list[dict[str, Any]]]] = {}
    entries: dict[str, dict[str, Any]] = {}
    hand = set((yaml.safe_load(HAND_LIBRARIES.read_text(encoding="utf-8")) or {}).get("libraries", {}))
    for path in sorted(MAPPINGS.glob("torch*.yaml")):
        if path.stem in hand:
            continue  # written as scripts/mapping_libraries.yaml has it (`--libraries-only`), rewrites included
        text = path.read_text(encoding="utf-8")
        head = text[:text.index("\nentries:\n") + len("\nentries:")].splitlines()
        items = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))["entries"]
        docs[path] = (head, items)
        entries.update((item["api"], item) for item in items)
    step(entries)
    for path, (head, items) in docs.items():
        lines = list(head)
        for item in items:
            lines.extend(_entry_lines(item))
        text = "\n".join(lines) + "\n"
        if text != path.read_text(encoding="utf-8"):
            path.write_text(text, encoding="utf-8")
            print(f"{path.name}: {what} updated", file=sys.stderr)


# ---------------------------------------------------------------------------------- writing
def _flow(value: Any) -> str:
    """One value as a YAML flow (JSON) text. A float keeps a dot in its mantissa (1.0e-05, not JSON's
    1e-05, which YAML 1.1 loaders read as a string)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    text = json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and "e" in text and "." not in text:
        mantissa, _, exponent = text.partition("e")
        text = f"{mantissa}.0e{exponent}"
    return text


KEY_ORDER = ["api", "category", "effort", "inplace_of", "returns", "dynamic_shape", "shape_result", "ms", "note", "doc", "examples"]


def add_positions(entries: dict[str, dict[str, Any]]) -> None:
    """Give each parameter fact that names a torch parameter its positional index in torch's signature
    (where the overloads agree), so that the scanner sees the argument however a call passes it."""
    for api, entry in entries.items():
        facts = [f for t in entry.get("ms", ()) for f in t.get("params", ()) if f.get("torch")]
        obj = resolve(api) if facts else None
        if obj is None:
            continue
        positions = torch_positions(obj, api.rpartition(".")[2])
        for fact in facts:
            if fact["torch"] in positions:
                fact["position"] = positions[fact["torch"]]
            if fact["kind"] == "default_differs" and fact.get("torch_default") is None:
                source = documented_default_from(obj, fact["torch"])
                if source is not None:
                    fact["default_from"] = source
                    if source in positions:
                        fact["from_position"] = positions[source]


def add_keyword_moves(entries: dict[str, dict[str, Any]]) -> None:
    """Mark the `renamed` facts whose MindSpore parameter is not at torch's position in the target's signature
    (src/torch2ms/data/mindspore_api.json, introspected from MindSpore): `by_keyword: true`, so the fix passes
    a value given by position by keyword (`nn.LayerNorm(s, 1e-3)`: torch's eps sits where MindSpore's
    begin_norm_axis is). Targets without a known signature (most Tensor methods) are left as they are."""
    from torch2ms.portcheck.api import load_api

    api = load_api()
    for name, entry in entries.items():
        for target in entry.get("ms", ()):
            facts = target.get("params", ())
            for fact in facts:
                fact.pop("by_keyword", None)
            found = api.name(target["api"])
            if found is None or found.signature is None:
                continue
            positional = [p.name for p in found.signature.positional()]
            if _is_member(name) and not _is_member(target["api"]) and target.get("written_as") != "like":
                positional = positional[1:]  # a method written as a function of its receiver: x.f(a) -> f(x, a)
            for fact in facts:
                ms, position = fact.get("ms"), fact.get("position")
                if fact["kind"] != "renamed" or not ms or ms == fact.get("torch") or position is None:
                    continue
                param = found.signature.param(ms)
                if param is None or param.kind in ("*", "**"):
                    continue
                if position >= len(positional) or positional[position] != ms:
                    fact["by_keyword"] = True


def forward_keywords(torch_forward: Any, construct: list[str]) -> dict[str, str]:
    """torch's forward parameter -> the name MindSpore's construct gives the parameter at the same position,
    where the two differ (`input` -> `x` for Linear); `construct`: its positional parameters' names."""
    import inspect

    try:
        params = list(inspect.signature(torch_forward).parameters.values())[1:]  # without self
    except (TypeError, ValueError):
        return {}
    plain = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = [p.name for p in params if p.kind in plain]
    return {t: m for t, m in zip(names, construct) if t != m}


def torch_layers(entries: dict[str, dict[str, Any]]) -> Iterator[tuple[dict[str, Any], type]]:
    """(entry, torch's class) for each entry of a layer class of torch.nn (`torch.nn.NAME`, an nn.Module)."""
    import torch

    for name, entry in entries.items():
        if not name.startswith("torch.nn.") or name.count(".") != 2:
            continue
        cls = getattr(torch.nn, name.rpartition(".")[2], None)
        if isinstance(cls, type) and issubclass(cls, torch.nn.Module):
            yield entry, cls


FORWARD_DEFAULTS = Path(__file__).resolve().parent / "mapping_forward_defaults.yaml"


def forward_defaults() -> dict[tuple[str, str], dict[str, str]]:
    """The forms of scripts/mapping_forward_defaults.yaml, by (torch layer, MindSpore class)."""
    import yaml

    doc = yaml.safe_load(FORWARD_DEFAULTS.read_text(encoding="utf-8")) or {}
    return {(str(item["api"]), str(item["ms"])): {str(k): str(v) for k, v in item["params"].items()}
            for item in doc.get("forward_defaults", ())}


def forward_default_facts(torch_forward: Any, forms: dict[str, str]) -> list[dict[str, Any]]:
    """`forward_defaults` of a target: each parameter with its position in torch's forward (self not counted)."""
    import inspect

    params = [p.name for p in list(inspect.signature(torch_forward).parameters.values())[1:]]
    return [{"torch": name, "position": params.index(name), "form": form} for name, form in forms.items()]


def add_forward_keywords(entries: dict[str, dict[str, Any]]) -> None:
    """Give each layer's target (a Cell class of src/torch2ms/data/mindspore_api.json) the forward keywords its
    construct names otherwise (`forward: {input: x}`): a call of the layer that passes torch's keyword
    passes MindSpore's. Layers whose forward or construct signature cannot be read are left as they are."""
    from torch2ms.portcheck.api import load_api

    api = load_api()
    defaults = forward_defaults()
    for entry, cls in torch_layers(entries):
        for target in entry.get("ms", ()):
            target.pop("forward_defaults", None)
            wanted = defaults.pop((entry["api"], target["api"]), None)
            if wanted:
                target["forward_defaults"] = forward_default_facts(getattr(cls, "forward", None), wanted)
        for target in entry.get("ms", ()):
            target.pop("forward", None)
            found = api.name(target["api"])
            construct = api.class_member(found.cls, "construct") if found is not None and found.cell else None
            if construct is None or construct.signature is None:
                continue
            renames = forward_keywords(getattr(cls, "forward", None), [p.name for p in construct.signature.positional()])
            if renames:
                target["forward"] = renames
    for torch_api, ms_api in defaults:
        raise SystemExit(f"{FORWARD_DEFAULTS.name}: {torch_api} -> {ms_api} is not a layer target of the tables")


def refresh_forward_keywords() -> None:
    """Rewrite only the `forward` keywords of the committed tables' layer targets (nothing else is re-run)."""
    refresh_committed(add_forward_keywords, "forward keywords")


REGISTERING_CALLS = frozenset({"register_buffer", "register_parameter", "insert_param_to_cell"})


def class_sources(cls: type, stop: tuple[type, ...]) -> list[Any]:
    """The parsed source (an ast.Module holding the class) of `cls` and of each of its bases up to the classes
    `stop` (left out, with their own bases), subclass first; a class whose source cannot be read is left out."""
    import ast
    import inspect
    import textwrap

    out = []
    for klass in cls.__mro__:
        if klass is object or any(klass is s or issubclass(s, klass) for s in stop):
            continue
        try:
            out.append(ast.parse(textwrap.dedent(inspect.getsource(klass))))
        except (OSError, TypeError, SyntaxError):
            continue
    return out


def set_attributes(cls: type, stop: tuple[type, ...]) -> tuple[set[str], set[str]]:
    """The public attributes the methods of `cls` and of its bases (up to the classes `stop`, left out) set on
    `self`: ``self.NAME = ...`` (also annotated or augmented, or inside a tuple target), ``setattr(self, "NAME",
    ...)`` and the registering calls (``self.register_buffer("NAME", ...)``), read from the classes' source; and
    those of them that are tensors (registered, or set to a ``Parameter(...)``)."""
    import ast

    names: set[str] = set()
    tensors: set[str] = set()
    for tree in class_sources(cls, stop):
        for node in ast.walk(tree):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                targets = [node.target]
            value = getattr(node, "value", None)
            func = value.func if isinstance(value, ast.Call) else None
            parameter = isinstance(func, (ast.Name, ast.Attribute)) and \
                (func.id if isinstance(func, ast.Name) else func.attr).endswith("Parameter")
            for target in targets:
                found = {sub.attr for sub in ast.walk(target) if isinstance(sub, ast.Attribute)
                         and isinstance(sub.value, ast.Name) and sub.value.id == "self"}
                names.update(found)
                if parameter:
                    tensors.update(found)
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func, args = node.func, node.args
            if isinstance(func, ast.Name) and func.id == "setattr" and len(args) >= 2 \
                    and isinstance(args[0], ast.Name) and args[0].id == "self":
                args = args[1:]
            elif not (isinstance(func, ast.Attribute) and func.attr in REGISTERING_CALLS):
                continue
            if isinstance(args[0], ast.Constant) and isinstance(args[0].value, str):
                names.add(args[0].value)
                if isinstance(func, ast.Attribute):
                    tensors.add(args[0].value)
    public = {name for name in names if not name.startswith("_")}
    return public, tensors & public


def read_attributes(cls: type, stop: tuple[type, ...], method: str) -> set[str]:
    """The attributes of `self` that `method` of `cls` reads (``self.NAME`` loaded), with the methods of the class
    (and of its bases up to the classes `stop`) it calls on `self`, read from their source: what a layer's
    forward or construct looks at when it runs."""
    import ast

    methods: dict[str, ast.FunctionDef] = {}
    for tree in reversed(class_sources(cls, stop)):  # a subclass's method wins over its base's
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        methods.update((node.name, node) for node in body if isinstance(node, ast.FunctionDef))
    read: set[str] = set()
    todo, seen = [method], set()
    while todo:
        name = todo.pop()
        if name in seen or name not in methods:
            continue
        seen.add(name)
        for node in ast.walk(methods[name]):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" \
                    and isinstance(node.ctx, ast.Load):
                read.add(node.attr)
                todo.append(node.attr)  # a method it calls (or a property): read too
    return read


def attribute_facts(torch_attrs: set[str], ms_attrs: set[str], params: Iterable[dict[str, Any]],
                    tensors: set[str]) -> dict[str, str | None]:
    """torch's attribute -> the MindSpore class's name for it (a constructor parameter the target's facts rename
    and the class stores under its own name: ``groups`` -> ``group``) or None (the class has no such attribute),
    for the attributes the class does not have under torch's name; the layers' `tensors` (either side's names)
    are left to the weight facts."""
    renames = {str(p["torch"]): str(p["ms"]) for p in params
               if p.get("torch") and p.get("ms") and p["torch"] != p["ms"]}
    out: dict[str, str | None] = {}
    for name in sorted(torch_attrs - ms_attrs - tensors):
        renamed = renames.get(name)
        out[name] = renamed if renamed is not None and renamed in ms_attrs and renamed not in torch_attrs \
            and renamed not in tensors else None
    return out


def _constructor(text: str) -> str | None:
    """The layer's construction in an example (``torch.nn.Conv2d(3, 8, 3)`` of ``torch.nn.Conv2d(3, 8, 3)(x)``)."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Call):
        node = node.func
    return ast.unparse(node) if isinstance(node, ast.Call) else None


def _plain(value: Any) -> Any:
    """A value an attribute comparison can show: a number, bool, string, None, or a tuple of them (a list as a
    tuple); anything else is `_OTHER`."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (tuple, list)) and all(v is None or isinstance(v, (bool, int, float, str)) for v in value):
        return tuple(value)
    return _OTHER


_OTHER = object()


def _same(a: Any, b: Any) -> bool:
    """Equal values, floats up to rounding (MindSpore's BatchNorm keeps 1 - its momentum: 0.09999999999999998)."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1.0)
    return bool(a == b) and type(a) is type(b)


def differing_attributes(entry: dict[str, Any], ms_api: str, names: set[str]) -> dict[str, str]:
    """torch's attributes of `names` (held by the same name on both sides) whose values differ, measured: the
    layer built as an example of the entry builds it in torch and as `ms_api` in MindSpore (the first such
    example), each attribute read on both (``momentum``: torch 0.1, MindSpore 0.9, the weight of the old running
    value; ``padding``: torch (0, 0), MindSpore 0)."""
    import mindspore
    import torch

    for example in entry.get("examples", ()):
        torch_text, ms_text = _constructor(str(example.get("torch", ""))), _constructor(str(example.get("mindspore", "")))
        if torch_text is None or ms_text is None or not torch_text.startswith(entry["api"] + "(") \
                or not ms_text.startswith(ms_api + "("):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch_layer = eval(torch_text, {"torch": torch})  # noqa: S307 - the tables' own example
                ms_layer = eval(ms_text, {"mindspore": mindspore})  # noqa: S307 - the tables' own example
        except Exception:  # noqa: BLE001 - an example that needs inputs or another device: not measured
            continue
        out: dict[str, str] = {}
        for name in sorted(names):
            torch_value = _plain(getattr(torch_layer, name, _OTHER))
            ms_value = _plain(getattr(ms_layer, name, _OTHER))
            if torch_value is _OTHER or ms_value is _OTHER or _same(torch_value, ms_value):
                continue
            out[name] = f"torch {torch_value!r}, MindSpore {ms_value!r} for {torch_text}"
        return out
    return {}


def add_attributes(entries: dict[str, dict[str, Any]]) -> None:
    """Give each torch.nn layer's target that is a MindSpore Cell class the attributes it names otherwise or lacks
    (`attributes: {groups: group, padding_mode: null}`; see `attribute_facts`). The class's attributes are those its
    methods set (`set_attributes`) and its members (`dir`); torch's those its methods set. Layers or targets that
    cannot be imported are left as they are."""
    import importlib

    import mindspore
    import torch
    import yaml

    meta = yaml.safe_load((MAPPINGS / "meta.yaml").read_text(encoding="utf-8"))
    layer_tensors = set(meta.get("layer_tensor_attributes", ()))
    for entry, cls in torch_layers(entries):
        torch_attrs, torch_tensors = set_attributes(cls, (torch.nn.Module,))
        for target in entry.get("ms", ()):
            target.pop("attributes", None)
            module, _, leaf = str(target["api"]).rpartition(".")
            try:
                ms_cls = getattr(importlib.import_module(module), leaf, None)
            except ImportError:
                continue
            if not isinstance(ms_cls, type) or not issubclass(ms_cls, mindspore.nn.Cell):
                continue
            ms_attrs, ms_tensors = set_attributes(ms_cls, (mindspore.nn.Cell,))
            ms_attrs |= {n for n in dir(ms_cls) if not n.startswith("_")}
            tensors = layer_tensors | torch_tensors | ms_tensors | {
                str(name) for form in entry.get("weights", ()) for p in form["params"]
                for name in (p.get("torch"), p.get("ms")) if name}
            facts = attribute_facts(torch_attrs, ms_attrs, target.get("params", ()), tensors)
            if facts:
                target["attributes"] = facts
            target.pop("differing_attributes", None)
            differing = differing_attributes(entry, str(target["api"]), (torch_attrs & ms_attrs) - tensors - set(facts))
            if differing:
                target["differing_attributes"] = differing
            # torch's attributes its forward reads that the class holds under the same name and its construct never
            # reads (kept in a primitive it built): setting one after the layer is built changes nothing
            target.pop("built_attributes", None)
            torch_reads = read_attributes(cls, (torch.nn.Module,), "forward")
            ms_reads = read_attributes(ms_cls, (mindspore.nn.Cell,), "construct")
            built = sorted((torch_attrs & ms_attrs & torch_reads) - ms_reads - tensors - set(facts))
            if built:
                target["built_attributes"] = built


def refresh_attributes() -> None:
    """Rewrite only the `attributes` of the committed tables' layer targets (nothing else is re-run)."""
    refresh_committed(add_attributes, "attribute facts")


def _is_member(api: str) -> bool:
    """A member of a class (torch.Tensor.sum, mindspore.nn.Cell.cells_and_names), not a module's function."""
    return any(part[:1].isupper() for part in api.split(".")[:-1])


def refresh_keyword_moves() -> None:
    """Rewrite only the `by_keyword` marks of the committed tables' facts (nothing else is re-run)."""
    refresh_committed(add_keyword_moves, "keyword moves")


def documented_default_from(obj: Any, param: str) -> str | None:
    """The other parameter whose value torch's docstring gives as `param`'s default ("stride: ... Default
    value is :attr:`kernel_size`"), read from the parameter's own entry of the Args list; None if none.
    A functional form's docstring may send the reader to its class (see :class:`~torch.nn.AvgPool1d`)."""
    doc = getattr(obj, "__doc__", None) or ""
    entry = re.search(rf"^\s*{re.escape(param)}\b[^\n:]*:(?P<text>.*(?:\n(?!\s*\w+\s*(?:\([^)]*\))?\s*:).*)*)",
                      doc, re.M)
    if entry is None:
        return None
    found = re.search(r"Default(?: value is)?:?\s*:attr:`(\w+)`", entry.group("text"))
    return found.group(1) if found else None


DEVICE_ORDER = ("cpu", "gpu", "ascend")


def annotate_devices(entries: Iterable[dict[str, Any]], record: Any = None) -> None:
    """Give every target the devices MindSpore runs it on (`devices`) and those where `torch2ms verify`
    ran it as the fix writes it with every case agreeing (`verified`).

    `devices` are the platforms MindSpore's documentation lists for the target (none: not stated),
    corrected by what the verification record measured (MindSpore documents many mint ops for Ascend
    only that run on the CPU too, and some Tensor methods the other way round): a device where the form
    ran is added, one where it found no kernel is removed and listed in `no_kernel`. A target an
    overrides file gives `devices` keeps them. `record`: the verification record or None.
    """
    known: dict[str, list[str] | None] = {}
    for entry in entries:
        runs = record.entries.get(entry["api"], {}) if record is not None else {}
        for target in entry.get("ms", ()):
            api = target["api"]
            measured = {device: form.runs for device, run in runs.items() for form in run.forms
                        if form.form == api and form.runs is not None}
            if "devices" not in target:
                if api not in known:
                    obj = resolve(api)
                    known[api] = documented_devices(obj) if obj is not None else None
                if known[api]:  # documented: the measured devices correct the documentation
                    devices = (set(known[api] or ()) | {d for d, ran in measured.items() if ran}) - \
                        {d for d, ran in measured.items() if not ran}
                    target["devices"] = [d for d in DEVICE_ORDER if d in devices]
            no_kernel = [d for d in DEVICE_ORDER if measured.get(d) is False]
            if no_kernel:
                target["no_kernel"] = no_kernel
            verified = [device for device, run in runs.items()
                        if any(f.form == api and f.status == "passed" for f in run.forms)]
            if verified:
                target["verified"] = [d for d in DEVICE_ORDER if d in verified]


# Tags of generated verify cases (torch2ms/verify/generate.py) whose disagreements become facts of the
# form by themselves: what the inputs are, not how the call is written. A difference on any other tag
# (the example, other seeds, keyword/positional/default forms, other arguments) needs a person: a
# parameter fact, another target or category, or a fix.
INPUT_TAGS = {"0-d": "0-d input", "empty": "empty input", "noncontiguous": "non-contiguous input",
              "broadcast": "broadcast inputs", "grad": "the gradient", "zeros": "inputs with zeros"}
LOUD_ONLY_TAGS = {"larger": "other input sizes", "batched": "an extra leading dimension",
                  "dim<0": "a negative dim", "dim=tuple": "a tuple of dims", "keepdim": "keepdim=True"}
RAISED = "the MindSpore code raised "


FACTS = Path(__file__).resolve().parent / "mapping_facts.yaml"


def apply_fact_amendments(entries: dict[str, dict[str, Any]], path: Path = FACTS, again: bool = False,
                          only: set[str] | None = None) -> None:
    """Add the facts of scripts/mapping_facts.yaml to the targets they name (what `torch2ms verify`
    showed and the build cannot derive), remove facts a registered translation of the fix replaces,
    set categories, drop targets that are not forms of the API. An amendment that names an entry, a
    target or a fact the tables lack is an error, unless `again` (the committed tables, which hold the
    amendments already: a target dropped or replaced by a later step, a fact already removed)."""
    import yaml

    doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    for amendment in doc.get("facts", []):
        api = amendment["api"]
        if only is not None and api not in only:
            continue
        entry = entries.get(api)
        if entry is None:
            raise SystemExit(f"{path.name}: {api} is not an entry of the tables")
        target = next((t for t in entry.get("ms", ()) if t["api"] == amendment["target"]), None)
        if target is None and again:
            continue  # dropped, or replaced by a later step (an in-place method's copy form): the full build checks it
        if target is None:
            raise SystemExit(f"{path.name}: {api} has no target {amendment['target']}")
        entry.update(amendment.get("entry") or {})
        for example in entry.get("examples", ()):
            example.update(amendment.get("example") or {})
        for example in amendment.get("examples", ()):  # more call forms for `torch2ms verify` to run
            same = next((e for e in entry.setdefault("examples", []) if e["torch"] == example["torch"]), None)
            if same is not None:
                same.update(example)  # the same call: its MindSpore text as the fix now writes it
            else:
                entry["examples"].append(dict(example))
        if amendment.get("drop"):
            entry["ms"] = [t for t in entry["ms"] if t is not target]
            if not entry["ms"]:
                entry["category"] = "missing"
                for key in ("ms", "examples"):
                    entry.pop(key, None)
                if (amendment.get("entry") or {}).get("note"):
                    entry.setdefault("effort", "manual")  # the amendment's note names the workaround
                else:
                    entry["note"], entry["effort"] = missing_fact(api)
            continue
        facts = target.setdefault("params", [])
        for gone in amendment.get("remove", ()):  # a fact matches when it has every key-value given
            kept = [f for f in facts if not all(f.get(k) == v for k, v in gone.items())]
            if len(kept) == len(facts) and not again:
                raise SystemExit(f"{path.name}: {api} {target['api']} has no fact {gone}")
            facts[:] = kept
        for fact in amendment.get("params", ()):
            if again and any(f == {**fact, **{k: v for k, v in f.items() if k in GIVEN_BY_STEPS}} for f in facts):
                continue  # already there, with the keys later steps give it (its position)
            if fact not in facts:
                facts.append(dict(fact))
        if not facts:
            target.pop("params")
        if amendment.get("params") and entry.get("category") == "equivalent":
            if target is entry["ms"][0]:
                entry["category"] = "diff_params"
                for other in entry["ms"][1:]:
                    other.setdefault("category", "equivalent" if not other.get("params") else "diff_params")
            else:
                target["category"] = "diff_params"
        if "category" in amendment:
            target["category"] = amendment["category"]
        for key in ("devices", "no_kernel"):  # measured by hand where the record has no run of the form
            if key in amendment:
                target[key] = list(amendment[key])


def refresh_record(apis: list[str]) -> None:
    """Give only the targets of the entries `apis` the devices, kernels and `verified` the verification record
    says (after `torch2ms verify --write-record` re-verified them; nothing else is re-run)."""
    def step(entries: dict[str, dict[str, Any]]) -> None:
        missing = [api for api in apis if api not in entries]
        if missing:
            raise SystemExit(f"not entries of the tables: {', '.join(missing)}")
        for api in apis:  # as a full build starts: no target verified before the record says so
            for target in entries[api].get("ms", ()):
                target.pop("verified", None)
        annotate_devices([entries[api] for api in apis], read_verification())

    refresh_committed(step, "devices")


# The keys of a parameter fact that build steps after the amendments write (add_positions, add_keyword_moves).
GIVEN_BY_STEPS = ("position", "default_from", "from_position", "by_keyword")


def refresh_facts(apis: list[str]) -> None:
    """Apply only the amendments of scripts/mapping_facts.yaml for the entries `apis` to the committed tables,
    and give those entries' facts their positions (nothing else is re-run, no other entry touched)."""
    def step(entries: dict[str, dict[str, Any]]) -> None:
        missing = [api for api in apis if api not in entries]
        if missing:
            raise SystemExit(f"not entries of the tables: {', '.join(missing)}")
        chosen = {api: entries[api] for api in apis}
        apply_fact_amendments(chosen, again=True, only=set(apis))
        add_positions(chosen)

    refresh_committed(step, "facts")


def _is_inplace_api(api: str, entries: dict[str, dict[str, Any]]) -> bool:
    """An in-place torch API: a Tensor method whose name ends in one underscore, or such a function
    whose out-of-place counterpart (the name without it) is an entry too."""
    ns, _, last = api.rpartition(".")
    if not last.endswith("_") or last.endswith("__"):
        return False
    return ns == "torch.Tensor" or f"{ns}.{last[:-1]}" in entries


# In-place methods whose copy `torch2ms verify` measured wrong on every case (kept here: once the entry
# falls back to its in-place form, the record no longer holds the copy's run).
NOT_COPIED = {
    "torch.Tensor.addmm_": "x.addmm_(m, x) reads x while torch writes it: no case agreed",
    "torch.Tensor.bernoulli_": "bernoulli_ takes p, Tensor.bernoulli draws with the receiver's values",
}


def inplace_forms(entries: dict[str, dict[str, Any]], record: Any = None, device: str = "cpu") -> None:
    """What an in-place API is written as. A Tensor method whose base (the name without the underscore)
    has an out-of-place form is written by the fix as a copy of that form's result into its receiver
    (`x.abs_()` -> `x.copy_(x.abs())`, torch2ms.transforms.fixer's `_inplace_fix`): MindSpore 2.10's in-place
    methods leave the receiver unchanged on CPU, and an out-of-place rewrite alone would drop the update.
    Its targets become the base's out-of-place forms, marked `written_as: copy`, where `torch2ms verify`
    can run the copy (the entry has an example) and did not find it wrong on every case (`NOT_COPIED`,
    or the record). Otherwise only in-place MindSpore forms are kept; without one the entry is missing,
    and its note says to assign the out-of-place result."""
    for api, entry in entries.items():
        if not _is_inplace_api(api, entries):
            continue
        base = entries.get(entry.get("inplace_of") or api[:-1])
        forms = [t for t in (base or {}).get("ms", ()) if not t["api"].rpartition(".")[2].endswith("_")] \
            if api.startswith("torch.Tensor.") and base is not None and base.get("category") != "missing" \
            and entry.get("examples") and api not in NOT_COPIED else []
        run = record.entries.get(api, {}).get(device) if record is not None else None
        # a copy that agreed on no case does not compute torch's update; other disagreements become
        # facts (derive_case_facts)
        failed = {f.form for f in run.forms if f.status == "error" or f.status == "failed" and f.count("cases")
                  and not f.count("agreed")} if run is not None else set()
        forms = [t for t in forms if t["api"] not in failed]
        if forms:
            assert base is not None  # forms come from the base's targets
            # deep copies: the facts get the in-place method's positions, not the base's (add_positions)
            entry["ms"] = [{**{k: copy.deepcopy(v) for k, v in t.items() if k != "verified"}, "written_as": "copy"}
                           for t in forms]
            for example in entry.get("examples", ()):
                example["mindspore"] = _copy_example(example["torch"], forms[0]["api"])
            entry["category"] = base["category"]
            entry["inplace_of"] = base["api"]
            entry.pop("effort", None)
            entry["note"] = (f"written as a copy of {forms[0]['api']}'s result into the receiver (x.copy_(...)): "
                             "MindSpore 2.10's in-place methods leave the receiver unchanged on CPU")
            continue
        if entry.get("category") == "missing" or "ms" not in entry:
            continue
        kept = [t for t in entry["ms"] if t["api"].rpartition(".")[2].endswith("_")]
        if len(kept) == len(entry["ms"]):
            continue
        if kept:
            entry["ms"] = kept
            continue
        entry["category"] = "missing"
        entry["note"], entry["effort"] = missing_fact(api)
        for key in ("ms", "examples"):
            entry.pop(key, None)


def _copy_example(torch_code: str, form: str) -> str:
    """The text the fix writes for an in-place example `R.op_(args)`: `R.copy_(R.op(args))`, or
    `R.copy_(mindspore.ops.op(R, args))` for a function form (documentation; verify runs the fix itself)."""
    found = re.fullmatch(r"(\w+)\.(\w+)_\((.*)\)", torch_code.strip())
    if found is None:
        return torch_code
    receiver, name, args = found.groups()
    if form.startswith("mindspore.Tensor."):
        return f"{receiver}.copy_({receiver}.{form.rpartition('.')[2]}({args}))"
    return f"{receiver}.copy_({form}({receiver}{', ' + args if args else ''}))"


def clip_words(text: str, width: int = 120) -> str:
    """`text` cut to fewer than `width` characters at a word boundary, with an ellipsis when cut (a quoted
    MindSpore error is never cut mid-word; one of `width` characters or more always ends in the ellipsis)."""
    if len(text) < width:
        return text
    cut = text[:width - 1].rstrip()
    space = cut.rfind(" ")
    return (cut[:space] if space > width // 2 else cut).rstrip(" ,;:") + "…"


def _dtype_explains(why: str) -> bool:
    """Whether an integer dtype can explain a difference: a raise or a result dtype, not a value."""
    return why.startswith(RAISED) or "dtype differs" in why


def _tag_label(tag: str) -> str | None:
    if tag.startswith("dtype="):
        return f"{tag[6:]} input"
    if tag.startswith("ints="):
        return f"{tag[5:]} integer inputs"
    return INPUT_TAGS.get(tag) or LOUD_ONLY_TAGS.get(tag)


def derive_case_facts(entries: Iterable[dict[str, Any]], record: Any, device: str = "cpu") -> None:
    """Turn the verification record's disagreements on input variants into facts of the form that ran:
    MindSpore raising where torch computes (`unsupported_inputs`: the program stops, the fix stays
    safe) and other results (`semantics_differ`: the fix becomes unsafe), each with the case tags it
    covers, so `torch2ms verify` counts those cases as stated and the scanner names the difference.
    A form that gains a fact is diff_params."""
    if record is None:
        return
    for entry in entries:
        run = record.entries.get(entry["api"], {}).get(device)
        if run is None:
            continue
        for target in entry.get("ms", ()):
            form = next((f for f in run.forms if f.form == target["api"]), None)
            if form is None or not form.differences:
                continue
            loud: dict[str, str] = {}
            silent: dict[str, str] = {}
            # Where the example itself (or the call written another way) disagrees, the variants'
            # differences most likely have the same cause: a person decides, no fact is derived.
            # (an optional parameter passed at another value, `opt=NAME`, is call-level too: its fact names
            # the parameter, written in scripts/mapping_facts.yaml, so that the fix leaves such a call alone;
            # a difference such a written fact explains does not hide the others)
            # the tags a written fact (scripts/mapping_facts.yaml) already explains
            stated = {t for f in target.get("params", ()) for t in f.get("covers", ())}
            call_level = any(_tag_label(t) is None and t != "inplace" and t not in stated for t in form.differences)
            # a variant that is also another dtype (the integer "zeros" case is tagged zeros and dtype=int32)
            # and fails for the same reason as that dtype is explained by the dtype: no fact of its own. Only
            # a raise or a result dtype is explained so: the float "zeros" case shares the tag, and a value
            # difference (NaN from zero vectors) may be its own, so that claim is kept.
            by_dtype = {why for t, why in form.differences.items() if t.startswith("dtype=")}
            for tag, why in sorted(form.differences.items()):
                if call_level:
                    break
                label = _tag_label(tag)
                if label is None or tag in stated or (tag == "zeros" and why in by_dtype and _dtype_explains(why)):
                    continue
                if why.startswith(RAISED):
                    loud[tag] = why[len(RAISED):]
                elif tag not in LOUD_ONLY_TAGS:
                    silent[tag] = why
            facts = target.setdefault("params", [])
            receiver = next((why for why in form.differences.values()
                             if "the receiver after the in-place call" in why or "returns its receiver" in why), None)
            if receiver is not None and "inplace" in form.differences and target.get("written_as") != "copy":
                what = ("returns a new tensor, not its receiver" if "returns its receiver" in receiver
                        else "leaves its receiver unchanged (only the returned tensor holds the result)")
                facts.append({"kind": "semantics_differ", "covers": ["inplace"],
                              "note": f"on {device.upper()}, MindSpore {record.mindspore_version}'s "
                                      f"{target['api'].rpartition('.')[2]} {what}: assign the result"})
                loud.clear()
                silent.clear()
            if loud:
                first = next(iter(loud.values())).split(";")[0]
                # a crash's reason ends with the worker's log (process ids, times): not a fact
                first = clip_words(re.sub(r"(worker crashed \((?:killed by signal \w+|exit code -?\d+)): .*", r"\1)", first))
                facts.append({"kind": "unsupported_inputs", "covers": sorted(loud),
                              "note": f"MindSpore raises for {', '.join(_tag_label(t) or t for t in sorted(loud))} "
                                      f"(e.g. {first})"})
            if silent:
                parts = [f"{_tag_label(t)}: {why.split(' (max abs err')[0][:100]}" for t, why in sorted(silent.items())]
                facts.append({"kind": "semantics_differ", "covers": sorted(silent),
                              "note": "results differ for " + "; ".join(parts)})
            if facts and (loud or silent or receiver is not None):
                if target is entry["ms"][0] and entry.get("category") == "equivalent":
                    entry["category"] = "diff_params"
                    for other in entry["ms"][1:]:
                        other.setdefault("category", "equivalent" if not other.get("params") else "diff_params")
                else:
                    target["category"] = "diff_params"
            if not facts:
                target.pop("params", None)


def read_verification() -> Any:
    """The committed verification record, or None (with a note) when there is none. A record that is
    present but cannot be read (merge-conflict markers, a truncated write) stops the build: the tables
    would silently lose every fact and verified device it gives."""
    from torch2ms.verify.record import RecordError, read_record

    path = MAPPINGS / "verification.json"
    if not path.exists():
        print("no verification record used: src/torch2ms/data/verification.json does not exist", file=sys.stderr)
        return None
    try:
        return read_record(path)
    except RecordError as exc:
        raise SystemExit(f"src/torch2ms/data/verification.json cannot be read ({exc}); repair it or run "
                         "`torch2ms verify --all --write-record` before building the tables") from None


# A target's keys in one order, whichever build step wrote them last: a full build and a one-step refresh write
# the same text (the order of a dict's keys otherwise follows the steps that ran).
TARGET_KEY_ORDER = ["api", "since", "until", "category", "written_as", "params", "rewrite", "forward",
                    "forward_defaults", "attributes", "built_attributes", "devices", "no_kernel", "verified"]


def _target_keys(target: dict[str, Any]) -> dict[str, Any]:
    order = TARGET_KEY_ORDER + sorted(k for k in target if k not in TARGET_KEY_ORDER)
    return {k: target[k] for k in order if k in target}


def _entry_lines(entry: dict[str, Any]) -> list[str]:
    """One entry as YAML lines: keys in KEY_ORDER (then the others, sorted), one flow-style value each;
    targets (keys in TARGET_KEY_ORDER), examples and weight forms one per line."""
    lines: list[str] = []
    for key in KEY_ORDER + sorted(k for k in entry if k not in KEY_ORDER):
        if key not in entry:
            continue
        prefix = "    " if lines else "  - "
        if key in ("ms", "examples", "weights"):
            lines.append(f"{prefix}{key}:")
            lines.extend(f"      - {_flow(_target_keys(item) if key == 'ms' else item)}" for item in entry[key])
        else:
            lines.append(f"{prefix}{key}: {_flow(entry[key])}")
    return lines


def write_files(entries: dict[str, dict[str, Any]]) -> None:
    files = NAMESPACES + EXTRA_FILES
    by_file: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for api in sorted(entries):
        by_file[namespace_of(api, files)].append(entries[api])
    for old in MAPPINGS.glob("torch*.yaml"):
        if old.stem not in by_file and old.stem not in LIBRARIES:  # library files: write_library_files
            old.unlink()
    for ns, items in by_file.items():
        lines = ["# Generated by scripts/build_tables.py from the reference tables and the installed",
                 "# torch / MindSpore; hand-written facts come from scripts/mapping_overrides.yaml.",
                 f"namespace: {ns}", "entries:"]
        for entry in items:
            lines.extend(_entry_lines(entry))
        (MAPPINGS / f"{ns}.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    if len(sys.argv) >= 2 and sys.argv[1] == "--worker":
        _worker(sys.argv[2], sys.argv[3])
        return
    # one build step alone on the committed tables (nothing else is re-run)
    steps = {"--weights-only": refresh_weight_facts, "--rewrites-only": refresh_rewrites,
             "--keywords-only": refresh_keyword_moves, "--structure-only": refresh_structure,
             "--dynamic-only": refresh_dynamic, "--forward-only": refresh_forward_keywords,
             "--adapters-only": refresh_adapters, "--libraries-only": write_hand_libraries,
             "--attributes-only": refresh_attributes}
    if len(sys.argv) == 2 and sys.argv[1] in steps:
        steps[sys.argv[1]]()
        return
    if len(sys.argv) > 2 and sys.argv[1] == "--facts-only":  # the amendments of the entries named
        refresh_facts(sys.argv[2:])
        return
    if len(sys.argv) > 2 and sys.argv[1] == "--record-only":  # the record's devices of the entries named
        refresh_record(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reference", type=Path, help="folder with the reference CSV files")
    parser.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2)))
    parser.add_argument("--cache", type=Path, default=None, help="JSON-lines cache of example results")
    parser.add_argument("--only", default=None, help="debug: only APIs starting with this prefix (writes nothing)")
    parser.add_argument("--report", type=Path, default=None, help="write unconfirmed/failed APIs here")
    args = parser.parse_args()
    if not (args.reference / "pytorch_ms_api_mapping.csv").exists():
        parser.error(f"{args.reference}: no pytorch_ms_api_mapping.csv there")
    build(args.reference, args.jobs, args.cache, args.report, args.only)
    if not args.only:
        write_library_files(args.reference)
        write_hand_libraries()


if __name__ == "__main__":
    main()
