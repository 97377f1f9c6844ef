"""A raw JSON-RPC client for a language server on stdio, for soak and fuzz runs.

Raw on purpose: it can send what a well-behaved client library never would (bad
JSON, wrong params, unknown methods, cancellations of finished requests), and it
keeps every message the server sends, so a test can check that every valid request
got exactly one answer and which document versions were published.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections import defaultdict
from typing import Any

SERVER_COMMAND = [sys.executable, "-m", "torch2ms", "lsp"]


def utf16_position(text: str, offset: int) -> dict[str, int]:
    """LSP position (UTF-16 units) of a code-point offset; lines end at \\n, \\r\\n or \\r, as the spec says."""
    line = 0
    start = 0
    i = 0
    while i < offset:
        ch = text[i]
        if ch == "\n" or ch == "\r":
            if ch == "\r" and i + 1 < len(text) and text[i + 1] == "\n":
                if i + 1 == offset:  # inside a \r\n: not a valid position; use the \r
                    break
                i += 1
            line += 1
            start = i + 1
        i += 1
    units = len(text[start:offset].encode("utf-16-le")) // 2
    return {"line": line, "character": units}


class RawClient:
    """Speaks LSP over a server process's stdin/stdout; a reader thread collects what comes back.

    Writes go through a writer thread, so neither the caller nor the reader (which answers the
    server's own requests) ever blocks on a full pipe: a server blocked writing a large
    publication while its input pipe is full would otherwise wait for a client blocked writing
    to it, for ever."""

    def __init__(self, command: list[str] | None = None, cwd: str | None = None, stderr_path: str | None = None) -> None:
        self._stderr = open(stderr_path or os.devnull, "wb")
        self.proc = subprocess.Popen(command or SERVER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._stderr, cwd=cwd)
        self._lock = threading.Condition()
        self._next_id = 0
        self.responses: dict[Any, dict[str, Any]] = {}
        self.duplicate_responses: list[Any] = []
        self.published: dict[str, list[tuple[int | None, list[dict[str, Any]]]]] = defaultdict(list)
        self.notifications: list[dict[str, Any]] = []
        self.server_requests: list[dict[str, Any]] = []
        self.unparsable: list[bytes] = []
        self.closed = False
        self._outbox: queue.Queue[bytes | None] = queue.Queue()
        self._writer = threading.Thread(target=self._write_loop, name="lsp-writer", daemon=True)
        self._writer.start()
        self._reader = threading.Thread(target=self._read_loop, name="lsp-reader", daemon=True)
        self._reader.start()

    # ------------------------------------------------------------ wire
    def send_bytes(self, data: bytes) -> None:
        """Queue `data` for the server, in order; never blocks."""
        self._outbox.put(data)

    def _write_loop(self) -> None:
        stream = self.proc.stdin
        assert stream is not None
        broken = False
        while True:
            data = self._outbox.get()
            if data is None:
                return
            if broken:
                continue  # the server is gone: what is left is dropped
            try:
                stream.write(data)
                stream.flush()
            except (OSError, ValueError):
                broken = True

    def send_body(self, body: bytes) -> None:
        self.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def send(self, message: dict[str, Any]) -> None:
        self.send_body(json.dumps(message).encode("utf-8"))

    def _read_loop(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        try:
            while True:
                length = None
                while True:
                    line = stream.readline()
                    if not line:
                        return
                    line = line.strip()
                    if not line:
                        break
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                if length is None:
                    continue
                body = stream.read(length)
                try:
                    message = json.loads(body)
                except ValueError:
                    self.unparsable.append(body)
                    continue
                self._dispatch(message)
        finally:
            with self._lock:
                self.closed = True
                self._lock.notify_all()

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "method" in message and "id" in message:  # a request from the server: answer it
            self.server_requests.append(message)
            result: Any = None
            if message["method"] == "workspace/configuration":
                result = [self.settings for _ in message.get("params", {}).get("items", [])]
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            return
        with self._lock:
            if "method" in message:
                if message["method"] == "textDocument/publishDiagnostics":
                    params = message["params"]
                    self.published[params["uri"]].append((params.get("version"), params["diagnostics"]))
                else:
                    self.notifications.append(message)
            elif "id" in message:
                if message["id"] in self.responses:
                    self.duplicate_responses.append(message["id"])
                self.responses[message["id"]] = message
            self._lock.notify_all()

    settings: dict[str, Any] = {}

    # ------------------------------------------------------------ requests
    def request(self, method: str, params: Any) -> int:
        with self._lock:
            self._next_id += 1
            ident = self._next_id
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        return ident

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_for(self, predicate: Any, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._lock:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    return bool(predicate())
                self._lock.wait(min(left, 0.2))
            return True

    def response(self, ident: int, timeout: float = 30.0) -> dict[str, Any]:
        if not self.wait_for(lambda: ident in self.responses, timeout):
            raise TimeoutError(f"no response to request {ident} within {timeout:g} s "
                               f"(server {'exited' if self.proc.poll() is not None else 'alive'})")
        return self.responses[ident]

    def call(self, method: str, params: Any, timeout: float = 30.0) -> dict[str, Any]:
        return self.response(self.request(method, params), timeout)

    # ------------------------------------------------------------ session
    def initialize(self, root_uri: str | None, options: dict[str, Any] | None = None,
                   capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        self.settings = dict(options or {})
        caps = capabilities if capabilities is not None else {
            "textDocument": {"publishDiagnostics": {"versionSupport": True},
                             "synchronization": {"didSave": True},
                             "hover": {"contentFormat": ["markdown", "plaintext"]},
                             "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": [
                                 "quickfix", "source.fixAll"]}}}},
            "workspace": {"configuration": True},
        }
        reply = self.call("initialize", {"processId": os.getpid(), "rootUri": root_uri, "capabilities": caps,
                                         "initializationOptions": self.settings}, timeout=120)
        self.notify("initialized", {})
        return reply

    def shutdown(self, timeout: float = 30.0) -> int | None:
        """shutdown + exit; the server's exit code (None if it had to be killed)."""
        try:
            if self.proc.poll() is None:
                self.call("shutdown", None, timeout)
                self.notify("exit", None)
            return self.proc.wait(timeout)
        except (TimeoutError, subprocess.TimeoutExpired, BrokenPipeError, OSError):
            self.proc.kill()
            self.proc.wait()
            return None
        finally:
            self._outbox.put(None)
            self._writer.join(10)
            for stream in (self.proc.stdin, self.proc.stdout):
                try:
                    if stream is not None:
                        stream.close()
                except OSError:
                    pass
            self._stderr.close()

    def rss_kb(self) -> int:
        """The server process's resident memory, from /proc (Linux)."""
        with open(f"/proc/{self.proc.pid}/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise RuntimeError("no VmRSS in /proc status")

    def last_published(self, uri: str) -> tuple[int | None, list[dict[str, Any]]] | None:
        with self._lock:
            items = self.published.get(uri)
            return items[-1] if items else None
