"""`torch2ms scan --watch`: scan, then scan again whenever a scanned file changes.

The files are polled (their size, modification time and inode, read with `os.stat`; no file is
opened between scans), so it needs no platform file-event library and sees files that appear or
go away below the scanned folders. Ctrl-C ends the loop; the exit code is the last scan's.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import TextIO

from .api import iter_sources
from .config import Config

POLL_S = 0.5  # seconds between two looks at the files

Snapshot = dict[str, tuple[int, int, int]]
sleep: Callable[[float], None] = time.sleep  # the tests drive the loop through this


def snapshot(paths: Sequence[str], config: Config) -> Snapshot:
    """Each file the scan reads, with its size, modification time and inode (a missing one is left out)."""
    found: Snapshot = {}
    for source in iter_sources(paths, config):
        if source.error is not None:
            continue
        try:
            info = os.stat(source.path)
        except OSError:
            continue
        found[os.path.normpath(source.path)] = (info.st_size, info.st_mtime_ns, info.st_ino)
    return found


def changed(before: Snapshot, now: Snapshot) -> list[str]:
    """The files added, removed or modified between two snapshots, sorted."""
    return sorted(path for path in before.keys() | now.keys() if before.get(path) != now.get(path))


def watch(paths: Sequence[str], config: Config, scan: Callable[[], int], *, out: TextIO | None = None,
          cycles: int | None = None) -> int:
    """Run `scan` now and after every change of the files under `paths`; `cycles` scans at most (None:
    until Ctrl-C). The last scan's exit code."""
    out = out or sys.stderr
    status = scan()
    done = 1
    before = snapshot(paths, config)
    print("[watch] waiting for changes (Ctrl-C ends)", file=out, flush=True)
    try:
        while cycles is None or done < cycles:
            sleep(POLL_S)
            now = snapshot(paths, config)
            files = changed(before, now)
            if not files:
                continue
            before = now
            more = f" and {len(files) - 1} more" if len(files) > 1 else ""
            print(f"[watch] {files[0]}{more} changed: scanning again", file=out, flush=True)
            status = scan()
            done += 1
            print("[watch] waiting for changes (Ctrl-C ends)", file=out, flush=True)
    except KeyboardInterrupt:
        pass
    return status
