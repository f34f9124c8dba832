"""Bilinear upsampling of NHWC values to a static size, with half-pixel
centers (align_corners=False) or XNN_FLAG_ALIGN_CORNERS."""

from executorch.backends.xnnpack.lowering.core import (
    NHWC,
    aten,
    dynamic,
    normalized_args,
    register,
    shape,
    sym_shape,
)
from executorch.backends.xnnpack.serialization.xnnpack_graph_schema import (
    XNN_FLAG_ALIGN_CORNERS,
    XNNStaticResizeBilinear2DT,
    XNodeUnion,
)


def _check_upsample(node, ep):
    if len(shape(node)) != 4:
        return "not a 4-D input"
    if any(dynamic(d) for d in sym_shape(node)[2:]):
        return "resize to a size that follows a dynamic size"
    return None


@register(
    [aten.upsample_bilinear2d.default, aten.upsample_bilinear2d.vec],
    _check_upsample,
)
def lower_upsample(ctx, node):
    args = normalized_args(node)
    table = XNNStaticResizeBilinear2DT()
    table.newHeight, table.newWidth = shape(node)[2:]
    x = args.get("input", args.get("self"))
    out = ctx.define(node, NHWC)
    table.inputId, table.outputId = ctx.value(x, NHWC), out
    table.flags = XNN_FLAG_ALIGN_CORNERS if args["align_corners"] else 0
    ctx.add_node(XNodeUnion.XNNStaticResizeBilinear2D, table, out)
