"""The project HTML report: one self-contained page (no network), built with Jinja2.

The page is the JSON report's document (`json.document`) rendered by
``templates/report.html.j2`` with its CSS and script inlined. Summary cards,
charts (inline SVG computed here), the API table and the file list are plain
HTML; the per-file sections (source with syntax highlighting and findings at
their lines) are built by the page's script from one embedded JSON blob when a
section is opened, which keeps the page light for thousands of files.

Safety: every text goes through Jinja2's autoescape, and the embedded blob has
``<``, ``>``, ``&`` and the JavaScript line separators written as ``\\uXXXX``
escapes, so a scanned file containing ``</script>`` or ``<!--`` cannot end the
script element; the script inserts source text with ``textContent`` only.

Output is deterministic: the same results, sources and date give the same bytes.
"""

from __future__ import annotations

import datetime
import gc
import json
import math
from collections.abc import Callable, Sequence
from typing import Any

import jinja2
from markupsafe import Markup

from ..model import DEFAULT_DEVICE, FileResult
from . import json as json_report
from ..source import split_lines
from .highlight import CLASSES, highlight

# Source text embedded in full up to this many characters in all; past it,
# files show excerpts around their findings (CONTEXT lines either side) up to
# EXCERPT_BUDGET more characters; past that, files list their findings by line
# without source. Files are taken in path order, so the choice is deterministic.
SOURCE_BUDGET = 4_000_000
EXCERPT_BUDGET = 8_000_000
CONTEXT = 3
TOP_MISSING = 10
ROW_LIMIT = 500  # rows of a table shown before "Show all" (the page's script has the same number)
TOP_DIRECTORIES = 12
BAR_WIDTH = 190.0  # px of the longest bar in the bar charts (viewBox 420 wide, labels take 180)

CATEGORY_LABELS = {
    "missing": "Missing",
    "dynamic_shape": "Dynamic shape",
    "unmapped": "Unmapped",
    "diff_params": "Different parameters",
    "equivalent": "Equivalent",
    "readiness": "Readiness check",
    "file_error": "File error",
}
SHORT_LABELS = {
    "missing": "Missing",
    "dynamic_shape": "Dyn. shape",
    "unmapped": "Unmapped",
    "diff_params": "Diff. params",
    "equivalent": "Equivalent",
    "readiness": "Readiness",
    "file_error": "Errors",
}
CATEGORY_COLORS = {
    "missing": "#d64545",
    "dynamic_shape": "#8a56cc",
    "unmapped": "#7d8ca3",
    "diff_params": "#e0a02a",
    "equivalent": "#2f9e62",
    "readiness": "#2a93b0",
    "file_error": "#7a1f1f",
}


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


class _Strings:
    """A string table: repeated texts (paths, messages, API names) are stored once in the blob."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.items: list[str] = []

    def __call__(self, text: str | None) -> int:
        if text is None:
            return -1
        found = self.index.get(text)
        if found is None:
            found = self.index[text] = len(self.items)
            self.items.append(text)
        return found


def _windows(lines: int, marks: list[int], context: int) -> list[tuple[int, int]]:
    """Merged 1-based inclusive line ranges around `marks`."""
    out: list[tuple[int, int]] = []
    for line in sorted(set(marks)):
        start, end = max(1, line - context), min(lines, line + context)
        if out and start <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _file_blob(file: dict[str, Any], text: str | None, full: bool, api_index: dict[str, int],
               strings: _Strings, excerpt_budget: int = EXCERPT_BUDGET) -> tuple[dict[str, Any], int]:
    """The file's entry in the page's data blob and the excerpt characters it used."""
    findings = []
    for d in file["diagnostics"]:
        span = d["span"]
        rewrite = d["rewrite"]
        findings.append([
            span["start_line"], span["start_col"], span["end_line"], span["end_col"],
            strings(d["code"]), strings(d["severity"]), strings(d["category"]), strings(d["message"]),
            api_index.get(d["torch_api"] or "", -1), strings(d["mindspore_api"]), strings(d["doc_url"]),
            [strings(rewrite["title"]), rewrite["start_line"], strings(rewrite["before"]),
             strings(rewrite["after"]), 1 if rewrite["safe"] else 0] if rewrite else 0,
            strings(d["fix"]["title"]) if d["fix"] else -1,
            strings(RUNTIME_LABELS.get(d.get("runtime", ""), "")),
        ])
    chunks: list[Any] = []
    used = 0
    if text is not None:
        lines = split_lines(text)
        if full:
            windows = [(1, len(lines))]
        else:
            windows = _windows(len(lines), [f[0] for f in findings], CONTEXT)
            used = sum(len(line) + 1 for start, end in windows for line in lines[start - 1:end])
            if used > excerpt_budget:
                return {"f": findings, "c": [], "full": False}, 0
        ranges = highlight(text, upto=windows[-1][1] if windows else 0)
        for start, end in windows:
            chunks.append([start, lines[start - 1:end], ranges[start - 1:end]])
    return {"f": findings, "c": chunks, "full": full}, used


def _arc_segments(by_category: dict[str, int]) -> list[dict[str, Any]]:
    """Donut chart segments as stroke-dasharray figures on a circle of radius 54."""
    total = sum(by_category.values())
    circumference = 2 * math.pi * 54
    out = []
    offset = 0.0
    for category, count in by_category.items():
        if not count:
            continue
        length = circumference * count / total
        out.append({"category": category, "label": CATEGORY_LABELS.get(category, category), "count": count,
                    "color": CATEGORY_COLORS.get(category, "#999"),
                    "dash": f"{length:.2f} {circumference - length:.2f}", "offset": f"{-offset:.2f}",
                    "percent": f"{100.0 * count / total:.1f}"})
        offset += length
    return out


def _short(label: str, width: int = 27) -> str:
    """A chart label that fits: the end of a long name is kept (its most telling part)."""
    return label if len(label) <= width else "\u2026" + label[-(width - 1):]


def _bars(rows: list[tuple[str, int]], width: float) -> list[dict[str, Any]]:
    top = max((n for _, n in rows), default=0) or 1
    return [{"label": label, "short": _short(label), "count": n, "width": f"{max(1.0, width * n / top):.1f}"} for label, n in rows]


def _stacked(rows: list[dict[str, Any]], width: float) -> list[dict[str, Any]]:
    top = max((r["findings"] for r in rows), default=0) or 1
    out = []
    for row in rows:
        x = 0.0
        parts = []
        for category in json_report.ALL_CATEGORIES:
            count = row["by_category"].get(category, 0)
            if not count:
                continue
            w = width * count / top
            parts.append({"x": f"{x:.1f}", "width": f"{w:.1f}", "color": CATEGORY_COLORS[category],
                          "title": f"{CATEGORY_LABELS[category]}: {count}"})
            x += w
        out.append({"label": row["path"], "short": _short(row["path"]), "count": row["findings"], "parts": parts, "end": f"{x:.1f}"})
    return out


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("torch2ms.report", "templates"),
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
            assets[name] = Markup(env.loader.get_source(env, name)[0])  # type: ignore[union-attr]
        return assets[name]

    env.globals["asset"] = asset
    env.filters["num"] = lambda n: f"{n:,}"
    env.filters["wnum"] = lambda n: f"{n:,.1f}".rstrip("0").rstrip(".")
    env.globals["labels"] = CATEGORY_LABELS
    env.globals["short"] = SHORT_LABELS
    env.globals["colors"] = CATEGORY_COLORS
    return env


def build(results: list[FileResult], target_version: str, paths: Sequence[str] | None = None,
          date: str | None = None, root: str | None = None,
          read: Callable[[str], str | None] | None = None,
          device: str = DEFAULT_DEVICE) -> tuple[dict[str, Any], dict[str, Any]]:
    """The JSON document and the template context. `read` gives a file's text (default: `read_source`)."""
    if read is None:
        from ..api import read_source

        def read(path: str) -> str | None:
            return read_source(path)[0]

    results = sorted(results, key=lambda r: r.path)
    date = date or datetime.date.today().isoformat()
    sources: dict[str, str | None] = {r.path: read(r.path) for r in results if r.diagnostics and r.lines}
    doc = json_report.document(results, target_version, root, paths=paths, date=date, sources=sources, device=device)

    strings = _Strings()
    api_index = {row["api"]: i for i, row in enumerate(doc["apis"])}
    file_index = {f["path"]: i for i, f in enumerate(doc["files"])}
    budget, excerpt_budget = SOURCE_BUDGET, EXCERPT_BUDGET
    blobs: list[Any] = []
    excerpted = without_source = 0
    for result, file in zip(results, doc["files"]):
        if not file["diagnostics"]:
            blobs.append(0)
            continue
        text = sources.get(result.path)
        full = text is not None and len(text) <= budget
        if full and text is not None:
            budget -= len(text)
        entry, used = _file_blob(file, text, full, api_index, strings, excerpt_budget)
        excerpt_budget -= used
        if text is not None and not full:
            if entry["c"]:
                excerpted += 1
            else:
                without_source += 1
        blobs.append(entry)
    apis_blob = [[[file_index[loc["path"]], loc["line"]] for loc in row["locations"]] for row in doc["apis"]]
    blob = {"s": strings.items, "files": blobs, "paths": [f["path"] for f in doc["files"]], "apis": apis_blob,
            "api_names": [row["api"] for row in doc["apis"]], "classes": list(CLASSES),
            "labels": CATEGORY_LABELS}

    summary = doc["summary"]
    missing = [(row["api"], row["by_category"].get("missing", 0)) for row in doc["apis"]
               if row["by_category"].get("missing")]
    missing.sort(key=lambda r: (-r[1], r[0]))
    context = {
        "doc": doc,
        "summary": summary,
        "categories": [c for c in json_report.ALL_CATEGORIES if summary["by_category"].get(c)],
        "api_categories": json_report.API_CATEGORIES,
        "all_categories": json_report.ALL_CATEGORIES,
        "donut": _arc_segments({c: summary["by_category"].get(c, 0) for c in json_report.ALL_CATEGORIES}),
        "missing_bars": _bars(missing[:TOP_MISSING], BAR_WIDTH),
        "missing_more": max(0, len(missing) - TOP_MISSING),
        "dir_bars": _stacked(doc["directories"][:TOP_DIRECTORIES], BAR_WIDTH),
        "dir_more": max(0, len(doc["directories"]) - TOP_DIRECTORIES),
        "excerpted": excerpted,
        "without_source": without_source,
        "context_lines": CONTEXT,
        "row_limit": ROW_LIMIT,
        "file_ids": file_index,
        "blob": _script_json(blob),
        "runtime": _runtime_counts(doc),
    }
    return doc, context


def render(results: list[FileResult], target_version: str, paths: Sequence[str] | None = None,
           date: str | None = None, root: str | None = None,
           read: Callable[[str], str | None] | None = None, device: str = DEFAULT_DEVICE) -> str:
    # Thousands of findings make millions of small objects; the cyclic GC only slows their building.
    enabled = gc.isenabled()
    gc.disable()
    try:
        _, context = build(results, target_version, paths=paths, date=date, root=root, read=read, device=device)
        return _environment().get_template("report.html.j2").render(**context)
    finally:
        if enabled:
            gc.enable()
