"""JSON files: written atomically (a temporary file beside the target, then renamed over it), and read
with one error naming the file and the reason."""

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


def read_json(path: str, what: str, error: type[Exception]) -> Any:
    """The JSON document in `path`; `error` naming the file, `what` it should be and the reason otherwise."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except OSError as exc:
        raise error(f"{path}: cannot read the {what}: {exc.strerror or exc}") from None
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError both are
        raise error(f"{path}: the {what} is not JSON: {exc}") from None
