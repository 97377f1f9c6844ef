"""The structural rewrites of `torch2ms migrate` are named by the tables (`structure: {rule: NAME, ...}` of an
entry, from scripts/mapping_structure.yaml), never chosen by an API name in code: every rule is named and
does what its entry's arguments say, and an entry without the rule gets no such rewrite."""

from __future__ import annotations

import ast
import dataclasses
import re
import textwrap
from pathlib import Path

import pytest

import torch2ms.migrate as migrate_package
from torch2ms.mappings import MappingTable, load_table
from torch2ms.migrate.pipeline import migrate_text
from torch2ms.model import StructureRule

PACKAGE = Path(migrate_package.__file__).parent


def _migrate(source: str, table: MappingTable | None = None) -> str:
    out = migrate_text(textwrap.dedent(source), "m.py", table=table).text
    ast.parse(out)
    return out


def _without(rule: StructureRule) -> MappingTable:
    """The tables with every entry's `structure` of `rule` taken away."""
    table = load_table()
    entries = {api: dataclasses.replace(e, structure=None) if e.structure is not None and e.structure.rule is rule
               else e for api, e in table.entries.items()}
    return dataclasses.replace(table, entries=entries, digest=f"{table.digest}-without-{rule}")


def test_every_rule_is_named_by_an_entry_with_its_arguments() -> None:
    table = load_table()
    named: dict[StructureRule, list[str]] = {}
    for entry in table.entries.values():
        if entry.structure is not None:
            named.setdefault(entry.structure.rule, []).append(entry.api)
            assert type(entry.structure.rule) is StructureRule
    assert set(named) == set(StructureRule), "rules no entry names"
    for entry in table.entries.values():
        s = entry.structure
        if s is None:
            continue
        if s.rule is StructureRule.INITIALIZER:
            assert s.arg("cls") or s.arg("value"), entry.api
            assert s.arg("module"), entry.api
            assert all(len(p) == 3 for p in s.arg("params", ())), entry.api
            if s.arg("value") is not None:  # the value written instead of a class: it uses every keyword
                form = str(s.arg("value"))
                assert "{tensor}" in form and all("{" + p[1] + "}" in form for p in s.arg("params", ())), entry.api
        if s.rule is StructureRule.ALIAS:
            of = table.lookup(str(s.arg("of")))
            assert of is not None and of.targets, f"{entry.api}: the alias of an entry without a form"
        if s.rule in (StructureRule.SWAP_AXES, StructureRule.POSITIONAL_IN_GRAPH):
            assert s.arg("params"), entry.api
        if s.rule is StructureRule.CELL_CONTAINER:
            assert s.arg("empty") in ("[]", "{}"), entry.api


def _written_in_code(node: ast.expr) -> bool:
    """A value the code spells: a literal (or a literal collection) or a module constant (`NAMES`), not data
    read from the tables (`self.rules.loaders`, `entry.targets`)."""
    if isinstance(node, (ast.Set, ast.Tuple, ast.List)):
        return any(_written_in_code(e) for e in node.elts)
    return isinstance(node, ast.Constant) or isinstance(node, ast.Name) and node.id.isupper()


def test_migrate_chooses_no_rewrite_by_an_api_name() -> None:
    """No module of migrate compares a call's API with a name written in code or spells a torch API
    (docstrings aside): which rewrite applies is the tables' (`structure:`, data/training.yaml)."""
    for file in sorted(PACKAGE.glob("*.py")):
        tree = ast.parse(file.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            sides = (node.left, *node.comparators) if isinstance(node, ast.Compare) else ()
            if any(isinstance(side, ast.Attribute) and side.attr == "api" for side in sides) \
                    and any(_written_in_code(side) for side in sides):
                pytest.fail(f"{file.name}:{node.lineno}: compares an API: {ast.unparse(node)}")
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and re.fullmatch(r"torch(\.\w+)+", node.value):
                pytest.fail(f"{file.name}:{node.lineno}: names an API: {node.value!r}")


def test_aliases_of_the_grad_mode_and_of_the_wrappers_follow_their_entries() -> None:
    """Spellings of another library than the benchmarks': grad_mode's own names and the parallel package's
    wrappers, imported by name."""
    source = """
        from torch.autograd.grad_mode import no_grad, inference_mode
        from torch.nn.parallel import DistributedDataParallel as DDP

        def serve(net, batch):
            net = DDP(net)
            with inference_mode():
                scores = net(batch)
            return scores

        @no_grad()
        def score(net, batch):
            return net(batch)
    """
    out = _migrate(source)
    assert "DDP" not in out and "inference_mode" not in out and "no_grad" not in out
    assert "def serve(net, batch):\n    scores = net(batch)\n    return scores" in out
    assert "def score(net, batch):\n    return net(batch)" in out
    # without the structural rule, the fix engine's `dropped_context` rewrite writes the same
    assert _migrate(source, _without(StructureRule.NO_TAPE)) == out


@pytest.mark.parametrize(("rule", "source", "written", "left"), [
    (StructureRule.INITIALIZER, "import torch\ndef init(w):\n    torch.nn.init.xavier_normal_(w, gain=0.5)\n",
     "w.copy_(mindspore.common.initializer.initializer(mindspore.common.initializer.XavierNormal(gain=0.5), "
     "w.shape, w.dtype).init_data())", "xavier_normal_(w, gain=0.5)"),
    (StructureRule.SWAP_AXES, "import torch\ndef f(n: int):\n    q = torch.ones(2, 3, n)\n    return q.transpose(2, 1)\n",
     "q.swapaxes(2, 1)", "transpose(2, 1)"),
])
def test_each_call_rule_follows_the_tables(rule: StructureRule, source: str, written: str, left: str) -> None:
    assert written in _migrate(source)
    assert left in _migrate(source, _without(rule))


def test_a_legacy_typed_tensor_class_naming_a_type_is_mindspores_tensor_class() -> None:
    source = "import torch\n\n\ndef pick(rows: torch.LongTensor, k: int) -> torch.FloatTensor:\n" \
             "    return torch.FloatTensor(k, 2) + rows[:k, None]\n"
    out = _migrate(source)
    assert "def pick(rows: mindspore.Tensor, k: int) -> mindspore.Tensor:" in out
    assert "mindspore.ops.zeros((k, 2), mindspore.float32)" in out and "torch" not in out
