"""The position model: a source text, its lines as Python counts them, offsets and columns.

Every part of torch2ms that turns a position into text or text into a position goes
through this module: the resolver (ast's UTF-8 byte columns to code points), the fixes
(spans to offsets), the reports (lines to show), the language server (LSP's UTF-16,
UTF-8 or UTF-32 columns) and ``torch2ms verify FILE:LINE`` (a line to the call on it).

Lines are physical lines as Python's tokenizer counts them: a line ends at ``\\r\\n``,
``\\r`` or ``\\n`` and nowhere else. `str.splitlines` also breaks at form feed,
``\\v``, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028 and U+2029, which Python's tokenizer
keeps inside a line; using it puts a position on the wrong line.

A `Span` has 1-based lines and 0-based columns counted in code points; an offset is an
index into the text (code points). Pure: no I/O.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from enum import Enum
from itertools import accumulate, repeat
from operator import add
from typing import Protocol

from .model import Span

LINE_BREAK = re.compile(r"\r\n|\r|\n")


class Located(Protocol):
    """An ast node with a position (ast's columns are UTF-8 byte offsets)."""

    lineno: int
    col_offset: int
    end_lineno: int | None
    end_col_offset: int | None


class Encoding(str, Enum):
    """The unit a column is counted in (LSP's position encodings)."""

    UTF8 = "utf-8"
    UTF16 = "utf-16"
    UTF32 = "utf-32"  # code points, the scanner's own unit


def split_lines(text: str) -> list[str]:
    """The physical lines of `text` without their line breaks (a text ending in a break has an empty last line)."""
    return text.split("\n") if "\r" not in text else LINE_BREAK.split(text)


def line_starts(text: str, lines: list[str] | None = None) -> list[int]:
    """The offset where each physical line of `text` starts; `lines`, when given, are its `split_lines`."""
    if "\r" in text:
        return [0, *(match.end() for match in LINE_BREAK.finditer(text))]
    # one break character after each line: the running sum of the lines' lengths plus one (in C, no
    # Python step per line: this runs on every file scanned)
    starts = list(accumulate(map(add, map(len, text.split("\n") if lines is None else lines), repeat(1)),
                             initial=0))
    starts.pop()  # the sum after the last line: no line starts there
    return starts


def split_lines_keepends(text: str) -> list[str]:
    """The physical lines with their line breaks; joined they give `text` back."""
    out: list[str] = []
    start = 0
    for match in LINE_BREAK.finditer(text):
        out.append(text[start:match.end()])
        start = match.end()
    if start < len(text):
        out.append(text[start:])
    return out


def count_lines(text: str) -> int:
    """The number of lines a report counts: a final line break does not start another line."""
    if not text:
        return 0
    breaks = text.count("\n") + text.count("\r") - text.count("\r\n")
    return breaks + (0 if text.endswith(("\n", "\r")) else 1)


def units(chars: str, encoding: Encoding) -> int:
    """The length of `chars` in `encoding`'s units."""
    if encoding is Encoding.UTF32 or chars.isascii():
        return len(chars)
    if encoding is Encoding.UTF8:
        return len(chars.encode("utf-8", "surrogatepass"))
    return len(chars.encode("utf-16-le", "surrogatepass")) // 2


def column_at(line: str, wanted: int, encoding: Encoding) -> int:
    """The code-point column of `line` at `wanted` units (clamped to the line; inside a character: after it)."""
    wanted = max(wanted, 0)
    if encoding is Encoding.UTF32 or line.isascii():
        return min(wanted, len(line))
    count = 0
    for col, char in enumerate(line):
        if count >= wanted:
            return col
        count += units(char, encoding)
    return len(line)


def any_line_between(lines: list[int], first: int, last: int) -> bool:
    """Whether the ascending line numbers `lines` hold one from `first` to `last`."""
    index = bisect.bisect_left(lines, first)
    return index < len(lines) and lines[index] <= last


class SourceText:
    """A text with its line starts: positions to offsets and back, spans to text, ast nodes to spans."""

    __slots__ = ("text", "ascii", "_starts", "_lines")

    def __init__(self, text: str) -> None:
        self.text = text
        self.ascii = text.isascii()
        self._starts: list[int] | None = None  # built on first use: an ASCII file's analysis needs none
        self._lines: list[str] | None = None

    @property
    def line_starts(self) -> list[int]:
        """The offset where each physical line starts."""
        if self._starts is None:
            self._starts = line_starts(self.text, self._lines)
        return self._starts

    @property
    def newline(self) -> str:
        """The text's first line break (what an inserted line ends with)."""
        first = LINE_BREAK.search(self.text)
        return first.group(0) if first else "\n"

    # ------------------------------------------------------------------ lines
    @property
    def lines(self) -> list[str]:
        """The physical lines without their breaks (index 0 is line 1)."""
        if self._lines is None:
            self._lines = split_lines(self.text)
        return self._lines

    def __len__(self) -> int:
        """The number of physical lines (a text ending in a line break has an empty last line)."""
        return len(self.line_starts)

    def line(self, lineno: int) -> str:
        """Line `lineno` (1-based) without its break; "" outside the text."""
        lines = self.lines
        return lines[lineno - 1] if 1 <= lineno <= len(lines) else ""

    def line_end(self, lineno: int) -> int:
        """The offset where line `lineno`'s text ends (before its break)."""
        return self.line_starts[lineno - 1] + len(self.line(lineno))

    def line_after(self, lineno: int) -> int:
        """The offset just after line `lineno`'s break (the end of the text for the last line)."""
        return self.line_starts[lineno] if lineno < len(self.line_starts) else len(self.text)

    # ------------------------------------------------------------------ offsets
    def offset(self, line: int, col: int) -> int:
        """The offset of (1-based line, code-point column); ValueError outside the text."""
        starts = self.line_starts
        if not 1 <= line <= len(starts):
            raise ValueError(f"line {line} is outside the text ({len(starts)} lines)")
        start = starts[line - 1]
        after = starts[line] if line < len(starts) else len(self.text)  # `line_after`, inline: a hot path
        if not 0 <= col <= after - start:
            raise ValueError(f"column {col} is outside line {line}")
        return start + col

    def position(self, offset: int) -> tuple[int, int]:
        """(1-based line, code-point column) of an offset."""
        index = bisect.bisect_right(self.line_starts, offset) - 1
        return index + 1, offset - self.line_starts[index]

    def lines_matching(self, pattern: re.Pattern[str]) -> list[int]:
        """The lines (1-based, ascending, each once) on which a match of `pattern` starts."""
        lines: list[int] = []
        for match in pattern.finditer(self.text):
            line = self.position(match.start())[0]
            if not lines or lines[-1] != line:
                lines.append(line)
        return lines

    def span_of(self, start: int, end: int) -> Span:
        return Span(*self.position(start), *self.position(end))

    def slice(self, span: Span) -> str:
        """The text of `span`; ValueError when it lies outside the text."""
        return self.text[self.offset(span.start_line, span.start_col):self.offset(span.end_line, span.end_col)]

    # ------------------------------------------------------------------ ast columns (UTF-8 bytes)
    def char_col(self, line: int, byte_col: int) -> int:
        """ast's UTF-8 byte column on `line` as a code-point column."""
        if self.ascii:
            return byte_col
        text = self.line(line)
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8", "surrogatepass")[:byte_col].decode("utf-8", errors="replace"))

    def byte_col(self, line: int, col: int) -> int:
        """A code-point column on `line` as ast's UTF-8 byte column."""
        if self.ascii:
            return col
        return len(self.line(line)[:col].encode("utf-8", "surrogatepass"))

    def span(self, node: Located) -> Span:
        """The span of an ast node that carries a position (statements, expressions, keywords, ...)."""
        lineno = node.lineno
        end_lineno = node.end_lineno or lineno
        if self.ascii:  # ast's byte columns are the columns (`char_col`, inline: every call's span comes here)
            return Span(lineno, node.col_offset, end_lineno, node.end_col_offset or 0)
        return Span(lineno, self.char_col(lineno, node.col_offset),
                    end_lineno, self.char_col(end_lineno, node.end_col_offset or 0))

    def node_offsets(self, node: Located) -> tuple[int, int]:
        """(start, end) offsets of an ast node."""
        span = self.span(node)
        return self.offset(span.start_line, span.start_col), self.offset(span.end_line, span.end_col)

    # ------------------------------------------------------------------ editor columns
    def to_units(self, line: int, col: int, encoding: Encoding) -> int:
        """A code-point column on `line` in `encoding`'s units (clamped to the line)."""
        text = self.line(line)
        col = min(max(col, 0), len(text))
        return col if encoding is Encoding.UTF32 or text.isascii() else units(text[:col], encoding)

    def from_units(self, line: int, wanted: int, encoding: Encoding) -> int:
        """A column in `encoding`'s units on `line` as a code-point column (clamped to the line)."""
        return column_at(self.line(line), wanted, encoding)

    def iter_lines(self) -> Iterator[tuple[int, str]]:
        """(1-based line number, text) of every physical line."""
        return enumerate(self.lines, start=1)
