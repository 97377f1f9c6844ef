"""Where each line `migrate` wrote comes from: NAME.migrate.json beside the port.

For every line of the port that differs from the original, the original's line range it replaces
and the findings of the original on those lines that the rewrite answered: the finding's code, the
torch API, the MindSpore API the mapping entry names, the fix's title. `verify-model --locate` reads
it to name the rewrite behind a port's line where the port and the original part
(`torch2ms.verify.layers`). Lines are matched by a line diff of the two texts (the rewrites keep
the file's other lines as they are).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from typing import Any

from ..jsonfile import write_json
from ..model import Diagnostic

FORMAT = "torch2ms-migrate-provenance"
VERSION = 1


def provenance_path(ported_path: str) -> str:
    """model.py -> model.migrate.json (beside the port)."""
    stem = ported_path[:-3] if ported_path.endswith(".py") else ported_path
    return stem + ".migrate.json"


def line_origins(original: str, new: str) -> dict[int, tuple[int, int]]:
    """Each changed or added line of `new` (1-based) -> the original's lines (first, last) it stands for: a
    block replaced by as many lines line by line, another block as a whole (an added line: the original
    line before which it was added, or the last line, as first = last)."""
    old_lines, new_lines = original.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    out: dict[int, tuple[int, int]] = {}
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or j1 == j2:
            continue
        top = len(old_lines) or 1
        for j in range(j1, j2):
            if i2 - i1 == j2 - j1:
                first = last = i1 + (j - j1) + 1
            else:
                first, last = i1 + 1, max(i1 + 1, i2)
            out[j + 1] = (min(first, top), min(last, top))
    return out


def _rewrite(diag: Diagnostic) -> dict[str, Any]:
    out: dict[str, Any] = {"code": diag.code, "line": diag.span.start_line, "torch_api": diag.torch_api,
                           "mindspore_api": diag.mindspore_api}
    if diag.fix is not None:
        out["fix"] = diag.fix.title
    return out


def build(original: str, new: str, findings: Iterable[Diagnostic], source: str = "", port: str = "") -> dict[str, Any]:
    """The provenance document of one migrated file."""
    by_line: dict[int, list[Diagnostic]] = {}
    for diag in findings:
        by_line.setdefault(diag.span.start_line, []).append(diag)
    new_lines = new.splitlines()
    lines = []
    for line, (first, last) in sorted(line_origins(original, new).items()):
        rewrites = [_rewrite(d) for k in range(first, last + 1) for d in by_line.get(k, [])]
        lines.append({"line": line, "text": new_lines[line - 1].strip()[:200], "original_lines": [first, last],
                      "rewrites": rewrites})
    return {"format": FORMAT, "version": VERSION, "source": source, "port": port, "lines": lines}


def write_beside(source: str, port: str, original: str, new: str, findings: Iterable[Diagnostic]) -> str:
    """Write NAME.migrate.json beside the port; returns its path."""
    path = provenance_path(port)
    write_json(path, build(original, new, findings, os.path.abspath(source), os.path.abspath(port)))
    return path
