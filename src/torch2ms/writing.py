"""The one way torch2ms writes a file it produces: reports (`scan -o`, `--html`, SARIF), traces,
migrated files and their weight maps, converted checkpoints.

Every write goes through `atomic` (or `reserve`, for a file another process fills):

- the target is checked first (`check_target`): a device, FIFO, socket or folder is refused, and
  so is a symbolic link to one; a symbolic link to a regular file is refused too unless the run
  asked to write through links (``--write-through-links``), which then replaces the file the
  link points to and keeps the link; a file that is an input of the same run (the scanned
  sources, a checkpoint being converted, a map being read) is never overwritten;
- the content goes to a temporary file beside the target, named
  ``.NAME.PID.RANDOM.torch2ms-tmp``, which is renamed over the target once complete: a reader
  sees the old file or the new one, never half of one;
- any failure (a full disk, no permission, a kill) leaves the target as it was; the temporary
  file is removed, and one left by a process killed with SIGKILL is removed by the next write
  into the same folder (`sweep`): its process id names a process that no longer exists;
- an operating-system error becomes one `WriteError` naming the file and the reason.

Temporary folders of the torch2ms processes (`temporary_folder`) carry the process id the
same way, and `sweep_temporary_folders` removes those whose process is gone.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Iterable, Iterator
from typing import IO, TYPE_CHECKING, Any, Literal, overload

from . import process

if TYPE_CHECKING:
    import tempfile

TEMP_TAG = ".torch2ms-tmp"
_TEMP_NAME = re.compile(r"^\..*\.(\d+)\.[0-9a-z_]{8}" + re.escape(TEMP_TAG) + r"(\.[A-Za-z0-9]+)?$")
_FOLDER_NAME = re.compile(r"^torch2ms-[a-z]+-(\d+)-")


class WriteError(Exception):
    """A file that is not written; the message names it and says why. `system`: the operating system's
    reason when it refused the write (a full disk, a missing folder), else None (a target refused here)."""

    def __init__(self, message: str, system: str | None = None) -> None:
        super().__init__(message)
        self.system = system


def _os_error(path: str, exc: OSError) -> WriteError:
    reason = exc.strerror or str(exc)
    return WriteError(f"{path}: cannot write: {reason}", reason)


class _Run:
    """What the running command told the writer: its inputs and whether links are written through."""

    def __init__(self) -> None:
        self.inputs: list[str] = []
        self.through_links = False


_run = _Run()


def begin_run(inputs: Iterable[str | None], through_links: bool = False) -> None:
    """Declare the inputs of this command (files, or folders whose sources it reads) and its link policy;
    remove the temporary folders that killed torch2ms processes left behind."""
    _run.inputs = [os.path.abspath(p) for p in inputs if p and p != "-"]
    _run.through_links = through_links
    sweep_temporary_folders()


def add_inputs(paths: Iterable[str]) -> None:
    """More inputs of this command (the source files a scan or a migration read)."""
    _run.inputs.extend(os.path.abspath(p) for p in paths)


def add_arguments(parser: Any) -> None:
    """The option every writing command has."""
    parser.add_argument("--write-through-links", action="store_true",
                        help="when an output is a symbolic link, replace the file it points to (default: refuse "
                             "to write through a link)")


# ---------------------------------------------------------------- checks
def _kind(mode: int) -> str | None:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return None if stat.S_ISREG(mode) else "not a regular file"


def _is_input(info: os.stat_result) -> bool:
    for given in _run.inputs:
        try:
            other = os.stat(given)
        except OSError:
            continue
        if stat.S_ISREG(other.st_mode) and (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino):
            return True
    return False


def check_target(path: str) -> str:
    """The file to replace for an output named `path` (the link's target when writing through links),
    or `WriteError` saying why `path` is not written."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        if not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            raise _os_error(path, FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT))) from None
        return path
    except OSError as exc:
        raise _os_error(path, exc) from None
    target = path
    if stat.S_ISLNK(info.st_mode):
        real = os.path.realpath(path)
        try:
            pointed = os.stat(real)
        except OSError:
            pointed = None
        kind = _kind(pointed.st_mode) if pointed is not None else None
        if kind is not None:
            raise WriteError(f"{path}: is a symbolic link to {real}, {kind}; not replaced")
        if not _run.through_links:
            raise WriteError(f"{path}: is a symbolic link (to {real}); not replaced "
                             "(--write-through-links replaces the file it points to)")
        if pointed is None and not os.path.isdir(os.path.dirname(real)):
            raise WriteError(f"{path}: is a symbolic link to {real}, whose folder does not exist")
        target = real
        info = pointed if pointed is not None else info
        if pointed is None:
            return target
    kind = _kind(info.st_mode)
    if kind is not None:
        raise WriteError(f"{path}: is {kind}, not a regular file; not replaced")
    if _is_input(info):
        raise WriteError(f"{path}: is an input of this run; not overwritten")
    return target


# ---------------------------------------------------------------- temporary files
def temp_path(target: str, suffix: str = "") -> str:
    """A fresh temporary name beside `target` that `sweep` recognises once its process is gone."""
    folder, name = os.path.split(target)
    return os.path.join(folder, f".{name}.{os.getpid()}.{os.urandom(4).hex()}{TEMP_TAG}{suffix}")


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def _orphans(folder: str, pattern: re.Pattern[str]) -> Iterator[tuple[str, os.stat_result]]:
    """(path, lstat) of the entries of `folder` named by `pattern` whose process (group 1) no longer runs."""
    try:
        names = os.listdir(folder or ".")
    except OSError:
        return
    for name in names:
        match = pattern.match(name)
        if match is None or _alive(int(match.group(1))):
            continue
        path = os.path.join(folder, name)
        with contextlib.suppress(OSError):
            yield path, os.lstat(path)


def sweep(folder: str) -> list[str]:
    """Remove the temporary files of torch2ms processes that no longer run from `folder`; the removed paths."""
    removed: list[str] = []
    for path, info in _orphans(folder, _TEMP_NAME):
        if stat.S_ISREG(info.st_mode):
            with contextlib.suppress(OSError):
                os.unlink(path)
                removed.append(path)
    return removed


def temporary_folder(kind: str) -> tempfile.TemporaryDirectory[str]:
    """A temporary folder for this process (``torch2ms-KIND-PID-...``), removed when its `with` ends, or by
    `sweep_temporary_folders` after a kill."""
    import tempfile  # here, as shutil below: a scan that writes nothing never needs them

    return tempfile.TemporaryDirectory(prefix=f"torch2ms-{kind}-{os.getpid()}-")


def sweep_temporary_folders() -> list[str]:
    """Remove this user's torch2ms temporary folders whose process is gone; the removed paths."""
    import shutil
    import tempfile

    removed: list[str] = []
    for path, info in _orphans(tempfile.gettempdir(), _FOLDER_NAME):
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _mode_for(target: str) -> int:
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


# ---------------------------------------------------------------- writing
@overload
def atomic(path: str, binary: Literal[False] = False, encoding: str = "utf-8",
           mode: int | None = None) -> contextlib.AbstractContextManager[IO[str]]: ...
@overload
def atomic(path: str, binary: Literal[True], encoding: str = "utf-8",
           mode: int | None = None) -> contextlib.AbstractContextManager[IO[bytes]]: ...
def atomic(path: str, binary: bool = False, encoding: str = "utf-8",
           mode: int | None = None) -> contextlib.AbstractContextManager[Any]:
    """A file handle whose content replaces `path` when the `with` block ends without an error; the file gets
    `mode` (default: the replaced file's permissions, or the usual ones for a new file)."""
    return _atomic(path, binary, encoding, mode)


@contextlib.contextmanager
def _atomic(path: str, binary: bool, encoding: str, mode: int | None) -> Iterator[Any]:
    with reserve(path, mode=mode) as tmp:
        try:
            handle = open(tmp, "xb") if binary else open(tmp, "x", encoding=encoding, newline="\n")
        except OSError as exc:
            raise _os_error(path, exc) from None
        try:
            with handle:
                yield handle
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as exc:
            raise _os_error(path, exc) from None


@contextlib.contextmanager
def reserve(path: str, suffix: str = "", mode: int | None = None) -> Iterator[str]:
    """A temporary path beside `path` for the caller (or a process it starts) to fill; renamed over the
    target when the `with` block ends without an error, removed otherwise."""
    target = check_target(path)
    folder = os.path.dirname(target) or "."
    sweep(folder)
    mode = _mode_for(target) if mode is None else mode
    with process.signals_held():
        tmp = temp_path(target, suffix)
        process.track_temp_file(tmp)
    try:
        yield tmp
        if not os.path.isfile(tmp):
            raise WriteError(f"{path}: cannot write: nothing was produced")
        check_target(path)  # still a file we may replace (nothing swapped in meanwhile)
        try:
            os.chmod(tmp, mode)
            process.replace_if_parent_alive(tmp, target)
        except OSError as exc:
            raise _os_error(path, exc) from None
    finally:
        with process.signals_held():
            process.untrack_temp_file(tmp)
            with contextlib.suppress(OSError):
                if os.path.lexists(tmp):
                    os.unlink(tmp)


def write_text(path: str, text: str, encoding: str = "utf-8") -> None:
    with atomic(path, encoding=encoding) as handle:
        handle.write(text)


def write_bytes(path: str, data: bytes) -> None:
    with atomic(path, binary=True) as handle:
        handle.write(data)
