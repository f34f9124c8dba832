"""Gives the default dim order to the operators whose kernels need it.

A program exported from a channels-last model (`model.to(memory_format=
torch.channels_last)`, or an input in that layout) keeps the layout that
eager PyTorch's strides give each value. The kernels of pointwise ops,
convolution, inference batch norm, pooling, reductions and the view copies
read any dim order; the others (softmax, cat, upsampling, the norms,
padding, indexing, sorting, ...) need the default one and refuse other
layouts at run time. Before such an operator this pass inserts a
`_to_dim_order_copy` into the default dim order for each input in another
layout, and after it, one back into the layout the graph gave its result,
so every other node sees the values it saw before. Programs without
channels-last values are unchanged. Quantized programs' (de)quantize
ops are treated the same way.

It also restates each layout copy's `dim_order` argument as the dim order
of its result: around size-1 dims strides are ambiguous (a one-channel
channels-last tensor's read as [0, 2, 1, 3], and re-propagating shapes may
read them otherwise), and the runtime requires the argument to match the
dim order its `out` tensor is planned with, which comes from the result.
"""

from typing import List

import torch

from executorch.exir.dialects._ops import ops as exir_ops
from executorch.exir.dim_order_utils import dim_order_of
from executorch.exir.pass_base import PassBase, PassResult

_TO_DIM_ORDER = exir_ops.edge.dim_order_ops._to_dim_order_copy.default
_LAYOUT_COPIES = (_TO_DIM_ORDER, exir_ops.edge.dim_order_ops._clone_dim_order.default)

# The namespaces whose operators' kernels this pass knows.
_NAMESPACES = ("aten", "quantized_decomposed")

# aten operators (besides those tagged pointwise) whose portable and
# optimized kernels take every dim order; none of quantized_decomposed's do.
_ANY_DIM_ORDER = {
    f"aten::{name}"
    for name in (
        "convolution",
        "_native_batch_norm_legit_no_training",
        "max_pool2d_with_indices",
        "max_pool3d_with_indices",
        "avg_pool2d",
        "avg_pool3d",
        "mean",
        "sum",
        "amax",
        "amin",
        "argmax",
        "argmin",
        "var",
        "clone",
        "view_copy",
        "permute_copy",
        "transpose_copy",
        "t_copy",
        "expand_copy",
        "select_copy",
        "slice_copy",
        "squeeze_copy",
        "unsqueeze_copy",
        "alias_copy",
        "split_copy",
        "split_with_sizes_copy",
        "narrow_copy",
        "flip",
        "repeat",
        "_prelu_kernel",
        "nonzero",
    )
}


def _default(rank: int) -> List[int]:
    return list(range(rank))


def _in_other_layout(value) -> bool:
    val = value.meta.get("val") if isinstance(value, torch.fx.Node) else None
    return isinstance(val, torch.Tensor) and dim_order_of(val) != _default(val.dim())


def _needs_default(node: torch.fx.Node) -> bool:
    target = node.target
    namespace = getattr(target, "namespace", None)
    if node.op != "call_function" or namespace not in _NAMESPACES:
        return False
    op = target._op
    # Size arithmetic (sym_size) wraps Python builtins, no tensors; an
    # operator that writes an argument (copy_ into a buffer) must write the
    # tensor itself, not a copy.
    if not isinstance(op, torch._ops.OpOverload) or any(
        a.alias_info is not None and a.alias_info.is_write
        for a in op._schema.arguments
    ):
        return False
    return torch.Tag.pointwise not in op.tags and op._schema.name not in _ANY_DIM_ORDER


def _convert(graph, value: torch.fx.Node, dim_order: List[int], val, like):
    """A `_to_dim_order_copy` of `value` into `dim_order` (its meta: `val`),
    inserted at the current insertion point; `like` lends its stack trace."""
    copy = graph.call_function(_TO_DIM_ORDER, (value,), {"dim_order": dim_order})
    copy.meta["val"] = val
    if "stack_trace" in like.meta:
        copy.meta["stack_trace"] = like.meta["stack_trace"]
    return copy


def _restore_layout(graph, result: torch.fx.Node) -> None:
    """Makes `result` default-ordered and gives its readers a copy in the
    layout they saw."""
    val = result.meta["val"]
    result.meta["val"] = val.contiguous()
    readers = list(result.users)
    with graph.inserting_after(result):
        back = _convert(graph, result, dim_order_of(val), val, result)
    for reader in readers:
        reader.replace_input_with(result, back)


def _restate_dim_order(copy: torch.fx.Node) -> bool:
    if copy.kwargs.get("dim_order") is None:
        return False
    order = dim_order_of(copy.meta["val"])
    if order == list(copy.kwargs["dim_order"]):
        return False
    copy.kwargs = {**copy.kwargs, "dim_order": order}
    return True


class DefaultDimOrderPass(PassBase):
    """Converts into and out of the default dim order around the operators
    that need it."""

    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        graph = graph_module.graph
        changed = False
        for node in list(graph.nodes):
            if node.target in _LAYOUT_COPIES:
                changed = _restate_dim_order(node) or changed
            if not _needs_default(node):
                continue
            inputs = [a for a in node.all_input_nodes if _in_other_layout(a)]
            for value in inputs:
                val = value.meta["val"]
                with graph.inserting_before(node):
                    copy = _convert(
                        graph, value, _default(val.dim()), val.contiguous(), node
                    )
                node.replace_input_with(value, copy)
            val = node.meta.get("val")
            if isinstance(val, (tuple, list)):
                # Several results: their getitem readers stand for them.
                outputs = [u for u in node.users if _in_other_layout(u)]
                node.meta["val"] = type(val)(
                    v.contiguous() if isinstance(v, torch.Tensor) else v for v in val
                )
            else:
                outputs = [node] if _in_other_layout(node) else []
            for result in outputs:
                _restore_layout(graph, result)
            changed = changed or bool(inputs or outputs)
        graph_module.recompile()
        return PassResult(graph_module, changed)
