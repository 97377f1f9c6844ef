"""`torch.LongTensor([1, 2])` -> `mindspore.tensor([1, 2], dtype=mindspore.int64)`, and `torch.FloatTensor(2, 3)`
-> `mindspore.ops.zeros((2, 3), mindspore.float32)`: torch's legacy typed tensor classes, called with data (a
list or tuple written out) or with sizes (int literals, or two or more arguments). The sizes form is torch's
uninitialised memory, so zeros are one of its possible values. One argument that is neither (a name, which
may hold either) is left with its finding. The class read as a value (`x.type(torch.LongTensor)`, where
torch takes it for the tensor type) is the MindSpore dtype (unsafe: a value called later as a class would
raise). Arguments: `dtype`, the MindSpore dtype's name; `type_name`, what
`migrate` writes where the class names a type (`x: torch.LongTensor`); `sizes_only`: only the sizes form
is written so (a target's own rewrite: `torch.Tensor(2, 3)`, which its target `mindspore.Tensor` would take
as data and a dtype, and raise), any other use as the target's form.

Used by torch.Tensor (sizes only), torch.FloatTensor, torch.DoubleTensor, torch.LongTensor,
torch.IntTensor, torch.ShortTensor, torch.CharTensor, torch.ByteTensor and torch.BoolTensor."""

from __future__ import annotations

import ast

from ..model import CallKind, Fix
from .base import FIXABLE_CODES, PASS, Context, Pass, Transform, register


def _is_data(node: ast.expr) -> bool:
    return isinstance(node, (ast.List, ast.Tuple, ast.ListComp))


def _is_size(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


@register
class LegacyTensor(Transform):
    name = "legacy_tensor"
    codes = FIXABLE_CODES | {"TMS103"}
    needs_target = False

    def whole(self, ctx: Context) -> Fix | None | Pass:
        call, src = ctx.call, ctx.src
        dtype = f"mindspore.{ctx.arg('dtype')}"
        if ctx.arg("sizes_only") and not self._sizes(ctx):
            return PASS
        if call.kind is CallKind.ATTRIBUTE:  # a value: what torch takes it for is a tensor type, `x.type(C)`
            edits = src.replaced_call(call.span, dtype)
            return Fix(title=f"Name MindSpore's {dtype}", edits=tuple(edits), safe=False) if edits else None
        if call.kind is not CallKind.CALL or not call.args or any(a.keyword is not None or a.starred for a in call.args):
            return None
        texts = [src.slice(a.span).strip() for a in call.args]
        try:
            nodes = [ast.parse(f"({text})", mode="eval").body for text in texts]
        except SyntaxError:
            return None
        if len(nodes) == 1 and _is_data(nodes[0]):
            text = f"mindspore.tensor({texts[0]}, dtype={dtype})"
        elif len(nodes) > 1 or _is_size(nodes[0]):
            size = f"({texts[0]},)" if len(texts) == 1 else f"({', '.join(texts)})"
            text = f"mindspore.ops.zeros({size}, {dtype})"
        else:
            return None  # one argument that may be data or a size
        edits = src.replaced_call(call.span, text)
        if edits is None:
            return None
        return Fix(title=f"Build the tensor with MindSpore's {dtype}", edits=tuple(edits), safe=True)

    @staticmethod
    def _sizes(ctx: Context) -> bool:
        """Whether the call is the sizes form: int literals, or two or more arguments, none a keyword."""
        call = ctx.call
        if call.kind is not CallKind.CALL or not call.args or any(a.keyword is not None or a.starred for a in call.args):
            return False
        if len(call.args) > 1:
            return True
        try:
            node = ast.parse(f"({ctx.src.slice(call.args[0].span).strip()})", mode="eval").body
        except SyntaxError:
            return False
        return _is_size(node)
