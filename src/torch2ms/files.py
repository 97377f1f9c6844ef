"""Reading files that someone else controls: regular files only, never blocking, never unbounded.

Every file torch2ms reads from a scanned tree (sources, pyproject.toml, the results cache)
goes through `read_regular`:

- the path is checked with ``stat`` before it is opened, so a FIFO, a socket or a device is
  refused without being opened (opening some devices has effects of its own);
- it is opened with ``O_NONBLOCK`` (and ``O_NOFOLLOW`` where a symlink is not acceptable) and
  checked again with ``fstat`` on the open descriptor, so a FIFO swapped in between the two
  is refused as well instead of blocking the scan;
- files of the kernel's pseudo file systems (``/proc``, ``/sys``) are refused: they call
  themselves regular files of size 0 and some block or are consumed by a read
  (``/proc/kmsg``);
- at most ``limit`` bytes are read; a larger file is refused with its size in the message.

A refusal is an `UnreadableFile` whose message names the reason (the caller adds the path).
"""

from __future__ import annotations

import errno
import functools
import os
import stat
from pathlib import Path

MiB = 1 << 20
# A Python file larger than this is not source anyone edits; reading it whole would only cost memory.
MAX_SOURCE_BYTES = 32 * MiB


def user_cache_dir() -> Path:
    """Where torch2ms keeps its own files for this user (the compiled mapping table, the results cache's key):
    ``$TORCH2MS_CACHE_DIR``, else ``$XDG_CACHE_HOME/torch2ms``, else ``~/.cache/torch2ms``. Never inside a
    scanned tree."""
    base = os.environ.get("TORCH2MS_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME") \
        or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "torch2ms"


class UnreadableFile(Exception):
    """A file that is not read; the message says why (without the path)."""


_KINDS = (
    (stat.S_ISDIR, "is a directory"),
    (stat.S_ISFIFO, "is a FIFO (named pipe), not a regular file"),
    (stat.S_ISSOCK, "is a socket, not a regular file"),
    (stat.S_ISCHR, "is a character device, not a regular file"),
    (stat.S_ISBLK, "is a block device, not a regular file"),
)

_ERRNO_REASONS = {
    errno.ENOENT: "no such file",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EISDIR: "is a directory",
    errno.ENOTDIR: "no such file (a parent is not a directory)",
    errno.ENXIO: "is a socket or a device without a reader, not a regular file",
    errno.ENAMETOOLONG: "file name too long",
}


def kind_problem(mode: int) -> str | None:
    """Why a file of this mode is not read, or None for a regular file."""
    for test, reason in _KINDS:
        if test(mode):
            return reason
    if not stat.S_ISREG(mode):
        return "is not a regular file"
    return None


@functools.lru_cache(maxsize=1)
def _pseudo_devices() -> frozenset[int]:
    devices = set()
    for root in ("/proc", "/sys"):
        try:
            devices.add(os.stat(root).st_dev)
        except OSError:
            pass
    return frozenset(devices)


def _reason(exc: OSError, follow_symlinks: bool) -> str:
    if exc.errno == errno.ELOOP:
        return "symlink loop" if follow_symlinks else "is a symlink, not read"
    return _ERRNO_REASONS.get(exc.errno or 0, f"cannot read: {exc.strerror or exc}")


def read_regular(path: str, limit: int, *, follow_symlinks: bool = True) -> bytes:
    """The bytes of the regular file `path` (at most `limit` of them), or `UnreadableFile`."""
    try:
        before = os.stat(path, follow_symlinks=follow_symlinks)
    except OSError as exc:
        raise UnreadableFile(_reason(exc, follow_symlinks)) from None
    problem = "is a symlink, not read" if stat.S_ISLNK(before.st_mode) else kind_problem(before.st_mode)
    if problem is not None:
        raise UnreadableFile(problem)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise UnreadableFile(_reason(exc, follow_symlinks)) from None
    try:
        info = os.fstat(fd)
        problem = kind_problem(info.st_mode)
        if problem is not None:  # swapped for something else since the stat above
            raise UnreadableFile(problem)
        if info.st_dev in _pseudo_devices():
            raise UnreadableFile("is a file of the kernel's /proc or /sys file system, not read")
        if info.st_size > limit:
            raise UnreadableFile(f"too large: {info.st_size:,} bytes (the limit is {limit:,})")
        chunks = []
        total = 0
        while True:
            try:
                chunk = os.read(fd, min(max(info.st_size - total, 0) + 1, limit + 1 - total))
            except BlockingIOError:
                raise UnreadableFile("cannot be read without waiting (not a plain file)") from None
            except OSError as exc:
                raise UnreadableFile(f"cannot read: {exc.strerror or exc}") from None
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise UnreadableFile(f"too large: more than {limit:,} bytes (the limit)")
        return b"".join(chunks)
    finally:
        os.close(fd)
