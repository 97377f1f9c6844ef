"""Arguments by binding and composed forms measured: small programs that use the APIs the binding issue names
(differing parameters, `functools.partial`, classes passed as values, APIs without a single CPU form), each
ported with `torch2ms migrate`, run in torch and in MindSpore on CPU (torch blocked) and compared.

    python benchmarks/binding_forms.py

Each case is one module with a `run()` function; its port is *same* (torch's values within rtol 1e-4,
atol 1e-5), *differs*, *raises*, or *torch kept* (the port still imports torch). The port's own scan is
printed beside it: its findings at warning or error level, so a case that fails silently shows as one
without them. Prints one line per case and a summary line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from torch2ms.config import Config  # noqa: E402
from torch2ms.engine import scan_source  # noqa: E402
from torch2ms.migrate.pipeline import migrate_text  # noqa: E402

HEADER = """
from functools import partial
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

X = np.random.RandomState(0).rand(4, 6).astype(np.float32) - 0.5
IMG = np.random.RandomState(1).rand(2, 3, 4, 4).astype(np.float32) * 2 + 1


def mean_of(layer):
    return layer.running_mean if hasattr(layer, "running_mean") else layer.moving_mean
"""

# name -> body of run(); each returns a tensor or a tuple of tensors
CASES: dict[str, str] = {
    "hinge_embedding_loss, reduction by position": """
        t = torch.tensor(np.sign(X))
        return torch.hinge_embedding_loss(torch.tensor(X), t, 0.5, 2)""",
    "BatchNorm1d(momentum=0.3), running mean after a step": """
        bn = nn.BatchNorm1d(6, momentum=0.3)
        bn(torch.tensor(X))
        return mean_of(bn)""",
    "partial(BatchNorm2d, momentum=0.01), running mean": """
        make = partial(nn.BatchNorm2d, momentum=0.01)
        bn = make(3)
        bn(torch.tensor(IMG))
        return mean_of(bn)""",
    "BatchNorm2d(momentum=attribute), running mean": """
        class Stem(nn.Module):
            def __init__(self, bn_mom):
                super().__init__()
                self.bn_mom = bn_mom
                self.bn = nn.BatchNorm2d(3, momentum=self.bn_mom)

            def forward(self, x):
                return self.bn(x)
        stem = Stem(0.2)
        stem.train()
        stem(torch.tensor(IMG))
        return mean_of(stem.bn)""",
    "partial(LayerNorm, eps=...) built later": """
        make = partial(nn.LayerNorm, eps=0.5)
        return make(6)(torch.tensor(X))""",
    "norm_layer / act_layer classes as values": """
        class Block(nn.Module):
            def __init__(self, dim, norm_layer=nn.LayerNorm, act_layer=nn.ReLU):
                super().__init__()
                self.norm = norm_layer(dim, eps=0.5)
                self.act = act_layer(inplace=True)

            def forward(self, x):
                return self.act(self.norm(x))
        return Block(6)(torch.tensor(X))""",
    "Tensor.aminmax() on a 2-D tensor": """
        lo, hi = torch.tensor(X).aminmax()
        return lo, hi""",
    "InstanceNorm1d": """
        return nn.InstanceNorm1d(4)(torch.tensor(X).reshape(1, 4, 6))""",
    "F.embedding(padding_idx=0)": """
        w = torch.tensor(X)
        return F.embedding(torch.tensor(np.array([[0, 2], [3, 1]])), w, padding_idx=0)""",
    "torch.linalg.vander": """
        return torch.linalg.vander(torch.tensor(X[0]))""",
    "cholesky_inverse(input=...)": """
        a = torch.tensor(np.array([[2.0, 0.0], [0.5, 1.5]], dtype=np.float32))
        return torch.cholesky_inverse(input=a)""",
    "torch.roll / Tensor.roll": """
        x = torch.tensor(X)
        return torch.roll(x, 1, 0), x.roll(-2), torch.roll(x, shifts=(1, 2), dims=(0, 1))""",
    "F.normalize": """
        x = torch.tensor(X)
        return F.normalize(x, dim=-1), F.normalize(x * 3, p=1.0, dim=0)""",
    "F.layer_norm": """
        x = torch.tensor(X)
        w = torch.tensor(np.linspace(0.5, 1.5, 6).astype(np.float32))
        return F.layer_norm(x, (6,)), F.layer_norm(x, [6], w, w, 1e-3)""",
    "nn.Unfold": """
        return nn.Unfold(2)(torch.tensor(IMG))""",
    "ReLU(inplace=True), F.relu(inplace=True)": """
        x = torch.tensor(X)
        y = nn.ReLU(inplace=True)(torch.tensor(X))
        F.relu(x, inplace=True)
        return x, y""",
    "Tensor.zero_ / Tensor.normal_": """
        z = torch.tensor(X)
        z.zero_()
        w = torch.tensor(np.zeros((200, 200), dtype=np.float32))
        w.normal_(0.0, 0.02)
        return z, torch.tensor(float(abs(float(w.std()) - 0.02) < 0.002))""",
}

RUNNER = """
import importlib, json, sys, traceback
import numpy as np
if sys.argv[2] == "mindspore":
    sys.modules["torch"] = None
sys.path.insert(0, sys.argv[1])
out = {}
for name in sys.argv[3:]:
    try:
        value = importlib.import_module(name).run()
        values = value if isinstance(value, (tuple, list)) else [value]
        flat = []
        for v in values:  # (MindSpore reports a missing kernel when the value is read)
            v = v.asnumpy() if hasattr(v, "asnumpy") else v.detach().numpy()
            flat.append(np.asarray(v, dtype=np.float64).ravel().tolist())
    except ImportError as exc:
        out[name] = {"error": "import", "detail": str(exc)}
        continue
    except Exception as exc:
        out[name] = {"error": "raise", "detail": f"{type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''}"}
        continue
    out[name] = {"values": flat}
print(json.dumps(out))
"""


def main() -> int:
    import numpy as np

    config = Config()
    with tempfile.TemporaryDirectory() as tmp:
        folders = {side: Path(tmp) / side for side in ("torch", "mindspore")}
        for folder in folders.values():
            folder.mkdir()
        modules, warnings = {}, {}
        for index, (name, body) in enumerate(CASES.items()):
            module = f"case_{index:02d}"
            source = HEADER + "\n\ndef run():\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"
            ported = migrate_text(source, f"{module}.py").text
            (folders["torch"] / f"{module}.py").write_text(source)
            (folders["mindspore"] / f"{module}.py").write_text(ported)
            scan = scan_source(ported, f"{module}.py", config)
            warnings[module] = sum(1 for d in scan.diagnostics if d.severity.value in ("warning", "error"))
            modules[module] = name
        results = {}
        for side, folder in folders.items():
            proc = subprocess.run([sys.executable, "-c", RUNNER, str(folder), side, *modules], capture_output=True,
                                  text=True, env=dict(os.environ, GLOG_v="3"), timeout=900)
            if proc.returncode != 0:
                print(proc.stderr[-2000:])
                return 2
            results[side] = json.loads(proc.stdout.strip().splitlines()[-1])
    same = 0
    print(f"{'case':55} {'after migrate':12} port findings (warning/error)")
    for module, name in modules.items():
        expected, got = results["torch"][module], results["mindspore"][module]
        if "error" in expected:
            verdict = f"torch raised: {expected['detail']}"
        elif got.get("error") == "import":
            verdict = "torch kept"
        elif "error" in got:
            verdict = "raises"
        elif len(got["values"]) == len(expected["values"]) and all(
                len(a) == len(b) and np.allclose(a, b, rtol=1e-4, atol=1e-5)
                for a, b in zip(expected["values"], got["values"])):
            verdict = "same"
            same += 1
        else:
            verdict = "differs"
        print(f"{name:55} {verdict:12} {warnings[module]}")
    print(f"{same} of {len(modules)} cases give torch's result after migrate on CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
