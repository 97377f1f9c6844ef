"""One module per output format; each turns `FileResult`s into text."""

from __future__ import annotations

import os

from ..model import FileResult


def display_path(path: str, root: str | None = None) -> str:
    """A path relative to `root` (default: the working directory) when it lies below it."""
    base = os.path.abspath(root or os.getcwd())
    absolute = os.path.abspath(path)
    if absolute == base:
        return os.path.basename(absolute)
    if absolute.startswith(base.rstrip(os.sep) + os.sep):
        return os.path.relpath(absolute, base).replace(os.sep, "/")
    return path.replace(os.sep, "/")


def sorted_results(results: list[FileResult]) -> list[FileResult]:
    return sorted(results, key=lambda r: r.path)
