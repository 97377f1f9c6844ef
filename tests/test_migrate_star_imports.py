"""torch names that reach a file through a star import of another file of the migrated tree
(`torch2ms.migrate.star_imports`): written out after the star import, then rewritten like any other torch use;
the port runs without torch. The packages here are written the way many libraries split helpers and layers."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from torch2ms.cli import main
from torch2ms.migrate.star_imports import explicit_imports, insert

ACTS = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from torch.nn import functional as F
    import torch.nn.init as _init


    def gelu_tanh(x):
        return F.gelu(x, approximate="tanh")


    class Swish(nn.Module):
        def forward(self, x):
            return x * torch.sigmoid(x)
""")

SHAPES = textwrap.dedent("""\
    __all__ = ["Square"]
    from .acts import *


    class Square(nn.Module):
        def forward(self, x):
            return x * x
""")

BLOCKS = textwrap.dedent("""\
    from .acts import *
    from .shapes import *

    HAS_SILU = hasattr(torch.nn.functional, "silu")


    def make_act(name):
        if name == "silu" and HAS_SILU:
            return nn.SiLU()
        if name == "square":
            return Square()
        return Swish()


    def mixed(x):
        return F.relu(x) + torch.tanh(x)
""")


def _package(root: Path) -> Path:
    package = root / "blockkit"
    package.mkdir()
    (package / "__init__.py").write_text("from .blocks import make_act, mixed\n")
    (package / "acts.py").write_text(ACTS)
    (package / "shapes.py").write_text(SHAPES)
    (package / "blocks.py").write_text(BLOCKS)
    return package


def test_the_torch_imports_a_star_import_brings_are_written_after_it(tmp_path: Path) -> None:
    package = _package(tmp_path)
    files = [(str(package / name), (package / name).read_text()) for name in ("acts.py", "shapes.py", "blocks.py")]
    found = explicit_imports(files, ("torch",))
    # acts exports its public torch imports (not `_init`), to shapes and blocks; shapes lists only Square in
    # __all__: it passes none of them on
    brought = ("import torch", "import torch.nn as nn", "from torch.nn import functional as F")
    assert found == {1: {2: brought}, 2: {1: brought}}
    assert insert(BLOCKS, found[2]).startswith(
        "from .acts import *\nimport torch\nimport torch.nn as nn\nfrom torch.nn import functional as F\n"
        "from .shapes import *\n")


def test_uses_of_star_imported_torch_names_are_rewritten_and_no_torch_import_is_left(tmp_path: Path) -> None:
    package = _package(tmp_path)
    out = tmp_path / "out"
    assert main(["migrate", str(package), "--out", str(out / "blockkit"), "-q"]) == 0
    blocks = (out / "blockkit" / "blocks.py").read_text()
    assert "HAS_SILU = True" in blocks
    assert "return mindspore.mint.nn.SiLU()" in blocks
    assert "return mindspore.mint.nn.functional.relu(x) + mindspore.mint.tanh(x)" in blocks
    for path in (out / "blockkit").glob("*.py"):
        tree = ast.parse(path.read_text())
        assert not [n for n in ast.walk(tree) if isinstance(n, ast.Import) and any(a.name.startswith("torch")
                                                                                   for a in n.names)], path
        assert not [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and (n.module or "").startswith(
            "torch")], path


RUN = """
import json, sys
sys.modules["torch"] = None  # `import torch` fails here
sys.path.insert(0, sys.argv[1])
import numpy as np
import mindspore
import blockkit
x = mindspore.Tensor(np.array([-1.0, 0.5, 2.0], dtype=np.float32))
print(json.dumps({"mixed": blockkit.mixed(x).asnumpy().tolist(),
                  "square": blockkit.make_act("square")(x).asnumpy().tolist(),
                  "silu": type(blockkit.make_act("silu")).__name__}))
"""


@pytest.mark.needs_mindspore
@pytest.mark.needs_numpy
def test_the_ported_package_imports_and_runs_without_torch(tmp_path: Path) -> None:
    import json

    import numpy as np

    package = _package(tmp_path)
    out = tmp_path / "out"
    assert main(["migrate", str(package), "--out", str(out / "blockkit"), "-q"]) == 0
    done = subprocess.run([sys.executable, "-c", RUN, str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    values = json.loads(done.stdout.strip().splitlines()[-1])
    x = np.array([-1.0, 0.5, 2.0])
    assert np.allclose(values["mixed"], np.maximum(x, 0) + np.tanh(x), atol=1e-6)
    assert np.allclose(values["square"], x * x)
    assert values["silu"] == "SiLU"
