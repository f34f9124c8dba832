"""Pooling on NHWC values: max and average pooling windows, and global
average pooling (mean over H and W, adaptive average pooling to 1x1).

XNNPACK refuses a 1x1 pooling window; with stride 1 and no padding it is a
copy and lowers as one. Max pooling's ceil_mode becomes extra bottom and
right padding (padding never wins a max). Average pooling divides by the
number of elements inside the input (PyTorch's count_include_pad=False), so
with padding and count_include_pad=True it stays out."""

import math

from executorch.backends.xnnpack.lowering.core import (
    NHWC,
    TUPLE_OUTPUTS,
    aten,
    aten_op,
    getitem_zero,
    normalized_args,
    only_first_output_used,
    pair,
    register,
    shape,
    sym_shape,
)
from executorch.backends.xnnpack.serialization.xnnpack_graph_schema import (
    XNN_FLAG_KEEP_DIMS,
    XNodeUnion,
    _XNNPooling2DT,
)

TUPLE_OUTPUTS.add(aten.max_pool2d_with_indices.default)

_MAX_POOLS = {aten.max_pool2d.default, aten.max_pool2d_with_indices.default}


def _window(args):
    """(kernel, stride, padding, dilation) as [h, w] pairs."""
    kernel = pair(args["kernel_size"])
    stride = pair(args["stride"] or args["kernel_size"])
    dilation = pair(args.get("dilation", 1) or 1)
    return kernel, stride, pair(args["padding"]), dilation


def _ceil_extra(size, kernel, stride, padding, dilation):
    """Padding to add at the end so that floor division gives PyTorch's
    ceil_mode output size (whose last window must start inside the input
    or its left padding)."""
    span = (kernel - 1) * dilation + 1
    out = math.ceil((size + 2 * padding - span) / stride) + 1
    if (out - 1) * stride >= size + padding:
        out -= 1
    return max(0, (out - 1) * stride + span - (size + 2 * padding))


def _check_pool(node, ep):
    args = normalized_args(node)
    target = aten_op(node.target)
    if len(shape(args["self"])) != 4:
        return "pooling on a tensor that is not 4-D"
    if target == aten.max_pool2d_with_indices.default and not only_first_output_used(
        node
    ):
        return "max pool indices are used"
    kernel, stride, padding, _ = _window(args)
    if kernel == [1, 1] and (stride != [1, 1] or padding != [0, 0]):
        return "1x1 pooling with a stride or padding (XNNPACK takes no 1x1 window)"
    if target == aten.avg_pool2d.default:
        if args["ceil_mode"]:
            return "ceil_mode (the divisor of the last window differs)"
        if args["divisor_override"] is not None:
            return "divisor_override"
        if args["count_include_pad"] and any(padding):
            return "count_include_pad with padding (XNNPACK excludes padding)"
    return None


@register(
    [*_MAX_POOLS, aten.avg_pool2d.default],
    _check_pool,
)
def lower_pool(ctx, node):
    args = normalized_args(node)
    target = aten_op(node.target)
    out_node = (
        getitem_zero(node)
        if target == aten.max_pool2d_with_indices.default
        else node
    )
    source = ctx.value(args["self"], NHWC)
    output = ctx.define(out_node, NHWC)
    if out_node is not node:
        ctx.ids[(node, NHWC)] = output
    kind, table = pool_table(node)
    if table is None:
        ctx.unary(kind, source, output)
        return
    table.inputId, table.outputId, table.flags = source, output, XNN_FLAG_KEEP_DIMS
    ctx.add_node(kind, table, output)


def pool_table(node):
    """(kind, params) of a pooling node; params None for a 1x1 window with
    stride 1 and no padding, which is a copy."""
    args = normalized_args(node)
    target = aten_op(node.target)
    kernel, stride, padding, dilation = _window(args)
    if kernel == [1, 1]:
        return XNodeUnion.XNNCopy, None
    table = _XNNPooling2DT()
    table.poolingHeight, table.poolingWidth = kernel
    table.strideHeight, table.strideWidth = stride
    table.paddingTop, table.paddingLeft = padding
    table.paddingBottom, table.paddingRight = padding
    if target in _MAX_POOLS:
        kind = XNodeUnion.XNNMaxPooling2d
        table.dilationHeight, table.dilationWidth = dilation
        if args["ceil_mode"]:
            h, w = shape(args["self"])[2:]
            table.paddingBottom += _ceil_extra(
                h, kernel[0], stride[0], padding[0], dilation[0]
            )
            table.paddingRight += _ceil_extra(
                w, kernel[1], stride[1], padding[1], dilation[1]
            )
    else:
        kind = XNodeUnion.XNNAvgPooling2d
        table.dilationHeight = table.dilationWidth = 1
    return kind, table


def _check_global_pool(node, ep):
    x = node.args[0]
    if len(shape(x)) != 4:
        return "not a 4-D input"
    if aten_op(node.target) == aten.mean.dim:
        args = normalized_args(node)
        dims = sorted(d % 4 for d in args["dim"] or [])
        if dims != [2, 3]:
            return "mean over dims other than H and W"
        if args["dtype"] is not None:
            return "mean with a dtype"
    elif list(node.args[1]) != [1, 1]:
        return "adaptive pooling to a size other than 1x1"
    return None


@register(
    [
        aten.mean.dim,
        aten._adaptive_avg_pool2d.default,
        aten.adaptive_avg_pool2d.default,
    ],
    _check_global_pool,
)
def lower_global_pool(ctx, node):
    # NHWC [N, 1, 1, C] has the memory of NCHW [N, C, 1, 1] and of [N, C].
    x = node.args[0]
    n, c = sym_shape(x)[:2]
    pooled = ctx.tensor([shape(x)[0], 1, 1, shape(x)[1]])
    table = ctx.unary(XNodeUnion.XNNGlobalAvgPooling2d, ctx.value(x, NHWC), pooled)
    table.xnodeUnion.flags = XNN_FLAG_KEEP_DIMS
    if len(shape(node)) == 4:
        ctx.ids[(node, NHWC)] = pooled
    else:
        ctx.reshape(pooled, ctx.define(node), sym_shape(node), [n, 1, 1, c])
