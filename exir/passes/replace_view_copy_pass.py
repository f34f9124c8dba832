"""Copies that move no bytes become memory aliases.

A static reshape (`view_copy`, `squeeze_copy`, `unsqueeze_copy`) of a
contiguous tensor into a contiguous result, the copies that keep every byte
in place (`clone`, a `_to_dim_order_copy` to the same dtype and layout, an
`expand_copy` to the same shape, a `permute_copy` that only moves size-1
dims), and a `select_copy` or unit-step `slice_copy` that keeps one block of
its input (every dim before the one it cuts has size 1), need no kernel:
this pass turns them into `memory.view`, which memory planning gives the
memory of its base (from the block's start) and the emitter writes as a
second Tensor value over those bytes. Why: attention as
`nn.MultiheadAttention` exports it runs a dozen such copies per layer. Only
intermediate values are aliased: copies of method inputs, constants or
buffers, and copies the method returns, keep their kernel (their memory is
not the planner's to share).
"""

import math
from typing import Optional

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


# Copies whose contiguous result holds their contiguous input's bytes in order.
_BYTE_PRESERVING = (
    exir_ops.edge.aten.view_copy.default,
    exir_ops.edge.aten.squeeze_copy.default,
    exir_ops.edge.aten.squeeze_copy.dim,
    exir_ops.edge.aten.squeeze_copy.dims,
    exir_ops.edge.aten.unsqueeze_copy.default,
    exir_ops.edge.aten.clone.default,
    exir_ops.edge.aten.alias_copy.default,
    exir_ops.edge.dim_order_ops._to_dim_order_copy.default,
)


_BLOCKS = (
    exir_ops.edge.aten.select_copy.int,
    exir_ops.edge.aten.slice_copy.Tensor,
)


def _keeps_bytes_in_place(node: torch.fx.Node, base_val, val) -> bool:
    if node.target in _BYTE_PRESERVING:
        return True
    if node.target is exir_ops.edge.aten.expand_copy.default:
        return list(val.shape) == list(base_val.shape)
    if node.target is exir_ops.edge.aten.permute_copy.default:
        rank = base_val.dim()
        moved = [d % rank for d in node.args[1] if base_val.shape[d] != 1]
        return moved == sorted(moved)
    return False


def _arg(node: torch.fx.Node, index: int, name: str, default):
    return node.args[index] if len(node.args) > index else node.kwargs.get(name, default)


def _block_start(node: torch.fx.Node, base_val, val) -> Optional[int]:
    """Where a select or slice starts in its input, in elements, when what it
    keeps is one block of it; None when it is not."""
    rank = base_val.dim()
    dim = _arg(node, 1, "dim", 0)
    if not isinstance(dim, int) or rank == 0:
        return None
    dim %= rank
    size = base_val.shape[dim]
    if node.target is exir_ops.edge.aten.select_copy.int:
        start, step = _arg(node, 2, "index", None), 1
    else:
        start, step = _arg(node, 2, "start", 0), _arg(node, 4, "step", 1)
        start = 0 if start is None else start
    if not isinstance(start, int) or any(base_val.shape[d] != 1 for d in range(dim)):
        return None
    if step != 1 and val.shape[dim] > 1:
        return None
    start = min(max(start + size if start < 0 else start, 0), size)
    return start * math.prod(base_val.shape[dim + 1 :])


def _returned(node: torch.fx.Node) -> bool:
    """Whether the method returns `node`'s memory (through views of it, too)."""
    while node.target is memory.view:
        node = node.args[0]
    return any(user.op == "output" for user in node.users)


def _alias_offset(node: torch.fx.Node) -> Optional[int]:
    """Where `node`'s result starts in its input's memory, in elements, when
    it can alias it; None when it must run its kernel."""
    if node.op != "call_function" or not node.args:
        return None
    base = node.args[0]
    if not isinstance(base, torch.fx.Node) or base.op != "call_function":
        return None
    base_val, val = base.meta.get("val"), node.meta.get("val")
    if not (
        _static_contiguous(base_val)
        and _static_contiguous(val)
        and val.dtype == base_val.dtype
        and all(user.op != "output" for user in node.users)
    ):
        return None
    if node.target in _BLOCKS:
        # A block of a returned value would alias memory the caller may own.
        return None if _returned(base) else _block_start(node, base_val, val)
    if val.numel() == base_val.numel() and _keeps_bytes_in_place(node, base_val, val):
        return 0
    return None


class ReplaceViewCopyWithViewPass(PassBase):
    """Replaces aliasable copies (module docstring) by `memory.view`."""

    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        modified = False
        for node in graph_module.graph.nodes:
            offset = _alias_offset(node)
            if offset is None:
                continue
            shape = list(node.meta["val"].shape)
            node.target = memory.view
            node.args = (node.args[0], shape, offset) if offset else (node.args[0], shape)
            node.kwargs = {}
            modified = True
        graph_module.recompile()
        return PassResult(graph_module, modified)
