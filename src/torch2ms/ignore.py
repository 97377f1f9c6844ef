""".gitignore rules, read without git: parsing and matching only (api.py reads the files).

The common cases of gitignore(5) are followed: blank lines and ``#`` comments,
``\\#`` and ``\\!`` escapes, trailing spaces, ``!`` to re-include, a trailing ``/``
for folders only, a pattern with a ``/`` before its end anchored to its file's
folder (else it matches at any depth), ``*``, ``?``, ``[...]`` classes and ``**``
(leading ``**/``, trailing ``/**``, inner ``/**/``). The last matching rule wins,
and a file inside an ignored folder stays ignored (the walk never enters it).

Not read: the global excludes file (``core.excludesFile``) and git's index, so a
tracked file that a .gitignore names is skipped like any other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Rule:
    pattern: re.Pattern[str]  # matches a path relative to `base`, "/"-separated
    negate: bool
    dir_only: bool
    base: str  # the folder of the .gitignore, "/"-separated, no trailing "/"
    text: str  # the line as written, for messages


def _class(pattern: str, start: int) -> tuple[str, int] | None:
    """The regex of the bracket expression at `start` and the index after it; None if unclosed."""
    i = start + 1
    if i < len(pattern) and pattern[i] in "!^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    end = pattern.find("]", i)
    if end < 0:
        return None
    body = pattern[start + 1:end]
    negate = body[:1] in ("!", "^")
    if negate:
        body = body[1:]
    body = body.replace("\\", "\\\\")
    return ("[^/" if negate else "[") + body + "]", end + 1


def translate(pattern: str) -> str:
    """The regex (without anchors) of a gitignore pattern that has lost its "!", leading "/" and
    trailing "/"."""
    out: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        char = pattern[i]
        if char == "*":
            at_start = i == 0 or pattern[i - 1] == "/"
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            if j - i == 2 and at_start and (j == n or pattern[j] == "/"):
                if j == n:  # trailing "/**": everything inside
                    out.append(".*")
                    i = j
                else:  # "**/": zero or more folders
                    out.append("(?:.*/)?")
                    i = j + 1
                continue
            out.append("[^/]*")
            i = j
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            found = _class(pattern, i)
            if found is None:
                out.append(re.escape(char))
                i += 1
            else:
                out.append(found[0])
                i = found[1]
        elif char == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


def _strip_trailing_spaces(line: str) -> str:
    end = len(line)
    while end > 0 and line[end - 1] == " " and not (end > 1 and line[end - 2] == "\\"):
        end -= 1
    return line[:end]


def parse(text: str, base: str) -> list[Rule]:
    """The rules of one .gitignore file whose folder is `base` ("/"-separated)."""
    rules: list[Rule] = []
    base = base.rstrip("/")
    for raw in text.splitlines():
        line = _strip_trailing_spaces(raw.rstrip("\r"))
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        elif line.startswith(("\\!", "\\#")):
            line = line[1:]
        dir_only = line.endswith("/") and not line.endswith("\\/")
        body = line.rstrip("/") if dir_only else line
        if not body:
            continue
        anchored = "/" in body
        body = body.lstrip("/")
        if not body:
            continue
        regex = translate(body)
        if not anchored:
            regex = "(?:.*/)?" + regex
        try:
            compiled = re.compile(regex + r"\Z", re.DOTALL)
        except re.error:
            continue  # a pattern git would not match either
        rules.append(Rule(compiled, negate, dir_only, base, raw))
    return rules


class IgnoreRules:
    """The .gitignore rules that apply in one folder: its parents' first, then its own."""

    __slots__ = ("rules",)

    def __init__(self, rules: tuple[Rule, ...] = ()) -> None:
        self.rules = rules

    def extended(self, text: str, base: str) -> IgnoreRules:
        added = parse(text, base)
        return IgnoreRules(self.rules + tuple(added)) if added else self

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Whether the last rule that matches `path` ("/"-separated, absolute) excludes it."""
        for rule in reversed(self.rules):
            if rule.dir_only and not is_dir:
                continue
            prefix = rule.base + "/"
            if not path.startswith(prefix):
                continue
            if rule.pattern.match(path[len(prefix):]):
                return not rule.negate
        return False
