"""Apply fixes: text edits over spans, the fix loop, unused torch imports, atomic writes.

- `apply_edits(text, edits)`: pure; edits are over the ORIGINAL text.
- `fix_source(text, path, config, unsafe)`: scan, apply every applicable fix,
  re-scan until nothing changes; the result always parses.
- `write_atomic(path, text, expected_original)`: temporary file in the same
  folder + `os.replace`, permissions kept, refuses a file that changed on disk
  or is read-only.
- `fix_paths(...)`: what ``torch2ms scan --fix`` / ``--diff`` run.
"""

from __future__ import annotations

import ast
import bisect
import codecs
import difflib
import io
import os
import re
import stat
import tokenize
import warnings
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from . import process
from .config import Config
from .files import MAX_SOURCE_BYTES, UnreadableFile, read_regular
from .mappings import MappingTable, load_table
from .model import Diagnostic, Edit, FileResult, Span
from .report import safe_text
from .rewrite import FixSource
from .source import SourceText, split_lines_keepends

MAX_ROUNDS = 4


class FixError(Exception):
    """A file could not be fixed or written; the message names the file and the reason."""


# ---------------------------------------------------------------- edits
def _resolve(src: SourceText, edits: Iterable[Edit]) -> list[tuple[int, int, str]]:
    out = []
    for edit in edits:
        start = src.offset(edit.span.start_line, edit.span.start_col)
        end = src.offset(edit.span.end_line, edit.span.end_col)
        if end < start:
            raise ValueError(f"edit span ends before it starts: {edit.span}")
        out.append((start, end, edit.text))
    return out


def _ordered_unique(resolved: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    seen: set[tuple[int, int, str]] = set()
    unique = []
    for item in resolved:
        if item not in seen:
            seen.add(item)
            unique.append(item)
    # Stable: insertions at one point keep the order they were given in.
    return sorted(unique, key=lambda e: (e[0], e[1]))


def _conflict(a: tuple[int, int, str], b: tuple[int, int, str]) -> bool:
    """True when two (deduplicated) edits touch the same text."""
    a0, a1, _ = a
    b0, b1, _ = b
    if a0 == a1 and b0 == b1:
        return False  # two insertions; order kept
    if a0 == a1:
        return b0 < a0 < b1
    if b0 == b1:
        return a0 < b0 < a1
    return a0 < b1 and b0 < a1


class _Accepted:
    """Edits accepted so far, sorted by (start, end) and in the order given among equal keys
    (insertions at one point keep their order), pairwise compatible."""

    def __init__(self) -> None:
        self.keys: list[tuple[int, int]] = []
        self.items: list[tuple[int, int, str]] = []

    def fits(self, new: tuple[int, int, str]) -> bool:
        """True when `new` conflicts with no accepted edit (an identical edit merges with it).

        Only the neighbours of `new`'s place can touch it: compatible ranges are disjoint and an
        insertion never lies strictly inside an accepted range, so each walk stops at the first
        edit clear of `new`. The cost is the number of edits that touch it, not all edits."""
        start, end, _ = new
        index = bisect.bisect_left(self.keys, (start, end))
        for j in range(index - 1, -1, -1):
            other = self.items[j]
            if _conflict(other, new):
                return False
            if other[0] < start and other[1] <= start:
                break
        for j in range(index, len(self.items)):
            other = self.items[j]
            if other[0] >= end and other[0] > start:
                break
            if other != new and _conflict(other, new):
                return False
        return True

    def add(self, new: tuple[int, int, str]) -> None:
        key = (new[0], new[1])
        low, high = bisect.bisect_left(self.keys, key), bisect.bisect_right(self.keys, key)
        if new not in self.items[low:high]:
            self.keys.insert(high, key)
            self.items.insert(high, new)


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply edits expressed over `text`. Identical edits are merged; overlapping ones raise ValueError."""
    src = SourceText(text)
    items = _ordered_unique(_resolve(src, edits))
    for prev, cur in zip(items, items[1:]):
        if _conflict(prev, cur):
            raise ValueError(f"conflicting edits at {src.span_of(prev[0], prev[1])} and {src.span_of(cur[0], cur[1])}")
    return _splice(text, items)


def _splice(text: str, items: list[tuple[int, int, str]]) -> str:
    """`text` with the sorted, compatible (start, end, new text) edits applied."""
    parts = []
    pos = 0
    for start, end, new in items:
        parts.append(text[pos:start])
        parts.append(new)
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


def _parses(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


# ---------------------------------------------------------------- the fix loop
def _select(text: str, diags: list[Diagnostic], unsafe: bool,
            spell: Callable[[str], str] | None = None) -> tuple[str, list[Diagnostic]]:
    """Apply every compatible fix of one scan; fixes that conflict wait for the next round.
    `spell` rewrites each edit's text (``torch2ms migrate`` spells `mindspore` by an alias where the file
    shadows the name)."""
    src = SourceText(text)
    accepted = _Accepted()
    applied: list[Diagnostic] = []
    for diag in diags:
        fix = diag.fix
        if fix is None or not fix.edits or (not fix.safe and not unsafe):
            continue
        edits = fix.edits if spell is None else [Edit(e.span, spell(e.text)) for e in fix.edits]
        try:
            mine = _ordered_unique(_resolve(src, edits))
        except ValueError:
            continue
        if any(_conflict(a, b) for a, b in zip(mine, mine[1:])) or not all(accepted.fits(e) for e in mine):
            continue
        for edit in mine:
            accepted.add(edit)
        applied.append(diag)
    if not applied:
        return text, []
    return _splice(text, accepted.items), applied


def _fallback(text: str, applied: list[Diagnostic],
              spell: Callable[[str], str] | None = None) -> tuple[str, list[Diagnostic]]:
    """Some fix breaks the syntax in its context: keep, one by one, the fixes that do not."""
    current, kept = text, list[Diagnostic]()
    for diag in applied:
        trial_edits: list[Edit] = []
        for d in kept + [diag]:
            assert d.fix is not None
            trial_edits.extend(d.fix.edits if spell is None else (Edit(e.span, spell(e.text)) for e in d.fix.edits))
        try:
            trial = apply_edits(text, trial_edits)
        except ValueError:
            continue
        if _parses(trial):
            current, kept = trial, kept + [diag]
    return current, kept


@dataclass
class FixOutcome:
    text: str
    applied: list[Diagnostic] = field(default_factory=list)
    result: FileResult | None = None  # the scan of the fixed text


def _scan(text: str, path: str, config: Config, table: MappingTable) -> FileResult:
    from .engine import scan_source

    return scan_source(text, path, config, table)


def fix_text(text: str, path: str, config: Config | None = None, unsafe: bool = False,
             table: MappingTable | None = None, spell: Callable[[str], str] | None = None) -> FixOutcome:
    config = config or Config()
    table = table or load_table()
    original = text
    applied: list[Diagnostic] = []
    result = _scan(text, path, config, table)
    for _ in range(MAX_ROUNDS):
        if result.error is not None:
            break
        new, done = _select(text, list(result.diagnostics), unsafe, spell)
        if not done:
            break
        new_result = _scan(new, path, config, table)
        if _broken(new_result, new):
            new, done = _fallback(text, done, spell)
            if not done:
                break
            new_result = _scan(new, path, config, table)
        text, result = new, new_result
        applied.extend(done)
    if text != original:
        cleaned = remove_unused_torch_imports(original, text)
        if cleaned != text:
            cleaned_result = _scan(cleaned, path, config, table)
            if not _broken(cleaned_result, cleaned):
                text, result = cleaned, cleaned_result
        if _broken(result, text):  # defensive: never hand back a file that does not parse
            raise FixError(f"{path}: the fixed text does not parse; the file is left unchanged")
    return FixOutcome(text, applied, result)


def _broken(result: FileResult, text: str) -> bool:
    """True when the scanned text does not parse (other file errors are not the fix's doing)."""
    error = result.error
    if error is None:
        return False
    return error.code == "TMS901" or not _parses(text)


def fix_source(text: str, path: str, config: Config | None = None,
               unsafe: bool = False) -> tuple[str, list[Diagnostic]]:
    """Scan, apply all applicable fixes, re-scan until nothing changes; (new text, fixes applied)."""
    outcome = fix_text(text, path, config, unsafe)
    return outcome.text, outcome.applied


# ---------------------------------------------------------------- imports
def _torch_bindings(tree: ast.Module) -> list[tuple[ast.Import | ast.ImportFrom, ast.alias, str, list[ast.stmt]]]:
    """(statement, alias, bound name, enclosing body) of the torch imports at module level
    (also inside top-level if/try blocks; imports inside functions are left alone)."""
    out: list[tuple[ast.Import | ast.ImportFrom, ast.alias, str, list[ast.stmt]]] = []
    bodies: list[list[ast.stmt]] = [tree.body]
    for stmt in tree.body:
        if isinstance(stmt, (ast.If, ast.Try)):
            bodies.extend([stmt.body, stmt.orelse])
            if isinstance(stmt, ast.Try):
                bodies.append(stmt.finalbody)
                bodies.extend(h.body for h in stmt.handlers)
    for body in bodies:
        for stmt in body:
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.name.split(".")[0] == "torch":
                        out.append((stmt, alias, alias.asname or alias.name.split(".")[0], body))
            elif isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and stmt.module and \
                    (stmt.module == "torch" or stmt.module.startswith("torch.")):
                for alias in stmt.names:
                    if alias.name != "*":
                        out.append((stmt, alias, alias.asname or alias.name, body))
    return out


_WORD = re.compile(r"(?<![\w.])[A-Za-z_][A-Za-z0-9_]*")


def _word_counts(text: str) -> Counter[str]:
    """How often each name is written, not counting attribute names after a dot."""
    return Counter(_WORD.findall(text))


def remove_unused_torch_imports(before: str, after: str) -> str:
    """Drop torch imports of `after` whose names were used in `before` and appear nowhere else in `after`.

    Conservative: a name still written anywhere outside the import statements
    (code, strings, comments) keeps its import.
    """
    if "torch" not in after:
        return after
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(after)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return after
    bindings = _torch_bindings(tree)
    if not bindings:
        return after
    src = FixSource(after, tree)
    statements = {id(stmt): stmt for stmt, _, _, _ in bindings}
    in_imports = _word_counts("\n".join(_segment(src, stmt) for stmt in statements.values()))
    count_before, count_after = _word_counts(before), _word_counts(after)
    by_stmt: dict[int, tuple[ast.Import | ast.ImportFrom, list[ast.stmt], list[ast.alias]]] = {}
    for stmt, alias, name, body in bindings:
        used_before = count_before[name] > in_imports[name]
        used_after = count_after[name] > in_imports[name]
        if used_before and not used_after:
            by_stmt.setdefault(id(stmt), (stmt, body, []))[2].append(alias)
    edits: list[Edit] = []
    for stmt, body, gone in by_stmt.values():
        keep = [a for a in stmt.names if a not in gone]
        edit = _import_edit(src, stmt, body, keep)
        if edit is not None:
            edits.append(edit)
    if not edits:
        return after
    try:
        return apply_edits(after, edits)
    except ValueError:
        return after


def _segment(src: SourceText, stmt: ast.stmt) -> str:
    start, end = src.node_offsets(stmt)
    return src.text[start:end]


def _alias_text(alias: ast.alias) -> str:
    return f"{alias.name} as {alias.asname}" if alias.asname else alias.name


def _import_edit(src: SourceText, stmt: ast.Import | ast.ImportFrom, body: list[ast.stmt],
                 keep: list[ast.alias]) -> Edit | None:
    line, end_line = stmt.lineno, stmt.end_lineno or stmt.lineno
    start, end = src.node_offsets(stmt)
    text = src.text
    if keep:
        if line != end_line:
            return None  # a multi-line import keeps its layout and comments: left as is
        if isinstance(stmt, ast.Import):
            new = "import " + ", ".join(_alias_text(a) for a in keep)
        else:
            new = f"from {stmt.module} import " + ", ".join(_alias_text(a) for a in keep)
        return Edit(src.span_of(start, end), new)
    line_start = src.line_starts[line - 1]
    line_end = src.line_after(end_line)
    alone = not text[line_start:start].strip() and not _code_after(text[end:line_end])
    if len(body) == 1 or not alone:
        return Edit(src.span_of(start, end), "pass")
    return Edit(src.span_of(line_start, line_end), "")


def _code_after(rest: str) -> bool:
    """True if `rest` (the end of a line after a statement) holds more code than a comment."""
    stripped = rest.strip()
    return bool(stripped) and not stripped.startswith("#")


# ---------------------------------------------------------------- files
@dataclass
class _Read:
    text: str
    encoding: str
    bom: bool


def _read(path: str) -> _Read:
    try:
        data = read_regular(path, MAX_SOURCE_BYTES)
    except UnreadableFile as exc:
        raise FixError(f"{path}: cannot read: {exc}") from None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        raise FixError(f"{path}: cannot decode: {exc}") from None
    bom = False
    if text.startswith("\ufeff"):
        text, bom = text[1:], True
    if encoding == "utf-8-sig":
        encoding, bom = "utf-8", True
    return _Read(text, encoding, bom)


def _encode(text: str, encoding: str, bom: bool, path: str) -> bytes:
    try:
        data = text.encode(encoding)
    except (UnicodeEncodeError, LookupError) as exc:
        raise FixError(f"{path}: cannot encode the fixed text as {encoding}: {exc}") from None
    return (codecs.BOM_UTF8 + data) if bom and encoding.replace("_", "-").lower() in ("utf-8", "utf8") else data


def write_atomic(path: str, text: str, expected_original: str, encoding: str = "utf-8", bom: bool = False) -> None:
    """Replace `path` by `text` atomically, unless it no longer holds `expected_original` or is read-only."""
    real = os.path.realpath(path)
    try:
        info = os.stat(real)
    except OSError as exc:
        raise FixError(f"{path}: cannot write: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise FixError(f"{path}: cannot write: not a regular file")
    if not info.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(real, os.W_OK):
        raise FixError(f"{path}: read-only file, not changed")
    current = _read(real).text
    if current != expected_original:
        raise FixError(f"{path}: changed on disk since it was read, not overwritten")
    data = _encode(text, encoding, bom, path)
    folder = os.path.dirname(real) or "."
    # The temporary file is removed on any failure, and also when this is a worker whose parent
    # process died meanwhile: then nothing is written at all (process.replace_if_parent_alive).
    try:
        with process.temporary_file(folder, f".{os.path.basename(real)}.", ".torch2ms-tmp") as (fd, tmp):
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, stat.S_IMODE(info.st_mode))
            try:
                os.chown(tmp, info.st_uid, info.st_gid)
            except (OSError, AttributeError):
                pass
            if _read(real).text != expected_original:  # a last look just before the rename
                raise FixError(f"{path}: changed on disk since it was read, not overwritten")
            process.replace_if_parent_alive(tmp, real)
    except OSError as exc:
        raise FixError(f"{path}: cannot write: {exc.strerror or exc}") from None


def rewrite_file(path: str, change: Callable[[str], str]) -> bool:
    """Replace the text of `path` by `change(text)` atomically, keeping its encoding and BOM; whether it
    changed. Raises FixError when the file cannot be read, decoded or written."""
    read = _read(path)
    new = change(read.text)
    if new == read.text:
        return False
    write_atomic(path, new, read.text, read.encoding, read.bom)
    return True


def unified_diff(path: str, before: str, after: str) -> str:
    shown = safe_text(path)  # a name that is not UTF-8 or holds control characters, escaped
    lines = difflib.unified_diff(split_lines_keepends(before), split_lines_keepends(after),
                                 fromfile=f"a/{shown}", tofile=f"b/{shown}")
    out = []
    for line in lines:
        out.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(out)


@dataclass
class FileFix:
    path: str
    result: FileResult  # the findings that remain (of the new text, or of the old one on error)
    applied: int = 0
    changed: bool = False
    diff: str = ""
    error: str | None = None


def fix_file(path: str, config: Config, unsafe: bool = False, write: bool = True) -> FileFix:
    from .engine import file_error

    try:
        read = _read(path)
    except FixError as exc:
        code = "TMS902" if "decode" in str(exc) else "TMS903"
        return FileFix(path, file_error(path, code, str(exc).removeprefix(f"{path}: ")), error=str(exc))
    try:
        outcome = fix_text(read.text, path, config, unsafe)
    except FixError as exc:
        return FileFix(path, _scan(read.text, path, config, load_table()), error=str(exc))
    result = outcome.result or _scan(outcome.text, path, config, load_table())
    changed = outcome.text != read.text
    fixed = FileFix(path, result, len(outcome.applied), changed)
    if not changed:
        return fixed
    fixed.diff = unified_diff(path, read.text, outcome.text)
    if write:
        try:
            write_atomic(path, outcome.text, read.text, read.encoding, read.bom)
        except FixError as exc:
            fixed.error = str(exc)
            fixed.changed = False
            fixed.result = _scan(read.text, path, config, load_table())
    return fixed


def _fix_batch(paths: list[str], config: Config, unsafe: bool, write: bool) -> list[FileFix]:
    return [fix_file(p, config, unsafe, write) for p in paths]


def fix_paths(paths: Iterable[str], config: Config, unsafe: bool = False, write: bool = True,
              jobs: int = 1) -> list[FileFix]:
    """Fix every Python file under `paths` (or only compute the diffs when `write` is False)."""
    from concurrent.futures import ProcessPoolExecutor

    from .api import iter_sources

    sources = list(iter_sources(paths, config))
    load_table()
    out: list[FileFix | None] = [None] * len(sources)
    todo = []
    for index, source in enumerate(sources):
        if source.error is not None:
            out[index] = FileFix(source.path, source.error)
        else:
            todo.append(index)
    if jobs <= 1 or len(todo) < 2 * jobs:
        for index in todo:
            out[index] = fix_file(sources[index].path, config, unsafe, write)
    else:
        size = max(1, min(32, len(todo) // (jobs * 8)))
        batches = [todo[i:i + size] for i in range(0, len(todo), size)]
        with ProcessPoolExecutor(max_workers=jobs, initializer=process.worker_start,
                                 initargs=(os.getpid(),)) as pool:
            futures = [pool.submit(_fix_batch, [sources[i].path for i in b], config, unsafe, write) for b in batches]
            for batch, future in zip(batches, futures):
                for index, item in zip(batch, future.result()):
                    out[index] = item
    return [f for f in out if f is not None]


__all__ = ["FixError", "FixOutcome", "FileFix", "apply_edits", "fix_source", "fix_text", "fix_file", "fix_paths",
           "remove_unused_torch_imports", "rewrite_file", "unified_diff", "write_atomic", "Span"]
