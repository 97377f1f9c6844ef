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
import importlib
import os
import sys
import time
from pathlib import Path
from typing import Any

from . import __version__, writing
from .api import default_jobs, scan_outcomes
from .cache import CACHE_DIR_NAME, Cache, CacheError, Scanned
from .config import Config, ConfigError, find_pyproject, load_config
from .extras import MissingExtra
from .mappings import MappingError, load_table
from .model import Diagnostic, ScanSummary
from .options import FAIL_ON, Parser, add_rule_arguments, add_scan_arguments
from .limits import Limits
from .process import configure_process, freeze_long_lived
from .strings import safe_text
from .report.output import OutputError, emit
from .report.text import render_file
from .writing import WriteError

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser. With `command`, the arguments of the commands that live in their own
    packages (migrate, verify, ...) are added for that command only: a scan starts without importing them.
    Every command is still listed."""
    parser = Parser(
        prog="torch2ms",
        description="Find every PyTorch API use and tell how it maps to MindSpore.",
    )
    parser.add_argument("--version", action="version", version=f"torch2ms {__version__}")
    _add_verbose(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    scan = sub.add_parser("scan", help="scan files and folders for torch API uses")
    add_scan_arguments(scan)
    _add_verbose(scan)
    add_rule_arguments(sub.add_parser("rule", help="explain a diagnostic code (or every code with --all)"))
    trace = sub.add_parser("trace", help="run a script with every torch call recorded (needs torch)",
                           description="Run SCRIPT in this interpreter and record every torch call it makes "
                                       "(file, line, API, count, shapes) into a trace file for scan --trace.")
    trace.add_argument("-o", "--output", default="torch2ms-trace.json", metavar="FILE",
                       help="where to write the trace (default: torch2ms-trace.json)")
    writing.add_arguments(trace)
    trace.add_argument("--include", action="append", default=[], metavar="PATH",
                       help="record only call sites in files under PATH (repeatable; default: every file "
                            "outside torch and the standard library)")
    trace.add_argument("program", nargs=argparse.REMAINDER, metavar="-- python SCRIPT.py ARGS",
                       help="the program to run")
    _add_verbose(trace)

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
                     help="listen on HOST:PORT instead of stdio: one client, authenticated by a token; "
                          "HOST must be a loopback address unless --allow-remote")
    lsp.add_argument("--token-file", metavar="FILE",
                     help="with --tcp: read the session token from FILE (else TORCH2MS_LSP_TOKEN, else a new "
                          "token printed once on stderr); clients send it as initializationOptions.token")
    lsp.add_argument("--allow-remote", action="store_true",
                     help="with --tcp: listen on a non-loopback address")
    lsp.add_argument("--allow-verify", action="store_true",
                     help="with --tcp: offer the verify action, which runs code (always on over stdio)")
    lsp.add_argument("--stdio", action="store_true", help="use stdio (the default; accepted for editors that pass it)")
    completion = sub.add_parser("completion", help="print a shell completion script (bash, zsh or fish)",
                                description="Print a completion script: eval \"$(torch2ms completion bash)\" in "
                                            "~/.bashrc, the zsh one in ~/.zshrc, or torch2ms completion fish > "
                                            "~/.config/fish/completions/torch2ms.fish.")
    completion.add_argument("shell", choices=("bash", "zsh", "fish"), help="the shell to complete in")

    for name, module, about in (
            ("migrate", "migrate.command",
             "turn PyTorch files into MindSpore files (a parallel tree, in place, or a diff)"),
            ("verify", "verify.command",  # no torch/MindSpore import in any of these modules
             "run mapping examples (or the torch call at FILE:LINE) in real torch and MindSpore"),
            ("convert-weights", "verify.convert_weights",
             "convert a torch state_dict (.pth, .safetensors) into a MindSpore checkpoint by a map"),
            ("verify-model", "verify.model",
             "run a torch network and its MindSpore port on the same weights and inputs, and compare"),
            ("verify-train", "verify.train",
             "train with a torch program and its MindSpore port for N steps from the same weights, and compare")):
        chosen = sub.add_parser(name, help=about)
        if command is not None and command != name:
            continue
        importlib.import_module(f"{__package__}.{module}").add_arguments(chosen)
        if name != "verify":  # verify's own --verbose also lists the entries that passed
            _add_verbose(chosen)
    return parser


def _add_verbose(parser: argparse.ArgumentParser) -> None:
    """`--verbose` before or after the command; unset unless given (a command's default would undo the first)."""
    parser.add_argument("--verbose", action="store_true", default=argparse.SUPPRESS,
                        help="show the traceback of an internal error")


def _host_port(text: str) -> str:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) < 65536:  # 0: a free port, announced on stderr
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return text


def completion_script(parser: argparse.ArgumentParser, shell: str) -> str:
    """A bash (or zsh, through bashcompinit) completion function for every command and its options, read
    from the parser itself, so it never lists an option that does not exist."""
    commands: dict[str, list[str]] = {}
    for action in parser._actions:  # argparse keeps sub-commands in its sub-parsers action
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                commands[name] = sorted({flag for a in command._actions for flag in a.option_strings})
    top = sorted({flag for a in parser._actions for flag in a.option_strings})
    cases = "".join(f"    {name}) opts=\"{' '.join(flags)}\" ;;\n" for name, flags in commands.items())
    script = (
        "_torch2ms() {\n"
        "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" opts=\"\"\n"
        "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
        f"    COMPREPLY=($(compgen -W \"{' '.join(commands)} {' '.join(top)}\" -- \"$cur\"))\n"
        "    return\n"
        "  fi\n"
        "  case \"${COMP_WORDS[1]}\" in\n"
        f"{cases}"
        "  esac\n"
        "  if [[ \"$cur\" == -* ]]; then\n"
        "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
        "  else\n"
        "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
        "  fi\n"
        "}\n"
        "complete -o filenames -F _torch2ms torch2ms\n")
    if shell == "zsh":
        script = "autoload -U +X bashcompinit && bashcompinit\n" + script
    if shell == "fish":
        script = _fish_script(parser)
    return script


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish_script(parser: argparse.ArgumentParser) -> str:
    """fish's completions: the commands (with their help) where none is given yet, then each command's
    options once it is; paths complete as files (fish's default)."""
    lines = ["complete -c torch2ms -e"]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, command in action.choices.items():
                lines.append(f"complete -c torch2ms -n __fish_use_subcommand -f -a {name} "
                             f"-d {_fish_quote(helps.get(name, ''))}")
                for option in command._actions:
                    flags = [f"-l {f[2:]}" if f.startswith("--") else f"-s {f[1:]}" for f in option.option_strings]
                    if flags:
                        about = (option.help or "").split(";")[0].split(" (")[0]
                        lines.append(f"complete -c torch2ms -n '__fish_seen_subcommand_from {name}' "
                                     f"{' '.join(flags)} -d {_fish_quote(about)}")
    return "\n".join(lines) + "\n"


def run_completion(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    sys.stdout.write(completion_script(parser, args.shell))
    return EXIT_CLEAN


def run_lsp(args: argparse.Namespace) -> int:
    try:
        from .lsp.server import main as lsp_main
    except ImportError as exc:
        print(f"torch2ms: error: the language server needs the lsp extra (pip install 'torch2ms[lsp]'): {exc}",
              file=sys.stderr)
        return EXIT_ERROR
    if not args.tcp and (args.token_file or args.allow_remote or args.allow_verify):
        print("torch2ms lsp: error: --token-file, --allow-remote and --allow-verify go with --tcp", file=sys.stderr)
        return EXIT_ERROR
    return lsp_main(tcp=args.tcp, token_file=args.token_file, allow_remote=args.allow_remote,
                    allow_verify=args.allow_verify)


def _config(args: argparse.Namespace) -> Config:
    start = args.stdin_filename or next((p for p in args.paths if p != "-"), None)
    if args.isolated:
        config = Config()
    elif args.config:
        config = load_config(Path(args.config))
    else:
        config = load_config(find_pyproject(Path(start) if start else Path.cwd()))
    config = config.with_overrides(select=args.select, extend_select=args.extend_select,
                                   exclude=args.exclude, extend_exclude=args.extend_exclude,
                                   target_version=args.target_version, respect_gitignore=args.respect_gitignore,
                                   device=args.device).with_ignored(args.ignore)
    if config.dropped_defaults:
        print(f"torch2ms: warning: `exclude` replaces the default excludes, so these are scanned again: "
              f"{', '.join(config.dropped_defaults)}; use `extend-exclude` to add patterns to the defaults",
              file=sys.stderr)
    return config


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


def _model_records(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The `verify-model --record` files for the HTML report, read before scanning (a bad one is exit 2). A scan
    without any imports nothing of `torch2ms.verify`."""
    if not args.model_record:
        return []
    from .verify.model_record import read_model_record

    if not (args.html or args.output_format == "html"):
        raise ConfigError("--model-record is shown in the HTML report: add --html FILE (or --output-format html)")
    return [read_model_record(path) for path in args.model_record]


def _cache_dir(args: argparse.Namespace, config: Config) -> Path:
    if args.cache_dir:
        return Path(args.cache_dir)
    base = Path(config.source).parent if config.source else Path.cwd()
    return base / CACHE_DIR_NAME


def _jobs(args: argparse.Namespace) -> int:
    return int(args.jobs) if args.jobs else default_jobs()


def _run_fix(args: argparse.Namespace, config: Config) -> int:
    """`scan --fix` / `scan --diff`: rewrite, then report what remains (exit code as scan)."""
    from .fix_files import fix_paths

    fixed = fix_paths(args.paths, config, unsafe=args.unsafe_fixes, write=not args.diff, jobs=_jobs(args))
    if not fixed:
        return _no_python_files(args.paths)
    errors = [f.error for f in fixed if f.error]
    for error in errors:
        print(f"torch2ms: error: {safe_text(error)}", file=sys.stderr)
    if args.diff:
        sys.stdout.write("".join(f.diff for f in fixed))
        changed = sum(1 for f in fixed if f.diff)
        print(f"{changed} file(s) would be changed", file=sys.stderr)
        return _exit_code(args, None, bool(changed or errors))
    results = sorted((f.result for f in fixed), key=lambda r: r.path)
    summary = emit([Scanned(r.path, r) for r in results], config, args)
    applied = sum(f.applied for f in fixed if f.changed)
    files = sum(1 for f in fixed if f.changed)
    print(f"fixed {applied} finding(s) in {files} file(s)", file=sys.stderr)
    return _exit_code(args, summary, bool(errors))


def _run_add_noqa(args: argparse.Namespace, config: Config) -> int:
    """`scan --add-noqa`: a noqa comment for every finding, written in place."""
    from .fix import FixError
    from .fix_files import rewrite_file
    from .noqa import add_noqa, unplaceable

    outcomes = scan_outcomes(args.paths, config, jobs=_jobs(args))
    if not outcomes:
        return _no_python_files(args.paths)
    lines = files = 0
    status = EXIT_CLEAN
    left: list[str] = []
    for outcome in outcomes:
        diagnostics = outcome.result.diagnostics
        if not diagnostics or outcome.result.error is not None:
            continue
        added = [0]

        def change(text: str, diagnostics: tuple[Diagnostic, ...] = diagnostics, added: list[int] = added,
                   path: str = outcome.path) -> str:
            new, added[0] = add_noqa(text, diagnostics)
            left.extend(f"{path}:{n}" for n in unplaceable(text, diagnostics))
            return new

        try:
            if rewrite_file(outcome.path, change):
                lines += added[0]
                files += 1
        except FixError as exc:
            print(f"torch2ms: error: {exc}", file=sys.stderr)
            status = EXIT_ERROR
    print(f"Added {lines} noqa comment{'s' if lines != 1 else ''} in {files} file{'s' if files != 1 else ''}.",
          file=sys.stderr)
    for place in left:
        print(f"{place}: cannot take a noqa comment (the line ends inside a multi-line string); "
              "suppress it with per-file-ignores in [tool.torch2ms] or a file-level # torch2ms: noqa", file=sys.stderr)
    if left and status == EXIT_CLEAN:
        status = EXIT_FINDINGS
    for path in args.paths:
        if not os.path.exists(path):  # as a scan: a path that does not exist is exit 2
            print(f"torch2ms: error: {path}: no such file or directory", file=sys.stderr)
            status = EXIT_ERROR
    return status


def _join_trace(outcomes: list[Scanned], path: str, config: Config) -> list[Scanned]:
    from . import trace
    from .api import read_source

    joined = trace.apply([o.result for o in outcomes], trace.load(path), load_table(), config,
                         lambda file: read_source(file)[0])
    print(trace.summary(joined), file=sys.stderr)
    return [Scanned(r.path, r) for r in joined.results]


def _run_stdin(args: argparse.Namespace, config: Config) -> int:
    """`scan -` / `--stdin-filename`: one file's text from standard input. --fix, --diff and --add-noqa
    print the changed text (or the diff) on standard output and write nothing."""
    from .api import scan_bytes

    name = args.stdin_filename or "-"
    text, result = scan_bytes(sys.stdin.buffer.read(), name, config)
    if args.fix or args.diff or args.add_noqa:
        if text is None:
            print(f"torch2ms: error: {name}: {result.diagnostics[0].message}", file=sys.stderr)
            return EXIT_ERROR
        if args.add_noqa:
            from .noqa import add_noqa

            sys.stdout.write(add_noqa(text, result.diagnostics)[0])
            return EXIT_CLEAN
        from .fix import fix_text, unified_diff

        outcome = fix_text(text, name, config, unsafe=args.unsafe_fixes)
        if args.diff:
            sys.stdout.write(unified_diff(name, text, outcome.text))
            return _exit_code(args, None, outcome.text != text)
        sys.stdout.write(outcome.text)
        from .engine import scan_source

        remaining = outcome.result if outcome.result is not None else scan_source(outcome.text, name, config)
        return _exit_code(args, ScanSummary.of([remaining]))
    outcomes, hidden = [Scanned(name, result)], None
    if args.baseline:
        outcomes, hidden = _without_baseline(args.baseline, outcomes, {name: text})
    summary = emit(outcomes, config, args, texts={name: text}, baseline_hidden=hidden)
    return _exit_code(args, summary)


def _exit_code(args: argparse.Namespace, summary: ScanSummary | None, failed: bool = False) -> int:
    """2 for a missing path (or a broken link or link loop); else 1 when a finding at or above --fail-on
    (or `failed`), unless --exit-zero."""
    if any(p != "-" and not os.path.exists(p) for p in args.paths):
        return EXIT_ERROR
    if args.exit_zero:
        return EXIT_CLEAN
    levels = FAIL_ON[:FAIL_ON.index(args.fail_on) + 1]
    if summary is not None and any(summary.by_severity.get(level) for level in levels):
        failed = True
    return EXIT_FINDINGS if failed else EXIT_CLEAN


def run_scan(args: argparse.Namespace) -> int:
    stdin = args.paths == ["-"] or (not args.paths and args.stdin_filename)
    if not args.paths and not stdin:
        args.paths = ["."]  # as ruff: no path scans the current folder
    if "-" in args.paths and not stdin:
        print("torch2ms scan: error: - (standard input) cannot be mixed with other paths", file=sys.stderr)
        return EXIT_ERROR
    if args.compare and not (args.html or args.output_format == "html"):
        print("torch2ms scan: error: --compare applies to the HTML report (--html FILE or --output-format html)",
              file=sys.stderr)
        return EXIT_ERROR
    if args.watch and (stdin or args.fix or args.diff or args.add_noqa or args.show_settings or args.show_files):
        print("torch2ms scan: error: --watch goes with a scan of files, not with standard input, --fix, --diff, "
              "--add-noqa, --show-settings or --show-files", file=sys.stderr)
        return EXIT_ERROR
    if args.baseline and (args.fix or args.diff or args.add_noqa):
        print("torch2ms scan: error: --baseline applies to reports, not to --fix, --diff or --add-noqa",
              file=sys.stderr)
        return EXIT_ERROR
    config = _config(args)
    if args.show_settings:
        return _show_settings(args, config)
    if args.show_files:
        return _show_files(args, config)
    args.models = _model_records(args)
    load_table()
    if stdin:
        return _run_stdin(args, config)
    if args.add_noqa:
        return _run_add_noqa(args, config)
    freeze_long_lived()
    if args.fix or args.diff:
        return _run_fix(args, config)
    if args.watch:
        from .watch import watch

        return watch(args.paths, config, lambda: _scan_once(args, config))
    return _scan_once(args, config)


def _scan_once(args: argparse.Namespace, config: Config) -> int:
    """One scan of `args.paths` and its report; the exit code."""
    progress = _Progress(not args.no_progress and not args.quiet and sys.stderr.isatty())
    cache = None if args.no_cache else Cache(_cache_dir(args, config), config, load_table(), render=render_file)
    outcomes = scan_outcomes(args.paths, config, jobs=_jobs(args), on_each=progress.update, cache=cache,
                             limits=Limits(args.file_timeout, args.file_memory_mb))
    progress.close()
    if not outcomes:
        return _no_python_files(args.paths)
    outcomes.sort(key=lambda o: o.path)
    if args.trace:
        outcomes = _join_trace(outcomes, args.trace, config)
    hidden = None
    if args.baseline:
        outcomes, hidden = _without_baseline(args.baseline, outcomes)
    writing.add_inputs(o.path for o in outcomes)  # no report replaces a file it reports on
    summary = emit(outcomes, config, args, baseline_hidden=hidden)
    return _exit_code(args, summary)


def _show_settings(args: argparse.Namespace, config: Config) -> int:
    """`scan --show-settings`: the settings the scan would use, one per line, and where they come from."""
    def codes(values: tuple[str, ...]) -> str:
        return ", ".join(values) if values else "(none)"

    lines = [
        f"settings file: {config.source or '(none: defaults)'}",
        f"paths: {', '.join(args.paths)}",
        f"select: {codes(config.selected) if config.selected else '(every code)'}",
        f"ignore: {codes(config.ignore)}",
        "per-file-ignores: " + ("; ".join(f"{glob} = {', '.join(c)}" for glob, c in config.per_file_ignores)
                                or "(none)"),
        f"target-version: {config.target_version}",
        f"device: {config.device}",
        f"exclude: {codes(config.excluded_names)}",
        f"respect-gitignore: {'true' if config.respect_gitignore else 'false'}",
        f"fail-on: {args.fail_on}",
        f"output-format: {args.output_format}",
    ]
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_CLEAN


def _show_files(args: argparse.Namespace, config: Config) -> int:
    """`scan --show-files`: the files the scan would read, sorted; a bad path is named on stderr (exit 2)."""
    from .api import iter_sources

    status = EXIT_CLEAN
    found = []
    for source in iter_sources(args.paths, config):
        if source.error is not None and source.error.error is not None:
            print(f"{source.path}: {source.error.error.message}", file=sys.stderr)
            status = EXIT_ERROR
        else:
            found.append(os.path.normpath(source.path))
    sys.stdout.write("".join(f"{path}\n" for path in sorted(found)))
    if not found and status == EXIT_CLEAN:
        return _no_python_files(args.paths)
    return status


def _no_python_files(paths: list[str]) -> int:
    """Nothing to scan is a usage error, as a wrong path is (exit 2): a CI job pointed at the wrong
    folder must not pass as clean."""
    print(f"torch2ms: error: no Python files found under {', '.join(paths)} (.py and .pyi files, and "
          "scripts named with a Python #! line)", file=sys.stderr)
    return EXIT_ERROR


def _without_baseline(path: str, outcomes: list[Scanned],
                      texts: dict[str, str | None] | None = None) -> tuple[list[Scanned], int]:
    """The outcomes without the findings the baseline report holds, and how many those were."""
    from .api import read_source
    from .baseline import Baseline

    known = texts or {}
    results, hidden = Baseline.load(path).filter(
        [o.result for o in outcomes], lambda p: known[p] if p in known else read_source(p)[0])
    return [Scanned(r.path, r) for r in results], hidden


def run_rule(args: argparse.Namespace) -> int:
    """`torch2ms rule CODE`: what a code means, its level, its category, its documentation."""
    from .codes import CODES, SelectorError, check_selector
    from .report.text import render_rules

    if args.all:
        codes = list(CODES)
    elif args.code:
        try:
            prefix = check_selector(args.code)
        except SelectorError as exc:
            print(f"torch2ms rule: error: {exc}", file=sys.stderr)
            return EXIT_ERROR
        codes = [c for c in CODES if c.startswith(prefix)]
    else:
        print("torch2ms rule: error: name a code (torch2ms rule TMS103) or use --all", file=sys.stderr)
        return EXIT_ERROR
    sys.stdout.write(render_rules([CODES[c] for c in codes], as_json=args.output_format == "json"))
    return EXIT_CLEAN


TRACE_CHILD_ENV = "TORCH2MS_TRACE_CHILD"  # set for the process that runs the traced script


def run_trace(args: argparse.Namespace) -> int:
    """`torch2ms trace`: the script runs in a child process (this command, with TRACE_CHILD_ENV set), which
    writes the trace when the script ends; this process watches it, so that a script that ends the
    process itself (``os._exit``, a signal) is reported as such instead of leaving no trace silently."""
    from .trace import program

    command = list(args.program)
    if command[:1] == ["--"]:
        command = command[1:]
    try:
        program(command)
    except ValueError as exc:
        print(f"torch2ms trace: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    if os.environ.get(TRACE_CHILD_ENV) != "1":
        return _watch_trace(args, command)
    try:
        from . import tracer  # imports torch: only this command does
    except ImportError as exc:
        print(f"torch2ms: error: torch2ms trace needs torch installed: {exc}", file=sys.stderr)
        return EXIT_ERROR
    status = tracer.run(command, args.output, args.include)
    if status:
        print(f"torch2ms trace: the script ended with exit code {status}; wrote {args.output} (the calls made "
              "until then)", file=sys.stderr)
    else:
        print(f"torch2ms trace: wrote {args.output}", file=sys.stderr)
    return status


def _identity(path: str) -> tuple[int, int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino, info.st_mtime_ns


def _watch_trace(args: argparse.Namespace, command: list[str]) -> int:
    import signal
    import subprocess

    writing.check_target(args.output)  # refused now rather than after the whole run
    before = _identity(args.output)
    child = [sys.executable, "-m", "torch2ms", "trace", "-o", args.output]
    for path in args.include:
        child += ["--include", path]
    if args.write_through_links:
        child.append("--write-through-links")
    if getattr(args, "verbose", False):
        child.append("--verbose")
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the script, which then writes
    try:
        status = subprocess.call([*child, "--", *command], env={**os.environ, TRACE_CHILD_ENV: "1"})
    finally:
        signal.signal(signal.SIGINT, previous)
    if _identity(args.output) != before and os.path.isfile(args.output):
        return status
    how = f"killed by signal {-status}" if status < 0 else f"exit code {status}"
    print(f"torch2ms trace: error: no trace written: the run ended ({how}) before torch2ms could write the "
          "trace: the script ended the process itself (os._exit, a signal), or see the error above", file=sys.stderr)
    return status if status > 0 else EXIT_ERROR


def run_mappings(args: argparse.Namespace) -> int:
    from . import mapping_tools  # imports torch/MindSpore lazily, only for this command

    if args.mappings_command == "check":
        return mapping_tools.run_check(sys.stdout)
    if args.mappings_command == "stats":
        return mapping_tools.run_stats(sys.stdout, as_json=args.json, show_missing=args.show_missing)
    print("torch2ms mappings: choose an action: check or stats", file=sys.stderr)
    return EXIT_ERROR


def run_migrate(args: argparse.Namespace) -> int:
    from .migrate.command import run

    return run(args)


def run_verify(args: argparse.Namespace) -> int:
    from .verify.command import main_safe  # torch/MindSpore are imported only in its worker processes

    return main_safe(args)


def run_convert_weights(args: argparse.Namespace) -> int:
    from .verify.convert_weights import run  # torch/MindSpore are imported only in its worker processes

    return run(args)


def run_verify_train(args: argparse.Namespace) -> int:
    from .verify.train import run  # torch/MindSpore are imported only in its worker processes

    return run(args)


def run_verify_model(args: argparse.Namespace) -> int:
    from .verify.model import run  # torch/MindSpore are imported only in its worker processes

    return run(args)


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(next((w for w in words if not w.startswith("-")), None))
    args = parser.parse_args(argv)
    handlers: dict[str, Any] = {"scan": run_scan, "rule": run_rule, "mappings": run_mappings, "lsp": run_lsp,
                                "verify": run_verify, "migrate": run_migrate, "trace": run_trace,
                                "convert-weights": run_convert_weights, "verify-model": run_verify_model,
                                "verify-train": run_verify_train,
                                "completion": lambda args: run_completion(args, build_parser())}
    handler = handlers.get(args.command)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    configure_process()
    try:
        writing.begin_run(_inputs(args), getattr(args, "write_through_links", False))
        return int(handler(args))
    except BaseException as exc:  # noqa: BLE001 - the one place that turns any failure into exit code 2
        return fail(exc, verbose=getattr(args, "verbose", False))


# Expected errors of modules a command imports only when it needs them (a scan starts without them):
# an exception can be one of these only where its module was imported.
_LAZY_ERRORS = (("torch2ms.baseline", "BaselineError"), ("torch2ms.trace", "TraceError"),
                ("torch2ms.verify.model_record", "ModelRecordError"))


def _loaded_error(exc: BaseException) -> bool:
    return any(isinstance(exc, getattr(sys.modules[module], name)) for module, name in _LAZY_ERRORS
               if module in sys.modules)


def _inputs(args: argparse.Namespace) -> list[str]:
    """The files a command reads, which none of its outputs may replace."""
    found: list[str] = []
    for name in ("paths", "model_record"):
        found.extend(getattr(args, name, None) or [])
    for name in ("checkpoint", "map", "baseline", "compare", "config", "weights"):
        value = getattr(args, name, None)
        if isinstance(value, str):
            found.append(value)
    if args.command == "scan" and isinstance(args.trace, str):
        found.append(args.trace)
    for name in ("original", "ported"):  # verify-model's FILE.py:FACTORY
        value = getattr(args, name, None)
        if isinstance(value, str):
            found.append(value.rpartition(":")[0] or value)
    program = [p for p in getattr(args, "program", None) or [] if p != "--"]
    if program:
        found.append(program[0])
    return found


def fail(exc: BaseException, verbose: bool = False) -> int:
    """The exit-code policy for a command that did not finish: one line on stderr, exit code 2.

    Expected errors (configuration, mapping tables, baseline, output, cache) print their message,
    which names the file; anything else is an internal error, named as such, with its traceback only
    under ``--verbose``. Exit code 1 stays reserved for findings."""
    if isinstance(exc, SystemExit):
        raise exc
    if isinstance(exc, BrokenPipeError):  # the reader went away (| head): nothing left to say
        with contextlib.suppress(OSError, ValueError):  # and nothing left to flush at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    if isinstance(exc, KeyboardInterrupt):
        message = "interrupted"
    elif isinstance(exc, (ConfigError, MappingError, OutputError, CacheError, WriteError, MissingExtra)) \
            or _loaded_error(exc):
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
        import traceback

        traceback.print_exception(exc, file=sys.stderr)
    with contextlib.suppress(OSError, ValueError):
        print(f"torch2ms: {safe_text(' '.join(message.splitlines()))}", file=sys.stderr)
    return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
