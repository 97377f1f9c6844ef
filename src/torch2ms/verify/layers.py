"""`verify-model --locate`: the first layer whose output diverges while its inputs agree.

Both workers run the network once more with a hook on every module / cell (`model_worker.Tracer`):
for each call, in the order the calls finish, the layer's qualified name, where it was built and
from where it was called in the user's files, and its inputs and outputs. The calls are paired
through the weight map's module paths (a torch module and the MindSpore cell its tensors go to;
otherwise the same qualified name) and the n-th call of a layer with its n-th call. Walking the
calls in order, the first whose output differs is where the computations part:

- its inputs agree: the layer itself computes otherwise (its construction in the port: a wrong
  argument, another layer class; or, for a layer of the user's own class, its forward);
- its inputs differ already: code that is no layer changed them, between the last call that agreed
  and this one (the port's lines from the one call to the other).

With a training step, a gradient that differs while the forward agreed is located at the layer
latest in the forward order whose parameters' gradients differ (the backward runs in reverse).
Each location names the port's file:line, the original's, and the rewrites `migrate` recorded for
the port's lines (`NAME.migrate.json` beside the port, see `torch2ms.migrate.provenance`).
Pure: NumPy only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from typing import Any

from .tolerance import judge, measure

Lookup = Callable[[str, int, int], list[dict[str, Any]]]
MISSING = "no MindSpore layer of this name ran"


def module_pairs(placed: Mapping[str, Any]) -> dict[str, str]:
    """torch module path -> MindSpore cell path, from the placed tensors: `embed.weight` ->
    `embed.embedding_table` pairs `embed` with `embed`; `bn.weight` -> `bn.bn2d.gamma` pairs `bn` with `bn`
    (the cell that holds the inner one: the torch path with as many parts)."""
    pairs: dict[str, str] = {}
    for key, placement in placed.items():
        if placement.ms is None or placement.kind == "tie":
            continue
        t_head = key.rpartition(".")[0]
        m_parts = str(placement.ms).split(".")
        depth = t_head.count(".") + 1 if t_head else 0
        m_head = ".".join(m_parts[:depth]) if depth < len(m_parts) else ".".join(m_parts[:-1])
        pairs.setdefault(t_head, m_head)
    return pairs


def _occurrences(calls: list[dict[str, Any]], rename: Callable[[str], str]) -> dict[tuple[str, int], int]:
    seen: dict[str, int] = {}
    out = {}
    for index, call in enumerate(calls):
        name = rename(str(call["name"]))
        out[(name, seen.get(name, 0))] = index
        seen[name] = seen.get(name, 0) + 1
    return out


def _split(where: str | None) -> tuple[str, int] | None:
    if not where:
        return None
    path, _, line = where.rpartition(":")
    return (path, int(line)) if line.isdigit() else None


def _worst(t_call: dict[str, Any], m_call: dict[str, Any], group: str, k_t: int, k_m: int,
           a: Mapping[str, Any], b: Mapping[str, Any], rtol: float) -> tuple[str, dict[str, Any]]:
    """The verdict over the call's tensors of one group ("in" / "out"): "" when they agree, else the rule."""
    t_items, m_items = t_call.get(group, []), m_call.get(group, [])
    if len(t_items) != len(m_items):
        return f"{len(t_items)} tensors in torch, {len(m_items)} in MindSpore", {}
    worst: dict[str, Any] = {"relative": 0.0, "cosine": 1.0, "max_abs": 0.0}
    verdict = ""
    for t_item, m_item in zip(t_items, m_items):
        m = measure(a[f"layer/{k_t}/{group}/{t_item['path']}"], b[f"layer/{k_m}/{group}/{m_item['path']}"])
        if not m.same_shape:
            return (f"shape differs: torch {t_item.get('shape')}, MindSpore {m_item.get('shape')}",
                    {"relative": None, "cosine": None, "max_abs": None})
        rule = judge(m, str(t_item.get("dtype") or "float32"), 1, rtol)
        verdict = verdict or rule
        worst = {"relative": max(worst["relative"], m.relative), "cosine": min(worst["cosine"], m.cosine),
                 "max_abs": max(worst["max_abs"], m.max_abs)}
    return verdict, worst


def compare_layers(t_calls: list[dict[str, Any]], m_calls: list[dict[str, Any]], a: Mapping[str, Any],
                   b: Mapping[str, Any], pairs: Mapping[str, str], rtol: float) -> list[dict[str, Any]]:
    """One row per torch call, in the order the calls finished: its MindSpore partner and both errors."""
    def rename(name: str) -> str:
        return pairs.get(name, name)

    m_calls = [c for c in m_calls if c.get("name") is not None]  # (a failure ends the list)
    m_index = _occurrences(m_calls, lambda n: n)
    seen: dict[str, int] = {}
    rows = []
    for k_t, t_call in enumerate(t_calls):
        ms_name = rename(str(t_call["name"]))
        occurrence = seen.get(ms_name, 0)
        seen[ms_name] = occurrence + 1
        row: dict[str, Any] = {"torch": t_call["name"], "ms": ms_name, "class": t_call["class"],
                               "original": t_call.get("built"), "original_call": t_call.get("called")}
        rows.append(row)
        k_m = m_index.get((ms_name, occurrence))
        if k_m is None:
            row["verdict"] = MISSING
            continue
        m_call = m_calls[k_m]
        row.update(ms_class=m_call["class"], port=m_call.get("built"), port_call=m_call.get("called"),
                   port_code=m_call.get("code"), original_code=t_call.get("code"))
        in_rule, in_err = _worst(t_call, m_call, "in", k_t, k_m, a, b, rtol)
        out_rule, out_err = _worst(t_call, m_call, "out", k_t, k_m, a, b, rtol)
        row.update(inputs=in_err, outputs=out_err, input_rule=in_rule, output_rule=out_rule)
        row["verdict"] = "ok" if not out_rule else "differs"
    return rows


def _is_inside(name: str, outer: str) -> bool:
    return outer == "" or name.startswith(outer + ".")


def first_divergence(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The first row whose output differs, and whether its inputs agreed (see the module's doc)."""
    for index, row in enumerate(rows):
        if row["verdict"] != "differs":
            continue
        before = [r for r in rows[:index] if r["verdict"] == "ok" and not _is_inside(row["torch"], r["torch"])]
        if not row.get("input_rule"):
            inner = [r for r in rows[:index] if _is_inside(str(r["torch"]), str(row["torch"]))
                     and r["torch"] != row["torch"]]
            if inner:  # a container whose own layers all agreed: its forward's code between them
                return {"kind": "inside", "row": row, "after": inner[-1]}
            return {"kind": "layer", "row": row}
        # the inputs of the containers it opens (called later in the same code) may differ as well: the
        # code before the outermost of them changed them
        for outer in rows[index + 1:]:
            if outer["torch"] != "" and _is_inside(str(row["torch"]), str(outer["torch"])) and \
                    outer.get("input_rule") and not _is_inside(str(before[-1]["torch"]) if before else "",
                                                                str(outer["torch"])):
                row = outer
        start = rows.index(before[-1]) + 1 if before else 0
        missing = [r for r in rows[start:index] if r["verdict"] == MISSING]
        if missing:  # a layer torch ran and the port did not, just before the inputs parted
            return {"kind": "missing", "row": missing[0], "after": before[-1] if before else None, "next": row}
        return {"kind": "between", "row": row, "after": before[-1] if before else None}
    return None


def _span(first: str | None, second: str | None) -> str | None:
    """`file:L1-L2` of two call sites in one file (the lines between them), else the second."""
    a, b = _split(first), _split(second)
    if a and b and a[0] == b[0]:
        lo, hi = sorted((a[1], b[1]))
        return f"{a[0]}:{lo}" if lo == hi else f"{a[0]}:{lo}-{hi}"
    return second or first


def describe(found: dict[str, Any], lookup: Lookup | None = None) -> dict[str, Any]:
    """The location as the report gives it: the layer, the port's and the original's lines, the rewrites."""
    row, kind = found["row"], found["kind"]
    after: dict[str, Any] = found.get("after") or {}
    out: dict[str, Any] = {"kind": kind, "layer": row["torch"], "ms_layer": row["ms"], "class": row["class"],
                           "ms_class": row.get("ms_class"), "rule": row.get("output_rule") or ""}
    if kind == "layer":
        out["port"], out["original"] = row.get("port"), row.get("original")
        out["port_code"], out["original_code"] = row.get("port_code"), row.get("original_code")
        out["port_call"], out["original_call"] = row.get("port_call"), row.get("original_call")
        out["message"] = (f"the layer {row['torch'] or '(the network)'} ({row['class']} -> {row.get('ms_class')}) "
                          f"computes otherwise on the same inputs: {out['rule']}")
    elif kind == "inside":
        out["port"] = row.get("port_code") or _span(after.get("port_call"), row.get("port_call"))
        out["original"] = row.get("original_code") or _span(after.get("original_call"), row.get("original_call"))
        out["message"] = (f"the forward of {row['torch'] or '(the network)'} ({row['class']}) differs after its "
                          f"layers agree (last: {after.get('torch')}): code that is no layer, {out['rule']}")
    elif kind == "missing":
        nxt = found["next"]
        out["port"] = _span(after.get("port_call"), nxt.get("port_call"))
        out["original"], out["original_call"] = row.get("original"), row.get("original_call")
        out["after"] = after.get("torch")
        out["message"] = (f"the layer {row['torch']} ({row['class']}) runs in torch, and no MindSpore layer of "
                          f"that name runs between {after.get('torch', 'the start')} and {nxt['torch']} in the port "
                          "(a dropped call?)")
    else:
        prev = after
        out["port"] = _span(prev.get("port_call"), row.get("port_call"))
        out["original"] = _span(prev.get("original_call"), row.get("original_call"))
        out["after"] = prev.get("torch")
        out["message"] = (f"the inputs of {row['torch']} differ already, after {prev.get('torch', 'the start')} "
                          f"agreed: code that is no layer between them ({row.get('input_rule')})")
    if lookup is not None:
        out["rewrites"] = _rewrites(out, lookup)
    return out


def _lines(where: str) -> tuple[str, int, int] | None:
    path, _, lines = where.rpartition(":")
    lo, _, hi = lines.partition("-")
    if not lo.isdigit():
        return None
    return path, int(lo), int(hi) if hi.isdigit() else int(lo)


def _rewrites(out: dict[str, Any], lookup: Lookup) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for key in ("port", "port_call"):
        where = _lines(str(out.get(key) or ""))
        if where:
            found.extend(r for r in lookup(*where) if r not in found)
    return found


def gradient_divergence(rows: list[dict[str, Any]], grad_rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The layer latest in the forward order whose parameters' gradients differ (`grad_rows`: torch name
    of each parameter, ok), when the forward agreed: the backward parts there."""
    bad = {str(g["torch"]).rpartition(".")[0] for g in grad_rows if not g["ok"]}
    if not bad:
        return None
    ordered = [r for r in rows if r["torch"] in bad]
    if not ordered:
        return None
    row = ordered[-1]
    index = rows.index(row)

    def agrees(layer: str) -> bool:  # it holds parameters, and all their gradients agree
        mine = [g for g in grad_rows if _is_inside(str(g["torch"]), layer)]
        return bool(mine) and all(g["ok"] for g in mine)

    parent = str(row["torch"]).rpartition(".")[0]
    # the next layer, called from the same code (a sibling, or a sibling of a container above), that agrees
    def called_beside(layer: str) -> bool:
        outer = layer.rpartition(".")[0]
        return outer == parent or _is_inside(parent, outer)

    later = [r for r in rows[index + 1:] if called_beside(str(r["torch"])) and agrees(str(r["torch"]))]
    nxt = later[0] if later else {}
    return {"kind": "backward", "layer": row["torch"], "ms_layer": row["ms"], "class": row["class"],
            "ms_class": row.get("ms_class"), "port": _span(row.get("port_call"), nxt.get("port_call")),
            "original": _span(row.get("original_call"), nxt.get("original_call")), "port_built": row.get("port"),
            "rule": "gradients differ", "after": row["torch"],
            "message": (f"the forward agrees but the gradients of {row['torch']} ({row['class']}) differ and no "
                        f"later layer's do: the backward parts at {row['torch']} or in the code after it, up to "
                        f"{nxt.get('torch', 'the output')}")}


# ---------------------------------------------------------------------------------- provenance
def provenance_lookup(ported_path: str) -> Lookup | None:
    """The rewrites `migrate` recorded for the port's lines (PORT.migrate.json beside it), or None."""
    from ..migrate.provenance import provenance_path

    path = provenance_path(ported_path)
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("lines"), list):
        return None
    target = os.path.realpath(ported_path)
    by_line: dict[int, list[dict[str, Any]]] = {}
    for item in data["lines"]:
        if isinstance(item, dict) and isinstance(item.get("line"), int):
            by_line.setdefault(item["line"], []).append(item)

    def lookup(path: str, lo: int, hi: int) -> list[dict[str, Any]]:
        if os.path.realpath(path) != target:
            return []
        return [item for line in range(lo, hi + 1) for item in by_line.get(line, [])]

    return lookup
