"""2-D convolutions: conv2d, depthwise conv2d (one input channel per group)
and transposed conv2d, on NHWC values with constant weights. An inference
batch norm right after a convolution is folded into its weights and bias.

Filters: PyTorch's conv weight [OC, IC/g, KH, KW] becomes [OC, KH, KW,
IC/g]; a depthwise weight [OC, 1, KH, KW] becomes [1, KH, KW, OC]; a
transposed conv weight [IC, OC/g, KH, KW] is regrouped to [g * OC/g, KH, KW,
IC/g]."""

from executorch.backends.xnnpack.lowering.core import (
    NHWC,
    aten,
    is_constant_node,
    normalized_args,
    pair,
    register,
    shape,
)
from executorch.backends.xnnpack.lowering.norm import (
    batch_norm_affine,
    single_batch_norm_user,
)
from executorch.backends.xnnpack.serialization.xnnpack_graph_schema import (
    XNN_INVALID_VALUE_ID,
    XNodeUnion,
    _XNNNodeConvT,
)
from executorch.exir.passes.fold_batch_norm import scale_shift_into_convolution


def _check_conv(node, ep):
    args = normalized_args(node)
    if len(shape(node)) != 4:
        return "only 2-D convolution"
    if not is_constant_node(args["weight"], ep) or (
        args["bias"] is not None and not is_constant_node(args["bias"], ep)
    ):
        return "non-constant weights"
    if any(p < 0 for p in pair(args["padding"])):
        return "negative padding"
    if args["transposed"] and any(
        a >= s for a, s in zip(pair(args["output_padding"]), pair(args["stride"]))
    ):
        return "output_padding not smaller than the stride"
    return None


def conv_table(args, in_channels: int) -> _XNNNodeConvT:
    """The params of a convolution with `args` (normalized_args) over
    `in_channels` that do not depend on its filter's layout."""
    groups = int(args["groups"])
    table = _XNNNodeConvT()
    table.paddingTop, table.paddingLeft = pair(args["padding"])
    table.paddingBottom, table.paddingRight = pair(args["padding"])
    table.subsamplingHeight, table.subsamplingWidth = pair(args["stride"])
    table.dilationHeight, table.dilationWidth = pair(args["dilation"])
    table.groups = groups
    table.groupInputChannels = in_channels // groups
    table.adjustmentHeight = table.adjustmentWidth = 0
    return table


def forward_filter(table: _XNNNodeConvT, w):
    """(kind, filter in XNNPACK's layout, its output-channel dim) of a
    forward convolution with PyTorch weight `w` [OC, IC/g, KH, KW]; fills
    the table's output channels and kernel size."""
    table.groupOutputChannels = w.shape[0] // table.groups
    table.kernelHeight, table.kernelWidth = int(w.shape[2]), int(w.shape[3])
    if table.groupInputChannels == 1:
        # One input channel per group: depthwise, weight [1, KH, KW, OC].
        return XNodeUnion.XNNDepthwiseConv2d, w.permute(1, 2, 3, 0), 3
    return XNodeUnion.XNNConv2d, w.permute(0, 2, 3, 1), 0


@register([aten.convolution.default], _check_conv)
def lower_convolution(ctx, node):
    args = normalized_args(node)
    x, weight, bias = args["input"], args["weight"], args["bias"]
    w = ctx.constants[weight]
    b = ctx.constants[bias] if bias is not None else None
    groups = int(args["groups"])
    out_node = node
    bn = single_batch_norm_user(node, ctx.constants)
    if bn is not None and not args["transposed"]:
        bn_node, out_node = bn
        scale, shift = batch_norm_affine(bn_node, ctx.constants)
        w, b = scale_shift_into_convolution(w, b, scale, shift)
    table = conv_table(args, shape(x)[1])
    if args["transposed"]:
        # [IC, OC/g, KH, KW] -> [g * OC/g, KH, KW, IC/g]
        ic, goc, kh, kw = w.shape
        w = w.reshape(groups, ic // groups, goc, kh, kw).permute(0, 2, 3, 4, 1)
        w = w.reshape(groups * goc, kh, kw, ic // groups)
        table.groupOutputChannels = goc
        table.kernelHeight, table.kernelWidth = kh, kw
        table.adjustmentHeight, table.adjustmentWidth = pair(args["output_padding"])
        kind = XNodeUnion.XNNConvTranspose2d
    else:
        kind, w, _ = forward_filter(table, w)
    table.input1Id = ctx.value(x, NHWC)
    table.filterId = ctx.constant(w)
    table.biasId = ctx.constant(b) if b is not None else XNN_INVALID_VALUE_ID
    output = ctx.define(out_node, NHWC)
    if out_node is not node:
        ctx.ids[(node, NHWC)] = output
        ctx.ids[(bn[0], NHWC)] = output
    table.outputId, table.flags = output, 0
    ctx.add_node(kind, table, output)
