"""An on-disk cache of per-file results.

One index file per *salt* (tool version, mapping-table content, analysis
configuration) maps a path to its size, mtime, content hash, pickled `FileResult`,
summary and text-report lines; a warm text scan uses only the last two.
A re-scan first compares size and mtime (no read at all), then the content hash
(a touched but unchanged file still hits). The index is written to a temporary
file and renamed, so concurrent runs never see a half-written cache; a cache that
cannot be read is ignored and rebuilt.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from . import __version__
from .config import Config
from .mappings import MappingTable
from .model import FileResult, ScanSummary, ScopeFacts
from .report.text import render_file

CACHE_DIR_NAME = ".torch2ms_cache"
_FORMAT = 3


class Scanned:
    """One file's outcome in a scan: its `FileResult`, its summary and its text-report chunk,
    each made once, on first use. A cache hit serves the summary, the chunk and the
    network-scope facts (project_graph.py) without unpickling the result's objects, which
    is most of a warm re-scan's time otherwise."""

    __slots__ = ("path", "_result", "_blob", "_summary", "_text", "scope")

    def __init__(self, path: str, result: FileResult | None = None, *, blob: bytes | None = None,
                 summary: ScanSummary | None = None, text: str | None = None,
                 scope: ScopeFacts | None = None) -> None:
        self.path = path
        self._result = result
        self._blob = blob  # the result pickled without its scope facts, which are kept beside it
        self._summary = summary
        self._text = text
        self.scope = result.scope if result is not None else scope

    @property
    def result(self) -> FileResult:
        if self._result is None:
            assert self._blob is not None
            result = pickle.loads(self._blob)
            self._result = result if self.scope is None else replace(result, scope=self.scope)
        return self._result

    @property
    def summary(self) -> ScanSummary:
        if self._summary is None:
            self._summary = ScanSummary.of_file(self.result)
        return self._summary

    @property
    def text(self) -> str:
        """The file's lines in the text report, paths shown relative to the working directory."""
        if self._text is None:
            self._text = render_file(self.result)
        return self._text

    def blob(self) -> bytes:
        if self._blob is None:
            result = self.result if self.result.scope is None else replace(self.result, scope=None)
            self._blob = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        return self._blob


@dataclass(frozen=True, slots=True)
class _Entry:
    size: int
    mtime_ns: int
    digest: str
    blob: bytes  # the pickled FileResult, without its scope facts
    summary: ScanSummary
    text: str  # the text-report chunk as rendered in the working directory `cwd`
    cwd: str
    scope: ScopeFacts | None


def content_digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """A digest of the scanner's own source files: results cached by one build of the analysis are
    never served to another, even when the version number stays (an editable install)."""
    digest = hashlib.blake2b(digest_size=16)
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode())
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"?")
    return digest.hexdigest()


class Cache:
    def __init__(self, directory: Path, config: Config, table: MappingTable) -> None:
        self.directory = directory
        salt = f"{_FORMAT}|{__version__}|{code_digest()}|{table.digest}|{config.key()}"
        self.file = directory / f"results-{hashlib.blake2b(salt.encode(), digest_size=8).hexdigest()}.pickle"
        self._entries: dict[str, _Entry] = self._load()
        self._fresh: dict[str, tuple[int, int, str, Scanned]] = {}
        self._cwd = os.getcwd()
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

    def _scanned(self, path: str, entry: _Entry) -> Scanned:
        self.hits += 1
        return Scanned(path, blob=entry.blob, summary=entry.summary,
                       text=entry.text if entry.cwd == self._cwd else None, scope=entry.scope)

    def lookup(self, path: str) -> Scanned | None:
        """The cached outcome when the file's size and mtime are unchanged (no read)."""
        entry = self._entries.get(path)
        if entry is None:
            return None
        try:
            stat = os.stat(path)
        except OSError:
            return None
        if stat.st_size == entry.size and stat.st_mtime_ns == entry.mtime_ns:
            return self._scanned(path, entry)
        return None

    def known_digest(self, path: str) -> str | None:
        entry = self._entries.get(path)
        return entry.digest if entry is not None else None

    def lookup_content(self, path: str, digest: str) -> Scanned | None:
        """The cached outcome when the content is unchanged though the file was touched."""
        entry = self._entries.get(path)
        if entry is not None and entry.digest == digest:
            scanned = self._scanned(path, entry)
            self._refresh(path, digest, scanned)
            return scanned
        return None

    def store(self, path: str, digest: str, scanned: Scanned) -> None:
        self.misses += 1
        self._refresh(path, digest, scanned)

    def _refresh(self, path: str, digest: str, scanned: Scanned) -> None:
        try:
            stat = os.stat(path)
        except OSError:
            return
        self._fresh[path] = (stat.st_size, stat.st_mtime_ns, digest, scanned)

    def save(self) -> None:
        if not self._fresh:
            return
        for path, (size, mtime_ns, digest, scanned) in self._fresh.items():
            self._entries[path] = _Entry(size, mtime_ns, digest, scanned.blob(), scanned.summary,
                                         scanned.text, self._cwd, scanned.scope)
        self._fresh.clear()
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
