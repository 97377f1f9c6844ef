"""`path:line:col: CODE message` lines (1-based line and column) and statistics."""

from __future__ import annotations

from ..model import FileResult, ScanSummary
from . import display_path


def render_file(result: FileResult, root: str | None = None) -> str:
    """One file's lines of the text report (the report is these chunks, file after file)."""
    path = display_path(result.path, root)
    return "".join(f"{path}:{diag.span.start_line}:{diag.span.start_col + 1}: {diag.code} {diag.message}\n"
                   for diag in result.diagnostics)


def render(results: list[FileResult], root: str | None = None) -> str:
    return "".join(render_file(result, root) for result in results)


def render_statistics(summary: ScanSummary) -> str:
    lines = ["Findings by code:"]
    width = max((len(str(n)) for n in summary.by_code.values()), default=1)
    for code, count in summary.by_code.items():
        lines.append(f"  {count:>{width}}  {code}")
    lines.append("Findings by torch API:")
    width = max((len(str(n)) for n in summary.by_api.values()), default=1)
    for api, count in summary.by_api.items():
        lines.append(f"  {count:>{width}}  {api}")
    lines.append(
        f"{summary.files} files ({summary.files_failed} failed), {summary.lines} lines, "
        f"{summary.diagnostics} findings"
    )
    return "\n".join(lines) + "\n"
