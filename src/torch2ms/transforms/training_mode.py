"""`nn.BatchNorm2d(c)` -> `mindspore.nn.BatchNorm2d(c).set_train()`: a layer whose forward depends on the
training flag. A torch module starts in training mode, a MindSpore Cell in inference mode, so the rewritten
constructor call sets it (a later eval()/set_train(False) of the layer or of a Cell holding it still switches
it; `nn.BatchNorm2d(c).eval()` sets the mode itself).

Used by torch.nn.BatchNorm1d, torch.nn.BatchNorm2d, torch.nn.BatchNorm3d, torch.nn.SyncBatchNorm,
torch.nn.Dropout, torch.nn.Dropout1d, torch.nn.Dropout2d, torch.nn.Dropout3d, torch.nn.AlphaDropout and
torch.nn.FeatureAlphaDropout."""

from __future__ import annotations

import re

from ..model import Edit
from .base import Context, Transform, register
from .edits import partial_call


_MODE_CALL = re.compile(r"\s*\.\s*(eval|train|set_train)\s*\(")


@register
class TrainingMode(Transform):
    name = "training_mode"

    def call_edits(self, ctx: Context, edits: list[Edit]) -> list[Edit] | None:
        src, call = ctx.src, ctx.call
        if ctx.target is None or not ctx.target.api.startswith("mindspore.") or partial_call(call):
            return edits  # a partial builds the layer later: a Cell holding it sets its mode
        end = src.offset(call.span.end_line, call.span.end_col)
        if _MODE_CALL.match(src.text, end):
            return edits
        return [*edits, Edit(src.span_of(end, end), ".set_train()")]
