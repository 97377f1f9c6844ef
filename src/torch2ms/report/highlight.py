"""A small Python syntax highlighter built on the standard `tokenize` module.

`highlight(text)` returns, per physical line, a flat list ``[start, length, cls,
start, length, cls, ...]`` of coloured ranges (0-based code-point columns);
text outside every range is plain. Classes are small integers indexing
`CLASSES`. The report's script turns these ranges into DOM nodes with
``textContent`` only, so no source text is ever parsed as HTML.

Broken code (a syntax error, an unterminated string) is highlighted up to
the point where the tokenizer stops; the rest stays plain.
"""

from __future__ import annotations

import builtins
import io
import keyword
import token
import tokenize

from ..source import split_lines

CLASSES = ("kw", "str", "com", "num", "bi", "def", "deco", "op", "self")
KW, STR, COM, NUM, BI, DEF, DECO, OP, SELF = range(len(CLASSES))

_BUILTINS = frozenset(name for name in dir(builtins) if not name.startswith("_"))
_SOFT_KEYWORDS = frozenset(getattr(keyword, "softkwlist", ()))
_STRING_TYPES = {token.STRING}
for _name in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END", "TSTRING_START", "TSTRING_MIDDLE", "TSTRING_END"):
    if hasattr(token, _name):
        _STRING_TYPES.add(getattr(token, _name))


def _classify(tok: tokenize.TokenInfo, previous: tokenize.TokenInfo | None) -> int | None:
    kind = tok.type
    if kind in _STRING_TYPES:
        return STR
    if kind == token.COMMENT:
        return COM
    if kind == token.NUMBER:
        return NUM
    if kind == token.NAME:
        if keyword.iskeyword(tok.string):
            return KW
        if previous is not None and previous.type == token.NAME and previous.string in ("def", "class"):
            return DEF
        if previous is not None and previous.type == token.OP and previous.string == "@":
            return DECO
        if tok.string in ("self", "cls"):
            return SELF
        if tok.string in _SOFT_KEYWORDS and previous is not None and previous.type in (token.NEWLINE, token.INDENT,
                                                                                        token.DEDENT, token.NL):
            return KW
        if tok.string in _BUILTINS and not (previous is not None and previous.string == "."):
            return BI
        return None
    if kind == token.OP and tok.string == "@" and (previous is None or previous.type in (
            token.NEWLINE, token.INDENT, token.DEDENT, token.NL)):
        return DECO
    return None


def highlight(text: str, upto: int | None = None) -> list[list[int]]:
    """Coloured ranges per line; with `upto`, tokenizing stops after that line (later lines stay plain)."""
    lines = split_lines(text)
    ranges: list[list[int]] = [[] for _ in lines]
    normalised = "\n".join(lines)
    previous: tokenize.TokenInfo | None = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(normalised).readline):
            if tok.type in (token.NL, token.NEWLINE, token.INDENT, token.DEDENT, token.ENDMARKER):
                if tok.type != token.ENDMARKER:
                    previous = tok
                continue
            if upto is not None and tok.start[0] > upto:
                break
            cls = _classify(tok, previous)
            if tok.type != token.COMMENT:
                previous = tok
            if cls is None:
                continue
            (srow, scol), (erow, ecol) = tok.start, tok.end
            for row in range(srow, erow + 1):
                if not 1 <= row <= len(lines):
                    break
                start = scol if row == srow else 0
                end = ecol if row == erow else len(lines[row - 1])
                if end > start:
                    ranges[row - 1].extend((start, end - start, cls))
    except (tokenize.TokenError, IndentationError, SyntaxError, ValueError):
        pass
    return ranges
