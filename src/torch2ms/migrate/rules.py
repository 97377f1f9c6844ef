"""Facts the structural rewrites use: torch names and their MindSpore forms that are not one-call
renames (those live in the mapping tables and reach the file through the fix engine).

Every MindSpore name here is relative to the root `mindspore` (written from the file's root name,
see `torch2ms.scopes.choose_root`). Checked against MindSpore 2.10's signatures.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class InitRule:
    """A torch.nn.init function as a MindSpore initializer: `p.set_data(initializer(Cls(...), p.shape, p.dtype))`.

    `params`: (torch parameter, MindSpore keyword, torch default) in torch's positional order after the
    tensor. Every MindSpore keyword is written out with the value passed or torch's default, because the
    initializers' own defaults differ (Normal's sigma is 0.01, torch's std is 1)."""

    cls: str
    params: tuple[tuple[str, str, object], ...] = ()


_HE = (("a", "negative_slope", 0), ("mode", "mode", "fan_in"), ("nonlinearity", "nonlinearity", "leaky_relu"))

INITIALIZERS: dict[str, InitRule] = {
    "torch.nn.init.normal_": InitRule("Normal", (("mean", "mean", 0.0), ("std", "sigma", 1.0))),
    "torch.nn.init.trunc_normal_": InitRule("TruncatedNormal", (("mean", "mean", 0.0), ("std", "sigma", 1.0),
                                                                ("a", "a", -2.0), ("b", "b", 2.0))),
    "torch.nn.init.constant_": InitRule("Constant", (("val", "value", None),)),
    "torch.nn.init.zeros_": InitRule("Zero"),
    "torch.nn.init.ones_": InitRule("One"),
    "torch.nn.init.eye_": InitRule("Identity"),
    "torch.nn.init.dirac_": InitRule("Dirac", (("groups", "groups", 1),)),
    "torch.nn.init.xavier_uniform_": InitRule("XavierUniform", (("gain", "gain", 1.0),)),
    "torch.nn.init.xavier_normal_": InitRule("XavierNormal", (("gain", "gain", 1.0),)),
    "torch.nn.init.kaiming_uniform_": InitRule("HeUniform", _HE),
    "torch.nn.init.kaiming_normal_": InitRule("HeNormal", _HE),
    "torch.nn.init.orthogonal_": InitRule("Orthogonal", (("gain", "gain", 1.0),)),
}
INITIALIZER_MODULE = "common.initializer"
# In-place Tensor methods on a parameter's `.data` (`m.weight.data.normal_(0, 0.01)`), the older spelling of
# nn.init: the same initializers on the parameter itself.
DATA_INITIALIZERS: dict[str, InitRule] = {
    "torch.Tensor.normal_": InitRule("Normal", (("mean", "mean", 0.0), ("std", "sigma", 1.0))),
    "torch.Tensor.fill_": InitRule("Constant", (("value", "value", None),)),
    "torch.Tensor.zero_": InitRule("Zero"),
}

# torch's dtype aliases and the canonical names the mapping tables know.
DTYPE_ALIASES: dict[str, str] = {
    "torch.float": "torch.float32",
    "torch.double": "torch.float64",
    "torch.half": "torch.float16",
    "torch.long": "torch.int64",
    "torch.int": "torch.int32",
    "torch.short": "torch.int16",
    "torch.cfloat": "torch.complex64",
    "torch.cdouble": "torch.complex128",
}

# nn.Module methods whose Cell form is another method of the receiver (the tables' target names it), rewritten at
# the call site. (named_children -> name_cells().items() is the fix engine's: transforms/result_method.py)
CELL_METHODS = frozenset({
    "torch.nn.Module.children", "torch.nn.Module.named_modules", "torch.nn.Module.named_parameters",
    "torch.nn.Module.add_module", "torch.nn.Module.register_module", "torch.nn.Module.register_parameter",
})
# Methods that take no argument in MindSpore's form: a call passing any is left as it is.
NO_ARGUMENT_METHODS = frozenset({"torch.nn.Module.children",
                                 "torch.nn.Module.named_modules", "torch.nn.Module.named_parameters",
                                 "torch.nn.Module.modules"})
MODULES = "torch.nn.Module.modules"  # every Cell, self first: [c for _, c in cell.cells_and_names()]
REGISTER_BUFFER = "torch.nn.Module.register_buffer"  # a Parameter with requires_grad=False

# Tensor methods that take a size as varargs where MindSpore takes one tuple.
SIZE_METHODS = frozenset({"torch.Tensor.new_zeros", "torch.Tensor.new_ones", "torch.Tensor.new_empty"})
# Two-int transpose swaps two axes in torch; MindSpore's Tensor.transpose takes a permutation in graph mode.
TRANSPOSE = "torch.Tensor.transpose"
SWAP_METHOD = "swapaxes"

# Wrappers that only spread a model over devices: the model itself is what MindSpore runs.
DATA_PARALLEL = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                           "torch.nn.parallel.DistributedDataParallel"})
# Context managers and decorators that only stop torch recording a tape: MindSpore records none.
NO_GRAD = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad",
                     "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.inference_mode"})

# `x.size()` is the shape tuple, `x.size(d)` one of its items: MindSpore's `x.size` is the element count.
SIZE = "torch.Tensor.size"
SHAPE_ATTRIBUTE = "shape"

# A container built empty and then filled (`append`, `extend`, `d[key] = ...`): MindSpore names the parameters
# of a Cell added to an empty CellList, SequentialCell or CellDict without the container's attribute name
# (`1.norm.bias`, not `layers.1.norm.bias`), so it is filled as a Python list or dict first and built from it.
# {torch class: (the empty Python value, whether the class takes the items unpacked)}
CELL_CONTAINERS: dict[str, tuple[str, bool]] = {
    "torch.nn.ModuleList": ("[]", False),
    "torch.nn.Sequential": ("[]", True),
    "torch.nn.ModuleDict": ("{}", False),
}
PARTIAL = ("functools", "partial")  # a layer class passed as a value, with the keywords its target needs


# Tensor methods whose keyword form compiles, in GRAPH mode on the CPU, to a kernel the CPU lacks while the
# positional form does not (MindSpore 2.10: `x.chunk(2, dim=-1)` is the Chunk kernel, `x.chunk(2, -1)` a
# split): the keywords are passed by position, in this order.
POSITIONAL_IN_GRAPH: dict[str, tuple[str, ...]] = {
    "torch.Tensor.chunk": ("chunks", "dim"),
}
