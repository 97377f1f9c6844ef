"""The project HTML report: one self-contained page (no network), built with Jinja2.

The page answers "how much is left" first: findings by effort class (remove,
automatic, manual, blocker), the readiness figure, the progress since an earlier
report (``--compare``), the blockers ranked by use, readiness per directory; then
the API, file and directory tables (sortable, filterable, exported as CSV) and each
file's source with its findings.

It stays responsive at any size. The summary, charts and rules are plain HTML; the
tables and file sections are built by the page's script, on demand, from compact
embedded data: one JSON element with the tables and a string table (repeated texts
such as paths, messages and API names stored once; a message names its API by a
placeholder), and per file one element with its findings (9 numbers each) and
fixes, and one with its source lines and highlighting, parsed only when the file is
shown. Source text fills what is left of PAGE_BUDGET once the rest is in: excerpts
around the findings first (CONTEXT lines, fewer when they do not fit), then whole
files while the budget lasts; past it a file lists its findings without source.

Safety: every text goes through Jinja2's autoescape, and the embedded JSON has
``<``, ``>``, ``&`` and the JavaScript line separators written as ``\\uXXXX``
escapes, so a scanned file containing ``</script>`` or ``<!--`` cannot end the
script element; the script inserts text with ``textContent`` only.

Paths are shown relative to the scanned folder. Output is deterministic: the same
results, sources and date give the same bytes.
"""

from __future__ import annotations

import datetime
import gc
import json
import math
import os
import re
from collections.abc import Callable, Sequence
from typing import Any

import jinja2
from markupsafe import Markup

from ..codes import CODES
from ..effort import EFFORTS, LABELS as EFFORT_LABELS
from ..model import DEFAULT_DEVICE, FileResult
from ..project_graph import imported_files
from ..source import split_lines
from ..verify.model_record import summary as model_summary
from ..strings import StringTable
from . import json as json_report
from .highlight import CLASSES, highlight
from .order import work_order

PAGE_BUDGET = 14 * 1024 * 1024  # bytes of embedded data (source included), below the 15 MiB page target
CONTEXT = 3  # lines of source around each finding in an excerpt (then 1, then 0 when they do not fit)
TOP_BLOCKERS = 10
TOP_DIRECTORIES = 12
ORDER_SHOWN = 15  # files listed in the suggested order of work
# Effort classes a person must work on (the rest a fix or a removal does): the work left in a file.
PERSON_WORK = ("manual", "blocker", "unknown", "file_error")
FINDING_FIELDS = 8  # line step, col, end line step, end col, kind, message, api, doc url (see report.js)

CATEGORY_LABELS = {
    "missing": "Missing",
    "dynamic_shape": "Dynamic shape",
    "unmapped": "Unmapped",
    "uncertain": "Unconfirmed (maybe not torch)",
    "type_reference": "Type reference (nothing runs)",
    "diff_params": "Different parameters",
    "equivalent": "Equivalent",
    "readiness": "Readiness check",
    "port_check": "MindSpore check",
    "file_error": "File error",
}
SHORT_LABELS = {
    "missing": "Missing",
    "dynamic_shape": "Dyn. shape",
    "unmapped": "Unmapped",
    "uncertain": "Unconfirmed",
    "type_reference": "Type ref.",
    "diff_params": "Diff. params",
    "equivalent": "Equivalent",
    "readiness": "Readiness",
    "port_check": "MS check",
    "file_error": "Errors",
}
CATEGORY_COLORS = {
    "missing": "#d64545",
    "dynamic_shape": "#8a56cc",
    "unmapped": "#7d8ca3",
    "uncertain": "#b4bccb",
    "type_reference": "#cfd6e0",
    "diff_params": "#e0a02a",
    "equivalent": "#2f9e62",
    "readiness": "#2a93b0",
    "port_check": "#c2571a",
    "file_error": "#7a1f1f",
}
EFFORT_COLORS = {"remove": "#5b8def", "automatic": "#2f9e62", "manual": "#e0a02a", "blocker": "#d64545",
                 "unknown": "#98a2b3"}
EFFORT_HELP = {
    "remove": "the call goes away in MindSpore",
    "automatic": "a rewrite does it (torch2ms scan --fix)",
    "manual": "a person ports it, along a known workaround",
    "blocker": "MindSpore has nothing to port it to",
    "unknown": "not in the mapping tables: look it up",
}


def shown_root(root: str | None) -> str | None:
    """The scanned folder as the page names it: relative to the working directory when inside it, else its
    name; never the machine's absolute path (a report is shared)."""
    if not root:
        return None
    relative = os.path.relpath(root)
    if relative == ".":
        return "the working directory"
    if relative == ".." or relative.startswith(".." + os.sep) or os.path.isabs(relative):
        return os.path.basename(os.path.normpath(root)) or None
    return relative


def shown_file(path: str) -> str:
    """A file the page names (a verified model's source, an earlier report): as given when relative, else
    relative to the working directory when inside it, else its name alone."""
    if not os.path.isabs(path):
        return path
    relative = os.path.relpath(path)
    if relative == ".." or relative.startswith(".." + os.sep) or os.path.isabs(relative):
        return os.path.basename(path)
    return relative


def _shown_model(model: dict[str, Any]) -> dict[str, Any]:
    """A verify-model summary with its files named as the page names files (never an absolute path)."""
    out = dict(model)
    for key in ("original", "ported"):
        file, sep, factory = str(model[key]).rpartition(":")
        out[key] = f"{shown_file(file)}{sep}{factory}" if sep else shown_file(factory)
    return out


def scan_root(paths: Sequence[str] | None) -> str | None:
    """The folder the report's paths are relative to: the scanned folder (a scanned file's folder), or
    the deepest folder holding every scanned path."""
    if not paths:
        return None
    folders = [p if os.path.isdir(p) else os.path.dirname(p) or "." for p in (os.path.abspath(x) for x in paths)]
    return os.path.commonpath(folders)


# What a trace said of a finding (scan --trace), as the page shows it.
RUNTIME_LABELS = {"confirmed": "confirmed at runtime", "runtime_only": "seen only at runtime",
                  "shape_varied": "shape varied at runtime"}


def _runtime_counts(doc: dict[str, Any]) -> dict[str, int]:
    counts = dict.fromkeys(RUNTIME_LABELS, 0)
    for file in doc["files"]:
        for diag in file["diagnostics"]:
            if diag.get("runtime") in counts:
                counts[diag["runtime"]] += 1
    return counts if any(counts.values()) else {}


def _script_json(value: Any) -> Markup:
    """JSON that is safe inside a <script> element: no '<', '>', '&' or line separators left."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=False)
    text = (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    return Markup(text)


def _windows(lines: int, marks: list[int], context: int) -> list[tuple[int, int]]:
    """Merged 1-based inclusive line ranges around `marks`."""
    out: list[tuple[int, int]] = []
    for line in sorted(set(marks)):
        if not 1 <= line <= lines:
            continue
        start, end = max(1, line - context), min(lines, line + context)
        if out and start <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _findings(file: dict[str, Any], api_index: dict[str, int], kinds: StringTable, strings: StringTable,
              api_names: list[str]) -> tuple[list[int], list[Any]]:
    """A file's findings as one flat list (FINDING_FIELDS numbers each: the line as a step from the
    previous finding's, the end line as a step from the line, a doc url only where it is not the code's)
    and its fixes (each with the number of its finding)."""
    flat: list[int] = []
    fixes: list[Any] = []
    previous = 0
    for number, d in enumerate(file["diagnostics"]):
        span = d["span"]
        api = api_index.get(d["torch_api"] or "", -1)
        message = d["message"]
        if d["fix"] and d["fix"]["edits"]:  # edit lines as steps from the finding's line and the edit's start
            item: list[Any] = [number, strings(d["fix"]["title"]), 1 if d["fix"]["safe"] else 0]
            for edit in d["fix"]["edits"]:
                e = edit["span"]
                item.extend((e["start_line"] - span["start_line"], e["start_col"], e["end_line"] - e["start_line"],
                             e["end_col"], strings(edit["text"])))
            fixes.append(item)
        flat.extend((span["start_line"] - previous, span["start_col"], span["end_line"] - span["start_line"],
                     span["end_col"], kinds(f"{d['code']} {d['severity']} {d['category']} {d.get('runtime') or '-'}"),
                     strings(_template(message, api, api_names)), api, strings(_own_doc(d))))
        previous = span["start_line"]
    return flat, fixes


def _kind(key: str) -> list[str]:
    """A finding's kind as the page reads it: code, level, category, the code's documentation link and
    what a trace said of it (scan --trace; "" without)."""
    code, severity, category, runtime = key.split(" ")
    return [code, severity, category, CODES[code].doc_url if code in CODES else "", RUNTIME_LABELS.get(runtime, "")]


def _template(message: str, api: int, api_names: list[str]) -> str:
    """A message with its API's name replaced by a placeholder (the page puts the name back)."""
    return message.replace(api_names[api], "\x01") if api >= 0 else message


def _own_doc(d: dict[str, Any]) -> str | None:
    """A finding's documentation link, or None where it is its code's (the page knows those)."""
    code = CODES.get(d["code"])
    return None if code is not None and d["doc_url"] == code.doc_url else d["doc_url"]


def _string_counts(files: list[dict[str, Any]], api_index: dict[str, int], api_names: list[str]) -> dict[str, int]:
    """How often each text of the findings is used, for `StringTable.prime`."""
    counts: dict[str, int] = {}
    for file in files:
        for d in file["diagnostics"]:
            texts = [_template(d["message"], api_index.get(d["torch_api"] or "", -1), api_names), _own_doc(d)]
            if d["fix"]:
                texts.append(d["fix"]["title"])
                texts.extend(e["text"] for e in d["fix"]["edits"])
            for text in texts:
                if text is not None:
                    counts[text] = counts.get(text, 0) + 1
    return counts


def _source_chunks(text: str, lines: list[str], windows: list[tuple[int, int]]) -> list[Any]:
    ranges = highlight(text, upto=windows[-1][1] if windows else 0)
    return [[start, lines[start - 1:end], ranges[start - 1:end]] for start, end in windows]


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _choose_sources(texts: list[str | None], marks: list[list[int]], budget: int) -> list[tuple[list[Any], int]]:
    """Per file: its source chunks and 0 (none), 1 (excerpts) or 2 (the whole file), within `budget` bytes.

    Excerpts come first, with CONTEXT lines around each finding, or 1 or 0 when those do not fit (files
    with fewer findings first, so that as many files as can show theirs); whole files then replace
    excerpts in path order while the budget lasts."""
    split = [split_lines(t) if t is not None else [] for t in texts]
    chosen: list[tuple[list[Any], int]] = [([], 0) for _ in texts]
    order = sorted((i for i, t in enumerate(texts) if t is not None and marks[i]), key=lambda i: (len(marks[i]), i))

    def text_size(i: int, windows: list[tuple[int, int]]) -> int:
        return sum(len(split[i][n - 1]) + 4 for a, b in windows for n in range(a, b + 1))

    context = CONTEXT
    for context in (CONTEXT, 1, 0):  # estimate: text plus about a third for highlighting and JSON
        if sum(text_size(i, _windows(len(split[i]), marks[i], context)) for i in order) * 4 // 3 <= budget:
            break
    left = budget
    for i in order:
        text = texts[i]
        assert text is not None
        windows = _windows(len(split[i]), marks[i], context)
        chunks = _source_chunks(text, split[i], windows)
        size = _size(chunks)
        if size <= left:
            chosen[i] = (chunks, 1)
            left -= size
    for i, text in enumerate(texts):  # whole files in path order while the budget lasts
        if text is None or not marks[i] or chosen[i][1] != 1 or text_size(i, [(1, len(split[i]))]) > left:
            continue
        whole = _source_chunks(text, split[i], [(1, len(split[i]))])
        extra = _size(whole) - _size(chosen[i][0])
        if extra <= left:
            chosen[i] = (whole, 2)
            left -= extra
    return chosen


def _arc_segments(counts: dict[str, int], labels: dict[str, str], colors: dict[str, str]) -> list[dict[str, Any]]:
    """Donut chart segments as stroke-dasharray figures on a circle of radius 54."""
    total = sum(counts.values())
    circumference = 2 * math.pi * 54
    out = []
    offset = 0.0
    for key, count in counts.items():
        if not count:
            continue
        length = circumference * count / total
        out.append({"key": key, "label": labels.get(key, key), "count": count, "color": colors.get(key, "#999"),
                    "dash": f"{length:.2f} {circumference - length:.2f}", "offset": f"{-offset:.2f}",
                    "percent": f"{100.0 * count / total:.1f}"})
        offset += length
    return out


def _bars(rows: list[tuple[str, int]]) -> list[dict[str, Any]]:
    """Bar chart rows: the whole label (the page wraps a long one, never cuts it) and the bar's length as
    a fraction of the longest."""
    top = max((n for _, n in rows), default=0) or 1
    return [{"label": label, "pieces": _pieces(label), "count": n, "fraction": f"{max(0.005, n / top):.4f}"}
            for label, n in rows]


def _pieces(label: str) -> list[str]:
    """A label cut after each '.', '/' and '_': the page may wrap a long one there (<wbr>) first."""
    return [p for p in re.split(r"(?<=[./_])", label) if p]


def _stacked(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Stacked bar rows (findings by effort class): each part's share of the row's bar."""
    top = max((r["findings"] for r in rows), default=0) or 1
    out = []
    for row in rows:
        parts = []
        for effort in EFFORTS + ("file_error",):
            count = row["by_effort"].get(effort, 0)
            if count:
                parts.append({"share": count, "color": EFFORT_COLORS.get(effort, "#7a1f1f"),
                              "title": f"{EFFORT_LABELS.get(effort, 'File error')}: {count}"})
        out.append({"label": row["path"], "pieces": _pieces(row["path"]), "count": row["findings"], "parts": parts,
                    "fraction": f"{max(0.005, row['findings'] / top):.4f}"})
    return out


def _directories(files: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every folder with the totals of the files below it (subfolders included), by path."""
    rows: dict[str, dict[str, Any]] = {}
    for file in files:
        parts = file["path"].split("/")[:-1]
        for depth in range(len(parts) + 1):
            path = "/".join(parts[:depth]) or "."
            row = rows.setdefault(path, {"path": path, "depth": depth, "files": 0, "lines": 0, "findings": 0,
                                         "by_category": {}, "by_effort": {}})
            row["files"] += 1
            row["lines"] += file["lines"]
            row["findings"] += file["findings"]
            for key, counts in (("by_category", file["by_category"]), ("by_effort", file["by_effort"])):
                for name, count in counts.items():
                    row[key][name] = row[key].get(name, 0) + count
    out = sorted(rows.values(), key=lambda r: r["path"])
    for row in out:
        row["readiness"] = json_report.readiness(row["by_category"])
    return out


def _work_left(file: dict[str, Any]) -> int:
    """A file's findings that a person must port (manual, blocker, unknown, a file error)."""
    return sum(file["by_effort"].get(e, 0) for e in PERSON_WORK)


def _order(results: list[FileResult], files: list[dict[str, Any]], roots: Sequence[str]) -> list[dict[str, Any]]:
    """The suggested order of work (report/order.py) over the files with findings, as the page lists it."""
    work = {i: (_work_left(f), f["findings"]) for i, f in enumerate(files) if f["findings"]}
    steps = work_order(work, imported_files(results, roots))
    out = []
    for rank, step in enumerate(steps, 1):
        file = files[step.file]
        after = [files[i]["path"] for i in step.after]
        if step.cycle:
            why = "in an import cycle: start here, where the fewest imports are still to port"
        elif after:
            why = "after " + ", ".join(after[:3]) + (f" and {len(after) - 3} more" if len(after) > 3 else "") \
                + ", which it imports"
        else:
            why = "imports no file still to port"
        out.append({"rank": rank, "index": step.file, "path": file["path"], "findings": file["findings"],
                    "left": work[step.file][0], "why": why})
    return out


def _file_efforts(file: dict[str, Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for d in file["diagnostics"]:
        key = d["effort"] or "file_error"
        counts[key] = counts.get(key, 0) + 1
    return counts


def _environment() -> jinja2.Environment:
    loader = jinja2.PackageLoader("torch2ms.report", "templates")
    env = jinja2.Environment(
        loader=loader,
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    assets: dict[str, Markup] = {}

    def asset(name: str) -> Markup:
        # CSS and script are inlined verbatim (not parsed as templates); they are ours, not user data.
        if name not in assets:
            assets[name] = Markup(loader.get_source(env, name)[0])
        return assets[name]

    env.globals["asset"] = asset
    env.filters["num"] = lambda n: f"{n:,}"
    env.filters["signed"] = lambda n: f"{n:+,}" if n else "0"
    env.filters["wnum"] = lambda n: f"{n:,.1f}".rstrip("0").rstrip(".")
    env.globals["labels"] = CATEGORY_LABELS
    env.globals["short"] = SHORT_LABELS
    env.globals["colors"] = CATEGORY_COLORS
    env.globals["effort_labels"] = EFFORT_LABELS
    env.globals["effort_colors"] = EFFORT_COLORS
    env.globals["effort_help"] = EFFORT_HELP
    return env


def build(results: list[FileResult], target_version: str, paths: Sequence[str] | None = None,
          date: str | None = None, root: str | None = None,
          read: Callable[[str], str | None] | None = None,
          compare: str | None = None, device: str = DEFAULT_DEVICE,
          models: Sequence[dict[str, Any]] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The JSON document and the template context. `read` gives a file's text (default: `read_source`);
    `root` the folder paths are relative to (default: the scanned folder); `compare` an earlier JSON report;
    `models`: `verify-model --record` results, shown in their own section."""
    if read is None:
        from ..api import read_source

        def read(path: str) -> str | None:
            return read_source(path)[0]

    results = sorted(results, key=lambda r: r.path)
    root = root or scan_root(paths)
    date = date or datetime.date.today().isoformat()
    sources: dict[str, str | None] = {r.path: read(r.path) for r in results if r.diagnostics}
    doc = json_report.document(results, target_version, root, paths=paths, date=date, sources=sources,
                               device=device)
    summary = doc["summary"]
    files = doc["files"]
    for file in files:
        file["by_effort"] = _file_efforts(file)

    strings, kinds = StringTable(), StringTable()
    api_names = [row["api"] for row in doc["apis"]]
    api_index = {name: i for i, name in enumerate(api_names)}
    strings.prime(_string_counts(files, api_index, api_names))
    cats, efforts = json_report.ALL_CATEGORIES, EFFORTS + ("file_error",)
    api_rows = [[strings(a["api"]), a["uses"], a["files"], cats.index(a["category"]), efforts.index(a["effort"]),
                 strings(a["mindspore_api"]), [strings(p) for p in a["parameter_differences"]], strings(a["note"]),
                 strings(a["verification"]), strings(a["verification_status"]),
                 [a["by_category"].get(c, 0) for c in cats]] for a in doc["apis"]]
    finding_blobs, fix_blobs = [], []
    for file in files:
        flat, fixes = _findings(file, api_index, kinds, strings, api_names)
        finding_blobs.append(flat)
        fix_blobs.append(fixes)
    directories = _directories(files)
    dir_rows = [[strings(d["path"]), d["depth"], d["files"], d["lines"], d["findings"],
                 [d["by_effort"].get(e, 0) for e in efforts], d["readiness"]["percent"],
                 d["readiness"]["api_uses"]] for d in directories]

    texts = [sources.get(r.path) for r in results]
    marks = [[d.span.start_line for d in r.diagnostics] for r in results]
    per_file = [_size(f) + _size(x) + 64 for f, x in zip(finding_blobs, fix_blobs)]
    file_rows_size = len(files) * 80 + _size(api_rows) + _size(dir_rows) + _size(strings.items)
    budget = max(0, PAGE_BUDGET - sum(per_file) - file_rows_size - 400_000)  # 400 kB: markup, CSS, script
    chosen = _choose_sources(texts, marks, budget)
    file_rows = []
    for file, (chunks, state) in zip(files, chosen):
        shown = sum(len(c[1]) for c in chunks)
        file_rows.append([strings(file["path"]), file["lines"], file["findings"], strings(file["error"]),
                          [file["by_category"].get(c, 0) for c in cats],
                          [file["by_effort"].get(e, 0) for e in efforts], state, shown,
                          json_report.readiness(file["by_category"])["percent"], _work_left(file)])
    data = {
        "s": strings.items, "kinds": [_kind(k) for k in kinds.items], "cats": list(cats),
        "catLabels": [CATEGORY_LABELS[c] for c in cats], "efforts": list(efforts),
        "effortLabels": [EFFORT_LABELS.get(e, "File error") for e in efforts], "classes": list(CLASSES),
        "effortShort": ["Remove", "Automatic", "Manual", "Blocker", "Unknown", "Errors"],
        "apis": api_rows, "files": file_rows, "dirs": dir_rows,
    }
    file_data = [(i, _script_json({"f": flat, "x": fixes}), _script_json(chunks) if chunks else None)
                 for i, (flat, fixes, (chunks, _)) in enumerate(zip(finding_blobs, fix_blobs, chosen)) if flat]

    blockers = [(a["api"], a["uses"]) for a in doc["apis"] if a["effort"] == "blocker" and a["uses"]]
    blockers.sort(key=lambda r: (-r[1], r[0]))
    by_effort = {e: summary["by_effort"].get(e, 0) for e in EFFORTS}
    errors = summary["by_category"].get("file_error", 0)
    dir_chart = [d for d in directories if d["depth"] == 1] or directories[:1]
    dir_chart.sort(key=lambda r: (-int(r["findings"]), str(r["path"])))
    order_all = _order(results, files, paths or ([root] if root else []))
    order = order_all[:ORDER_SHOWN]
    context = {
        "doc": doc,
        "summary": summary,
        "root": shown_root(root),
        "all_categories": cats,
        "api_categories": json_report.API_CATEGORIES,
        "efforts": EFFORTS,
        "by_effort": by_effort,
        "file_errors": errors,
        "donut": _arc_segments({c: summary["by_category"].get(c, 0) for c in cats}, CATEGORY_LABELS, CATEGORY_COLORS),
        "blocker_bars": _bars(blockers[:TOP_BLOCKERS]),
        "blockers": len(blockers),
        "apis_used": sum(1 for a in doc["apis"] if a["uses"]),
        "order": order,
        "order_more": max(0, len(order_all) - ORDER_SHOWN),
        "empty_files": sum(1 for f in files if not f["findings"]),
        "blocker_uses": sum(n for _, n in blockers),
        "dir_bars": _stacked(dir_chart[:TOP_DIRECTORIES]),
        "dir_more": max(0, len(dir_chart) - TOP_DIRECTORIES),
        "excerpted": sum(1 for _, state in chosen if state == 1),
        "without_source": sum(1 for (_, state), f in zip(chosen, files) if state == 0 and f["diagnostics"]),
        "context_lines": CONTEXT,
        "progress": None,
        "runtime": _runtime_counts(doc),
        "data": _script_json(data),
        "file_data": file_data,
        "models": [_shown_model(model_summary(record)) for record in models or ()],
    }
    if compare:
        from .progress import progress

        context["progress"] = progress(compare, results, lambda p: sources.get(p) if p in sources else read(p),
                                       summary, target_version, device)
    return doc, context


def render(results: list[FileResult], target_version: str, paths: Sequence[str] | None = None,
           date: str | None = None, root: str | None = None,
           read: Callable[[str], str | None] | None = None, compare: str | None = None,
           device: str = DEFAULT_DEVICE, models: Sequence[dict[str, Any]] | None = None) -> str:
    # Thousands of findings make millions of small objects; the cyclic GC only slows their building.
    enabled = gc.isenabled()
    gc.disable()
    try:
        _, context = build(results, target_version, paths=paths, date=date, root=root, read=read, compare=compare,
                           device=device, models=models)
        return _environment().get_template("report.html.j2").render(**context)
    finally:
        if enabled:
            gc.enable()
