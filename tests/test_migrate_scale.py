"""`migrate` of a whole tree: worker processes for every phase, progress through each, one file's failure
isolated, and a summary that adds up."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from torch2ms.migrate import files as migrate_files
from torch2ms.migrate.files import migrate_paths
from torch2ms.migrate.pipeline import Options

LAYERS = textwrap.dedent("""\
    import torch.nn as nn


    class Block(nn.Module):
        def __init__(self, width):
            super().__init__()
            self.fc = nn.Linear(width, width)

        def forward(self, x):
            return self.fc(x).relu()
""")

NET = textwrap.dedent("""\
    import torch.nn as nn
    from .layers import Block


    class Net{n}(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = Block(4)
            self.head = nn.Linear(4, 2)

        def forward(self, x):
            return self.head(self.body(x))
""")


def _tree(root: Path, nets: int) -> Path:
    package = root / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "layers.py").write_text(LAYERS)
    for n in range(nets):
        (package / f"net{n}.py").write_text(NET.format(n=n))
    return package


def _written(out: Path) -> dict[str, str]:
    """Every file under `out`, its text with `out` itself spelled OUT (the maps name the port's path)."""
    return {str(p.relative_to(out)): p.read_text().replace(str(out), "OUT")
            for p in sorted(out.rglob("*")) if p.is_file()}


def test_workers_write_what_one_process_writes(tmp_path: Path) -> None:
    package = _tree(tmp_path, 5)
    shown: list[tuple[int, int, str]] = []
    one = migrate_paths([str(package)], Options(), out=str(tmp_path / "one"), jobs=1)
    two = migrate_paths([str(package)], Options(), out=str(tmp_path / "two"), jobs=2,
                        on_each=lambda done, total, path: shown.append((done, total, path)))
    assert [o.error for o in one] == [None] * 7 and [o.error for o in two] == [None] * 7
    assert _written(tmp_path / "one") == _written(tmp_path / "two")
    assert any(name.endswith(".weights.json") for name in _written(tmp_path / "two"))  # maps made by the workers
    assert [o.cells for o in one] == [o.cells for o in two] and sum(o.cells for o in two) == 6
    # progress through the scan, the migrations and the maps, each counting to its total
    phases = {path.split(" ")[0] if " " in path else "migrating" for _, _, path in shown}
    assert phases == {"scanning", "migrating", "parameter-name"}
    assert [(d, t) for d, t, p in shown if p.startswith("scanning ")] == [(k, 7) for k in range(7)]
    assert sum(1 for _, _, p in shown if " " not in p) == 7


def test_an_internal_error_in_one_file_leaves_the_others_migrated(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    package = _tree(tmp_path, 2)
    real = migrate_files.migrate_text

    def failing(text: str, path: str, *args: object, **kwargs: object) -> object:
        if path.endswith("net0.py"):
            raise RecursionError("maximum recursion depth exceeded")  # what no rule expects
        return real(text, path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(migrate_files, "migrate_text", failing)
    outcomes = migrate_paths([str(package)], Options(), out=str(tmp_path / "out"), jobs=1)
    errors = {Path(o.source).name: o.error for o in outcomes if o.error}
    assert list(errors) == ["net0.py"]
    assert "internal error while migrating (RecursionError" in errors["net0.py"]
    assert str(package / "net0.py") in errors["net0.py"]
    assert not (tmp_path / "out" / "net0.py").exists()
    assert "class Net1(mindspore.nn.Cell)" in (tmp_path / "out" / "net1.py").read_text()
    assert sum(1 for o in outcomes if o.written) == len(outcomes) - 1
