"""JSON files written atomically: a temporary file beside the target, then renamed over it."""

from __future__ import annotations

import json
import os
from typing import Any


def write_json(path: str, data: Any) -> None:
    """Write `data` as indented JSON; a reader never sees a half-written file, and a failure leaves none."""
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as handle:
            json.dump(data, handle, indent=1, default=str)
            handle.write("\n")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
