"""Trace files (``torch2ms trace``) and what ``torch2ms scan --trace FILE`` does with them.

A trace records the torch calls a run of the user's program made, per call site: the file, the
position of the call expression (line, column, end line, end column; columns in UTF-8 bytes as
Python's ast counts them), the API (with its other public names: ``torch.conv2d`` is
``torch.nn.functional.conv2d``), what kind of call it was, how often it ran and the shapes seen.
`torch2ms.tracer` writes it (and is the only part that runs code); this module only reads it, so
the scan stays free of torch.

`apply` joins a trace to a scan's results: a finding whose call ran is marked ``confirmed``;
a call that only the trace saw (reached through getattr, a registry, a string) becomes a finding
at its call site, marked ``runtime_only``; a dynamic-shape finding is confirmed where the op's
output shape varied while its input shapes stayed the same, and a conditional one (TMS202/TMS204
and their data-processing codes) is cleared where the call ran at least twice and its output
shape always followed its input shapes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from . import checks
from .config import Config
from .engine import suppressed
from .files import MiB, UnreadableFile, read_regular
from .jsonfile import loads_bounded
from .mappings import MappingTable, TableView
from .model import ApiCall, CallKind, Category, Diagnostic, FileResult, Span
from .source import SourceText

FORMAT = "torch2ms-trace"
VERSION = 1
MAX_TRACE_BYTES = 512 * MiB  # a trace of a long run is large, but never this large

# Kinds of recorded calls that are API uses the scanner reports (layer calls are not: a layer is
# reported where it is built).
API_KINDS = frozenset({"function", "functional", "method", "layer", "class", "object_method"})
CONFIRMED = "confirmed"
RUNTIME_ONLY = "runtime_only"
SHAPE_VARIED = "shape_varied"
_CONDITIONAL_SHAPE_CODES = frozenset({"TMS202", "TMS204", "TMS252", "TMS254"})


def program(command: Sequence[str]) -> tuple[str | None, list[str]]:
    """(module or None, argv) of what ``torch2ms trace -- COMMAND`` runs (``python SCRIPT.py ARGS``,
    ``SCRIPT.py ARGS`` or ``python -m MODULE ARGS``); ValueError saying what is wrong with it."""
    argv = list(command)
    if argv and os.path.basename(argv[0]).startswith("python"):
        argv = argv[1:]
    if not argv:
        raise ValueError("nothing to run: give the script, e.g. torch2ms trace -- python train.py")
    if argv[0] == "-m":
        if len(argv) < 2:
            raise ValueError("-m needs a module name")
        return argv[1], argv[1:]
    if argv[0].startswith("-"):
        raise ValueError(f"unsupported interpreter option {argv[0]!r}: run a script or -m MODULE")
    if not os.path.isfile(argv[0]):
        raise ValueError(f"{argv[0]}: no such script")
    return None, argv


class TraceError(Exception):
    """A trace file that cannot be used; the message names the file and the reason."""


@dataclass(frozen=True, slots=True)
class TracedCall:
    file: str
    line: int
    col: int
    end_line: int
    end_col: int
    api: str
    kind: str
    count: int
    aliases: tuple[str, ...] = ()
    shapes: tuple[tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]], ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return (self.api, *self.aliases)

    def shape_varied(self) -> bool:
        """The output shape differed between calls with the same input shapes."""
        seen: dict[object, object] = {}
        for inputs, outputs in self.shapes:
            if seen.setdefault(inputs, outputs) != outputs:
                return True
        return False

    def shape_followed_inputs(self) -> bool:
        """Ran at least twice, and every input signature gave one output signature."""
        return self.count >= 2 and bool(self.shapes) and not self.shape_varied()


@dataclass(frozen=True)
class Trace:
    path: str
    calls: tuple[TracedCall, ...]

    def by_file(self) -> dict[str, list[TracedCall]]:
        out: dict[str, list[TracedCall]] = {}
        for call in self.calls:
            out.setdefault(_key(call.file), []).append(call)
        return out


def _key(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))


def _shape_list(value: object, where: str) -> tuple[tuple[int, ...], ...]:
    if not isinstance(value, list) or not all(
            isinstance(s, list) and all(isinstance(d, int) for d in s) for s in value):
        raise ValueError(f"{where}: expected a list of shapes")
    return tuple(tuple(s) for s in value)


def parse(text: str, path: str) -> Trace:
    try:
        doc = loads_bounded(text)
    except json.JSONDecodeError as exc:
        raise TraceError(f"{path}: not a trace file: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:
        raise TraceError(f"{path}: not a trace file: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise TraceError(f"{path}: not a trace file (no \"format\": \"{FORMAT}\"); make one with torch2ms trace")
    if doc.get("version") != VERSION:
        raise TraceError(f"{path}: trace format version {doc.get('version')!r} is not supported (expected {VERSION})")
    raw = doc.get("calls")
    if not isinstance(raw, list):
        raise TraceError(f"{path}: \"calls\" must be a list")
    calls = []
    for index, item in enumerate(raw):
        where = f"calls[{index}]"
        try:
            if not isinstance(item, dict):
                raise ValueError(f"{where}: expected an object")
            for key, kind in (("file", str), ("api", str), ("kind", str), ("line", int), ("col", int),
                              ("end_line", int), ("end_col", int), ("count", int)):
                if not isinstance(item.get(key), kind) or isinstance(item.get(key), bool):
                    raise ValueError(f"{where}.{key}: expected {kind.__name__}")
            aliases = item.get("aliases", [])
            if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
                raise ValueError(f"{where}.aliases: expected a list of names")
            shapes = []
            for number, pair in enumerate(item.get("shapes", [])):
                if not isinstance(pair, dict):
                    raise ValueError(f"{where}.shapes[{number}]: expected an object")
                shapes.append((_shape_list(pair.get("in"), f"{where}.shapes[{number}].in"),
                               _shape_list(pair.get("out"), f"{where}.shapes[{number}].out")))
        except ValueError as exc:
            raise TraceError(f"{path}: {exc}") from None
        calls.append(TracedCall(item["file"], item["line"], item["col"], item["end_line"], item["end_col"],
                                item["api"], item["kind"], item["count"], tuple(aliases), tuple(shapes)))
    return Trace(path, tuple(calls))


def load(path: str) -> Trace:
    """The trace file at `path`, read like any untrusted file (a regular file, at most MAX_TRACE_BYTES)."""
    if not os.path.lexists(path):
        raise TraceError(f"{path}: no such trace file")
    try:
        text = read_regular(path, MAX_TRACE_BYTES).decode("utf-8")
    except UnreadableFile as exc:
        raise TraceError(f"{path}: cannot read the trace file: {exc}") from None
    except UnicodeDecodeError as exc:
        raise TraceError(f"{path}: cannot read the trace file: {exc}") from None
    return parse(text, path)


def matches(diag_span: Span, call: TracedCall) -> bool:
    """Whether a finding's span is the traced call's expression: the same end line and the call's first
    line inside the span (a method call's instruction starts at the method's name, a function call's at
    the callee)."""
    return diag_span.end_line == call.end_line and diag_span.start_line <= call.line <= diag_span.end_line


@dataclass
class Joined:
    """A scan's results joined with a trace, and the counts for the summary line."""

    results: list[FileResult]
    confirmed: int = 0
    runtime_only: int = 0
    shape_varied: int = 0
    cleared: int = 0
    traced_files: int = 0


def apply(results: Sequence[FileResult], trace: Trace, table: MappingTable, config: Config,
          read: Callable[[str], str | None]) -> Joined:
    """`results` with the trace's facts (see the module docstring). `read(path)` gives a file's text,
    for the columns of runtime-only findings (None: columns from the trace as they are)."""
    by_file = trace.by_file()
    joined = Joined([])
    for result in results:
        calls = by_file.get(_key(result.path))
        if not calls or result.error is not None:
            joined.results.append(result)
            continue
        joined.traced_files += 1
        joined.results.append(_join_file(result, calls, table.view(config.version, config.device), config, read,
                                         joined))
    return joined


def _join_file(result: FileResult, calls: list[TracedCall], view: TableView, config: Config,
               read: Callable[[str], str | None], joined: Joined) -> FileResult:
    by_end: dict[int, list[TracedCall]] = {}
    for call in calls:
        by_end.setdefault(call.end_line, []).append(call)
    used: set[int] = set()
    out: list[Diagnostic] = []
    for diag in result.diagnostics:
        api = diag.torch_api
        found = None
        if api:
            for call in by_end.get(diag.span.end_line, ()):
                if api in call.names and matches(diag.span, call):
                    found = call
                    break
        if found is None:
            out.append(diag)
            continue
        used.add(id(found))
        if diag.category is Category.DYNAMIC_SHAPE:
            if found.shape_varied():
                joined.shape_varied += 1
                out.append(replace(diag, runtime=SHAPE_VARIED))
                continue
            if diag.code in _CONDITIONAL_SHAPE_CODES and found.shape_followed_inputs():
                joined.cleared += 1
                continue
        if diag.code == "TMS105":  # the trace proves the receiver a tensor
            diag = checks.check_call(ApiCall(api=found.api if api not in found.names else api, span=diag.span,
                                             kind=CallKind.METHOD), view)
        joined.confirmed += 1
        out.append(replace(diag, runtime=CONFIRMED))
    source: SourceText | None = None
    for call in calls:
        if id(call) in used or call.kind not in API_KINDS or not _is_public(call.api):
            continue
        if any(d.torch_api in call.names and matches(d.span, call) for d in out):
            continue  # a second traced name of a finding already confirmed
        if source is None:
            source = SourceText(read(result.path) or "")
        span = Span(call.line, _char_col(source, call.line, call.col), call.end_line,
                    _char_col(source, call.end_line, call.end_col))
        api = _preferred(call, view.table)
        diag = checks.check_call(ApiCall(api=api, span=span, kind=CallKind.METHOD if call.kind == "method" else CallKind.CALL),
                                 view)
        if not config.enabled(diag.code) or suppressed(diag, source.lines):
            continue
        out = [d for d in out if not _misnamed(d, call)]  # the scanner named another API for this call
        joined.runtime_only += 1
        out.append(replace(diag, runtime=RUNTIME_ONLY,
                           message=f"seen only at runtime ({call.count} call{'s' if call.count != 1 else ''}): "
                                   f"{diag.message}"))
    out.sort(key=Diagnostic.sort_key)
    return FileResult(path=result.path, diagnostics=tuple(out), lines=result.lines, scope=result.scope)


def _misnamed(diag: Diagnostic, call: TracedCall) -> bool:
    api = diag.torch_api or ""
    return bool(api) and matches(diag.span, call) and api.rpartition(".")[2] == call.api.rpartition(".")[2] \
        and api not in call.names


def _is_public(api: str) -> bool:
    return api.startswith("torch.") and not any(part.startswith("_") and not part.startswith("_foreach")
                                                for part in api.split(".")[1:-1]) \
        and not api.rpartition(".")[2].startswith("__")


def _preferred(call: TracedCall, table: MappingTable) -> str:
    """Of the call's names, the first the tables know (else its first)."""
    for name in call.names:
        if table.lookup(name) is not None:
            return name
    return call.api


def _char_col(source: SourceText, line: int, byte_col: int) -> int:
    return source.char_col(line, byte_col) if 0 < line <= len(source.lines) else byte_col


def summary(joined: Joined) -> str:
    return (f"trace: {joined.traced_files} traced file(s); {joined.confirmed} finding(s) confirmed at runtime, "
            f"{joined.runtime_only} seen only at runtime, {joined.shape_varied} dynamic shape(s) seen varying, "
            f"{joined.cleared} conditional dynamic-shape finding(s) cleared")
