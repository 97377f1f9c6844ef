"""JSON files: written atomically (`torch2ms.writing`), and read as hostile input.

Every JSON document torch2ms reads from a user (weight maps, traces, baselines and `--compare`
reports, verification records, model records) goes through `read_json` / `parse_json`:

- the file is read like a source (`files.read_regular`): a FIFO, a socket or a device is refused
  without blocking, and at most `limit` bytes are read;
- the nesting depth is measured before parsing (a linear scan of the brackets outside strings)
  and bounded by `MAX_DEPTH`, so a document nested a million deep is one error, not a crash;
- an integer longer than `MAX_INT_DIGITS` digits, and NaN or Infinity, are refused while parsing;
- `Schema` helpers check the parsed values; each failure names the file and the key
  (``roots.Net.entries[3].torch: expected a string``).

Every failure is one exception of the caller's type, whose message names the file.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from typing import Any

from .files import MiB, UnreadableFile, read_regular

MAX_JSON_BYTES = 256 * MiB
MAX_DEPTH = 100
MAX_INT_DIGITS = 30
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]")


def write_json(path: str, data: Any) -> None:
    """Write `data` as indented JSON through the atomic writer (`torch2ms.writing`): a reader never sees a
    half-written file, a failure leaves none, and a device, a link or an input of the run is not replaced."""
    from .writing import atomic

    with atomic(path) as handle:
        json.dump(data, handle, indent=1, default=str)
        handle.write("\n")


def depth(text: str) -> int:
    """The deepest nesting of arrays and objects in JSON `text` (brackets inside strings do not count)."""
    steps = (1 if b in "[{" else -1 for b in _BRACKETS.findall(_STRINGS.sub("", text)))
    return max(itertools.accumulate(steps, initial=0))


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"an integer of {len(text.lstrip('-'))} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _constant(text: str) -> float:
    raise ValueError(f"{text} is not a JSON number")


def loads_bounded(text: str, max_depth: int = MAX_DEPTH) -> Any:
    """`json.loads` within the bounds above; json.JSONDecodeError, or ValueError saying which bound."""
    deepest = depth(text)
    if deepest > max_depth:
        raise ValueError(f"nested {deepest} levels deep (at most {max_depth})")
    return json.loads(text, parse_int=_integer, parse_constant=_constant)


def parse_json(text: str, path: str, what: str, error: type[Exception], max_depth: int = MAX_DEPTH) -> Any:
    """The JSON document `text` (read from `path`), bounded; `error` naming the file and the reason otherwise."""
    try:
        return loads_bounded(text, max_depth)
    except json.JSONDecodeError as exc:
        raise error(f"{path}: the {what} is not JSON: {exc}") from None
    except (ValueError, RecursionError) as exc:
        raise error(f"{path}: the {what} is not valid: {exc}") from None


def read_json(path: str, what: str, error: type[Exception], limit: int = MAX_JSON_BYTES,
              max_depth: int = MAX_DEPTH) -> Any:
    """The JSON document in `path`; `error` naming the file, `what` it should be and the reason otherwise."""
    try:
        data = read_regular(path, limit)
    except UnreadableFile as exc:
        raise error(f"{path}: cannot read the {what}: {exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: the {what} is not UTF-8: {exc.reason} at byte {exc.start}") from None
    return parse_json(text, path, what, error, max_depth)


class Schema:
    """Checks of parsed JSON values; each failure raises `error` naming the file and the key."""

    def __init__(self, path: str, error: type[Exception]) -> None:
        self.path = path
        self.error = error

    def fail(self, where: str, message: str) -> Exception:
        return self.error(f"{self.path}: {where}: {message}")

    def object(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"expected an object, found {_kind(value)}")
        return value

    def array(self, value: Any, where: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(where, f"expected a list, found {_kind(value)}")
        return value

    def string(self, value: Any, where: str, optional: bool = False) -> str | None:
        if value is None and optional:
            return None
        if not isinstance(value, str):
            raise self.fail(where, f"expected a string, found {_kind(value)}")
        return value

    def integer(self, value: Any, where: str, low: int | None = None, high: int | None = None) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(where, f"expected an integer, found {_kind(value)}")
        if (low is not None and value < low) or (high is not None and value > high):
            raise self.fail(where, f"{value} is out of range ({low}..{high})")
        return value

    def items(self, value: Any, where: str) -> Iterator[tuple[str, Any]]:
        """The (key path, value) pairs of a list or an object."""
        if isinstance(value, dict):
            return ((f"{where}.{key}", item) for key, item in value.items())
        return ((f"{where}[{index}]", item) for index, item in enumerate(self.array(value, where)))


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
            dict: "an object"}.get(type(value), type(value).__name__)
