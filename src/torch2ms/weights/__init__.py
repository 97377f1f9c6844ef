"""Weights of ported models: the tables' weight facts, parameter-name maps and their application.

Modules: `facts` (the tables' weight facts per layer and MindSpore class), `structure` (what a
network holds, read statically from its source), `mapping` (the parameter-name map of a torch
file and its port, and its JSON format), `place` (a map applied to the names of a real
state_dict). `torch2ms convert-weights`, which runs torch and MindSpore in worker processes, is
`torch2ms.verify.convert_weights`, beside `verify-model`. Importing this package imports neither
torch nor MindSpore.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..mappings import MappingTable


def write_map(torch_source_path: str, ported_source_path: str, out_path: str,
              factories: Iterable[str | tuple[str, str]] = (), table: MappingTable | None = None) -> Any:
    """Build the parameter-name map of a torch file and its MindSpore port and write it to `out_path` (JSON,
    docs/weights.md); returns the `WeightMap`. Raises `torch2ms.weights.mapping.MapError` (naming the file
    and the reason) when a file cannot be read or parsed. See `torch2ms.weights.mapping.write_map`."""
    from .mapping import write_map as _write_map

    return _write_map(torch_source_path, ported_source_path, out_path, factories, table)
