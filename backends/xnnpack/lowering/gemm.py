"""Matrix products: linear, addmm and mm with a constant right operand
become fully connected layers (weights packed once by XNNPACK); mm, bmm and
matmul of two computed operands become batch matrix multiplies."""

from executorch.backends.xnnpack.lowering.core import (
    aten,
    aten_op,
    is_constant_node,
    normalized_args,
    register,
    shape,
)
from executorch.backends.xnnpack.serialization.xnnpack_graph_schema import (
    XNN_FLAG_TRANSPOSE_WEIGHTS,
    XNN_INVALID_VALUE_ID,
    XNNFullyConnectedT,
    XNodeUnion,
)


def _linear_operands(node):
    """(input, weight, bias or None, weight is [K, N])."""
    target = aten_op(node.target)
    args = normalized_args(node)
    if target == aten.addmm.default:
        return args["mat1"], args["mat2"], args["self"], True
    if target == aten.mm.default:
        return args["self"], args["mat2"], None, True
    return args["input"], args["weight"], args["bias"], False


def _check_linear(node, ep):
    args = normalized_args(node)
    _, weight, bias, _ = _linear_operands(node)
    if aten_op(node.target) == aten.addmm.default:
        if args["beta"] != 1 or args["alpha"] != 1:
            return "addmm with alpha or beta"
        bias_shape = shape(bias)
        if len(bias_shape) not in (1, 2) or (
            len(bias_shape) == 2 and bias_shape[0] != 1
        ):
            return "addmm bias is not a row"
    if not is_constant_node(weight, ep) or (
        bias is not None and not is_constant_node(bias, ep)
    ):
        return "non-constant weights (lowered as batch matmul when both are 2-D+)"
    return None


@register([aten.addmm.default, aten.linear.default], _check_linear)
def lower_linear(ctx, node):
    x, weight, bias, transposed = _linear_operands(node)
    table = XNNFullyConnectedT()
    table.input1Id = ctx.value(x)
    table.filterId = ctx.constant(ctx.constants[weight])
    table.biasId = (
        ctx.constant(ctx.constants[bias].reshape(-1))
        if bias is not None
        else XNN_INVALID_VALUE_ID
    )
    out = ctx.define(node)
    table.outputId = out
    table.flags = XNN_FLAG_TRANSPOSE_WEIGHTS if transposed else 0
    ctx.add_node(XNodeUnion.XNNFullyConnected, table, out)


def _check_matmul(node, ep):
    a, b = node.args[0], node.args[1]
    if len(shape(a)) != len(shape(b)) or len(shape(a)) < 2:
        return "operands of different ranks"
    if shape(a)[:-2] != shape(b)[:-2]:
        return "broadcast batch dims"
    return None


@register([aten.bmm.default], _check_matmul)
def lower_matmul(ctx, node):
    ctx.binary(
        XNodeUnion.XNNBatchMatrixMultiply,
        ctx.value(node.args[0]),
        ctx.value(node.args[1]),
        ctx.define(node),
    )


def _check_mm(node, ep):
    if _check_linear(node, ep) is None:
        return None
    return _check_matmul(node, ep)


@register([aten.mm.default], _check_mm)
def lower_mm(ctx, node):
    # A constant right operand makes it a fully connected layer.
    if _check_linear(node, ctx.ep) is None:
        lower_linear(ctx, node)
    else:
        lower_matmul(ctx, node)
