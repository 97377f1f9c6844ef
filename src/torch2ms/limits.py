"""Per-file limits of the analysis (`scan`) and of `migrate`: one hostile file never stalls a whole run.

`Limits(seconds, memory_mb)` applied around the work on one file (`Limits.applied`):

- time: the CPU time this process spends on the file, measured by the kernel (``ITIMER_PROF``,
  delivered as SIGPROF); when it runs out, the work stops with `LimitExceeded`. CPU time, not
  wall time, so a busy machine does not stop a file that would finish, and SIGALRM stays free
  for the caller (tests, the verify workers);
- memory: the address space the process may add while on the file (``RLIMIT_AS``, raised back
  afterwards); beyond it an allocation fails with MemoryError, reported as the limit.

The caller turns `LimitExceeded` into a TMS905 finding that names the file and the limit. The
time limit needs the main thread (signals); elsewhere (the language server's threads) only the
memory limit applies. A limit of 0 turns that limit off.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any

DEFAULT_SECONDS = 120.0
DEFAULT_MEMORY_MB = 2048
CODE = "TMS905"


_memory_limited = threading.local()


def memory_limited() -> bool:
    """Whether a per-file memory limit is in force in this thread: then the analysis lets a MemoryError
    through (it is the limit's finding, TMS905, not a file that cannot be parsed)."""
    return bool(getattr(_memory_limited, "on", False))


class LimitExceeded(BaseException):
    """The work on one file passed a limit (a BaseException: no `except Exception` of the analysis swallows it)."""


def _address_space() -> int | None:
    """This process's current address space in bytes (Linux), else None."""
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            return int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


@dataclass(frozen=True)
class Limits:
    seconds: float = DEFAULT_SECONDS
    memory_mb: int = DEFAULT_MEMORY_MB

    def describe(self, exc: BaseException) -> str:
        if isinstance(exc, MemoryError):
            return (f"stopped at the per-file memory limit of {self.memory_mb:,} MB (--file-memory-mb; "
                    "docs/security.md)")
        return f"stopped at the per-file limit of {self.seconds:g} s of CPU time (--file-timeout; docs/security.md)"

    @contextlib.contextmanager
    def applied(self) -> Iterator[None]:
        """Run the block under the limits; LimitExceeded (time) or MemoryError (memory) when one is passed."""
        with self._memory(), self._time():
            yield

    @contextlib.contextmanager
    def _time(self) -> Iterator[None]:
        if self.seconds <= 0 or threading.current_thread() is not threading.main_thread() \
                or not hasattr(signal, "ITIMER_PROF"):
            yield
            return

        def expired(_signum: int, _frame: FrameType | None) -> None:
            raise LimitExceeded(self.describe(LimitExceeded()))

        previous = signal.signal(signal.SIGPROF, expired)
        signal.setitimer(signal.ITIMER_PROF, self.seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, previous)

    @contextlib.contextmanager
    def _memory(self) -> Iterator[None]:
        current = _address_space() if self.memory_mb > 0 and sys.platform.startswith("linux") else None
        if current is None:
            yield
            return
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        wanted = current + self.memory_mb * (1 << 20)
        if hard != resource.RLIM_INFINITY:
            wanted = min(wanted, hard)
        if soft != resource.RLIM_INFINITY and soft <= wanted:
            yield  # a tighter limit is already in force
            return
        try:
            resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))
        except (ValueError, OSError):
            yield
            return
        _memory_limited.on = True
        try:
            yield
        finally:
            _memory_limited.on = False
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def add_arguments(parser: Any) -> None:
    """--file-timeout and --file-memory-mb (scan, migrate)."""
    add = parser.add_argument
    add("--file-timeout", type=float, default=DEFAULT_SECONDS, metavar="S",
        help=f"stop the work on one file after S seconds of CPU time: a {CODE} finding names it "
             f"(default {DEFAULT_SECONDS:g}; 0: no limit)")
    add("--file-memory-mb", type=int, default=DEFAULT_MEMORY_MB, metavar="MB",
        help=f"stop the work on one file when it needs more than MB megabytes: a {CODE} finding names it "
             f"(default {DEFAULT_MEMORY_MB}; 0: no limit)")
