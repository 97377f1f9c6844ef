"""`torch.jit.is_scripting()` -> `False`: a query about torch's own machinery whose answer is one fixed
Python value in MindSpore code (the tables' `value`, a literal), written in place of the call; arguments that
run nothing (names, attributes, literals) go with it, a call passing any other is left to its finding.

Used by torch.jit.is_scripting, torch.jit.is_tracing, torch.compiler.is_exporting, torch.is_autocast_enabled and
torch.is_autocast_cpu_enabled (torch's mixed precision is never on in MindSpore code), and
torch.utils.data.get_worker_info (None: not in a loader worker)."""

from __future__ import annotations

import ast

from ..model import Edit, Fix
from .base import Context, Pass, Transform, register
from .edits import runs_nothing


@register
class PythonValue(Transform):
    name = "python_value"
    codes = frozenset({"TMS103"})
    needs_target = False

    def whole(self, ctx: Context) -> Fix | None | Pass:
        value = str(ctx.arg("value", ""))
        try:
            ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return None  # the tables' test names a value that is not a literal
        # arguments that run nothing (``torch.is_autocast_enabled(device)``) go with the call
        if not runs_nothing(ctx.src, ctx.call):
            return None
        return Fix(title=f"Write its value in MindSpore code: {value}", edits=(Edit(ctx.call.span, value),), safe=True)
