"""Run verify jobs in long-lived worker processes, surviving crashes and hangs.

Each worker (`torch2ms.verify.worker`) imports torch and MindSpore once and then
runs one job at a time. A job has a time limit: the worker stops it itself with
SIGALRM; if the worker does not answer within the limit plus a grace period it is
killed. A worker that dies or is killed turns its job into a *failed* result and is
replaced; the run always completes. The worker caps its own address space with
``resource.setrlimit`` (``memory_mb`` above what it uses after importing).
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, IO

from ..process import GROUP_ENV, PARENT_ENV
from ..writing import temporary_folder

GRACE_S = 5.0  # beyond the job's own limit before the worker is killed
MAX_CRASHES = 4  # cases of one job that may crash a worker before the job itself is a crash
START_TIMEOUT_S = 300.0  # importing torch and MindSpore on a busy machine


class VerifyError(Exception):
    """The verify backend cannot run at all (no torch/MindSpore, device not available, ...)."""


@dataclass
class _Worker:
    proc: subprocess.Popen[bytes]
    log: IO[bytes]
    started: float
    buffer: bytes = b""
    ready: bool = False
    info: dict[str, Any] = field(default_factory=dict)
    job: dict[str, Any] | None = None
    deadline: float = 0.0
    progress: dict[str, Any] | None = None  # the case of the job the worker last started

    def lines(self, data: bytes) -> list[str]:
        self.buffer += data
        *done, self.buffer = self.buffer.split(b"\n")
        return [line.decode("utf-8", "replace") for line in done if line.strip()]

    def log_tail(self) -> str:
        try:
            self.log.flush()
            self.log.seek(0, os.SEEK_END)
            size = self.log.tell()
            self.log.seek(max(0, size - 4000))
            text = self.log.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        lines = [line.strip() for line in text.splitlines()
                 if line.strip() and "[WARNING]" not in line and "NumPy" not in line]
        return lines[-1][:200] if lines else ""


def worker_command(device: str, memory_mb: int, module: str = "torch2ms.verify.worker",
                   extra: tuple[str, ...] = ()) -> list[str]:
    return [sys.executable, "-m", module, *extra, "--device", device, "--memory-mb", str(memory_mb)]


def worker_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                "GLOG_v": "3", "PYTHONWARNINGS": "ignore", "PYTHONUNBUFFERED": "1",
                PARENT_ENV: str(os.getpid()),  # the worker ends when this process does,
                GROUP_ENV: "1"})  # with every process it started (it leads its own session: Pool._spawn)
    return env


class Pool:
    """`jobs` workers; `run(specs)` returns one result per spec, in order."""

    def __init__(self, jobs: int = 1, device: str = "cpu", memory_mb: int = 4096, timeout: float = 30.0,
                 start_timeout: float = START_TIMEOUT_S, worker: str = "torch2ms.verify.worker",
                 worker_args: tuple[str, ...] = ()) -> None:
        """`worker`/`worker_args`: another worker module with the same protocol (the model workers)."""
        self.size = max(1, jobs)
        self.worker = worker
        self.worker_args = worker_args
        self.device = device
        self.memory_mb = memory_mb
        self.timeout = timeout
        self.start_timeout = start_timeout
        self.info: dict[str, Any] = {}
        self.restarts = 0
        self._selector = selectors.DefaultSelector()
        self._workers: list[_Worker] = []

    # -------------------------------------------------------------- processes
    def _spawn(self) -> _Worker:
        log = tempfile.TemporaryFile()
        # `python -m` puts the working directory first on sys.path: start in an empty private
        # folder so that a project's torch.py or numpy.py can never shadow the real libraries.
        proc = subprocess.Popen(worker_command(self.device, self.memory_mb, self.worker, self.worker_args),
                                stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=log, env=worker_env(), start_new_session=True,
                                cwd=_empty_dir())
        worker = _Worker(proc=proc, log=log, started=time.monotonic())
        assert proc.stdout is not None
        os.set_blocking(proc.stdout.fileno(), False)
        self._selector.register(proc.stdout, selectors.EVENT_READ, worker)
        self._workers.append(worker)
        return worker

    def _retire(self, worker: _Worker, kill: bool) -> str:
        """Stop a worker; returns how it ended."""
        if worker in self._workers:
            self._workers.remove(worker)
        assert worker.proc.stdout is not None
        try:
            self._selector.unregister(worker.proc.stdout)
        except (KeyError, ValueError):
            pass
        if kill and worker.proc.poll() is None:
            try:
                os.killpg(worker.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                worker.proc.kill()
        try:
            code = worker.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            worker.proc.kill()
            code = worker.proc.wait()
        for stream in (worker.proc.stdin, worker.proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        tail = worker.log_tail()
        worker.log.close()
        if code < 0:
            how = f"killed by signal {signal.Signals(-code).name}" if -code in signal.valid_signals() else f"signal {-code}"
        else:
            how = f"exit code {code}"
        return f"{how}: {tail}" if tail else how

    def close(self) -> None:
        for worker in list(self._workers):
            try:
                if worker.proc.stdin is not None:
                    worker.proc.stdin.close()
            except OSError:
                pass
            self._retire(worker, kill=True)
        self._selector.close()

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -------------------------------------------------------------- running
    def _send(self, worker: _Worker, spec: dict[str, Any]) -> dict[str, Any] | None:
        """Give the worker the job; the job as sent, or None when the worker's pipe is gone."""
        spec = dict(spec)
        spec.setdefault("timeout", self.timeout)
        worker.job = spec
        # One case (with its time limit), or generated cases: the worker starts none after the job's
        # budget is spent, and the last one has its own time limit; then the grace period.
        budget = float(spec.get("budget", 0.0)) if spec.get("rewrite") else 0.0
        worker.deadline = time.monotonic() + budget + float(spec["timeout"]) + GRACE_S
        try:
            assert worker.proc.stdin is not None
            worker.proc.stdin.write((json.dumps(spec) + "\n").encode("utf-8"))
            worker.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return None
        return spec

    def run(self, specs: Iterable[dict[str, Any]],
            on_result: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
        todo = deque(enumerate(specs))
        total = len(todo)
        results: dict[int, dict[str, Any]] = {}
        index_of: dict[int, int] = {}  # id(spec dict sent) -> position
        start_failures = 0

        def finish(position: int, result: dict[str, Any]) -> None:
            results[position] = result
            if on_result is not None:
                on_result(result)

        def failed(worker: _Worker, reason: str, short: str | None = None) -> None:
            """`short`: the reason without the worker's log (which names processes and times), for a
            case that becomes one disagreement and may end up in the record."""
            job = worker.job
            worker.job = None
            if job is None:
                return
            position = index_of.pop(id(job))
            progress = worker.progress
            crashes = list(job.get("crashes") or [])
            if job.get("rewrite") and progress is not None and len(crashes) < MAX_CRASHES:
                # The case that crashed the worker becomes one disagreeing case; the job goes on without it.
                crashes.append({"index": progress.get("progress"), "tags": progress.get("tags"), "how": short or reason})
                todo.appendleft((position, dict(job, crashes=crashes)))
                return
            finish(position, {"id": job.get("id"), "status": "failed", "reason": reason})

        def feed(worker: _Worker) -> None:
            if todo and worker.ready and worker.job is None:
                position, spec = todo.popleft()
                sent = self._send(worker, spec)
                if sent is None:
                    todo.appendleft((position, spec))
                    return
                index_of[id(sent)] = position
                worker.progress = None

        while len(results) < total:
            busy_or_needed = len(self._workers)
            wanted = min(self.size, len(todo) + sum(1 for w in self._workers if w.job is not None))
            for _ in range(max(0, wanted - busy_or_needed)):
                self._spawn()
            now = time.monotonic()
            deadlines = [w.deadline for w in self._workers if w.job is not None]
            deadlines += [w.started + self.start_timeout for w in self._workers if not w.ready]
            wait = max(0.0, min(deadlines) - now) if deadlines else 1.0
            for key, _mask in self._selector.select(timeout=min(wait, 1.0)):
                worker: _Worker = key.data
                try:
                    data = os.read(key.fd, 1 << 16)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:  # the worker died
                    if not worker.ready:
                        start_failures += 1
                        how = self._retire(worker, kill=True)
                        if start_failures >= 3:
                            raise VerifyError(f"the verify worker could not start ({how}); "
                                              "are torch and MindSpore installed in this Python?")
                        continue
                    job = worker.job
                    how = self._retire(worker, kill=True)
                    self.restarts += 1
                    if job is not None:
                        failed(worker, f"the worker crashed ({how})", f"the worker crashed ({how.split(': ', 1)[0]})")
                    continue
                for line in worker.lines(data):
                    try:
                        message = json.loads(line)
                    except json.JSONDecodeError:
                        continue
                    if "progress" in message and worker.ready:
                        worker.progress = message
                        continue
                    if not worker.ready:
                        if not message.get("ready"):
                            self._retire(worker, kill=True)
                            raise VerifyError(f"the verify worker could not start: {message.get('reason')}")
                        worker.ready = True
                        worker.info = message
                        self.info = {k: v for k, v in message.items() if k not in ("ready", "pid")}
                        continue
                    job = worker.job
                    worker.job = None
                    if job is not None:
                        finish(index_of.pop(id(job)), message)
            now = time.monotonic()
            for worker in list(self._workers):
                if worker.job is not None and now > worker.deadline:
                    limit = float(worker.job["timeout"])
                    job = worker.job
                    self._retire(worker, kill=True)
                    self.restarts += 1
                    worker.job = job
                    failed(worker, f"timed out after {limit:g} s (the worker was killed)")
                elif not worker.ready and now > worker.started + self.start_timeout:
                    self._retire(worker, kill=True)
                    raise VerifyError(f"the verify worker did not start within {self.start_timeout:g} s")
            for worker in list(self._workers):
                feed(worker)
        return [results[k] for k in range(total)]


_EMPTY_DIR: tempfile.TemporaryDirectory[str] | None = None


def _empty_dir() -> str:
    """An empty folder owned by this process, removed at exit, to start workers in."""
    global _EMPTY_DIR
    if _EMPTY_DIR is None:
        _EMPTY_DIR = temporary_folder("verify")
    return _EMPTY_DIR.name
