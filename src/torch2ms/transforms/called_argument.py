"""`checkpoint(block, x, mask=m, use_reentrant=False)` -> `block(x, mask=m)`: a torch call whose result is its
first argument called with the others, torch's own keywords left out: what changes (activations recomputed in
the backward pass instead of kept) is memory, not values or gradients, and MindSpore code calls the function
itself (a Cell's `recompute()` is how MindSpore saves that memory).

Arguments (``rewrite: {transform: called_argument, ...}``):

- `drop`: the keywords torch's function takes for itself (``use_reentrant``); every other argument, unpacked ones
  too (``*args``, ``**kwargs``), goes to the called function as written.

Used by torch.utils.checkpoint.checkpoint."""

from __future__ import annotations

from ..model import CallKind, Fix
from .base import PASS, Context, Pass, Transform, register
from .compose import grouped


@register
class CalledArgument(Transform):
    name = "called_argument"
    codes = frozenset({"TMS101", "TMS102", "TMS103"})
    needs_target = False

    def whole(self, ctx: Context) -> Fix | None | Pass:
        call, src = ctx.call, ctx.src
        if call.kind is not CallKind.CALL:
            return PASS
        drop = set(ctx.arg("drop", ()))
        if not call.args or call.args[0].keyword is not None or call.args[0].starred:
            return None  # the function passed by keyword or unpacked: not told which argument it is
        texts = []
        for arg in call.args[1:]:
            text = src.slice(arg.span).strip()
            if arg.keyword is not None:
                if arg.keyword not in drop:
                    texts.append(f"{arg.keyword}={text}")
            elif arg.starred and not text.startswith("*"):
                texts.append(f"**{text}")  # (a `**mapping`: its span is the mapping's)
            else:
                texts.append(text)
        function = grouped(src.slice(call.args[0].span).strip(), False)
        edits = src.replaced_call(call.span, f"{function}({', '.join(texts)})")
        if edits is None:
            return None
        return Fix(title=f"Call the function {call.api} runs", edits=tuple(edits), safe=True)
