"""Fixes on disk: read a file, fix its text (`torch2ms.fix`), write it back whole or not at all.

- `write_atomic(path, text, expected_original)`: temporary file in the same folder + `os.replace`,
  permissions kept, refuses a file that changed on disk or is read-only.
- `rewrite_file(path, change)`: one file through a text change (``--add-noqa``).
- `fix_file` / `fix_paths(...)`: what ``torch2ms scan --fix`` / ``--diff`` run, in worker processes.
"""

from __future__ import annotations

import codecs
import io
import os
import stat
import tokenize
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from . import fix, process, writing
from .config import Config
from .files import MAX_SOURCE_BYTES, UnreadableFile, read_regular
from .fix import FixError, unified_diff
from .mappings import load_table
from .model import FileResult


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
        with process.temporary_file(folder, f".{os.path.basename(real)}.{os.getpid()}.",
                                     writing.TEMP_TAG) as (fd, tmp):
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
        outcome = fix.fix_text(read.text, path, config, unsafe)
    except FixError as exc:
        return FileFix(path, fix.scan_text(read.text, path, config, load_table()), error=str(exc))
    result = outcome.result or fix.scan_text(outcome.text, path, config, load_table())
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
            fixed.result = fix.scan_text(read.text, path, config, load_table())
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
