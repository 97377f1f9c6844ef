"""The transforms registry (torch2ms.transforms) and the tables agree: every transform a table names is
registered, every registered one is named by some entry and changes the fix of one of those entries'
examples (which the fix and verify tests run), its module's docstring names the entries that use it, and
the core of the fixes chooses no rewrite by an API name."""

from __future__ import annotations

import ast
import importlib
import re
from collections import defaultdict
from pathlib import Path

import pytest

import torch2ms.transforms as transforms
from torch2ms.config import Config
from torch2ms.fix import fix_text
from torch2ms.mappings import load_table
from torch2ms.model import Example, MappingEntry
from torch2ms.transforms.base import REGISTRY

PACKAGE = Path(transforms.__file__).parent
CORE = ("__init__.py", "base.py", "edits.py", "fixer.py", "param_edits.py")


def _named() -> dict[str, list[MappingEntry]]:
    users: dict[str, list[MappingEntry]] = defaultdict(list)
    for entry in load_table().entries.values():
        for rewrite in (entry.rewrite, *(t.rewrite for t in entry.targets)):
            if rewrite is not None and entry not in users[rewrite.transform]:
                users[rewrite.transform].append(entry)
    return users


def _source(example: Example) -> str:
    """The example's torch code with its inputs bound to tensors (so that their methods are Tensor methods)."""
    inputs = "".join(f"{name} = torch.ones(3, 4)\n" for name in example.inputs)
    return "import torch\n" + inputs + example.torch.rstrip("\n") + "\n"


def test_every_named_transform_is_registered_and_every_registered_one_is_named() -> None:
    named = _named()
    assert set(named) - set(REGISTRY) == set(), "the tables name transforms that do not exist"
    assert set(REGISTRY) - set(named) == set(), "registered transforms that no entry names"


def test_each_transform_module_names_the_entries_that_use_it() -> None:
    for name, users in _named().items():
        module = importlib.import_module(type(REGISTRY[name]).__module__)
        doc = re.sub(r"\s+", " ", module.__doc__ or "")
        missing = [e.api for e in users if e.api not in doc]
        assert not missing, f"{module.__name__}'s docstring does not name {missing}"


def test_each_transform_changes_the_fix_of_an_example_of_its_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    """An example that exercises the transform: fixing its torch code (unsafe fixes included) gives
    another text without the transform. The example is one the fix test and verify run. (A transform
    used only by APIs that MindSpore lacks, whose uses the fix removes, has no example: tests/test_fix_safety.py
    checks its fixes.)"""
    table = load_table()
    config = Config()
    unexercised = []
    for name, users in _named().items():
        if not any(e.targets for e in users):
            continue  # only APIs without a MindSpore form (their uses are removed): no example can run them
        sources = [_source(example) for e in users for example in e.examples]
        with_it = [fix_text(source, "example.py", config, True, table).text for source in sources]
        with monkeypatch.context() as patch:
            patch.delitem(REGISTRY, name)
            without = [fix_text(source, "example.py", config, True, table).text for source in sources]
        if not any(a != b for a, b in zip(with_it, without)):
            unexercised.append(name)
    assert not unexercised, f"no example exercises the transforms {unexercised}"


def test_the_core_of_the_fixes_dispatches_on_no_api_name() -> None:
    """No rewrite chosen by an API name in code: the core compares no call's or target's API with a name, and
    spells no torch or MindSpore API (a namespace prefix ending in a dot is allowed)."""
    for file in CORE:
        text = (PACKAGE / file).read_text(encoding="utf-8")
        tree = ast.parse(text)
        for node in ast.walk(tree):
            sides = (node.left, *node.comparators) if isinstance(node, ast.Compare) else ()
            if any(isinstance(side, ast.Attribute) and side.attr == "api" for side in sides) and not all(
                    isinstance(side, ast.Attribute) for side in sides):  # (two APIs compared with each other: fine)
                pytest.fail(f"{file}:{node.lineno}: compares an API: {ast.unparse(node)}")
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and re.fullmatch(r"(torch|mindspore)(\.\w+)+", node.value):
                pytest.fail(f"{file}:{node.lineno}: names an API: {node.value!r}")
    assert not (PACKAGE.parent / "rewrite.py").exists()


def test_a_rewrite_argument_reaches_its_transform() -> None:
    """The tables' arguments are the transform's: LayerNorm's shape parameter is the one the table names."""
    table = load_table()
    entry = table.lookup("torch.nn.LayerNorm")
    assert entry is not None
    rewrite = next(t.rewrite for t in entry.targets if t.rewrite is not None)
    assert rewrite.transform == "shape_tuple" and rewrite.arg("param") == "normalized_shape"
    source = "import torch\nln = torch.nn.LayerNorm(8)\n"
    out = fix_text(source, "m.py", Config(target_version="2.2"), True, table).text
    assert "mindspore.nn.LayerNorm((8,)" in out
