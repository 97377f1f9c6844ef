"""The optional extras (pyproject's optional-dependencies) that some commands need.

The scanner core needs none of them; a command that does names the missing extra before it starts
(`MissingExtra`, an expected error: one line, exit code 2), instead of failing on an import halfway.
"""

from __future__ import annotations

import importlib.util


class MissingExtra(Exception):
    """A command needs a library of an optional extra that is not installed."""


def require(command: str, extra: str, *modules: str) -> None:
    """Raise MissingExtra, naming `command`, the modules and the extra, unless every module is installed."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise MissingExtra(f"{command} needs {' and '.join(missing)}, not installed here "
                           f"(install the {extra} extra: pip install 'torch2ms[{extra}]')")
