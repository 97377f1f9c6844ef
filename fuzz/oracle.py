"""The properties every input must satisfy. Each check returns a list of problems (empty: fine).

A problem is a one-line description; an exception escaping the code under test is a
problem that carries the last lines of its traceback.
"""

from __future__ import annotations

import ast
import os
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path

from torch2ms.codes import CODES
from torch2ms.config import Config
from torch2ms.engine import scan_source
from torch2ms.process import configure_process
from torch2ms.source import split_lines
from torch2ms.mappings import MappingTable, load_table
from torch2ms.model import FileResult
from torch2ms.source import SourceText

FILE_ERRORS = ("TMS901", "TMS902", "TMS903", "TMS904")


def shared_table() -> MappingTable:
    return load_table()


def parses(text: str) -> bool | None:
    """True/False: the text is/is not valid Python; None: CPython cannot tell (too deep or too big)."""
    configure_process()  # the recursion limit the CLI runs with: the oracle judges what the tool sees
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except SyntaxError:
        return False
    except (RecursionError, MemoryError):
        return None
    except ValueError:  # e.g. NUL bytes on older Pythons
        return False
    return True


def _crash(what: str) -> str:
    lines = traceback.format_exc().strip().splitlines()
    return f"{what} raised: " + " | ".join(line.strip() for line in lines[-6:])


def check_result(result: FileResult, text: str | None, path: str) -> list[str]:
    """Shape of one FileResult: known codes, a file error alone, spans inside the text."""
    problems: list[str] = []
    if result.path != path:
        problems.append(f"result path {result.path!r} is not the scanned path {path!r}")
    codes = [d.code for d in result.diagnostics]
    for code in codes:
        if code not in CODES:
            problems.append(f"unknown code {code}")
    errors = [c for c in codes if c in FILE_ERRORS]
    if errors and len(codes) != 1:
        problems.append(f"a file error must be the only diagnostic, got {codes}")
    for diag in result.diagnostics:
        if not diag.message.strip():
            problems.append(f"{diag.code} with an empty message")
    if text is None:
        return problems
    lines = split_lines(text)
    src = SourceText(text)
    for diag in result.diagnostics:
        s = diag.span
        if not 1 <= s.start_line <= s.end_line or (s.start_line, s.start_col) > (s.end_line, s.end_col):
            problems.append(f"{diag.code}: malformed span {s}")
            continue
        if s.end_line > len(lines) + (diag.code in FILE_ERRORS):
            problems.append(f"{diag.code}: span {s} beyond the text's {len(lines)} lines")
            continue
        if diag.code in FILE_ERRORS:
            continue  # a syntax error may point one past the end of a line
        if s.start_col > len(lines[s.start_line - 1]) or s.end_col > len(lines[s.end_line - 1]):
            problems.append(f"{diag.code}: span {s} has a column beyond its line")
        for edit in diag.fix.edits if diag.fix is not None else ():
            try:  # the positions apply_edits resolves (one SourceText for all: linear, not quadratic)
                if src.offset(edit.span.end_line, edit.span.end_col) < src.offset(edit.span.start_line,
                                                                                   edit.span.start_col):
                    problems.append(f"{diag.code}: a fix edit ends before it starts: {edit.span}")
            except ValueError as exc:
                problems.append(f"{diag.code}: a fix edit is outside the text: {exc}")
    return problems


def check_scan(text: str, path: str = "fuzz_input.py", repeat: bool = False, lsp: bool = False) -> list[str]:
    """`scan_source` on any text: no exception; TMS901 exactly when the text does not parse;
    never TMS904 (an internal error) on text that parses; spans inside the text."""
    table = shared_table()
    try:
        result = scan_source(text, path, Config(), table)
    except BaseException:  # noqa: BLE001 - anything escaping is the finding
        return [_crash("scan_source")]
    return _properties(result, text, path, table, repeat, lsp)


def _properties(result: FileResult, text: str, path: str, table: MappingTable, repeat: bool = False,
                lsp: bool = False) -> list[str]:
    problems = check_result(result, text, path)
    codes = [d.code for d in result.diagnostics]
    if "torch" in text and "\x00" not in text:
        ok = parses(text)
        if ok is True and any(c in ("TMS901", "TMS903") for c in codes):
            problems.append(f"valid Python reported as a file error: {result.diagnostics[0].message}")
        if ok is False and codes != ["TMS901"]:
            problems.append(f"invalid Python not reported as one TMS901: {codes}")
        if ok is True and "TMS904" in codes:
            problems.append(f"TMS904 internal error on valid Python: {result.diagnostics[0].message}")
    elif "\x00" in text and "torch" in text and codes != ["TMS903"]:
        problems.append(f"text with NUL bytes not reported as one TMS903: {codes}")
    if repeat:
        again = scan_source(text, path, Config(), table)
        if again != result:
            problems.append("scanning the same text twice gave different results")
    if lsp and result.diagnostics:
        problems += check_lsp_conversion(result, text)
    return problems


def check_lsp_conversion(result: FileResult, text: str) -> list[str]:
    """The language server's span conversion on this text, in each position encoding."""
    try:
        from lsprotocol import types as lsp_types

        from torch2ms.lsp import convert
    except ImportError:
        return []
    problems: list[str] = []
    for encoding in (lsp_types.PositionEncodingKind.Utf16, lsp_types.PositionEncodingKind.Utf8,
                     lsp_types.PositionEncodingKind.Utf32):
        try:
            lines = convert.Lines(text, encoding)
            items = convert.to_lsp_all(result.diagnostics, lines)
            for diag, item in zip(result.diagnostics, items):
                back = lines.from_client(item.range.start)
                if diag.code not in FILE_ERRORS and back != (diag.span.start_line, diag.span.start_col) \
                        and diag.span.start_col <= len(lines.line(diag.span.start_line - 1)):
                    problems.append(f"lsp {encoding}: {diag.code} at {diag.span} round-trips to {back}")
                if diag.fix is not None:
                    convert.text_edits(diag.fix.edits, lines)
        except BaseException:  # noqa: BLE001
            problems.append(_crash(f"lsp conversion ({encoding})"))
    return problems


def check_fix(text: str, path: str = "fuzz_input.py", unsafe: bool = False) -> list[str]:
    """`fix_source`: only a FixError naming the file may escape; on valid input the output
    parses and fixing it again changes nothing; invalid input comes back unchanged."""
    from torch2ms.fix import FixError, fix_source

    try:
        new, _applied = fix_source(text, path, Config(), unsafe=unsafe)
    except FixError as exc:
        return [] if str(exc).startswith(path) else [f"FixError without the file name: {exc}"]
    except BaseException:  # noqa: BLE001
        return [_crash("fix_source")]
    ok = parses(text)
    problems: list[str] = []
    if ok is False and new != text:
        problems.append("fix_source changed a text that does not parse")
    if ok is True:
        if parses(new) is not True:
            problems.append("fix_source output does not parse")
        else:
            try:
                again, applied_again = fix_source(new, path, Config(), unsafe=unsafe)
            except BaseException:  # noqa: BLE001
                return [_crash("fix_source (second run)")]
            if again != new:
                problems.append(f"fix_source is not idempotent ({len(applied_again)} more fix(es) on its own output)")
    return problems


def check_bytes(data: bytes, name: str = "fuzz_input.py") -> list[str]:
    """`scan_paths` on a file with these bytes: one result for the file, a TMS90x on bad bytes."""
    from torch2ms.api import decode, scan_paths

    with tempfile.TemporaryDirectory(prefix="torch2ms-fuzz-") as folder:
        path = os.path.join(folder, name)
        Path(path).write_bytes(data)
        try:
            results = scan_paths([path], Config())
        except BaseException:  # noqa: BLE001
            return [_crash("scan_paths")]
        if len(results) != 1:
            return [f"scan_paths gave {len(results)} results for one file"]
        (result,) = results
        text, error = decode(data, path)
        problems = check_result(result, text, path)
        if text is None:
            codes = [d.code for d in result.diagnostics]
            if codes not in (["TMS902"], ["TMS903"]):
                problems.append(f"undecodable bytes not reported as one TMS902/TMS903: {codes}")
        else:
            problems = _properties(result, text, path, shared_table())
            if result != scan_source(text, path, Config(), shared_table()):
                problems.append("scan_paths and scan_source disagree on the same text")
    return problems


def check_never_answers(how: str) -> list[str]:
    """Never returns: a hang of the kind `how` names ("cpu": a busy loop, "blocked": asleep), for the
    runner's own test that it tells each from a slow answer."""
    while True:
        if how == "blocked":
            time.sleep(3600)


CHECKS: dict[str, Callable[..., list[str]]] = {"scan": check_scan, "fix": check_fix, "bytes": check_bytes, "never_answers": check_never_answers}
