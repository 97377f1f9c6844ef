"""The options of `torch2ms scan` and `torch2ms rule`, and the checks of their values.

Ruff's conventions: an unknown code, prefix or version is an error with the nearest
valid ones ("did you mean"), long options are never abbreviated, `--output-format`
names the format (`--format` is the same option), `--exclude` replaces the default
excludes and `--extend-exclude` adds to them.
"""

from __future__ import annotations

import argparse
from typing import Any, NoReturn

from .codes import SelectorError, check_selector
from .mappings import check_target_version
from .model import DEVICES
from .limits import add_arguments as add_limit_arguments
from .writing import add_arguments as add_write_arguments

OUTPUT_FORMATS = ("concise", "full", "grouped", "json", "sarif", "github", "html")
FORMAT_ALIASES = {"text": "concise"}  # the name of the concise format before 0.2
TERMINAL_FORMATS = ("concise", "full", "grouped")
FAIL_ON = ("error", "warning", "info")


class Parser(argparse.ArgumentParser):
    """An ArgumentParser that never accepts an abbreviated long option (`--statistic`); its
    sub-command parsers are of the same class. A usage error is one line naming the error and
    where the usage is (as ruff's), not the whole usage block; exit code 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}{self._nearest(message)} (see {self.prog} --help)\n")

    def _nearest(self, message: str) -> str:
        """"; did you mean --quiet?" for an unknown option close to one of this parser's or its commands'."""
        import difflib

        words = message.partition("unrecognized arguments: ")[2].split()
        unknown = next((w.partition("=")[0] for w in words if w.startswith("--")), None)
        if unknown is None:
            return ""
        known: set[str] = set()
        parsers: list[argparse.ArgumentParser] = [self]
        while parsers:
            parser = parsers.pop()
            for action in parser._actions:
                known.update(o for o in action.option_strings if o.startswith("--"))
                if isinstance(action, argparse._SubParsersAction):
                    parsers.extend(action.choices.values())
        near = difflib.get_close_matches(unknown, sorted(known), n=1, cutoff=0.75)
        return f"; did you mean {near[0]}?" if near else ""


def codes(text: str) -> tuple[str, ...]:
    out = []
    for item in text.split(","):
        if item.strip():
            try:
                out.append(check_selector(item))
            except SelectorError as exc:
                raise argparse.ArgumentTypeError(str(exc)) from None
    return tuple(out)


def version(text: str) -> str:
    try:
        return check_target_version(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of worker processes, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1 worker process, got {value}")
    return value


def patterns(text: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in text.split(",") if p.strip())


def output_format(text: str) -> str:
    value = FORMAT_ALIASES.get(text, text)
    if value not in OUTPUT_FORMATS:
        import difflib

        near = difflib.get_close_matches(text, OUTPUT_FORMATS, n=1)
        hint = f"; did you mean {near[0]}?" if near else ""
        raise argparse.ArgumentTypeError(f"unknown output format {text!r} (choose from {', '.join(OUTPUT_FORMATS)})"
                                         f"{hint}")
    return value


def add_scan_arguments(scan: argparse.ArgumentParser) -> None:
    scan.add_argument("paths", nargs="*", metavar="PATH",
                      help="files or folders to scan (default: the current folder); - reads one file from "
                           "standard input")
    out = scan.add_argument_group("output")
    out.add_argument("--output-format", "--format", dest="output_format", type=output_format, default="concise",
                     metavar="FORMAT",
                     help=f"{' | '.join(OUTPUT_FORMATS)} (default: concise; --format is the same option)")
    out.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    out.add_argument("--html", metavar="FILE", help="also write the project HTML report to FILE")
    add_write_arguments(out)
    out.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                     help="colour the terminal formats (default auto: on a terminal, unless NO_COLOR is set; "
                          "FORCE_COLOR forces it)")
    out.add_argument("--statistics", action="store_true",
                     help="print counts per code and uses per torch API instead of each finding")
    out.add_argument("--date", metavar="TEXT", help="fixed date for the HTML and JSON reports (reproducible output)")
    out.add_argument("--model-record", action="append", default=[], metavar="FILE",
                     help="show this `verify-model --record` result in the HTML report (repeatable)")
    out.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    out.add_argument("-q", "--quiet", action="store_true",
                     help="print the findings only: no closing summary, no progress bar, no notes")
    out.add_argument("--show-settings", action="store_true",
                     help="print the settings the scan would use (and where they come from), then exit")
    out.add_argument("--show-files", action="store_true", help="print the files the scan would read, then exit")
    out.add_argument("--watch", action="store_true",
                     help="scan again whenever a scanned file changes (Ctrl-C ends); the exit code is the last scan's")

    rules = scan.add_argument_group("rule selection")
    rules.add_argument("--select", type=codes, metavar="CODES",
                       help="comma-separated codes or prefixes to report (replaces the configured list)")
    rules.add_argument("--extend-select", type=codes, metavar="CODES",
                       help="codes or prefixes to report in addition to the selected ones")
    rules.add_argument("--ignore", type=codes, metavar="CODES", help="comma-separated codes or prefixes to skip")
    rules.add_argument("--target-version", type=version, metavar="X.Y",
                       help="MindSpore version to target (default 2.10)")
    rules.add_argument("--device", choices=DEVICES, default=None,
                       help="where the MindSpore program will run: the fix writes the form that runs there "
                            "(default cpu)")

    files = scan.add_argument_group("file selection")
    files.add_argument("--exclude", type=patterns, metavar="PATTERNS",
                       help="file or folder names (globs) to skip, REPLACING the default excludes "
                            "(.git, .venv, build, ...); see --extend-exclude")
    files.add_argument("--extend-exclude", type=patterns, metavar="PATTERNS",
                       help="file or folder names (globs) to skip in addition to the default excludes")
    files.add_argument("--respect-gitignore", action=argparse.BooleanOptionalAction, default=None,
                       help="skip what .gitignore files exclude when walking folders (default: on)")
    files.add_argument("--stdin-filename", metavar="PATH",
                       help="the name of the file read from standard input (for messages and configuration)")

    run = scan.add_argument_group("exit status and baseline")
    run.add_argument("--fail-on", choices=FAIL_ON, default="info",
                     help="exit 1 only for findings of this level or higher (default info: any finding)")
    run.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    run.add_argument("--baseline", metavar="REPORT_JSON",
                     help="report and fail only on findings not in this earlier JSON report "
                          "(written with --output-format json)")
    run.add_argument("--compare", metavar="OLD_JSON",
                     help="show the progress since this earlier JSON report in the HTML report")
    run.add_argument("--trace", metavar="FILE",
                     help="join a trace from `torch2ms trace`: confirm findings, add calls only the run saw")

    fixes = scan.add_argument_group("fixes")
    fixes.add_argument("--fix", action="store_true",
                       help="apply the safe rewrites in place, then report the findings that remain")
    fixes.add_argument("--diff", action="store_true",
                       help="print the rewrites --fix would make as a unified diff; write nothing")
    fixes.add_argument("--unsafe-fixes", action="store_true",
                       help="with --fix/--diff, also apply unsafe rewrites (nn.Module -> nn.Cell, device moves)")
    fixes.add_argument("--add-noqa", action="store_true",
                       help="add a `# noqa: CODE` comment for every finding, then exit")

    config = scan.add_argument_group("configuration and speed")
    config.add_argument("--config", metavar="PYPROJECT", help="read [tool.torch2ms] from this file")
    config.add_argument("--isolated", action="store_true", help="ignore configuration files")
    config.add_argument("-j", "--jobs", type=jobs, default=None, metavar="N",
                        help="worker processes, at least 1 (default: all cores)")
    add_limit_arguments(config)
    config.add_argument("--no-cache", action="store_true", help="do not read or write the results cache")
    config.add_argument("--cache-dir", metavar="DIR",
                        help="where to keep the cache (default: .torch2ms_cache beside the pyproject.toml, "
                             "else in the working directory)")


def add_rule_arguments(rule: argparse.ArgumentParser) -> None:
    rule.add_argument("code", nargs="?", metavar="CODE", help="a code (TMS103) or a prefix (TMS3)")
    rule.add_argument("--all", action="store_true", help="explain every code")
    rule.add_argument("--output-format", choices=("text", "json"), default="text",
                      help="text (default) or json")
