"""An on-disk cache of per-file results.

One index file per *salt* (tool version, mapping-table content, analysis
configuration) maps a path to its size, mtime, content hash and `FileResult`.
A re-scan first compares size and mtime (no read at all), then the content hash
(a touched but unchanged file still hits). The index is written to a temporary
file and renamed, so concurrent runs never see a half-written cache; a cache that
cannot be read is ignored and rebuilt.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import __version__
from .config import Config
from .mappings import MappingTable
from .model import FileResult

CACHE_DIR_NAME = ".torch2ms_cache"
_FORMAT = 1


@dataclass(frozen=True, slots=True)
class _Entry:
    size: int
    mtime_ns: int
    digest: str
    result: FileResult


def content_digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class Cache:
    def __init__(self, directory: Path, config: Config, table: MappingTable) -> None:
        self.directory = directory
        salt = f"{_FORMAT}|{__version__}|{table.digest}|{config.key()}"
        self.file = directory / f"results-{hashlib.blake2b(salt.encode(), digest_size=8).hexdigest()}.pickle"
        self._entries: dict[str, _Entry] = self._load()
        self._dirty = False
        self.hits = self.misses = 0

    def _load(self) -> dict[str, _Entry]:
        try:
            with open(self.file, "rb") as handle:
                data = pickle.load(handle)
        except FileNotFoundError:
            return {}
        except Exception:  # a corrupt or foreign cache file: start afresh
            return {}
        return data if isinstance(data, dict) else {}

    def lookup(self, path: str) -> FileResult | None:
        """The cached result when the file's size and mtime are unchanged (no read)."""
        entry = self._entries.get(path)
        if entry is None:
            return None
        try:
            stat = os.stat(path)
        except OSError:
            return None
        if stat.st_size == entry.size and stat.st_mtime_ns == entry.mtime_ns:
            self.hits += 1
            return entry.result
        return None

    def known_digest(self, path: str) -> str | None:
        entry = self._entries.get(path)
        return entry.digest if entry is not None else None

    def lookup_content(self, path: str, digest: str) -> FileResult | None:
        """The cached result when the content is unchanged though the file was touched."""
        entry = self._entries.get(path)
        if entry is not None and entry.digest == digest:
            self.hits += 1
            self._refresh(path, entry.digest, entry.result)
            return entry.result
        return None

    def store(self, path: str, digest: str, result: FileResult) -> None:
        self.misses += 1
        self._refresh(path, digest, result)

    def _refresh(self, path: str, digest: str, result: FileResult) -> None:
        try:
            stat = os.stat(path)
        except OSError:
            return
        self._entries[path] = _Entry(stat.st_size, stat.st_mtime_ns, digest, result)
        self._dirty = True

    def save(self) -> None:
        if not self._dirty:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            gitignore = self.directory / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text("*\n", encoding="utf-8")
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".pickle")
            with os.fdopen(fd, "wb") as handle:
                pickle.dump(self._entries, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.file)
        except OSError:
            pass  # a cache that cannot be written only costs speed
        self._dirty = False
