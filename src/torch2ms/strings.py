"""Text helpers every layer may use: file names made safe to print (`safe_text`, `display_path`), paths
shown relative to a folder (`shown_path`) and tables of strings stored once (`StringTable`, used by the
results cache and the reports). No project imports: the lowest layer."""

from __future__ import annotations

import os
import re

# What a file name may hold that must never reach a report as it is: control characters (a newline
# would forge a report line, ESC drives the terminal), lone surrogates (the bytes of a name that is
# not UTF-8, which no UTF-8 output can hold), the line and paragraph separators and the bidi
# controls that reorder what a reader sees.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (os.fsdecode's surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_text(text: str) -> str:
    """`text` with control characters, lone surrogates and bidi controls written as \\xNN / \\uNNNN escapes."""
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text


class StringTable:
    """Texts stored once (paths, messages, API names), referred to by index; None is -1."""

    __slots__ = ("index", "items")

    def __init__(self, items: list[str] | None = None) -> None:
        self.items: list[str] = items if items is not None else []
        self.index: dict[str, int] = {}

    def prime(self, counts: dict[str, int]) -> None:
        """Give the most used texts the shortest numbers (the texts of `counts`, most used first)."""
        for text in sorted(counts, key=lambda t: (-counts[t], t)):
            self(text)

    def __call__(self, text: str | None) -> int:
        if text is None:
            return -1
        found = self.index.get(text)
        if found is None:
            found = self.index[text] = len(self.items)
            self.items.append(text)
        return found


def shown_path(path: str, root: str | None = None) -> str:
    """A path relative to `root` (default: the working directory) when it lies below it, with "/" separators,
    unescaped (for URIs); reports show `display_path`."""
    base = os.path.abspath(root or os.getcwd())
    absolute = os.path.abspath(path)
    if absolute == base:
        return os.path.basename(absolute)
    if absolute.startswith(base.rstrip(os.sep) + os.sep):
        return os.path.relpath(absolute, base).replace(os.sep, "/")
    return path.replace(os.sep, "/")


def display_path(path: str, root: str | None = None) -> str:
    """`shown_path` escaped with `safe_text`: any file name can be printed, encoded as UTF-8 and shown as one line."""
    return safe_text(shown_path(path, root))
