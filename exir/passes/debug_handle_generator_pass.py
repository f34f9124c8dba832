"""Numbers the operator nodes of an Edge program for the developer tools.

Each `call_function` node (except `getitem`, which runs nothing) gets
`node.meta["debug_handle"]`, an int unique within the method, kept through
lowering and `to_executorch`. The ETRecord maps each runtime instruction
(and each event a delegate reports) to the debug handles of the nodes it
runs, and the Inspector maps those back to the nodes' source lines, module
hierarchy and eager values. Nodes that already have a handle keep it, so the
pass can run again after transforms add nodes.
"""

import operator

import torch

from executorch.exir.graph_utils import control_flow_graphs
from executorch.exir.lowered_backend_module import LoweredBackendModule
from executorch.exir.pass_base import PassBase, PassResult


def _numbered_nodes(graph_module: torch.fx.GraphModule):
    for gm in [graph_module] + control_flow_graphs(graph_module):
        for node in gm.graph.nodes:
            if node.op == "call_function" and node.target is not operator.getitem:
                yield node


def _delegated_handles(graph_module: torch.fx.GraphModule):
    """Handles of the nodes lowered into delegates (no longer in the graph,
    still in the ETRecord's maps)."""
    for module in graph_module.modules():
        if isinstance(module, LoweredBackendModule):
            for node in _numbered_nodes(module.original_module.graph_module):
                if "debug_handle" in node.meta:
                    yield node.meta["debug_handle"]


class DebugHandleGeneratorPass(PassBase):
    """Gives every operator node without a debug handle the next free one."""

    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        nodes = list(_numbered_nodes(graph_module))
        taken = [n.meta["debug_handle"] for n in nodes if "debug_handle" in n.meta]
        next_handle = 1 + max(taken + list(_delegated_handles(graph_module)), default=0)
        modified = False
        for node in nodes:
            if "debug_handle" not in node.meta:
                node.meta["debug_handle"] = next_handle
                next_handle += 1
                modified = True
        return PassResult(graph_module, modified)
