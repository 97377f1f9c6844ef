"""Jobs for cases from torch's own test database (OpInfo, ModuleInfo), as specs for the workers.

Pure: no torch, no MindSpore, no processes. The worker lists the database (`samples.catalog`, a job
with `catalog: true`); this module pairs each OpInfo and ModuleInfo with the table's entries it
reaches and makes one job per (entry, written form, dtype): the OpInfo `add` reaches `torch.add`
(written `torch.add(x0, x1)`) and `torch.Tensor.add` (written `x0.add(x1)`); the ModuleInfo of
`torch.nn.Linear` reaches that entry. Each job runs in the form the fix writes for the device; a layer's
carries the form's weight facts, by which the worker copies torch's tensors into the cell.
"""

from __future__ import annotations

from typing import Any

from ..mappings import MappingTable, parse_version
from ..model import MappingEntry
from ..weights.facts import Facts
from .cases import VERIFIED_CATEGORIES, form_fields, forms, layer_weights

SOURCES = ("generator", "opinfo", "moduleinfo")
# How the entry's own example is compared (its tolerances, random results): its samples are compared alike.
COMPARISON_KEYS = ("rtol", "atol", "random", "compare", "timeout")
FIRST_DTYPE = "float32"
CATALOG_TIMEOUT_S = 600.0  # importing the database in a busy worker


def catalog_spec() -> dict[str, Any]:
    return {"id": "catalog", "catalog": True, "timeout": CATALOG_TIMEOUT_S}


def _dtypes(listed: list[str], every: bool) -> list[str]:
    """float32 first (where torch lists it), then, with `every`, the other dtypes torch lists."""
    first = [FIRST_DTYPE] if FIRST_DTYPE in listed else []
    return first + (sorted(d for d in listed if d != FIRST_DTYPE) if every else [])


def _verified(entry: MappingEntry, table: MappingTable) -> bool:
    return entry.category_for(parse_version(table.meta.default_target), None) in VERIFIED_CATEGORIES


def reached(table: MappingTable, catalog: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(entry api, written kind, database item) for every entry an OpInfo or ModuleInfo reaches:
    `function` for torch.<name>, `method` for torch.Tensor.<name>, `layer` for a torch.nn class."""
    out: list[tuple[str, str, dict[str, Any]]] = []
    for op in catalog.get("ops") or []:
        name = str(op["name"])
        function = f"torch.{name}"
        if function in table.entries:
            out.append((function, "function", op))
        method = f"torch.Tensor.{name}"
        if op.get("method") and "." not in name and method in table.entries:
            out.append((method, "method", op))
    for module in catalog.get("modules") or []:
        if str(module["name"]) in table.entries:
            out.append((str(module["name"]), "layer", module))
    return [(api, kind, item) for api, kind, item in out if _verified(table.entries[api], table)]


def sample_specs(table: MappingTable, catalog: dict[str, Any], device: str = "cpu", every_dtype: bool = False,
                 apis: set[str] | None = None) -> list[dict[str, Any]]:
    """One job per (entry, written kind, database item, dtype), in the form the fix writes for `device`
    (`apis`: only these entries)."""
    version = parse_version(table.meta.default_target)
    specs: list[dict[str, Any]] = []
    facts: Facts | None = None
    for api, kind, item in reached(table, catalog):
        if apis is not None and api not in apis:
            continue
        entry = table.entries[api]
        mine = [f for f in forms(entry, version) if device in f.devices]
        # (where the target has no kernel on the device, the entry's own rewrite is what the fix writes there)
        form = next((f for f in mine if f.own), mine[0] if mine else None)
        if form is None:
            continue
        source = "moduleinfo" if kind == "layer" else "opinfo"
        compared = {k: entry.examples[0].extra[k] for k in COMPARISON_KEYS
                    if entry.examples and k in entry.examples[0].extra}
        # a layer's tensors go into the cell by the form's weight facts, as for the entry's own example
        weights = None
        if kind == "layer" and entry.weight_form(form.target.api) is not None:
            facts = facts or Facts.from_entries(table.entries.values())
            weights = layer_weights(entry, form.target.api, facts)
        if weights is not None:
            compared["weights"] = weights
        variant = str(item.get("variant") or "")
        for dtype in _dtypes(list(item.get("dtypes") or []), every_dtype):
            label = f"{item['name']}.{variant}" if variant else str(item["name"])
            specs.append({"id": f"{api}#{source}:{label}:{dtype}@{form.name}", "api": api,
                          "source": source, "op": item["name"], "variant": variant, "dtype": dtype,
                          "kind": kind, **compared, **form_fields(form)})
    return specs


def source_counts(results: list[dict[str, Any]]) -> dict[str, int]:
    """Cases run per source (generator, opinfo, moduleinfo)."""
    out: dict[str, int] = {}
    for result in results:
        source = str(result.get("source") or "generator")
        out[source] = out.get(source, 0) + int(result.get("cases") or 0)
    return out
