"""`scan_paths(...)`: walking, reading and decoding files, parallel scanning.

The only file I/O of the core. One broken file never stops a scan: it becomes a
TMS9xx diagnostic in its own `FileResult`.
"""

from __future__ import annotations

import io
import os
import tokenize
import fnmatch
import re
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from . import project_graph
from .cache import Cache, Scanned, content_digest
from .config import Config
from .engine import file_error, scan_source
from .mappings import load_table
from .model import FileResult


@dataclass(frozen=True)
class Source:
    """A file to scan, or the reason it cannot be (missing path, symlink loop)."""

    path: str
    error: FileResult | None = None


def decode(data: bytes, path: str) -> tuple[str | None, FileResult | None]:
    """Bytes -> text honouring a BOM and a PEP 263 coding line; or a TMS90x result."""
    if b"\x00" in data:
        return None, file_error(path, "TMS903", "binary file: it contains NUL bytes")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        return None, file_error(path, "TMS902", f"bad coding declaration: {exc.msg if hasattr(exc, 'msg') else exc}")
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, file_error(path, "TMS902", f"cannot decode as {encoding}: invalid byte "
                                                f"0x{data[exc.start]:02x} at offset {exc.start}", line)
    except LookupError:
        return None, file_error(path, "TMS902", f"unknown encoding {encoding!r} in coding declaration")
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, None


def read_bytes(path: str) -> tuple[bytes | None, FileResult | None]:
    try:
        with open(path, "rb") as handle:
            return handle.read(), None
    except IsADirectoryError:
        return None, file_error(path, "TMS903", "is a directory")
    except FileNotFoundError:
        return None, file_error(path, "TMS903", "no such file")
    except PermissionError:
        return None, file_error(path, "TMS903", "permission denied")
    except OSError as exc:
        return None, file_error(path, "TMS903", f"cannot read: {exc.strerror or exc}")


def read_source(path: str) -> tuple[str | None, FileResult | None]:
    data, error = read_bytes(path)
    if data is None:
        return None, error
    return decode(data, path)


def scan_file(path: str, config: Config, known_digest: str | None = None) -> tuple[str | None, FileResult | None]:
    """(content digest, result); the result is None when the digest equals `known_digest`."""
    data, error = read_bytes(path)
    if data is None:
        return None, error
    digest = content_digest(data)
    if digest == known_digest:
        return digest, None
    text, error = decode(data, path)
    if text is None:
        return digest, error
    return digest, scan_source(text, path, config, load_table())


def _exclusion(patterns: tuple[str, ...]) -> Callable[[str], bool]:
    """One test for all the exclude patterns: exact names by set lookup, globs by one regex."""
    exact = frozenset(patterns)
    globs = [p for p in patterns if any(ch in p for ch in "*?[")]
    if not globs:
        return exact.__contains__
    match = re.compile("|".join(f"(?:{fnmatch.translate(os.path.normcase(p))})" for p in globs)).match
    return lambda name: name in exact or match(os.path.normcase(name)) is not None


def iter_sources(paths: Iterable[str], config: Config) -> Iterator[Source]:
    """Every .py file under `paths`, in a stable order, with errors for bad paths."""
    excluded = _exclusion(config.excluded_names)
    seen_dirs: set[tuple[int, int]] = set()
    for raw in paths:
        path = Path(raw)
        if not os.path.lexists(raw):
            yield Source(raw, file_error(raw, "TMS903", "no such file or directory"))
            continue
        if path.is_symlink() and not path.exists():
            yield Source(raw, file_error(raw, "TMS903", "broken symlink or symlink loop"))
            continue
        if path.is_file():
            yield Source(raw)
            continue
        if not path.is_dir():
            yield Source(raw, file_error(raw, "TMS903", "not a regular file or directory"))
            continue
        yield from _walk(path, excluded, seen_dirs)


def _walk(root: Path, excluded: Callable[[str], bool], seen: set[tuple[int, int]]) -> Iterator[Source]:
    try:
        stat = root.stat()
    except OSError as exc:
        yield Source(str(root), file_error(str(root), "TMS903", f"cannot read directory: {exc.strerror or exc}"))
        return
    key = (stat.st_dev, stat.st_ino)
    if key in seen:
        yield Source(str(root), file_error(str(root), "TMS903", "symlink loop: directory already visited"))
        return
    seen.add(key)
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError as exc:
        yield Source(str(root), file_error(str(root), "TMS903", f"cannot read directory: {exc.strerror or exc}"))
        return
    for entry in entries:
        name = entry.name
        if excluded(name):
            continue
        try:
            is_dir = entry.is_dir()
            is_file = not is_dir and entry.is_file()
        except OSError:
            is_dir = is_file = False
        if is_dir:
            yield from _walk(Path(entry.path), excluded, seen)
        elif is_file and name.endswith((".py", ".pyi")):
            yield Source(entry.path)
        elif name.endswith(".py") and entry.is_symlink() and not os.path.exists(entry.path):
            yield Source(entry.path, file_error(entry.path, "TMS903", "broken symlink or symlink loop"))


def _scan_batch(batch: list[tuple[str, str | None]], config: Config) -> list[tuple[str | None, FileResult | None]]:
    return [scan_file(path, config, known) for path, known in batch]


def scan_paths(paths: Iterable[str], config: Config | None = None, jobs: int = 1,
               on_result: Callable[[FileResult], None] | None = None,
               cache: Cache | None = None) -> list[FileResult]:
    """Scan files and folders; results in a stable order (the walk's), whatever `jobs` is."""
    each = None if on_result is None else (lambda scanned: on_result(scanned.result))
    return [scanned.result for scanned in scan_outcomes(paths, config, jobs, each, cache)]


def scan_outcomes(paths: Iterable[str], config: Config | None = None, jobs: int = 1,
                  on_each: Callable[[Scanned], None] | None = None,
                  cache: Cache | None = None) -> list[Scanned]:
    """`scan_paths` for reports that can use a cache hit's summary and text without its objects."""
    config = config or Config()
    paths = list(paths)
    sources = list(iter_sources(paths, config))
    outcomes: list[Scanned | None] = [None if s.error is None else Scanned(s.path, s.error) for s in sources]
    load_table()  # fail early, in this process, on a broken table; forked workers inherit it
    todo: list[int] = []
    for index, source in enumerate(sources):
        if source.error is not None:
            continue
        cached = cache.lookup(source.path) if cache is not None else None
        if cached is not None:
            outcomes[index] = cached
            if on_each is not None:
                on_each(cached)
        else:
            todo.append(index)

    def done(index: int, digest: str | None, result: FileResult | None) -> None:
        path = sources[index].path
        scanned: Scanned | None
        if result is None:  # unchanged content, touched file
            assert cache is not None and digest is not None
            scanned = cache.lookup_content(path, digest)
            if scanned is None:  # the entry vanished meanwhile: scan here
                digest, result = scan_file(path, config)
                assert result is not None
                scanned = Scanned(path, result)
        else:
            scanned = Scanned(path, result)
            if cache is not None and digest is not None:
                cache.store(path, digest, scanned)
        outcomes[index] = scanned
        if on_each is not None:
            on_each(scanned)

    def known(index: int) -> str | None:
        return cache.known_digest(sources[index].path) if cache is not None else None

    if jobs <= 1 or len(todo) < 2 * jobs:
        for index in todo:
            done(index, *scan_file(sources[index].path, config, known(index)))
    else:
        size = max(1, min(64, len(todo) // (jobs * 8)))
        batches = [todo[i:i + size] for i in range(0, len(todo), size)]
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(_scan_batch, [(sources[i].path, known(i)) for i in batch], config)
                       for batch in batches]
            for batch, future in zip(batches, futures):
                for index, (digest, result) in zip(batch, future.result()):
                    done(index, digest, result)
    if cache is not None:
        cache.save()
    return _project_pass([o for o in outcomes if o is not None], paths, config)


def _project_pass(outcomes: list[Scanned], roots: list[str], config: Config) -> list[Scanned]:
    """Re-grade functions that network code in other files calls, and name the calls whose API other files
    decide (project_graph.py); the cached and the per-file results stay as the file's own scan made them."""
    changes, added = project_graph.project_pass([(o.path, o.scope) for o in outcomes], roots, load_table(), config)
    for index in sorted(set(changes) | set(added)):
        result = outcomes[index].result
        if index in changes:
            result = project_graph.regraded(result, changes[index])
        outcomes[index] = Scanned(outcomes[index].path, project_graph.with_findings(result, added.get(index, ())))
    return outcomes


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))

