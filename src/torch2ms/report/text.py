"""Terminal output: the concise, full, grouped and github formats, colour, the closing summary and
the statistics.

A concise line is ``path:line:col: CODE [*] severity: message`` (1-based line and
column; ``[*]`` marks a finding that ``--fix`` rewrites). Its message is cut at
MESSAGE_WIDTH characters (the full format shows it whole, wrapped), so no line of
the terminal formats grows without bound.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..codes import CODES, CodeInfo
from ..model import Diagnostic, FileResult, ScanSummary
from ..source import split_lines
from ..strings import display_path

MESSAGE_WIDTH = 160  # characters of a message on a concise or grouped line
WRAP_WIDTH = 100  # columns of the full format's wrapped messages and source excerpts
CONTEXT_LINES = 1  # lines of source shown above and below a finding in the full format
ELLIPSIS = "\u2026"

_SGR = {"bold": "1", "dim": "2", "red": "31", "yellow": "33", "blue": "34", "cyan": "36", "green": "32"}
SEVERITY_COLOR = {"error": "red", "warning": "yellow", "info": "blue"}


@dataclass(frozen=True)
class Style:
    """ANSI colours when `color` is on; plain text otherwise."""

    color: bool = False

    def __call__(self, text: str, *names: str) -> str:
        if not self.color or not names or not text:
            return text
        return "\x1b[" + ";".join(_SGR[n] for n in names) + "m" + text + "\x1b[0m"


PLAIN = Style()


def use_color(choice: str, stream_is_tty: bool, environ: dict[str, str] | None = None) -> bool:
    """`--color always|never|auto`; auto: FORCE_COLOR (non-empty) turns colour on, NO_COLOR (non-empty)
    turns it off, else colour when the output is a terminal (and TERM is not "dumb")."""
    env = os.environ if environ is None else environ
    if choice == "always":
        return True
    if choice == "never":
        return False
    if env.get("FORCE_COLOR"):
        return True
    if env.get("NO_COLOR"):
        return False
    return stream_is_tty and env.get("TERM") != "dumb"


def fixable(diag: Diagnostic) -> bool:
    """A finding that `--fix` rewrites (a safe fix)."""
    return diag.fix is not None and diag.fix.safe and bool(diag.fix.edits)


def clip(text: str, width: int) -> str:
    """`text` cut to at most `width` characters, at a word boundary when one is near, ending in an ellipsis."""
    if len(text) <= width:
        return text
    cut = text.rfind(" ", width * 2 // 3, width - 1)
    return text[:cut if cut > 0 else width - 2].rstrip(" ;,:") + " " + ELLIPSIS


def _head(diag: Diagnostic, style: Style) -> str:
    severity = diag.severity.value
    mark = " " + style("[*]", "cyan") if fixable(diag) else ""
    return f"{style(diag.code, 'bold', SEVERITY_COLOR[severity])}{mark} {style(severity + ':', SEVERITY_COLOR[severity])}"


def _where(path: str, diag: Diagnostic, style: Style) -> str:
    return f"{style(path, 'bold')}:{diag.span.start_line}:{diag.span.start_col + 1}:"


def concise_line(path: str, diag: Diagnostic, style: Style = PLAIN) -> str:
    return f"{_where(path, diag, style)} {_head(diag, style)} {clip(diag.message, MESSAGE_WIDTH)}\n"


def render_file(result: FileResult, root: str | None = None, style: Style = PLAIN) -> str:
    """One file's lines of the concise report (the report is these chunks, file after file)."""
    path = display_path(result.path, root)
    return "".join(concise_line(path, diag, style) for diag in result.diagnostics)


def render(results: Iterable[FileResult], root: str | None = None) -> str:
    return "".join(render_file(result, root) for result in results)


def render_grouped(result: FileResult, root: str | None = None, style: Style = PLAIN) -> str:
    """The file's path, then one indented `line:col CODE severity: message` line per finding."""
    if not result.diagnostics:
        return ""
    out = [style(display_path(result.path, root), "bold") + ":\n"]
    width = max(len(f"{d.span.start_line}:{d.span.start_col + 1}") for d in result.diagnostics)
    for diag in result.diagnostics:
        where = f"{diag.span.start_line}:{diag.span.start_col + 1}"
        out.append(f"  {where:<{width}} {_head(diag, style)} {clip(diag.message, MESSAGE_WIDTH)}\n")
    out.append("\n")
    return "".join(out)


def _window(line: str, start: int, end: int, width: int) -> tuple[str, int, int]:
    """A piece of `line` at most `width` characters long that shows columns start..end, and where
    they fall in it."""
    if len(line) <= width:
        return line, start, end
    left = max(0, min(start - 10, len(line) - width))
    piece = line[left:left + width]
    prefix = ELLIPSIS if left else ""
    suffix = ELLIPSIS if left + width < len(line) else ""
    shift = len(prefix) - left
    return prefix + piece + suffix, start + shift, min(end + shift, len(prefix) + len(piece))


def render_full(result: FileResult, text: str | None, root: str | None = None, style: Style = PLAIN) -> str:
    """Each finding with its whole message (wrapped) and the source lines around it, a caret line
    under the span, then its fix and documentation link (as ruff's full format does)."""
    path = display_path(result.path, root)
    lines = split_lines(text) if text is not None else []
    out: list[str] = []
    for diag in result.diagnostics:
        head = f"{_where(path, diag, style)} {_head(diag, style)} "
        wrapped = textwrap.wrap(diag.message, WRAP_WIDTH, break_long_words=True, break_on_hyphens=False) or [""]
        out.append(head + wrapped[0] + "\n")
        out.extend("    " + more + "\n" for more in wrapped[1:])
        number = diag.span.start_line
        if lines and 1 <= number <= len(lines):
            first, last = max(1, number - CONTEXT_LINES), min(len(lines), number + CONTEXT_LINES)
            gutter = len(str(last))
            bar = style(" " * gutter + " |", "blue")
            out.append(bar + "\n")
            for index in range(first, last + 1):
                line = lines[index - 1].expandtabs(1)
                end_col = diag.span.end_col if diag.span.end_line == number else len(line)
                shown, start, end = _window(line, diag.span.start_col, max(end_col, diag.span.start_col + 1),
                                            WRAP_WIDTH)
                out.append(style(f"{index:>{gutter}} |", "blue") + (" " + shown if shown else "") + "\n")
                if index == number:
                    carets = "^" * max(1, end - start)
                    out.append(bar + " " + " " * start + style(carets, SEVERITY_COLOR[diag.severity.value])
                               + " " + style(diag.code, "bold", SEVERITY_COLOR[diag.severity.value]) + "\n")
            out.append(bar + "\n")
        if diag.fix is not None and diag.fix.edits:
            kind = "fix" if diag.fix.safe else "unsafe fix (--unsafe-fixes)"
            out.append(f"  = {style(kind, 'cyan')}: {clip(diag.fix.title, WRAP_WIDTH)}\n")
        if diag.doc_url:
            out.append(f"  = docs: {diag.doc_url}\n")
        out.append("\n")
    return "".join(out)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


GITHUB_LEVELS = {"error": "error", "warning": "warning", "info": "notice"}


def render_github(result: FileResult, root: str | None = None) -> str:
    """GitHub Actions workflow commands: one annotation per finding."""
    path = _escape_property(display_path(result.path, root))
    out = []
    for diag in result.diagnostics:
        span = diag.span
        where = f"file={path},line={span.start_line},col={span.start_col + 1}"
        if span.end_line >= span.start_line and (span.end_line, span.end_col) > (span.start_line, span.start_col):
            where += f",endLine={span.end_line},endColumn={span.end_col + 1}"
        title = _escape_property(f"torch2ms {diag.code}")
        out.append(f"::{GITHUB_LEVELS[diag.severity.value]} title={title},{where}::"
                   f"{_escape_data(f'{diag.code} {diag.message}')}\n")
    return "".join(out)


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def summary_line(summary: ScanSummary, baseline_hidden: int | None = None, style: Style = PLAIN) -> str:
    """The closing line: "Found N findings (E errors, W warnings, I info; M fixable with --fix)."."""
    hidden = f"; {baseline_hidden:,} in the baseline not shown" if baseline_hidden else ""
    if not summary.diagnostics:
        word = "new findings" if baseline_hidden is not None else "findings"
        kept = f" ({baseline_hidden:,} in the baseline not shown)" if baseline_hidden else ""
        return style(f"No {word}: all checks passed!", "bold", "green") + kept + "\n"
    counts = [_plural(summary.by_severity[s], s) if s != "info" else f"{summary.by_severity[s]:,} info"
              for s in ("error", "warning", "info") if summary.by_severity.get(s)]
    fixes = f"{summary.fixable:,} fixable with --fix" if summary.fixable else "none fixable with --fix"
    if summary.unsafe_fixable:
        fixes += f", {summary.unsafe_fixable:,} more with --unsafe-fixes"
    noun = "new finding" if baseline_hidden is not None else "finding"
    return (style(f"Found {_plural(summary.diagnostics, noun)}", "bold")
            + f" ({', '.join(counts)}; {fixes}){hidden}.\n")


def clipped_note(count: int) -> str:
    return (f"{_plural(count, 'message')} shortened to {MESSAGE_WIDTH} characters; "
            f"--output-format full shows them whole.\n")


def render_statistics(summary: ScanSummary, describe: Callable[[str], str] | None = None) -> str:
    """Counts per code (with each code's name and level) and uses per torch API, most first.
    `describe(api)` adds a few words per API (its category and effort class)."""
    lines = ["Findings by code:"]
    width = max((len(f"{n:,}") for n in summary.by_code.values()), default=1)
    for code, count in sorted(summary.by_code.items(), key=lambda kv: (-kv[1], kv[0])):
        info = CODES.get(code)
        name = f"{info.name} ({info.severity.value})" if info else ""
        lines.append(f"  {count:>{width},}  {code}  {name}".rstrip())
    lines.append("Uses by torch API (code that runs, one per call site; the category and effort class of its "
                 "findings, as in the reports):")
    width = max((len(f"{n:,}") for n in summary.by_api.values()), default=1)
    api_width = max((len(a) for a in summary.by_api), default=0)
    for api, count in summary.by_api.items():
        extra = f"  {describe(api)}" if describe is not None else ""
        lines.append(f"  {count:>{width},}  {api:<{api_width}}{extra}".rstrip())
    uses = summary.uses
    unnamed = uses - sum(summary.by_api.values())
    if unnamed:
        lines.append(f"  {unnamed:>{width},}  (dynamic-shape findings that name no API: indexing, branches on values)")
    lines.append(
        f"{_plural(summary.files, 'file')} ({summary.files_failed:,} failed), {_plural(summary.lines, 'line')}: "
        f"{_plural(uses, 'use')} of {_plural(len(summary.by_api), 'torch API')}, "
        f"{_plural(summary.diagnostics, 'finding')}"
    )
    return "\n".join(lines) + "\n"


SCHEME = {
    "TMS1": "API mapping status of a torch API use",
    "TMS2": "dynamic-shape risk (TMS25x: the same in data processing code)",
    "TMS3": "migration-readiness check beyond the API table",
    "TMS9": "the file could not be analysed",
}


def render_rules(infos: Iterable[CodeInfo], as_json: bool = False) -> str:
    """`torch2ms rule`: each code's name, level, category, meaning and documentation."""
    items = list(infos)
    if as_json:
        import json

        return json.dumps([{"code": i.code, "name": i.name, "severity": i.severity.value,
                            "category": i.category.value, "summary": i.summary, "doc_url": i.doc_url}
                           for i in items], indent=2) + "\n"
    out = []
    for info in items:
        out.append(f"{info.code} {info.name}\n\n"
                   f"  level:     {info.severity.value}\n"
                   f"  category:  {info.category.value.replace('_', ' ')}\n"
                   f"  kind:      {SCHEME.get(info.code[:4], '')}\n"
                   f"  meaning:   {info.summary}\n"
                   f"  docs:      {info.doc_url}\n"
                   f"  suppress:  `# noqa: {info.code}` on the line, or ignore = [\"{info.code}\"] in "
                   f"[tool.torch2ms]\n")
    return "\n".join(out)
