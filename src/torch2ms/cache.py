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
(8 bytes, little-endian), the header (JSON: the salt, the working directories, the
project-wide network scope's last outcome and one row per file: path, size, mtime,
content hash, summary and offsets) and then a region of UTF-8 that the rows point into:
each file's text-report chunk, its result and its scope facts (JSON with a string table
per record), decoded only when used.

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
from collections.abc import Callable
from dataclasses import replace
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

from . import __version__
from .config import Config
from .files import MiB, UnreadableFile, read_regular, user_cache_dir
from .mappings import MappingTable
from .model import (ApiCall, Arg, CallKind, Category, Confidence, Diagnostic, Edit, FileResult, Fix, ScanSummary, ScopeFacts,
                    Severity, Span)
from .strings import StringTable

CACHE_DIR_NAME = ".torch2ms_cache"
MAGIC = b"torch2ms-cache\x05\n"
MAX_CACHE_BYTES = 1024 * MiB
_MAC_SIZE = 32
_LENGTH = struct.Struct("<Q")
_FORMAT = 7


class CacheError(Exception):
    """A stored result that does not decode although its file's MAC checked out (a bug, not an attack)."""


class _Invalid(Exception):
    """Inside the decoder: the data does not have the expected shape."""


# ---------------------------------------------------------------- the data-only codec
_E = TypeVar("_E", bound=Enum)
_T = TypeVar("_T")


def _str(value: Any) -> str:
    if type(value) is not str:
        raise _Invalid
    return value


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


_ONLY_INT = frozenset({int})


def _counts(value: Any) -> dict[str, int]:
    if type(value) is not dict or not _ONLY_STR.issuperset(map(type, value)) \
            or not _ONLY_INT.issuperset(map(type, value.values())):
        raise _Invalid
    return value


def _pair(value: Any) -> list[Any]:
    return _list(value, 2)


class _Table(StringTable):
    """The strings of one record (a file's result, a file's scope facts), each stored once: a
    finding refers to its code, message, API names and documentation link by index (-1: None)."""

    __slots__ = ()

    def get(self, at: Any) -> str:
        if type(at) is not int or not 0 <= at < len(self.items):
            raise _Invalid
        return self.items[at]

    def get_opt(self, at: Any) -> str | None:
        return None if at == -1 and type(at) is int else self.get(at)


_SEVERITIES = {s.value: s for s in Severity}
_CATEGORIES = {c.value: c for c in Category}
_CONFIDENCES = {c.value: c for c in Confidence}
_CALL_KINDS = {k.value: k for k in CallKind}


def _member(members: dict[str, _E], value: str) -> _E:
    found = members.get(value)
    if found is None:
        raise _Invalid
    return found


def _span(value: Any) -> Span:
    a, b, c, d = _list(value, 4)
    return Span(_int(a), _int(b), _int(c), _int(d))


def _enc_span(span: Span) -> list[int]:
    return [span.start_line, span.start_col, span.end_line, span.end_col]


def _enc_diag(d: Diagnostic, table: _Table) -> list[Any]:
    fix = None if d.fix is None else [table(d.fix.title), d.fix.safe,
                                      [[*_enc_span(e.span), table(e.text)] for e in d.fix.edits]]
    return [table(d.code), table(d.severity.value), table(d.category.value), *_enc_span(d.span), table(d.message),
            table(d.torch_api), table(d.mindspore_api), fix, table(d.doc_url), table(d.confidence.value)]


def _diag(value: Any, table: _Table) -> Diagnostic:
    code, severity, category, a, b, c, d, message, torch_api, mindspore_api, fix, doc_url, confidence = \
        _list(value, 13)
    decoded_fix = None
    if fix is not None:
        title, safe, edits = _list(fix, 3)
        if type(safe) is not bool:
            raise _Invalid
        decoded_fix = Fix(table.get(title), tuple(Edit(_span(e[:4]), table.get(e[4])) for e in map(_edit, _list(edits))),
                          safe)
    return Diagnostic(table.get(code), _member(_SEVERITIES, table.get(severity)),
                      _member(_CATEGORIES, table.get(category)), Span(_int(a), _int(b), _int(c), _int(d)),
                      table.get(message), table.get_opt(torch_api), table.get_opt(mindspore_api), decoded_fix,
                      table.get_opt(doc_url), _member(_CONFIDENCES, table.get(confidence)))


def _edit(value: Any) -> list[Any]:
    return _list(value, 5)


def encode_result(result: FileResult) -> bytes:
    """A result without its scope facts, as JSON."""
    table = _Table()
    diags = [_enc_diag(d, table) for d in result.diagnostics]
    return json.dumps([result.path, result.lines, table.items, diags],
                      ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")


def decode_result(data: bytes | memoryview) -> FileResult:
    """`encode_result` reversed; `_Invalid` (or a JSON error) when the data has another shape."""
    path, lines, strings, diags = _list(json.loads(bytes(data).decode("utf-8", "surrogatepass")), 4)
    table = _Table(list(_strs(strings)))
    return FileResult(_str(path), tuple(_diag(d, table) for d in _list(diags)), _int(lines))


def _enc_scope(scope: ScopeFacts | None) -> list[Any] | None:
    if scope is None:
        return None
    table = _Table()
    latent = [[c, [_enc_diag(d, table) for d in diags], [[*_enc_span(s), code] for s, code in replaced]]
              for c, diags, replaced in scope.latent]
    pending = [[receiver, member, low, None if noqa is None else list(noqa), _enc_call(call, table)]
               for receiver, member, low, noqa, call in scope.pending]
    arguments = [[callee, list(positional), [list(k) for k in keywords], more]
                 for callee, positional, keywords, more in scope.arguments]
    return [[[c, list(t)] for c, t in scope.roots], [[c, list(t)] for c, t in scope.edges],
            [[n, list(b), list(m), module] for n, b, m, module in scope.classes], [list(i) for i in scope.imports],
            latent, [[c, list(t)] for c, t in scope.returns], [[c, [list(a) for a in t]] for c, t in scope.attrs],
            [list(v) for v in scope.values], pending, arguments, table.items]


def _opt_span(span: Span | None) -> list[int] | None:
    return None if span is None else _enc_span(span)


def _span_or_none(value: Any) -> Span | None:
    return None if value is None else _span(value)


def _enc_const(value: Any) -> Any:
    """A constant the resolver folded (an `ast.Constant`'s value, a negated number, a tuple of them) as
    JSON; a list is always a tagged value, since no constant is a list."""
    if value is None or type(value) in (bool, int, str):
        return value
    if type(value) is float:
        return value if value == value and value not in (float("inf"), float("-inf")) else ["f", repr(value)]
    if type(value) is tuple:
        return ["t", [_enc_const(v) for v in value]]
    if type(value) is complex:
        return ["c", _enc_const(value.real), _enc_const(value.imag)]
    if type(value) is bytes:
        return ["b", value.decode("latin-1")]
    if value is Ellipsis:
        return ["e"]
    raise TypeError(f"a folded constant of type {type(value).__name__}")  # the resolver folds no other


def _const(value: Any) -> Any:
    if value is None or type(value) in (bool, int, str, float):
        return value
    tag, *rest = _list(value)
    if tag == "t" and len(rest) == 1:
        return tuple(_const(v) for v in _list(rest[0]))
    if tag == "f" and len(rest) == 1 and rest[0] in ("inf", "-inf", "nan"):
        return float(rest[0])
    if tag == "c" and len(rest) == 2:
        return complex(_float(rest[0]), _float(rest[1]))
    if tag == "b" and len(rest) == 1:
        return _str(rest[0]).encode("latin-1")
    if tag == "e" and not rest:
        return Ellipsis
    raise _Invalid


def _float(value: Any) -> float:
    found = _const(value)
    if type(found) not in (int, float):
        raise _Invalid
    return float(found)


def _enc_arg(arg: Arg, table: _Table) -> list[Any]:
    return [table(arg.keyword), _enc_span(arg.span), _opt_span(arg.keyword_span), arg.is_const,
            _enc_const(arg.value), arg.is_tensor, arg.starred, table(arg.tag)]


def _arg(value: Any, table: _Table) -> Arg:
    keyword, span, keyword_span, is_const, const, is_tensor, starred, tag = _list(value, 8)
    return Arg(table.get_opt(keyword), _span(span), _span_or_none(keyword_span), _bool(is_const), _const(const),
               _bool(is_tensor), _bool(starred), table.get(tag))


def _enc_call(call: ApiCall, table: _Table) -> list[Any]:
    return [table(call.api), _enc_span(call.span), table(call.kind.value), table(call.confidence.value),
            _opt_span(call.func_span), _opt_span(call.name_span), [_enc_arg(a, table) for a in call.args],
            call.in_network, table(call.context)]


def _call(value: Any, table: _Table) -> ApiCall:
    api, span, kind, confidence, func_span, name_span, args, in_network, context = _list(value, 9)
    return ApiCall(table.get(api), _span(span), _member(_CALL_KINDS, table.get(kind)), _member(_CONFIDENCES, table.get(confidence)),
                   _span_or_none(func_span), _span_or_none(name_span), tuple(_arg(a, table) for a in _list(args)),
                   _bool(in_network), table.get(context))


def _bool(value: Any) -> bool:
    if type(value) is not bool:
        raise _Invalid
    return value


def _targets(value: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    out = []
    for item in _list(value):
        if type(item) is not list or len(item) != 2 or type(item[0]) is not str:
            raise _Invalid
        out.append((item[0], _strs(item[1])))
    return tuple(out)


def _classes(value: Any) -> tuple[tuple[str, tuple[str, ...], tuple[str, ...], bool], ...]:
    out = []
    for item in _list(value):
        if type(item) is not list or len(item) != 4 or type(item[0]) is not str or type(item[3]) is not bool:
            raise _Invalid
        out.append((item[0], _strs(item[1]), _strs(item[2]), item[3]))
    return tuple(out)


def _latent(value: Any, table: _Table) -> tuple[str, tuple[Diagnostic, ...], tuple[tuple[Span, str], ...]]:
    context, diags, replaced = _list(value, 3)
    return (_str(context), tuple(_diag(d, table) for d in _list(diags)),
            tuple((_span(r[:4]), _str(r[4])) for r in map(_edit, _list(replaced))))


def _scope(value: Any) -> ScopeFacts | None:
    if value is None:
        return None
    roots, edges, classes, imports, latent, returns, attrs, values, pending, arguments, strings = _list(value, 11)
    table = _Table(list(_strs(strings)))
    return ScopeFacts(_targets(roots), _targets(edges), _classes(classes),
                      tuple((_str(a), _str(b)) for a, b in map(_pair, _list(imports))),
                      tuple(_latent(item, table) for item in _list(latent)), _targets(returns),
                      tuple((_str(c), tuple((_str(a), _str(b)) for a, b in map(_pair, _list(t))))
                            for c, t in map(_pair, _list(attrs))),
                      tuple((_str(a), _str(b)) for a, b in map(_pair, _list(values))),
                      tuple(_pending(item, table) for item in _list(pending)),
                      tuple(_argument(item) for item in _list(arguments)))


def _pending(value: Any, table: _Table) -> tuple[str, str, bool, tuple[str, ...] | None, ApiCall]:
    receiver, member, low, noqa, call = _list(value, 5)
    return _str(receiver), _str(member), _bool(low), None if noqa is None else _strs(noqa), _call(call, table)


def _argument(value: Any) -> tuple[str, tuple[str, ...], tuple[tuple[str, str], ...], bool]:
    callee, positional, keywords, more = _list(value, 4)
    return (_str(callee), _strs(positional), tuple((_str(a), _str(b)) for a, b in map(_pair, _list(keywords))),
            _bool(more))


def _enc_summary(summary: ScanSummary) -> list[Any]:
    return [summary.files_failed, summary.lines, summary.diagnostics, summary.by_code, summary.by_category,
            summary.by_api, summary.by_severity, summary.fixable, summary.unsafe_fixable]


def _summary(value: Any) -> ScanSummary:
    failed, lines, diagnostics, by_code, by_category, by_api, by_severity, fixable, unsafe = _list(value, 9)
    return ScanSummary(1, _int(failed), _int(lines), _int(diagnostics), _counts(by_code), _counts(by_category),
                       _counts(by_api), _counts(by_severity), _int(fixable), _int(unsafe))


def _decoded(path: str, what: str, decode: Callable[[], _T]) -> _T:
    """A stored record decoded on first use. Its file's MAC checked out, so a record that does not
    decode is a bug of this build, not an attack: a clear error, not a guess."""
    try:
        return decode()
    except (_Invalid, ValueError, RecursionError) as exc:
        reason = "of another shape" if isinstance(exc, _Invalid) else "not JSON" if isinstance(exc, ValueError) \
            else "nested too deeply"
        raise CacheError(f"{path}: the results cache holds {what} that does not decode ({reason}); "
                         "run again with --no-cache") from None


def _scope_bytes(scope: ScopeFacts | None) -> bytes:
    return b"" if scope is None else json.dumps(_enc_scope(scope), ensure_ascii=False,
                                                separators=(",", ":")).encode("utf-8", "surrogatepass")


def _scope_of_bytes(data: bytes | memoryview) -> ScopeFacts | None:
    return None if not data else _scope(json.loads(bytes(data).decode("utf-8", "surrogatepass")))


# ---------------------------------------------------------------- one file's outcome
class Scanned:
    """One file's outcome in a scan: its `FileResult`, its summary, its text-report chunk and its
    network-scope facts, each made once, on first use. A cache hit serves the summary and the
    chunk without decoding the result's findings or its scope facts, which is most of a warm
    re-scan's time otherwise."""

    __slots__ = ("path", "_result", "_encoded", "_summary", "_text", "_scope", "_scope_of")

    def __init__(self, path: str, result: FileResult | None = None, *, encoded: bytes | memoryview | None = None,
                 summary: ScanSummary | None = None, text: str | None = None,
                 scope_of: Callable[[], ScopeFacts | None] | None = None) -> None:
        self.path = path
        self._result = result
        self._encoded = encoded  # the result as `encode_result` wrote it (its scope facts are kept beside it)
        self._summary = summary
        self._text = text
        self._scope = result.scope if result is not None else None
        self._scope_of = None if result is not None else scope_of

    @property
    def scope(self) -> ScopeFacts | None:
        """The facts the project-wide network scope needs (project_graph.py)."""
        if self._scope_of is not None:
            self._scope = self._scope_of()
            self._scope_of = None
        return self._scope

    @property
    def result(self) -> FileResult:
        if self._result is None:
            encoded = self._encoded
            assert encoded is not None
            result = _decoded(self.path, "a result", lambda: decode_result(encoded))
            scope = self.scope
            self._result = result if scope is None else replace(result, scope=scope)
        return self._result

    @property
    def summary(self) -> ScanSummary:
        if self._summary is None:
            self._summary = ScanSummary.of_file(self.result)
        return self._summary

    def chunk(self, render: Callable[[FileResult], str]) -> str:
        """The file's part of the text report, made by `render` (paths shown relative to the working
        directory) once; a cache hit serves the part the cache stored."""
        if self._text is None:
            self._text = render(self.result)
        return self._text

    @property
    def rendered(self) -> str | None:
        """The text-report part when it is made (or served by the cache), else None."""
        return self._text

    def encoded(self) -> bytes | memoryview:
        if self._encoded is None:
            self._encoded = encode_result(self.result)
        return self._encoded


class _Entry:
    """A file's record in the cache: what a hit serves at once (summary, text chunk) and, stored
    as written, what is decoded only when used (the result, the scope facts)."""

    __slots__ = ("size", "mtime_ns", "digest", "cwd", "summary", "_text", "_result", "_facts", "_scanned", "_scope")

    def __init__(self, size: int, mtime_ns: int, digest: str, cwd: str, summary: ScanSummary,
                 text: memoryview | None = None, result: memoryview | None = None, facts: memoryview | None = None,
                 scanned: Scanned | None = None) -> None:
        self.size, self.mtime_ns, self.digest, self.cwd = size, mtime_ns, digest, cwd  # cwd: where `text` was made
        self.summary = summary
        self._text, self._result, self._facts = text, result, facts  # as stored (a loaded entry) ...
        self._scanned = scanned  # ... or the outcome they are made from (a fresh one)
        self._scope: tuple[ScopeFacts | None] | None = None

    @property
    def text(self) -> str | None:
        """The file's text-report chunk (rendered in the working directory `cwd`), if it was made."""
        if self._text is None:
            assert self._scanned is not None
            return self._scanned.rendered
        return str(self._text, "utf-8", "surrogatepass")

    def text_bytes(self, render: Callable[[FileResult], str] | None) -> bytes | memoryview:
        """The chunk as stored; made by `render` where the scan did not make it (empty without a renderer:
        the entry's `cwd` is then empty too, so that no working directory is served it)."""
        if self._text is None:
            assert self._scanned is not None
            made = self._scanned.rendered
            if made is None and render is not None:
                made = self._scanned.chunk(render)
            self._text = memoryview((made or "").encode("utf-8", "surrogatepass"))
        return self._text

    def encoded(self) -> bytes | memoryview:
        if self._result is None:
            assert self._scanned is not None
            self._result = memoryview(self._scanned.encoded())
        return self._result

    def facts(self) -> bytes | memoryview:
        if self._facts is None:
            assert self._scanned is not None
            self._facts = memoryview(_scope_bytes(self._scanned.scope))
        return self._facts

    def scope(self, path: str) -> ScopeFacts | None:
        if self._scope is None:
            self._scope = (_decoded(path, "network-scope facts", lambda: _scope_of_bytes(self.facts())),)
        return self._scope[0]


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
    try:  # MindSpore's API as data (the port check's facts; the mapping tables have their own digest)
        digest.update((package / "data" / "mindspore_api.json").read_bytes())
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
            import tempfile  # here, as where the cache is written: a scan without a cache writes nothing

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


Regrades = dict[int, dict[str, str]]  # project_graph.regrades: file index -> context -> why it is network code
Named = dict[int, list[Diagnostic]]  # project_graph.named_calls: file index -> the findings the pass adds


def graph_key(items: list[tuple[str, str | None]], roots: list[str]) -> str:
    """What the project-wide network scope depends on: the scan's roots and every file's path and content."""
    return hashlib.blake2b(json.dumps([roots, items], ensure_ascii=False).encode("utf-8", "surrogatepass"),
                           digest_size=16).hexdigest()


def _project(value: Any) -> tuple[str, Regrades, Named] | None:
    if value is None:
        return None
    key, changes, named, strings = _list(value, 4)
    table = _Table(list(_strs(strings)))
    out: Regrades = {}
    for index, reasons in map(_pair, _list(changes)):
        out[_int(index)] = _counts_of_str(reasons)
    added: Named = {}
    for index, diags in map(_pair, _list(named)):
        added[_int(index)] = [_diag(d, table) for d in _list(diags)]
    return _str(key), out, added


def _enc_project(graph: tuple[str, Regrades, Named]) -> list[Any]:
    key, changes, added = graph
    table = _Table()
    named = [[i, [_enc_diag(d, table) for d in diags]] for i, diags in added.items()]
    return [key, [[i, r] for i, r in changes.items()], named, table.items]


def _counts_of_str(value: Any) -> dict[str, str]:
    if type(value) is not dict or not _ONLY_STR.issuperset(map(type, value)) \
            or not _ONLY_STR.issuperset(map(type, value.values())):
        raise _Invalid
    return value


class Cache:
    """The results of a scan by file, with each file's text-report chunk where `render` is given (the text
    report's renderer, passed in by the command line: the cache stores what it is handed)."""

    def __init__(self, directory: Path, config: Config, table: MappingTable,
                 render: Callable[[FileResult], str] | None = None) -> None:
        self.directory = directory
        self._render = render
        self.salt = f"{_FORMAT}|{__version__}|{code_digest()}|{table.digest}|{config.key()}"
        self.file = directory / f"results-{hashlib.blake2b(self.salt.encode(), digest_size=8).hexdigest()}.t2ms"
        self._key = signing_key()
        self._graph: tuple[str, Regrades, Named] | None = None
        self._entries: dict[str, _Entry] = self._load()
        self._fresh: dict[str, tuple[int, int, str, Scanned]] = {}
        self._graph_changed = False
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
            self._graph = None
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
        self._graph = _project(header.get("graph"))
        region = body + length
        view = memoryview(data)[region:]  # each file's text chunk, result and scope facts, one after the other
        entries: dict[str, _Entry] = {}
        for row in _list(header.get("entries")):
            path, size, mtime_ns, digest, cwd, at, text_end, result_end, scope_end, summary = _list(row, 10)
            if not (_ONLY_INT.issuperset(map(type, (size, mtime_ns, cwd, at, text_end, result_end, scope_end)))
                    and type(path) is str and type(digest) is str and 0 <= cwd < len(cwds)
                    and 0 <= at <= text_end <= result_end <= scope_end <= len(view)):
                raise _Invalid
            entries[path] = _Entry(size, mtime_ns, digest, cwds[cwd], _summary(summary), view[at:text_end],
                                   view[text_end:result_end], view[result_end:scope_end])
        return entries

    def _scanned(self, path: str, entry: _Entry) -> Scanned:
        self.hits += 1
        return Scanned(path, encoded=entry.encoded(), summary=entry.summary,
                       text=entry.text if entry.cwd == self._cwd else None,
                       scope_of=functools.partial(entry.scope, path))

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

    def project_outcome(self, key: str) -> tuple[Regrades, Named] | None:
        """The project pass's outcome (network scope, named calls) stored for the same roots, paths and
        contents."""
        return self._graph[1:] if self._graph is not None and self._graph[0] == key else None

    def keep_project_outcome(self, key: str, changes: Regrades, added: Named) -> None:
        if self._graph is None or self._graph[0] != key:
            self._graph = (key, changes, added)
            self._graph_changed = True

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
        if not (self._fresh or self._graph_changed) or self._key is None:
            return
        for path, (size, mtime_ns, digest, scanned) in self._fresh.items():
            cwd = self._cwd if self._render is not None or scanned.rendered is not None else ""
            self._entries[path] = _Entry(size, mtime_ns, digest, cwd, scanned.summary, scanned=scanned)
        self._fresh.clear()
        self._graph_changed = False
        try:
            self._write(self._encode(self._key))
        except OSError:
            pass  # a cache that cannot be written only costs speed

    def _encode(self, key: bytes) -> list[bytes | memoryview]:
        cwds: dict[str, int] = {}
        rows: list[list[Any]] = []
        records: list[bytes | memoryview] = []
        at = 0
        for path, entry in self._entries.items():
            parts = (entry.text_bytes(self._render), entry.encoded(), entry.facts())
            records += parts
            text_end = at + len(parts[0])
            result_end = text_end + len(parts[1])
            rows.append([path, entry.size, entry.mtime_ns, entry.digest, cwds.setdefault(entry.cwd, len(cwds)),
                         at, text_end, result_end, result_end + len(parts[2]), _enc_summary(entry.summary)])
            at = result_end + len(parts[2])
        graph = None if self._graph is None else _enc_project(self._graph)
        header = json.dumps({"salt": self.salt, "cwds": list(cwds), "graph": graph, "entries": rows},
                            ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
        body: list[bytes | memoryview] = [_LENGTH.pack(len(header)), header, *records]
        mac = hmac.new(key, digestmod="sha256")
        for part in body:
            mac.update(part)
        return [MAGIC, mac.digest(), *body]

    def _write(self, parts: list[bytes | memoryview]) -> None:
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
        import tempfile

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

