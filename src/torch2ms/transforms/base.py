"""The registry of transforms: rewrites that code does and the tables name (``rewrite: {transform: NAME,
...arguments}`` of an entry or of one of its targets; src/torch2ms/data/README.md).

A transform is a small class with up to four hooks, each called by the fixer (`fixer.py`) at one point:

- `whole`: a fix of its own instead of the target's ordinary rewrite (``PASS``: the ordinary rewrite);
- `call_edits`: more edits for the ordinary rewrite of a call (``None``: no fix);
- `default_keywords`: the keywords that give torch's behaviour for a ``default_differs`` fact
  (``PASS``: the fact's own default);
- `result_item` / `result`: the item of a tuple result whose dtype differs, and the fix adapted to how
  the code reads the result.

Each transform module's docstring names the entries that use it; a test checks that every transform the
tables name is registered and every registered one is named.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar, TypeVar

from ..model import ApiCall, Diagnostic, Edit, Fix, MappingEntry, ParamFact, Rewrite, Target
from .edits import EditBuilder

# The codes of the findings whose call has a MindSpore form to write (equivalent, other parameters).
FIXABLE_CODES = frozenset({"TMS101", "TMS102"})


class Pass(Enum):
    """A hook's answer "nothing to do here": the fixer goes on as without the transform."""

    PASS = "pass"


PASS = Pass.PASS


@dataclass(frozen=True, slots=True)
class Context:
    """One finding to fix: its call, the entry and the target form chosen for it, and the rewrite the tables
    name (its arguments)."""

    src: EditBuilder
    call: ApiCall
    diag: Diagnostic
    entry: MappingEntry | None
    target: Target | None
    rewrite: Rewrite

    def arg(self, name: str, default: Any = None) -> Any:
        return self.rewrite.arg(name, default)


class Transform:
    """The base of every transform: hooks that do nothing."""

    name: ClassVar[str]
    # the finding codes the transform fixes, and whether it needs a target form (missing APIs have none)
    codes: ClassVar[frozenset[str]] = FIXABLE_CODES
    needs_target: ClassVar[bool] = True

    def whole(self, ctx: Context) -> Fix | None | Pass:
        return PASS

    def call_edits(self, ctx: Context, edits: list[Edit]) -> list[Edit] | None:
        return edits

    def default_keywords(self, call: ApiCall, rewrite: Rewrite, fact: ParamFact) -> list[str] | None | Pass:
        return PASS

    def result_item(self, ctx: Context) -> int | None:
        return None

    def result(self, ctx: Context, fix: Fix) -> Fix:
        return fix


REGISTRY: dict[str, Transform] = {}
_T = TypeVar("_T", bound=type[Transform])


def register(cls: _T) -> _T:
    """Class decorator: one instance of the transform, under its name."""
    if cls.name in REGISTRY:
        raise ValueError(f"transform {cls.name!r} registered twice")
    REGISTRY[cls.name] = cls()
    return cls


def rewrites(entry: MappingEntry | None, target: Target | None) -> list[tuple[Rewrite, Transform]]:
    """The rewrites the tables name for a use of `entry` written as `target`: the entry's, then the target's.
    A name no transform has is left out (the tables' test names it)."""
    out = []
    for rewrite in (entry.rewrite if entry is not None else None, target.rewrite if target is not None else None):
        if rewrite is not None and rewrite.transform in REGISTRY:
            out.append((rewrite, REGISTRY[rewrite.transform]))
    return out
