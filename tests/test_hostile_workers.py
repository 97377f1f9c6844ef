"""Workers that run the user's code (verify, verify-model) end with the process that started them, in
every case: also when that code loops in native code (no Python signal handler runs then) or forked
children of its own, and the parent was killed with SIGKILL (no cleanup of its own)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import torch2ms

# The worker, started as verify/pool.py starts one (its own session, the pool's environment): it forks a
# child that sleeps, writes both process ids, then loops inside the regular-expression engine (C code
# that holds the interpreter and never returns to run a signal handler).
WORKER = r"""
import os, re, sys, time
from torch2ms.process import configure_process
configure_process()
child = os.fork()
if child == 0:
    while True:
        time.sleep(1)
with open(sys.argv[1], "w") as handle:
    handle.write(f"{os.getpid()} {child}\n")
re.match(r"(a|aa)*c", "a" * 60)
"""

# The parent: a process that starts the worker like a pool does, then waits (the test kills it).
PARENT = r"""
import subprocess, sys, time
from torch2ms.verify.pool import worker_env
subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[2]], env=worker_env(), start_new_session=True)
time.sleep(600)
"""


# Only the folder that holds the package: the test process's own sys.path may carry folders other tests
# put there (a folder with a module named like a standard one, such as math.py, breaks a fresh interpreter).
SOURCE_ROOT = str(Path(torch2ms.__file__).resolve().parents[1])


def gone(pid: int) -> bool:
    """No such process, or a zombie (ended, not yet reaped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return True
    return state in ("Z", "X")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to see processes")
def test_a_worker_in_a_native_loop_and_its_forked_child_end_with_a_killed_parent(tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"
    parent = subprocess.Popen([sys.executable, "-c", PARENT, WORKER, str(pids_file)],
                              env={**os.environ, "PYTHONPATH": SOURCE_ROOT})
    pids: list[int] = []
    try:
        for _ in range(600):  # until the worker runs its loop
            if pids_file.exists() and pids_file.read_text().endswith("\n"):
                pids = [int(p) for p in pids_file.read_text().split()]
                break
            time.sleep(0.1)
        assert len(pids) == 2, "the worker did not start"
        assert not any(gone(p) for p in pids)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        for _ in range(300):  # each poll a tenth of a second: the worker's watcher looks every quarter second
            if all(gone(p) for p in pids):
                break
            time.sleep(0.1)
        assert [p for p in pids if not gone(p)] == [], "a worker or its child outlived the parent"
    finally:
        parent.kill()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
