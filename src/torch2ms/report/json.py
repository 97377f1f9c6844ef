"""The JSON report: a versioned document with everything the HTML report shows.

The document is described by ``docs/json-schema.json`` and ``docs/report.md``.
`document()` is also the data model of the HTML report, so the two never
disagree: the HTML page is this document plus the scanned files' source text.

Schema versions: 1 had tool, summary and files; 2 added project, rules, apis,
directories, failures, per-file category counts, the readiness figure and a
suggested rewrite per finding; 3 the verification status; 4 each finding's
context and fingerprint (what `--baseline` matches); 5 the effort
class of each finding and API (torch2ms.effort), `summary.by_effort`, and the
category "uncertain" for TMS105 (it was "unmapped"), which the readiness figure
leaves out; 6 a finding's `runtime`; 7 (this one) the category "type_reference"
(TMS106: a torch type named in an annotation, an isinstance target, a base class),
which is no API use (with the category "port_check" of the TMS4xx checks).
"""

from __future__ import annotations

import bisect
import io
import json
import os
from collections.abc import Sequence
from typing import IO, Any

from .. import __version__
from ..codes import CODES
from ..mappings import load_table, parse_version
from ..model import DEFAULT_DEVICE, USE_CATEGORIES, Category, Diagnostic, FileResult, ScanSummary
from ..source import split_lines
from ..verify.record import load_record
from ..baseline import finding_facts
from ..effort import EFFORTS, advice, finding_effort
from ..strings import display_path

SCHEMA_VERSION = 7

# Categories of a torch API use, in the order the reports show them (worst first); "uncertain" uses
# (TMS105: the receiver may not be a tensor) are listed but left out of the readiness figure.
API_CATEGORIES = USE_CATEGORIES + ("uncertain",)
READINESS_CATEGORIES = USE_CATEGORIES  # the uses (torch2ms.model.USE_CATEGORIES): api_uses everywhere
# Every category a finding can have, in display order.
ALL_CATEGORIES = API_CATEGORIES + ("type_reference", "readiness", "port_check", "file_error")

# How much each category of API use counts towards migration readiness.
READINESS_WEIGHTS = {"equivalent": 1.0, "diff_params": 0.5}
READINESS_DEFINITION = (
    "Share of torch API uses that port without open questions: a use with an equivalent "
    "MindSpore API counts 1, a use whose MindSpore API differs in parameters counts 1/2 "
    "(a mechanical rewrite that needs review), and a missing, unmapped or dynamic-shape use "
    "counts 0. Only code that runs is a use: torch types named in annotations, isinstance targets "
    "and base classes (TMS106), possible tensor methods whose receiver is not proven a tensor "
    "(TMS105), readiness checks and files that could not be analysed are not in the figure."
)

_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def verification_record(device: str = DEFAULT_DEVICE) -> dict[str, tuple[str, str]]:
    """`api -> (status, label)` for `device` from ``src/torch2ms/data/verification.json`` (written by ``torch2ms
    verify``): the status of the form the fix writes for the device (passed, failed, error, skipped, or
    none when verify did not run there) and the line reports and hovers show, e.g. "verified on
    MindSpore 2.10.0, CPU: mindspore.nn.Conv2d as the fix writes it, 26 of 26 cases agree". Empty when
    there is no readable record."""
    record = load_record()
    if record is None:
        return {}
    return {api: (record.status(api, device), record.label(api, device) or "not verified") for api in record.entries}


def rewrite_preview(diag: Diagnostic, text: str | list[str] | None) -> dict[str, Any] | None:
    """The lines a finding's fix changes, before and after the fix; None without a fix or source.

    Edits far apart (an import added at the top, a call rewritten below) are shown
    as separate hunks joined by a line holding only "...".
    """
    fix = diag.fix
    if fix is None or not fix.edits or text is None:
        return None
    lines = split_lines(text) if isinstance(text, str) else text
    edits = sorted(fix.edits, key=lambda e: (e.span.start_line, e.span.start_col, e.span.end_line, e.span.end_col))
    if edits[0].span.start_line < 1 or max(e.span.end_line for e in edits) > len(lines):
        return None
    groups: list[list[Any]] = []
    for edit in edits:
        if groups and edit.span.start_line <= max(e.span.end_line for e in groups[-1]) + 1:
            groups[-1].append(edit)
        else:
            groups.append([edit])
    befores, afters = [], []
    first_line = None
    for group in groups:
        hunk = _hunk(lines, group)
        if hunk is None:
            return None
        start, old_lines, new_lines = hunk
        if old_lines == new_lines:
            continue
        first_line = start if first_line is None else first_line
        if old_lines:  # an insertion has no "before" lines
            befores.append(_clip(old_lines))
        if new_lines:  # a deletion has no "after" lines
            afters.append(_clip(new_lines))
    if first_line is None:
        return None
    return {"title": fix.title, "safe": fix.safe, "start_line": first_line,
            "before": "\n...\n".join(befores), "after": "\n...\n".join(afters)}


# A preview shows whole lines up to LONG_LINE characters. On a longer line (generated code, thousands of
# calls on one line) it keeps EDGE characters around each end of each edit and writes "…" for the rest,
# so a report grows with the number of findings, not with the square of a line's length.
LONG_LINE = 240
EDGE = 40
ELLIPSIS = "\u2026"


def _kept(joined: str, resolved: list[tuple[int, int, str]]) -> list[tuple[int, int]]:
    """The parts of `joined` a preview shows (sorted, merged): every short line whole, EDGE characters
    around each edit's ends on a long one; line breaks are always kept."""
    out: list[tuple[int, int]] = []
    start = 0
    while start <= len(joined):
        end = joined.find("\n", start)
        end = len(joined) if end < 0 else end
        if end - start <= LONG_LINE:
            out.append((start, end + 1))
        else:
            parts = [(max(start, p - EDGE), min(end, p + EDGE)) for s, e, _ in resolved for p in (s, e)
                     if start - EDGE <= p <= end + EDGE]
            parts.append((end, end + 1))
            out.extend(parts)
        start = end + 1
    out.sort()
    merged: list[tuple[int, int]] = []
    for a, b in out:
        b = min(b, len(joined))
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        elif a < b:
            merged.append((a, b))
    return merged


def _shown(joined: str, kept: list[tuple[int, int]], a: int, b: int) -> str:
    """joined[a:b] as the preview shows it: the kept parts, "…" for each gap."""
    pieces: list[str] = []
    at = a
    for k0, k1 in kept[max(0, bisect.bisect_right(kept, (a, a)) - 1):]:
        if k0 >= b:
            break
        k0, k1 = max(k0, a), min(k1, b)
        if k0 >= k1:
            continue
        if k0 > at:
            pieces.append(ELLIPSIS)
        pieces.append(joined[k0:k1])
        at = k1
    if at < b:
        pieces.append(ELLIPSIS)
    return "".join(pieces)


def _cut(text: str) -> str:
    """Replacement text as a preview shows it: a line longer than LONG_LINE keeps its two ends."""
    if len(text) <= LONG_LINE:
        return text
    return "\n".join(line if len(line) <= LONG_LINE else line[:EDGE] + ELLIPSIS + line[-EDGE:]
                     for line in text.split("\n"))


def _hunk(lines: list[str], edits: list[Any]) -> tuple[int, list[str], list[str]] | None:
    first: int = min(e.span.start_line for e in edits)
    last = max(e.span.end_line for e in edits)
    chunk = lines[first - 1:last]
    starts = [0]
    for line in chunk:
        starts.append(starts[-1] + len(line) + 1)
    joined = "\n".join(chunk)

    def offset(line: int, col: int) -> int:
        return min(starts[line - first] + col, len(joined))

    resolved = sorted(((offset(e.span.start_line, e.span.start_col), offset(e.span.end_line, e.span.end_col), e.text)
                       for e in edits), key=lambda e: (e[0], e[1]))
    if any(end < start for start, end, _ in resolved):
        return None
    kept = _kept(joined, resolved)
    before = _shown(joined, kept, 0, len(joined))
    after_parts: list[str] = []
    at = 0
    for start, end, new in resolved:  # edits over the original text, in order (none overlap)
        if start < at:
            return None
        after_parts += (_shown(joined, kept, at, start), _cut(new))
        at = end
    after_parts.append(_shown(joined, kept, at, len(joined)))
    after = "".join(after_parts)
    # Keep only the lines that change: drop the lines both versions share at either end.
    old_lines, new_lines = before.split("\n"), after.split("\n")
    head = 0
    while head < min(len(old_lines), len(new_lines)) and old_lines[head] == new_lines[head]:
        head += 1
    tail = 0
    while (tail < min(len(old_lines), len(new_lines)) - head
           and old_lines[-1 - tail] == new_lines[-1 - tail]):
        tail += 1
    return first + head, old_lines[head:len(old_lines) - tail], new_lines[head:len(new_lines) - tail]


PREVIEW_LINES = 8


def _clip(lines: list[str]) -> str:
    if len(lines) > PREVIEW_LINES:
        lines = lines[:PREVIEW_LINES - 1] + [f"... ({len(lines) - PREVIEW_LINES + 1} more lines)"]
    return "\n".join(lines)


def _finding(diag: Diagnostic, text: list[str] | None, facts: tuple[str, str], effort: str | None) -> dict[str, Any]:
    # Built field by field (not Diagnostic.to_dict) so that the schema in docs/json-schema.json
    # changes only when SCHEMA_VERSION does.
    fix = None
    if diag.fix is not None:
        fix = {"title": diag.fix.title, "safe": diag.fix.safe,
               "edits": [{"span": e.span.to_dict(), "text": e.text} for e in diag.fix.edits]}
    out = {
        "code": diag.code,
        "rule": CODES[diag.code].name if diag.code in CODES else diag.code,
        "severity": diag.severity.value,
        "category": diag.category.value,
        "confidence": diag.confidence.value,
        "message": diag.message,
        "span": diag.span.to_dict(),
        "torch_api": diag.torch_api,
        "mindspore_api": diag.mindspore_api,
        "doc_url": diag.doc_url,
        "fix": fix,
        "rewrite": rewrite_preview(diag, text),
        "context": facts[0],
        "fingerprint": facts[1],
        "effort": effort,
    }
    if diag.runtime:  # joined from a trace (scan --trace)
        out["runtime"] = diag.runtime
    return out


def _primary_category(counts: dict[str, int]) -> str:
    for category in API_CATEGORIES:
        if counts.get(category):
            return category
    return next(iter(counts), "unmapped")


def _directory(path: str) -> str:
    folder = path.rsplit("/", 1)[0] if "/" in path else "."
    return folder or "/"


def api_classes(results: Sequence[FileResult], table: Any, version: tuple[int, ...],
                device: str | None) -> dict[str, tuple[str, str]]:
    """Each torch API's category and effort class, as every output shows them (the JSON and HTML API
    table, `--statistics`): the worst category of its findings, and the most work among its uses'
    findings (among all its findings when it has no use: a type reference, an unconfirmed method)."""
    categories: dict[str, dict[str, int]] = {}
    efforts: dict[str, list[int]] = {}  # [most work among uses, most work among all]
    for result in results:
        for diag in result.diagnostics:
            if not diag.torch_api or diag.category is Category.FILE_ERROR:
                continue
            counts = categories.setdefault(diag.torch_api, {})
            counts[diag.category.value] = counts.get(diag.category.value, 0) + 1
            rank = EFFORTS.index(finding_effort(diag, table, version, device) or "unknown")
            worst = efforts.setdefault(diag.torch_api, [-1, 0])
            worst[1] = max(worst[1], rank)
            if diag.category.value in USE_CATEGORIES:
                worst[0] = max(worst[0], rank)
    return {api: (_primary_category(counts), EFFORTS[efforts[api][0] if efforts[api][0] >= 0 else efforts[api][1]])
            for api, counts in categories.items()}


def readiness(by_category: dict[str, int]) -> dict[str, Any]:
    uses = sum(by_category.get(c, 0) for c in READINESS_CATEGORIES)
    ready = sum(by_category.get(c, 0) * w for c, w in READINESS_WEIGHTS.items())
    percent = round(100.0 * ready / uses, 1) if uses else 100.0
    return {"percent": percent, "weighted_ready_uses": ready, "api_uses": uses,
            "definition": READINESS_DEFINITION}


def project_name(paths: Sequence[str] | None) -> str:
    """A project's name from the scanned paths: the folder's (or file's) name."""
    if not paths:
        return "project"
    names = []
    for path in paths:
        absolute = os.path.abspath(path)
        name = os.path.basename(absolute.rstrip(os.sep)) or absolute
        if os.path.isfile(absolute) and len(paths) == 1:
            name = os.path.basename(os.path.dirname(absolute)) or name
        names.append(name)
    unique = list(dict.fromkeys(names))
    return unique[0] if len(unique) == 1 else ", ".join(unique[:3]) + (" …" if len(unique) > 3 else "")


def file_object(result: FileResult, root: str | None = None, source: str | None = None,
                target_version: str | None = None, *, device: str | None) -> dict[str, Any]:
    """A file's entry of the document's "files" list; `source` is its text (for rewrite previews and
    the findings' context and fingerprint)."""
    table = load_table()
    version = parse_version(target_version or table.meta.default_target)
    text = split_lines(source) if source is not None and any(d.fix for d in result.diagnostics) else None
    facts = finding_facts(result, source)
    counts: dict[str, int] = {}
    for diag in result.diagnostics:
        counts[diag.category.value] = counts.get(diag.category.value, 0) + 1
    error = result.error
    return {
        "path": display_path(result.path, root),
        "lines": result.lines,
        "error": error.message if error else None,
        "findings": len(result.diagnostics),
        "by_category": {c: counts[c] for c in ALL_CATEGORIES if c in counts},
        "diagnostics": [_finding(diag, text, fact, finding_effort(diag, table, version, device))
                        for diag, fact in zip(result.diagnostics, facts)],
    }


def head(results: list[FileResult], target_version: str, root: str | None = None,
         paths: Sequence[str] | None = None, date: str | None = None,
         device: str = DEFAULT_DEVICE) -> dict[str, Any]:
    """The document without its "files" list: everything that sums over the files."""
    table = load_table()
    version = parse_version(target_version)
    verification = verification_record(device)
    summary = ScanSummary.of(results)

    failures: list[dict[str, Any]] = []
    apis: dict[str, dict[str, Any]] = {}
    directories: dict[str, dict[str, int]] = {}
    by_severity: dict[str, int] = {}
    by_effort: dict[str, int] = {}
    for result in sorted(results, key=lambda r: r.path):
        path = display_path(result.path, root)
        dir_counts = directories.setdefault(_directory(path), {})
        for diag in result.diagnostics:
            category = diag.category.value
            dir_counts[category] = dir_counts.get(category, 0) + 1
            by_severity[diag.severity.value] = by_severity.get(diag.severity.value, 0) + 1
            effort = finding_effort(diag, table, version, device)
            if effort is not None:
                by_effort[effort] = by_effort.get(effort, 0) + 1
            if diag.torch_api and diag.category is not Category.FILE_ERROR:
                row = apis.setdefault(diag.torch_api, {"uses": 0, "by_category": {}, "files": set(),
                                                        "locations": [], "mindspore_api": None})
                if category in USE_CATEGORIES:
                    row["uses"] += 1
                row["by_category"][category] = row["by_category"].get(category, 0) + 1
                row["files"].add(path)
                row["locations"].append({"path": path, "line": diag.span.start_line,
                                         "column": diag.span.start_col + 1, "code": diag.code})
                if row["mindspore_api"] is None and diag.mindspore_api:
                    row["mindspore_api"] = diag.mindspore_api
        error = result.error
        if error is not None:
            failures.append({"path": path, "code": error.code, "message": error.message,
                             "line": error.span.start_line})

    classes = api_classes(results, table, version, device)
    api_rows = []
    for api, row in apis.items():
        entry = table.lookup(api)
        target = entry.target_for(version, device) if entry is not None else None
        params = [p.describe() for p in target.params] if target is not None else []
        api_rows.append({
            "api": api,
            "uses": row["uses"],
            "files": len(row["files"]),
            "category": classes[api][0],
            "by_category": {c: row["by_category"][c] for c in ALL_CATEGORIES if c in row["by_category"]},
            "mapped": entry is not None,
            "effort": classes[api][1],
            "mindspore_api": target.api if target is not None else row["mindspore_api"],
            "parameter_differences": params,
            "note": advice(entry, version, device) if entry is not None else "",
            "verification": verification.get(api, ("none", "not verified"))[1],
            "verification_status": verification.get(api, ("none", "not verified"))[0],
            "locations": row["locations"],
        })
    api_rows.sort(key=lambda r: (-int(r["uses"]), str(r["api"])))

    by_category = {c: summary.by_category[c] for c in ALL_CATEGORIES if c in summary.by_category}
    api_uses = summary.uses  # the readiness figure's uses: those of the API rows and unnamed dynamic-shape ones
    dir_rows = [{"path": d, "findings": sum(c.values()),
                 "by_category": {k: c[k] for k in ALL_CATEGORIES if k in c}}
                for d, c in directories.items()]
    dir_rows.sort(key=lambda r: (-int(str(r["findings"])), str(r["path"])))
    used_codes = set(summary.by_code)
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "torch2ms", "version": __version__, "mapping_table_version": table.meta.version,
                 "target_mindspore_version": target_version, "target_device": device},
        "project": {"name": project_name(paths), "date": date},
        "summary": {
            "files": summary.files,
            "files_failed": summary.files_failed,
            "lines": summary.lines,
            "findings": summary.diagnostics,
            "api_uses": api_uses,
            "distinct_apis": len(api_rows),
            "by_code": summary.by_code,
            "by_category": by_category,
            "by_severity": {s: by_severity[s] for s in sorted(by_severity, key=lambda s: _SEVERITY_ORDER.get(s, 9))},
            "by_api": summary.by_api,
            "by_effort": {e: by_effort[e] for e in EFFORTS if e in by_effort},
            "readiness": readiness(by_category),
        },
        "rules": [
            {"code": c.code, "name": c.name, "severity": c.severity.value, "category": c.category.value,
             "summary": c.summary, "doc_url": c.doc_url, "used": c.code in used_codes}
            for c in CODES.values()
        ],
        "failures": failures,
        "apis": api_rows,
        "directories": dir_rows,
    }


def document(results: list[FileResult], target_version: str, root: str | None = None,
             paths: Sequence[str] | None = None, date: str | None = None,
             sources: dict[str, str | None] | None = None, device: str = DEFAULT_DEVICE) -> dict[str, Any]:
    """The report document. `sources` maps a result's path to its text (for rewrite previews)."""
    sources = sources or {}
    doc = head(results, target_version, root, paths, date, device)
    doc["files"] = [file_object(r, root, sources.get(r.path), target_version, device=device)
                    for r in sorted(results, key=lambda r: r.path)]
    return doc


def read_sources(results: list[FileResult]) -> dict[str, str | None]:
    """The text of every scanned file that has a finding (for rewrite previews and fingerprints)."""
    from ..api import read_source

    out: dict[str, str | None] = {}
    for result in results:
        if result.diagnostics:
            out[result.path] = read_source(result.path)[0]
    return out


def write(out: IO[str], results: list[FileResult], target_version: str, root: str | None = None,
          paths: Sequence[str] | None = None, date: str | None = None, device: str = DEFAULT_DEVICE) -> None:
    """Write the document file by file: the same text as `render`, without holding all of it."""
    doc = head(results, target_version, root, paths, date, device)
    doc["files"] = []
    # The head alone is tens of MB for a large project: write its pieces as they are encoded (the
    # same text as json.dumps(doc, indent=2)) and keep back the empty "files" list at its end.
    pending = ""
    for piece in json.JSONEncoder(indent=2).iterencode(doc):
        pending += piece
        if len(pending) > 1 << 16:
            out.write(pending[:-16])
            pending = pending[-16:]
    assert pending.endswith("[]\n}")
    out.write(pending[:-len("[]\n}")])
    ordered = sorted(results, key=lambda r: r.path)
    if not ordered:
        out.write("[]\n}\n")
        return
    from ..api import read_source

    out.write("[\n")
    for index, result in enumerate(ordered):
        source = read_source(result.path)[0] if result.diagnostics else None
        item = json.dumps(file_object(result, root, source, target_version, device=device), indent=2).replace("\n", "\n    ")
        out.write(("    " if index == 0 else ",\n    ") + item)
    out.write("\n  ]\n}\n")


def render(results: list[FileResult], target_version: str, root: str | None = None,
           paths: Sequence[str] | None = None, date: str | None = None, device: str = DEFAULT_DEVICE) -> str:
    buffer = io.StringIO()
    write(buffer, results, target_version, root, paths, date, device)
    return buffer.getvalue()
