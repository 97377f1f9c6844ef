"""`torch._C._jit_set_profiling_executor(False)` as a statement -> nothing: a call whose only effect is a setting of
torch's own machinery that MindSpore code never runs (TorchScript's executor and fusers), or a query of it whose
answer the statement throws away. The statement goes (``pass`` where it is the only statement of its block, or
shares its line); arguments must run nothing (names, attributes, literals). A call whose value is used is left to
its finding.

Used by torch's TorchScript switches torch._C._jit_set_profiling_executor, torch._C._jit_set_profiling_mode,
torch._C._jit_override_can_fuse_on_cpu, torch._C._jit_override_can_fuse_on_gpu,
torch._C._jit_set_texpr_fuser_enabled, torch._C._jit_set_nvfuser_enabled, torch._C._jit_set_nvfuser_guard_mode
and their queries torch._C._jit_can_fuse_on_cpu and torch._C._jit_can_fuse_on_gpu."""

from __future__ import annotations

from ..model import Fix
from .base import Context, Pass, Transform, register
from .edits import runs_nothing


@register
class DroppedCall(Transform):
    name = "dropped_call"
    codes = frozenset({"TMS103"})
    needs_target = False

    def whole(self, ctx: Context) -> Fix | None | Pass:
        if not runs_nothing(ctx.src, ctx.call):
            return None
        statement = ctx.src.expression_statement(ctx.call.span)
        if statement is None:
            return None  # the value is used: the finding says what to do
        return Fix(title="Remove the call: a setting of torch's own machinery MindSpore code never runs",
                   edits=(statement,), safe=True)
