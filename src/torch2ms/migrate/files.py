"""Trees of files: which files a migration covers, where each result goes, and atomic writes.

`--out DIR` writes a parallel tree: a folder argument's files keep their paths relative to it, a
file argument goes to DIR/its name. `--in-place` replaces each file (refusing one that changed on
disk meanwhile). Every file is written to a temporary file beside its destination and renamed into
place, so it is written whole or not at all. Each file's classes that become Cells are found across
the whole tree (`torch2ms.project_graph.module_classes`). With `--out`, beside each ported file that
defines cell classes goes the parameter-name map of every one of them (NAME.weights.json, built from
the two files and the tables' weight facts: `torch2ms.weights.mapping.write_map_beside`), once the
whole tree is written, so that classes imported from the project's other files are followed.
"""

from __future__ import annotations

import ast
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .. import writing
from ..api import iter_sources
from ..engine import scan_source
from ..fix import FixError, unified_diff
from ..fix_files import _encode, _read, write_atomic
from ..mappings import load_table
from ..project_graph import module_classes
from .pipeline import MigrateError, Migration, Options, existing_cells, migrate_text


@dataclass
class FileOutcome:
    source: str
    target: str | None  # where the result goes (None with --diff)
    migration: Migration | None = None
    error: str | None = None
    written: bool = False
    weight_map: str | None = None  # the parameter-name map written beside the target
    cells: int = 0  # the cell classes it maps
    map_error: str | None = None  # why no map could be written (the port itself is written)

    @property
    def diff(self) -> str:
        m = self.migration
        return unified_diff(self.source, m.original, m.text) if m is not None and m.changed else ""


class CollisionError(Exception):
    """Two sources of one run would be written to the same file: nothing is written."""


def _targets(paths: Sequence[str], out: str | None) -> list[tuple[str, str | None]]:
    """(source file, destination) for every Python file under `paths`; errors as (path, None) pairs.

    With one folder, its files keep their paths under `out`; with several paths, each folder's tree goes
    under ``out/<folder name>/`` (each root keeps its own tree) and each file to ``out/<file name>``.
    Raises CollisionError when two sources would still land on the same destination."""
    table_config = Options().config
    pairs: list[tuple[str, str | None]] = []
    out_real = os.path.realpath(out) if out else None
    several = len(paths) > 1
    for raw in paths:
        folder = os.path.isdir(raw)
        base = os.path.join(out, os.path.basename(os.path.normpath(os.path.abspath(raw)))) \
            if out is not None and folder and several else out
        for source in iter_sources([raw], table_config):
            if source.error is not None:
                pairs.append((source.path, None))
                continue
            real = os.path.realpath(source.path)
            if folder and out_real is not None and (real + os.sep).startswith(out_real + os.sep):
                continue  # an earlier output inside the tree being migrated (a named file is never skipped)
            if out is None or base is None:
                pairs.append((source.path, source.path))
            elif folder:
                pairs.append((source.path, os.path.join(base, os.path.relpath(source.path, raw))))
            else:
                pairs.append((source.path, os.path.join(base, os.path.basename(source.path))))
    if out is not None:
        seen: dict[str, str] = {}
        clashes = []
        for origin, target in pairs:
            if target is None:
                continue
            key = os.path.normcase(os.path.abspath(target))
            if key in seen and os.path.realpath(seen[key]) != os.path.realpath(origin):
                clashes.append(f"{seen[key]} and {origin} would both be written to {target}")
            seen.setdefault(key, origin)
        if clashes:
            raise CollisionError("; ".join(clashes[:3]) + (f" (and {len(clashes) - 3} more)" if len(clashes) > 3
                                                           else "") + "; nothing written")
    return pairs


def write_new(path: str, text: str, encoding: str = "utf-8", bom: bool = False, mode: int = 0o644) -> None:
    """Write `path` (creating its folder) through the atomic writer (`torch2ms.writing`)."""
    folder = os.path.dirname(path) or "."
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise FixError(f"{path}: cannot write: {exc.strerror or exc}") from None
    data = _encode(text, encoding, bom, path)
    try:
        with writing.atomic(path, binary=True, mode=mode) as handle:
            handle.write(data)
    except writing.WriteError as exc:
        raise FixError(str(exc)) from None
    except OSError as exc:
        raise FixError(f"{path}: cannot write: {exc.strerror or exc}") from None


def migrate_paths(paths: Sequence[str], options: Options, out: str | None = None, write: bool = True
                  ) -> list[FileOutcome]:
    """Migrate every Python file under `paths` into `out` (None: in place); `write=False` only computes."""
    table = load_table()
    pairs = _targets(paths, out)
    writing.add_inputs(source for source, _ in pairs)
    outcomes: list[FileOutcome] = []
    texts: dict[int, tuple[str, str, bool]] = {}
    for index, (source, target) in enumerate(pairs):
        outcome = FileOutcome(source, target if write else None)
        outcomes.append(outcome)
        if target is None:
            outcome.error = f"{source}: no such file or directory" if not os.path.lexists(source) \
                else f"{source}: cannot read"
            continue
        try:
            read = _read(source)
        except FixError as exc:
            outcome.error = str(exc)
            continue
        texts[index] = (read.text, read.encoding, read.bom)
    items = [(outcomes[i].source, scan_source(texts[i][0], outcomes[i].source, options.config, table).scope)
             for i in sorted(texts)]
    known = {position: _existing_cells(texts[i][0], table) for position, i in enumerate(sorted(texts))}
    cells_of = module_classes(items, list(paths), known)
    for position, index in enumerate(sorted(texts)):
        outcome = outcomes[index]
        text, encoding, bom = texts[index]
        try:
            outcome.migration = migrate_text(text, outcome.source, options, cells_of.get(position, set()), table)
        except MigrateError as exc:
            outcome.error = str(exc)
            continue
        if not write or outcome.target is None:
            continue
        try:
            if out is None:
                if outcome.migration.changed:
                    write_atomic(outcome.source, outcome.migration.text, text, encoding, bom)
                    outcome.written = True
            else:
                mode = stat.S_IMODE(os.stat(outcome.source).st_mode)
                write_new(outcome.target, outcome.migration.text, encoding, bom, mode)
                outcome.written = True
        except (FixError, OSError) as exc:
            outcome.error = str(exc)
    if out is not None and write:
        _write_maps([o for o in outcomes if o.written], table)
    return outcomes


def _existing_cells(text: str, table: Any) -> set[str]:
    try:
        return existing_cells(ast.parse(text), table)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()


def _write_maps(outcomes: Sequence[FileOutcome], table: Any) -> None:
    """The parameter-name map of every cell class of each ported file, beside it (docs/weights.md)."""
    from ..weights.mapping import MapError, write_map_beside

    for outcome in outcomes:
        assert outcome.target is not None
        try:
            written = write_map_beside(outcome.source, outcome.target, table)
        except (MapError, OSError) as exc:
            outcome.map_error = f"no parameter-name map: {exc}"
            continue
        if written is not None:
            outcome.weight_map, outcome.cells = written[0], len(written[1].roots)
