"""Apply fixes to a text: edits over spans, the fix loop, unused torch imports. Pure: no disk, no processes.

- `apply_edits(text, edits)`: edits are over the ORIGINAL text.
- `fix_source(text, path, config, unsafe)` / `fix_text`: scan, apply every applicable fix,
  re-scan until nothing changes; the result always parses.
- `unified_diff(path, before, after)`: what ``--diff`` prints.

Files (reading, atomic writes, ``torch2ms scan --fix`` over paths) are `torch2ms.fix_files`.
"""

from __future__ import annotations

import ast
import bisect
import difflib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from . import syntax
from .codes import CODES
from .config import Config
from .mappings import MappingTable, load_table
from .model import Category, Diagnostic, Edit, FileResult, Span
from .strings import safe_text
from .transforms.edits import EditBuilder
from .transforms.fixer import ATTRIBUTE_TITLE, HELD_TITLE
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
        syntax.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


# ---------------------------------------------------------------- the fix loop
def _select(text: str, diags: list[Diagnostic], unsafe: bool) -> tuple[str, list[Diagnostic]]:
    """Apply every compatible fix of one scan; fixes that conflict wait for the next round."""
    src = SourceText(text)
    accepted = _Accepted()
    applied: list[Diagnostic] = []
    owned: list[tuple[Diagnostic, list[tuple[int, int, str]]]] = []
    # a fix that writes its whole expression anew (a composed form) goes before the fixes nested in it: it
    # keeps their text, which the next round fixes; the other way round it would find no torch call left
    for diag in sorted(diags, key=lambda d: d.fix is None or all(e.span != d.span for e in d.fix.edits)):
        fix = diag.fix
        if fix is None or not fix.edits or (not fix.safe and not unsafe):
            continue
        try:
            mine = _ordered_unique(_resolve(src, fix.edits))
        except ValueError:
            continue
        if any(_conflict(a, b) for a, b in zip(mine, mine[1:])) or not all(accepted.fits(e) for e in mine):
            continue
        for edit in mine:
            accepted.add(edit)
        applied.append(diag)
        owned.append((diag, mine))
    if not applied:
        return text, []
    return _splice(text, _copies_rewritten(text, src, accepted.items, owned)), applied


def _dotted_start(text: str, at: int, low: int) -> int:
    """Where the dotted name that `at` continues starts (``m.`` before ``weight``), not before `low`."""
    while at > low and (text[at - 1].isalnum() or text[at - 1] in "_."):
        at -= 1
    return at


def _copies_rewritten(text: str, src: SourceText, items: list[tuple[int, int, str]],
                      owned: list[tuple[Diagnostic, list[tuple[int, int, str]]]]) -> list[tuple[int, int, str]]:
    """`items` where a fix's text repeats source text of its own expression that another accepted fix rewrites
    in place: the repeat gets that rewrite too. ``m.weight.data.fill_(1)`` is written
    ``m.weight.data.copy_(mindspore.ops.full_like(m.weight.data, 1))`` while the layer's tensor is renamed
    (``m.weight`` -> ``m.gamma``) in place: the copy inside ``full_like`` is renamed as well; the next round
    cannot, as nothing then types ``m`` as a torch layer."""
    replaced: dict[tuple[int, int, str], tuple[int, int, str]] = {}
    for diag, mine in owned:
        start = src.offset(diag.span.start_line, diag.span.start_col)
        end = src.offset(diag.span.end_line, diag.span.end_col)
        inner = sorted({(text[head:b], text[head:a] + new) for a, b, new in items if start <= a < b <= end
                        and (a, b, new) not in mine and text[a:b].strip() and text[a:b] != new
                        for head in (_dotted_start(text, a, start),)},
                       key=lambda pair: -len(pair[0]))
        if not inner:
            continue
        for edit in mine:
            new_text = edit[2]
            for old, new in inner:
                new_text = re.sub(rf"(?<![\w.]){re.escape(old)}(?!\w)", new.replace("\\", "\\\\"), new_text)
            if new_text != edit[2]:
                replaced[edit] = (edit[0], edit[1], new_text)
    return [replaced.get(item, item) for item in items]


def held_call_fix(diag: Diagnostic) -> bool:
    """The finding's fix rewrites the arguments of a call of a class a variable holds (`transforms.HELD_TITLE`)."""
    return diag.fix is not None and diag.fix.title.startswith(HELD_TITLE)


def fix_held_calls(text: str, path: str, config: Config, table: MappingTable,
                   result: FileResult | None = None, narrowed: Sequence[Span] = ()) -> tuple[str, list[Diagnostic]]:
    """One round of the fixes of calls of classes that variables hold (unsafe ones too), for `migrate`, which
    rewrites the class values themselves next: after that the calls no longer name torch. The same round fixes
    the calls (and the layers' attributes MindSpore names otherwise) inside the `narrowed` spans, the branches where an ``isinstance`` test on a torch class makes a
    name a torch value (`ModuleFacts.narrowed`): once the class is rewritten, nothing types the name (the calls
    that a structural rule of the tables rewrites, and the type references, are left to `migrate`'s rewrites).
    `result`: the scan of this very text, when the caller has it."""
    result = result if result is not None else scan_text(text, path, config, table)
    if result.error is not None:
        return text, []

    def narrowed_call(diag: Diagnostic) -> bool:
        entry = table.lookup(diag.torch_api) if diag.torch_api and diag.code != "TMS106" else None
        attribute = diag.fix is not None and diag.fix.title.startswith(ATTRIBUTE_TITLE)  # a layer's attribute renamed
        return (attribute or entry is not None and entry.structure is None) and any(
            (span.start_line, span.start_col) <= (diag.span.start_line, diag.span.start_col)
            and (diag.span.end_line, diag.span.end_col) <= (span.end_line, span.end_col) for span in narrowed)

    new, done = _select(text, [d for d in result.diagnostics if held_call_fix(d) or narrowed_call(d)], True)
    if done and not _parses(new):
        return text, []
    return new, done


def _fallback(text: str, applied: list[Diagnostic]) -> tuple[str, list[Diagnostic]]:
    """Some fix breaks the syntax in its context: keep, one by one, the fixes that do not."""
    current, kept = text, list[Diagnostic]()
    for diag in applied:
        trial_edits: list[Edit] = []
        for d in kept + [diag]:
            assert d.fix is not None
            trial_edits.extend(d.fix.edits)
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


def scan_text(text: str, path: str, config: Config, table: MappingTable) -> FileResult:
    from .engine import scan_source

    return scan_source(text, path, config, table)


def fix_text(text: str, path: str, config: Config | None = None, unsafe: bool = False,
             table: MappingTable | None = None, held: bool = True, scan_result: bool = True) -> FixOutcome:
    """`held`: the fixes of calls of a class a variable holds (`norm_layer(dim, momentum=0.01)`) are applied,
    in the first round only: their callee stays the torch class until its value is rewritten, and a second
    round would translate their values again. `scan_result=False`: the caller wants the text, not the scan of
    it (`FixOutcome.result` is None): the scans leave out the port check, whose findings have no fix and
    never decide which fix is applied."""
    config = config or Config()
    if not scan_result:
        config = config.with_ignored(tuple(code for code, info in CODES.items()
                                           if info.category is Category.PORT_CHECK))
    table = table or load_table()
    original = text
    applied: list[Diagnostic] = []
    result = scan_text(text, path, config, table)
    for round_ in range(MAX_ROUNDS):
        if result.error is not None:
            break
        wanted = [d for d in result.diagnostics if held and round_ == 0 or not held_call_fix(d)]
        new, done = _select(text, wanted, unsafe)
        if not done:
            break
        new_result = scan_text(new, path, config, table)
        if _broken(new_result, new):
            new, done = _fallback(text, done)
            if not done:
                break
            new_result = scan_text(new, path, config, table)
        text, result = new, new_result
        applied.extend(done)
    if text != original:
        cleaned = remove_unused_torch_imports(text)
        if cleaned != text:
            cleaned_result = scan_text(cleaned, path, config, table)
            if not _broken(cleaned_result, cleaned):
                text, result = cleaned, cleaned_result
        if _broken(result, text):  # defensive: never hand back a file that does not parse
            raise FixError(f"{path}: the fixed text does not parse; the file is left unchanged")
    return FixOutcome(text, applied, result if scan_result else None)


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


def remove_unused_torch_imports(after: str) -> str:
    """Drop the torch imports of `after` (a fixed text) whose names appear nowhere else in it: a port that
    imports torch needs torch to run, also where the original never used the import.

    Conservative: a name still written anywhere outside the import statements
    (code, strings, comments) keeps its import.
    """
    if "torch" not in after:
        return after
    try:
        tree = syntax.parse(after)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return after
    bindings = _torch_bindings(tree)
    if not bindings:
        return after
    src = EditBuilder(after, tree)
    statements = {id(stmt): stmt for stmt, _, _, _ in bindings}
    in_imports = _word_counts("\n".join(_segment(src, stmt) for stmt in statements.values()))
    count_after = _word_counts(after)
    by_stmt: dict[int, tuple[ast.Import | ast.ImportFrom, list[ast.stmt], list[ast.alias]]] = {}
    for stmt, alias, name, body in bindings:
        if count_after[name] <= in_imports[name]:
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


def unified_diff(path: str, before: str, after: str) -> str:
    shown = safe_text(path)  # a name that is not UTF-8 or holds control characters, escaped
    lines = difflib.unified_diff(split_lines_keepends(before), split_lines_keepends(after),
                                 fromfile=f"a/{shown}", tofile=f"b/{shown}")
    out = []
    for line in lines:
        out.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(out)


