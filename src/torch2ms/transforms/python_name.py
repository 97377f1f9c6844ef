"""`torch.jit.Final` -> `typing.Final`: a torch name whose plain-Python equivalent is a name of the standard
library (the tables' `name`). `migrate` writes it and imports its module (`torch2ms.migrate.transform`);
a text fix cannot add that import beside the file's own, so the finding keeps no fix there.

A dotted name imports its module (``urllib.parse``); a name of the support module (``t2ms_support.HASH_REGEX``) is
spelled by the tree's import of it. Calls of the name (``urlparse(u)``) and of a method of it (``PATTERN.search(s)``)
are written the same way.

Used by torch.jit.Final, torch.hub.HASH_REGEX, torch.hub.urlparse, torch.__version__ (`mindspore.__version__`),
torch.utils.data.IterableDataset (as a type: the support module's, which tells a stream dataset by its protocol), the reductions
torch.distributed.ReduceOp.SUM, torch.distributed.ReduceOp.PRODUCT, torch.distributed.ReduceOp.MAX and
torch.distributed.ReduceOp.MIN (`mindspore.ops.ReduceOp.SUM`, ...: `module` names what the port imports for a member
of a class), torch.Size (`tuple`: MindSpore's Tensor.shape is a tuple) and the typing names torch.jit.annotations
re-exports: torch.jit.annotations.Any, torch.jit.annotations.Dict, torch.jit.annotations.List,
torch.jit.annotations.Optional, torch.jit.annotations.Tuple, torch.jit.annotations.Union, and torch's float
constants torch.pi, torch.e, torch.inf and torch.nan (`math.pi`, ...: the same Python floats). With `types`
(a torch base class named as a type, in isinstance or issubclass), the tuple of the MindSpore classes its public
subclasses are written as: torch.nn.modules.batchnorm._BatchNorm, torch.nn.modules.instancenorm._InstanceNorm."""

from __future__ import annotations

from ..model import Fix
from .base import PASS, Context, Pass, Transform, register


@register
class PythonName(Transform):
    name = "python_name"
    codes = frozenset({"TMS106"})
    needs_target = False

    def whole(self, ctx: Context) -> Fix | None | Pass:
        return PASS if ctx.target is not None else None
