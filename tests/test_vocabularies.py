"""Each closed vocabulary of the mapping schema is an enum of torch2ms.model with exactly its values, so a
value the schema adds or drops shows here, and mypy checks every `match` over it for a missing case."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Any

import pytest
import yaml

import torch2ms
from torch2ms.mappings import load_table
from torch2ms.model import (
    Device, DynCondition, DynRule, Effort, ExampleKind, FactKind, Returns, ShapeResult, StructureRule, WrittenAs,
)

SCHEMA = yaml.safe_load((Path(torch2ms.__file__).parent / "data" / "schema.yaml").read_text(encoding="utf-8"))


def _enum_at(path: tuple[str, ...]) -> list[Any]:
    node: Any = SCHEMA
    for key in path:
        node = node[key]
    return list(node["enum"])


@pytest.mark.parametrize(("enum", "path"), [
    (FactKind, ("$defs", "param", "properties", "kind")),
    (Device, ("$defs", "device")),
    (WrittenAs, ("$defs", "target", "properties", "written_as")),
    (ExampleKind, ("$defs", "example", "properties", "kind")),
    (Returns, ("$defs", "entry", "properties", "returns")),
    (Effort, ("$defs", "entry", "properties", "effort")),
    (DynRule, ("$defs", "dynamic", "properties", "args", "items", "properties", "rule")),
    (DynCondition, ("$defs", "dynamic", "properties", "when", "items")),
    (StructureRule, ("$defs", "structure", "properties", "rule")),
    (ShapeResult, ("$defs", "entry", "properties", "shape_result")),
])
def test_enum_equals_schema_vocabulary(enum: type[Enum], path: tuple[str, ...]) -> None:
    assert [member.value for member in enum] == _enum_at(path)


def test_loaded_tables_carry_enum_members() -> None:
    table = load_table()
    seen: dict[type, int] = {}
    for entry in table.entries.values():
        for value in (entry.returns, entry.effort):
            if value is not None:
                seen[type(value)] = seen.get(type(value), 0) + 1
        for target in entry.targets:
            for fact in target.params:
                assert type(fact.kind) is FactKind
            for device in (*target.devices, *target.no_kernel, *target.verified):
                assert type(device) is Device
            if target.written_as is not None:
                assert type(target.written_as) is WrittenAs
        for example in entry.examples:
            assert type(example.kind) is ExampleKind
    assert seen.get(Returns) and seen.get(Effort)
    assert str(FactKind.RENAMED) == "renamed" and f"{Device.GPU}" == "gpu"

