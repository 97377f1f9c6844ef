"""`torch2ms migrate PATH... --out DIR | --in-place | --diff`: arguments, printing, exit codes.

Exit codes: 0 every file migrated and nothing left to do; 1 findings remain in the output (printed
as `path:line:col: CODE message`, the to-do list); 2 usage errors or a file that could not be read,
migrated or written (the others are still migrated).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from ..config import find_pyproject, load_config
from ..api import default_jobs
from ..mappings import load_table, parse_version
from ..options import jobs
from ..process import freeze_long_lived
from ..model import DEVICES
from ..limits import Limits
from ..limits import add_arguments as add_limit_arguments
from ..writing import add_arguments as add_write_arguments

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _version(text: str) -> str:
    try:
        parse_version(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="PyTorch files or folders to migrate")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", metavar="DIR", help="write the migrated files into a parallel tree under DIR")
    where.add_argument("--in-place", action="store_true", help="replace each file by its migrated text")
    where.add_argument("--diff", action="store_true", help="print the changes as a unified diff; write nothing")
    parser.add_argument("--device", choices=DEVICES, default=None,
                        help="the device the migrated code must run on: the forms written are those that run "
                             "there (default: the configuration's device, else cpu)")
    parser.add_argument("--target-version", type=_version, metavar="X.Y", help="MindSpore version to target (default 2.10)")
    parser.add_argument("--config", metavar="PYPROJECT", help="read [tool.torch2ms] from this file")
    parser.add_argument("--isolated", action="store_true", help="ignore configuration files")
    add_write_arguments(parser)
    add_limit_arguments(parser)
    parser.add_argument("-j", "--jobs", type=jobs, default=None, metavar="N",
                        help="worker processes, at least 1 (default: all cores; as scan --jobs)")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the summary lines")


def run(args: argparse.Namespace) -> int:
    from ..report.text import render_file
    from .files import CollisionError, migrate_paths
    from .pipeline import Options  # libcst is loaded here, not when the CLI's parser is built

    if args.isolated:
        config = load_config(None)
    elif args.config:
        config = load_config(Path(args.config))
    else:
        config = load_config(find_pyproject(Path(args.paths[0])))
    config = config.with_overrides(target_version=args.target_version, device=args.device)
    if args.out and any(os.path.isdir(p) and os.path.realpath(p) == os.path.realpath(args.out) for p in args.paths):
        print("torch2ms migrate: error: --out names a folder being migrated; use --in-place to rewrite it",
              file=sys.stderr)
        return EXIT_ERROR
    options = Options(config=config, limits=Limits(args.file_timeout, args.file_memory_mb))
    load_table()
    freeze_long_lived()  # the tables out of the collector's passes, which a large file's rewrite would repeat
    progress = _progress(sys.stderr) if sys.stderr.isatty() and not args.quiet else None
    copied: list[tuple[str, str | None]] = []
    support: list[tuple[str, str | None]] = []
    try:
        outcomes = migrate_paths(args.paths, options, out=args.out, write=not args.diff, on_each=progress,
                                 copied=copied, jobs=args.jobs or default_jobs(), support=support)
    except CollisionError as exc:
        print(f"torch2ms migrate: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    finally:
        if progress is not None:
            sys.stderr.write("\r\x1b[K")
    errors = findings = before = rewrites = migrated = 0
    for _, error in copied:
        if error is not None:
            errors += 1
            print(f"torch2ms migrate: error: {error}", file=sys.stderr)
    for outcome in outcomes:
        if outcome.error is not None:
            errors += 1
            print(f"torch2ms migrate: error: {outcome.error}", file=sys.stderr)
            continue
        migration = outcome.migration
        assert migration is not None
        if args.diff:
            sys.stdout.write(outcome.diff)
        shown = outcome.target or outcome.source
        findings += migration.remaining
        before += migration.findings
        rewrites += migration.rewritten
        migrated += 1
        print(f"{shown}: {migration.findings} finding(s) before, {migration.remaining} after, "
              f"{migration.rewritten} rewrite(s)", file=sys.stderr if args.diff else sys.stdout)
        if outcome.map_error is not None:
            errors += 1
            print(f"torch2ms migrate: error: {outcome.map_error}", file=sys.stderr)
        if outcome.weight_map is not None:
            print(f"{shown}: parameter-name map of {outcome.cells} cell class(es): {outcome.weight_map}")
        if not args.quiet and not args.diff:
            for note in migration.left:  # "LINE: ... left as it is: why", beside the findings that stay
                print(f"{shown}:{note}")
            result = migration.result
            sys.stdout.write(render_file(type(result)(shown, result.diagnostics, result.lines)))
    for path, error in support:  # torch-signature layers the ports import (docs/migrate.md)
        if error is not None:
            errors += 1
            print(f"torch2ms migrate: error: {error}", file=sys.stderr)
        else:
            print(f"{path}: support module (the torch-signature layers and classes the ports use)")
    copies = sum(1 for _, error in copied if error is None)
    print(f"torch2ms migrate: {migrated} of {len(outcomes)} Python file(s) migrated"
          + (f", {copies} other file(s) copied" if copied else "")
          + f"; {before} finding(s) before, {findings} after, {rewrites} rewrite(s); {errors} error(s)",
          file=sys.stderr if args.diff else sys.stdout)
    if errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if findings else EXIT_CLEAN


def _progress(stream: TextIO) -> Callable[[int, int, str], None]:
    """A one-line progress display on a terminal: [done/total] the file being migrated."""
    def show(done: int, total: int, path: str) -> None:
        width = shutil.get_terminal_size((80, 20)).columns
        line = f"[{done + 1}/{total}] {path}"
        stream.write("\r\x1b[K" + (line if len(line) < width else "..." + line[-(width - 4):]))
        stream.flush()

    return show
