"""An on-disk cache of per-file results, in a data-only format that this user's torch2ms signed.

Where it lives: ``.torch2ms_cache/`` beside the pyproject.toml (else in the working
directory), or ``--cache-dir``. One file per *salt* (format, tool version, a digest of
the scanner's sources, the mapping tables, the analysis configuration) maps a path to its
size, mtime, content hash, summary, text-report lines, network-scope facts and encoded
`FileResult`; a warm text scan uses only the summary and the lines.

Why a planted cache file is harmless: the cache folder is usually inside the scanned
tree, so anyone who can commit to the project can put a file there. Nothing in a cache
file is ever executed or turned into objects by a general deserializer: the format is
JSON plus UTF-8 text (no pickle), decoded field by field into the model's types, and
any file that does not check out is a miss. Before anything is decoded, the file's
HMAC-SHA256 is checked with a key that only this user's torch2ms knows
(``cache-key`` in the user's torch2ms folder, `files.user_cache_dir`: made on first use,
mode 0600), so a file that torch2ms did not write for this user, however
well-formed, is not read at all (a committed cache cannot hide or invent findings).
The file is read with `files.read_regular` (regular files only, no symlink, at most
`MAX_CACHE_BYTES`): a FIFO, a device or a huge file in its place is a miss, not a hang.

Layout of a cache file: ``MAGIC``, the 32-byte MAC of the rest, the header's length
(8 bytes, little-endian), the header (JSON: the salt, the working directories and one
row per file) and then a region of UTF-8 text that the rows point into (each file's
report lines and its encoded result, decoded only when used).

A re-scan first compares size and mtime (no read at all), then the content hash (a
touched but unchanged file still hits). The file is written to a temporary file and
renamed, so concurrent runs never see a half-written cache.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import struct
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

from . import __version__
from .config import Config
from .files import MiB, UnreadableFile, read_regular, user_cache_dir
from .mappings import MappingTable
from .model import Category, Confidence, Diagnostic, Edit, FileResult, Fix, ScanSummary, ScopeFacts, Severity, Span
from .report.text import render_file

CACHE_DIR_NAME = ".torch2ms_cache"
MAGIC = b"torch2ms-cache\x05\n"
MAX_CACHE_BYTES = 1024 * MiB
_MAC_SIZE = 32
_LENGTH = struct.Struct("<Q")
_FORMAT = 5


class CacheError(Exception):
    """A stored result that does not decode although its file's MAC checked out (a bug, not an attack)."""


class _Invalid(Exception):
    """Inside the decoder: the data does not have the expected shape."""


# ---------------------------------------------------------------- the data-only codec
_E = TypeVar("_E", bound=Enum)


def _str(value: Any) -> str:
    if type(value) is not str:
        raise _Invalid
    return value


def _opt_str(value: Any) -> str | None:
    return None if value is None else _str(value)


def _int(value: Any) -> int:
    if type(value) is not int:
        raise _Invalid
    return value


def _list(value: Any, size: int | None = None) -> list[Any]:
    if type(value) is not list or (size is not None and len(value) != size):
        raise _Invalid
    return value


_ONLY_STR = frozenset({str})


def _strs(value: Any) -> tuple[str, ...]:
    if type(value) is not list or not _ONLY_STR.issuperset(map(type, value)):
        raise _Invalid
    return tuple(value)


def _counts(value: Any) -> dict[str, int]:
    if type(value) is not dict:
        raise _Invalid
    for key, count in value.items():
        _str(key)
        _int(count)
    return value


def _enum(kind: type[_E], value: Any) -> _E:
    try:
        return kind(_str(value))
    except ValueError:
        raise _Invalid from None


def _span(value: Any) -> Span:
    a, b, c, d = _list(value, 4)
    return Span(_int(a), _int(b), _int(c), _int(d))


def _enc_span(span: Span) -> list[int]:
    return [span.start_line, span.start_col, span.end_line, span.end_col]


def _enc_diag(d: Diagnostic) -> list[Any]:
    fix = None if d.fix is None else [d.fix.title, d.fix.safe, [[_enc_span(e.span), e.text] for e in d.fix.edits]]
    return [d.code, d.severity.value, d.category.value, _enc_span(d.span), d.message, d.torch_api,
            d.mindspore_api, fix, d.doc_url, d.confidence.value]


def _diag(value: Any) -> Diagnostic:
    code, severity, category, span, message, torch_api, mindspore_api, fix, doc_url, confidence = _list(value, 10)
    decoded_fix = None
    if fix is not None:
        title, safe, edits = _list(fix, 3)
        if type(safe) is not bool:
            raise _Invalid
        decoded_fix = Fix(_str(title), tuple(Edit(_span(s), _str(t)) for s, t in map(_pair, _list(edits))), safe)
    return Diagnostic(_str(code), _enum(Severity, severity), _enum(Category, category), _span(span), _str(message),
                      _opt_str(torch_api), _opt_str(mindspore_api), decoded_fix, _opt_str(doc_url),
                      _enum(Confidence, confidence))


def _pair(value: Any) -> list[Any]:
    return _list(value, 2)


def encode_result(result: FileResult) -> bytes:
    """A result without its scope facts, as JSON."""
    return json.dumps([result.path, result.lines, [_enc_diag(d) for d in result.diagnostics]],
                      ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")


def decode_result(data: bytes) -> FileResult:
    """`encode_result` reversed; `_Invalid` (or a JSON error) when the data has another shape."""
    path, lines, diags = _list(json.loads(data.decode("utf-8", "surrogatepass")), 3)
    return FileResult(_str(path), tuple(_diag(d) for d in _list(diags)), _int(lines))


def _enc_scope(scope: ScopeFacts | None) -> list[Any] | None:
    if scope is None:
        return None
    return [[[c, list(t)] for c, t in scope.roots], [[c, list(t)] for c, t in scope.edges],
            [[n, list(b), list(m), module] for n, b, m, module in scope.classes], [list(i) for i in scope.imports],
            [[c, [_enc_diag(d) for d in diags], [[_enc_span(s), code] for s, code in replaced]]
             for c, diags, replaced in scope.latent]]


def _targets(value: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    out = []
    for item in _list(value):
        if type(item) is not list or len(item) != 2 or type(item[0]) is not str:
            raise _Invalid
        out.append((item[0], _strs(item[1])))
    return tuple(out)


def _class(value: Any) -> tuple[str, tuple[str, ...], tuple[str, ...], bool]:
    name, bases, methods, module = _list(value, 4)
    if type(module) is not bool:
        raise _Invalid
    return _str(name), _strs(bases), _strs(methods), module


def _latent(value: Any) -> tuple[str, tuple[Diagnostic, ...], tuple[tuple[Span, str], ...]]:
    context, diags, replaced = _list(value, 3)
    return (_str(context), tuple(_diag(d) for d in _list(diags)),
            tuple((_span(s), _str(c)) for s, c in map(_pair, _list(replaced))))


def _scope(value: Any) -> ScopeFacts | None:
    if value is None:
        return None
    roots, edges, classes, imports, latent = _list(value, 5)
    return ScopeFacts(_targets(roots), _targets(edges), tuple(map(_class, _list(classes))),
                      tuple((_str(a), _str(b)) for a, b in map(_pair, _list(imports))),
                      tuple(map(_latent, _list(latent))))


def _enc_summary(summary: ScanSummary) -> list[Any]:
    return [summary.files_failed, summary.lines, summary.diagnostics, summary.by_code, summary.by_category,
            summary.by_api]


def _summary(value: Any) -> ScanSummary:
    failed, lines, diagnostics, by_code, by_category, by_api = _list(value, 6)
    return ScanSummary(1, _int(failed), _int(lines), _int(diagnostics), _counts(by_code), _counts(by_category),
                       _counts(by_api))


# ---------------------------------------------------------------- one file's outcome
class Scanned:
    """One file's outcome in a scan: its `FileResult`, its summary and its text-report chunk,
    each made once, on first use. A cache hit serves the summary, the chunk and the
    network-scope facts (project_graph.py) without decoding the result's findings, which
    is most of a warm re-scan's time otherwise."""

    __slots__ = ("path", "_result", "_encoded", "_summary", "_text", "scope")

    def __init__(self, path: str, result: FileResult | None = None, *, encoded: bytes | None = None,
                 summary: ScanSummary | None = None, text: str | None = None,
                 scope: ScopeFacts | None = None) -> None:
        self.path = path
        self._result = result
        self._encoded = encoded  # the result as `encode_result` wrote it (its scope facts are kept beside it)
        self._summary = summary
        self._text = text
        self.scope = result.scope if result is not None else scope

    @property
    def result(self) -> FileResult:
        if self._result is None:
            assert self._encoded is not None
            try:
                result = decode_result(self._encoded)
            except (_Invalid, ValueError, RecursionError) as exc:
                raise CacheError(f"{self.path}: the results cache holds a result that does not decode "
                                 f"({type(exc).__name__}); run again with --no-cache") from None
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

    def encoded(self) -> bytes:
        if self._encoded is None:
            self._encoded = encode_result(self.result)
        return self._encoded


@dataclass(frozen=True, slots=True)
class _Entry:
    size: int
    mtime_ns: int
    digest: str
    cwd: str  # the working directory the text chunk was rendered in
    summary: ScanSummary
    scope: ScopeFacts | None
    text: str  # the text-report chunk
    encoded: Callable[[], bytes]


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


@functools.lru_cache(maxsize=1)
def signing_key() -> bytes | None:
    """This user's key for the cache files' MAC (made on first use); None when it cannot be kept."""
    path = user_cache_dir() / "cache-key"
    for _ in range(2):
        try:
            key = read_regular(str(path), 1024, follow_symlinks=False)
            if len(key) == 32:
                return key
            return None  # not ours: leave it alone, and run without a cache
        except UnreadableFile:
            pass
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".key-")
            try:
                os.write(fd, os.urandom(32))
                os.fsync(fd)
            finally:
                os.close(fd)
            try:
                os.link(tmp, path)  # fails if another run made one meanwhile: then that one is read
            except FileExistsError:
                pass
            finally:
                os.unlink(tmp)
        except OSError:
            return None
    return None


def _mac(key: bytes, data: bytes | memoryview) -> bytes:
    return hmac.digest(key, data, "sha256")


class Cache:
    def __init__(self, directory: Path, config: Config, table: MappingTable) -> None:
        self.directory = directory
        self.salt = f"{_FORMAT}|{__version__}|{code_digest()}|{table.digest}|{config.key()}"
        self.file = directory / f"results-{hashlib.blake2b(self.salt.encode(), digest_size=8).hexdigest()}.t2ms"
        self._key = signing_key()
        self._entries: dict[str, _Entry] = self._load()
        self._fresh: dict[str, tuple[int, int, str, Scanned]] = {}
        self._cwd = os.getcwd()
        self.hits = self.misses = 0

    # ------------------------------------------------------------ reading
    def _load(self) -> dict[str, _Entry]:
        """The entries of the cache file; empty when it is missing, foreign or does not check out."""
        if self._key is None:
            return {}
        try:
            data = read_regular(str(self.file), MAX_CACHE_BYTES, follow_symlinks=False)
        except UnreadableFile:
            return {}
        start = len(MAGIC) + _MAC_SIZE
        if len(data) < start + _LENGTH.size or not data.startswith(MAGIC):
            return {}
        view = memoryview(data)
        if not hmac.compare_digest(view[len(MAGIC):start], _mac(self._key, view[start:])):
            return {}  # not written by this user's torch2ms: never decoded
        try:
            return self._decode(data, start)
        except (_Invalid, ValueError, RecursionError, struct.error):
            return {}

    def _decode(self, data: bytes, start: int) -> dict[str, _Entry]:
        (length,) = _LENGTH.unpack_from(data, start)
        body = start + _LENGTH.size
        if body + length > len(data):
            raise _Invalid
        header = json.loads(data[body:body + length])
        if type(header) is not dict or header.get("salt") != self.salt:
            raise _Invalid
        cwds = _strs(header.get("cwds"))
        results = body + length + _int(header.get("text_bytes"))  # the region: all text chunks, then all results
        if results > len(data):
            raise _Invalid
        texts = data[body + length:results].decode("utf-8", "surrogatepass")
        entries: dict[str, _Entry] = {}
        for row in _list(header.get("entries")):
            path, size, mtime_ns, digest, cwd, text_at, text_end, result_at, result_end, summary, scope = \
                _list(row, 11)
            if not (0 <= _int(text_at) <= _int(text_end) <= len(texts) and 0 <= _int(cwd) < len(cwds)
                    and results <= results + _int(result_at) <= results + _int(result_end) <= len(data)):
                raise _Invalid
            entries[_str(path)] = _Entry(_int(size), _int(mtime_ns), _str(digest), cwds[cwd], _summary(summary),
                                         _scope(scope), texts[text_at:text_end],
                                         _slice(data, results + result_at, results + result_end))
        return entries

    def _scanned(self, path: str, entry: _Entry) -> Scanned:
        self.hits += 1
        return Scanned(path, encoded=entry.encoded(), summary=entry.summary,
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

    # ------------------------------------------------------------ writing
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
        if not self._fresh or self._key is None:
            return
        for path, (size, mtime_ns, digest, scanned) in self._fresh.items():
            self._entries[path] = _Entry(size, mtime_ns, digest, self._cwd, scanned.summary, scanned.scope,
                                         scanned.text, scanned.encoded)
        self._fresh.clear()
        try:
            self._write(self._encode(self._key))
        except OSError:
            pass  # a cache that cannot be written only costs speed

    def _encode(self, key: bytes) -> list[bytes]:
        cwds: dict[str, int] = {}
        rows: list[list[Any]] = []
        texts: list[str] = []
        results: list[bytes] = []
        text_at = result_at = 0
        for path, entry in self._entries.items():
            encoded = entry.encoded()
            texts.append(entry.text)
            results.append(encoded)
            rows.append([path, entry.size, entry.mtime_ns, entry.digest, cwds.setdefault(entry.cwd, len(cwds)),
                         text_at, text_at + len(entry.text), result_at, result_at + len(encoded),
                         _enc_summary(entry.summary), _enc_scope(entry.scope)])
            text_at += len(entry.text)
            result_at += len(encoded)
        text = "".join(texts).encode("utf-8", "surrogatepass")
        header = json.dumps({"salt": self.salt, "cwds": list(cwds), "text_bytes": len(text), "entries": rows},
                            ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
        body = [_LENGTH.pack(len(header)), header, text, *results]
        mac = hmac.new(key, digestmod="sha256")
        for part in body:
            mac.update(part)
        return [MAGIC, mac.digest(), *body]

    def _write(self, parts: list[bytes]) -> None:
        directory = self.directory
        directory.mkdir(parents=True, exist_ok=True)
        if directory.is_symlink() or not directory.is_dir():
            return  # a link planted in the tree: never write where it points
        try:  # keep the cache out of version control; never follow a link planted in its place
            fd = os.open(directory / ".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                         0o644)
        except OSError:
            pass
        else:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write("*\n")
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".t2ms")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.writelines(parts)
            os.replace(tmp, self.file)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise


def _slice(data: bytes, start: int, end: int) -> Callable[[], bytes]:
    def part() -> bytes:
        return data[start:end]
    return part
