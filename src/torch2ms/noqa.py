"""Adding `# noqa: CODE` comments: `torch2ms scan --add-noqa` and the editor's suppress action.

A code is appended to a line's existing `# noqa: A, B` list, else a `  # noqa: CODE`
comment is added at the end of the line. A finding on a line that ends in a `\\`
continuation takes its comment at the end of the continued statement (where the scanner
reads it, `engine.noqa_line`). A line that ends inside a multi-line string cannot take a
comment: `unplaceable` names those findings' lines, so the command can say so. Pure: no I/O.
"""

from __future__ import annotations

import io
import re
import token
import tokenize
from collections.abc import Iterable

from .engine import noqa_codes, noqa_line
from .model import Category, Diagnostic
from .source import split_lines, split_lines_keepends

# The same shape as the scanner's noqa pattern (engine._NOQA), so the added codes are read back.
_NOQA_LIST = re.compile(r"#\s*noqa:\s?[A-Z0-9]+(?:[,\s]+[A-Z0-9]+)*", re.IGNORECASE)


def insertion(line: str, codes: Iterable[str]) -> tuple[int, int, str] | None:
    """(start column, end column, text) that adds the `codes` the line's noqa comment does not cover
    yet; None when there is nothing to add or the line cannot take a comment."""
    present = noqa_codes(line)
    if present is not None and not present:
        return None  # a bare noqa comment covers every code
    wanted = [c for c in dict.fromkeys(codes) if present is None or not any(c.startswith(p) for p in present)]
    if not wanted:
        return None
    stripped = line.rstrip()
    if stripped.endswith("\\"):
        return None  # a comment after a line continuation is a syntax error
    if present:
        match = _NOQA_LIST.search(line)
        if match is not None:
            return match.end(), match.end(), "".join(f", {c}" for c in wanted)
    return len(stripped), len(line), f"  # noqa: {', '.join(wanted)}"


def _lines_inside_strings(text: str) -> set[int]:
    """1-based lines whose end lies inside a string token (a triple-quoted string's inner lines)."""
    inside: set[int] = set()
    string_types = {token.STRING} | {getattr(token, n) for n in ("FSTRING_MIDDLE", "TSTRING_MIDDLE")
                                      if hasattr(token, n)}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in string_types and tok.end[0] > tok.start[0]:
                inside.update(range(tok.start[0], tok.end[0]))
    except (tokenize.TokenError, SyntaxError, ValueError):
        return set(range(1, len(split_lines(text)) + 1))  # broken code: add nothing
    return inside


def add_noqa(text: str, diagnostics: Iterable[Diagnostic]) -> tuple[str, int]:
    """`text` with a noqa comment for every finding (file errors excepted) on its first line, and
    the number of lines changed."""
    pieces = split_lines_keepends(text)
    lines = [piece.rstrip("\r\n") for piece in pieces]
    by_line: dict[int, list[str]] = {}
    for diag in diagnostics:
        if diag.category is not Category.FILE_ERROR:
            number = diag.span.start_line
            if 1 <= number <= len(lines):
                number = noqa_line(lines, number - 1) + 1
            by_line.setdefault(number, []).append(diag.code)
    if not by_line:
        return text, 0
    blocked = _lines_inside_strings(text)
    changed = 0
    for number, codes in by_line.items():
        if number in blocked or not 1 <= number <= len(pieces):
            continue
        full = pieces[number - 1]
        body = full.rstrip("\r\n")
        edit = insertion(body, sorted(codes))
        if edit is None:
            continue
        start, end, new = edit
        pieces[number - 1] = body[:start] + new + body[end:] + full[len(body):]
        changed += 1
    return "".join(pieces), changed


def unplaceable(text: str, diagnostics: Iterable[Diagnostic]) -> list[int]:
    """The lines (1-based, sorted) of findings that no noqa comment can reach: the line ends inside a
    multi-line string, where a `#` would be part of the string."""
    numbers = {d.span.start_line for d in diagnostics if d.category is not Category.FILE_ERROR}
    if not numbers:
        return []
    lines = split_lines(text)
    targets = {n: noqa_line(lines, n - 1) + 1 if 1 <= n <= len(lines) else n for n in numbers}
    blocked = _lines_inside_strings(text)
    return sorted(n for n, target in targets.items() if target in blocked)
