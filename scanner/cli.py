"""Command line: argument parsing, printing and exit codes only.

Exit codes of `torch2ms scan`: 0 no findings, 1 findings (file errors such as a
syntax error count as findings, code TMS9xx), 2 usage or internal error, or a
path given on the command line that does not exist.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from pathlib import Path
from collections.abc import Iterator
from typing import IO, Any

from . import __version__
from .api import default_jobs, scan_outcomes
from .cache import CACHE_DIR_NAME, Cache, Scanned
from .config import Config, ConfigError, find_pyproject, load_config
from .mappings import MappingError, load_table, parse_version
from .model import DEVICES, FileResult, ScanSummary
from .trace import TraceError

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


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
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    scan = sub.add_parser("scan", help="scan files and folders for torch API uses")
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
    scan.add_argument("--device", choices=DEVICES, default=None,
                      help="where the MindSpore program will run: the fix writes the form that runs there "
                           "(default cpu)")
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
    scan.add_argument("--trace", metavar="FILE",
                      help="join a trace from `torch2ms trace`: confirm findings, add calls only the run saw")

    trace = sub.add_parser("trace", help="run a script with every torch call recorded (needs torch)",
                           description="Run SCRIPT in this interpreter and record every torch call it makes "
                                       "(file, line, API, count, shapes) into a trace file for scan --trace.")
    trace.add_argument("-o", "--output", default="torch2ms-trace.json", metavar="FILE",
                       help="where to write the trace (default: torch2ms-trace.json)")
    trace.add_argument("--include", action="append", default=[], metavar="PATH",
                       help="record only call sites in files under PATH (repeatable; default: every file "
                            "outside torch and the standard library)")
    trace.add_argument("program", nargs=argparse.REMAINDER, metavar="-- python SCRIPT.py ARGS",
                       help="the program to run")

    maps = sub.add_parser("mappings", help="check the mapping tables or show their coverage")
    maps_sub = maps.add_subparsers(dest="mappings_command", metavar="ACTION")
    maps_sub.add_parser("check", help="validate the tables and resolve every API in the installed torch/MindSpore")
    maps_stats = maps_sub.add_parser("stats", help="coverage of torch's public API and counts per category")
    maps_stats.add_argument("--json", action="store_true", help="print the figures as JSON")
    maps_stats.add_argument("--show-missing", action="store_true", help="list the public names not classified")

    lsp = sub.add_parser("lsp", help="run the language server (LSP over stdio)")
    lsp.add_argument("--tcp", metavar="HOST:PORT", type=_host_port,
                     help="listen on HOST:PORT instead of stdio (for debugging)")
    lsp.add_argument("--stdio", action="store_true", help="use stdio (the default; accepted for editors that pass it)")

    from .migrate.command import add_arguments as add_migrate_arguments
    from .verify.command import add_arguments as add_verify_arguments  # no torch/MindSpore import

    add_migrate_arguments(sub.add_parser(
        "migrate", help="turn PyTorch files into MindSpore files (a parallel tree, in place, or a diff)"))

    add_verify_arguments(sub.add_parser(
        "verify", help="run mapping examples (or the torch call at FILE:LINE) in real torch and MindSpore"))
    return parser


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
                                 target_version=args.target_version, device=args.device)


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

        return html.render(results, config.target_version, paths=args.paths, date=args.date, device=config.device)
    raise ValueError(f"unknown format {fmt!r}")


@contextlib.contextmanager
def _destination(path: str | None) -> Iterator[IO[str]]:
    """Standard output, or FILE written beside itself and renamed into place when complete."""
    if path is None:
        yield sys.stdout
        return
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as handle:
            yield handle
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


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
        print(f"torch2ms: error: {error}", file=sys.stderr)
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
                              paths=args.paths, date=args.date, device=config.device)
        else:
            out.write(_render(args.format, [o.result for o in outcomes], config, args))
    if args.html:
        with _destination(args.html) as out:
            out.write(_render("html", [o.result for o in outcomes], config, args))


def _join_trace(outcomes: list[Scanned], path: str, config: Config) -> list[Scanned]:
    from . import trace
    from .api import read_source

    joined = trace.apply([o.result for o in outcomes], trace.load(path), load_table(), config,
                         lambda file: read_source(file)[0])
    print(trace.summary(joined), file=sys.stderr)
    return [Scanned(r.path, r) for r in joined.results]


def _exit_code(args: argparse.Namespace, findings: bool) -> int:
    if any(not os.path.lexists(p) for p in args.paths):
        return EXIT_ERROR
    return EXIT_FINDINGS if findings and not args.exit_zero else EXIT_CLEAN


def run_scan(args: argparse.Namespace) -> int:
    config = _config(args)
    load_table()
    if args.fix or args.diff:
        return _run_fix(args, config)
    jobs = args.jobs if args.jobs and args.jobs > 0 else default_jobs()
    progress = _Progress(not args.no_progress and sys.stderr.isatty())
    cache = None if args.no_cache else Cache(_cache_dir(args, config), config, load_table())
    outcomes = scan_outcomes(args.paths, config, jobs=jobs, on_each=progress.update, cache=cache)
    progress.close()
    outcomes.sort(key=lambda o: o.path)
    if args.trace:
        outcomes = _join_trace(outcomes, args.trace, config)
    _emit(outcomes, config, args)
    summary = ScanSummary.combine(o.summary for o in outcomes)
    if args.statistics:
        from .report import text

        (sys.stderr if args.format != "text" and not args.output else sys.stdout).write(
            text.render_statistics(summary))
    return _exit_code(args, summary.diagnostics > 0)


def run_trace(args: argparse.Namespace) -> int:
    command = list(args.program)
    if command[:1] == ["--"]:
        command = command[1:]
    try:
        from . import tracer  # imports torch: only this command does
    except ImportError as exc:
        print(f"torch2ms: error: torch2ms trace needs torch installed: {exc}", file=sys.stderr)
        return EXIT_ERROR
    try:
        status = tracer.run(command, args.output, args.include)
    except tracer.TraceUsageError as exc:
        print(f"torch2ms trace: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    print(f"torch2ms trace: wrote {args.output}", file=sys.stderr)
    return status


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


def run_migrate(args: argparse.Namespace) -> int:
    from .migrate.command import run

    return run(args)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handlers: dict[str, Any] = {"scan": run_scan, "mappings": run_mappings, "lsp": run_lsp, "verify": run_verify,
                                "migrate": run_migrate, "trace": run_trace}
    handler = handlers.get(args.command)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    try:
        return int(handler(args))
    except (ConfigError, MappingError, TraceError) as exc:
        print(f"torch2ms: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("torch2ms: interrupted", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
