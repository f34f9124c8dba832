"""Normalizations and softmax.

Inference batch norm folds into the convolution before it (conv.py) or
becomes a per-channel multiply and add. Layer norm and PyTorch's
`_safe_softmax` have no node in upstream's format; they lower to kinds it
has, so the blob runs on upstream's runtime as well as on ours:

- layer norm over trailing dims of C elements: mean and variance are fully
  connected layers with a [1, C] weight of 1/C (the variance's bias adds
  epsilon), then (x - mean) / sqrt(variance + eps) * weight + bias;
- `_safe_softmax` (attention: a row that is all -inf gives zeros, not
  NaN): softmax of max(x, -FLT_MAX), times a row mask min(sum(exp(x -
  max(x, -FLT_MAX))), 1) that is 0 only when every element is -inf. The
  row sum's width is fixed in the blob, so a softmax over a dynamic dim
  stays outside the delegate.
"""

import math

import torch

from executorch.backends.xnnpack.lowering.core import (
    CONTIGUOUS,
    NHWC,
    TUPLE_OUTPUTS,
    aten,
    aten_op,
    bound,
    dynamic,
    getitem_zero,
    is_constant_node,
    nhwc,
    normalized_args,
    only_first_output_used,
    register,
    shape,
    sym_shape,
)
from executorch.backends.xnnpack.serialization.xnnpack_graph_schema import (
    XNN_INVALID_VALUE_ID,
    XNNFullyConnectedT,
    XNodeUnion,
)
from executorch.exir.passes.fold_batch_norm import batch_norm_scale_shift

BATCH_NORMS = {aten._native_batch_norm_legit_no_training.default}
TUPLE_OUTPUTS.update(BATCH_NORMS)
TUPLE_OUTPUTS.add(aten.native_layer_norm.default)

_FLT_MAX = float(torch.finfo(torch.float32).max)


def batch_norm_affine(node, constants):
    """(scale, shift) of an inference batch norm: y = x * scale + shift per
    channel."""
    args = normalized_args(node)
    tensors = (args[name] for name in ("weight", "bias", "running_mean", "running_var"))
    return batch_norm_scale_shift(
        *(constants[t] if t is not None else None for t in tensors), float(args["eps"])
    )


def single_batch_norm_user(node, constants):
    """(batch norm node, its output getitem) when `node`'s only user is an
    inference batch norm with constant statistics."""
    if len(node.users) != 1:
        return None
    (user,) = node.users
    if aten_op(user.target) not in BATCH_NORMS or not only_first_output_used(user):
        return None
    if not all(a in constants for a in user.args[1:5] if a is not None):
        return None
    return user, getitem_zero(user)


def _check_batch_norm(node, ep):
    if not only_first_output_used(node):
        return "batch norm statistics outputs are used"
    if not all(is_constant_node(a, ep) for a in node.args[1:5] if a is not None):
        return "non-constant batch norm parameters"
    return None


@register(BATCH_NORMS, _check_batch_norm)
def lower_batch_norm(ctx, node):
    # Not after a foldable convolution: y = x * scale + shift, per channel.
    x = normalized_args(node)["input"]
    scale, shift = batch_norm_affine(node, ctx.constants)
    rank = len(shape(x))
    layout = NHWC if rank == 4 else CONTIGUOUS
    if layout == CONTIGUOUS:
        scale = scale.reshape([-1] + [1] * (rank - 2))
        shift = shift.reshape([-1] + [1] * (rank - 2))
    scaled = ctx.tensor(nhwc(shape(x)) if layout == NHWC else shape(x))
    ctx.binary(
        XNodeUnion.XNNMultiply, ctx.value(x, layout), ctx.constant(scale), scaled
    )
    out = ctx.define(getitem_zero(node), layout)
    ctx.ids[(node, layout)] = out
    ctx.binary(XNodeUnion.XNNAdd, scaled, ctx.constant(shift), out)


def _row_reduction(ctx, x: int, dims, weight: float, bias=None, clamp=None) -> int:
    """A [..., 1] value: each row of `x` ([..., C]) summed with `weight` per
    element (plus `bias`), as a fully connected layer."""
    channels = dims[-1]
    out = ctx.tensor(list(dims[:-1]) + [1])
    table = XNNFullyConnectedT()
    table.input1Id = x
    table.filterId = ctx.constant(torch.full((1, channels), weight))
    table.biasId = (
        ctx.constant(torch.tensor([bias])) if bias is not None else XNN_INVALID_VALUE_ID
    )
    table.outputId, table.flags = out, 0
    ctx.add_node(XNodeUnion.XNNFullyConnected, table, out, clamp)
    return out


def _check_layer_norm(node, ep):
    if not only_first_output_used(node):
        return "layer norm statistics outputs are used"
    args = normalized_args(node)
    for name in ("weight", "bias"):
        if args[name] is not None and not is_constant_node(args[name], ep):
            return f"non-constant {name}"
    return None


@register([aten.native_layer_norm.default], _check_layer_norm)
def lower_layer_norm(ctx, node):
    args = normalized_args(node)
    x, weight, bias = args["input"], args["weight"], args["bias"]
    num_normalized = len(args["normalized_shape"])
    in_shape = sym_shape(x)
    # Normalizing over several trailing dims is normalizing over their
    # product.
    flat_shape = in_shape[:-num_normalized] + [
        math.prod(shape(x)[-num_normalized:])
    ]
    xv = ctx.value(x)
    if num_normalized > 1:
        flat = ctx.tensor([bound(d) for d in flat_shape])
        ctx.reshape(xv, flat, flat_shape, in_shape)
        xv = flat
    dims = ctx.builder.dims(xv)
    inverse = 1.0 / dims[-1]
    mean = _row_reduction(ctx, xv, dims, inverse)
    centered = ctx.tensor(dims)
    ctx.binary(XNodeUnion.XNNSubtract, xv, mean, centered)
    squares = ctx.tensor(dims)
    ctx.unary(XNodeUnion.XNNSquare, centered, squares)
    variance = _row_reduction(ctx, squares, dims, inverse, bias=float(args["eps"]))
    std = ctx.tensor(ctx.builder.dims(variance))
    ctx.unary(XNodeUnion.XNNSquareRoot, variance, std)
    steps = [(XNodeUnion.XNNDiv, std)]
    for kind, param in ((XNodeUnion.XNNMultiply, weight), (XNodeUnion.XNNAdd, bias)):
        if param is not None:
            steps.append((kind, ctx.constant(ctx.constants[param].reshape(-1))))
    out_node = getitem_zero(node)
    out = ctx.define(out_node)
    ctx.ids[(node, CONTIGUOUS)] = out
    current = centered
    for i, (kind, operand) in enumerate(steps):
        last = i == len(steps) - 1
        result = out if last and num_normalized == 1 else ctx.tensor(dims)
        ctx.binary(kind, current, operand, result)
        current = result
    if num_normalized > 1:
        ctx.reshape(current, out, sym_shape(out_node), flat_shape)


def _check_softmax(node, ep):
    rank = len(shape(node))
    if node.args[1] % rank != rank - 1:
        return "softmax over a dim other than the last"
    if len(node.args) > 2 and node.args[2]:
        return "half_to_float or a dtype"
    return None


@register([aten._softmax.default], _check_softmax)
def lower_softmax(ctx, node):
    ctx.unary(
        XNodeUnion.XNNSoftmax, ctx.value(node.args[0]), ctx.define(node)
    )


def _check_safe_softmax(node, ep):
    if dynamic(sym_shape(node)[-1]):
        # Its row mask sums a row with a fully connected layer, whose width
        # is fixed in the blob.
        return "safe softmax over a dynamic dim"
    return _check_softmax(node, ep)


@register([aten._safe_softmax.default], _check_safe_softmax)
def lower_safe_softmax(ctx, node):
    xv = ctx.value(node.args[0])
    dims = ctx.builder.dims(xv)
    finite = ctx.tensor(dims)
    ctx.binary(XNodeUnion.XNNMaximum, xv, ctx.scalar(-_FLT_MAX), finite)
    # 0 where x is -inf, -0 or 0 elsewhere; exp makes it a 0/1 mask.
    gap = ctx.tensor(dims)
    ctx.binary(XNodeUnion.XNNSubtract, xv, finite, gap)
    present = ctx.tensor(dims)
    ctx.unary(XNodeUnion.XNNExp, gap, present)
    row_mask = _row_reduction(ctx, present, dims, 1.0, clamp=(0.0, 1.0))
    probabilities = ctx.tensor(dims)
    ctx.unary(XNodeUnion.XNNSoftmax, finite, probabilities)
    ctx.binary(XNodeUnion.XNNMultiply, probabilities, row_mask, ctx.define(node))
