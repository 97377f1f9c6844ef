"""The data files of torch2ms (the mapping tables, their schemas, the support module): `folder()` reads them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable


def folder() -> Traversable:
    """This package's folder: the path itself where the package is installed as files (what
    `importlib.resources.files` gives then, without importing it: it pulls in tempfile, shutil and
    zipfile, a tenth of a scan's start-up), else importlib.resources' view of it (a zip archive)."""
    here = Path(__file__).parent
    if here.is_dir():
        return here
    from importlib import resources

    return resources.files(__name__)
