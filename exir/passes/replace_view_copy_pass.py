"""Static reshapes become memory aliases instead of copies.

`view_copy` of a contiguous tensor into a contiguous result of the same
bytes needs no kernel: this pass turns it into `memory.view`, which memory
planning gives the memory of its base and the emitter writes as a second
Tensor value over the same bytes. Only intermediate values are aliased: views
of method inputs, constants or buffers, and views the method returns, keep
their copy (their memory is not the planner's to share).
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


def _can_alias(node: torch.fx.Node) -> bool:
    base = node.args[0]
    return (
        base.op == "call_function"
        and _static_contiguous(base.meta.get("val"))
        and _static_contiguous(node.meta.get("val"))
        and all(user.op != "output" for user in node.users)
    )


class ReplaceViewCopyWithViewPass(PassBase):
    """Replaces aliasable `aten.view_copy` calls by `memory.view`."""

    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        modified = False
        for node in graph_module.graph.nodes:
            if node.target is exir_ops.edge.aten.view_copy.default and _can_alias(node):
                node.target = memory.view
                modified = True
        graph_module.recompile()
        return PassResult(graph_module, modified)
