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
