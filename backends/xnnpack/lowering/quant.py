"""Int8 inside the delegate: PT2E's dequantize -> op -> quantize patterns
become XNNPACK's int8 (qs8) operators on int8 values.

A converted PT2E program computes every quantized op in fp32 between a
dequantize and a quantize step:

    q = quantize_per_tensor(x, s, zp)        # int8
    d = dequantize_per_tensor(q, s, zp)      # fp32 again
    y = conv(d, dequantize_per_channel(w_int8, ...), bias)
    q2 = quantize_per_tensor(relu(y), s2, zp2)

Here `q`, `q2` become int8 values of the blob (XNNQuantizedTensorValue with
the step's scale and zero point) and `conv` (with the relu fused as its
output clamp) an int8 XNNPACK node from `q` to `q2`, its weight stored as
int8 (per-channel scales: qcint8) and its bias as int32 on the scale
input_scale * weight_scale, as XNNPACK's int8 kernels take them.

Where there is no int8 kernel (Debian's 2022 XNNPACK has none for average
pooling, hardswish, leaky relu, and no per-channel fully connected, which
is lowered as a 1x1 convolution instead), the op stays fp32 inside the
delegate: a dequantize step becomes an XNNConvert to fp32 when an fp32 op
reads it, and a quantize step an XNNConvert to int8. `int8_pattern` says
which case a node is and why, for the lowering and the partitioner's report
alike.

Only what XNNPACK computes as the reference does is matched: per-tensor
int8 activations with the full [-128, 127] range (a narrower range would
need a clamp), symmetric weights (zero point 0) quantized per tensor or
per output channel, static shapes.
"""

import math
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

import torch

import executorch.kernels.quantized  # noqa: F401 (defines et_quantized ops)
from executorch.backends.xnnpack.lowering.conv import conv_table, forward_filter
from executorch.backends.xnnpack.lowering.core import (
    CONTIGUOUS,
    NHWC,
    NOT_LOWERED_BECAUSE,
    OPS,
    OWN_DTYPES,
    PATTERNS,
    Q_CONTIGUOUS,
    Q_NHWC,
    TO_NCHW,
    TO_NHWC,
    Lowering,
    aten,
    aten_op,
    dynamic,
    is_constant_node,
    nhwc,
    normalized_args,
    register,
    shape,
    sym_shape,
)
from executorch.backends.xnnpack.lowering.pool import pool_table
from executorch.backends.xnnpack.serialization.xnnpack_graph_schema import (
    XNN_FLAG_KEEP_DIMS,
    XNN_INVALID_VALUE_ID,
    PerChannelQuantT,
    PerTensorQuantT,
    XNNDatatype,
    XNNFullyConnectedT,
    XNNQuantParams,
    XNodeUnion,
)
from executorch.backends.xnnpack.serialization.xnnpack_graph_serialize import (
    tensor_bytes,
)

qd = torch.ops.quantized_decomposed
QUANTIZE = qd.quantize_per_tensor.default
DEQUANTIZE = qd.dequantize_per_tensor.default
DEQUANTIZE_PER_CHANNEL = qd.dequantize_per_channel.default

_INT8_MIN, _INT8_MAX = -128, 127
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1

# An fp32 layout and the same layout in int8.
_TO_INT8 = {CONTIGUOUS: Q_CONTIGUOUS, NHWC: Q_NHWC}
_TO_FP32 = {q: f for f, q in _TO_INT8.items()}


# Quantization parameters -------------------------------------------------------


@dataclass(frozen=True)
class QParams:
    scale: float
    zero_point: int


def step_qparams(node: torch.fx.Node) -> Optional[QParams]:
    """The parameters of a quantize / dequantize_per_tensor step that the
    int8 kernels compute exactly (scalar, int8, full range), else None."""
    if aten_op(node.target) not in (QUANTIZE, DEQUANTIZE):
        return None
    _, scale, zero_point, qmin, qmax, dtype = node.args[:6]
    if not isinstance(scale, float) or not isinstance(zero_point, int):
        return None
    if dtype != torch.int8 or (qmin, qmax) != (_INT8_MIN, _INT8_MAX):
        return None
    if not (math.isfinite(scale) and scale > 0):
        return None
    if not _INT8_MIN <= zero_point <= _INT8_MAX:
        return None
    return QParams(scale, zero_point)


def _check_step(node, ep) -> Optional[str]:
    if step_qparams(node) is None:
        return "not a per-tensor int8 step over the full range with scalar params"
    if any(dynamic(d) for d in sym_shape(node)):
        return "dynamic sizes (int8 values are static here)"
    return None


def _int8_activation(x, inside) -> Optional[QParams]:
    """The params of `x` when it is a dequantize step of an int8 value the
    delegate holds (a quantize step inside the partition)."""
    if not isinstance(x, torch.fx.Node) or aten_op(x.target) != DEQUANTIZE:
        return None
    source = x.args[0]
    if not inside(x) or not inside(source) or aten_op(source.target) != QUANTIZE:
        return None
    params = step_qparams(x)
    return params if params is not None and params == step_qparams(source) else None


@dataclass
class Weight:
    """An int8 weight: `values` [OC, ...] with one scale, or one per output
    channel (dim 0)."""

    values: torch.Tensor
    scales: torch.Tensor

    @property
    def per_channel(self) -> bool:
        return self.scales.numel() > 1


def _constant(node, ep) -> Optional[torch.Tensor]:
    """The tensor of a parameter, buffer or lifted constant placeholder."""
    if not isinstance(node, torch.fx.Node) or node.op != "placeholder":
        return None
    for spec in ep.graph_signature.input_specs:
        if spec.arg.name == node.name and spec.target is not None:
            tensor = ep.state_dict.get(spec.target)
            return tensor if tensor is not None else ep.constants.get(spec.target)
    return None


def int8_weight(node, ep) -> Tuple[Optional[Weight], Optional[str]]:
    """The int8 weight behind a dequantize step of a constant, or why it
    is not one XNNPACK's int8 kernels take."""
    if not isinstance(node, torch.fx.Node):
        return None, "weight is not a tensor"
    target = aten_op(node.target)
    if target not in (DEQUANTIZE, DEQUANTIZE_PER_CHANNEL):
        return None, "weight is not dequantized from int8"
    values = _constant(node.args[0], ep)
    if values is None or values.dtype != torch.int8:
        return None, "weight is not a constant int8 tensor"
    if target == DEQUANTIZE:
        scale, zero_point = node.args[1], node.args[2]
        if not isinstance(scale, float) or zero_point != 0:
            return None, "per-tensor weight with a zero point (XNNPACK's are 0)"
        return Weight(values, torch.tensor([scale])), None
    scales, zero_points = _constant(node.args[1], ep), _constant(node.args[2], ep)
    if scales is None or zero_points is None or node.args[3] != 0:
        return None, "per-channel weight not quantized along its output channels"
    if bool((zero_points != 0).any()):
        return None, "per-channel weight with zero points (XNNPACK's are 0)"
    return Weight(values, scales.to(torch.float32).reshape(-1)), None


# Patterns ---------------------------------------------------------------------


@dataclass
class Pattern:
    """One int8 op: `node` reads int8 activations `inputs` (dequantize
    steps) and produces `output` (the quantize step after it), with the
    nodes in between (a relu, getitem) `absorbed` and their range `clamp`;
    `inside` says which nodes are in the partition."""

    node: torch.fx.Node
    inputs: List[torch.fx.Node]
    output: torch.fx.Node
    inside: Callable[[torch.fx.Node], bool]
    absorbed: List[torch.fx.Node] = field(default_factory=list)
    clamp: Optional[Tuple[float, float]] = None


@dataclass(frozen=True)
class Int8Op:
    # Why `pattern` cannot run in int8 (None when it can).
    check: Callable[[Pattern, object], Optional[str]]
    lower: Callable[[Lowering, Pattern], None]


INT8_OPS: Dict[object, Int8Op] = {}

# Quantized ops XNNPACK has no int8 kernel for here; they run fp32 inside
# the delegate between converts.
NO_INT8_KERNEL = {
    aten.avg_pool2d.default: "no int8 average pooling in Debian's 2022 XNNPACK",
    aten.hardswish.default: "no int8 hardswish in Debian's 2022 XNNPACK",
    aten.leaky_relu.default: "no int8 leaky relu in Debian's 2022 XNNPACK",
}


def _clamp_of(node) -> Optional[Tuple[float, float]]:
    target = aten_op(node.target)
    if target == aten.relu.default:
        return 0.0, math.inf
    if target == aten.hardtanh.default:
        args = normalized_args(node)
        return float(args["min_val"]), float(args["max_val"])
    return None


def int8_pattern(
    node: torch.fx.Node, ep, inside: Callable[[torch.fx.Node], bool] = lambda n: True
) -> Tuple[Optional[Pattern], Optional[str]]:
    """(pattern, None) when `node` runs as an int8 XNNPACK op; (None, why)
    when it is a quantized op (it reads a dequantize step) that runs in
    fp32 inside the delegate instead; (None, None) for any other node.
    `inside` says which nodes are in the partition being lowered."""
    if node.op != "call_function":
        return None, None
    target = aten_op(node.target)
    if target in (QUANTIZE, DEQUANTIZE, DEQUANTIZE_PER_CHANNEL) or is_constant_node(
        node, ep
    ):
        return None, None
    linear = target in _LINEARS
    inputs = [
        a
        for a in node.all_input_nodes
        if _int8_activation(_row_view_source(a) if linear else a, inside)
    ]
    if not inputs:
        return None, None
    if target in NO_INT8_KERNEL:
        return None, NO_INT8_KERNEL[target]
    if target not in INT8_OPS:
        return None, "no int8 lowering for this operator"
    pattern = Pattern(node, inputs, node, inside)
    out = node
    if target == aten.max_pool2d_with_indices.default:
        if len(node.users) != 1 or list(node.users)[0].args[1] != 0:
            return None, "max pool indices are used"
        out = list(node.users)[0]
        pattern.absorbed.append(out)
    users = list(out.users)
    if len(users) == 1 and _clamp_of(users[0]) is not None and inside(users[0]):
        pattern.clamp = _clamp_of(users[0])
        pattern.absorbed.append(users[0])
        users = list(users[0].users)
    if linear and len(users) == 1 and _row_view_source(users[0]) is not users[0]:
        # A view giving the rows their leading dims back ([B * T, N] to
        # [B, T, N]): the linear writes the quantize step's dims directly.
        pattern.absorbed.append(users[0])
        users = list(users[0].users)
    if (
        len(users) != 1
        or not inside(users[0])
        or aten_op(users[0].target) != QUANTIZE
        or step_qparams(users[0]) is None
    ):
        return None, "its result is not quantized to int8 inside the partition"
    pattern.output = users[0]
    if any(dynamic(d) for d in sym_shape(pattern.output)):
        return None, "dynamic sizes"
    why = OPS[target].check(node, ep) if target in OPS else None
    why = why or INT8_OPS[target].check(pattern, ep)
    return (None, why) if why else (pattern, None)


def _row_view_source(x):
    """The input of `x` when `x` is a view that keeps the last dim (so
    leaves a row-wise op's rows as they are), else `x` itself."""
    if (
        isinstance(x, torch.fx.Node)
        and aten_op(x.target) in (aten.view_copy.default, aten.view.default)
        and shape(x)[-1:] == shape(x.args[0])[-1:]
    ):
        return x.args[0]
    return x


def feeds_int8_linear(
    node: torch.fx.Node, ep, inside: Callable[[torch.fx.Node], bool] = lambda n: True
) -> bool:
    """True for a view whose only reader is an int8 linear that reads
    through it (the linear takes the view's int8 input directly)."""
    users = list(node.users)
    return (
        _row_view_source(node) is not node
        and len(users) == 1
        and aten_op(users[0].target) in _LINEARS
        and _linear_parts(users[0])[0] is node
        and int8_pattern(users[0], ep, inside)[0] is not None
    )


def _try_lower(ctx: Lowering, node: torch.fx.Node) -> bool:
    if feeds_int8_linear(node, ctx.ep):
        ctx.absorbed.add(node)
        return True
    pattern, _ = int8_pattern(node, ctx.ep)
    if pattern is None:
        return False
    INT8_OPS[aten_op(node.target)].lower(ctx, pattern)
    ctx.absorbed.update(pattern.absorbed)
    return True


PATTERNS.append(_try_lower)


def int8_op(targets, check=lambda pattern, ep: None):
    """Decorator: `lower(ctx, pattern)` lowers int8 patterns rooted at the
    ATen ops `targets`, which `check(pattern, ep)` accepts."""

    def decorator(lower):
        for target in targets:
            INT8_OPS[target] = Int8Op(check, lower)
        return lower

    return decorator


# Values -----------------------------------------------------------------------


def _per_tensor(params: QParams) -> Tuple[int, PerTensorQuantT]:
    table = PerTensorQuantT()
    table.scale, table.zeroPoint = float(params.scale), int(params.zero_point)
    return XNNQuantParams.PerTensorQuant, table


def _per_channel(scales: torch.Tensor, channel_dim: int) -> Tuple[int, object]:
    table = PerChannelQuantT()
    table.scale = [float(s) for s in scales]
    table.channelDim = channel_dim
    table.scaleBufferIdx = 0
    table.numScales = len(table.scale)
    return XNNQuantParams.PerChannelQuant, table


def define_int8(ctx: Lowering, step: torch.fx.Node, layout: str) -> int:
    """A new int8 value for quantize step `step` in int8 `layout`."""
    dims = shape(step)
    value = _int8_tensor(
        ctx, nhwc(dims) if layout == Q_NHWC else dims, step_qparams(step)
    )
    ctx.ids[(step, layout)] = value
    return value


def _int8_tensor(ctx: Lowering, dims, params: QParams) -> int:
    """A new int8 intermediate value of `dims` with `params`."""
    kind, table = _per_tensor(params)
    return ctx.builder.add_value(
        list(dims),
        XNNDatatype.xnn_datatype_qint8,
        quant_params_type=kind,
        quant_params=table,
    )


def int8_value(ctx: Lowering, x: torch.fx.Node, layout: str) -> int:
    """The int8 value behind dequantize step `x` in int8 `layout`,
    transposing (once) if it exists only in the other layout."""
    step = x.args[0]
    if (step, layout) in ctx.ids:
        return ctx.ids[(step, layout)]
    other = Q_CONTIGUOUS if layout == Q_NHWC else Q_NHWC
    source = ctx.ids[(step, other)]
    dims = sym_shape(step)
    out = define_int8(ctx, step, layout)
    if layout == Q_NHWC:
        ctx.permute(source, out, dims, TO_NHWC)
    else:
        ctx.permute(source, out, nhwc(dims), TO_NCHW)
    return out


def int8_layout(ctx: Lowering, x: torch.fx.Node) -> str:
    """The int8 layout dequantize step `x`'s value already has."""
    return Q_NHWC if (x.args[0], Q_NHWC) in ctx.ids else Q_CONTIGUOUS


def _weight_value(ctx, values: torch.Tensor, weight: Weight, channel_dim: int) -> int:
    if weight.per_channel:
        datatype = XNNDatatype.xnn_datatype_qcint8
        kind, table = _per_channel(weight.scales, channel_dim)
    else:
        datatype = XNNDatatype.xnn_datatype_qint8
        kind, table = _per_tensor(QParams(float(weight.scales[0]), 0))
    return ctx.builder.add_value(
        list(values.shape),
        datatype,
        constant=tensor_bytes(values),
        quant_params_type=kind,
        quant_params=table,
    )


def _bias_value(ctx, bias, input_scale: float, weight: Weight) -> int:
    """The bias in int32 on scale input_scale * weight_scale (per channel
    with per-channel weights), as XNNPACK's int8 kernels add it."""
    if bias is None:
        return XNN_INVALID_VALUE_ID
    b = ctx.constants[bias].to(torch.float32).reshape(-1)
    scales = (weight.scales * input_scale).to(torch.float32)
    values = torch.round(b.double() / scales.double())
    values = values.clamp(_INT32_MIN, _INT32_MAX).to(torch.int32)
    if weight.per_channel:
        datatype = XNNDatatype.xnn_datatype_qcint32
        kind, table = _per_channel(scales, 0)
    else:
        datatype = XNNDatatype.xnn_datatype_qint32
        kind, table = _per_tensor(QParams(float(scales[0]), 0))
    return ctx.builder.add_value(
        [b.numel()],
        datatype,
        constant=tensor_bytes(values),
        quant_params_type=kind,
        quant_params=table,
    )


def _bias_check(bias, ep) -> Optional[str]:
    if bias is not None and not is_constant_node(bias, ep):
        return "non-constant bias"
    return None


# Quantize and dequantize steps -------------------------------------------------


@register([QUANTIZE], _check_step)
def lower_quantize(ctx: Lowering, node: torch.fx.Node) -> None:
    """A quantize step of an fp32 value: XNNConvert to int8."""
    x = node.args[0]
    layout = ctx.layout_of(x)
    source = ctx.value(x, layout)
    ctx.unary(XNodeUnion.XNNConvert, source, define_int8(ctx, node, _TO_INT8[layout]))


@register([DEQUANTIZE], _check_step)
def lower_dequantize(ctx: Lowering, node: torch.fx.Node) -> None:
    """A dequantize step: int8 ops read the int8 value directly; an fp32 op
    reading it gets an XNNConvert to fp32, made on first use."""

    def to_fp32():
        layout = int8_layout(ctx, node)
        source = int8_value(ctx, node, layout)
        ctx.unary(XNodeUnion.XNNConvert, source, ctx.define(node, _TO_FP32[layout]))

    ctx.lazy[node] = to_fp32


OWN_DTYPES.update([QUANTIZE, DEQUANTIZE])

# The linears FuseQuantizedWeightsPass makes run on our kernels: Debian's
# 2022 XNNPACK has neither dynamic-range nor 4-bit fully connected.
_et_quantized = torch.ops.et_quantized
NOT_LOWERED_BECAUSE.update(
    {
        _et_quantized.dynamic_int8_linear_panels.default: "dynamically quantized linear: "
        "runs on our et_quantized kernel (no dynamic-range int8 fully connected "
        "in Debian's 2022 XNNPACK)",
        _et_quantized.weight_only_linear.default: "weight-only quantized linear: "
        "runs on our et_quantized kernel (no 4-bit or weight-only fully "
        "connected in Debian's 2022 XNNPACK)",
    }
)


# Int8 ops ---------------------------------------------------------------------


def _conv_check(pattern: Pattern, ep) -> Optional[str]:
    args = normalized_args(pattern.node)
    if args["transposed"]:
        return "transposed convolution"
    if len(shape(pattern.node)) != 4:
        return "only 2-D convolution"
    if not _int8_activation(args["input"], pattern.inside):
        return "input is not an int8 value"
    _, why = int8_weight(args["weight"], ep)
    return why or _bias_check(args["bias"], ep)


@int8_op([aten.convolution.default], _conv_check)
def lower_int8_conv(ctx: Lowering, pattern: Pattern) -> None:
    args = normalized_args(pattern.node)
    weight, _ = int8_weight(args["weight"], ctx.ep)
    table = conv_table(args, shape(args["input"])[1])
    kind, values, channel_dim = forward_filter(table, weight.values)
    x = args["input"]
    table.input1Id = int8_value(ctx, x, Q_NHWC)
    table.filterId = _weight_value(ctx, values, weight, channel_dim)
    table.biasId = _bias_value(ctx, args["bias"], step_qparams(x).scale, weight)
    output = define_int8(ctx, pattern.output, Q_NHWC)
    table.outputId, table.flags = output, 0
    ctx.add_node(kind, table, output, clamp=pattern.clamp)


_POINTWISE = {"padding": 0, "stride": 1, "dilation": 1, "groups": 1}


def _linear_parts(node):
    """(input, weight dequantize step, bias) of linear / addmm / mm with
    its weight transposed by a permute ([K, N] from [N, K])."""
    target = aten_op(node.target)
    args = normalized_args(node)
    if target == aten.linear.default:
        return args["input"], args["weight"], args["bias"]
    x, weight = (args["mat1"], args["mat2"]) if target == aten.addmm.default else (
        args["self"],
        args["mat2"],
    )
    bias = args["self"] if target == aten.addmm.default else None
    if (
        isinstance(weight, torch.fx.Node)
        and aten_op(weight.target) == aten.permute_copy.default
        and list(weight.args[1]) == [1, 0]
    ):
        return x, weight.args[0], bias
    return x, None, bias


def _linear_check(pattern: Pattern, ep) -> Optional[str]:
    x, weight, bias = _linear_parts(pattern.node)
    if weight is None:
        return "weight is not a transposed constant"
    if not _int8_activation(_row_view_source(x), pattern.inside):
        return "input is not an int8 value"
    _, why = int8_weight(weight, ep)
    return why or _bias_check(bias, ep)


_LINEARS = (aten.linear.default, aten.addmm.default, aten.mm.default)


@int8_op(_LINEARS, _linear_check)
def lower_int8_linear(ctx: Lowering, pattern: Pattern) -> None:
    """Per-tensor weights: an int8 fully connected node. Per-channel ones:
    a 1x1 convolution over [1, 1, rows, K] (Debian's XNNPACK has no
    per-channel int8 fully connected; its 1x1 convolution is the same
    GEMM). Views around it that only split or merge the leading dims are
    reshapes of the int8 values."""
    x, weight_node, bias = _linear_parts(pattern.node)
    x = _row_view_source(x)
    weight, _ = int8_weight(weight_node, ctx.ep)
    n, k = weight.values.shape
    rows = math.prod(shape(x)[:-1])
    x_params, out_params = step_qparams(x), step_qparams(pattern.output)
    bias_id = _bias_value(ctx, bias, x_params.scale, weight)
    if weight.per_channel:
        in_dims, out_dims = [1, 1, rows, k], [1, 1, rows, n]
        table = conv_table(_POINTWISE, k)
        table.groupOutputChannels = n
        table.kernelHeight = table.kernelWidth = 1
        values, kind = weight.values.reshape(n, 1, 1, k), XNodeUnion.XNNConv2d
    else:
        in_dims, out_dims = [rows, k], [rows, n]
        table = XNNFullyConnectedT()
        values, kind = weight.values, XNodeUnion.XNNFullyConnected
    table.input1Id = int8_value(ctx, x, Q_CONTIGUOUS)
    if shape(x) != in_dims:
        reshaped = _int8_tensor(ctx, in_dims, x_params)
        ctx.reshape(table.input1Id, reshaped, in_dims, shape(x))
        table.input1Id = reshaped
    table.filterId = _weight_value(ctx, values, weight, 0)
    table.biasId = bias_id
    table.flags = 0
    if shape(pattern.output) == out_dims:
        table.outputId = define_int8(ctx, pattern.output, Q_CONTIGUOUS)
        ctx.add_node(kind, table, table.outputId, clamp=pattern.clamp)
        return
    table.outputId = _int8_tensor(ctx, out_dims, out_params)
    ctx.add_node(kind, table, table.outputId, clamp=pattern.clamp)
    output = define_int8(ctx, pattern.output, Q_CONTIGUOUS)
    ctx.reshape(table.outputId, output, shape(pattern.output), out_dims)


def _binary_check(pattern: Pattern, ep) -> Optional[str]:
    args = normalized_args(pattern.node)
    operands = [args["self"], args["other"]]
    if not all(_int8_activation(x, pattern.inside) for x in operands):
        return "an operand is not an int8 value"
    if args.get("alpha", 1) not in (None, 1):
        return "add with alpha"
    if any(len(shape(x)) != len(shape(pattern.node)) for x in operands):
        return "operands of different ranks"
    return None


_INT8_BINARY = {
    aten.add.Tensor: XNodeUnion.XNNAdd,
    aten.sub.Tensor: XNodeUnion.XNNSubtract,
    aten.mul.Tensor: XNodeUnion.XNNMultiply,
}


@int8_op(list(_INT8_BINARY), _binary_check)
def lower_int8_binary(ctx: Lowering, pattern: Pattern) -> None:
    args = normalized_args(pattern.node)
    a, b = args["self"], args["other"]
    # Stay in NHWC when an operand is there (between convolutions).
    layout = Q_CONTIGUOUS
    if len(shape(pattern.node)) == 4 and Q_NHWC in (
        int8_layout(ctx, a),
        int8_layout(ctx, b),
    ):
        layout = Q_NHWC
    output = define_int8(ctx, pattern.output, layout)
    kind = _INT8_BINARY[aten_op(pattern.node.target)]
    ctx.binary(
        kind,
        int8_value(ctx, a, layout),
        int8_value(ctx, b, layout),
        output,
        clamp=pattern.clamp,
    )


def _same_params_check(pattern: Pattern, ep) -> Optional[str]:
    """Ops that move int8 values (pools, clamps, reshapes) keep their
    input's parameters; XNNPACK's take no requantization."""
    x = pattern.node.args[0]
    if not _int8_activation(x, pattern.inside):
        return "input is not an int8 value"
    if step_qparams(x) != step_qparams(pattern.output):
        return "output parameters differ from the input's"
    return None


@int8_op(
    [aten.max_pool2d.default, aten.max_pool2d_with_indices.default],
    _same_params_check,
)
def lower_int8_max_pool(ctx: Lowering, pattern: Pattern) -> None:
    source = int8_value(ctx, pattern.node.args[0], Q_NHWC)
    output = define_int8(ctx, pattern.output, Q_NHWC)
    kind, table = pool_table(pattern.node)
    if table is None:
        ctx.unary(kind, source, output)
        return
    table.inputId, table.outputId, table.flags = source, output, XNN_FLAG_KEEP_DIMS
    ctx.add_node(kind, table, output, clamp=pattern.clamp)


def _global_pool_check(pattern: Pattern, ep) -> Optional[str]:
    if not _int8_activation(pattern.node.args[0], pattern.inside):
        return "input is not an int8 value"
    return None


@int8_op(
    [aten.mean.dim, aten._adaptive_avg_pool2d.default, aten.adaptive_avg_pool2d.default],
    _global_pool_check,
)
def lower_int8_global_pool(ctx: Lowering, pattern: Pattern) -> None:
    x = pattern.node.args[0]
    n, c = shape(x)[:2]
    source = int8_value(ctx, x, Q_NHWC)
    out_step = pattern.output
    if len(shape(out_step)) == 4:
        output = define_int8(ctx, out_step, Q_NHWC)
    else:
        output = _int8_tensor(ctx, [n, 1, 1, c], step_qparams(out_step))
    node = ctx.unary(
        XNodeUnion.XNNGlobalAvgPooling2d, source, output, clamp=pattern.clamp
    )
    node.xnodeUnion.flags = XNN_FLAG_KEEP_DIMS
    if len(shape(out_step)) != 4:
        # NHWC [N, 1, 1, C] has the memory of [N, C].
        reshaped = define_int8(ctx, out_step, Q_CONTIGUOUS)
        ctx.reshape(output, reshaped, shape(out_step), [n, 1, 1, c])


@int8_op([aten.relu.default, aten.hardtanh.default], _same_params_check)
def lower_int8_clamp(ctx: Lowering, pattern: Pattern) -> None:
    x = pattern.node.args[0]
    layout = int8_layout(ctx, x)
    lo, hi = _clamp_of(pattern.node)
    if pattern.clamp is not None:
        lo, hi = max(lo, pattern.clamp[0]), min(hi, pattern.clamp[1])
    output = define_int8(ctx, pattern.output, layout)
    ctx.unary(XNodeUnion.XNNClamp, int8_value(ctx, x, layout), output, clamp=(lo, hi))


# XNNPACK's int8 sigmoid writes on this fixed output scale and zero point.
_SIGMOID_OUTPUT = QParams(1.0 / 256.0, -128)


def _sigmoid_check(pattern: Pattern, ep) -> Optional[str]:
    if step_qparams(pattern.output) != _SIGMOID_OUTPUT:
        return "int8 sigmoid needs output scale 1/256 and zero point -128"
    return None


@int8_op([aten.sigmoid.default], _sigmoid_check)
def lower_int8_sigmoid(ctx: Lowering, pattern: Pattern) -> None:
    x = pattern.node.args[0]
    layout = int8_layout(ctx, x)
    output = define_int8(ctx, pattern.output, layout)
    ctx.unary(XNodeUnion.XNNSigmoid, int8_value(ctx, x, layout), output)


@int8_op([aten.view_copy.default, aten.view.default], _same_params_check)
def lower_int8_view(ctx: Lowering, pattern: Pattern) -> None:
    x = pattern.node.args[0]
    source = int8_value(ctx, x, Q_CONTIGUOUS)
    output = define_int8(ctx, pattern.output, Q_CONTIGUOUS)
    ctx.reshape(source, output, shape(pattern.output), shape(x))
