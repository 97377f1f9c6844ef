"""torch2ms.syntax: one tree per text, one walk per tree and one result per key while `shared()` is open; nothing
kept outside it."""

from __future__ import annotations

import ast

import pytest

from torch2ms import syntax
from torch2ms.engine import scan_source
from torch2ms.resolve import resolve_module
from torch2ms.source import SourceText

TEXT = "import os\n\ndef area(w, h):\n    return [w * h for _ in range(2)]\n"


def test_outside_a_block_every_parse_is_a_new_tree():
    first, second = syntax.parse(TEXT), syntax.parse(TEXT)
    assert first is not second
    assert ast.dump(first) == ast.dump(second)
    assert not isinstance(syntax.walk(first), list)  # ast.walk's generator: no list kept


def test_a_block_parses_a_text_once_and_drops_its_trees_at_the_end():
    with syntax.shared():
        tree = syntax.parse(TEXT)
        assert syntax.parse(TEXT) is tree
        assert syntax.parse(TEXT + "\n") is not tree  # another text, another tree
        with syntax.shared():  # a nested block is the outer one
            assert syntax.parse(TEXT) is tree
    assert syntax.parse(TEXT) is not tree


def test_the_walk_of_a_shared_tree_is_ast_walks_order_once():
    with syntax.shared():
        tree = syntax.parse(TEXT)
        nodes = syntax.walk(tree)
        assert [type(n) for n in nodes] == [type(n) for n in ast.walk(tree)]
        assert all(a is b for a, b in zip(nodes, ast.walk(tree)))
        assert syntax.walk(tree) is nodes
        other = ast.parse(TEXT)  # not made by this block: walked afresh
        assert not isinstance(syntax.walk(other), list)


def test_a_syntax_error_is_raised_each_time_and_nothing_is_kept():
    with syntax.shared():
        for _ in range(2):
            with pytest.raises(SyntaxError):
                syntax.parse("def (:\n")


def test_remembered_computes_once_per_key_and_only_for_shared_trees():
    calls: list[int] = []

    def compute() -> int:
        calls.append(1)
        return len(calls)

    with syntax.shared():
        tree = syntax.parse(TEXT)
        assert syntax.remembered(("k", id(tree)), (tree,), compute) == 1
        assert syntax.remembered(("k", id(tree)), (tree,), compute) == 1
        loose = ast.parse(TEXT)
        assert syntax.remembered(("k", id(loose)), (loose,), compute) == 2
        assert syntax.remembered(("k", id(loose)), (loose,), compute) == 3
    assert syntax.remembered(("k", id(tree)), (tree,), compute) == 4  # the block is over


def test_the_oldest_tree_goes_with_its_walk_and_results():
    calls: list[int] = []
    with syntax.shared():
        first = syntax.parse("x = 0\n")
        syntax.walk(first)
        syntax.remembered(("k", id(first)), (first,), lambda: calls.append(1))
        for n in range(1, syntax.TREES + 1):
            syntax.parse(f"x = {n}\n")
        assert syntax.parse("x = 0\n") is not first
        assert not isinstance(syntax.walk(first), list)
        syntax.remembered(("k", id(first)), (first,), lambda: calls.append(1))
    assert len(calls) == 2


def test_a_shared_scan_and_resolve_equal_fresh_ones():
    text = "import torch\n\nx = torch.zeros(2, 3)\ny = torch.cat([x, x], dim=0)\n"
    fresh = scan_source(text, "a.py")
    fresh_facts = resolve_module(ast.parse(text), _table(), SourceText(text))
    with syntax.shared():
        shared = scan_source(text, "a.py")
        assert scan_source(text, "a.py") == shared
        tree = syntax.parse(text)
        facts = resolve_module(tree, _table(), SourceText(text))
        assert resolve_module(tree, _table(), SourceText(text)) is facts
    assert shared == fresh
    assert facts == fresh_facts
    assert [d.code for d in fresh.diagnostics]  # the text has findings: the comparison says something


def _table():
    from torch2ms.mappings import load_table

    return load_table()


def test_the_scope_facts_a_migration_reads_first_need_no_fixes():
    """migrate's first pass over the tree scans without building fixes: the scope facts are the same."""
    text = ("import torch\nimport torch.nn as nn\nfrom .blocks import Block\n\n\n"
            "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.fc = nn.Linear(4, 2)\n        self.block = Block()\n\n"
            "    def forward(self, x):\n        n = x.shape[0]\n        y = torch.zeros(n, 4)\n"
            "        return self.fc(torch.cat([x, y], dim=0)).nonzero()\n\n\n"
            "def helper(t):\n    return t.sum().item()\n")
    full, bare = scan_source(text, "net.py"), scan_source(text, "net.py", fixes=False)
    assert full.scope is not None and full.scope == bare.scope
    assert any(d.fix is not None for d in full.diagnostics) and all(d.fix is None for d in bare.diagnostics)


def test_another_thread_does_not_share_a_blocks_trees():
    import threading

    seen: list[ast.Module] = []
    with syntax.shared():
        tree = syntax.parse(TEXT)
        worker = threading.Thread(target=lambda: seen.append(syntax.parse(TEXT)))
        worker.start()
        worker.join()
        assert syntax.parse(TEXT) is tree
    assert seen and seen[0] is not tree
