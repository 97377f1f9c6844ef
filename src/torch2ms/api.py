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
from dataclasses import dataclass
from pathlib import Path

from . import process, project_graph
from .cache import Cache, Scanned, content_digest, graph_key
from .config import Config
from .engine import file_error, scan_source
from .limits import CODE as LIMIT_CODE
from .limits import LimitExceeded, Limits
from .ignore import IgnoreRules
from .files import MAX_SOURCE_BYTES, UnreadableFile, kind_problem, read_regular
from .mappings import load_table
from .source import count_lines
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
    """A source file's bytes (regular files only, never blocking, at most `MAX_SOURCE_BYTES`), or TMS903."""
    try:
        return read_regular(path, MAX_SOURCE_BYTES), None
    except UnreadableFile as exc:
        return None, file_error(path, "TMS903", str(exc))


def read_source(path: str) -> tuple[str | None, FileResult | None]:
    data, error = read_bytes(path)
    if data is None:
        return None, error
    return decode(data, path)


def scan_bytes(data: bytes, path: str, config: Config) -> tuple[str | None, FileResult]:
    """(text, result) of one file's bytes that did not come from disk (standard input)."""
    text, error = decode(data, path)
    if text is None:
        assert error is not None
        return None, error
    return text, scan_source(text, path, config, load_table())


def scan_file(path: str, config: Config, known_digest: str | None = None,
              limits: Limits | None = None) -> tuple[str | None, FileResult | None]:
    """(content digest, result); the result is None when the digest equals `known_digest`. With `limits`, a
    file whose analysis passes one gets a TMS905 finding instead (`torch2ms.limits`)."""
    data, error = read_bytes(path)
    if data is None:
        return None, error
    digest = content_digest(data)
    if digest == known_digest:
        return digest, None
    text, error = decode(data, path)
    if text is None:
        return digest, error
    if limits is None:
        return digest, scan_source(text, path, config, load_table())
    table = load_table()
    try:
        with limits.applied():
            return digest, scan_source(text, path, config, table)
    except (LimitExceeded, MemoryError) as exc:
        return digest, file_error(path, LIMIT_CODE, f"analysis {limits.describe(exc)}", lines=count_lines(text))


def stopped_at_limit(result: FileResult) -> bool:
    """A TMS905 result: it depends on the limits and the machine, so it is never cached."""
    return any(d.code == LIMIT_CODE for d in result.diagnostics)


def _exclusion(patterns: tuple[str, ...]) -> Callable[[str], bool]:
    """One test for all the exclude patterns: exact names by set lookup, globs by one regex."""
    exact = frozenset(patterns)
    globs = [p for p in patterns if any(ch in p for ch in "*?[")]
    if not globs:
        return exact.__contains__
    match = re.compile("|".join(f"(?:{fnmatch.translate(os.path.normcase(p))})" for p in globs)).match
    return lambda name: name in exact or match(os.path.normcase(name)) is not None


PYTHON_SUFFIXES = (".py", ".pyi")


def is_python_file(path: str) -> bool:
    """A file named on the command line is scanned when it is Python: a .py or .pyi name, or a script
    whose first line is a Python shebang (`#!/usr/bin/env python3`)."""
    if path.endswith(PYTHON_SUFFIXES):
        return True
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return True  # unreadable: scanned, so that the reason is reported (TMS903)
    try:
        head = os.read(fd, 256)
    except OSError:
        return True
    finally:
        os.close(fd)
    first = head.split(b"\n", 1)[0]
    return first.startswith(b"#!") and b"python" in first


def iter_sources(paths: Iterable[str], config: Config) -> Iterator[Source]:
    """Every .py file under `paths` (and each Python file named), in a stable order, with errors for bad paths.

    A file or folder below a folder of `paths` that is a symlink to somewhere outside all of
    them is not read (TMS903): a checkout decides what it contains, not what else of the
    machine a scan reads and its reports show. Paths named themselves are read wherever they
    point."""
    excluded = _exclusion(config.excluded_names)
    seen_dirs: set[tuple[int, int]] = set()
    paths = list(paths)
    roots = tuple(os.path.join(os.path.realpath(p), "") for p in paths if os.path.isdir(p))
    for raw in paths:
        path = Path(raw)
        if not os.path.lexists(raw):
            yield Source(raw, file_error(raw, "TMS903", "no such file or directory"))
            continue
        if path.is_symlink() and not path.exists():
            yield Source(raw, file_error(raw, "TMS903", "broken symlink or symlink loop"))
            continue
        if path.is_file():
            if is_python_file(raw):
                yield Source(raw)
            continue  # a file named that is not Python is left out (the command then says what it found)
        if not path.is_dir():
            yield Source(raw, file_error(raw, "TMS903", "not a regular file or directory"))
            continue
        yield from _walk(path, excluded, seen_dirs, roots,
                         _outer_gitignore(path) if config.respect_gitignore else None)


# A .gitignore larger than this is not read (its rules are not applied).
_MAX_IGNORE_BYTES = 4 * 1024 * 1024


def _read_text(path: str) -> str | None:
    """A .gitignore's text, read as a regular file only (never a FIFO or device), bounded; None if unreadable."""
    try:
        return read_regular(path, _MAX_IGNORE_BYTES).decode("utf-8", errors="replace")
    except (OSError, UnreadableFile):
        return None


def _posix(path: str) -> str:
    return os.path.abspath(path).replace(os.sep, "/")


def _outer_gitignore(folder: Path) -> IgnoreRules:
    """The rules that reach `folder` from outside it, in the git repository around it: .git/info/exclude
    and the .gitignore files of the folders from the repository's root down to `folder`'s parent."""
    absolute = Path(os.path.abspath(folder))
    root = next((p for p in (absolute, *absolute.parents) if (p / ".git").exists()), None)
    rules = IgnoreRules()
    if root is None:
        return rules
    files = [(root / ".git" / "info" / "exclude", root)]
    files += [(p / ".gitignore", p) for p in reversed(absolute.parents) if p == root or root in p.parents]
    for path, base in files:
        text = _read_text(str(path))
        if text:
            rules = rules.extended(text, _posix(str(base)))
    return rules


def _outside(path: str, roots: tuple[str, ...]) -> bool:
    """True when the symlink `path` leads outside every scanned folder."""
    return not os.path.join(os.path.realpath(path), "").startswith(roots)


def _not_regular(path: str) -> str:
    """Why a .py entry of a folder that is neither a file nor a folder is not read."""
    try:
        return kind_problem(os.stat(path).st_mode) or "is not a regular file"
    except OSError:
        return "broken symlink or symlink loop"


def _walk(root: Path, excluded: Callable[[str], bool], seen: set[tuple[int, int]],
          roots: tuple[str, ...], ignore: IgnoreRules | None = None) -> Iterator[Source]:
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
    if ignore is not None and any(e.name == ".gitignore" for e in entries):
        text = _read_text(os.path.join(root, ".gitignore"))
        if text:
            ignore = ignore.extended(text, _posix(str(root)))
    for entry in entries:
        name = entry.name
        if excluded(name):
            continue
        try:
            is_dir = entry.is_dir()
            is_file = not is_dir and entry.is_file()
        except OSError:
            is_dir = is_file = False
        if ignore is not None and ignore.rules and ignore.ignored(_posix(entry.path), is_dir):
            continue
        if not is_dir and not name.endswith((".py", ".pyi")):
            continue
        if (is_dir or is_file) and entry.is_symlink() and _outside(entry.path, roots):
            yield Source(entry.path, file_error(entry.path, "TMS903", "symlink to outside the scanned folders, "
                                                                      "not read"))
        elif is_dir:
            yield from _walk(Path(entry.path), excluded, seen, roots, ignore)
        elif is_file:
            yield Source(entry.path)
        else:  # a FIFO, socket or device named *.py, or a broken link: reading it could block or worse
            yield Source(entry.path, file_error(entry.path, "TMS903", f"{_not_regular(entry.path)}: skipped"))


def _scan_batch(batch: list[tuple[str, str | None]], config: Config,
                limits: Limits | None = None) -> list[tuple[str | None, FileResult | None]]:
    return [scan_file(path, config, known, limits) for path, known in batch]


def scan_paths(paths: Iterable[str], config: Config | None = None, jobs: int = 1,
               on_result: Callable[[FileResult], None] | None = None,
               cache: Cache | None = None) -> list[FileResult]:
    """Scan files and folders; results in a stable order (the walk's), whatever `jobs` is."""
    each = None if on_result is None else (lambda scanned: on_result(scanned.result))
    return [scanned.result for scanned in scan_outcomes(paths, config, jobs, each, cache)]


def scan_outcomes(paths: Iterable[str], config: Config | None = None, jobs: int = 1,
                  on_each: Callable[[Scanned], None] | None = None,
                  cache: Cache | None = None, limits: Limits | None = None) -> list[Scanned]:
    """`scan_paths` for reports that can use a cache hit's summary and text without its objects; `limits`:
    the per-file limits (`torch2ms.limits`)."""
    config = config or Config()
    paths = list(paths)
    sources = list(iter_sources(paths, config))
    outcomes: list[Scanned | None] = [None if s.error is None else Scanned(s.path, s.error) for s in sources]
    load_table()  # fail early, in this process, on a broken table; forked workers inherit it
    todo: list[int] = []
    digests: list[str | None] = [None] * len(sources)  # of the contents scanned (for the network scope's key)
    for index, source in enumerate(sources):
        if source.error is not None:
            continue
        cached = cache.lookup(source.path) if cache is not None else None
        if cached is not None:
            outcomes[index] = cached
            digests[index] = cache.known_digest(source.path) if cache is not None else None
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
            if cache is not None and digest is not None and not stopped_at_limit(result):
                cache.store(path, digest, scanned)
        outcomes[index] = scanned
        digests[index] = digest
        if on_each is not None:
            on_each(scanned)

    def known(index: int) -> str | None:
        return cache.known_digest(sources[index].path) if cache is not None else None

    if jobs <= 1 or len(todo) < 2 * jobs:
        for index in todo:
            done(index, *scan_file(sources[index].path, config, known(index), limits))
    else:
        from concurrent.futures import ProcessPoolExecutor  # multiprocessing: only for a parallel scan

        size = max(1, min(64, len(todo) // (jobs * 8)))
        batches = [todo[i:i + size] for i in range(0, len(todo), size)]
        with ProcessPoolExecutor(max_workers=jobs, initializer=process.worker_start,
                                 initargs=(os.getpid(),)) as pool:
            futures = [pool.submit(_scan_batch, [(sources[i].path, known(i)) for i in batch], config, limits)
                       for batch in batches]
            for batch, future in zip(batches, futures):
                for index, (digest, result) in zip(batch, future.result()):
                    done(index, digest, result)
    present = [(o, d) for o, d in zip(outcomes, digests) if o is not None]
    linked = _link_network_scope([o for o, _ in present], paths, config, cache, [(o.path, d) for o, d in present])
    if cache is not None:
        cache.save()
    return linked


def _link_network_scope(outcomes: list[Scanned], roots: list[str], config: Config, cache: Cache | None = None,
                        contents: list[tuple[str, str | None]] | None = None) -> list[Scanned]:
    """The project pass (project_graph.py): re-grade functions that network code in other files calls, and
    name the calls whose API other files decide; the cached and the per-file results stay as the file's own
    scan made them. The outcome depends only on the roots and the files' paths and contents (the tables and
    the configuration key the cache file): the cache keeps it, so a re-scan where nothing changed skips the
    pass (and decoding every file's scope facts)."""
    key = graph_key(contents, roots) if cache is not None and contents is not None else None
    kept = cache.project_outcome(key) if cache is not None and key is not None else None
    if kept is None:
        kept = project_graph.project_pass([(o.path, o.scope) for o in outcomes], roots, load_table(), config)
        if cache is not None and key is not None:
            cache.keep_project_outcome(key, *kept)
    changes, added = kept
    for index in sorted(set(changes) | set(added)):
        if not 0 <= index < len(outcomes):
            continue
        result = outcomes[index].result
        if index in changes:
            result = project_graph.regraded(result, changes[index])
        outcomes[index] = Scanned(outcomes[index].path, project_graph.with_findings(result, added.get(index, ())))
    return outcomes


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))

