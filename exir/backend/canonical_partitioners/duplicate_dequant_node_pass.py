"""DuplicateDequantNodePass: one dequantize node per user.

A dequantize node read by several operators would tie their partitions
together (or leave the quantized tensor crossing a delegate boundary);
with a copy per user, each partition takes its own.
"""

import torch

from executorch.exir.dialects.edge._ops import to_aten_op
from executorch.exir.pass_base import PassBase, PassResult


def is_dequantize(node: torch.fx.Node) -> bool:
    """True for calls of a `*dequantize*` operator (ATen or Edge)."""
    if node.op != "call_function":
        return False
    name = getattr(to_aten_op(node.target), "__name__", "") or ""
    return "dequantize" in name


class DuplicateDequantNodePass(PassBase):
    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        graph = graph_module.graph
        modified = False
        for node in list(graph.nodes):
            if not is_dequantize(node) or len(node.users) < 2:
                continue
            for user in list(node.users)[1:]:
                with graph.inserting_after(node):
                    copy = graph.node_copy(node)
                user.replace_input_with(node, copy)
                modified = True
        if modified:
            graph.lint()
        return PassResult(graph_module, modified)
