"""`torch.optim.Adam(...)` -> `t2ms_support.Adam(...)`: a class (or function) of a support module that `torch2ms migrate`
writes once into its output tree, where no MindSpore class computes what torch's does. The module is a file of
the tables' package (src/torch2ms/data/t2ms_support.py, MindSpore code checked against torch); its
classes take the torch class's arguments, so the call keeps them and only its name changes. `migrate` writes
the rewrite (torch2ms.migrate.transform), imports the module and writes the module at the top of the tree it writes;
a text fix cannot write the module, so where the call needs the class the finding keeps no fix (the target's
form does not do what torch does), and where it does not (`given` not passed) the target's ordinary fix.

Arguments (``rewrite: {transform: support, ...}``):

- `name`: the class, dotted from the support module's name (``t2ms_support.Adam``);
- `params`: torch's parameters the class takes, in positional order; a call passing another (or ``*args``)
  is left to the ordinary rewrite; a last parameter spelled ``*name`` takes every further positional argument
  (``*operands`` of ``torch.einsum(equation, *operands)``), unpacked ones too; a last ``**`` takes any other
  keyword (einops's axis lengths) and a last ``**mapping`` or ``*args`` of the call, passed on as written;
- `given`: parameters the call must pass for the class to be needed (``padding_idx``); absent: every call;
- `missing_only`: the class stands in only where the entry has no form for the device (no target, or one
  without a kernel there, `MappingEntry.category_for`); elsewhere the target's ordinary rewrite;
- `fallback`: a function that stands in only for the calls the fix engine leaves as they are: the entry's other
  rewrites and the target's form write every call they can (a literal `mode` that a single MindSpore call
  takes), and the support module's function takes the rest (a value known only at run time, a literal that an
  `unsupported_inputs` fact of the target names: a mode without a kernel on the device). A class (written
  before the fix engine runs) stands in for the calls `fallback_call` names. Named on a target (``target:`` in
  scripts/mapping_rewrites.yaml), beside the entry's own rewrite.

The rewrite is the entry's, or that of the target chosen for the version and device (`support_rewrite`).

Used by torch.optim.Adam, torch.nn.Embedding, torch.einsum, torch._assert_async, torchvision.ops.misc.FrozenBatchNorm2d,
torch.save, torch.load, torch.serialization.safe_globals, torch.serialization.get_unsafe_globals_in_checkpoint,
torch.hub.get_dir, torch.hub._get_torch_home, torch.hub.download_url_to_file,
torch.nn.modules.transformer._get_activation_fn, torch.nn.utils.fusion.fuse_conv_bn_eval,
torch.utils.data.default_collate, torch.utils.data.dataloader.default_collate,
torch.utils.data._utils.collate.default_collate (a function of the module read as a value is the module's too)
torch's list ops torch._foreach_add, torch._foreach_add_, torch._foreach_sub, torch._foreach_sub_,
torch._foreach_mul, torch._foreach_mul_, torch._foreach_div, torch._foreach_div_, torch._foreach_lerp,
torch._foreach_lerp_ and torch._foreach_copy_ (loops over the lists, every overload),
and (`fallback`) torch.nn.functional.interpolate, torch.nn.Upsample, torch.nn.functional.batch_norm, torch.unique,
torch.full (a fill value known only at run time), torch.nn.functional.grid_sample (bicubic) and
torch.nn.functional.kl_div (log_target), and by einops's functions and layers, which have no MindSpore backend (the support
module runs einops's pattern analysis with MindSpore operators):
einops.rearrange, einops.reduce, einops.repeat, einops.einsum, einops.pack, einops.unpack, einops.parse_shape,
einops.layers.torch.Rearrange, einops.layers.torch.Reduce and einops.layers.torch.EinMix."""

from __future__ import annotations

import ast

from .. import syntax
from ..data import folder as data_folder
from ..model import ApiCall, Category, FactKind, Fix, MappingEntry, Rewrite, Target
from .base import PASS, Context, Pass, Transform, register
from .compose import bind

NAME = "support"
MODULE = "t2ms_support"  # the support module: its static classes are src/torch2ms/data/t2ms_support.py


@register
class Support(Transform):
    name = NAME
    needs_target = False

    def whole(self, ctx: Context) -> Fix | None | Pass:
        # where the call needs the class (and migrate writes it), the target's form does not do what torch does,
        # and only migrate writes the support module: the finding keeps no fix
        # (called for a finding with a form for the device: with `missing_only`, that form is written)
        if ctx.arg("fallback", False):
            # a literal the target has no kernel or no computation for (an `unsupported_inputs` fact naming it:
            # bicubic on a CPU without that kernel) is the fallback's too: the fix leaves the call to it
            return None if ctx.target is not None and fallback_call(ctx.call, ctx.target) else PASS
        if ctx.arg("missing_only", False):
            return PASS
        given = ctx.arg("given", ())
        bound = bind(ctx.call, tuple(ctx.arg("params", ())))
        return None if bound is not None and all(name in bound for name in given) else PASS


def fallback_call(call: ApiCall, target: Target) -> bool:
    """Whether a `fallback` function (or class) stands in for `call` whatever the fix engine does: the call passes,
    for a parameter that one of `target`'s `unsupported_inputs` or `unsupported_values` facts with values names, a
    literal the fact names (``mode='bicubic'`` where the form has no kernel for that mode) or a value known only at
    run time (``mode=self.mode``)."""
    for fact in target.params:
        if fact.kind in (FactKind.UNSUPPORTED_INPUTS, FactKind.UNSUPPORTED_VALUES) and (fact.values or fact.types):
            passed = fact.passed(call.args)
            if passed is not None and (not passed.is_const or fact.matches(passed.value)):
                return True
    return False


def support_rewrite(entry: MappingEntry | None, version: tuple[int, ...] = (),
                    device: str | None = None) -> Rewrite | None:
    """The `support` rewrite of `entry`: its own, else that of its target for the version and device."""
    if entry is None:
        return None
    target = entry.target_for(version, device)
    for rewrite in (entry.rewrite, target.rewrite if target is not None else None):
        if rewrite is not None and rewrite.transform == NAME:
            return rewrite
    return None


def support_name(call: ApiCall, entry: MappingEntry | None, version: tuple[int, ...] = (),
                 device: str | None = None) -> str | None:
    """The support class (``t2ms_support.Adam``) the call is written as, where the entry's rewrite (or its
    target's, `support_rewrite`) is `support` and the call passes what the class takes (and what `given` asks
    for), and (`missing_only`) the entry has no form for the version and device; None otherwise. A `fallback`
    function is named for any call that binds: it is asked only of the calls the fix engine left; a `fallback` class only for a call the
    target's form cannot take (`fallback_call`)."""
    rewrite = support_rewrite(entry, version, device)
    if rewrite is None:
        return None
    if rewrite.arg("missing_only", False) and entry is not None \
            and entry.category_for(version, device) is not Category.MISSING:
        return None
    bound = bind(call, tuple(rewrite.arg("params", ())))
    if bound is None or any(name not in bound for name in rewrite.arg("given", ())):
        return None
    name = str(rewrite.arg("name", ""))
    if rewrite.arg("fallback", False) and name.rpartition(".")[2][:1].isupper():
        # a class is written before the fix engine runs: it stands in where the target's form cannot
        target = entry.target_for(version, device) if entry is not None else None
        if target is None or not fallback_call(call, target):
            return None
    return name if support_source(name.partition(".")[0]) is not None else None


def support_source(module: str) -> str | None:
    """The text of the support module named `module` (a file of the tables' package), or None."""
    if not module.isidentifier() or module.startswith("_"):
        return None
    path = data_folder().joinpath(f"{module}.py")
    return path.read_text(encoding="utf-8") if path.is_file() else None


def imported_support(text: str) -> dict[str, str]:
    """The support modules a port's text imports (``import t2ms_support``): name -> the module's text."""
    try:
        tree = syntax.parse(text)
    except SyntaxError:
        return {}
    found: dict[str, str] = {}
    for node in syntax.walk(tree):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
        for name in names:
            module = name.partition(".")[0]
            source = support_source(module) if module not in found else None
            if source is not None:
                found[module] = source
    return found
