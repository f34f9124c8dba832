"""Elementwise operators: unary math and activations, clamps (fused into the
node before them when they can be), and binary arithmetic with
broadcasting. Each keeps its input's layout; binary ops between 4-D operands
stay in NHWC, so a CNN's residual adds and scales cost no transposes."""

import math

import torch

from executorch.backends.xnnpack.lowering.core import (
    MAX_RANK,
    NHWC,
    CONTIGUOUS,
    aten,
    aten_op,
    is_constant_node,
    normalized_args,
    register,
    shape,
)
from executorch.backends.xnnpack.serialization.xnnpack_graph_schema import (
    XNNELUT,
    XNNLeakyReLUT,
    XNodeUnion,
)

_UNARY = {
    aten.sigmoid.default: XNodeUnion.XNNSigmoid,
    aten.tanh.default: XNodeUnion.XNNTanh,
    aten.hardswish.default: XNodeUnion.XNNHardswish,
    aten.abs.default: XNodeUnion.XNNAbs,
    aten.neg.default: XNodeUnion.XNNNegate,
    aten.sqrt.default: XNodeUnion.XNNSquareRoot,
    aten.rsqrt.default: XNodeUnion.XNNReciprocalSquareRoot,
    aten.floor.default: XNodeUnion.XNNFloor,
    aten.ceil.default: XNodeUnion.XNNCeiling,
    aten.exp.default: XNodeUnion.XNNExp,
    aten.log.default: XNodeUnion.XNNLog,
    aten.sin.default: XNodeUnion.XNNSin,
    aten.cos.default: XNodeUnion.XNNCos,
}

_BINARY = {
    aten.add.Tensor: XNodeUnion.XNNAdd,
    aten.add.Scalar: XNodeUnion.XNNAdd,
    aten.sub.Tensor: XNodeUnion.XNNSubtract,
    aten.sub.Scalar: XNodeUnion.XNNSubtract,
    aten.mul.Tensor: XNodeUnion.XNNMultiply,
    aten.mul.Scalar: XNodeUnion.XNNMultiply,
    aten.div.Tensor: XNodeUnion.XNNDiv,
    aten.div.Scalar: XNodeUnion.XNNDiv,
    aten.maximum.default: XNodeUnion.XNNMaximum,
    aten.minimum.default: XNodeUnion.XNNMinimum,
}


def _same_layout_unary(ctx, node, kind):
    x = node.args[0]
    layout = ctx.layout_of(x)
    return ctx.unary(kind, ctx.value(x, layout), ctx.define(node, layout))


@register(_UNARY)
def lower_unary(ctx, node):
    _same_layout_unary(ctx, node, _UNARY[aten_op(node.target)])


def _check_binary(node, ep):
    args = normalized_args(node)
    if aten_op(node.target) == aten.div.Tensor and args.get("rounding_mode"):
        return "only true division"
    for x in (args["self"], args["other"]):
        if isinstance(x, torch.fx.Node):
            if len(shape(x)) > MAX_RANK:
                return f"rank above {MAX_RANK}"
        elif not isinstance(x, (int, float)):
            return "operand is neither a tensor nor a number"
    return None


@register(_BINARY, _check_binary)
def lower_binary(ctx, node):
    args = normalized_args(node)
    a, b = args["self"], args["other"]
    kind = _BINARY[aten_op(node.target)]
    # Broadcasting between 4-D operands works the same in NHWC, so an NHWC
    # input keeps the op in NHWC when every operand is 4-D, a constant
    # (padded to 4-D) or a number.
    layout = CONTIGUOUS
    nodes = [x for x in (a, b) if isinstance(x, torch.fx.Node)]
    if (
        len(shape(node)) == 4
        and any(x not in ctx.constants and ctx.layout_of(x) == NHWC for x in nodes)
        and all(x in ctx.constants or len(shape(x)) == 4 for x in nodes)
    ):
        layout = NHWC
    b_value = ctx.operand(b, layout)
    alpha = args.get("alpha", 1)
    if alpha not in (None, 1):
        scaled = ctx.tensor(ctx.builder.dims(b_value))
        ctx.binary(XNodeUnion.XNNMultiply, b_value, ctx.scalar(alpha), scaled)
        b_value = scaled
    ctx.binary(kind, ctx.operand(a, layout), b_value, ctx.define(node, layout))


def _clamp_range(node):
    args = normalized_args(node)
    target = aten_op(node.target)
    if target == aten.relu.default:
        return 0.0, math.inf
    if target == aten.hardtanh.default:
        return float(args["min_val"]), float(args["max_val"])
    lo = -math.inf if args["min"] is None else float(args["min"])
    hi = math.inf if args["max"] is None else float(args["max"])
    return lo, hi


def _check_clamp(node, ep):
    args = normalized_args(node)
    lo = args.get("min", args.get("min_val"))
    hi = args.get("max", args.get("max_val"))
    if isinstance(lo, torch.fx.Node) or isinstance(hi, torch.fx.Node):
        return "tensor bounds"
    if lo is not None and hi is not None and not float(lo) < float(hi):
        return "empty clamp range"
    return None


@register([aten.relu.default, aten.hardtanh.default, aten.clamp.default], _check_clamp)
def lower_clamp(ctx, node):
    lo, hi = _clamp_range(node)
    x = node.args[0]
    layout = ctx.layout_of(x)
    source = ctx.value(x, layout)
    if ctx.fuse_clamp(x, source, lo, hi):
        ctx.ids[(node, layout)] = source
        return
    ctx.unary(XNodeUnion.XNNClamp, source, ctx.define(node, layout), clamp=(lo, hi))


def _check_gelu(node, ep):
    return None


@register([aten.gelu.default], _check_gelu)
def lower_gelu(ctx, node):
    if normalized_args(node)["approximate"] != "tanh":
        _same_layout_unary(ctx, node, XNodeUnion.XNNGelu)
        return
    # 0.5 x (1 + tanh(k (x + c x^3))) = x sigmoid(2k x (1 + c x^2)), in
    # kinds XNNPACK runs.
    k, c = math.sqrt(2.0 / math.pi), 0.044715
    x = node.args[0]
    layout = ctx.layout_of(x)
    xv = ctx.value(x, layout)
    dims = ctx.builder.dims(xv)
    square = ctx.tensor(dims)
    ctx.unary(XNodeUnion.XNNSquare, xv, square)
    scaled = ctx.tensor(dims)
    ctx.binary(XNodeUnion.XNNMultiply, square, ctx.scalar(2 * k * c), scaled)
    shifted = ctx.tensor(dims)
    ctx.binary(XNodeUnion.XNNAdd, scaled, ctx.scalar(2 * k), shifted)
    z = ctx.tensor(dims)
    ctx.binary(XNodeUnion.XNNMultiply, xv, shifted, z)
    gate = ctx.tensor(dims)
    ctx.unary(XNodeUnion.XNNSigmoid, z, gate)
    ctx.binary(XNodeUnion.XNNMultiply, xv, gate, ctx.define(node, layout))


def _check_elu(node, ep):
    args = normalized_args(node)
    if aten_op(node.target) == aten.elu.default and (
        args["scale"] != 1 or args["input_scale"] != 1
    ):
        return "elu with scale or input_scale"
    return None


@register([aten.leaky_relu.default, aten.elu.default], _check_elu)
def lower_scalar_activation(ctx, node):
    args = normalized_args(node)
    x = args["self"]
    layout = ctx.layout_of(x)
    source, out = ctx.value(x, layout), ctx.define(node, layout)
    if aten_op(node.target) == aten.leaky_relu.default:
        table, kind = XNNLeakyReLUT(), XNodeUnion.XNNLeakyReLU
        table.negativeSlope = float(args["negative_slope"])
    else:
        table, kind = XNNELUT(), XNodeUnion.XNNELU
        table.alpha = float(args["alpha"])
    table.inputId, table.outputId, table.flags = source, out, 0
    ctx.add_node(kind, table, out)


def _check_square(node, ep):
    return None if node.args[1] == 2 else "pow with an exponent other than 2"


@register([aten.pow.Tensor_Scalar], _check_square)
def lower_square(ctx, node):
    _same_layout_unary(ctx, node, XNodeUnion.XNNSquare)


def _check_prelu(node, ep):
    x, weight = node.args
    if len(shape(x)) != 4:
        return "prelu on a tensor that is not 4-D"
    if not is_constant_node(weight, ep):
        return "non-constant slope"
    return None


@register([aten._prelu_kernel.default, aten.prelu.default], _check_prelu)
def lower_prelu(ctx, node):
    x, weight = node.args
    channels = shape(x)[1]
    slope = ctx.constants[weight].reshape(-1).expand(channels)
    ctx.binary(
        XNodeUnion.XNNPReLU,
        ctx.value(x, NHWC),
        ctx.constant(slope),
        ctx.define(node, NHWC),
    )
