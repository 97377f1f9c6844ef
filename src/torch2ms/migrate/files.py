"""Trees of files: which files a migration covers, where each result goes, and atomic writes.

`--out DIR` writes a parallel tree: a folder argument's files keep their paths relative to it, a
file argument goes to DIR/its name. `--in-place` replaces each file (refusing one that changed on
disk meanwhile). Every file is written to a temporary file beside its destination and renamed into
place, so it is written whole or not at all. Each file's classes that become Cells are found across
the whole tree (`torch2ms.project_graph.module_classes`). With `--out`, beside each ported file that
defines cell classes goes the parameter-name map of every one of them (NAME.weights.json, built from
the two files and the tables' weight facts: `torch2ms.weights.mapping.write_map_beside`), once the
whole tree is written, so that classes imported from the project's other files are followed; and
NAME.migrate.json beside each changed port that defines cell classes: which finding and mapping
entry each changed line answers (`torch2ms.migrate.provenance`). The support module the ports import
(`t2ms_support.py`: torch2ms.migrate.support, torch-signature layers and the tables' static classes) is
written once at the top of the tree (`--out DIR`; in place, beside each path) when a port uses it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from .. import process, syntax, writing
from ..api import iter_sources
from ..engine import scan_source
from ..fix import FixError, unified_diff
from ..files import UnreadableFile, read_regular
from ..fix_files import _encode, _read, write_atomic
from ..limits import CODE as LIMIT_CODE
from ..limits import LimitExceeded
from ..mappings import load_table
from ..project_graph import module_classes
from .pipeline import MigrateError, Migration, Options, existing_cells, migrate_text
from . import star_imports, support as support_module
from .provenance import write_beside


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
    provenance: str | None = None  # NAME.migrate.json: which finding each written line answers

    @property
    def diff(self) -> str:
        m = self.migration
        return unified_diff(self.source, m.original, m.text) if m is not None and m.changed else ""


class CollisionError(Exception):
    """Two sources of one run would be written to the same file: nothing is written."""


def _targets(paths: Sequence[str], out: str | None,
             data: list[tuple[str, str]] | None = None) -> list[tuple[str, str | None]]:
    """(source file, destination) for every Python file under `paths`; errors as (path, None) pairs.

    With one folder, its files keep their paths under `out`; with several paths, each folder's tree goes
    under ``out/<folder name>/`` (each root keeps its own tree) and each file to ``out/<file name>``.
    With `data`, the package's other files under each folder (data files, configuration: what a ported
    package needs besides its code) are added to it as (source, destination) to copy.
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
        if folder and base is not None and data is not None:
            data.extend((path, os.path.join(base, os.path.relpath(path, raw)))
                        for path in _other_files(raw, table_config, out_real))
    if out is not None:
        seen: dict[str, str] = {}
        clashes = []
        for origin, target in [*pairs, *(data or [])]:
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


def _other_files(root: str, config: Any, out_real: str | None) -> list[str]:
    """The regular files under folder `root` that are not Python sources, outside the excluded folders (.git,
    caches, ...) and outside `out_real`; symbolic links and special files are left out."""
    excluded = set(config.excluded_names)
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in excluded and not os.path.islink(os.path.join(folder, d))
                         and (out_real is None or os.path.realpath(os.path.join(folder, d)) != out_real))
        for name in sorted(files):
            path = os.path.join(folder, name)
            if name.endswith((".py", ".pyi", ".pyc")) or name in excluded or name.endswith(writing.TEMP_TAG):
                continue
            if stat.S_ISREG(os.lstat(path).st_mode):
                found.append(path)
    return found


def copy_file(source: str, target: str) -> None:
    """Copy one data file of a migrated package through the atomic writer, keeping its permissions."""
    try:
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        data = read_regular(source, MAX_DATA_BYTES)
        with writing.atomic(target, binary=True, mode=stat.S_IMODE(os.stat(source).st_mode)) as handle:
            handle.write(data)
    except UnreadableFile as exc:
        raise FixError(f"{source}: not copied: {exc}") from None
    except writing.WriteError as exc:
        raise FixError(str(exc)) from None
    except OSError as exc:
        raise FixError(f"{target}: cannot write: {exc.strerror or exc}") from None


MAX_DATA_BYTES = 1 << 30  # a data file of a package larger than this is not copied (it is named)


def migrate_paths(paths: Sequence[str], options: Options, out: str | None = None, write: bool = True,
                  on_each: Callable[[int, int, str], None] | None = None,
                  copied: list[tuple[str, str | None]] | None = None, jobs: int = 1,
                  support: list[tuple[str, str | None]] | None = None) -> list[FileOutcome]:
    """Migrate every Python file under `paths` into `out` (None: in place); `write=False` only computes.
    `on_each(done, total, path)`: called as each file's migration is taken up (progress); `copied`: receives
    (destination, error or None) for each non-Python file copied with the tree (`out` only); `jobs`: worker
    processes for the migrations; `support`: receives (path, error or None) for the support module written where
    a port uses it (`torch2ms.migrate.support`: at the root of `out`, or of each folder migrated in place)."""
    options = replace(options, support=support_module.import_name(paths, out))
    data: list[tuple[str, str]] = []
    pairs = _targets(paths, out, data if out is not None and write else None)
    writing.add_inputs(source for source, _ in pairs)
    writing.add_inputs(origin for origin, _ in data)
    for origin, destination in data:
        _logged(functools.partial(copy_file, origin, destination), destination, copied)
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
    order = sorted(texts)
    with _workers(len(order), jobs) as pool:
        sources = [outcomes[i].source for i in order]
        scans = _each(pool, _scan_one, [(texts[i][0], outcomes[i].source, options) for i in order], sources,
                      on_each, "scanning ")
        items = [(outcomes[i].source, scope) for i, (scope, _) in zip(order, scans)]
        known = {position: cells for position, (_, cells) in enumerate(scans)}
        cells_of = module_classes(items, list(paths), known)
        starred = star_imports.explicit_imports([(outcomes[i].source, texts[i][0]) for i in order], load_table().roots,
                                                [p for p in paths if os.path.isdir(p)])
        work = [(texts[index][0], outcomes[index].source, options, cells_of.get(position, set()),
                 starred.get(position, {})) for position, index in enumerate(order)]
        _write_all(outcomes, order, texts, _lazy(pool, _migrate_one, work), cells_of, out, write, on_each)
        if write and any(o.written and o.migration is not None and o.migration.support for o in outcomes):
            _write_support(paths, out, options, support)  # before the maps, which read the layers it defines
        if out is not None and write:
            _write_maps([o for o in outcomes if o.written], pool, on_each)
    return outcomes


def _write_support(paths: Sequence[str], out: str | None, options: Options,
                   written: list[tuple[str, str | None]] | None) -> None:
    """The support module (torch2ms.migrate.support: torch-signature layers and the tables' static classes) at
    the root of the output tree (`out`), or beside each path migrated in place."""
    folders = [out] if out is not None else sorted({p if os.path.isdir(p) else os.path.dirname(p) or "."
                                                    for p in paths})
    text = support_module.module_text(load_table(), options.config.version, options.device)
    for folder in folders:
        path = os.path.join(folder, f"{support_module.MODULE}.py")
        _logged(functools.partial(write_new, path, text), path, written)


def _logged(write: Callable[[], None], destination: str, log: list[tuple[str, str | None]] | None) -> None:
    """Write one file (a copy, the support module), recording (destination, error or None) in `log`: a file
    that cannot be written is reported and the others still go."""
    error: str | None = None
    try:
        write()
    except FixError as exc:
        error = str(exc)
    if log is not None:
        log.append((destination, error))


def _write_all(outcomes: list[FileOutcome], order: list[int], texts: dict[int, tuple[str, str, bool]],
               results: Iterable[tuple[Migration | None, str | None]], cells_of: dict[int, set[str]],
               out: str | None, write: bool, on_each: Callable[[int, int, str], None] | None) -> None:
    """Each migration's text written as it arrives (in the order of the files)."""
    for position, (index, (migration, error)) in enumerate(zip(order, results)):
        outcome = outcomes[index]
        text, encoding, bom = texts[index]
        if on_each is not None:
            on_each(position, len(texts), outcome.source)
        outcome.migration, outcome.error = migration, error
        if migration is None:
            continue
        if not write or outcome.target is None:
            continue
        try:
            if out is None:
                if migration.changed:
                    write_atomic(outcome.source, migration.text, text, encoding, bom)
                    outcome.written = True
            else:
                mode = stat.S_IMODE(os.stat(outcome.source).st_mode)
                write_new(outcome.target, migration.text, encoding, bom, mode)
                outcome.written = True
                if migration.changed and cells_of.get(position):  # a file of networks
                    outcome.provenance = write_beside(outcome.source, outcome.target, migration.original,
                                                      migration.text, migration.source_findings)
        except (FixError, OSError, writing.WriteError) as exc:
            outcome.error = str(exc)


# (text, path, options, the file's classes that become Cells, the imports its star imports bring: star_imports)
Work = tuple[str, str, Options, set[str], dict[int, tuple[str, ...]]]


def _migrate_one(item: Work) -> tuple[Migration | None, str | None]:
    """One file's migration within the per-file limits: (migration, None) or (None, the error naming the file).
    A failure of the migration itself (a bug) is this file's error too: the other files go on."""
    text, path, options, cells, star = item
    try:
        with options.limits.applied() if options.limits is not None else contextlib.nullcontext():
            return migrate_text(text, path, options, cells, load_table(), star), None
    except MigrateError as exc:
        return None, str(exc)
    except (LimitExceeded, MemoryError) as exc:
        assert options.limits is not None
        return None, f"{path}: {LIMIT_CODE} migration {options.limits.describe(exc)}; nothing written"
    except Exception as exc:  # noqa: BLE001 - one file's internal error must not stop the others
        return None, f"{path}: internal error while migrating ({type(exc).__name__}: {exc}); nothing written"


def _scan_one(item: tuple[str, str, Options]) -> tuple[Any, set[str]]:
    """One file's scope facts (for the classes that become Cells across the tree) and its classes that already
    derive from a Cell."""
    text, path, options = item
    with syntax.shared():  # one tree of the text for both; the scope facts need no fixes built
        return scan_source(text, path, options.config, load_table(), fixes=False).scope, \
            _existing_cells(text, load_table())


_T = TypeVar("_T")
_R = TypeVar("_R")


@contextlib.contextmanager
def _workers(files: int, jobs: int) -> Iterator[ProcessPoolExecutor | None]:
    """`jobs` worker processes for the scan, the migrations and the maps (as `scan --jobs`: when there are at
    least two files per worker), or None: everything in this process. Writing stays in this process."""
    if jobs <= 1 or files < 2 * jobs:
        yield None
        return
    with ProcessPoolExecutor(max_workers=jobs, initializer=process.worker_start, initargs=(os.getpid(),)) as pool:
        yield pool


def _lazy(pool: ProcessPoolExecutor | None, func: Callable[[_T], _R], items: Sequence[_T]) -> Iterator[_R]:
    """`func` of every item, in order, as each is done: in the pool's workers, or here."""
    return iter(map(func, items)) if pool is None else pool.map(func, items)


def _each(pool: ProcessPoolExecutor | None, func: Callable[[_T], _R], items: Sequence[_T], paths: Sequence[str],
          on_each: Callable[[int, int, str], None] | None, phase: str) -> list[_R]:
    """`func` of every item, in order; `on_each` shows `phase` and each item's path as its result arrives."""
    out = []
    for position, result in enumerate(_lazy(pool, func, items)):
        if on_each is not None:
            on_each(position, len(items), phase + paths[position])
        out.append(result)
    return out


def _existing_cells(text: str, table: Any) -> set[str]:
    try:
        return existing_cells(syntax.parse(text), table)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()


def _map_one(item: tuple[str, str]) -> tuple[str | None, int, str | None]:
    """The parameter-name map beside one port: (its path or None, the cell classes it maps, the error or None)."""
    from ..weights.mapping import MapError, write_map_beside

    source, target = item
    try:
        written = write_map_beside(source, target, load_table())
    except (MapError, OSError) as exc:
        return None, 0, f"no parameter-name map: {exc}"
    except Exception as exc:  # noqa: BLE001 - one file's map must not stop the others
        return None, 0, f"no parameter-name map: internal error ({type(exc).__name__}: {exc})"
    if written is None:
        return None, 0, None
    return written[0], len(written[1].roots), None


def _write_maps(outcomes: Sequence[FileOutcome], pool: ProcessPoolExecutor | None = None,
                on_each: Callable[[int, int, str], None] | None = None) -> None:
    """The parameter-name map of every cell class of each ported file, beside it (docs/weights.md)."""
    items = [(o.source, o.target or "") for o in outcomes]
    done = _each(pool, _map_one, items, [o.source for o in outcomes], on_each, "parameter-name map of ")
    for outcome, (path, cells, error) in zip(outcomes, done):
        outcome.weight_map, outcome.cells, outcome.map_error = path, cells, error
