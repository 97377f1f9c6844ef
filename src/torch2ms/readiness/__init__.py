"""Migration-readiness checks: what a PyTorch project does that MindSpore handles differently.

These findings (codes TMS3xx, category ``readiness``) come in addition to the API-table
findings (TMS1xx) for the same calls. They look at constructs rather than single APIs:
a training loop, a module class, a container of layers, a data-loading function.

Everything here is a pure function of one file: the resolved `ApiCall` list (what each
call is in torch) and a light ``ast`` pass over the same tree (structure the resolver
does not record: class bases, loops, what is stored on ``self``). Names that the resolver
cannot prove (``model.train()`` on a function parameter) are matched by method name in
files that import torch; such findings carry low confidence unless the name is one only
torch code uses (``zero_grad``, ``register_buffer``).

The file facts and shared helpers are in `facts`; each check family is one module
(`second_order`, `sparse`, `containers`, `structure`, `devices`, `data_pipeline`,
`training`). The APIs they look for are data (src/torch2ms/data/readiness.yaml, read with the mapping
table); each code's kind is a field of the code table (`codes.CodeInfo.kind`), and `KINDS`
gives the kinds in report order.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence

from ..codes import CODES, READINESS_KINDS
from ..mappings import TableView
from ..model import ApiCall, Diagnostic
from ..source import SourceText
from .containers import check_containers
from .data_pipeline import check_data_pipeline
from .devices import check_devices
from .facts import Facts
from .second_order import check_second_order
from .sparse import check_sparse
from .structure import check_module_structure
from .training import check_training_loop

KINDS: tuple[str, ...] = READINESS_KINDS
KIND_OF_CODE: dict[str, str] = {code: info.kind for code, info in CODES.items() if info.kind is not None}
READINESS_CODES: tuple[str, ...] = tuple(KIND_OF_CODE)

CHECKS = (check_second_order, check_sparse, check_containers, check_module_structure, check_devices,
          check_data_pipeline, check_training_loop)


def kind_of(code: str) -> str | None:
    """The kind title a readiness code is grouped under (None for other codes)."""
    info = CODES.get(code)
    return info.kind if info is not None else None


def wanted(enabled: Callable[[str], bool]) -> bool:
    """Whether any readiness code is switched on (the checks are skipped otherwise)."""
    return any(enabled(code) for code in READINESS_CODES)


def readiness_diagnostics(tree: ast.Module, calls: Sequence[ApiCall], text: str, view: TableView,
                          positions: SourceText | None = None) -> list[Diagnostic]:
    """Every readiness finding of one file (pure: the tree, the resolved calls and the text), for the scan's
    MindSpore version and device (`view`)."""
    facts = Facts(tree, calls, text, view, positions or SourceText(text))
    out: list[Diagnostic] = []
    for check in CHECKS:
        out.extend(check(facts))
    return out
