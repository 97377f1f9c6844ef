"""The language server's transports: frames that recover from a wrong length, `exit` codes, and a TCP
listener that binds to loopback, serves one client, and serves nothing before the session token."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pygls")

from fuzz.lsp_client import RawClient  # noqa: E402
from torch2ms.lsp.transport import MAX_FRAME, BadFrame, FrameError, Frames  # noqa: E402

pytestmark = [pytest.mark.e2e]  # the language server as a process, over stdio and TCP

SERVER = [sys.executable, "-m", "torch2ms", "lsp"]


def frame(message: dict[str, Any], delta: int = 0) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % (len(body) + delta) + body


def drain(frames: Frames) -> list[bytes | BadFrame]:
    out = []
    while (item := frames.next()) is not None:
        out.append(item)
    return out


def decoded(frames: Frames) -> list[Any]:
    """What the server loop would make of the buffered bytes: messages, or the errors it sends."""
    out: list[Any] = []
    while (item := frames.next()) is not None:
        if isinstance(item, BadFrame):
            out.append(item)
            continue
        try:
            out.append(json.loads(item))
        except ValueError:
            out.append(frames.bad_body(item))
    return out


# ------------------------------------------------------------------ frames


def test_frames_split_a_stream_fed_a_byte_at_a_time() -> None:
    messages = [{"jsonrpc": "2.0", "id": i, "method": "m", "params": {"t": "é" * i}} for i in range(3)]
    data = b"".join(frame(m) for m in messages)
    frames = Frames()
    got = []
    for byte in data:
        frames.feed(bytes([byte]))
        got.extend(drain(frames))
    assert [json.loads(b) for b in got if isinstance(b, bytes)] == messages


@pytest.mark.parametrize("delta", [-20, -1, 1, 60])
def test_a_wrong_content_length_costs_one_message(delta: int) -> None:
    """The broken request is answered under its id; the frames after it are read as sent."""
    first = {"jsonrpc": "2.0", "id": 7, "method": "textDocument/hover", "params": {"x": "y" * 80}}
    after = [{"jsonrpc": "2.0", "id": 8, "method": "shutdown"}, {"jsonrpc": "2.0", "method": "exit"}]
    frames = Frames()
    frames.feed(frame(first, delta) + b"".join(frame(m) for m in after))
    got = decoded(frames)
    assert isinstance(got[0], BadFrame) and got[0].ident == 7, got
    assert got[1:] == after


def test_bytes_between_frames_and_a_header_without_length() -> None:
    ok = {"jsonrpc": "2.0", "id": 1, "method": "shutdown"}
    frames = Frames()
    frames.feed(b"garbage\r\n" + frame(ok) + b"Content-Type: x\r\n\r\n{}" + frame(ok))
    got = decoded(frames)
    assert [type(g).__name__ for g in got] == ["BadFrame", "dict", "BadFrame", "dict"], got


def test_a_frame_over_the_limit_ends_the_stream() -> None:
    frames = Frames()
    frames.feed(b"Content-Length: %d\r\n\r\n{" % (MAX_FRAME + 1))
    with pytest.raises(FrameError):
        frames.next()


# ------------------------------------------------------------------ stdio


def _stdio(tmp_path: Path) -> RawClient:
    client = RawClient(SERVER, cwd=str(tmp_path))
    client.initialize(tmp_path.as_uri())
    return client


@pytest.mark.parametrize("delta", [-20, 60])
def test_the_server_resyncs_after_a_wrong_length_and_honours_exit(tmp_path: Path, delta: int) -> None:
    client = _stdio(tmp_path)
    try:
        client.send_bytes(frame({"jsonrpc": "2.0", "id": 900, "method": "textDocument/hover",
                                 "params": {"textDocument": {"uri": (tmp_path / "a.py").as_uri()},
                                            "position": {"line": 0, "character": 0}}}, delta))
        assert client.response(900, 30)["error"]["code"] == -32700
        assert client.call("shutdown", None, 30).get("result") is None
        client.notify("exit", None)
        assert client.proc.wait(30) == 0
    finally:
        client.shutdown()


def test_exit_without_shutdown_exits_1(tmp_path: Path) -> None:
    client = _stdio(tmp_path)
    try:
        client.notify("exit", None)
        assert client.proc.wait(30) == 1
    finally:
        client.shutdown()


# ------------------------------------------------------------------ TCP


class Tcp:
    """`torch2ms lsp --tcp` in a child process, and the address and token it announced."""

    def __init__(self, tmp_path: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen([*SERVER, "--tcp", "127.0.0.1:0", *extra], cwd=str(tmp_path),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     env={**os.environ, **(env or {})})
        assert self.proc.stderr is not None
        line = self.proc.stderr.readline().decode()
        match = re.search(r"listening on ([\d.]+):(\d+) \((?:token: (\S+);|token from (\S+);)", line)
        assert match, line
        self.port = int(match.group(2))
        self.token = match.group(3)
        self.announced = line

    def connect(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=60)
        return sock

    def close(self) -> int:
        try:
            return self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return -9


def send(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.sendall(frame(message))


def receive(sock: socket.socket, ident: Any = None, timeout: float = 60) -> dict[str, Any] | None:
    """The next message from the server (or the response to `ident`, answering server requests on the way);
    None when the server closed the connection."""
    sock.settimeout(timeout)
    frames = Frames()
    stream = sock.makefile("rb")
    while True:
        item = frames.next()
        if item is None:
            data = stream.read1(65536)
            if not data:
                return None
            frames.feed(data)
            continue
        assert isinstance(item, bytes)
        message = json.loads(item)
        if "method" in message and "id" in message:  # a server request: answer it
            send(sock, {"jsonrpc": "2.0", "id": message["id"], "result": [{}] if "configuration" in
                        message["method"] else None})
            continue
        if ident is None or message.get("id") == ident:
            return dict(message)


def initialize(token: str | None, root: Path) -> dict[str, Any]:
    options = {} if token is None else {"token": token}
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {},
                       "initializationOptions": options}}


def payload_document(tmp_path: Path) -> tuple[str, Path]:
    """A file whose one call, if verify ran it, would leave a marker file behind."""
    marker = tmp_path / "RAN"
    source = f"import torch\nx = torch.abs(__import__('pathlib').Path({str(marker)!r}).write_text('x'))\n"
    path = tmp_path / "evil.py"
    path.write_text(source)
    return path.as_uri(), marker


def test_tcp_refuses_a_client_without_the_token(tmp_path: Path) -> None:
    server = Tcp(tmp_path)
    uri, marker = payload_document(tmp_path)
    try:
        for first in (initialize(None, tmp_path), initialize("wrong" * 8, tmp_path),
                      {"jsonrpc": "2.0", "id": 1, "method": "workspace/executeCommand",
                       "params": {"command": "torch2ms.verifyCall", "arguments": [uri, 2]}}):
            with server.connect() as sock:
                send(sock, first)
                send(sock, {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand",
                            "params": {"command": "torch2ms.verifyCall", "arguments": [uri, 2]}})
                answer = receive(sock)
                assert answer is not None and answer["error"]["code"] == -32001, answer
                assert receive(sock) is None  # closed: nothing after the refusal is read
        assert server.proc.poll() is None  # still waiting for its client
        with server.connect() as sock:  # the right token still gets in afterwards
            send(sock, initialize(server.token, tmp_path))
            reply = receive(sock, 1)
            assert reply is not None and "capabilities" in reply["result"]
            send(sock, {"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
            assert receive(sock, 2) is not None
            send(sock, {"jsonrpc": "2.0", "method": "exit"})
        assert server.close() == 0
        assert not marker.exists()
    finally:
        server.proc.kill()


def test_tcp_serves_one_client_and_keeps_verify_off(tmp_path: Path) -> None:
    server = Tcp(tmp_path)
    uri, marker = payload_document(tmp_path)
    try:
        with server.connect() as sock:
            send(sock, initialize(server.token, tmp_path))
            assert receive(sock, 1) is not None
            send(sock, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
            with server.connect() as second:  # a second connection while the first is open
                send(second, initialize(server.token, tmp_path))
                refused = receive(second)
                assert refused is not None and "another client" in refused["error"]["message"]
                assert receive(second) is None
            send(sock, {"jsonrpc": "2.0", "id": 3, "method": "workspace/executeCommand",
                        "params": {"command": "torch2ms.verifyCall", "arguments": [uri, 2]}})
            answer = receive(sock, 3)
            assert answer is not None and "--allow-verify" in answer["error"]["message"], answer
            send(sock, {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uri, "languageId": "python", "version": 1, "text": Path(uri[7:]).read_text()}}})
            send(sock, {"jsonrpc": "2.0", "id": 4, "method": "textDocument/codeAction", "params": {
                "textDocument": {"uri": uri}, "range": {"start": {"line": 1, "character": 0},
                                                        "end": {"line": 1, "character": 10}},
                "context": {"diagnostics": []}}})
            actions = receive(sock, 4)
            assert actions is not None
            assert not [a for a in actions["result"] or [] if "verify" in a.get("kind", "")], actions
            send(sock, {"jsonrpc": "2.0", "id": 5, "method": "shutdown"})
            assert receive(sock, 5) is not None
            send(sock, {"jsonrpc": "2.0", "method": "exit"})
        assert server.close() == 0
        time.sleep(0.5)
        assert not marker.exists()
    finally:
        server.proc.kill()


def test_tcp_offers_verify_only_when_allowed(tmp_path: Path) -> None:
    server = Tcp(tmp_path, "--allow-verify")
    uri, _marker = payload_document(tmp_path)
    clean = tmp_path / "clean.py"
    clean.write_text("import torch\nx = torch.zeros(3)\ny = torch.abs(x)\n")
    try:
        with server.connect() as sock:
            send(sock, initialize(server.token, tmp_path))
            assert receive(sock, 1) is not None
            send(sock, {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": clean.as_uri(), "languageId": "python", "version": 1, "text": clean.read_text()}}})
            deadline = time.monotonic() + 60
            kinds: list[str] = []
            while not kinds and time.monotonic() < deadline:
                send(sock, {"jsonrpc": "2.0", "id": 4, "method": "textDocument/codeAction", "params": {
                    "textDocument": {"uri": clean.as_uri()}, "range": {"start": {"line": 2, "character": 0},
                                                                       "end": {"line": 2, "character": 16}},
                    "context": {"diagnostics": []}}})
                actions = receive(sock, 4)
                assert actions is not None
                kinds = [a.get("kind", "") for a in actions["result"] or [] if "verify" in a.get("kind", "")]
                time.sleep(0.2)
            assert kinds == ["quickfix.torch2ms.verify"]
            send(sock, {"jsonrpc": "2.0", "id": 5, "method": "shutdown"})
            assert receive(sock, 5) is not None
            send(sock, {"jsonrpc": "2.0", "method": "exit"})
        assert server.close() == 0
    finally:
        server.proc.kill()


def test_tcp_token_from_a_file_or_the_environment_is_not_printed(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-token-from-a-file\n")
    for extra, env, token in ((["--token-file", str(token_file)], None, "s3cret-token-from-a-file"),
                              ([], {"TORCH2MS_LSP_TOKEN": "another-token-of-env-var"}, "another-token-of-env-var")):
        server = Tcp(tmp_path, *extra, env=env)
        try:
            assert token not in server.announced and server.token is None
            with server.connect() as sock:
                send(sock, initialize(token, tmp_path))
                reply = receive(sock, 1)
                assert reply is not None and "result" in reply
        finally:
            server.proc.kill()


@pytest.mark.parametrize("args, reason", [
    (["--tcp", "0.0.0.0:2087"], "not a loopback address"),
    (["--tcp", "127.0.0.1:2087", "--token-file", "missing"], "missing: cannot read a token"),
    (["--tcp", "127.0.0.1:2087", "--token-file", "short"], "at least 16 characters"),
    (["--allow-verify"], "go with --tcp"),
])
def test_tcp_settings_that_cannot_be_served(tmp_path: Path, args: list[str], reason: str) -> None:
    (tmp_path / "short").write_text("abc\n")
    proc = subprocess.run([*SERVER, *args], cwd=str(tmp_path), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and reason in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
