"""`scan_paths(...)`: walking, reading and decoding files, parallel scanning.

The only file I/O of the core. One broken file never stops a scan: it becomes a
TMS9xx diagnostic in its own `FileResult`.
"""

from __future__ import annotations

import io
import os
import tokenize
from fnmatch import fnmatch
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .cache import Cache, content_digest
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


def _excluded(name: str, patterns: tuple[str, ...]) -> bool:
    return any(name == p or fnmatch(name, p) for p in patterns)


def iter_sources(paths: Iterable[str], config: Config) -> Iterator[Source]:
    """Every .py file under `paths`, in a stable order, with errors for bad paths."""
    patterns = config.excluded_names
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
        yield from _walk(path, patterns, seen_dirs)


def _walk(root: Path, patterns: tuple[str, ...], seen: set[tuple[int, int]]) -> Iterator[Source]:
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
        if _excluded(entry.name, patterns):
            continue
        full = Path(entry.path)
        try:
            is_dir = entry.is_dir()
            is_file = entry.is_file()
        except OSError:
            is_dir = is_file = False
        if is_dir:
            yield from _walk(full, patterns, seen)
        elif is_file and entry.name.endswith((".py", ".pyi")):
            yield Source(entry.path)
        elif entry.is_symlink() and not full.exists() and entry.name.endswith(".py"):
            yield Source(entry.path, file_error(entry.path, "TMS903", "broken symlink or symlink loop"))


def _scan_batch(batch: list[tuple[str, str | None]], config: Config) -> list[tuple[str | None, FileResult | None]]:
    return [scan_file(path, config, known) for path, known in batch]


def scan_paths(paths: Iterable[str], config: Config | None = None, jobs: int = 1,
               on_result: Callable[[FileResult], None] | None = None,
               cache: Cache | None = None) -> list[FileResult]:
    """Scan files and folders; results in a stable order (the walk's), whatever `jobs` is."""
    config = config or Config()
    sources = list(iter_sources(paths, config))
    results: list[FileResult | None] = [s.error for s in sources]
    load_table()  # fail early, in this process, on a broken table; forked workers inherit it
    todo: list[int] = []
    for index, source in enumerate(sources):
        if source.error is not None:
            continue
        cached = cache.lookup(source.path) if cache is not None else None
        if cached is not None:
            results[index] = cached
            if on_result is not None:
                on_result(cached)
        else:
            todo.append(index)

    def done(index: int, digest: str | None, result: FileResult | None) -> None:
        path = sources[index].path
        if result is None:  # unchanged content, touched file
            assert cache is not None and digest is not None
            result = cache.lookup_content(path, digest)
            if result is None:  # the entry vanished meanwhile: scan here
                digest, result = scan_file(path, config)
                assert result is not None
        elif cache is not None and digest is not None:
            cache.store(path, digest, result)
        results[index] = result
        if on_result is not None:
            on_result(result)

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
    return [r for r in results if r is not None]


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))

