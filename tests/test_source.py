"""The position model (torch2ms.source): lines as Python's tokenizer counts them, offsets, columns."""

from __future__ import annotations

import ast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from torch2ms.model import Span
from torch2ms.source import Encoding, SourceText, count_lines, line_starts, split_lines, split_lines_keepends

ODD = ["\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def test_lines_break_only_where_python_breaks_them() -> None:
    text = "a = 1\r\nb = 2\rc = 3\n# \x0c\x1c\x85\u2028 d\ne = 4"
    assert split_lines(text) == ["a = 1", "b = 2", "c = 3", "# \x0c\x1c\x85\u2028 d", "e = 4"]
    assert "".join(split_lines_keepends(text)) == text
    assert count_lines(text) == 5 and count_lines(text + "\n") == 5 and count_lines("") == 0
    # Python agrees: the statement `e = 4` is on line 5.
    assert ast.parse(text).body[-1].lineno == 5


@given(st.lists(st.sampled_from(["x", "é", "😀", " ", "\n", "\r\n", "\r", *ODD]), max_size=40))
def test_offsets_and_positions_are_inverse(chars: list[str]) -> None:
    text = "".join(chars)
    src = SourceText(text)
    for offset in range(len(text) + 1):
        line, col = src.position(offset)
        if 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n":
            continue  # between \r and \n: not a position of any character
        assert src.offset(line, col) == offset
    assert len(src) == len(split_lines(text))


@given(st.lists(st.sampled_from(["x", "é", " ", "\n", "\r\n", "\r", *ODD]), max_size=40))
def test_line_starts_are_where_each_line_begins(chars: list[str]) -> None:
    """The line starts (a running sum over a text without `\r`, a regex walk otherwise) put each physical
    line at its own offset, whether or not the lines are handed over."""
    text = "".join(chars)
    lines = split_lines(text)
    for starts in (line_starts(text), line_starts(text, lines)):
        assert len(starts) == len(lines)
        for start, line in zip(starts, lines):
            assert text[start:start + len(line)] == line
            assert start == 0 or text[start - 1] in "\r\n"


def test_ast_columns_become_code_points_and_spans_slice_the_node() -> None:
    text = "import torch\n# \x0c\u2028 ü\ny = 'é😀' + torch.abs(x)\n"
    src = SourceText(text)
    call = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Call))
    span = src.span(call)
    assert span == Span(3, 11, 3, 23)
    assert src.slice(span) == "torch.abs(x)"
    assert src.byte_col(3, 11) == call.col_offset
    assert src.char_col(3, call.col_offset) == 11


@pytest.mark.parametrize(("encoding", "expected"), [(Encoding.UTF32, 2), (Encoding.UTF16, 3), (Encoding.UTF8, 5)])
def test_editor_columns_in_each_encoding(encoding: Encoding, expected: int) -> None:
    src = SourceText("a😀b\n")
    assert src.to_units(1, 2, encoding) == expected
    assert src.from_units(1, expected, encoding) == 2
    assert src.from_units(1, 10_000, encoding) == 3  # clamped to the line


def test_out_of_range_positions_are_errors() -> None:
    src = SourceText("ab\ncd")
    with pytest.raises(ValueError, match="line 3"):
        src.offset(3, 0)
    with pytest.raises(ValueError, match="column 9"):
        src.offset(1, 9)
    assert src.line(0) == "" and src.line(9) == ""
