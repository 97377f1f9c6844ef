"""MindSpore forms of torch classes and functions that no single MindSpore class or function gives on the
device, written by torch2ms migrate.

`torch2ms migrate` writes this file once at the top of its output tree when a port uses it; a port
imports it as `t2ms_support`. Each class or function takes the torch API's arguments and computes what torch
computes (checked against torch 2.13 with MindSpore 2.10 on CPU, PyNative and GRAPH mode); the einops
section gives einops's functions and layers for MindSpore tensors.
"""

import math

import mindspore
import numpy
from mindspore import ops
from mindspore.common.initializer import Normal, initializer


class Adam(mindspore.experimental.optim.AdamW):
    """torch.optim.Adam. mindspore.experimental.optim.Adam adds eps to the second moment's root before
    its bias correction (torch after it) and ignores amsgrad; this is mindspore.experimental.optim.AdamW's
    update, which adds eps as torch does, with torch's L2 weight decay (weight_decay * param added to the
    gradient) unless decoupled_weight_decay is true (then AdamW's). foreach, capturable, differentiable
    and fused choose how torch computes the same update: they are accepted and change nothing."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         maximize=maximize)
        self.decoupled_weight_decay = decoupled_weight_decay

    def construct(self, gradients):
        self.assignadd(self.state_step, self.increase_tensor)
        for group_id, group in enumerate(self.param_groups):
            beta1, beta2 = group["betas"]
            start_id = self.group_start_id[group_id]
            end_id = self.group_start_id[group_id + 1]
            grads = tuple(grad if not group.get("maximize") else ops.neg(grad)
                          for grad in gradients[start_id:end_id])
            weight_decay = group.get("weight_decay")
            if not self.decoupled_weight_decay:
                grads = self._decay_weight(weight_decay, self.parameters[start_id:end_id], grads)
                weight_decay = 0.0
            self.implementation(self.lrs[group_id], weight_decay, beta1, beta2, group.get("amsgrad"),
                                group.get("eps"), grads, start_id, end_id)
        return True


class Embedding(mindspore.nn.Cell):
    """torch.nn.Embedding(num_embeddings, embedding_dim, padding_idx), its table named `weight` as torch's: the
    padding row starts at zero and gets no gradient, so training leaves it as it is (mindspore.nn.Embedding
    zeroes it and then trains it). The lookup at padding positions is the row itself, its gradient stopped."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None):
        super().__init__()
        if padding_idx is not None and padding_idx < 0:
            padding_idx += num_embeddings  # torch counts a negative index from the end
        table = initializer(Normal(1.0), (num_embeddings, embedding_dim), mindspore.float32).init_data().asnumpy()
        if padding_idx is not None:
            table[padding_idx] = 0
        self.weight = mindspore.Parameter(mindspore.Tensor(table), name="weight")
        self.padding_idx = padding_idx
        self.padding_row = -1 if padding_idx is None else padding_idx

    def construct(self, ids):
        out = ops.gather(self.weight, ids, 0)
        keep = ops.expand_dims(ids != self.padding_row, -1).astype(out.dtype)
        return out * keep + ops.stop_gradient(out * (1 - keep))



class FrozenBatchNorm2d(mindspore.nn.Cell):
    """torchvision.ops.misc.FrozenBatchNorm2d(num_features, eps=1e-05): a batch norm whose statistics and affine
    parameters are fixed (torch's buffers `weight`, `bias`, `running_mean`, `running_var`, here Parameters that
    never train): x * weight / sqrt(running_var + eps) + bias - running_mean * weight / sqrt(running_var + eps),
    over the channels of an NCHW input, in training as in evaluation."""

    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = mindspore.Parameter(ops.ones(num_features, mindspore.float32), name="weight", requires_grad=False)
        self.bias = mindspore.Parameter(ops.zeros(num_features, mindspore.float32), name="bias", requires_grad=False)
        self.running_mean = mindspore.Parameter(ops.zeros(num_features, mindspore.float32), name="running_mean",
                                                requires_grad=False)
        self.running_var = mindspore.Parameter(ops.ones(num_features, mindspore.float32), name="running_var",
                                               requires_grad=False)

    def construct(self, x):
        scale = self.weight.reshape(1, -1, 1, 1) * ops.rsqrt(self.running_var.reshape(1, -1, 1, 1) + self.eps)
        return x * scale + (self.bias.reshape(1, -1, 1, 1) - self.running_mean.reshape(1, -1, 1, 1) * scale)

_EINSUM_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"  # torch numbers its labels in this order


def _einsum_labels(term, ndim, ellipsis_dims):
    """The labels of one operand's axes: a letter's number in torch's order, an ellipsis axis 52 + its place
    among the ellipsis axes counted from the right of the widest ellipsis (so that they broadcast)."""
    letters = term.replace("...", "")
    if any(c not in _EINSUM_LETTERS for c in letters):
        raise ValueError(f"einsum(): invalid subscript in {term!r}: only letters and '...'")
    if "..." not in term:
        if len(letters) != ndim:
            raise ValueError(f"einsum(): the term {term!r} has {len(letters)} subscripts for an operand of "
                             f"{ndim} dimensions")
        return [_EINSUM_LETTERS.index(c) for c in term]
    before, _, after = term.partition("...")
    count = ndim - len(letters)
    if count < 0:
        raise ValueError(f"einsum(): the term {term!r} has more subscripts than its operand has dimensions")
    middle = [52 + ellipsis_dims - count + k for k in range(count)]
    return [_EINSUM_LETTERS.index(c) for c in before] + middle + [_EINSUM_LETTERS.index(c) for c in after]


def _einsum_sum(labels, drop):
    """(the axes of `labels` in `drop`, the labels left)."""
    return tuple(i for i, label in enumerate(labels) if label in drop), [label for label in labels if label not in drop]


def _einsum_perm(labels, order):
    perm = tuple(labels.index(label) for label in order)
    return () if perm == tuple(range(len(perm))) else perm


def _einsum_pair(la, sa, lb, sb, keep):
    """The steps that contract two operands (labels, shapes) over their shared labels that `keep` does not hold,
    as one batched matrix product (batch, left, shared) @ (batch, shared, right); a label of size 1 broadcasts."""
    sum_a, la2 = _einsum_sum(la, {label for label in la if label not in lb and label not in keep})
    sum_b, lb2 = _einsum_sum(lb, {label for label in lb if label not in la and label not in keep})
    size = {}
    for labels, shape in ((la, sa), (lb, sb)):
        for label, n in zip(labels, shape):
            size[label] = max(size.get(label, 1), n)
    batch = [label for label in la2 if label in lb2 and label in keep]
    shared = [label for label in la2 if label in lb2 and label not in keep]
    left = [label for label in la2 if label not in lb2]
    right = [label for label in lb2 if label not in la2]

    def sizes(labels):
        return tuple(size[label] for label in labels)

    def count(labels):
        n = 1
        for label in labels:
            n *= size[label]
        return n

    step = (sum_a, _einsum_perm(la2, batch + left + shared), sizes(batch + left + shared),
            (count(batch), count(left), count(shared)),
            sum_b, _einsum_perm(lb2, batch + shared + right), sizes(batch + shared + right),
            (count(batch), count(shared), count(right)), sizes(batch + left + right))
    return step, batch + left + right, [size[label] for label in batch + left + right]


@ops.constexpr
def _einsum_plan(equation, shapes):
    """The steps of an einsum, computed from the equation and the operands' shapes alone (in GRAPH mode, while
    the graph compiles): per operand its diagonals and the axes summed first, per further operand the steps of
    its contraction with the product so far, and the axes summed and the order of the result."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum(): {len(terms)} terms in the equation for {len(shapes)} operands")
    ellipsis_dims = max([len(s) - len(t.replace("...", "")) for s, t in zip(shapes, terms) if "..." in t], default=0)
    labelled, counts, diagonals = [], {}, []
    for shape, term in zip(shapes, terms):
        labels = _einsum_labels(term, len(shape), ellipsis_dims)
        shape = list(shape)
        for label in labels:
            counts[label] = counts.get(label, 0) + 1
        steps = []
        while len(set(labels)) < len(labels):  # a subscript repeated in one term: the diagonal of its two axes
            label = next(label for label in labels if labels.count(label) > 1)
            first = labels.index(label)
            second = labels.index(label, first + 1)
            steps.append((first, second))
            kept = [i for i in range(len(labels)) if i not in (first, second)]
            labels = [labels[i] for i in kept] + [label]
            shape = [shape[i] for i in kept] + [min(shape[first], shape[second])]
        diagonals.append(tuple(steps))
        labelled.append((labels, shape))
    if arrow:
        out = _einsum_labels(rhs, len(rhs.replace("...", "")) + (ellipsis_dims if "..." in rhs else 0),
                             ellipsis_dims)
        if len(set(out)) < len(out) or any(label not in counts for label in out):
            raise ValueError(f"einsum(): the output term {rhs!r} repeats a subscript or names one no input has")
    else:
        out = [label for label in sorted(counts) if label >= 52] + \
            [label for label in sorted(counts) if label < 52 and counts[label] == 1]
    labels, shape = labelled[0]
    pairs = []
    for i in range(1, len(labelled)):
        keep = set(out)
        for later, _ in labelled[i + 1:]:
            keep.update(later)
        step, labels, shape = _einsum_pair(labels, shape, labelled[i][0], labelled[i][1], keep)
        pairs.append(step)
    axes, labels = _einsum_sum(labels, {label for label in labels if label not in out})
    return tuple(diagonals), tuple(pairs), axes, _einsum_perm(labels, out)


def _einsum_sublists(args):
    """torch's sublist form (operand, sublist, ..., [output sublist]) as (equation, operands)."""

    def term(sublist):
        return "".join("..." if item is Ellipsis else _EINSUM_LETTERS[item] for item in sublist)

    equation = ",".join(term(args[i + 1]) for i in range(0, len(args) - 1, 2))
    if len(args) % 2:
        equation += "->" + term(args[-1])
    return equation, tuple(args[i] for i in range(0, len(args) - 1, 2))


def _einsum_run(x, axes, perm):
    if axes:
        x = x.sum(axis=axes)
    if perm:
        x = ops.transpose(x, perm)
    return x


def einsum(*args):
    """torch.einsum(equation, *operands) on operations MindSpore 2.10 runs on the CPU (mindspore.ops.einsum and
    mindspore.mint.einsum have no CPU kernel), in PyNative and GRAPH mode: repeated subscripts in one operand take
    its diagonal, subscripts no other term holds are summed first, the operands are contracted pairwise as
    batched matrix products, and the result is ordered as the output term says (without '->': the ellipsis axes,
    then the subscripts that occur once, in torch's order, upper case first). Operands may follow the equation,
    come as one list or tuple, or in torch's sublist form; size-1 axes broadcast."""
    if isinstance(args[0], str):
        equation, operands = args[0], args[1:]
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = operands[0]
    else:
        equation, operands = _einsum_sublists(args)
    diagonals, pairs, axes, perm = _einsum_plan(equation, tuple(x.shape for x in operands))
    xs = []
    for x, steps in zip(operands, diagonals):
        for first, second in steps:
            x = ops.diagonal(x, 0, first, second)
        xs.append(x)
    x = xs[0]
    for i, (sum_a, perm_a, wide_a, flat_a, sum_b, perm_b, wide_b, flat_b, shape) in enumerate(pairs):
        a = ops.broadcast_to(_einsum_run(x, sum_a, perm_a), wide_a).reshape(flat_a)
        b = ops.broadcast_to(_einsum_run(xs[i + 1], sum_b, perm_b), wide_b).reshape(flat_b)
        x = ops.bmm(a, b).reshape(shape)
    return _einsum_run(x, axes, perm)


def assert_async(tensor):
    """torch._assert_async(tensor): raises, as torch does on the CPU (at once), where the tensor's one value is
    zero; a tensor of several values or none raises as torch's."""
    if tensor.size != 1:
        raise RuntimeError(f"Boolean value of Tensor with {'no values' if tensor.size == 0 else 'more than one value'}"
                           " is ambiguous")
    if not bool(tensor.reshape(()).asnumpy()):
        raise RuntimeError("Expected Tensor with single nonzero value, but got zero")

def in_place(function, position, *args, **kwargs):
    """A torch function with an `inplace` parameter read as a value (``act = F.silu``, called later as ``act(x,
    inplace=True)``), as `function`, its MindSpore form: `function` runs out of place and, where the call asks for
    inplace (by keyword or at `position`, inplace's position in torch's signature), its result is copied into the
    input, which the call returns, as torch's does. MindSpore 2.10 has no CPU kernel for these functions' in-place
    forms (InplaceSiLU, InplaceReLU, ...); out of place they compute the same values."""
    inplace = kwargs.pop("inplace", False)
    if len(args) > position:
        inplace = args[position]
        args = args[:position] + args[position + 1:]
    out = function(*args, **kwargs)
    if not inplace:
        return out
    return (args[0] if args else kwargs["input"]).copy_(out)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """torch.nn.functional.batch_norm over the channels (dim 1): in training (or without running statistics) the
    batch's mean and biased variance normalise, and running statistics given are updated in place as torch's are
    (the unbiased variance, weighted by momentum); in evaluation the running statistics normalise (None raises, as
    torch's). weight and bias are optional."""
    dims = (0,) + tuple(range(2, input.ndim))
    shape = (1, -1) + (1,) * (input.ndim - 2)
    if training:
        mean = input.mean(dims)
        var = input.var(dims, ddof=0)
        if running_mean is not None and running_var is not None:
            count = input.size // input.shape[1]
            ops.assign(running_mean, (1 - momentum) * running_mean + momentum * ops.stop_gradient(mean))
            unbiased = var * (count / max(count - 1, 1))
            ops.assign(running_var, (1 - momentum) * running_var + momentum * ops.stop_gradient(unbiased))
    elif running_mean is None or running_var is None:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    else:
        mean, var = running_mean, running_var
    out = (input - mean.reshape(shape)) / ops.sqrt(var.reshape(shape) + eps)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out

# ------------------------------------------------------------------ resizing
# torch.nn.functional.interpolate is separable: each spatial axis of the result is a fixed linear map of the same
# axis of the input (nearest modes pick one element, the others weigh neighbours). The maps are computed as torch
# computes its sampling positions and weights, once per shape when the graph is built, and applied with a gather
# (nearest, any dtype) or a matrix product (linear, cubic and area modes), so every mode runs on every device.
_RESIZE_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


def _resize_scale(in_size, out_size, align_corners, scale):
    """torch's area_pixel_compute_scale: the input distance between neighbouring output samples."""
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else in_size / out_size


def _cubic(x, a):
    x = abs(x)
    if x < 1.0:
        return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    if x < 2.0:
        return (((x - 5.0) * x + 8.0) * x - 4.0) * a
    return 0.0


def _resize_row(mode, in_size, i, scale, align_corners, antialias):
    """The weights {input index: weight} of output sample `i` along one axis."""
    if mode in ("nearest", "nearest-exact"):  # torch computes these positions in float32
        offset = 0.5 if mode == "nearest-exact" else 0.0
        return {min(int(numpy.floor(numpy.float32(i + offset) * numpy.float32(scale))), in_size - 1): 1.0}
    if mode == "area":  # adaptive average pooling
        start = (i * in_size) // scale
        end = -((-(i + 1) * in_size) // scale)
        return {j: 1.0 / (end - start) for j in range(start, end)}
    cubic = mode == "bicubic"
    if antialias:  # torch's _upsample_*_aa: a filter widened by the scale when the axis shrinks
        size = 4.0 if cubic else 2.0
        support = size * 0.5 * scale if scale >= 1.0 else size * 0.5
        inverse = 1.0 / scale if scale >= 1.0 else 1.0
        center = scale * (i + 0.5)
        first = max(int(center - support + 0.5), 0)
        last = min(int(center + support + 0.5), in_size)
        weights = {}
        for j in range(first, last):
            x = (j - center + 0.5) * inverse
            weights[j] = _cubic(x, -0.5) if cubic else max(0.0, 1.0 - abs(x))
        total = sum(weights.values())
        return {j: w / total for j, w in weights.items()} if total != 0.0 else weights
    source = scale * i if align_corners else scale * (i + 0.5) - 0.5
    if not cubic:
        source = min(max(source, 0.0), in_size - 1.0)
        low = int(math.floor(source))
        high = min(low + 1, in_size - 1)
        weights = {low: 1.0 - (source - low)}
        weights[high] = weights.get(high, 0.0) + source - low
        return weights
    low = int(math.floor(source))
    t = source - low
    weights = {}
    for k, w in enumerate((_cubic(t + 1.0, -0.75), _cubic(t, -0.75), _cubic(1.0 - t, -0.75), _cubic(2.0 - t, -0.75))):
        j = min(max(low - 1 + k, 0), in_size - 1)
        weights[j] = weights.get(j, 0.0) + w
    return weights


@ops.constexpr
def _resize_plan(mode, shape, size, scale_factor, align_corners, recompute, antialias):
    """Per spatial axis (axis, input indices or None, weights as an input x output matrix or None)."""
    dims = len(shape) - 2
    if dims < 1 or dims > 3 or _RESIZE_DIMS.get(mode, dims) != dims:
        raise ValueError(f"interpolate: mode '{mode}' does not take a {len(shape)}-D input")
    if mode not in _RESIZE_DIMS and mode not in ("nearest", "nearest-exact", "area"):
        raise ValueError(f"interpolate: unknown mode '{mode}'")
    if align_corners is not None and mode not in _RESIZE_DIMS:
        raise ValueError("interpolate: align_corners takes only the linear and cubic modes")
    if antialias and mode not in ("bilinear", "bicubic"):
        raise ValueError("interpolate: antialias takes only the bilinear and bicubic modes")
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: give either size or scale_factor")
    if size is not None:
        sizes = tuple(size) if isinstance(size, (tuple, list)) else (size,) * dims
        scales = (None,) * dims
    else:
        scales = tuple(scale_factor) if isinstance(scale_factor, (tuple, list)) else (scale_factor,) * dims
        sizes = tuple(int(math.floor(float(n) * s)) for n, s in zip(shape[2:], scales))
        if recompute:
            scales = (None,) * dims
    if len(sizes) != dims or len(scales) != dims:
        raise ValueError(f"interpolate: {dims} spatial size(s) expected")
    plan = []
    for axis, (in_size, out_size, s) in enumerate(zip(shape[2:], sizes, scales)):
        if mode == "area":
            rows = [_resize_row(mode, in_size, i, out_size, False, False) for i in range(out_size)]
        else:
            scale = _resize_scale(in_size, out_size, bool(align_corners), s)
            rows = [_resize_row(mode, in_size, i, scale, bool(align_corners), antialias) for i in range(out_size)]
        if mode in ("nearest", "nearest-exact"):
            plan.append((axis + 2, tuple(next(iter(row)) for row in rows), None))
        else:
            plan.append((axis + 2, None, tuple(tuple(row.get(j, 0.0) for i, row in enumerate(rows))
                                              for j in range(in_size))))
    return tuple(plan)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """torch.nn.functional.interpolate with torch's sampling positions and weights in every mode (nearest,
    nearest-exact, linear, bilinear, bicubic, trilinear, area; antialias for bilinear and bicubic), on any
    device, in PyNative and GRAPH mode: MindSpore 2.10's CPU has no kernel for mint's linear and cubic modes,
    and mindspore.ops.interpolate's bicubic weights differ from torch's and it has no antialias."""
    plan = _resize_plan(mode, tuple(input.shape), size, scale_factor, align_corners, bool(recompute_scale_factor),
                        bool(antialias))
    x = input
    for axis, index, weights in plan:
        if index is not None:
            x = ops.gather(x, mindspore.Tensor(index, mindspore.int32), axis)
        else:
            x = ops.swapaxes(ops.matmul(ops.swapaxes(x, axis, -1), mindspore.Tensor(weights, x.dtype)), axis, -1)
    return x


class Upsample(mindspore.nn.Cell):
    """torch.nn.Upsample(size, scale_factor, mode, align_corners, recompute_scale_factor): this module's
    interpolate as a layer (torch's sampling in every mode, on every device)."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None):
        super().__init__()
        self.size = tuple(size) if isinstance(size, list) else size
        self.scale_factor = tuple(scale_factor) if isinstance(scale_factor, list) else scale_factor
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def construct(self, input):
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           self.recompute_scale_factor)


# ------------------------------------------------------------------ einops on MindSpore tensors
# einops dispatches on the tensor's library and has no MindSpore backend. rearrange / reduce / repeat and the
# Rearrange / Reduce layers below take einops's arguments and run einops's own pattern analysis when the
# graph is built (a constant function of the pattern and the input's shape), then reshape, permute, reduce
# and tile with MindSpore operators: they run in PyNative and GRAPH mode and are differentiable; einops's
# einsum and EinMix contract with this module's einsum. Importing
# this module also registers a MindSpore backend with einops, so its other functions (pack, unpack,
# parse_shape, asnumpy) take MindSpore tensors in PyNative mode.
try:
    from einops._backends import AbstractBackend as _EinopsBackend
    from einops.einops import _prepare_transformation_recipe, _reconstruct_from_shape_uncached
    from einops.layers import RearrangeMixin as _RearrangeMixin
    from einops.layers import ReduceMixin as _ReduceMixin
    from einops.layers._einmix import _EinmixMixin
    from einops.einops import _compactify_pattern_for_einsum
    import einops as _einops
except ImportError:  # the port uses no einops, or einops is not installed: say so where it is used
    _einops = None

    class _EinopsMissing:
        def __init__(self, *args, **kwargs):
            raise ImportError("this port uses einops: install it (pip install einops)")

    _RearrangeMixin = _ReduceMixin = _EinopsBackend = _EinmixMixin = _EinopsMissing


@ops.constexpr
def _einops_plan(pattern, operation, lengths, shape):
    """What einops does to a tensor of `shape`: (first shape, permutation, reduced axes, added axes, tile
    repeats, final shape); None where a step is not needed."""
    if _einops is None:
        raise ImportError("this port uses einops: install it (pip install einops)")
    recipe = _prepare_transformation_recipe(pattern, operation, tuple(name for name, _ in lengths), len(shape))
    first, order, reduced, added, final, count = _reconstruct_from_shape_uncached(recipe, list(shape), list(lengths))
    repeats = [1] * count
    for position, length in added.items():
        repeats[position] = length
    return (None if first is None else tuple(first), None if order is None else tuple(order), tuple(reduced),
            tuple(sorted(added)), tuple(repeats), None if final is None else tuple(final))


def _einops_apply(tensor, pattern, operation, lengths):
    if isinstance(tensor, (list, tuple)):
        tensor = ops.stack(tensor)
    first, order, reduced, added, repeats, final = _einops_plan(pattern, operation, lengths, tensor.shape)
    if first is not None:
        tensor = tensor.reshape(first)
    if order is not None:
        tensor = tensor.permute(*order)
    if reduced:
        if operation == "sum":
            tensor = tensor.sum(axis=reduced)
        elif operation == "mean":
            tensor = tensor.mean(axis=reduced)
        elif operation == "max":
            tensor = tensor.amax(axis=reduced)
        elif operation == "min":
            tensor = tensor.amin(axis=reduced)
        else:  # prod, any, all: one axis at a time, the last first
            for axis in reduced[::-1]:
                if operation == "prod":
                    tensor = tensor.prod(axis)
                elif operation == "any":
                    tensor = tensor.any(axis)
                else:
                    tensor = tensor.all(axis)
    if added:
        for position in added:
            tensor = tensor.expand_dims(position)
        tensor = tensor.tile(repeats)
    if final is not None:
        tensor = tensor.reshape(final)
    return tensor


def rearrange(tensor, pattern, **axes_lengths):
    """einops.rearrange."""
    return _einops_apply(tensor, pattern, "rearrange", tuple(axes_lengths.items()))


def reduce(tensor, pattern, reduction, **axes_lengths):
    """einops.reduce with a named reduction (min, max, sum, mean, prod, any, all)."""
    return _einops_apply(tensor, pattern, reduction, tuple(axes_lengths.items()))


def repeat(tensor, pattern, **axes_lengths):
    """einops.repeat."""
    return _einops_apply(tensor, pattern, "repeat", tuple(axes_lengths.items()))


class Rearrange(_RearrangeMixin, mindspore.nn.Cell):
    """einops.layers.torch.Rearrange."""

    def construct(self, x):
        return _einops_apply(x, self.pattern, "rearrange", self._axes_lengths)


class Reduce(_ReduceMixin, mindspore.nn.Cell):
    """einops.layers.torch.Reduce."""

    def construct(self, x):
        return _einops_apply(x, self.pattern, self.reduction, self._axes_lengths)


@ops.constexpr
def _einops_equation(pattern):
    """einops's einsum pattern (axis names as words, `->` required) as a letters-only einsum equation."""
    if _einops is None:
        raise ImportError("this port uses einops: install it (pip install einops)")
    return _compactify_pattern_for_einsum(pattern)


def einops_einsum(*tensors_and_pattern):
    """einops.einsum(*tensors, pattern), on this module's einsum (any device)."""
    return einsum(_einops_equation(tensors_and_pattern[-1]), *tensors_and_pattern[:-1])


class EinMix(_EinmixMixin, mindspore.nn.Cell):
    """einops.layers.torch.EinMix: its weight and bias are `weight` and `bias`, initialized as einops does
    (uniform within the bounds of the layer's fan-in); the contraction is this module's einsum."""

    def _create_rearrange_layers(self, pre_reshape_pattern, pre_reshape_lengths, post_reshape_pattern,
                                 post_reshape_lengths):
        self.pre_rearrange = None if pre_reshape_pattern is None else \
            Rearrange(pre_reshape_pattern, **pre_reshape_lengths)
        self.post_rearrange = None if post_reshape_pattern is None else \
            Rearrange(post_reshape_pattern, **post_reshape_lengths)

    def _create_parameters(self, weight_shape, weight_bound, bias_shape, bias_bound):
        self.weight = mindspore.Parameter(ops.uniform(tuple(weight_shape), mindspore.Tensor(-weight_bound),
                                                      mindspore.Tensor(weight_bound)), name="weight")
        self.bias = None if bias_shape is None else mindspore.Parameter(
            ops.uniform(tuple(bias_shape), mindspore.Tensor(-bias_bound), mindspore.Tensor(bias_bound)), name="bias")

    def construct(self, x):
        if self.pre_rearrange is not None:
            x = self.pre_rearrange(x)
        x = einsum(self.einsum_pattern, x, self.weight)
        if self.bias is not None:
            x = x + self.bias
        if self.post_rearrange is not None:
            x = self.post_rearrange(x)
        return x


class _EinopsMindSpore(_EinopsBackend):
    """einops's backend for MindSpore tensors (found by einops among the backends' subclasses)."""

    framework_name = "mindspore"

    def is_appropriate_type(self, tensor):
        return isinstance(tensor, mindspore.Tensor)

    def from_numpy(self, x):
        return mindspore.Tensor(x)

    def to_numpy(self, x):
        return x.asnumpy()

    def arange(self, start, stop):
        return ops.arange(start, stop, dtype=mindspore.int64)

    def shape(self, x):
        return tuple(x.shape)

    def reshape(self, x, shape):
        return x.reshape(tuple(shape))

    def transpose(self, x, axes):
        return x.permute(*axes)

    def reduce(self, x, operation, axes):
        return _einops_apply(x, " ".join(f"a{i}" for i in range(x.ndim)) + " -> "
                             + " ".join(f"a{i}" for i in range(x.ndim) if i not in axes), operation, ())

    def stack_on_zeroth_dimension(self, tensors):
        return ops.stack(list(tensors))

    def add_axis(self, x, new_position):
        return x.expand_dims(new_position)

    def tile(self, x, repeats):
        return x.tile(tuple(repeats))

    def concat(self, tensors, axis):
        return ops.cat(list(tensors), axis)

    def is_float_type(self, x):
        return x.dtype in (mindspore.float16, mindspore.float32, mindspore.float64, mindspore.bfloat16)


def pack(tensors, pattern):
    """einops.pack (PyNative mode)."""
    return _einops.pack(tensors, pattern)


def unpack(tensor, packed_shapes, pattern):
    """einops.unpack (PyNative mode)."""
    return _einops.unpack(tensor, packed_shapes, pattern)


def parse_shape(x, pattern):
    """einops.parse_shape."""
    return _einops.parse_shape(x, pattern)


# ------------------------------------------------------------------ checkpoints, the hub's cache, batches
# torch.save pickles any object, tensors in it as storages; torch.load reads that (a zip archive: data.pkl and one
# file of bytes per storage). Here save pickles the object with each MindSpore tensor as a NumPy array (and
# whether it was a Parameter), and load reads that, a file torch wrote (its tensors as MindSpore tensors, with no
# torch needed) or a MindSpore checkpoint (mindspore.load_checkpoint's dict of Parameters).

HASH_REGEX = __import__("re").compile(r"-([a-f0-9]*)\.")  # torch.hub.HASH_REGEX: a file name's hash prefix

_STORAGE_DTYPES = {"DoubleStorage": "float64", "FloatStorage": "float32", "HalfStorage": "float16",
                   "LongStorage": "int64", "IntStorage": "int32", "ShortStorage": "int16", "CharStorage": "int8",
                   "ByteStorage": "uint8", "BoolStorage": "bool"}
_SAFE = {("collections", "OrderedDict"), ("_codecs", "encode"), ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "slice"),
         ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
         ("numpy", "ndarray"), ("numpy", "dtype"), ("torch._utils", "_rebuild_tensor_v2"),
         ("torch._utils", "_rebuild_parameter")}
_SAFE.update(("torch", name) for name in _STORAGE_DTYPES)
_ALLOWED = []  # classes allowed beside _SAFE (safe_globals, as torch's allow-list)


class _Saved:
    """A tensor in a file save wrote: its values and whether it was a Parameter."""

    def __init__(self, array, parameter):
        self.array, self.parameter = array, parameter

    def __reduce__(self):
        return _Saved, (self.array, self.parameter)


def _to_saved(obj):
    if isinstance(obj, mindspore.Tensor):
        return _Saved(obj.asnumpy(), isinstance(obj, mindspore.Parameter))
    if isinstance(obj, dict):
        out = type(obj)() if type(obj) in (dict, __import__("collections").OrderedDict) else {}
        for key, value in obj.items():
            out[key] = _to_saved(value)
        return out
    if isinstance(obj, (list, tuple)) and type(obj) in (list, tuple):
        return type(obj)(_to_saved(value) for value in obj)
    return obj


def _from_saved(obj):
    if isinstance(obj, _Saved):
        tensor = mindspore.Tensor(obj.array)
        return mindspore.Parameter(tensor) if obj.parameter else tensor
    if isinstance(obj, numpy.ndarray) and obj.dtype != object:
        return mindspore.Tensor(obj)
    if isinstance(obj, dict):
        for key in list(obj):
            obj[key] = _from_saved(obj[key])
        return obj
    if isinstance(obj, (list, tuple)) and type(obj) in (list, tuple):
        return type(obj)(_from_saved(value) for value in obj)
    return obj


def _allowed(module, name):
    return (module, name) in _SAFE or any(getattr(c, "__module__", None) == module
                                          and getattr(c, "__qualname__", None) == name for c in _ALLOWED)


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """torch.save(obj, f): `obj` pickled, each MindSpore tensor in its dicts, lists and tuples as its values
    (a Cell is saved as its parameters); `f` a path or a binary file. load reads it back."""
    import pickle

    if isinstance(obj, mindspore.nn.Cell):
        obj = dict(obj.parameters_and_names())
    if isinstance(f, (str, bytes)) or hasattr(f, "__fspath__"):
        with open(f, "wb") as out:
            (pickle_module or pickle).dump(_to_saved(obj), out, protocol=max(pickle_protocol, 4))
    else:
        (pickle_module or pickle).dump(_to_saved(obj), f, protocol=max(pickle_protocol, 4))


def _unpickler(stream, weights_only, storages=None):
    import pickle

    class Unpickler(pickle.Unpickler):
        def find_class(self, module, name):
            if module == "torch" and name in _STORAGE_DTYPES:
                return _STORAGE_DTYPES[name]
            if module == "torch._utils" and name == "_rebuild_tensor_v2":
                return _rebuild_tensor
            if module == "torch._utils" and name == "_rebuild_parameter":
                return lambda data, requires_grad, hooks, *rest: mindspore.Parameter(data, requires_grad=requires_grad)
            if module.rpartition(".")[2] == "t2ms_support" and name == "_Saved":  # (imported as pkg.t2ms_support)
                return _Saved
            if weights_only and not _allowed(module, name):
                raise pickle.UnpicklingError(f"Weights only load failed: unsupported global {module}.{name} "
                                             "(allow it with safe_globals, or load with weights_only=False)")
            return super().find_class(module, name)

        def persistent_load(self, pid):
            if storages is None or pid[0] != "storage":
                raise pickle.UnpicklingError(f"unsupported persistent id {pid[0]!r}")
            dtype = pid[1] if isinstance(pid[1], str) else None
            if dtype is None:
                raise pickle.UnpicklingError(f"unsupported storage type {pid[1]!r}")
            return numpy.frombuffer(storages(str(pid[2])), dtype=numpy.dtype(dtype).newbyteorder("<"))

    return Unpickler(stream)


def _rebuild_tensor(storage, offset, size, stride, *rest):
    item = storage.itemsize
    array = numpy.lib.stride_tricks.as_strided(storage[offset:], shape=tuple(size),
                                               strides=tuple(s * item for s in stride)) if size else storage[offset:offset + 1].reshape(())
    return mindspore.Tensor(numpy.array(array))


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """torch.load(f): a file save (or torch.save) wrote, its tensors as MindSpore tensors; a MindSpore checkpoint
    as mindspore.load_checkpoint's dict of Parameters. `map_location` and `mmap` change nothing on the CPU; with
    `weights_only` (torch's default) only containers, tensors and the classes safe_globals allows are read."""
    import io
    import pickle
    import zipfile

    data = f.read() if hasattr(f, "read") else open(f, "rb").read()
    weights_only = True if weights_only is None else weights_only
    if data[:2] == b"PK":  # torch's archive
        archive = zipfile.ZipFile(io.BytesIO(data))
        names = archive.namelist()
        pickled = next(n for n in names if n.endswith("/data.pkl") or n == "data.pkl")
        prefix = pickled[:-len("data.pkl")]
        obj = _unpickler(io.BytesIO(archive.read(pickled)), weights_only,
                         lambda key: archive.read(f"{prefix}data/{key}")).load()
        return _from_saved(obj)
    if data[:1] == b"\x80":
        return _from_saved(_unpickler(io.BytesIO(data), weights_only).load())
    if hasattr(f, "read"):
        raise pickle.UnpicklingError("a MindSpore checkpoint is read from a path")
    return mindspore.load_checkpoint(f)


def unsafe_globals(f):
    """torch.serialization.get_unsafe_globals_in_checkpoint(f): the classes and functions (`module.name`) a file's
    pickle names that a weights-only load refuses."""
    import io
    import pickletools
    import zipfile

    data = f.read() if hasattr(f, "read") else open(f, "rb").read()
    if data[:2] == b"PK":
        archive = zipfile.ZipFile(io.BytesIO(data))
        data = archive.read(next(n for n in archive.namelist() if n.endswith("data.pkl")))
    found, strings = [], []
    for op, arg, _ in pickletools.genops(data):
        if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE"):
            strings.append(arg)
        pair = tuple(arg.split(" ", 1)) if op.name == "GLOBAL" else tuple(strings[-2:]) \
            if op.name == "STACK_GLOBAL" and len(strings) >= 2 else None
        if pair and not _allowed(*pair) and not (pair[0] == "torch" and pair[1] in _STORAGE_DTYPES) \
                and pair != (_Saved.__module__, "_Saved") \
                and ".".join(pair) not in found:
            found.append(".".join(pair))
    return found


class safe_globals:
    """torch.serialization.safe_globals(classes): a context manager under which a weights-only load reads them."""

    def __init__(self, safe_globals):
        self.classes = [c[0] if isinstance(c, tuple) else c for c in safe_globals]

    def __enter__(self):
        _ALLOWED.extend(self.classes)

    def __exit__(self, *exc):
        del _ALLOWED[len(_ALLOWED) - len(self.classes):]


def torch_home():
    """torch.hub._get_torch_home(): $TORCH_HOME, else $XDG_CACHE_HOME/torch (~/.cache/torch)."""
    import os

    return os.path.expanduser(os.getenv("TORCH_HOME", os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"), "torch")))


def hub_dir():
    """torch.hub.get_dir(): the hub's cache folder, TORCH_HOME/hub."""
    import os

    return os.path.join(torch_home(), "hub")


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """torch.hub.download_url_to_file: the URL's bytes to `dst` (through a partial file moved into place once
    complete), checked against a SHA-256 prefix; `progress` draws nothing here."""
    import hashlib
    import os
    import shutil
    import urllib.request
    import uuid

    dst = os.path.expanduser(dst)
    partial = f"{dst}.{uuid.uuid4().hex}.partial"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers={"User-Agent": "torch.hub"})) as source, \
                open(partial, "w+b") as out:
            digest = hashlib.sha256()
            while chunk := source.read(8192):
                out.write(chunk)
                digest.update(chunk)
        if hash_prefix is not None and digest.hexdigest()[:len(hash_prefix)] != hash_prefix:
            raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest.hexdigest()}")')
        shutil.move(partial, dst)
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def activation_fn(activation):
    """torch.nn.modules.transformer._get_activation_fn(name): relu or gelu (the exact form) as a function, of
    those with a kernel on every device."""
    if activation == "relu":
        return mindspore.mint.nn.functional.relu
    if activation == "gelu":
        return ops.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _first(cell, *names):
    return next((getattr(cell, n) for n in names if getattr(cell, n, None) is not None), None)


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """torch.nn.utils.fusion.fuse_conv_bn_eval: a copy of the convolution whose weight and bias fold in the batch
    norm's running statistics and affine parameters (MindSpore's gamma / beta / moving_* names or mint's)."""
    import copy

    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    mean, var = _first(bn, "running_mean", "moving_mean"), _first(bn, "running_var", "moving_variance")
    if mean is None or var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    eps = getattr(bn, "eps", None)
    eps = getattr(bn, "epsilon", 1e-5) if eps is None else eps
    gamma, beta = _first(bn, "weight", "gamma"), _first(bn, "bias", "beta")
    fused = copy.deepcopy(conv)
    w, b = fused.weight, fused.bias if getattr(fused, "bias", None) is not None else None
    gamma = ops.ones_like(mean) if gamma is None else gamma
    beta = ops.zeros_like(mean) if beta is None else beta
    scale = gamma * ops.rsqrt(var + eps)
    shape = ([1, -1] if transpose else [-1, 1]) + [1] * (w.ndim - 2)
    new_w = (w * scale.reshape(shape)).astype(w.dtype)
    new_b = (((ops.zeros_like(mean) if b is None else b) - mean) * scale + beta).astype(w.dtype if b is None else b.dtype)
    fused.weight = mindspore.Parameter(new_w, name=w.name, requires_grad=w.requires_grad)
    if b is None:
        fused.bias = mindspore.Parameter(new_b, name=w.name.rpartition(".")[0] + ".bias" if "." in w.name else "bias")
        if hasattr(fused, "has_bias"):
            fused.has_bias = True
    else:
        fused.bias = mindspore.Parameter(new_b, name=b.name, requires_grad=b.requires_grad)
    return fused


def default_collate(batch):
    """torch.utils.data.default_collate: a list of samples to one batch, tensors, arrays and numbers stacked
    into MindSpore tensors (Python floats as float64, ints as int64), strings kept as a list, and dicts,
    named tuples and sequences collated field by field."""
    import collections.abc

    elem = batch[0]
    if isinstance(elem, mindspore.Tensor):
        return ops.stack(list(batch), 0)
    if isinstance(elem, numpy.ndarray) and elem.dtype.kind not in "SaUO":
        return mindspore.Tensor(numpy.stack(batch))
    if isinstance(elem, numpy.generic) and elem.dtype.kind not in "SaUO":
        return mindspore.Tensor(numpy.array(batch))
    if isinstance(elem, bool):
        return mindspore.Tensor(numpy.array(batch, dtype=numpy.bool_))
    if isinstance(elem, float):
        return mindspore.Tensor(numpy.array(batch, dtype=numpy.float64))
    if isinstance(elem, int):
        return mindspore.Tensor(numpy.array(batch, dtype=numpy.int64))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return type(elem)({key: default_collate([d[key] for d in batch]) for key in elem}) \
            if type(elem) is not dict else {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(s) for s in zip(*batch)]  # a tuple's fields as a list, as torch's
        return columns if isinstance(elem, tuple) or type(elem) is list else type(elem)(columns)
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                    f"found {type(elem)}")


class IterableDataset(metaclass=__import__("abc").ABCMeta):
    """torch.utils.data.IterableDataset as a type: a dataset MindSpore's GeneratorDataset reads as a stream, one
    that iterates and has no random access (``__iter__`` without ``__getitem__``), as the port's dataset classes
    are once their torch base is gone; ``isinstance(d, IterableDataset)`` asks that."""

    @classmethod
    def __subclasshook__(cls, other):
        names = set().union(*(vars(k) for k in other.__mro__))
        return "__iter__" in names and "__getitem__" not in names


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """torch.unique where the fix engine writes no form (inverse indices, counts, a dim): the sorted distinct
    values (of the flattened tensor, or the distinct slices along `dim`), then the inverse indices (the input's
    shape, or the length of `dim`) and the counts as int64 tensors, as torch's CPU kernel returns them (sorted
    also where `sorted=False`). PyNative mode: the result's shape depends on the values."""
    values = input.asnumpy()
    found, inverse, counts = numpy.unique(values.reshape(-1) if dim is None else values, return_inverse=True,
                                          return_counts=True, axis=dim)
    out = [mindspore.Tensor(found)]
    if return_inverse:
        out.append(mindspore.Tensor(inverse.reshape(values.shape if dim is None else (-1,)).astype(numpy.int64)))
    if return_counts:
        out.append(mindspore.Tensor(counts.astype(numpy.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def _foreach(tensors, operand, combine, in_place):
    """One operation over a list of tensors, torch's `_foreach_*` functions: `operand` is a list of tensors or
    numbers (one per tensor) or one tensor or number for all; `combine(tensor, operand)` gives each result. In place,
    each result is copied into its tensor (its dtype kept) and the list of the tensors is returned, as torch 2.13
    returns it; otherwise a tuple of the results."""
    tensors = list(tensors)
    if isinstance(operand, (list, tuple)) and len(operand) != len(tensors):
        raise RuntimeError(f"Tensor lists must have the same number of tensors, got {len(tensors)} and {len(operand)}")
    results = []
    for i, tensor in enumerate(tensors):
        result = combine(tensor, operand[i] if isinstance(operand, (list, tuple)) else operand)
        if in_place:
            tensor.copy_(result)
        results.append(tensor if in_place else result)
    return results if in_place else tuple(results)


def _foreach_operand(other, scalar, scalars):
    """The second operand of a `_foreach_*` call, however torch's overloads name it (`other`: tensors or a tensor,
    `scalar`, `scalars`)."""
    given = [value for value in (other, scalar, scalars) if value is not None]
    if len(given) != 1:
        raise TypeError("expected one of other, scalar or scalars")
    return given[0]


def foreach_add(self, other=None, *, alpha=1, scalar=None, scalars=None, _in_place=False):
    """torch._foreach_add: each tensor plus its operand times `alpha` (a tuple of new tensors)."""
    operand = _foreach_operand(other, scalar, scalars)
    return _foreach(self, operand, lambda t, o: t + (o if alpha == 1 else o * alpha), _in_place)


def foreach_add_(self, other=None, *, alpha=1, scalar=None, scalars=None):
    """torch._foreach_add_: each tensor increased in place by its operand times `alpha`."""
    return foreach_add(self, other, alpha=alpha, scalar=scalar, scalars=scalars, _in_place=True)


def foreach_sub(self, other=None, *, alpha=1, scalar=None, scalars=None, _in_place=False):
    """torch._foreach_sub: each tensor minus its operand times `alpha` (a tuple of new tensors)."""
    operand = _foreach_operand(other, scalar, scalars)
    return _foreach(self, operand, lambda t, o: t - (o if alpha == 1 else o * alpha), _in_place)


def foreach_sub_(self, other=None, *, alpha=1, scalar=None, scalars=None):
    """torch._foreach_sub_: each tensor decreased in place by its operand times `alpha`."""
    return foreach_sub(self, other, alpha=alpha, scalar=scalar, scalars=scalars, _in_place=True)


def foreach_mul(self, other=None, *, scalar=None, scalars=None, _in_place=False):
    """torch._foreach_mul: each tensor times its operand (a tuple of new tensors)."""
    return _foreach(self, _foreach_operand(other, scalar, scalars), lambda t, o: t * o, _in_place)


def foreach_mul_(self, other=None, *, scalar=None, scalars=None):
    """torch._foreach_mul_: each tensor multiplied in place by its operand."""
    return foreach_mul(self, other, scalar=scalar, scalars=scalars, _in_place=True)


def foreach_div(self, other=None, *, scalar=None, scalars=None, _in_place=False):
    """torch._foreach_div: each tensor divided by its operand (a tuple of new tensors)."""
    return _foreach(self, _foreach_operand(other, scalar, scalars), lambda t, o: t / o, _in_place)


def foreach_div_(self, other=None, *, scalar=None, scalars=None):
    """torch._foreach_div_: each tensor divided in place by its operand."""
    return foreach_div(self, other, scalar=scalar, scalars=scalars, _in_place=True)


def foreach_lerp(self, tensors1, weight=None, *, weights=None, _in_place=False):
    """torch._foreach_lerp: each tensor moved toward its end (`tensors1`) by its weight (`weight`: a number,
    `weights`: a tensor or a list), as mindspore.ops.lerp computes it (a tuple of new tensors)."""
    ends = list(tensors1)
    pairs = [(end, w) for end, w in zip(ends, _foreach_weights(weight, weights, len(ends)))]
    return _foreach(self, pairs, lambda t, pair: ops.lerp(t, pair[0], pair[1]), _in_place)


def foreach_lerp_(self, tensors1, weight=None, *, weights=None):
    """torch._foreach_lerp_: each tensor moved in place toward its end by its weight."""
    return foreach_lerp(self, tensors1, weight, weights=weights, _in_place=True)


def _foreach_weights(weight, weights, count):
    given = _foreach_operand(weight, None, weights)
    return list(given) if isinstance(given, (list, tuple)) else [given] * count


def foreach_copy_(self, src, non_blocking=False):
    """torch._foreach_copy_: each tensor's values replaced in place by its source's (cast to its dtype)."""
    return _foreach(self, list(src), lambda t, o: o, True)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    """torch.full where the fill value is known only at run time: torch's result dtype where no dtype is given (a
    bool fills a bool tensor, an int an int64 one, a float a float32 one, a complex a complex64 one; a one-value
    tensor gives its Python value), which mindspore.ops.full does not infer (int64 for every fill value). The device
    and layout are MindSpore's (one device per program)."""
    if isinstance(fill_value, mindspore.Tensor):
        fill_value = fill_value.item()
    if dtype is None:
        dtype = (mindspore.bool_ if isinstance(fill_value, (bool, numpy.bool_)) else
                 mindspore.int64 if isinstance(fill_value, (int, numpy.integer)) else
                 mindspore.complex64 if isinstance(fill_value, complex) else mindspore.float32)
    return ops.full(tuple(size), fill_value, dtype=dtype)


def _cubic_weights(t):
    """The four weights of torch's bicubic convolution (A = -0.75) at the neighbours -1, 0, 1, 2 of a point a
    fraction `t` past the second."""
    a = -0.75

    def near(d):
        return ((a + 2) * d - (a + 3)) * d * d + 1

    def far(d):
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _grid_index(index, size, padding_mode, align_corners):
    """An integer neighbour's index along a side of `size` as torch's bicubic sampling reads it: clipped (border),
    mirrored (reflection, about the edge pixels' centres with align_corners, their outer edges without) or left
    as it is (zeros); the mask of the neighbours inside the image (for zeros)."""
    if padding_mode == "reflection":
        low, span = (0.0, size - 1.0) if align_corners else (-0.5, float(size))
        if span <= 0:
            index = ops.zeros_like(index)
        else:
            distance = ops.abs(index - low)
            extra = distance - ops.floor(distance / span) * span
            flips = ops.floor(distance / span)
            index = ops.where(ops.fmod(flips, 2.0) == 0, extra + low, span - extra + low)
    if padding_mode in ("border", "reflection"):
        index = ops.clip(index, 0.0, size - 1.0)
    inside = ops.logical_and(index >= 0, index <= size - 1)
    return ops.clip(index, 0.0, size - 1.0).astype(mindspore.int32), inside


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """torch.nn.functional.grid_sample: MindSpore's function for the nearest and bilinear modes, and for bicubic
    (which MindSpore 2.10 refuses) torch's bicubic sampling of a 4-D input: each output point weighs the 4x4
    pixels around it with torch's cubic weights (A = -0.75), every neighbour read through the padding mode, in
    PyNative and GRAPH mode."""
    align_corners = bool(align_corners)
    if mode != "bicubic":
        return mindspore.mint.nn.functional.grid_sample(input, grid, mode=mode, padding_mode=padding_mode,
                                                        align_corners=align_corners)
    n, c, h, w = input.shape
    out_h, out_w = grid.shape[1], grid.shape[2]
    grid = grid.astype(mindspore.float32)

    def unnormalize(coord, size):
        return (coord + 1) / 2 * (size - 1) if align_corners else ((coord + 1) * size - 1) / 2

    x, y = unnormalize(grid[..., 0], w), unnormalize(grid[..., 1], h)
    x0, y0 = ops.floor(x), ops.floor(y)
    wx, wy = _cubic_weights(x - x0), _cubic_weights(y - y0)
    flat = input.reshape(n, c, h * w)
    out = ops.zeros((n, c, out_h * out_w), input.dtype)
    for j in range(4):
        yi, y_in = _grid_index(y0 - 1 + j, h, padding_mode, align_corners)
        for i in range(4):
            xi, x_in = _grid_index(x0 - 1 + i, w, padding_mode, align_corners)
            weight = wx[i] * wy[j]
            if padding_mode == "zeros":
                weight = weight * ops.logical_and(x_in, y_in).astype(weight.dtype)
            index = ops.broadcast_to((yi * w + xi).reshape(n, 1, out_h * out_w), (n, c, out_h * out_w))
            values = ops.gather_elements(flat, 2, index)
            out = out + values * weight.reshape(n, 1, out_h * out_w).astype(input.dtype)
    return out.reshape(n, c, out_h, out_w)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """torch.nn.functional.kl_div where the fix engine writes no form (`log_target`, which mindspore.ops.kl_div
    lacks): torch's pointwise loss, target * (log(target) - input) with 0 where the target is 0, or
    exp(target) * (target - input) for a target given as log-probabilities, the two inputs broadcast; reduced
    as torch reduces it (mean of every element, batchmean: the sum over the first dimension's size, sum, none;
    the legacy size_average and reduce as torch reads them)."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = ("mean" if size_average else "sum") if reduce else "none"
    if log_target:
        loss = ops.exp(target) * (target - input)
    else:
        # target * log(target), 0 where the target is 0 (as torch's xlogy; MindSpore's xlogy gives nan there)
        loss = target * ops.log(ops.where(target == 0, ops.ones_like(target), target)) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim else loss.sum()
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss
