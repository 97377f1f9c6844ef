"""State some examples need before they can run, set up once per worker process.

An example names its fixture with the `fixture` key (see src/torch2ms/data/schema.yaml).
Only the verify worker and scripts/build_tables.py's example runner call this,
inside processes that have imported torch and MindSpore.

`process_group`: a single-process (world size 1) collective group in both
libraries on the CPU. torch uses the gloo backend with a file store. MindSpore's
public `mindspore.mint.distributed.init_process_group` accepts only the Ascend
backend (hccl), so the worker builds MindSpore's group with the same internal
call that function makes after its backend check (`_init_with_store`), passing
the CPU backend (mccl) and a TCP store on a free local port. The examples then
call the public collectives (all_reduce, all_gather, ...) of both libraries. With
one rank a collective's result is its input (or a copy per rank), so these
examples check that the MindSpore call accepts torch's arguments and returns the
same structure, shapes and values; they cannot show behaviour across ranks.
"""

from __future__ import annotations

import os
import socket
import tempfile
from datetime import timedelta
from typing import Any

FIXTURES = ("process_group",)
_READY: dict[str, bool] = {}


class FixtureError(Exception):
    """A fixture could not be set up; the message says which library and why."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _process_group(torch: Any, mindspore: Any) -> None:
    dist = torch.distributed
    if not dist.is_initialized():
        handle, path = tempfile.mkstemp(prefix="torch2ms-pg-")
        os.close(handle)
        os.unlink(path)  # the file store creates it
        try:
            dist.init_process_group("gloo", init_method=f"file://{path}", world_size=1, rank=0)
        except Exception as exc:  # noqa: BLE001
            raise FixtureError(f"torch: gloo process group: {type(exc).__name__}: {exc}") from exc
    try:
        from mindspore.mint.distributed import distributed as ms_dist

        timeout = timedelta(seconds=60)
        store = ms_dist.TCPStore(host_name="127.0.0.1", port=_free_port(), world_size=1, is_master=True,
                                 timeout=timeout)
        ms_dist._init_with_store(backend="mccl", timeout=timeout, world_size=1, rank=0,  # noqa: SLF001
                                 store=store, group_name="")
    except Exception as exc:  # noqa: BLE001
        raise FixtureError(f"MindSpore: mccl process group: {type(exc).__name__}: {str(exc)[:200]}") from exc


def ensure(name: str, torch: Any, mindspore: Any) -> None:
    """Set up fixture `name` in this process (once); raises FixtureError when it cannot be."""
    if name not in FIXTURES:
        raise FixtureError(f"unknown fixture {name!r} (known: {', '.join(FIXTURES)})")
    if _READY.get(name):
        return
    _process_group(torch, mindspore)
    _READY[name] = True
