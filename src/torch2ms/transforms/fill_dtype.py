"""`torch.full(s, 1.5)` -> `mindspore.ops.full(s, 1.5, dtype=mindspore.float32)`: a target that infers the
result dtype from the fill value in its own way (mindspore.ops.full gives int64 for a float fill) where
torch's dtype fact has no default to write. Arguments: `param`, `position` (the fill value's torch parameter).
Without dtype, a constant fill value gets torch's dtype written out; any other value leaves the call unfixed
(`migrate` writes the support module's full for it, which takes torch's dtype from the value at run time).

Used by the target mindspore.ops.full of torch.full and torch.Tensor.new_full."""

from __future__ import annotations

from ..model import ApiCall, FactKind, ParamFact, Rewrite, arg_for
from .base import PASS, Pass, Transform, register


def _fill_dtype(call: ApiCall, name: str, position: int) -> list[str] | None:
    """The ``dtype=`` that gives torch's result dtype for a call that passes none: torch takes the default
    float dtype (float32) for a float fill value, bool for a bool and int64 for an int (which
    mindspore.ops.full infers too: nothing to write). None: the fill value is not a constant of these types."""
    arg = arg_for(call.args, name, position)
    if arg is None or arg.starred or not arg.is_const:
        return None
    if isinstance(arg.value, bool):
        return ["dtype=mindspore.bool_"]
    if isinstance(arg.value, int):
        return []
    if isinstance(arg.value, float):
        return ["dtype=mindspore.float32"]
    return None


@register
class FillDtype(Transform):
    name = "fill_dtype"

    def default_keywords(self, call: ApiCall, rewrite: Rewrite, fact: ParamFact) -> list[str] | None | Pass:
        if fact.kind is not FactKind.DEFAULT_DIFFERS or fact.torch != "dtype":
            return PASS
        return _fill_dtype(call, rewrite.arg("param"), rewrite.arg("position"))
