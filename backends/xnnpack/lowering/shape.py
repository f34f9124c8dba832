"""Operators that move data: views and reshapes, non-repeating expands,
permutes and transposes, select and slice, concatenation and constant
padding.

Dynamic shapes: a reshape records where each output size comes from (an
input dim, a static size, or one dim inferred from the element count), a
slice whether its window runs to the end of a dynamic dim or counts from it
(`modes`, this project's extension of upstream's format). Upstream's
runtime reads neither: a blob whose reshapes have two or more dynamic sizes,
or whose slices follow a dynamic dim, runs there at the upper bounds only.
"""

import math
from typing import Any, Sequence, Tuple

import torch

from executorch.backends.xnnpack.lowering.core import (
    XnnpackLoweringError,
    aten,
    aten_op,
    bound,
    check_rank,
    dynamic,
    lowering_error,
    nhwc,
    normalized_args,
    register,
    reshape_params,
    same_size,
    shape,
    sym_shape,
    NHWC,
    TO_NHWC,
)
from executorch.backends.xnnpack.serialization.xnnpack_graph_schema import (
    SliceMode,
    XNNStaticConstantPadT,
    XNNStaticSliceT,
    XNodeUnion,
    _XNNCatT,
)

_VIEWS = [
    aten.view.default,
    aten.view_copy.default,
    aten._unsafe_view.default,
    aten.reshape.default,
    aten.squeeze.dims,
    aten.squeeze_copy.dims,
    aten.squeeze.dim,
    aten.squeeze_copy.dim,
    aten.unsqueeze.default,
    aten.unsqueeze_copy.default,
    aten.clone.default,
    aten.alias.default,
    aten.alias_copy.default,
]


def _check_view(node, ep):
    return check_rank(node, ep) or lowering_error(
        lambda: reshape_params(sym_shape(node), sym_shape(node.args[0]))
    )


@register(_VIEWS, _check_view)
def lower_view(ctx, node):
    x = node.args[0]
    ctx.reshape(ctx.value(x), ctx.define(node), sym_shape(node), sym_shape(x))


def _check_expand(node, ep):
    if math.prod(shape(node.args[0])) != math.prod(shape(node)):
        return "expand that repeats data"
    return _check_view(node, ep)


register([aten.expand.default, aten.expand_copy.default], _check_expand)(
    lower_view
)


@register(
    [
        aten.permute.default,
        aten.permute_copy.default,
        aten.t.default,
        aten.t_copy.default,
        aten.transpose.int,
        aten.transpose_copy.int,
    ],
    check_rank,
)
def lower_permute(ctx, node):
    target = aten_op(node.target)
    rank = len(shape(node))
    if target in (aten.t.default, aten.t_copy.default):
        perm = [1, 0] if rank == 2 else [0]
    elif target in (aten.transpose.int, aten.transpose_copy.int):
        perm = list(range(rank))
        d0, d1 = (d % rank for d in node.args[1:3])
        perm[d0], perm[d1] = perm[d1], perm[d0]
    else:
        perm = [d % rank for d in node.args[1]]
    x = node.args[0]
    # Reading an NHWC value through an NCHW -> NHWC permute is free.
    if perm == TO_NHWC and (x, NHWC) in ctx.ids:
        ctx.reshape(
            ctx.ids[(x, NHWC)], ctx.define(node), sym_shape(node), nhwc(sym_shape(x))
        )
        return
    ctx.permute(ctx.value(x), ctx.define(node), sym_shape(x), perm)


# Slices -----------------------------------------------------------------------


def _slice_window(size: Any, start: Any, end: Any, out_size: Any) -> Tuple[int, int, int]:
    """(SliceMode, offset, size at the upper bounds) of PyTorch's slice
    [start:end] (step 1) of a dim of `size`, whose result the export gives as
    `out_size`."""
    start = 0 if start is None else start
    to_end = (
        end is None
        or (isinstance(end, int) and end >= bound(size))
        or (dynamic(end) and same_size(end, size))
    )
    if dynamic(start) or (dynamic(end) and not to_end):
        raise XnnpackLoweringError(
            "slice bounds that follow a dynamic size other than the sliced dim's"
        )
    if not dynamic(size):
        # PyTorch's clamping of out-of-range bounds.
        start = max(0, min(size, start + size if start < 0 else start))
        return SliceMode.fixed, start, bound(out_size)
    if to_end and start >= 0:
        mode, offset, expected = SliceMode.to_end, start, size - start
    elif start >= 0 and end >= 0:
        mode, offset, expected = SliceMode.fixed, start, end - start
    elif start < 0 and (to_end or end < 0):
        mode, offset = SliceMode.from_end, -start
        expected = -start if to_end else end - start
    else:
        raise XnnpackLoweringError(
            f"slice [{start}:{end}] of a dynamic dim counts its start from the "
            "beginning and its end from the end"
        )
    # PyTorch clamps bounds past the size; the backend rejects them at run
    # time, so the export's size must be the unclamped one.
    if not same_size(expected, out_size):
        raise XnnpackLoweringError(
            f"slice [{start}:{end}] of a dynamic dim of {size}: the exported "
            f"size {out_size} is not {expected}"
        )
    return mode, offset, bound(out_size)


def _slice_table(
    in_shape: Sequence[Any], dim: int, start: Any, end: Any, out_size: Any
) -> XNNStaticSliceT:
    """static_slice of [start:end] along `dim`; other dims whole (dynamic
    ones to their end)."""
    table = XNNStaticSliceT()
    table.numDims = len(in_shape)
    table.offsets, table.sizes, modes = [], [], []
    for d, size in enumerate(in_shape):
        if d == dim:
            mode, offset, size_bound = _slice_window(size, start, end, out_size)
        else:
            mode = SliceMode.to_end if dynamic(size) else SliceMode.fixed
            offset, size_bound = 0, bound(size)
        modes.append(mode)
        table.offsets.append(offset)
        table.sizes.append(size_bound)
    if any(m != SliceMode.fixed for m in modes):
        table.modes = modes
    return table


def _size_arg(arg: Any) -> Any:
    """An int argument, or the SymInt a size node computes for it."""
    return arg.meta["val"] if isinstance(arg, torch.fx.Node) else arg


def _slice_params(node) -> XNNStaticSliceT:
    args = normalized_args(node)
    dims = sym_shape(args["self"])
    dim = int(args["dim"]) % len(dims)
    return _slice_table(
        dims,
        dim,
        _size_arg(args["start"]),
        _size_arg(args["end"]),
        sym_shape(node)[dim],
    )


def _select_params(node):
    """(input, dim, the size-1 slice's table) of a select."""
    args = normalized_args(node)
    x = args["self"]
    dims = sym_shape(x)
    dim = int(args["dim"]) % len(dims)
    index = _size_arg(args["index"])
    if dynamic(index):
        raise XnnpackLoweringError("select at an index that follows a dynamic size")
    if not dynamic(dims[dim]):
        index %= dims[dim]
    # Index -1 takes [-1:], which has no end index.
    end = None if index == -1 else index + 1
    return x, dim, _slice_table(dims, dim, index, end, 1)


def _add_slice(ctx, table: XNNStaticSliceT, source: int, out: int) -> None:
    table.inputId, table.outputId, table.flags = source, out, 0
    ctx.add_node(XNodeUnion.XNNStaticSlice, table, out)


def _check_slice(node, ep):
    if normalized_args(node)["step"] != 1:
        return "slice with a step"
    return lowering_error(lambda: _slice_params(node))


@register([aten.slice.Tensor, aten.slice_copy.Tensor], _check_slice)
def lower_slice(ctx, node):
    source = ctx.value(normalized_args(node)["self"])
    _add_slice(ctx, _slice_params(node), source, ctx.define(node))


def _check_select(node, ep):
    return check_rank(node, ep) or lowering_error(lambda: _select_params(node))


@register([aten.select.int, aten.select_copy.int], _check_select)
def lower_select(ctx, node):
    # A size-1 slice, then a reshape that drops the dim.
    x, dim, table = _select_params(node)
    sliced_shape = sym_shape(x)
    sliced_shape[dim] = 1
    sliced = ctx.tensor([bound(d) for d in sliced_shape])
    _add_slice(ctx, table, ctx.value(x), sliced)
    ctx.reshape(sliced, ctx.define(node), sym_shape(node), sliced_shape)


# Concatenation and padding ----------------------------------------------------

_CONCATENATE = {
    2: XNodeUnion.XNNConcatenate2,
    3: XNodeUnion.XNNConcatenate3,
    4: XNodeUnion.XNNConcatenate4,
    5: XNodeUnion.XNNConcatenate5,
}


def _check_cat(node, ep):
    tensors = normalized_args(node)["tensors"]
    if not all(isinstance(t, torch.fx.Node) for t in tensors):
        return "non-tensor inputs"
    return None


def _add_cat(ctx, values, axis: int, out: int) -> None:
    table = _XNNCatT()
    table.axis = axis
    ids = values + [0] * (5 - len(values))
    table.input1Id, table.input2Id, table.input3Id = ids[:3]
    table.input4Id, table.input5Id = ids[3:]
    table.outputId, table.flags = out, 0
    ctx.add_node(_CONCATENATE[len(values)], table, out)


@register([aten.cat.default], _check_cat)
def lower_cat(ctx, node):
    args = normalized_args(node)
    axis = int(args["dim"]) % len(shape(node))
    values = [ctx.value(t) for t in args["tensors"]]
    out = ctx.define(node)
    if len(values) == 1:
        ctx.unary(XNodeUnion.XNNCopy, values[0], out)
        return
    # Upstream's format joins at most 5 inputs per node: more are joined 5
    # at a time, left to right.
    while len(values) > 5:
        dims = ctx.builder.dims(values[0])
        dims[axis] = sum(ctx.builder.dims(v)[axis] for v in values[:5])
        joined = ctx.tensor(dims)
        _add_cat(ctx, values[:5], axis, joined)
        values = [joined] + values[5:]
    _add_cat(ctx, values, axis, out)


def _check_pad(node, ep):
    if any(p < 0 for p in normalized_args(node)["pad"]):
        return "negative padding (cropping)"
    return None


@register([aten.constant_pad_nd.default], _check_pad)
def lower_pad(ctx, node):
    args = normalized_args(node)
    pad = list(args["pad"])
    rank = len(shape(node))
    pre, post = [0] * rank, [0] * rank
    for i in range(len(pad) // 2):
        pre[rank - 1 - i], post[rank - 1 - i] = pad[2 * i], pad[2 * i + 1]
    table = XNNStaticConstantPadT()
    table.prePaddings, table.postPaddings = pre, post
    table.paddingValue = float(args["value"])
    out = ctx.define(node)
    table.inputId, table.outputId, table.flags = ctx.value(args["self"]), out, 0
    ctx.add_node(XNodeUnion.XNNStaticConstantPad, table, out)
