"""Writing a scan's report: the chosen format to stdout or a file, the HTML report beside it,
the closing summary and the statistics. Used by `torch2ms scan` (cli.py)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import IO

from ..cache import Scanned
from ..config import Config
from ..model import FileResult, ScanSummary
from ..options import TERMINAL_FORMATS
from ..writing import WriteError, atomic
from . import text as text_report


def render(fmt: str, results: list[FileResult], config: Config, args: argparse.Namespace) -> str:
    if fmt == "sarif":
        from . import sarif

        return sarif.render(results, config.target_version)
    if fmt == "html":
        from . import html

        return html.render(results, config.target_version, paths=args.paths, date=args.date, compare=args.compare,
                           device=config.device, models=getattr(args, "models", None))
    raise ValueError(f"unknown format {fmt!r}")


class OutputError(Exception):
    """A report that cannot be written; the message names the file and the reason."""


@contextlib.contextmanager
def destination(path: str | None) -> Iterator[IO[str]]:
    """Standard output, or FILE written beside itself and renamed into place when complete."""
    if path is None:
        yield sys.stdout
        return
    try:  # the atomic writer: a temporary file beside FILE, renamed into place when complete
        with atomic(path) as handle:
            yield handle
    except WriteError as exc:
        raise OutputError(f"{path}: cannot write the report: {exc.system}" if exc.system else str(exc)) from None


def _describer(config: Config, outcomes: list[Scanned]) -> Callable[[str], str]:
    """api -> "its category, its effort class" for the statistics: those the JSON and HTML reports show."""
    from ..mappings import load_table
    from .json import api_classes

    table = load_table()
    classes = api_classes([o.result for o in outcomes], table, config.version, config.device)

    def describe(api: str) -> str:
        if table.lookup(api) is None:
            return "not in the tables"
        category, effort = classes.get(api, ("unmapped", "unknown"))
        return f"{category.replace('_', ' ')}, {effort}"

    return describe


def emit(outcomes: list[Scanned], config: Config, args: argparse.Namespace,
         texts: dict[str, str | None] | None = None, baseline_hidden: int | None = None) -> ScanSummary:
    """Write the report in the chosen format (and the HTML report when asked for); the scan's summary.
    `baseline_hidden`: how many findings --baseline left out (None without a baseline)."""
    fmt = args.output_format
    summary = ScanSummary.combine(o.summary for o in outcomes)
    with destination(args.output) as out:
        style = text_report.Style(text_report.use_color(args.color, out.isatty()))
        if fmt in TERMINAL_FORMATS:
            if args.statistics:
                out.write(text_report.render_statistics(summary, _describer(config, outcomes)))
            else:
                _write_findings(out, fmt, outcomes, style, texts or {}, getattr(args, "quiet", False))
            if not getattr(args, "quiet", False):
                out.write(text_report.summary_line(summary, baseline_hidden, style=style))
        elif fmt == "github":
            for outcome in outcomes:
                out.write(text_report.render_github(outcome.result))
        elif fmt == "json":  # streamed file by file: the whole document never sits in memory
            from . import json as json_report

            json_report.write(out, [o.result for o in outcomes], config.target_version,
                              paths=args.paths, date=args.date, device=config.device)
        else:
            out.write(render(fmt, [o.result for o in outcomes], config, args))
    if args.html:
        with destination(args.html) as out:
            out.write(render("html", [o.result for o in outcomes], config, args))
    if args.statistics and fmt not in TERMINAL_FORMATS:
        sys.stderr.write(text_report.render_statistics(summary, _describer(config, outcomes)))
    return summary


def _write_findings(out: IO[str], fmt: str, outcomes: list[Scanned], style: text_report.Style,
                    texts: dict[str, str | None], quiet: bool = False) -> None:
    from ..api import read_source
    clipped = 0
    for outcome in outcomes:
        if fmt == "concise":
            # a cache hit serves its plain lines without loading its objects
            chunk = outcome.chunk(text_report.render_file) if not style.color \
                else text_report.render_file(outcome.result, style=style)
            clipped += chunk.count(" " + text_report.ELLIPSIS + "\n")
        elif fmt == "grouped":
            chunk = text_report.render_grouped(outcome.result, style=style)
            clipped += chunk.count(" " + text_report.ELLIPSIS + "\n")
        else:
            if not outcome.summary.diagnostics:
                continue
            source = texts[outcome.path] if outcome.path in texts else read_source(outcome.path)[0]
            chunk = text_report.render_full(outcome.result, source, style=style)
        out.write(chunk)
    if clipped and not quiet:
        out.write(text_report.clipped_note(clipped))
