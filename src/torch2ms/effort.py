"""Effort classes: how much work a finding is, so that a report can say how much is left.

- ``remove``: the call goes away in MindSpore (``torch.no_grad``, ``torch.device``, ``.cuda()``);
- ``automatic``: a rewrite does it (an equivalent API, renamed or dropped parameters);
- ``manual``: a person ports it, along a known workaround (the entry's note, the check's message);
- ``blocker``: MindSpore has nothing to port it to; it must be composed or written as a custom op;
- ``unknown``: the torch API is not in the mapping tables (TMS104).

A mapping finding (TMS101-TMS105) takes its entry's class: the table's ``effort`` where
it states one (entries without a MindSpore target), else ``automatic`` for an equivalent
API and for parameter differences a rewrite handles (renamed, dropped, other default),
``manual`` when a fact needs a person; a finding whose own call `--fix` rewrites safely is
``automatic``. Every other code has one class (EFFORT_BY_CODE).
Files that could not be analysed (TMS9xx) have none.
"""

from __future__ import annotations

from .mappings import MappingTable
from .model import Category, Diagnostic, FactKind, MappingEntry

EFFORTS = ("remove", "automatic", "manual", "blocker", "unknown")
LABELS = {"remove": "Remove", "automatic": "Automatic", "manual": "Manual (known workaround)",
          "blocker": "Blocker (no workaround)", "unknown": "Not in the tables"}
MECHANICAL_FACTS = frozenset({FactKind.RENAMED, FactKind.DROPPED, FactKind.DEFAULT_DIFFERS, FactKind.TRANSLATED,
                              FactKind.RETYPED})

# Codes beyond the API table: one class each (TMS2xx: a shape that depends on data needs a redesign).
EFFORT_BY_CODE = {
    "TMS201": "manual", "TMS202": "manual", "TMS203": "manual", "TMS204": "manual", "TMS205": "manual",
    "TMS206": "manual", "TMS251": "manual", "TMS252": "manual", "TMS253": "manual", "TMS254": "manual",
    "TMS301": "manual", "TMS311": "manual", "TMS321": "automatic", "TMS322": "automatic",
    "TMS331": "automatic", "TMS332": "manual", "TMS333": "manual", "TMS334": "manual", "TMS335": "automatic",
    "TMS336": "manual", "TMS341": "remove", "TMS342": "manual", "TMS343": "manual", "TMS351": "manual",
    "TMS352": "manual", "TMS361": "manual", "TMS362": "manual", "TMS363": "manual", "TMS364": "manual",
    "TMS365": "automatic",
    "TMS106": "automatic",  # a type reference: the fix renames it (a type MindSpore lacks goes with the code using it)
}
MAPPING_CODES = frozenset({"TMS101", "TMS102", "TMS103", "TMS104", "TMS105"})


def entry_effort(entry: MappingEntry, version: tuple[int, ...], device: str | None) -> str:
    """The class of a use of `entry` at MindSpore `version` on `device` (None: its preferred form)."""
    category = entry.category_for(version, device)
    if category is Category.EQUIVALENT:
        return "automatic"
    if category is Category.DIFF_PARAMS:
        target = entry.target_for(version, device)
        facts = target.params if target is not None else ()
        return "automatic" if all(f.kind in MECHANICAL_FACTS for f in facts) else "manual"
    return entry.effort or "blocker"


def finding_effort(diag: Diagnostic, table: MappingTable, version: tuple[int, ...], device: str | None) -> str | None:
    """The class of one finding; None for a file that could not be analysed. A mapping finding that
    `--fix` rewrites safely is ``automatic`` whatever facts its entry has: the facts did not stop the
    rewrite for this call."""
    if diag.code in MAPPING_CODES and diag.fix is not None and diag.fix.safe and diag.fix.edits:
        return "automatic"
    return effort_of(diag.code, diag.category.value, diag.torch_api, table, version, device)


def effort_of(code: str, category: str, api: str | None, table: MappingTable, version: tuple[int, ...],
              device: str | None) -> str | None:
    """The class of a finding given as its code, category and torch API (also a JSON report's)."""
    if category == Category.FILE_ERROR.value:
        return None
    if code in MAPPING_CODES:
        entry = table.lookup(api) if api else None
        if entry is None:
            return "unknown"
        if category == Category.EQUIVALENT.value:  # this call uses none of the entry's differences
            return "automatic"
        return entry_effort(entry, version, device)
    return EFFORT_BY_CODE.get(code, "manual")


def _where(device: str) -> str:
    return "Ascend" if device == "ascend" else device.upper()


def advice(entry: MappingEntry, version: tuple[int, ...], device: str | None) -> str:
    """What to do about a use of `entry` (the reports' "what to do"): its note, else what its targets
    say for the version and device: the form to write and its parameter differences, or, where the
    forms have no kernel on the device, the devices they run on."""
    if entry.note:
        return entry.note
    release = ".".join(str(v) for v in version)
    target = entry.target_for(version, device)
    if target is None:
        return (f"MindSpore {release} has no counterpart: compose it from mindspore.mint / mindspore.ops ops "
                f"or write a mindspore.ops.Custom op")
    if device is not None and device in target.no_kernel:
        where = _where(device)
        others = [d for d in target.devices if d != device and d not in target.no_kernel]
        elsewhere = (f"; it runs on {' and '.join(_where(d) for d in others)} (scan with --device "
                     f"{others[0]} for the port there)") if others else ""
        return (f"{target.api} has no {where} kernel in MindSpore {release}{elsewhere}; on {where}, compose it "
                f"from other mindspore.mint / mindspore.ops ops or write a mindspore.ops.Custom op")
    details = "; ".join(f.describe() for f in target.params)
    return f"use {target.api}" + (f": {details}" if details else "")
