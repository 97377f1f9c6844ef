"""The fast lane's promise (`./run test --fast`: no torch, no MindSpore, no NumPy): a test that imports one
of them is marked for it, on the test or on its module, so that the fast lane leaves it out."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import EXTRA_OF_MARKER

TESTS = Path(__file__).resolve().parent
MARKER_OF_MODULE = {module: marker for marker, (module, _extra) in EXTRA_OF_MARKER.items()}


def _imported_libraries(node: ast.AST) -> set[str]:
    found = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Import):
            found |= {a.name.partition(".")[0] for a in sub.names}
        elif isinstance(sub, ast.ImportFrom) and sub.module and not sub.level:
            found.add(sub.module.partition(".")[0])
    return found & set(MARKER_OF_MODULE)


def _markers(node: ast.AST) -> set[str]:
    return {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and n.attr in EXTRA_OF_MARKER}


def unmarked(path: Path) -> list[str]:
    """`test_name: library` for each test function of the file that imports a library its markers miss."""
    tree = ast.parse(path.read_bytes())
    module_marks: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            module_marks |= _markers(node.value)
    top = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            top |= _imported_libraries(node)
    missing = [f"(module): {lib}" for lib in sorted(top) if MARKER_OF_MODULE[lib] not in module_marks]
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_"):
            marks = module_marks | set().union(*(_markers(d) for d in node.decorator_list))
            missing += [f"{node.name}: {lib}" for lib in sorted(_imported_libraries(node))
                        if MARKER_OF_MODULE[lib] not in marks]
    return missing


def test_tests_that_import_torch_mindspore_or_numpy_are_marked() -> None:
    found = {path.name: unmarked(path) for path in sorted(TESTS.glob("test_*.py"))}
    assert {name: where for name, where in found.items() if where} == {}


def test_the_check_sees_an_unmarked_import(tmp_path: Path) -> None:
    sample = tmp_path / "test_sample.py"
    sample.write_text("import pytest\n\n\ndef test_a():\n    import torch\n\n\n@pytest.mark.needs_torch\n"
                      "def test_b():\n    import torch.nn\n\n\ndef test_c():\n    from mindspore import nn\n",
                      encoding="utf-8")
    assert unmarked(sample) == ["test_a: torch", "test_c: mindspore"]
