"""Copies that move no bytes become memory aliases.

A static reshape (`view_copy`, `squeeze_copy`, `unsqueeze_copy`) of a
contiguous tensor into a contiguous result, and the copies that keep every
byte in place (`clone`, a `_to_dim_order_copy` to the same dtype and layout,
an `expand_copy` to the same shape, a `permute_copy` that only moves size-1
dims), need no kernel: this pass turns them into `memory.view`, which memory
planning gives the memory of its base and the emitter writes as a second
Tensor value over the same bytes. Why: attention as `nn.MultiheadAttention`
exports it runs a dozen such copies per layer. Only intermediate values are
aliased: copies of method inputs, constants or buffers, and copies the
method returns, keep their kernel (their memory is not the planner's to
share).
"""

import torch

from executorch.exir import memory
from executorch.exir.dialects._ops import ops as exir_ops
from executorch.exir.dim_order_utils import dim_order_of
from executorch.exir.pass_base import PassBase, PassResult


def _static_contiguous(val) -> bool:
    return (
        isinstance(val, torch.Tensor)
        and all(isinstance(s, int) for s in val.shape)
        and dim_order_of(val) == list(range(val.dim()))
    )


_RESHAPES = (
    exir_ops.edge.aten.view_copy.default,
    exir_ops.edge.aten.squeeze_copy.default,
    exir_ops.edge.aten.squeeze_copy.dim,
    exir_ops.edge.aten.squeeze_copy.dims,
    exir_ops.edge.aten.unsqueeze_copy.default,
    exir_ops.edge.aten.clone.default,
    exir_ops.edge.aten.alias_copy.default,
    exir_ops.edge.dim_order_ops._to_dim_order_copy.default,
)


def _keeps_bytes_in_place(node: torch.fx.Node, base_val, val) -> bool:
    if node.target in _RESHAPES:
        return True
    if node.target is exir_ops.edge.aten.expand_copy.default:
        return list(val.shape) == list(base_val.shape)
    if node.target is exir_ops.edge.aten.permute_copy.default:
        rank = base_val.dim()
        moved = [d % rank for d in node.args[1] if base_val.shape[d] != 1]
        return moved == sorted(moved)
    return False


def _can_alias(node: torch.fx.Node) -> bool:
    if node.op != "call_function" or not node.args:
        return False
    base = node.args[0]
    if not isinstance(base, torch.fx.Node) or base.op != "call_function":
        return False
    base_val, val = base.meta.get("val"), node.meta.get("val")
    return (
        _static_contiguous(base_val)
        and _static_contiguous(val)
        and val.dtype == base_val.dtype
        and val.numel() == base_val.numel()
        and _keeps_bytes_in_place(node, base_val, val)
        and all(user.op != "output" for user in node.users)
    )


class ReplaceViewCopyWithViewPass(PassBase):
    """Replaces aliasable copies (module docstring) by `memory.view`."""

    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        modified = False
        for node in graph_module.graph.nodes:
            if _can_alias(node):
                node.target = memory.view
                node.args = (node.args[0], list(node.meta["val"].shape))
                node.kwargs = {}
                modified = True
        graph_module.recompile()
        return PassResult(graph_module, modified)
