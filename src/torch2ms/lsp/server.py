"""The torch2ms language server: a pygls adapter over `torch2ms.engine.scan_source`.

What happens where:

- didOpen / didSave analyse at once; didChange re-analyses after the debounce
  (``debounce`` ms, default 300). The scan runs in a worker thread, one at a
  time per document; a result whose document version moved on meanwhile, or
  whose document was closed, is dropped.
- The whole file is re-scanned on each analysis: the ast-based core is several
  times faster than libcst's parse alone (see benchmarks/lsp_latency.py), so
  there is nothing to gain from block-level caching.
- A file that does not parse shows exactly one diagnostic, the scanner's
  TMS901 at the error position; no stale findings are kept.
- Diagnostics are pushed for every client; pull (textDocument/diagnostic) is
  served as well when the client declares support for it.
- Configuration: ``[tool.torch2ms]`` of the pyproject.toml nearest to each file
  (re-read when its modification time changes), with the client's settings
  (initializationOptions, then the ``torch2ms`` section of
  workspace/configuration) on top.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import TextDocument, Workspace

from torch2ms import __version__, project_graph
from torch2ms.config import Config, ConfigError, find_pyproject, load_config
from torch2ms.engine import scan_source
from torch2ms.codes import SelectorError, check_selector
from torch2ms.mappings import MappingError, MappingTable, check_target_version, load_table
from torch2ms.model import DEVICES, Diagnostic, FileResult, ScopeFacts
from torch2ms.process import PARENT_ENV, freeze_long_lived, release_memory
from torch2ms.source import split_lines_keepends

from . import convert

log = logging.getLogger("torch2ms.lsp")

SCAN_WORKSPACE = "torch2ms.scanWorkspace"
VERIFY_CALL = "torch2ms.verifyCall"  # arguments: document uri, 1-based line
VERIFY_KIND = "quickfix.torch2ms.verify"
VERIFY_TIMEOUT_S = 300.0
DEFAULT_DEBOUNCE_MS = 300
RELEASE_DELAY_S = 0.2  # after a document is closed, before its memory is returned to the system
SETTINGS_SECTION = "torch2ms"


@dataclass(frozen=True)
class ClientSettings:
    """What the client sends (initializationOptions / the `torch2ms` configuration section)."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    target_version: str | None = None
    debounce_ms: int = DEFAULT_DEBOUNCE_MS
    device: str | None = None  # cpu, gpu or ascend; None: the pyproject's (default cpu)

    @classmethod
    def parse(cls, raw: Any) -> tuple[ClientSettings, list[str]]:
        """Settings from untrusted JSON; the problems found come back as messages (bad values ignored)."""
        problems: list[str] = []
        if raw is None:
            return cls(), problems
        if not isinstance(raw, dict):
            return cls(), [f"settings: expected an object, got {type(raw).__name__}"]
        if isinstance(raw.get(SETTINGS_SECTION), dict):  # {"torch2ms": {...}} as some clients send it
            raw = raw[SETTINGS_SECTION]

        def codes(key: str) -> tuple[str, ...]:
            value = raw.get(key)
            if value is None:
                return ()
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                problems.append(f"settings: '{key}' must be a list of strings")
                return ()
            out = []
            for item in (v for v in value if v.strip()):
                try:  # the CLI's check: an unknown code or prefix is reported, not silently matched
                    out.append(check_selector(item))
                except SelectorError as exc:
                    problems.append(f"settings: '{key}': {exc}")
            return tuple(out)

        target = raw.get("targetVersion")
        if target is not None:
            try:
                target = check_target_version(str(target))
            except ValueError as exc:
                problems.append(f"settings: 'targetVersion': {exc}")
                target = None
        debounce = raw.get("debounce", DEFAULT_DEBOUNCE_MS)
        if isinstance(debounce, bool) or not isinstance(debounce, (int, float)) or debounce < 0:
            problems.append("settings: 'debounce' must be a non-negative number of milliseconds")
            debounce = DEFAULT_DEBOUNCE_MS
        device = raw.get("device")
        if device is not None and (not isinstance(device, str) or device.lower() not in DEVICES):
            if device != "":
                problems.append(f"settings: 'device' must be one of {', '.join(DEVICES)}")
            device = None
        return cls(codes("select"), codes("ignore"), target or None, int(min(debounce, 60_000)),
                   device.lower() if device else None), problems


@dataclass
class DocState:
    """What the server keeps per open document."""

    uri: str
    timer: asyncio.TimerHandle | None = None
    task: asyncio.Task[None] | None = None
    rerun: bool = False
    version: int | None = None  # of the text the result below belongs to
    text: str = ""
    result: FileResult | None = None  # published: without fixes (engine.scan_source(fixes=False))
    base: FileResult | None = None  # the same before the project's network scope re-graded it
    path: str | None = None  # normalised file path (the key of the server's scope facts)
    reasons: dict[str, str] | None = None  # the re-grading applied: context -> why it is network code
    lines: convert.Lines | None = None
    fixed: FileResult | None = None  # the same result with its fixes, built for the first code action
    _lsp: list[lsp.Diagnostic] | None = None

    @property
    def lsp_diagnostics(self) -> list[lsp.Diagnostic]:
        """Typed LSP diagnostics of the result (built on first use: publishing does not need them)."""
        if self._lsp is None:
            self._lsp = [] if self.result is None or self.lines is None else convert.to_lsp_all(
                self.result.diagnostics, self.lines)
        return self._lsp




class PhysicalLinesDocument(TextDocument):
    """A document whose lines break only at \\r\\n, \\r and \\n, as LSP and Python count them.

    pygls splits with str.splitlines(), which also breaks at form feeds, \\x85,
    U+2028 and the like, so an incremental edit below such a character would land
    on the wrong line of the server's copy.
    """

    @property
    def lines(self) -> tuple[str, ...]:
        return tuple(split_lines_keepends(self.source))


class PhysicalLinesWorkspace(Workspace):
    def _create_text_document(self, doc_uri: str, source: str | None = None, version: int | None = None,
                              language_id: str | None = None) -> TextDocument:
        return PhysicalLinesDocument(doc_uri, source=source, version=version, language_id=language_id,
                                     sync_kind=self._sync_kind, position_codec=self._position_codec)


class Torch2msProtocol(LanguageServerProtocol):
    """pygls' protocol, answering a request whose params do not fit the method with an error.

    pygls itself only logs such a message (it fails before the id is known to the
    dispatcher), which leaves the client waiting for a reply forever.
    """

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if isinstance(data, dict) and "id" in data and "method" in data and isinstance(data["id"], (int, str)):
                error = JsonRpcInvalidParams(message=f"invalid params for {data['method']!r}")
                self._send_response(data["id"], None, error.to_response_error())
            raise exc

    def _execute_handler(self, msg_id: Any, handler: Any, callback: Any, args: Any = None, kwargs: Any = None) -> None:
        # pygls 2.1 files the future of every notification handler that is a generator
        # (its own didOpen/didChange/didClose wrap ours) or a coroutine, and of every step
        # a generator yields to (executeCommand's call of the command), in _request_futures
        # under a fresh uuid; only request ids are ever removed again. That was a
        # Future + Condition + RLock + deque (~2 KB) kept per didChange for ever (issue #9).
        # Forget such an entry once its future is done. A request's entry is removed
        # by pygls before this callback runs (or by $/cancelRequest), so it is untouched.
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        future = self._request_futures.get(msg_id)
        if future is not None:
            future.add_done_callback(functools.partial(self._forget_future, msg_id))

    def _forget_future(self, msg_id: Any, future: Any) -> None:
        if self._request_futures.get(msg_id) is future:
            self._request_futures.pop(msg_id, None)

    def handle_message(self, message: Any) -> None:
        # After `shutdown` a request must still be answered: with an error (LSP: InvalidRequest);
        # pygls only logs it, which leaves the client waiting. Notifications other than exit are dropped.
        method, ident = getattr(message, "method", None), getattr(message, "id", None)
        if self._shutdown and method is not None and ident is not None and method != lsp.EXIT:
            error = JsonRpcInvalidRequest(message=f"the server is shutting down: {method!r} not run")
            self._send_response(ident, None, error.to_response_error())
            return
        super().handle_message(message)


class Torch2msServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("torch2ms", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
                         protocol_cls=Torch2msProtocol)
        self.settings = ClientSettings()
        self.docs: dict[str, DocState] = {}
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="torch2ms-scan")
        self._configs: dict[str, tuple[float, Config]] = {}
        self._config_errors: set[str] = set()
        self._table: MappingTable | None = None
        self.workspace_published: dict[str, str] = {}  # key -> uri of closed files a workspace scan reported
        # The network scope across files, as the CLI grades a project: the workspace's scope facts (of the
        # editor's text for open documents); not ready until the workspace is indexed.
        self.project = project_graph.ProjectScope()
        self._link_generation = 0
        self.index_task: asyncio.Future[None] | None = None
        self._tasks: set[asyncio.Future[None]] = set()
        self.analyses = 0  # finished scans (for tests and the benchmark)
        # verify runs the code at a line in torch and MindSpore: on for the editor that started the server
        # on stdio, off for a TCP client unless `--allow-verify` (docs/security.md)
        self.allow_verify = True

    # ------------------------------------------------------------ helpers
    @property
    def table(self) -> MappingTable:
        if self._table is None:
            self._table = load_table()
            # The table (and the modules loaded so far) live as long as the server: keep them out of the
            # cyclic collector's passes, which otherwise traverse them during the conversion of a file's
            # diagnostics (a 40 ms stall measured on a 1,000-line model file, with the whole table loaded;
            # its entries now load as they are first looked up: `mappings.Entries`).
            freeze_long_lived()
        return self._table

    @property
    def encoding(self) -> str:
        return str(self.workspace.position_encoding or lsp.PositionEncodingKind.Utf16)

    def log(self, message: str, kind: lsp.MessageType = lsp.MessageType.Log) -> None:
        try:
            self.window_log_message(lsp.LogMessageParams(type=kind, message=message))
        except Exception:  # no connection yet / any more
            log.info("%s", message)

    def warn_user(self, message: str) -> None:
        self.log(message, lsp.MessageType.Warning)
        try:
            self.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=f"torch2ms: {message}"))
        except Exception:
            pass

    def report_server_error(self, error: Exception, source: Any) -> None:
        # Malformed notifications and the like: log, never pop up a dialog per keystroke.
        self.log(f"error: {type(error).__name__}: {error}", lsp.MessageType.Error)

    def apply_settings(self, raw: Any) -> None:
        settings, problems = ClientSettings.parse(raw)
        for problem in problems:
            self.warn_user(problem)
        self.settings = settings

    def config_for(self, path: str | None) -> Config:
        """`[tool.torch2ms]` of the nearest pyproject.toml (cached by mtime), client settings on top."""
        base = Config()
        if path:
            try:
                pyproject = find_pyproject(Path(path))
            except OSError:
                pyproject = None
            if pyproject is not None:
                key = str(pyproject)
                try:
                    mtime = pyproject.stat().st_mtime
                except OSError:
                    mtime = -1.0
                cached = self._configs.get(key)
                if cached is not None and cached[0] == mtime:
                    base = cached[1]
                else:
                    try:
                        base = load_config(pyproject)
                        self._config_errors.discard(key)
                    except ConfigError as exc:
                        if key not in self._config_errors:  # say it once per broken file
                            self._config_errors.add(key)
                            self.warn_user(f"{exc}; using the defaults")
                        base = Config()
                    self._configs[key] = (mtime, base)
        s = self.settings
        return base.with_overrides(select=s.select or None, target_version=s.target_version,
                                   device=s.device).with_ignored(s.ignore)

    def publish(self, uri: str, items: list[dict[str, Any]], version: int | None = None) -> None:
        """textDocument/publishDiagnostics with plain JSON objects (see convert.to_json)."""
        params: dict[str, Any] = {"uri": uri, "diagnostics": items}
        if version is not None:
            params["version"] = version
        # A plain JSON-RPC message: pygls' typed notify() would walk thousands of
        # diagnostics through cattrs, which costs as much as the scan itself.
        self.protocol._send_data({"jsonrpc": "2.0", "method": lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
                                  "params": params})

    def document(self, uri: str) -> Any:
        """The open text document, or None (never reads the disk for an unknown uri)."""
        return self.workspace.text_documents.get(unquote(uri))

    # ------------------------------------------------------------ analysis
    def schedule(self, uri: str, delay_ms: int | None = None) -> None:
        state = self.docs.get(unquote(uri))
        if state is None:
            return
        if state.timer is not None:
            state.timer.cancel()
        delay = (self.settings.debounce_ms if delay_ms is None else delay_ms) / 1000
        state.timer = asyncio.get_running_loop().call_later(delay, self._start, unquote(uri))

    def _start(self, key: str) -> None:
        state = self.docs.get(key)
        if state is None:
            return
        state.timer = None
        if state.task is not None and not state.task.done():
            state.rerun = True  # one more pass when the running one finishes
            return
        state.task = asyncio.ensure_future(self._analyse(key))

    async def _analyse(self, key: str) -> None:
        state = self.docs.get(key)
        doc = self.document(key)
        if state is None or doc is None:
            return
        text, version, path = doc.source, doc.version, doc.path
        config = self.config_for(path)
        loop = asyncio.get_running_loop()
        try:
            result = await loop.run_in_executor(
                self.pool, functools.partial(scan_source, text, path or key, config, self.table, fixes=False))
        except MappingError as exc:  # a broken table: nothing can be analysed
            self.warn_user(str(exc))
            return
        self.analyses += 1
        state.path = project_graph.norm_path(path) if path else None
        if state.path is not None and self.project.update(state.path, result.scope):
            await self.relink(skip=key)
        state_now = self.docs.get(key)
        doc_now = self.document(key)
        if state_now is not state or doc_now is None:
            return  # closed (and maybe reopened) meanwhile
        if state.rerun:
            state.rerun = False
            self.schedule(key, 0)
            return
        if doc_now.version != version:
            return  # an edit came in: its own timer will run
        lines = convert.Lines(text, self.encoding)
        state.version, state.text, state.base, state.result, state.lines = version, text, result, None, lines
        self.regrade(state)
        published = state.result or result
        self.publish(state.uri, [convert.to_json(d, lines) for d in published.diagnostics], version)

    async def current(self, uri: str) -> DocState | None:
        """The document's state with a result for its current version (analysing now if needed)."""
        key = unquote(uri)
        state = self.docs.get(key)
        doc = self.document(key)
        if state is None or doc is None:
            return None
        for _ in range(3):
            if state.result is not None and state.version == doc.version:
                return state
            if state.timer is not None:
                state.timer.cancel()
                state.timer = None
            if state.task is not None and not state.task.done():
                await asyncio.shield(state.task)
                continue
            state.task = asyncio.ensure_future(self._analyse(key))
            await asyncio.shield(state.task)
            if self.docs.get(key) is not state:
                return None
        return state if state.result is not None else None

    async def with_fixes(self, state: DocState) -> FileResult | None:
        """`state.result` with every finding's fix. Publishing skips the fixes (a fifth of a large file's
        analysis); the first code action for a version builds them, with the same text and configuration."""
        if state.fixed is not None:
            return state.fixed
        result, text, version = state.result, state.text, state.version
        if result is None:
            return None  # not analysed yet (or closed meanwhile)
        doc = self.document(state.uri)
        path = doc.path if doc is not None else None
        fixed = await asyncio.get_running_loop().run_in_executor(
            self.pool, scan_source, text, path or unquote(state.uri), self.config_for(path), self.table)
        if state.result is not result or state.version != version:
            return None  # re-analysed meanwhile
        if state.reasons:
            fixed = project_graph.regraded(fixed, state.reasons)
        if [d.span for d in fixed.diagnostics] != [d.span for d in result.diagnostics]:
            return None  # the configuration changed meanwhile: the next analysis publishes anew
        state.fixed = fixed
        return fixed

    # ------------------------------------------------------------ network scope across files
    def workspace_folders(self) -> list[str]:
        folders = [to_fs_path(f.uri) for f in self.workspace.folders.values()]
        if not folders and self.workspace.root_path:
            folders = [self.workspace.root_path]
        return [project_graph.norm_path(f) for f in folders if f and os.path.isdir(f)]

    async def index_workspace(self) -> None:
        """Collect the scope facts of the workspace's files (one scan off the event loop), then grade the
        open documents with the project's network graph, as a CLI scan of the workspace does."""
        from torch2ms.api import scan_outcomes

        folders = self.workspace_folders()
        if not folders:
            return
        config = self.config_for(os.path.join(folders[0], "__init__.py"))
        try:
            outcomes = await asyncio.get_running_loop().run_in_executor(
                self.pool, functools.partial(scan_outcomes, folders, config))
        except RuntimeError:
            return  # shutting down: the pool takes no more work
        except Exception as exc:  # noqa: BLE001 - the editor keeps its file-local grading
            self.log(f"indexing the workspace failed: {type(exc).__name__}: {exc}", lsp.MessageType.Warning)
            return
        self.note_scopes([(o.path, o.scope) for o in outcomes], folders)
        await self.relink()

    def note_scopes(self, items: list[tuple[str, ScopeFacts | None]], folders: list[str]) -> None:
        """Scope facts of the workspace's files on disk; open documents keep those of their editor text."""
        self.project.load(items, folders, keep=[state.path for state in self.docs.values() if state.path])

    async def relink(self, skip: str | None = None) -> None:
        """Follow network calls across the workspace's files again (off the event loop) and re-publish the
        open documents whose grading changed (but `skip`, which its analysis publishes)."""
        self._link_generation += 1
        generation = self._link_generation
        try:
            reached = await asyncio.get_running_loop().run_in_executor(self.pool, self.project.pass_over_copy())
        except RuntimeError:
            return  # shutting down: the pool takes no more work
        if generation != self._link_generation:
            return  # a newer pass is under way
        self.project.reached = reached
        for key, state in list(self.docs.items()):
            if key != skip and state.base is not None and self.regrade(state):
                lines, result = state.lines, state.result
                if lines is not None and result is not None:
                    self.publish(state.uri, [convert.to_json(d, lines) for d in result.diagnostics], state.version)

    def regrade(self, state: DocState) -> bool:
        """Apply the project's network scope to the document's own result; whether that changed it."""
        reasons = self.project.reasons(state.path)
        if state.base is None or (state.result is not None and reasons == state.reasons):
            return False
        state.reasons = reasons
        state.result = project_graph.regraded(state.base, reasons) if reasons else state.base
        state._lsp, state.fixed = None, None
        return True

    def background(self, work: Any) -> None:
        """Run a coroutine as a task the server holds until it is done (handlers return at once)."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def refresh_from_disk(self, path: str) -> None:
        """A closed document's facts come from its file again (its unsaved text is gone)."""
        if not self.project.ready or not os.path.isfile(path):
            return
        config = self.config_for(path)
        table = self.table
        try:
            result = await asyncio.get_running_loop().run_in_executor(
                self.pool, lambda: scan_source(_read_text(path), path, config, table, fixes=False))
        except (MappingError, RuntimeError):  # a broken table; or shutting down
            return
        if self.project.update(path, result.scope):
            await self.relink()

    def reanalyse_all(self) -> None:
        for key in list(self.docs):
            self.schedule(key, 0)
        caps = self.client_capabilities
        refresh = caps.workspace and caps.workspace.diagnostics and caps.workspace.diagnostics.refresh_support
        if refresh and self.pull_enabled:
            try:
                self.workspace_diagnostic_refresh(None)
            except Exception:
                pass

    pull_enabled = False

    async def pull_configuration(self) -> None:
        caps = self.client_capabilities
        if not (caps.workspace and caps.workspace.configuration):
            return
        try:
            items = await asyncio.wait_for(self.workspace_configuration_async(
                lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section=SETTINGS_SECTION)])), 10)
        except Exception as exc:
            self.log(f"workspace/configuration failed: {exc}", lsp.MessageType.Warning)
            return
        if items and items[0] is not None:
            self.apply_settings(items[0])


def _in_range(diag: Diagnostic, lines: convert.Lines, rng: lsp.Range) -> bool:
    start = lines.from_client(rng.start)
    end = lines.from_client(rng.end)
    return convert.spans_overlap(diag.span, *start, *end)


def create_server() -> Torch2msServer:
    server = Torch2msServer()

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: Torch2msServer, params: lsp.InitializeParams) -> None:
        # pygls has just built its Workspace; give it documents that count lines like Python.
        ls.protocol.workspace.__class__ = PhysicalLinesWorkspace
        ls.apply_settings(params.initialization_options)
        caps = params.capabilities
        options = params.initialization_options if isinstance(params.initialization_options, dict) else {}
        ls.pull_enabled = bool(caps.text_document and caps.text_document.diagnostic) and \
            options.get("pullDiagnostics", True) is not False
        if not ls.pull_enabled:  # advertise pull diagnostics only to clients that use them
            ls.protocol.fm.features.pop(lsp.TEXT_DOCUMENT_DIAGNOSTIC, None)

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: Torch2msServer, params: None) -> None:
        # pygls then cancels the pending requests while it iterates over its table of them, from which
        # each cancelled future's callback removes its entry: "dictionary changed size during
        # iteration", the shutdown fails and every later request goes unanswered. Cancel them first,
        # from a copy of the table.
        current = ls.protocol.msg_id
        for msg_id, future in list(ls.protocol._request_futures.items()):
            if msg_id != current and not future.done():
                future.cancel()
        if ls.index_task is not None:
            ls.index_task.cancel()
        for state in ls.docs.values():
            if state.timer is not None:
                state.timer.cancel()
        ls.docs.clear()
        ls.pool.shutdown(wait=False, cancel_futures=True)

    @server.feature(lsp.EXIT)
    def exit_(ls: Torch2msServer, params: None) -> None:
        # pygls leaves the process waiting for its stdin reader thread when the client
        # keeps the pipe open after `exit`; make sure the process ends anyway.
        code = 0 if ls.protocol._shutdown else 1
        threading.Thread(target=_hard_exit, args=(code, 1.0), daemon=True).start()

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: Torch2msServer, params: lsp.InitializedParams) -> None:
        await ls.pull_configuration()
        ls.reanalyse_all()
        # A task of its own: a handler that stayed pending for the whole index would hold pygls' future for it.
        ls.index_task = asyncio.ensure_future(ls.index_workspace())

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: Torch2msServer, params: lsp.DidChangeConfigurationParams) -> None:
        caps = ls.client_capabilities
        if caps.workspace and caps.workspace.configuration:
            await ls.pull_configuration()
        elif isinstance(params.settings, dict) and params.settings:
            ls.apply_settings(params.settings)
        ls._configs.clear()
        ls.reanalyse_all()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: Torch2msServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        if any(change.uri.endswith("pyproject.toml") for change in params.changes):
            ls._configs.clear()
            ls.reanalyse_all()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: Torch2msServer, params: lsp.DidOpenTextDocumentParams) -> None:
        key = unquote(params.text_document.uri)
        old = ls.docs.pop(key, None)
        if old is not None and old.timer is not None:
            old.timer.cancel()
        ls.docs[key] = DocState(uri=params.text_document.uri)
        ls.workspace_published.pop(key, None)
        ls.schedule(key, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: Torch2msServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: Torch2msServer, params: lsp.DidSaveTextDocumentParams) -> None:
        if params.text_document.uri.endswith("pyproject.toml"):
            ls._configs.clear()
            ls.reanalyse_all()
            return
        ls.schedule(params.text_document.uri, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: Torch2msServer, params: lsp.DidCloseTextDocumentParams) -> None:
        state = ls.docs.pop(unquote(params.text_document.uri), None)
        if state is None:
            return
        if state.timer is not None:
            state.timer.cancel()
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=state.uri, diagnostics=[]))
        if state.path is not None and ls.project.ready:
            ls.background(ls.refresh_from_disk(state.path))
        # The document's text, tree and findings are freed once this handler and pygls' own let go of
        # them; then hand the memory back to the system (a large file's analysis takes hundreds of MB,
        # which the C allocator otherwise keeps for the life of the server).
        asyncio.get_running_loop().call_later(RELEASE_DELAY_S, release_memory)

    @server.feature(lsp.TEXT_DOCUMENT_DIAGNOSTIC, lsp.DiagnosticOptions(
        identifier=convert.SOURCE, inter_file_dependencies=False, workspace_diagnostics=False))
    async def pull_diagnostics(ls: Torch2msServer, params: lsp.DocumentDiagnosticParams) -> lsp.DocumentDiagnosticReport:
        state = await ls.current(params.text_document.uri)
        if state is None:
            return lsp.RelatedFullDocumentDiagnosticReport(items=[])
        result_id = f"{state.version}:{id(state.result)}"
        if params.previous_result_id == result_id:
            return lsp.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        return lsp.RelatedFullDocumentDiagnosticReport(items=state.lsp_diagnostics, result_id=result_id)

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    async def hover(ls: Torch2msServer, params: lsp.HoverParams) -> lsp.Hover | None:
        state = await ls.current(params.text_document.uri)
        if state is None or state.result is None or state.lines is None:
            return None
        line, col = state.lines.from_client(params.position)
        found = _at(state.result.diagnostics, line, col)
        if found is None:
            # Findings that select/ignore turned off still deserve a hover.
            doc = ls.document(state.uri)
            own = ls.config_for(doc.path if doc else None)
            plain = Config(target_version=own.target_version, device=own.device)
            result = await asyncio.get_running_loop().run_in_executor(
                ls.pool, scan_source, state.text, state.uri, plain, ls.table)
            found = _at(result.diagnostics, line, col)
        if found is None:
            return None
        from torch2ms.report.json import verification_record

        config = ls.config_for(ls.document(state.uri).path if ls.document(state.uri) else None)
        text = convert.hover_markdown(found, ls.table, config.version, verification_record(config.device),
                                      config.device)
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text),
                         range=state.lines.range(found.span))

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(
        code_action_kinds=[lsp.CodeActionKind.QuickFix, convert.FIX_ALL_KIND], resolve_provider=False))
    async def code_action(ls: Torch2msServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction] | None:
        state = await ls.current(params.text_document.uri)
        if state is None or state.result is None or state.lines is None:
            return None
        lines = state.lines
        only = params.context.only if params.context else None

        def wanted(kind: str) -> bool:
            return not only or any(kind == k or kind.startswith(str(k) + ".") for k in only)

        def workspace_edit(edits: list[lsp.TextEdit]) -> lsp.WorkspaceEdit:
            identifier = lsp.OptionalVersionedTextDocumentIdentifier(uri=state.uri, version=state.version)
            return lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(text_document=identifier, edits=edits)])

        actions: list[lsp.CodeAction] = []
        fixed = await ls.with_fixes(state) if wanted(lsp.CodeActionKind.QuickFix) else state.result
        if fixed is None:
            return None
        pairs = list(zip(fixed.diagnostics, state.lsp_diagnostics))
        if wanted(lsp.CodeActionKind.QuickFix):
            for diag, lsp_diag in pairs:
                if not _in_range(diag, lines, params.range):
                    continue
                if diag.fix is not None and diag.fix.edits:
                    title = diag.fix.title + ("" if diag.fix.safe else " (unsafe)")
                    actions.append(lsp.CodeAction(
                        title=title, kind=lsp.CodeActionKind.QuickFix, diagnostics=[lsp_diag],
                        is_preferred=diag.fix.safe, edit=workspace_edit(convert.text_edits(diag.fix.edits, lines))))
            for diag, lsp_diag in pairs:
                if not _in_range(diag, lines, params.range):
                    continue
                edit = convert.noqa_edit(diag, lines)
                if edit is not None:
                    actions.append(lsp.CodeAction(
                        title=f"Suppress {diag.code} with # noqa on this line", kind=lsp.CodeActionKind.QuickFix,
                        diagnostics=[lsp_diag], edit=workspace_edit([edit])))
        if wanted(VERIFY_KIND) and ls.allow_verify and verify_runs_here():
            actions.extend(_verify_actions(state, fixed, pairs, lambda d: _in_range(d, lines, params.range)))
        fixed = await ls.with_fixes(state) if wanted(convert.FIX_ALL_KIND) else None
        if fixed is not None and any(d.fix is not None and d.fix.safe for d in fixed.diagnostics):
            from torch2ms.fix import FixError, fix_source

            doc = ls.document(state.uri)
            config = ls.config_for(doc.path if doc else None)
            try:
                new_text, applied = await asyncio.get_running_loop().run_in_executor(
                    ls.pool, fix_source, state.text, doc.path if doc else state.uri, config)
            except (FixError, ValueError) as exc:
                ls.log(f"fix all: {exc}", lsp.MessageType.Warning)
                new_text, applied = state.text, []
            if applied and new_text != state.text:
                actions.append(lsp.CodeAction(
                    title=f"Fix all torch2ms findings ({len(applied)} safe fix{'es' if len(applied) != 1 else ''})",
                    kind=convert.FIX_ALL_KIND,
                    edit=workspace_edit([convert.whole_document_edit(state.text, new_text, lines)])))
        return actions

    @server.command(SCAN_WORKSPACE)
    async def scan_workspace(ls: Torch2msServer, *args: Any) -> dict[str, int]:
        return await _scan_workspace(ls)

    @server.command(VERIFY_CALL)
    async def verify_call(ls: Torch2msServer, *args: Any) -> dict[str, Any]:
        if len(args) != 2 or not isinstance(args[0], str) or isinstance(args[1], bool) \
                or not isinstance(args[1], int):
            raise JsonRpcInvalidParams(f"{VERIFY_CALL} takes a document uri and a 1-based line")
        if not ls.allow_verify:
            raise JsonRpcInvalidRequest(f"{VERIFY_CALL} runs code and is off for a TCP client "
                                        "(start the server with --allow-verify to turn it on)")
        return await _verify_call(ls, args[0], args[1])

    return server


@functools.lru_cache(maxsize=1)
def verify_runs_here() -> bool:
    """Whether `torch2ms verify` can run in this interpreter: torch and MindSpore are installed (the
    verify extra). Found without importing either; the Verify action is offered only then."""
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("torch", "mindspore"))


def _verify_actions(state: DocState, fixed: FileResult, pairs: list[tuple[Diagnostic, Any]],
                    in_range: Callable[[Diagnostic], bool]) -> list[lsp.CodeAction]:
    """The verify action for each line in range where `torch2ms verify FILE:LINE` can work: the call it
    would pick (verify.locate.candidate) has a rewrite and runs on its own (locate.unverifiable), and the
    shape of every name it reads is known (locate.job)."""
    import ast

    from torch2ms.source import SourceText
    from torch2ms.verify.locate import LocateError, candidate, job, unverifiable

    lines = sorted({d.span.start_line for d, _ in pairs if in_range(d)})
    if not lines:
        return []
    try:
        tree = ast.parse(state.text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    src = SourceText(state.text)
    out = []
    for line in lines:
        diag = candidate(fixed.diagnostics, line)
        if diag is None or unverifiable(src, tree, diag) is not None:
            continue
        try:  # inputs of a known shape for every name the call reads: the editor has no --shape to give
            job(src, tree, diag, load_table(), None, f"line {line}")
        except LocateError:
            continue
        lsp_diag = next(item for d, item in pairs if d is diag)
        out.append(lsp.CodeAction(
            title=f"Verify {diag.torch_api} against its MindSpore rewrite (runs torch and MindSpore)",
            kind=VERIFY_KIND, diagnostics=[lsp_diag],
            command=lsp.Command(title="torch2ms verify", command=VERIFY_CALL, arguments=[state.uri, line])))
    return out


def _plain(text: str) -> str:
    """A reason without what only the command line can act on: a parenthesis naming a flag ("(run with
    --verbose ...)"), a "; give it with --shape ..." clause."""
    import re

    text = re.sub(r"\s*\([^()]*(?<![\w-])--[a-z][^()]*\)", "", text)
    return re.sub(r";[^;]*(?<![\w-])--[a-z][^;]*", "", text).strip()


def _figure(value: Any) -> str:
    return f"{value:.3g}" if isinstance(value, (int, float)) else "unknown"


def verify_message(line: int, spec: dict[str, Any], result: dict[str, Any], ran_on: dict[str, Any]) -> str:
    """What the editor says of a verify run: the whole call and its whole rewrite, whether they agree,
    where they ran, and the reason when they do not; no command-line flag."""
    from torch2ms.verify.locate import unwrapped

    torch_code, ms_code = unwrapped(spec["torch"]), unwrapped(spec["mindspore"])
    where = (f" on torch {ran_on.get('torch_version')} and MindSpore {ran_on.get('mindspore_version')} "
             f"({str(ran_on.get('device')).upper()})") if ran_on else ""
    status = str(result.get("status", "error"))
    reason = _plain(str(result.get("reason") or ""))
    difference = (f"largest difference {_figure(result.get('max_abs_err'))} (relative "
                  f"{_figure(result.get('max_rel_err'))})")
    if status == "passed":
        return f"Verified, line {line}: {torch_code} and {ms_code} agree{where}; {difference}."
    if status == "failed":
        return (f"Verify failed, line {line}: {torch_code} and {ms_code} differ{where}"
                f"{': ' + reason if reason else '; ' + difference}.")
    return f"Could not verify line {line}: {torch_code} against {ms_code}{where}{': ' + reason if reason else ''}."


def _at(diags: tuple[Diagnostic, ...], line: int, col: int) -> Diagnostic | None:
    """The narrowest finding whose span contains (line, col)."""
    best: Diagnostic | None = None
    for diag in diags:
        span = diag.span
        if (span.start_line, span.start_col) <= (line, col) <= (span.end_line, span.end_col):
            if best is None or (span.end_line - span.start_line, span.end_col - span.start_col) < (
                    best.span.end_line - best.span.start_line, best.span.end_col - best.span.start_col):
                best = diag
    return best


async def _verify_call(ls: Torch2msServer, uri: str, line: int) -> dict[str, Any]:
    """`torch2ms verify FILE:LINE` on the document's current text, in a child process (the server never
    imports torch or MindSpore); the outcome is shown to the user and returned."""
    import json
    import tempfile

    doc = ls.document(uri)
    if doc is None:
        raise JsonRpcInvalidParams(f"{uri} is not open")
    name = os.path.basename(doc.path or "") or "snippet.py"
    with tempfile.TemporaryDirectory(prefix="torch2ms-verify-") as tmp:
        path = os.path.join(tmp, name)
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(doc.source)  # unsaved edits included
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "torch2ms", "verify", "--json", f"{path}:{line}",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=tmp,
            env={**os.environ, PARENT_ENV: str(os.getpid())})  # it ends if the server does
        try:
            out, err = await asyncio.wait_for(proc.communicate(), VERIFY_TIMEOUT_S)
        except asyncio.TimeoutError:
            proc.kill()
            await proc.wait()
            out, err = b"", f"no answer within {VERIFY_TIMEOUT_S:.0f} s".encode()
    found: dict[str, Any] | None = None
    for text in out.decode("utf-8", "replace").splitlines():
        try:
            found = json.loads(text)
        except ValueError:
            continue
    if found is None or "error" in found:
        if found is not None:  # verify could not locate a call to run: its reason, without the CLI's hint
            reason_text = str(found["error"])
        else:
            lines = err.decode("utf-8", "replace").strip().splitlines()
            reason_text = lines[-1] if lines else f"the check ended with exit code {proc.returncode}"
            reason_text = reason_text.replace(f"{path}:{line}: ", "").replace(path, name)
            reason_text = _plain(reason_text.removeprefix("torch2ms verify: error: ").removeprefix("torch2ms: "))
        message = f"Could not verify line {line}: {reason_text}."
        answer: dict[str, Any] = {"status": "error", "reason": f"line {line}: {reason_text}", "message": message}
        ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=message))
        return answer
    spec, result, ran_on = found["spec"], found["result"], found.get("ran_on") or {}
    status = str(result.get("status", "error"))
    answer = {"status": status, "api": spec["api"], "torch": spec["torch"], "mindspore": spec["mindspore"],
              "inputs": spec["inputs"], "max_abs_err": result.get("max_abs_err"),
              "max_rel_err": result.get("max_rel_err"), "reason": result.get("reason") or "", "ran_on": ran_on}
    message = verify_message(line, spec, result, ran_on)
    ls.window_show_message(lsp.ShowMessageParams(
        type=lsp.MessageType.Info if status == "passed" else lsp.MessageType.Warning, message=message))
    answer["message"] = message
    return answer


async def _scan_workspace(ls: Torch2msServer) -> dict[str, int]:
    """Scan every workspace folder; publish for files that are not open; report $/progress."""
    from torch2ms.api import scan_paths

    folders = ls.workspace_folders()
    loop = asyncio.get_running_loop()
    token = f"torch2ms-scan-{uuid.uuid4().hex}"
    caps = ls.client_capabilities
    progress = bool(caps.window and caps.window.work_done_progress)
    if progress:
        try:
            await asyncio.wait_for(ls.work_done_progress.create_async(token), 10)
        except Exception:
            progress = False
    if progress:
        ls.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(
            title="torch2ms: scanning the workspace", message=f"{len(folders)} folder(s)", percentage=0,
            cancellable=False))
    count = 0
    last_report = 0.0

    def on_result(_result: FileResult) -> None:
        nonlocal count
        count += 1

    def report() -> None:
        nonlocal last_report
        if progress and loop.time() - last_report > 0.1:
            last_report = loop.time()
            ls.work_done_progress.report(token, lsp.WorkDoneProgressReport(message=f"{count} file(s)"))

    def scan(folder: str) -> list[FileResult]:
        def callback(result: FileResult) -> None:
            on_result(result)
            loop.call_soon_threadsafe(report)

        return scan_paths([folder], ls.config_for(os.path.join(folder, "__init__.py")), jobs=1, on_result=callback)

    files = findings = 0
    reported: dict[str, str] = {}
    scopes: list[tuple[str, ScopeFacts | None]] = []
    try:
        for index, folder in enumerate(folders):
            results = await loop.run_in_executor(ls.pool, scan, folder)
            scopes.extend((result.path, result.scope) for result in results)
            for result in results:
                files += 1
                uri = from_fs_path(os.path.abspath(result.path)) or result.path
                key = unquote(uri)
                if key in ls.docs:
                    continue  # open documents show their live diagnostics
                if not result.diagnostics and key not in ls.workspace_published:
                    continue
                text = _read_text(result.path) if result.diagnostics else ""
                lines = convert.Lines(text, ls.encoding)
                items = [convert.to_json(d, lines) for d in result.diagnostics]
                findings += len(items)
                ls.publish(uri, items)
                if items:
                    reported[key] = uri
            if progress:
                ls.work_done_progress.report(token, lsp.WorkDoneProgressReport(
                    message=f"{files} file(s)", percentage=int(100 * (index + 1) / len(folders))))
        for stale, stale_uri in ls.workspace_published.items():  # clean or gone since the last scan
            if stale not in reported and stale not in ls.docs:
                ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=stale_uri, diagnostics=[]))
        ls.workspace_published = reported
        ls.note_scopes(scopes, folders)  # the scan's facts are the freshest index of the workspace
        await ls.relink()
    finally:
        if progress:
            ls.work_done_progress.end(token, lsp.WorkDoneProgressEnd(
                message=f"{files} file(s), {findings} finding(s)"))
            ls.work_done_progress.tokens.pop(token, None)
    return {"files": files, "findings": findings}


def _hard_exit(code: int, delay: float) -> None:
    time.sleep(delay)
    try:
        sys.stdout.flush()
    finally:
        os._exit(code)


def _read_text(path: str) -> str:
    from torch2ms.api import read_source

    text, _error = read_source(path)
    return text or ""


def main(tcp: str | None = None, *, token_file: str | None = None, allow_remote: bool = False,
         allow_verify: bool = False) -> int:
    """`torch2ms lsp`: serve on stdio, or one authenticated client on HOST:PORT with --tcp.

    The exit code is the protocol's: 0 after `shutdown` then `exit` (or the end of the stream after
    `shutdown`), 1 otherwise; 2 for a TCP setting that cannot be served."""
    from . import transport

    level = os.environ.get("TORCH2MS_LSP_LOG", "WARNING").upper()
    logging.basicConfig(level=getattr(logging, level, logging.WARNING),
                        format="torch2ms-lsp: %(asctime)s %(levelname)s: %(message)s")
    server = create_server()
    stop = threading.Event()
    server._stop_event = stop

    def on_error(exc: Exception) -> None:
        server.report_server_error(exc, JsonRpcException)

    try:
        if tcp:
            host, _, port = tcp.rpartition(":")
            host = host.strip("[]") or "127.0.0.1"
            try:
                transport.check_host(host, allow_remote)
                token, source = session_token(token_file)
            except transport.TcpError as exc:
                print(f"torch2ms lsp: error: {exc}", file=sys.stderr)
                return 2
            server.allow_verify = allow_verify

            def announce(bound_host: str, bound_port: int) -> None:
                where = f"token: {token}" if source is None else f"token from {source}"
                print(f"torch2ms lsp: listening on {bound_host}:{bound_port} ({where}; send it as "
                      "initializationOptions.token)", file=sys.stderr, flush=True)

            try:
                transport.serve_tcp(server.protocol, host, int(port), token, stop, on_error, announce)
            except OSError as exc:
                print(f"torch2ms lsp: error: cannot listen on {host}:{port}: {exc.strerror or exc}", file=sys.stderr)
                return 2
        else:
            stdin: Any = sys.stdin.buffer  # a BufferedReader: read1 answers with what the pipe holds
            server.protocol.set_writer(_StdoutWriter(sys.stdout.buffer))
            reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="torch2ms-stdin")

            async def serve() -> None:
                loop = asyncio.get_running_loop()
                await transport.serve_stream(lambda: loop.run_in_executor(reader, stdin.read1, 65536),
                                             server.protocol, stop, on_error)

            asyncio.run(serve())
    except SystemExit as exc:  # pygls ends the loop this way on `exit`
        return exc.code if isinstance(exc.code, int) else 1
    except transport.FrameError as exc:
        print(f"torch2ms lsp: error: {exc}", file=sys.stderr)
        return 1
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    return 0 if server.protocol._shutdown else 1


class _StdoutWriter:
    """pygls' writer interface over the process's standard output."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, data: bytes) -> None:
        self._stream.write(data)
        self._stream.flush()

    def close(self) -> None:
        self._stream.close()


TOKEN_ENV = "TORCH2MS_LSP_TOKEN"
MIN_TOKEN = 16


def session_token(token_file: str | None) -> tuple[str, str | None]:
    """The TCP session token and where it came from (None: made now, to be printed once)."""
    from . import transport
    from torch2ms.files import UnreadableFile, read_regular

    if token_file:
        try:
            lines = read_regular(token_file, limit=4096).decode("utf-8").split()
        except (UnreadableFile, UnicodeDecodeError) as exc:
            raise transport.TcpError(f"{token_file}: cannot read a token: {exc}") from None
        token = lines[0] if lines else ""
        source: str | None = token_file
    elif os.environ.get(TOKEN_ENV):
        token, source = os.environ[TOKEN_ENV].strip(), TOKEN_ENV
    else:
        return transport.new_token(), None
    if len(token) < MIN_TOKEN:
        raise transport.TcpError(f"{source}: the token must have at least {MIN_TOKEN} characters")
    return token, source
