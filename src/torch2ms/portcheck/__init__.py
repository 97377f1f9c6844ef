"""The port check: the output of a port (and any MindSpore code) read as MindSpore code (TMS4xx).

`api.py` holds MindSpore's public API as data; docs/port-check.md describes the checks.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from ..mappings import MappingTable
from ..model import Diagnostic
from ..source import SourceText

__all__ = ["port_diagnostics", "wanted"]


def wanted(text: str, enabled: Callable[[str], bool]) -> bool:
    """Whether the port check has anything to do on this text: it names MindSpore and a TMS4xx code is on."""
    return "mindspore" in text and any(enabled(code) for code in _codes())


def _codes() -> tuple[str, ...]:
    from ..codes import CODES

    return tuple(code for code in CODES if code.startswith("TMS4"))


def port_diagnostics(tree: ast.Module, positions: SourceText, table: MappingTable, version: tuple[int, ...],
                     device: str | None, enabled: Callable[[str], bool]) -> list[Diagnostic]:
    """The TMS4xx findings of one parsed file (none unless the target version is the one the API data
    describes: MindSpore's own API is known for that version only). The checker is imported here: a scan of
    files that never name MindSpore starts without it."""
    from .api import load_api
    from .check import PortChecker

    api = load_api()
    if tuple(int(p) for p in api.version.split(".")[:2] if p.isdigit()) != version[:2]:
        return []
    return PortChecker(tree, positions, api, table, version, device, enabled).run()
