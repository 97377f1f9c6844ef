"""A small PyTorch project written into a temporary folder, for the report tests.

`make_project(root)` writes the files; `scan(root)` scans them with the real
scanner. `synthetic()` builds results by hand with every category (missing
included, whatever the mapping tables hold today) and a fix, plus the sources.
"""

from __future__ import annotations

from pathlib import Path

from torch2ms.api import scan_paths
from torch2ms.config import Config
from torch2ms.model import Category, Diagnostic, Edit, FileResult, Fix, Severity, Span

NET = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.fc = nn.Linear(8, 2)

    def forward(self, x):
        y = F.interpolate(x, scale_factor=2.0, mode="area")
        idx = torch.nonzero(y)
        return self.fc(self.conv(y).view(-1, 8)), idx
'''

TRAIN = '''\
import torch
from models.net import Net


def train(loader):
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, t in loader:
        loss = torch.nn.functional.cross_entropy(model(x)[0], t)
        opt.zero_grad()
        loss.backward()
        opt.step()
    torch.save(model.state_dict(), "m.pt")
'''

# Text that must not break the page: script end tags, comments, markup, entities, separators.
EVIL = '''\
import torch
s = "</script><script>alert(1)</script><!-- <b>bold</b> &amp; \\u2028"
t = torch.zeros(2)  # </script> <!-- --> <img src=x onerror=alert(2)>
u = t.view(-1)
\'\'\'</style></textarea>]]>\'\'\'
'''

BROKEN = "import torch\ndef broken(:\n    pass\n"

CLEAN = "def nothing():\n    return 1\n"


def make_project(root: Path) -> Path:
    (root / "models").mkdir(parents=True)
    (root / "data").mkdir()
    (root / "models" / "__init__.py").write_text("", encoding="utf-8")
    (root / "models" / "net.py").write_text(NET, encoding="utf-8")
    (root / "train.py").write_text(TRAIN, encoding="utf-8")
    (root / "data" / "evil.py").write_text(EVIL, encoding="utf-8")
    (root / "data" / "broken.py").write_text(BROKEN, encoding="utf-8")
    (root / "data" / "clean.py").write_text(CLEAN, encoding="utf-8")
    return root


def scan(root: Path) -> list[FileResult]:
    results = scan_paths([str(root)], Config())
    return sorted(results, key=lambda r: r.path)


def _diag(code: str, severity: Severity, category: Category, line: int, col: int, end: int, message: str,
          api: str | None, target: str | None = None, fix: Fix | None = None) -> Diagnostic:
    return Diagnostic(code=code, severity=severity, category=category, span=Span(line, col, line, end),
                      message=message, torch_api=api, mindspore_api=target, fix=fix,
                      doc_url="https://example.invalid/doc")


SYNTH_A = "import torch\nx = torch.ones(2)\ny = torch.special_thing(x)\nz = torch.special_thing(y)\n"
SYNTH_B = "import torch\nw = torch.ones(3)\nq = torch.nonzero(w)\n"


def synthetic() -> tuple[list[FileResult], dict[str, str]]:
    fix = Fix(title="Call mindspore.mint.ones", edits=(Edit(Span(2, 4, 2, 14), "mindspore.mint.ones"),))
    a = FileResult(path="pkg/a.py", lines=4, diagnostics=(
        _diag("TMS101", Severity.INFO, Category.EQUIVALENT, 2, 4, 17, "torch.ones -> mindspore.mint.ones",
              "torch.ones", "mindspore.mint.ones", fix),
        _diag("TMS103", Severity.ERROR, Category.MISSING, 3, 4, 26, "torch.special_thing has no equivalent",
              "torch.special_thing"),
        _diag("TMS103", Severity.ERROR, Category.MISSING, 4, 4, 26, "torch.special_thing has no equivalent",
              "torch.special_thing"),
    ))
    b = FileResult(path="pkg/sub/b.py", lines=3, diagnostics=(
        _diag("TMS101", Severity.INFO, Category.EQUIVALENT, 2, 4, 17, "torch.ones -> mindspore.mint.ones",
              "torch.ones", "mindspore.mint.ones"),
        _diag("TMS201", Severity.WARNING, Category.DYNAMIC_SHAPE, 3, 4, 20, "dynamic shape: torch.nonzero",
              "torch.nonzero", "mindspore.mint.nonzero"),
    ))
    c = FileResult(path="pkg/c.py", lines=0, diagnostics=(
        Diagnostic(code="TMS901", severity=Severity.ERROR, category=Category.FILE_ERROR, span=Span(1, 0, 1, 0),
                   message="syntax error: invalid syntax"),
    ))
    d = FileResult(path="pkg/d.py", lines=7)
    return [a, b, c, d], {"pkg/a.py": SYNTH_A, "pkg/sub/b.py": SYNTH_B, "pkg/c.py": "def (:\n"}


def large(files: int = 300, per_file: int = 30, big_lines: int = 20_000,
          apis: int = 450) -> tuple[list[FileResult], dict[str, str]]:
    """A big project built by hand: `files` files with `per_file` findings each over `apis` distinct
    (unmapped) torch APIs, plus one file of `big_lines` lines with a finding on every other line."""
    results: list[FileResult] = []
    sources: dict[str, str] = {}
    used = [0]  # findings so far: the next one uses API number used[0] % apis

    def file(path: str, count: int, lines: int, step: int) -> None:
        text_lines = ["import torch"]
        diags = []
        for n in range(2, lines + 1):
            if (n - 2) % step or len(diags) >= count:
                text_lines.append(f"w{n} = {n} * 2  # plain")
                continue
            api = f"torch.api_{used[0] % apis}"
            used[0] += 1
            text_lines.append(f"v{n} = {api}(x, {n})")
            diags.append(_diag("TMS104", Severity.WARNING, Category.UNMAPPED, n, 5, len(text_lines[n - 1]),
                               f"{api} is not in the mapping tables; check MindSpore's documentation by hand", api))
        results.append(FileResult(path=path, lines=len(text_lines), diagnostics=tuple(diags)))
        sources[path] = "\n".join(text_lines) + "\n"

    for index in range(files):
        file(f"big/pkg{index % 7}/mod{index:04d}.py", per_file, per_file * 3 + 1, 3)
    file("big/generated/huge.py", big_lines, big_lines, 2)
    return sorted(results, key=lambda r: r.path), sources
