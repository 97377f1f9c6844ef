"""Run oracle checks in a child process with a time limit per input.

A Python-level alarm cannot interrupt a long call inside C (the parser, a regex), so
the bound is enforced from outside: the parent lets the child spend at most `timeout`
seconds of CPU time on one input, then kills it and starts a new one. CPU time, not
the time on the clock, so that a loaded machine (other processes taking turns on the
cores) does not turn a slow answer into a hang; a child that stops using the CPU
without answering (blocked) is caught by the clock, after `WALL_FACTOR` times as long.
A hang, a crash of the interpreter and a memory blow-up (the child's address space is
capped) each become a problem of that one input; the run goes on.
"""

from __future__ import annotations

import os
import pickle
import select
import struct
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

START_TIMEOUT_S = 120.0  # importing torch2ms and loading the table on a busy machine
WALL_FACTOR = 20  # a child blocked without using the CPU: given up after this many times the CPU limit
POLL_S = 0.25


def cpu_seconds(pid: int) -> float | None:
    """CPU time (user and system) process `pid` has used so far; None where /proc cannot tell."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime (fields 14, 15)


@dataclass
class Outcome:
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    hung: bool = False
    died: bool = False


def _limit_memory(megabytes: int) -> None:
    if megabytes <= 0:
        return
    import resource

    limit = megabytes * 1024 * 1024
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _write_frame(stream: IO[bytes], obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _read_exact(stream: IO[bytes], size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = stream.read(size - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def serve(memory_mb: int) -> None:
    """The child: answer framed (kind, payload, options) with the oracle's problems, until EOF."""
    proto = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints must not corrupt the protocol
    requests = sys.stdin.buffer
    from fuzz import oracle
    from torch2ms.process import configure_process

    configure_process()  # an entry point, as the CLI: the same recursion limit for the analysis
    oracle.shared_table()  # pay for the table before the first timed input
    _limit_memory(memory_mb)
    _write_frame(proto, "ready")
    while True:
        try:
            size = struct.unpack("<Q", _read_exact(requests, 8))[0]
            kind, payload, options = pickle.loads(_read_exact(requests, size))
        except EOFError:
            return
        try:
            problems = oracle.CHECKS[kind](payload, **options)
        except MemoryError:
            problems = ["MemoryError escaped the check (the child's memory cap was hit)"]
        _write_frame(proto, problems)


class Runner:
    """A reusable child process that runs one check at a time, each under `timeout` seconds."""

    def __init__(self, timeout: float = 10.0, memory_mb: int = 3072) -> None:
        self.timeout = timeout
        self.memory_mb = memory_mb
        self._proc: subprocess.Popen[bytes] | None = None
        self._buffer = b""
        self.started = 0

    def _start(self) -> None:
        root = str(Path(__file__).resolve().parent.parent)
        env = dict(os.environ)
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        code = f"from fuzz.runner import serve; serve({int(self.memory_mb)})"
        self._proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, env=env)
        self._buffer = b""
        greeting = self._receive(START_TIMEOUT_S)
        if greeting != "ready":
            self._stop()
            raise RuntimeError(f"the fuzz worker did not start within {START_TIMEOUT_S:g} s ({greeting!r})")
        self.started += 1

    def _receive(self, timeout: float, cpu_timeout: float | None = None) -> Any:
        """One frame from the child; None after `timeout` seconds on the clock or `cpu_timeout`
        seconds of the child's CPU time; EOFError when it died."""
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        spent = cpu_seconds(self._proc.pid)
        cpu_deadline = None if cpu_timeout is None or spent is None else spent + cpu_timeout
        while True:
            if len(self._buffer) >= 8:
                size = struct.unpack("<Q", self._buffer[:8])[0]
                if len(self._buffer) >= 8 + size:
                    data, self._buffer = self._buffer[8:8 + size], self._buffer[8 + size:]
                    return pickle.loads(data)
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if cpu_deadline is not None:
                spent = cpu_seconds(self._proc.pid)
                if spent is not None and spent >= cpu_deadline:
                    return None
                left = min(left, POLL_S)
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise EOFError
                self._buffer += chunk

    def _stop(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            for stream in (self._proc.stdin, self._proc.stdout):
                if stream is not None:
                    stream.close()
        self._proc = None

    def check(self, kind: str, payload: Any, timeout: float | None = None, **options: Any) -> Outcome:
        """Run one check; a hang or a dead child is a problem of this input, and the child is replaced."""
        if self._proc is None or self._proc.poll() is not None:
            self._stop()
            self._start()
        assert self._proc is not None and self._proc.stdin is not None
        start = time.monotonic()
        try:
            _write_frame(self._proc.stdin, (kind, payload, options))
            limit = self.timeout if timeout is None else timeout
            measured = cpu_seconds(self._proc.pid) is not None
            problems = self._receive(limit * WALL_FACTOR, limit) if measured else self._receive(limit)
        except (EOFError, OSError):
            code = self._proc.poll()
            self._stop()
            return Outcome([f"the checking process died (exit code {code})"], time.monotonic() - start, died=True)
        if problems is None:
            self._stop()
            within = f"{limit:g} s of CPU time or {limit * WALL_FACTOR:g} s" if measured else f"{limit:g} s"
            return Outcome([f"hang: no answer within {within}"], time.monotonic() - start, hung=True)
        return Outcome(list(problems), time.monotonic() - start)

    def close(self) -> None:
        self._stop()

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
