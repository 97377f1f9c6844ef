"""Process-wide settings, made by the entry points only: the CLI, the language server and worker processes.

The analysis (`engine.scan_source`) never changes process state: the language server runs
two scans at once in threads, and a library caller owns its own process. What the
analysis needs from the process is set here, once, where a process starts:

- `configure_process`: Python's recursion limit, raised to `RECURSION_LIMIT`. Since
  Python 3.11, ast checks the depth of the tree it builds against this limit (three
  levels per unit), and the analysis walks nested expressions recursively; CPython's
  default of 1,000 rejects, for example, a sum of 3,000 terms. Python frames no longer
  use the C stack, so the higher limit is safe.
- `freeze_long_lived`: after the modules and the mapping table are loaded (its entries load
  when first looked up: `mappings.Entries`), what they hold moves out of
  the cyclic garbage collector's sight (`gc.freeze`), and the first generation collects
  less often: an analysis makes tens of thousands of short-lived acyclic objects that
  reference counting frees, and each collection would traverse them again.
- `release_memory`: hand memory that Python has freed back to the system (a long-lived
  language server after closing a large document).
- `die_with_parent`: a worker process (scan and fix workers, verify workers) ends when the
  process that started it ends, removing the temporary file of a write in progress and
  never writing afterwards.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator

RECURSION_LIMIT = 20_000
# Net allocations between collections of the youngest generation (CPython: 700). Measured over 400 of
# torch's files: 700 spends 8% of the scan in the collector, 20,000 4%, 100,000 none (the analysis's
# objects are freed by reference counting before the count gets there).
GC_FIRST_GENERATION = 100_000
PARENT_ENV = "TORCH2MS_PARENT_PID"  # set by a torch2ms process for a torch2ms child that must not outlive it
# Set (to "1") beside PARENT_ENV for a worker that runs the user's code and leads its own process group
# (the verify and verify-model workers): it and every process it started end with the parent.
GROUP_ENV = "TORCH2MS_END_GROUP"
WATCHDOG_S = 0.25

_PR_SET_PDEATHSIG = 1
_parent: int | None = None
_direct = False
_temp_files: set[str] = set()


def configure_process() -> None:
    """What every torch2ms entry point sets before it analyses anything."""
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
    parent = os.environ.pop(PARENT_ENV, "")
    group = os.environ.pop(GROUP_ENV, "") == "1"
    if parent.isdigit():
        die_with_parent(int(parent), group=group)


def freeze_long_lived() -> None:
    """Keep what is loaded now (the mapping table, the modules) out of the collector's passes."""
    gc.freeze()
    first, second, third = gc.get_threshold()
    if first and first < GC_FIRST_GENERATION:
        gc.set_threshold(GC_FIRST_GENERATION, second, third)


def release_memory() -> None:
    """Collect what is left in reference cycles, then return the C allocator's free memory to the
    system (glibc's ``malloc_trim``; a no-op elsewhere).

    Python gives the memory of freed objects back to the C allocator, which keeps much of it
    mapped after a burst of small allocations such as the analysis of a large file."""
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.lru_cache(maxsize=1)
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here: most processes never trim or set a death signal

    try:
        function: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None  # not glibc (musl has no malloc_trim)
    return function


def worker_start(parent: int) -> None:
    """The initializer of a scan or fix worker process."""
    configure_process()
    die_with_parent(parent)
    from .mappings import load_table

    load_table()
    freeze_long_lived()


# ---------------------------------------------------------------- dying with the parent
def die_with_parent(parent: int, group: bool = False) -> None:
    """End this process (after removing its temporary files) as soon as process `parent` ends.

    On Linux the kernel sends SIGTERM when the parent dies (``prctl(PR_SET_PDEATHSIG)``; the
    parent is the thread that started this process, which for torch2ms's pools is the main
    thread); elsewhere, or when `parent` is not the direct parent, a thread checks every quarter
    second that it is still there. Must be called from the main thread.

    `group` (a worker that runs the user's code and leads its own process group): the signal is
    SIGKILL, which also ends code looping in native code (a SIGTERM handler would wait for it to
    return to Python), and a watcher process (`_watch_group`) ends the whole group, including the
    children that code forked, once this process or the parent is gone."""
    global _parent, _direct
    _parent = parent
    _direct = os.getppid() == parent
    signal.signal(signal.SIGTERM, _on_terminate)
    if group and _leads_group():
        _start_group_watcher(parent)
        if _direct and _parent_death_signal(signal.SIGKILL):
            return
    if not (_direct and _parent_death_signal(signal.SIGTERM)):
        threading.Thread(target=_watch, name="torch2ms-parent-watch", daemon=True).start()
    if not parent_alive():  # it died before the kernel was told to tell us
        _on_terminate(signal.SIGTERM, None)


def _leads_group() -> bool:
    try:
        return os.getpgid(0) == os.getpid()
    except (OSError, AttributeError):
        return False


def _start_group_watcher(parent: int) -> None:
    """Fork a watcher (before any thread starts) that kills this process group with SIGKILL as soon as this
    process ends or `parent` does; the watcher belongs to the group and so ends with it."""
    worker = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        return
    if pid:
        return
    try:  # the watcher: only this loop, never the worker's code, and none of its files (its pipes see EOF)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.closerange(0, _max_fd())
        while os.getppid() == worker and _exists(parent):
            time.sleep(WATCHDOG_S)
        os.killpg(worker, signal.SIGKILL)
    finally:
        os._exit(0)


def _max_fd() -> int:
    try:
        return int(os.sysconf("SC_OPEN_MAX"))
    except (ValueError, OSError):
        return 1024


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def parent_alive() -> bool:
    """False once the process this worker serves has ended (always True outside a worker)."""
    if _parent is None:
        return True
    if _direct:  # a child whose parent ends is handed to another process at once
        return os.getppid() == _parent
    return _exists(_parent)


def _parent_death_signal(signum: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_PDEATHSIG, int(signum), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _watch() -> None:
    while True:
        time.sleep(WATCHDOG_S)
        if not parent_alive():
            os.kill(os.getpid(), signal.SIGTERM)  # the main thread's handler cleans up and exits
            time.sleep(5.0)
            _remove_temp_files()
            os._exit(3)


def _on_terminate(_signum: int, _frame: object) -> None:
    _remove_temp_files()
    os._exit(3)


def _remove_temp_files() -> None:
    for path in list(_temp_files):
        with contextlib.suppress(OSError):
            os.unlink(path)
    _temp_files.clear()


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold SIGTERM (the parent-death signal) for a few steps that must not be cut in two."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


@contextlib.contextmanager
def temporary_file(folder: str, prefix: str, suffix: str) -> Iterator[tuple[int, str]]:
    """`tempfile.mkstemp` whose file is removed if this process is told to end while it exists."""
    import tempfile  # here: a scan that writes nothing never needs it (nor shutil, which it imports)

    with signals_held():
        fd, path = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=suffix)
        _temp_files.add(path)
    try:
        yield fd, path
    finally:
        with signals_held():
            _temp_files.discard(path)
            with contextlib.suppress(OSError):
                if os.path.lexists(path):
                    os.unlink(path)


def track_temp_file(path: str) -> None:
    """Remove `path` if this process is told to end before `untrack_temp_file(path)`."""
    _temp_files.add(path)


def untrack_temp_file(path: str) -> None:
    _temp_files.discard(path)


def replace_if_parent_alive(source: str, target: str) -> bool:
    """`os.replace(source, target)` unless the parent is gone (then this process ends instead)."""
    with signals_held():
        if not parent_alive():
            _on_terminate(signal.SIGTERM, None)
        os.replace(source, target)
        _temp_files.discard(source)
    return True
