"""Progress since an earlier JSON report (`torch2ms scan --html R.html --compare OLD.json`).

Findings are matched as `--baseline` matches them (file, code, torch API, context and
line text; torch2ms.baseline), then by file, code and API (a finding on an edited line:
moved), then by file and API (a use whose finding changed: changed), so "fixed" counts the
earlier findings that are gone and "new" only findings of an API the file did not use; the
readiness now counts the uses that are gone (ported) as done; the effort classes of the
earlier report are taken from it, or worked out from its findings with today's tables for a
report of schema 4.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from ..baseline import Baseline, finding_facts, read_report
from ..effort import EFFORTS, effort_of
from ..mappings import load_table, parse_version
from ..model import USE_CATEGORIES, FileResult
from ..strings import display_path


def match(old: dict[str, Any], results: list[FileResult], read: Callable[[str], str | None],
          root: str | None = None) -> dict[str, int]:
    """How the findings of an earlier report and of this scan pair up, in three steps:

    - the same finding (file, code, API, enclosing function, line text: as `--baseline` matches);
    - moved: the same file, code and API on a line that was edited (by `--fix`, by hand);
    - changed: the same file and API under another code, or an equivalent use (TMS101) in the same
      function as a finding that is gone, or a member now spelled as the MindSpore name a finding that is
      gone told of in the same function (`m.add_module` fixed to `m.insert_child_to_cell` while the class
      that builds `m` is still torch's, itself a finding): what is known about the use changed (a fix made
      a class a mindspore.nn.Cell, so a method of `self` is no longer proven torch's; a rewritten receiver
      is now proven a tensor). Not new;
    - created: a check of the MindSpore code a fix wrote (category port_check, TMS4xx): a new MindSpore
      call that still needs a look, not a regression.

    `fixed`: the earlier findings left over; `ported`: those of them that were uses
    (`model.USE_CATEGORIES`), which are MindSpore now or gone; `new`: this scan's findings left over."""
    entries: list[tuple[str, str, str, str, str, bool]] = []
    targets: list[str] = []  # the last name of each earlier finding's MindSpore API
    for file in old.get("files", []):
        for diag in file.get("diagnostics", []):
            entries.append((file["path"], diag["code"], diag.get("torch_api") or "", diag.get("context") or "",
                            diag.get("fingerprint") or "", diag.get("category") in USE_CATEGORIES))
            targets.append((diag.get("mindspore_api") or "").rpartition(".")[2])
    exact: dict[tuple[str, ...], list[int]] = {}
    for index, entry in enumerate(entries):
        exact.setdefault(entry[:5], []).append(index)
    left: set[int] = set(range(len(entries)))
    unmatched: list[tuple[str, str, str, str, str]] = []
    same = 0
    for result in results:
        if not result.diagnostics:
            continue
        path = display_path(result.path, root)
        for diag, (context, print_) in zip(result.diagnostics, finding_facts(result, read(result.path))):
            found = exact.get((path, diag.code, diag.torch_api or "", context, print_))
            if found:
                left.discard(found.pop())
                same += 1
            else:
                unmatched.append((path, diag.code, diag.torch_api or "", context, diag.category.value))
    by_code: dict[tuple[str, str, str], list[int]] = {}
    by_api: dict[tuple[str, str], list[int]] = {}
    by_context: dict[tuple[str, str], list[int]] = {}
    by_target: dict[tuple[str, str, str], list[int]] = {}
    for index in sorted(left):
        path, code, api, context = entries[index][:4]
        by_code.setdefault((path, code, api), []).append(index)
        by_api.setdefault((path, api), []).append(index)
        by_context.setdefault((path, context), []).append(index)
        if targets[index]:
            by_target.setdefault((path, context, targets[index]), []).append(index)

    def take(candidates: Iterable[int]) -> bool:
        found = next((i for i in candidates if i in left), None)
        if found is None:
            return False
        left.discard(found)
        return True

    moved = changed = created = new = 0
    rest = []
    for item in unmatched:
        if take(by_code.get(item[:3], ())):
            moved += 1
        else:
            rest.append(item)
    for path, _, api, context, category in rest:
        if category == "port_check":
            created += 1
        elif (api and take(by_api.get((path, api), ()))) or \
                (category == "equivalent" and take(by_context.get((path, context), ()))) or \
                (api and take(by_target.get((path, context, api.rpartition(".")[2]), ()))):
            changed += 1
        else:
            new += 1
    return {"old": len(entries), "same": same, "moved": moved, "changed": changed, "created": created,
            "new": new, "fixed": len(left), "ported": sum(1 for i in left if entries[i][5])}


def progress(old_path: str, results: list[FileResult], read: Callable[[str], str | None],
             summary: dict[str, Any], target_version: str, device: str | None,
             root: str | None = None) -> dict[str, Any]:
    """The comparison of this scan (`results`, its document's `summary`) with the report at `old_path`.
    The readiness now counts the uses that are gone since (ported: MindSpore now, or removed) as done:
    (ready uses + ported) / (uses + ported), so porting raises it."""
    old = read_report(old_path)
    Baseline.from_document(old, old_path)  # the same checks of the document as --baseline
    paired = match(old, results, read, root)
    old_total = paired["old"]
    old_effort = old.get("summary", {}).get("by_effort")
    if not isinstance(old_effort, dict):
        table, version = load_table(), parse_version(target_version)
        old_effort = {}
        for file in old["files"]:
            for diag in file["diagnostics"]:
                effort = effort_of(diag["code"], diag["category"], diag["torch_api"], table, version, device)
                if effort is not None:
                    old_effort[effort] = old_effort.get(effort, 0) + 1
    now_effort = summary.get("by_effort", {})
    old_ready = old.get("summary", {}).get("readiness", {}).get("percent")
    ported = paired["ported"]
    ready = summary["readiness"]
    uses = int(ready["api_uses"]) + ported
    now_ready = round(100.0 * (float(ready["weighted_ready_uses"]) + ported) / uses, 1) if uses else 100.0
    return {
        "name": os.path.basename(old_path),
        "date": old.get("project", {}).get("date"),
        "findings": {"old": old_total, "now": summary["findings"], "change": summary["findings"] - old_total},
        "fixed": paired["fixed"],
        "new": paired["new"],
        "moved": paired["moved"],
        "changed": paired["changed"],
        "created": paired["created"],
        "ported": ported,
        "readiness": {"old": old_ready, "now": now_ready,
                      "change": None if old_ready is None else round(now_ready - old_ready, 1)},
        "by_effort": [{"effort": e, "old": int(old_effort.get(e, 0)), "now": int(now_effort.get(e, 0)),
                       "change": int(now_effort.get(e, 0)) - int(old_effort.get(e, 0))} for e in EFFORTS],
    }
