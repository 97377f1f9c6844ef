"""How messages reach the language server: LSP frames from stdio or from one authenticated TCP client.

pygls' own loops trust every frame: a Content-Length a few bytes off leaves the stream out of step
for good (every later request unanswered, `exit` never read), and its TCP server serves any process
that connects, as many as connect. Here:

- `Frames` splits a byte stream into message bodies and finds the next frame again after a bad one
  (a length too short or too long, bytes between frames, a header without a length). A request in a
  bad frame is answered with a JSON-RPC parse error under its id where the id can be read, so the
  client is not left waiting; a frame larger than `MAX_FRAME` ends the session with an error.
- `serve_stream` feeds the decoded messages to pygls' protocol.
- `serve_tcp` listens on loopback only unless told otherwise, serves one client at a time, and
  serves nothing before that client's `initialize` carries the session token
  (`initializationOptions.token`); any other first message, or a wrong token, is answered with an
  error and the connection is closed.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import logging
import re
import secrets
import socket
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

log = logging.getLogger("torch2ms.lsp")

MAX_FRAME = 64 * 1024 * 1024  # bytes of one message body; a document of this size is not source code
MAX_HEADER = 8192  # bytes of a frame's header block
AUTH_TIMEOUT_S = 30.0  # for the first message of a TCP connection
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
UNAUTHORIZED = -32001  # server-defined JSON-RPC error code

_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*(\d{1,12})", re.IGNORECASE)
_HEADER_START = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')


class FrameError(Exception):
    """The stream cannot go on (a frame too large to read)."""


@dataclass(frozen=True)
class BadFrame:
    """A frame that could not be read as one message: what to tell the client."""

    ident: int | str | None  # the request id, where the broken bytes show one
    reason: str


class Frames:
    """Message bodies out of a byte stream fed in pieces."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._resyncing = False  # skipping what is left of a bad frame: no second error for it

    def feed(self, data: bytes) -> None:
        self._buf += data

    def next(self) -> bytes | BadFrame | None:
        """The next message body, an error about bytes that were skipped, or None until more bytes come."""
        buf = self._buf
        while True:
            start = _HEADER_START.search(buf)
            if start is None:
                keep = len("content-length:") - 1  # the start of a header may be cut at the end
                junk = bytes(buf[:-keep]) if len(buf) > keep else b""
                if junk:
                    del buf[:len(junk)]
                    if junk.strip() and not self._resyncing:
                        self._resyncing = True
                        return BadFrame(_read_id(junk), "bytes outside a frame (no Content-Length header)")
                return None
            if start.start():
                junk = bytes(buf[:start.start()])
                del buf[:start.start()]
                if junk.strip() and not self._resyncing:
                    return BadFrame(_read_id(junk), "bytes outside a frame (no Content-Length header)")
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                if len(buf) > MAX_HEADER:
                    del buf[:1]  # not a header after all: look for the next one
                    continue
                return None
            length = None
            for line in bytes(buf[:end]).split(b"\r\n"):
                match = _LENGTH.fullmatch(line.strip())
                if match is not None:
                    length = int(match.group(1))
            if length is None:
                del buf[:1]
                if not self._resyncing:
                    self._resyncing = True
                    return BadFrame(None, "a frame header without a valid Content-Length")
                continue
            if length > MAX_FRAME:
                raise FrameError(f"a frame of {length} bytes (the limit is {MAX_FRAME})")
            body_at = end + 4
            if len(buf) < body_at + length:
                return None
            body = bytes(buf[body_at:body_at + length])
            del buf[:body_at + length]
            self._resyncing = False
            return body

    def bad_body(self, body: bytes) -> BadFrame:
        """`body` (just returned by `next`) is not one JSON message: the frame's length was wrong.

        Too long: the body is a whole message and then the start of the next frame, which goes back
        into the stream. Too short: the rest of this message is skipped until the next header."""
        text = body.decode("utf-8", "surrogateescape")
        start = len(text) - len(text.lstrip())
        try:
            _value, end = json.JSONDecoder().raw_decode(text, start)
        except ValueError:
            self._resyncing = True
            return BadFrame(_read_id(body), f"the frame's message is not valid JSON (Content-Length {len(body)} "
                                            "may be too short)")
        cut = len(text[:end].encode("utf-8", "surrogateescape"))
        self._buf[0:0] = body[cut:]
        return BadFrame(_read_id(body[:cut]), f"the frame's Content-Length ({len(body)}) runs past its message "
                                              f"({cut} bytes)")


def _read_id(data: bytes) -> int | str | None:
    match = _ID.search(data)
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if isinstance(value, (int, str)) else None


def error_response(ident: int | str | None, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}


class MessageSink(Protocol):
    """What of pygls' protocol the loop uses."""

    def structure_message(self, data: dict[str, Any]) -> Any: ...

    def handle_message(self, message: Any) -> None: ...

    def _send_data(self, data: Any) -> None: ...


def decode(body: bytes, protocol: MessageSink) -> Any:
    """The message in `body`, structured by pygls; ValueError where it is not one JSON value."""
    text = body.decode("utf-8")  # UnicodeDecodeError is a ValueError
    return json.loads(text, object_hook=protocol.structure_message)


async def serve_stream(read: Callable[[], Awaitable[bytes]], protocol: MessageSink, stop: threading.Event,
                       on_error: Callable[[Exception], None], frames: Frames | None = None) -> None:
    """Read frames until the stream ends or `stop` is set; each message goes to the protocol."""
    frames = frames or Frames()
    while not stop.is_set():
        item = frames.next()
        if item is None:
            data = await read()
            if not data:
                return
            frames.feed(data)
            continue
        if isinstance(item, BadFrame):
            _tell(protocol, item)
            continue
        try:
            message = decode(item, protocol)
        except ValueError:
            _tell(protocol, frames.bad_body(item))
            continue
        except Exception as exc:  # noqa: BLE001 - pygls' own structuring failed (it answered where it could)
            on_error(exc)
            continue
        try:
            protocol.handle_message(message)
        except (SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - one message never ends the session
            on_error(exc)


def _tell(protocol: MessageSink, bad: BadFrame) -> None:
    log.warning("malformed frame: %s", bad.reason)
    protocol._send_data(error_response(bad.ident, PARSE_ERROR, f"torch2ms: malformed frame: {bad.reason}"))


# ---------------------------------------------------------------- TCP


class TcpError(Exception):
    """A TCP setting that cannot be served (printed as one line, exit 2)."""


def check_host(host: str, allow_remote: bool) -> None:
    """Loopback only, unless `allow_remote`: a name is resolved and every address it gives must be loopback."""
    if allow_remote:
        return
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise TcpError(f"cannot resolve {host!r}: {exc.strerror or exc}") from None
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if not address.is_loopback:
            raise TcpError(f"{host} ({address}) is not a loopback address: the server runs verify for its client, "
                           "so it listens on 127.0.0.1 or ::1 only (--allow-remote lifts this)")


def new_token() -> str:
    return secrets.token_urlsafe(32)


def token_matches(given: Any, token: str) -> bool:
    return isinstance(given, str) and hmac.compare_digest(given.encode("utf-8", "replace"), token.encode())


def initialize_token(message: Any) -> tuple[bool, Any, str]:
    """Of a raw first message: (is an initialize request, its id, its token or '')."""
    if not isinstance(message, dict):
        return False, None, ""
    ident = message.get("id")
    if message.get("method") != "initialize" or not isinstance(ident, (int, str)):
        return False, ident if isinstance(ident, (int, str)) else None, ""
    params = message.get("params")
    options = params.get("initializationOptions") if isinstance(params, dict) else None
    token = options.get("token") if isinstance(options, dict) else None
    return True, ident, token if isinstance(token, str) else ""


class TcpServer:
    """One authenticated client at a time; the server ends when that client's session ends."""

    def __init__(self, protocol: Any, token: str, stop: threading.Event,
                 on_error: Callable[[Exception], None]) -> None:
        self.protocol = protocol
        self.token = token
        self.stop = stop
        self.on_error = on_error
        self.busy = False
        self.done: asyncio.Future[None] | None = None
        self.refused = 0  # connections turned away (for tests and the log)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.busy:
            self.refused += 1
            await _reject(writer, None, INVALID_REQUEST, "another client is connected to this server")
            return
        self.busy = True
        authenticated = False
        try:
            frames = Frames()
            first = await asyncio.wait_for(_first_message(reader, frames), AUTH_TIMEOUT_S)
            if first is None:
                return
            is_init, ident, given = initialize_token(first[0])
            if not is_init or not token_matches(given, self.token):
                self.refused += 1
                reason = ("the first message must be initialize" if not is_init else
                          "initializationOptions.token is missing or wrong")
                await _reject(writer, ident, UNAUTHORIZED, f"torch2ms lsp: not authorised: {reason}")
                return
            authenticated = True
            self.protocol.set_writer(writer)
            frames.feed(first[1])  # the initialize frame again, now for pygls; then the rest of the stream
            await serve_stream(lambda: reader.read(65536), self.protocol, self.stop, self.on_error, frames)
        except (asyncio.TimeoutError, FrameError, ConnectionError) as exc:
            log.warning("TCP client dropped: %s", exc or type(exc).__name__)
        finally:
            if authenticated:
                if self.done is not None and not self.done.done():
                    self.done.set_result(None)
            else:
                self.busy = False
            if not writer.is_closing():
                writer.close()


async def _first_message(reader: asyncio.StreamReader, frames: Frames) -> tuple[Any, bytes] | None:
    """The first message of a connection, as raw JSON, and its frame's bytes; None if the stream ends."""
    while True:
        item = frames.next()
        if item is None:
            data = await reader.read(65536)
            if not data:
                return None
            frames.feed(data)
            continue
        if isinstance(item, BadFrame):
            return None
        try:
            message = json.loads(item.decode("utf-8"))
        except ValueError:
            return ({}, b"")
        return message, b"Content-Length: %d\r\n\r\n" % len(item) + item


async def _reject(writer: asyncio.StreamWriter, ident: Any, code: int, message: str) -> None:
    body = json.dumps(error_response(ident, code, message)).encode()
    try:
        writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await asyncio.wait_for(writer.drain(), 5)
    except (OSError, asyncio.TimeoutError):
        pass
    writer.close()


def serve_tcp(protocol: Any, host: str, port: int, token: str, stop: threading.Event,
              on_error: Callable[[Exception], None], announce: Callable[[str, int], None]) -> None:
    """Listen on host:port until the authenticated client's session ends (or `stop`)."""

    async def main() -> None:
        tcp = TcpServer(protocol, token, stop, on_error)
        tcp.done = asyncio.get_running_loop().create_future()
        server = await asyncio.start_server(tcp.handle, host, port)
        bound = server.sockets[0].getsockname()
        announce(str(bound[0]), int(bound[1]))
        async with server:
            await tcp.done

    asyncio.run(main())
