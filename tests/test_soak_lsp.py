"""Language-server soak (bounded): `torch2ms lsp` driven by a raw JSON-RPC client.

The long soak is `python -m fuzz.soak_lsp --edits 50000`; this runs the same
session with a bounded count. The client (fuzz.lsp_client.RawClient) can send what
a well-behaved library never would: bad JSON, wrong params, unknown methods,
cancellations, out-of-range edits.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

pytest.importorskip("pygls", reason="the language server needs the lsp extra")

from fuzz.lsp_client import RawClient, utf16_position  # noqa: E402
from fuzz.soak_lsp import run_soak  # noqa: E402
from torch2ms.engine import scan_source  # noqa: E402

pytestmark = [pytest.mark.e2e]  # the language server as a process, for a long session

SOAK_EDITS = 1500
RSS_GROWTH_LIMIT_MIB = 20.0


def test_soak_edits_cancellations_and_malformed_messages(tmp_path: Path) -> None:
    # untraced: tracemalloc's own tables would count in the resident memory
    report = run_soak(edits=SOAK_EDITS, documents=3, seed=0, debounce_ms=2, workdir=str(tmp_path), settle_s=90.0,
                      traced=False)
    print("\n" + "\n".join(report.lines()))  # the figures, with -s
    assert not report.problems, "\n".join(report.lines())
    assert report.edits == SOAK_EDITS and report.incremental > SOAK_EDITS // 2
    assert report.cancelled > 10 and report.malformed > 5 and report.closes > 5
    assert report.server_exit == 0
    growth_mib = (report.rss_end_kb - report.rss_warm_kb) / 1024
    assert report.rss_warm_kb > 0 and growth_mib < RSS_GROWTH_LIMIT_MIB, report.lines()


def test_soak_keeps_no_future_per_edit(tmp_path: Path) -> None:
    """pygls 2.1 kept a future for every didChange (issue #9); the server drops them once done."""
    report = run_soak(edits=600, documents=3, seed=1, debounce_ms=2, workdir=str(tmp_path), settle_s=90.0,
                      traced=True, frames=1)
    print("\n" + "\n".join(report.lines()))
    assert not report.problems, "\n".join(report.lines())
    assert report.traced and report.measured_edits > 400
    assert report.pending_warm == 0 and report.pending_end == 0, report.lines()


def _session(tmp_path: Path) -> RawClient:
    client = RawClient(cwd=str(tmp_path))
    client.initialize(tmp_path.as_uri(), {"debounce": 0})
    return client


def _open(client: RawClient, uri: str, text: str, version: int = 1) -> None:
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                            "version": version, "text": text}})


def _published(client: RawClient, uri: str, version: int) -> list[dict]:  # type: ignore[type-arg]
    assert client.wait_for(lambda: bool(client.published.get(uri)) and client.published[uri][-1][0] == version, 60), \
        f"no publication for version {version} of {uri}: {client.published.get(uri, [])[-1:]}"
    return client.published[uri][-1][1]


def test_every_bad_message_leaves_the_server_answering(tmp_path: Path) -> None:
    client = _session(tmp_path)
    try:
        uri = (tmp_path / "a.py").as_uri()
        first = "import torch\nx = torch.nonzero(y)\n"
        _open(client, uri, first)
        assert [d["code"] for d in _published(client, uri, 1)] == [d.code for d in scan_source(first, "a.py").diagnostics]
        bodies = [b"{not json", b"[]", b"null", b'"text"', b"{}", b'{"jsonrpc": "2.0"}',
                  b'{"jsonrpc": "2.0", "method": 5}', b'{"jsonrpc": "2.0", "id": [1], "method": "torch2ms/listId"}',
                  b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "textDocument/hover", "params": {}}',
                  b'{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {}}}',
                  b'{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": 1}}}',
                  b'{"jsonrpc": "2.0", "method": "textDocument/didClose", "params": []}',
                  b'{"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "nope"}}',
                  b'{"jsonrpc": "2.0", "id": 424242, "result": null}', "\u00e9\u20ac\U0001f600".encode()]
        for body in bodies:
            client.send_body(body)
        unknown = client.call("torch2ms/noSuchRequest", {"x": 1})
        assert unknown["error"]["code"] == -32601, unknown
        bad = client.call("textDocument/hover", {"textDocument": 5, "position": None})
        assert "error" in bad, bad
        closed = client.call("textDocument/hover", {"textDocument": {"uri": (tmp_path / "never.py").as_uri()},
                                                    "position": {"line": 0, "character": 0}})
        assert closed.get("result") is None and "error" not in closed, closed
        far = client.call("textDocument/hover", {"textDocument": {"uri": uri},
                                                 "position": {"line": 10**6, "character": 10**6}})
        assert "error" not in far, far
        # Still analysing, for the right version.
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                                 "contentChanges": [{"text": "import torch\nx = torch.zeros(1)\n"}]})
        assert [d["code"] for d in _published(client, uri, 2)] == ["TMS101"]
        hover = client.call("textDocument/hover", {"textDocument": {"uri": uri},
                                                   "position": {"line": 1, "character": 8}})
        assert "torch.zeros" in json.dumps(hover["result"]), hover
    finally:
        assert client.shutdown() == 0


def test_cancelled_requests_are_answered(tmp_path: Path) -> None:
    client = _session(tmp_path)
    try:
        uri = (tmp_path / "big.py").as_uri()
        text = "import torch\n" + "".join(f"x{i} = torch.nonzero(torch.zeros({i}))\n" for i in range(300))
        _open(client, uri, text)
        ids = []
        for i in range(15):
            client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": i + 2},
                                                     "contentChanges": [{"text": text + f"y = {i}\n"}]})
            ident = client.request("textDocument/codeAction", {
                "textDocument": {"uri": uri},
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 300, "character": 0}},
                "context": {"diagnostics": [], "only": ["source.fixAll.torch2ms"]}})
            client.notify("$/cancelRequest", {"id": ident})
            ids.append(ident)
        for ident in ids:
            answer = client.response(ident, timeout=120)
            assert "result" in answer or answer["error"]["code"] == -32800, answer
        final = text + "y = 14\n"
        assert len(_published(client, uri, 16)) == len(scan_source(final, "big.py").diagnostics) > 300
        assert not client.duplicate_responses
    finally:
        assert client.shutdown() == 0


def test_incremental_edit_below_an_odd_line_separator(tmp_path: Path) -> None:
    # A form feed (PEP 8 allows ^L between sections) or U+2028 in a comment is not a line break for LSP
    # or Python; an edit below it must land where the client put it.
    client = _session(tmp_path)
    try:
        wrong = []
        for name, odd in (("ff.py", "\x0c"), ("ls.py", "\u2028")):
            uri = (tmp_path / name).as_uri()
            text = f"import torch\n# page {odd} break\nx = 1\n"
            _open(client, uri, text)
            _published(client, uri, 1)
            offset = text.index("x = 1")
            insert = "y = torch.zeros(1)\n"
            at = utf16_position(text, offset)
            client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
                {"range": {"start": at, "end": at}, "text": insert}]})
            new_text = text[:offset] + insert + text[offset:]
            (expected,) = scan_source(new_text, name).diagnostics
            (got,) = _published(client, uri, 2)
            want = {"line": expected.span.start_line - 1, "character": expected.span.start_col}
            if got["range"]["start"] != want:
                wrong.append(f"{odd!r}: published at {got['range']['start']}, the edit put it at {want}")
        assert not wrong, wrong
    finally:
        client.shutdown()


def test_memory_returns_when_a_large_document_is_closed(tmp_path: Path) -> None:
    """The analysis of a large file takes hundreds of MB; closing the file gives them back to the system."""
    client = _session(tmp_path)
    try:
        small = (tmp_path / "small.py").as_uri()
        _open(client, small, "import torch\nx = torch.zeros(1)\n")
        _published(client, small, 1)
        client.notify("textDocument/didClose", {"textDocument": {"uri": small}})
        time.sleep(1.0)
        base = client.rss_kb()
        line = "y = torch.nn.functional.softmax(x, dim=0) + torch.abs(x)\n"
        big = (tmp_path / "big.py").as_uri()
        _open(client, big, "import torch\nx = torch.zeros(3)\n" + line * (2_000_000 // len(line)))
        assert client.wait_for(lambda: bool(client.published.get(big)), 600)
        grown = client.rss_kb() - base
        client.notify("textDocument/didClose", {"textDocument": {"uri": big}})
        assert client.wait_for(lambda: client.published[big][-1][1] == [], 60)
        time.sleep(2.0)
        kept = client.rss_kb() - base
        assert grown > 150 * 1024 and kept < 40 * 1024, f"grew {grown // 1024} MiB, kept {kept // 1024} MiB"
    finally:
        assert client.shutdown() == 0


def test_a_request_after_shutdown_gets_an_error(tmp_path: Path) -> None:
    client = _session(tmp_path)
    try:
        assert client.call("shutdown", None).get("result") is None
        answer = client.call("textDocument/hover", {"textDocument": {"uri": (tmp_path / "a.py").as_uri()},
                                                    "position": {"line": 0, "character": 0}}, timeout=20)
        assert "error" in answer and answer["error"]["code"] == -32600, answer  # InvalidRequest
        client.notify("exit", None)
        assert client.proc.wait(30) == 0
    finally:
        client.shutdown()
