"""The package's layers (docs/architecture.md, "Layers"): every module is in one, and imports point down.

The table is read from the documentation, so the document and the code cannot drift apart. Imports
are read with ast, at module level and inside functions alike (a lazy import is still a dependency).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "src" / "torch2ms"
DOC = ROOT / "docs" / "architecture.md"


def layers() -> dict[str, tuple[int, str]]:
    """Name (a module or package, relative to torch2ms) -> (layer number, layer name)."""
    block = re.search(r"^```layers\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.S | re.M)
    assert block, "docs/architecture.md has no ```layers table"
    table: dict[str, tuple[int, str]] = {}
    for line in block.group(1).splitlines():
        number, name, *members = line.split()
        for member in members:
            assert member not in table, f"{member} is in two layers"
            table[member] = (int(number), name)
    return table


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def layer_of(module: str, table: dict[str, tuple[int, str]]) -> tuple[int, str] | None:
    parts = module.split(".")
    for size in range(len(parts), 0, -1):
        found = table.get(".".join(parts[:size]))
        if found is not None:
            return found
    return None


def imported(path: Path) -> list[tuple[int, str]]:
    """(line, module relative to torch2ms) for each import of a torch2ms module in the file."""
    module = module_name(path)
    package = module.split(".") if path.name == "__init__.py" and module != "__init__" else module.split(".")[:-1]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name[len("torch2ms."):]) for a in node.names if a.name.startswith("torch2ms.")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
            elif node.module and (node.module == "torch2ms" or node.module.startswith("torch2ms.")):
                base = []
                if node.module != "torch2ms":
                    base = node.module.split(".")[1:]
            else:
                continue
            if node.level and node.module:
                base = base + node.module.split(".")
            for alias in node.names:  # `from . import x` / `from .pkg import module` name modules
                candidate = [*base, alias.name]
                is_module = (PACKAGE.joinpath(*candidate).with_suffix(".py").exists()
                             or PACKAGE.joinpath(*candidate, "__init__.py").exists())
                target = ".".join(candidate if is_module else base) or "__init__"
                found.append((node.lineno, target))
    return found


def test_the_layer_table_names_every_module_once() -> None:
    table = layers()
    unplaced = [module_name(p) for p in sorted(PACKAGE.rglob("*.py")) if layer_of(module_name(p), table) is None]
    assert unplaced == [], f"modules in no layer of docs/architecture.md: {unplaced}"
    stale = [name for name in table if not (PACKAGE.joinpath(*name.split(".")).with_suffix(".py").exists()
                                            or PACKAGE.joinpath(*name.split(".")).is_dir()
                                            or name == "__init__")]
    assert stale == [], f"names in the layer table that are no module: {stale}"


def test_imports_point_down() -> None:
    table = layers()
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(path)
        own = layer_of(module, table)
        assert own is not None
        for line, target in imported(path):
            theirs = layer_of(target, table)
            assert theirs is not None, f"{module}:{line} imports {target}, which is in no layer"
            if theirs[0] > own[0]:
                upward.append(f"{path.relative_to(ROOT)}:{line}: {module} ({own[1]}) imports {target} ({theirs[1]})")
    assert upward == [], "imports pointing up a layer:\n" + "\n".join(upward)


def test_the_reader_sees_relative_absolute_and_function_level_imports() -> None:
    """Else the test above could pass by seeing nothing."""
    assert imported(PACKAGE / "strings.py") == []  # the lowest layer imports nothing of the package
    cli = {target for _, target in imported(PACKAGE / "cli.py")}
    assert {"lsp.server", "verify.convert_weights", "report.output", "migrate.command", "__init__"} <= cli  # in functions too
    report = {target for _, target in imported(PACKAGE / "report" / "json.py")}
    assert {"strings", "verify.record", "__init__"} <= report  # `from .. import __version__`, `from ..verify.record`
    table = layers()
    assert layer_of("report.text", table) == (4, "faces") and layer_of("weights.facts", table) == (1, "data")
    assert layer_of("weights.mapping", table) == (3, "products")
