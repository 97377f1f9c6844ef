"""Language-server soak: thousands of edits, opens/closes, cancellations and malformed messages.

    python -m fuzz.soak_lsp --edits 50000 --documents 8 --seed 1

prints what it sent, what came back and the server's memory after warm-up and at
the end. It fails (exit 1) when a valid request got no answer, a document's last
publication is not for its final version or differs from a fresh scan of the final
text, or the server died. tests/test_soak_lsp.py runs a bounded version of the same
function.

Memory: the server runs under tracemalloc (``--no-trace`` turns it off) with one
extra request, ``torch2ms/_soakMemory``, that only this soak's server has. After the
warm-up every document is opened and set to a known text; at the end, after the
checks, every document is set back to that text, so the two measurements see the
same documents and any difference is what the edits left behind. The soak prints
resident memory (VmRSS), the Python memory tracemalloc counts (bytes and live
blocks, also per 1,000 edits), pygls' table of pending futures and the allocation
sites that grew most. (Issue #9: pygls 2.1 kept a future per didChange for ever,
about 2 KB an edit; the server's protocol class now drops them.)
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fuzz import mutate
from fuzz.lsp_client import RawClient, utf16_position

CANCELLED = -32800
MEMORY_METHOD = "torch2ms/_soakMemory"
ROOT = Path(__file__).resolve().parent.parent
_FRAGMENTS = ("torch.zeros(3)", "F.relu(x)", "x.view(-1)", "\n", "    ", "(", ")", ":", "import torch\n", "é",
              "\U0001f600", "'", "nn.Module", "torch.nonzero(y)", "#", "\r\n", "def f(x):\n    ", "", "]")


@dataclass
class Doc:
    uri: str
    path: str
    text: str
    version: int = 1
    open: bool = True


@dataclass
class SoakReport:
    edits: int = 0
    incremental: int = 0
    full: int = 0
    opens: int = 0
    closes: int = 0
    requests: int = 0
    cancelled: int = 0
    cancelled_answers: int = 0
    malformed: int = 0
    error_answers: int = 0
    publications: int = 0
    rss_warm_kb: int = 0
    rss_end_kb: int = 0
    measured_edits: int = 0  # edits between the two memory measurements
    traced: bool = False
    traced_warm: int = 0  # bytes of Python memory tracemalloc counts in the server
    traced_end: int = 0
    blocks_warm: int = 0  # live memory blocks tracemalloc counts
    blocks_end: int = 0
    pending_warm: int = 0  # pygls' _request_futures entries
    pending_end: int = 0
    top_growth: list[str] = field(default_factory=list)
    type_growth: list[tuple[str, int]] = field(default_factory=list)
    seconds: float = 0.0
    server_exit: int | None = None
    problems: list[str] = field(default_factory=list)

    def per_1000(self, amount: float) -> float:
        return amount * 1000 / max(1, self.measured_edits)

    @property
    def traced_growth_per_1000(self) -> float:
        """Bytes of Python memory the server kept per 1,000 edits after the warm-up."""
        return self.per_1000(self.traced_end - self.traced_warm)

    @property
    def blocks_growth_per_1000(self) -> float:
        return self.per_1000(self.blocks_end - self.blocks_warm)

    def memory_lines(self) -> list[str]:
        growth = self.rss_end_kb - self.rss_warm_kb
        lines = [f"server RSS: {self.rss_warm_kb / 1024:.1f} MiB after warm-up, {self.rss_end_kb / 1024:.1f} MiB "
                 f"at the end ({growth / 1024:+.1f} MiB over {self.measured_edits} edits, "
                 f"{self.per_1000(growth):+.0f} KiB per 1,000 edits)"]
        if not self.traced:
            return lines
        lines.append(
            f"server Python memory (tracemalloc): {self.traced_warm / 2**20:.2f} MiB in {self.blocks_warm} blocks "
            f"after warm-up, {self.traced_end / 2**20:.2f} MiB in {self.blocks_end} blocks at the end "
            f"({(self.traced_end - self.traced_warm) / 1024:+.0f} KiB, {self.blocks_end - self.blocks_warm:+d} blocks; "
            f"per 1,000 edits {self.traced_growth_per_1000 / 1024:+.1f} KiB, {self.blocks_growth_per_1000:+.0f} blocks)")
        lines.append(f"pygls pending futures: {self.pending_warm} after warm-up, {self.pending_end} at the end")
        if self.top_growth:
            lines.append("allocation sites that grew most (warm-up -> end):")
            lines += [f"  {site}" for site in self.top_growth]
        if self.type_growth:
            lines.append("object counts that grew most: " + ", ".join(f"{name} {n:+d}" for name, n in self.type_growth))
        return lines

    def lines(self) -> list[str]:
        return [
            f"edits sent: {self.edits} ({self.incremental} incremental, {self.full} full), "
            f"opens: {self.opens}, closes: {self.closes}",
            f"requests: {self.requests} (cancelled: {self.cancelled}, answered as cancelled: {self.cancelled_answers}, "
            f"error answers: {self.error_answers}), malformed messages: {self.malformed}",
            f"publications received: {self.publications}",
            *self.memory_lines(),
            f"time: {self.seconds:.1f} s; server exit code: {self.server_exit}",
            f"problems: {len(self.problems)}",
        ] + [f"  {p}" for p in self.problems[:50]]


def _seed_texts(rng: random.Random) -> list[str]:
    texts = [mutate.read_text(p) for p in mutate.example_files()]
    texts = [t for t in texts if "torch" in t] or [mutate.HEADER + "x = torch.zeros(3)\n"]
    texts.append(mutate.HEADER + "def f(x:\n    return torch.nonzero(x)\n")  # starts broken
    texts.append(mutate.huge_file(texts[0], 600))
    rng.shuffle(texts)
    return texts


def _edit(doc: Doc, rng: random.Random) -> dict[str, Any]:
    """A random incremental change of doc.text; updates doc.text; returns the content change."""
    text = doc.text
    a = rng.randrange(len(text) + 1)
    b = min(len(text), a + rng.choice((0, 0, 1, 2, 5, 20)))
    # Never split a \r\n pair or a surrogate-free code point: positions inside them are not valid LSP positions.
    if 0 < a < len(text) and text[a - 1] == "\r" and text[a] == "\n":
        a -= 1
    if 0 < b < len(text) and text[b - 1] == "\r" and text[b] == "\n":
        b += 1
    b = max(a, b)
    new = rng.choice(_FRAGMENTS)
    change = {"range": {"start": utf16_position(text, a), "end": utf16_position(text, b)}, "text": new}
    doc.text = text[:a] + new + text[b:]
    return change


_MALFORMED = (
    b"{not json",
    b"[]",
    b"42",
    b'{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": 5}}',
    b'{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": null}',
    b'{"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 987654321}}',
    b'{"jsonrpc": "2.0", "id": 987654320, "result": {"unexpected": true}}',
    b'{"jsonrpc": "2.0", "method": "torch2ms/unknownNotification", "params": {}}',
    b'{"id": "no-jsonrpc-field", "method": "torch2ms/nothing"}',
    "{\"jsonrpc\": \"2.0\", \"method\": \"window/logMessage\", \"params\": {\"message\": \"\u00e9\\ud800\"}}".encode(),
)



def run_soak(edits: int = 2000, documents: int = 4, seed: int = 0, debounce_ms: int = 5,
             workdir: str | None = None, settle_s: float = 60.0,
             traced: bool = True, frames: int = 6) -> SoakReport:
    """Drive one server through the scripted session; the report lists every broken promise.

    Full-text changes keep the form feeds, U+2028 and other characters that str.splitlines()
    (but not LSP) breaks lines at. `traced`: run the server under tracemalloc (keeping `frames`
    frames per allocation) and report its memory figures (see the module's doc)."""
    from torch2ms.config import Config
    from torch2ms.engine import scan_source
    from torch2ms.lsp import convert

    rng = random.Random(seed)
    report = SoakReport()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="torch2ms-soak-") as tmp:
        root = Path(workdir or tmp)
        client = RawClient(command=traced_server_command(frames) if traced else None, cwd=str(root))
        report.traced = traced
        expect: dict[int, str] = {}  # request id -> "ok" | "error" | "cancel-ok"
        methods: dict[int, str] = {}
        try:
            client.initialize(root.as_uri(), {"debounce": debounce_ms})
            texts = _seed_texts(rng)
            docs: list[Doc] = []
            for i in range(documents):
                path = root / f"doc{i}.py"
                docs.append(Doc(uri=path.as_uri(), path=str(path), text=texts[i % len(texts)]))
            junk = Doc(uri=(root / "junk.py").as_uri(), path=str(root / "junk.py"), text="import torch\n")

            def open_doc(doc: Doc) -> None:
                client.notify("textDocument/didOpen", {"textDocument": {
                    "uri": doc.uri, "languageId": "python", "version": doc.version, "text": doc.text}})
                doc.open = True
                report.opens += 1

            for doc in docs + [junk]:
                open_doc(doc)

            def request(method: str, params: Any, kind: str = "ok") -> int:
                ident = client.request(method, params)
                expect[ident] = kind
                methods[ident] = method
                report.requests += 1
                return ident

            def known_state() -> None:
                """Every document open, the junk document back to its text, all analysed."""
                for doc in docs:
                    if not doc.open:
                        open_doc(doc)
                junk.version += 1
                client.notify("textDocument/didChange", {"textDocument": {"uri": junk.uri, "version": junk.version},
                                                         "contentChanges": [{"text": junk.text}]})
                _settle(client, docs + [junk], settle_s)

            warm_at = max(1, edits // 10)
            warm_texts: dict[str, str] = {}
            for step in range(edits):
                if step == warm_at:
                    known_state()
                    warm_texts = {doc.uri: doc.text for doc in docs}
                    if traced:
                        _take_memory(client, report, "warm")
                    else:
                        report.rss_warm_kb = client.rss_kb()
                doc = rng.choice([d for d in docs if d.open] or docs)
                if not doc.open:
                    open_doc(doc)
                doc.version += 1
                if rng.random() < 0.9:
                    change = _edit(doc, rng)
                    report.incremental += 1
                else:
                    doc.text = mutate.mutate_text(rng.choice(texts), rng)  # form feeds, U+2028 ... included
                    change = {"text": doc.text}
                    report.full += 1
                client.notify("textDocument/didChange", {
                    "textDocument": {"uri": doc.uri, "version": doc.version}, "contentChanges": [change]})
                report.edits += 1
                roll = rng.random()
                if roll < 0.04:
                    pos = utf16_position(doc.text, rng.randrange(len(doc.text) + 1))
                    ident = request("textDocument/hover", {"textDocument": {"uri": doc.uri}, "position": pos})
                    if rng.random() < 0.5:
                        client.notify("$/cancelRequest", {"id": ident})
                        expect[ident] = "cancel-ok"
                        report.cancelled += 1
                elif roll < 0.07:
                    a = utf16_position(doc.text, 0)
                    b = utf16_position(doc.text, len(doc.text))
                    ident = request("textDocument/codeAction", {
                        "textDocument": {"uri": doc.uri}, "range": {"start": a, "end": b},
                        "context": {"diagnostics": []}})
                    if rng.random() < 0.3:
                        client.notify("$/cancelRequest", {"id": ident})
                        expect[ident] = "cancel-ok"
                        report.cancelled += 1
                elif roll < 0.08:
                    client.notify("textDocument/didClose", {"textDocument": {"uri": doc.uri}})
                    doc.open = False
                    doc.version = 0
                    report.closes += 1
                elif roll < 0.09:
                    report.malformed += 1
                    kind = rng.randrange(4)
                    if kind == 0:
                        client.send_body(rng.choice(_MALFORMED))
                    elif kind == 1:
                        request("torch2ms/noSuchMethod", {}, "error")
                    elif kind == 2:
                        request("textDocument/hover", {"textDocument": 5, "position": "here"}, "error")
                    else:  # an out-of-range edit of a document nobody checks
                        junk.version += 1
                        client.notify("textDocument/didChange", {
                            "textDocument": {"uri": junk.uri, "version": junk.version},
                            "contentChanges": [{"range": {"start": {"line": 10**6, "character": 5},
                                                          "end": {"line": 3, "character": 0}}, "text": "x"}]})
            for doc in docs:
                if not doc.open:
                    doc.version = 1
                    open_doc(doc)
            _settle(client, docs, settle_s)
            for ident, wanted in expect.items():
                try:
                    answer = client.response(ident, timeout=max(5.0, settle_s / 4))
                except TimeoutError as exc:
                    report.problems.append(f"{methods[ident]} ({wanted}): {exc}")
                    continue
                error = answer.get("error")
                if error is not None:
                    report.error_answers += 1
                    if error.get("code") == CANCELLED:
                        report.cancelled_answers += 1
                    if wanted == "ok" or (wanted == "cancel-ok" and error.get("code") != CANCELLED):
                        report.problems.append(f"request {ident} failed: {error}")
                elif wanted == "error":
                    report.problems.append(f"request {ident} with invalid params/method got a result, not an error")
            if client.duplicate_responses:
                report.problems.append(f"requests answered twice: {client.duplicate_responses[:10]}")
            for doc in docs:
                last = client.last_published(doc.uri)
                if last is None or last[0] != doc.version:
                    report.problems.append(f"{doc.uri}: last publication is for version "
                                           f"{last[0] if last else None}, the document is at {doc.version}")
                    continue
                expected = convert.to_lsp_all(scan_source(doc.text, doc.path, Config()).diagnostics,
                                              convert.Lines(doc.text))
                got = sorted((d["code"], d["message"], d["range"]["start"]["line"], d["range"]["start"]["character"],
                              d["range"]["end"]["line"], d["range"]["end"]["character"]) for d in last[1])
                want = sorted((d.code, d.message, d.range.start.line, d.range.start.character, d.range.end.line,
                               d.range.end.character) for d in expected)
                if got != want:
                    report.problems.append(f"{doc.uri}: the published diagnostics differ from a scan of the final "
                                           f"text ({len(got)} vs {len(want)}); the server's copy of the text "
                                           f"diverged or the publication is stale")
            # Back to the texts of the warm-up measurement: what is left is what the edits kept.
            for doc in docs:
                if warm_texts and doc.text != warm_texts[doc.uri]:
                    doc.version += 1
                    doc.text = warm_texts[doc.uri]
                    client.notify("textDocument/didChange", {"textDocument": {"uri": doc.uri, "version": doc.version},
                                                             "contentChanges": [{"text": doc.text}]})
            known_state()
            report.measured_edits = edits - warm_at if edits > warm_at else 0
            if traced:
                _take_memory(client, report, "end")
            else:
                report.rss_end_kb = client.rss_kb()
            report.publications = sum(len(v) for v in client.published.values())
        except (TimeoutError, BrokenPipeError, OSError) as exc:
            report.problems.append(f"the session broke: {type(exc).__name__}: {exc} "
                                   f"(server exit code {client.proc.poll()})")
        finally:
            report.server_exit = client.shutdown()
            report.seconds = time.monotonic() - started
        if report.server_exit != 0:
            report.problems.append(f"the server exited with {report.server_exit} after shutdown/exit")
    return report


PENDING_WAIT_S = 30.0  # how long a future still in flight may take to finish before the count is taken


def _take_memory(client: RawClient, report: SoakReport, mode: str) -> None:
    # A future of a request still being answered (a cancellation that has not run its clean-up yet on a loaded
    # machine) is not one the server keeps: wait for those, so the count is of what stays.
    deadline = time.monotonic() + PENDING_WAIT_S
    while client.call(MEMORY_METHOD, {"mode": "pending"}, timeout=300).get("result", {}).get("pending", 0) \
            and time.monotonic() < deadline:
        time.sleep(0.5)
    answer = client.call(MEMORY_METHOD, {"mode": mode}, timeout=300)
    if "error" in answer:
        raise RuntimeError(f"{MEMORY_METHOD} failed: {answer['error']}")
    figures = answer["result"]
    if mode == "warm":
        report.rss_warm_kb, report.traced_warm = figures["rss_kb"], figures["traced"]
        report.blocks_warm, report.pending_warm = figures["blocks"], figures["pending"]
    else:
        report.rss_end_kb, report.traced_end = figures["rss_kb"], figures["traced"]
        report.blocks_end, report.pending_end = figures["blocks"], figures["pending"]
        report.top_growth = list(figures.get("top", []))
        report.type_growth = [(name, n) for name, n in figures.get("types", [])]


def _settle(client: RawClient, docs: list[Doc], timeout: float) -> None:
    """Wait until every open document's last publication is for its current version."""
    def done() -> bool:
        for doc in docs:
            if not doc.open:
                continue
            items = client.published.get(doc.uri)
            if not items or items[-1][0] != doc.version:
                return False
        return True

    client.wait_for(done, timeout)


# ---------------------------------------------------------------- the traced server
def serve_traced(frames: int = 6) -> None:
    """`torch2ms lsp` on stdio under tracemalloc, with MEMORY_METHOD added (for the soak only).

    MEMORY_METHOD {"mode": "warm"} records a baseline (the snapshot goes to a file, so it
    does not count itself); {"mode": "end"} answers the same figures and what grew since.
    """
    import gc
    import tracemalloc
    from collections import Counter

    tracemalloc.start(frames)
    from torch2ms.lsp.server import create_server

    server = create_server()
    baseline: dict[str, Any] = {}
    ignore = [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, "<unknown>")]

    def type_counts() -> Counter[str]:
        return Counter(type(obj).__name__ for obj in gc.get_objects())

    @server.feature(MEMORY_METHOD)
    def memory(ls: Any, params: Any) -> dict[str, Any]:
        mode = params.get("mode") if isinstance(params, dict) else getattr(params, "mode", None)
        if mode == "pending":
            return {"pending": len(ls.protocol._request_futures)}
        gc.collect()
        figures: dict[str, Any] = {"rss_kb": _rss_kb(os.getpid()), "traced": tracemalloc.get_traced_memory()[0],
                                   "pending": len(ls.protocol._request_futures)}
        snapshot = tracemalloc.take_snapshot().filter_traces(ignore)
        figures["blocks"] = len(snapshot.traces)
        if mode == "warm":
            handle, path = tempfile.mkstemp(prefix="torch2ms-soak-", suffix=".tracemalloc")
            os.close(handle)
            snapshot.dump(path)
            baseline.update(path=path, types=type_counts())
        elif mode == "end" and "path" in baseline:
            before = tracemalloc.Snapshot.load(baseline["path"])
            os.unlink(baseline["path"])
            figures["top"] = [_site(stat) for stat in snapshot.compare_to(before, "traceback")[:8]]
            grown = type_counts() - baseline["types"]
            figures["types"] = [(name, n) for name, n in grown.most_common(8) if n > 20]
        return figures

    server.start_io()


def _site(stat: Any) -> str:
    """One line for a tracemalloc StatisticDiff: size, blocks and the innermost frames."""
    frames = [f"{'/'.join(Path(f.filename).parts[-2:])}:{f.lineno}" for f in reversed(list(stat.traceback))]
    return f"{stat.size_diff / 1024:+.1f} KiB {stat.count_diff:+d} blocks at " + " <- ".join(frames[:4])


def traced_server_command(frames: int = 6) -> list[str]:
    code = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
            f"from fuzz.soak_lsp import serve_traced; serve_traced({int(frames)})")
    return [sys.executable, "-c", code]


def _rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz.soak_lsp", description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=20000)
    parser.add_argument("--documents", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--debounce", type=int, default=5, metavar="MS")
    parser.add_argument("--no-trace", action="store_true",
                        help="run the server without tracemalloc (faster; only RSS is reported)")
    parser.add_argument("--frames", type=int, default=6, help="frames tracemalloc keeps per allocation (default 6)")
    args = parser.parse_args(argv)
    report = run_soak(args.edits, args.documents, args.seed, args.debounce, settle_s=300.0,
                      traced=not args.no_trace, frames=args.frames)
    print("\n".join(report.lines()))
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
