"""Command line: argument parsing, printing and exit codes only.

Exit codes of `torch2ms scan`: 0 no findings, 1 findings (file errors such as a
syntax error count as findings, code TMS9xx), 2 usage, configuration, output or
internal error, or a path given on the command line that does not exist.

Every error that ends a command goes through `main`'s one handler: one line on
stderr naming the file (where there is one) and the reason, exit code 2; the
traceback of an internal error only with ``--verbose``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path
from collections.abc import Iterator
from typing import IO, Any

from . import __version__
from .api import default_jobs, scan_outcomes
from .cache import CACHE_DIR_NAME, Cache, CacheError, Scanned
from .config import Config, ConfigError, find_pyproject, load_config
from .mappings import MappingError, load_table, parse_version
from .model import FileResult, ScanSummary
from .process import configure_process, freeze_long_lived
from .report import safe_text

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class OutputError(Exception):
    """A report that cannot be written; the message names the file and the reason."""


def _codes(text: str) -> tuple[str, ...]:
    return tuple(c.strip().upper() for c in text.split(",") if c.strip())


def _version(text: str) -> str:
    try:
        parse_version(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="torch2ms",
        description="Find every PyTorch API use and tell how it maps to MindSpore.",
    )
    parser.add_argument("--version", action="version", version=f"torch2ms {__version__}")
    _add_verbose(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    scan = sub.add_parser("scan", help="scan files and folders for torch API uses")
    _add_verbose(scan)
    scan.add_argument("paths", nargs="+", metavar="PATH", help="files or folders to scan")
    scan.add_argument("--format", choices=("text", "json", "sarif", "html"), default="text",
                      help="output format (default: text)")
    scan.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    scan.add_argument("--html", metavar="FILE", help="also write the project HTML report to FILE")
    scan.add_argument("--select", type=_codes, metavar="CODES", help="comma-separated codes or prefixes to report")
    scan.add_argument("--ignore", type=_codes, metavar="CODES", help="comma-separated codes or prefixes to skip")
    scan.add_argument("--exclude", type=lambda s: tuple(p for p in s.split(",") if p), metavar="PATTERNS",
                      help="comma-separated file or folder names (globs) to skip, replacing the defaults")
    scan.add_argument("--target-version", type=_version, metavar="X.Y",
                      help="MindSpore version to target (default 2.10)")
    scan.add_argument("--config", metavar="PYPROJECT", help="read [tool.torch2ms] from this file")
    scan.add_argument("--isolated", action="store_true", help="ignore configuration files")
    scan.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    scan.add_argument("--statistics", action="store_true", help="print counts per code and per torch API")
    scan.add_argument("-j", "--jobs", type=int, default=None, metavar="N",
                      help="worker processes (default: all cores)")
    scan.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    scan.add_argument("--no-cache", action="store_true", help="do not read or write the results cache")
    scan.add_argument("--cache-dir", metavar="DIR",
                      help="where to keep the cache (default: .torch2ms_cache beside the pyproject.toml, "
                           "else in the working directory)")
    scan.add_argument("--date", metavar="TEXT", help="fixed date for the HTML report (reproducible output)")
    scan.add_argument("--fix", action="store_true",
                      help="apply the safe rewrites in place, then report the findings that remain")
    scan.add_argument("--diff", action="store_true",
                      help="print the rewrites --fix would make as a unified diff; write nothing")
    scan.add_argument("--unsafe-fixes", action="store_true",
                      help="with --fix/--diff, also apply unsafe rewrites (nn.Module -> nn.Cell, device moves)")

    maps = sub.add_parser("mappings", help="check the mapping tables or show their coverage")
    _add_verbose(maps)
    maps_sub = maps.add_subparsers(dest="mappings_command", metavar="ACTION")
    maps_sub.add_parser("check", help="validate the tables and resolve every API in the installed torch/MindSpore")
    maps_stats = maps_sub.add_parser("stats", help="coverage of torch's public API and counts per category")
    maps_stats.add_argument("--json", action="store_true", help="print the figures as JSON")
    maps_stats.add_argument("--show-missing", action="store_true", help="list the public names not classified")

    lsp = sub.add_parser("lsp", help="run the language server (LSP over stdio)")
    _add_verbose(lsp)
    lsp.add_argument("--tcp", metavar="HOST:PORT", type=_host_port,
                     help="listen on HOST:PORT instead of stdio (for debugging)")
    lsp.add_argument("--stdio", action="store_true", help="use stdio (the default; accepted for editors that pass it)")

    from .verify.command import add_arguments as add_verify_arguments  # no torch/MindSpore import

    verify = sub.add_parser(
        "verify", help="run mapping examples (or the torch call at FILE:LINE) in real torch and MindSpore")
    add_verify_arguments(verify)  # its own --verbose also lists the entries that passed
    return parser


def _add_verbose(parser: argparse.ArgumentParser) -> None:
    """`--verbose` before or after the command; unset unless given (a command's default would undo the first)."""
    parser.add_argument("--verbose", action="store_true", default=argparse.SUPPRESS,
                        help="show the traceback of an internal error")


def _host_port(text: str) -> str:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return text


def run_lsp(args: argparse.Namespace) -> int:
    try:
        from .lsp.server import main as lsp_main
    except ImportError as exc:
        print(f"torch2ms: error: the language server needs the lsp extra (pip install 'torch2ms[lsp]'): {exc}",
              file=sys.stderr)
        return EXIT_ERROR
    return lsp_main(tcp=args.tcp)


def _config(args: argparse.Namespace) -> Config:
    if args.isolated:
        config = Config()
    elif args.config:
        config = load_config(Path(args.config))
    else:
        config = load_config(find_pyproject(Path(args.paths[0]) if args.paths else Path.cwd()))
    return config.with_overrides(select=args.select, ignore=args.ignore, exclude=args.exclude,
                                 target_version=args.target_version)


class _Progress:
    """A one-line progress bar on stderr, only when stderr is a terminal."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.count = 0
        self.last = 0.0

    def update(self, _outcome: object) -> None:
        if not self.enabled:
            return
        self.count += 1
        now = time.monotonic()
        if now - self.last > 0.1:
            self.last = now
            sys.stderr.write(f"\rscanning: {self.count} files")
            sys.stderr.flush()

    def close(self) -> None:
        if self.enabled and self.count:
            sys.stderr.write("\r" + " " * 40 + "\r")
            sys.stderr.flush()


def _render(fmt: str, results: list[FileResult], config: Config, args: argparse.Namespace) -> str:
    if fmt == "sarif":
        from .report import sarif

        return sarif.render(results, config.target_version)
    if fmt == "html":
        from .report import html

        return html.render(results, config.target_version, paths=args.paths, date=args.date)
    raise ValueError(f"unknown format {fmt!r}")


@contextlib.contextmanager
def _destination(path: str | None) -> Iterator[IO[str]]:
    """Standard output, or FILE written beside itself and renamed into place when complete."""
    if path is None:
        yield sys.stdout
        return
    try:  # a fresh name beside FILE (never a link someone put there), renamed into place when complete
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=f".{os.path.basename(path)}.",
                                   suffix=".tmp")
    except OSError as exc:
        raise OutputError(f"{path}: cannot write the report: {exc.strerror or exc}") from None
    try:
        with open(fd, "w", encoding="utf-8", newline="\n") as handle:
            yield handle
        try:
            os.chmod(tmp, 0o666 & ~_umask())
            os.replace(tmp, path)
        except OSError as exc:
            raise OutputError(f"{path}: cannot write the report: {exc.strerror or exc}") from None
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _cache_dir(args: argparse.Namespace, config: Config) -> Path:
    if args.cache_dir:
        return Path(args.cache_dir)
    base = Path(config.source).parent if config.source else Path.cwd()
    return base / CACHE_DIR_NAME


def _run_fix(args: argparse.Namespace, config: Config) -> int:
    """`scan --fix` / `scan --diff`: rewrite, then report what remains (exit code as scan)."""
    from .fix import fix_paths

    jobs = args.jobs if args.jobs and args.jobs > 0 else default_jobs()
    fixed = fix_paths(args.paths, config, unsafe=args.unsafe_fixes, write=not args.diff, jobs=jobs)
    errors = [f.error for f in fixed if f.error]
    for error in errors:
        print(f"torch2ms: error: {safe_text(error)}", file=sys.stderr)
    if args.diff:
        sys.stdout.write("".join(f.diff for f in fixed))
        changed = sum(1 for f in fixed if f.diff)
        print(f"{changed} file(s) would be changed", file=sys.stderr)
        return _exit_code(args, bool(changed or errors))
    results = sorted((f.result for f in fixed), key=lambda r: r.path)
    _emit([Scanned(r.path, r) for r in results], config, args)
    applied = sum(f.applied for f in fixed if f.changed)
    files = sum(1 for f in fixed if f.changed)
    print(f"fixed {applied} finding(s) in {files} file(s)", file=sys.stderr)
    return _exit_code(args, any(r.diagnostics for r in results) or bool(errors))


def _emit(outcomes: list[Scanned], config: Config, args: argparse.Namespace) -> None:
    """Write the report in the chosen format, and the HTML report when asked for."""
    with _destination(args.output) as out:
        if args.format == "text":  # a cache hit serves its lines without loading its objects
            for outcome in outcomes:
                out.write(outcome.text)
        elif args.format == "json":  # streamed file by file: the whole document never sits in memory
            from .report import json as json_report

            json_report.write(out, [o.result for o in outcomes], config.target_version,
                              paths=args.paths, date=args.date)
        else:
            out.write(_render(args.format, [o.result for o in outcomes], config, args))
    if args.html:
        with _destination(args.html) as out:
            out.write(_render("html", [o.result for o in outcomes], config, args))


def _exit_code(args: argparse.Namespace, findings: bool) -> int:
    if any(not os.path.exists(p) for p in args.paths):  # missing, or a broken link or link loop
        return EXIT_ERROR
    return EXIT_FINDINGS if findings and not args.exit_zero else EXIT_CLEAN


def run_scan(args: argparse.Namespace) -> int:
    config = _config(args)
    load_table()
    freeze_long_lived()
    if args.fix or args.diff:
        return _run_fix(args, config)
    jobs = args.jobs if args.jobs and args.jobs > 0 else default_jobs()
    progress = _Progress(not args.no_progress and sys.stderr.isatty())
    cache = None if args.no_cache else Cache(_cache_dir(args, config), config, load_table())
    outcomes = scan_outcomes(args.paths, config, jobs=jobs, on_each=progress.update, cache=cache)
    progress.close()
    outcomes.sort(key=lambda o: o.path)
    _emit(outcomes, config, args)
    summary = ScanSummary.combine(o.summary for o in outcomes)
    if args.statistics:
        from .report import text

        (sys.stderr if args.format != "text" and not args.output else sys.stdout).write(
            text.render_statistics(summary))
    return _exit_code(args, summary.diagnostics > 0)


def run_mappings(args: argparse.Namespace) -> int:
    from . import mapping_tools  # imports torch/MindSpore lazily, only for this command

    if args.mappings_command == "check":
        return mapping_tools.run_check(sys.stdout)
    if args.mappings_command == "stats":
        return mapping_tools.run_stats(sys.stdout, as_json=args.json, show_missing=args.show_missing)
    print("torch2ms mappings: choose an action: check or stats", file=sys.stderr)
    return EXIT_ERROR


def run_verify(args: argparse.Namespace) -> int:
    from .verify.command import main_safe  # torch/MindSpore are imported only in its worker processes

    return main_safe(args)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handlers: dict[str, Any] = {"scan": run_scan, "mappings": run_mappings, "lsp": run_lsp, "verify": run_verify}
    handler = handlers.get(args.command)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    configure_process()
    try:
        return int(handler(args))
    except BaseException as exc:  # noqa: BLE001 - the one place that turns any failure into exit code 2
        return fail(exc, verbose=getattr(args, "verbose", False))


def fail(exc: BaseException, verbose: bool = False) -> int:
    """The exit-code policy for a command that did not finish: one line on stderr, exit code 2.

    Expected errors (configuration, mapping tables, output, cache) print their message, which
    names the file; anything else is an internal error, named as such, with its traceback only
    under ``--verbose``. Exit code 1 stays reserved for findings."""
    if isinstance(exc, SystemExit):
        raise exc
    if isinstance(exc, BrokenPipeError):  # the reader went away (| head): nothing left to say
        with contextlib.suppress(OSError, ValueError):  # and nothing left to flush at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    if isinstance(exc, KeyboardInterrupt):
        message = "interrupted"
    elif isinstance(exc, (ConfigError, MappingError, OutputError, CacheError)):
        message = f"error: {exc}"
    elif isinstance(exc, OSError) and exc.filename is not None:
        message = f"error: {os.fsdecode(exc.filename)}: {exc.strerror or exc}"
    elif isinstance(exc, MemoryError):
        message = "error: out of memory"
    else:
        message = f"internal error: {type(exc).__name__}: {exc}"
        if not verbose:
            message += " (run with --verbose for the traceback; please report it)"
    if verbose and not isinstance(exc, KeyboardInterrupt):
        traceback.print_exception(exc, file=sys.stderr)
    with contextlib.suppress(OSError, ValueError):
        print(f"torch2ms: {safe_text(' '.join(message.splitlines()))}", file=sys.stderr)
    return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
