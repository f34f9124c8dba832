"""Decomposes the calls of chosen operators in place, inside a graph that
may already be in the Edge dialect.

`to_edge_transform_and_lower` keeps operators whole for a partitioner; the
calls the partitioner then leaves to the portable runtime are decomposed
here to Core ATen, like the rest of the program was.
"""

from typing import Collection

import torch
from torch._guards import detect_fake_mode
from torch.fx.experimental.proxy_tensor import make_fx

from executorch.exir.dialects.edge._ops import to_aten_op
from executorch.exir.pass_base import PassBase, PassResult
from executorch.exir.passes.aten_to_edge import AtenToEdgePass


def _decompose_node(gm: torch.fx.GraphModule, node: torch.fx.Node, table) -> None:
    inputs = node.all_input_nodes
    op = to_aten_op(node.target)

    def call(*tensors):
        env = dict(zip(inputs, tensors))
        args, kwargs = torch.fx.node.map_arg((node.args, node.kwargs), env.get)
        return op(*args, **kwargs)

    values = [n.meta["val"] for n in inputs]
    with detect_fake_mode(values):
        traced = make_fx(call, decomposition_table=table)(*values)
    env = {}
    placeholders = iter(inputs)
    graph = gm.graph
    with graph.inserting_before(node):
        for sub in traced.graph.nodes:
            if sub.op == "placeholder":
                env[sub] = next(placeholders)
            elif sub.op == "output":
                result = torch.fx.node.map_arg(sub.args[0], env.get)
            else:
                env[sub] = graph.node_copy(sub, env.get)
                env[sub].meta["stack_trace"] = node.meta.get("stack_trace")
    if isinstance(result, torch.fx.Node):
        node.replace_all_uses_with(result)
    else:
        # Several results: users index the call with getitem.
        for user in list(node.users):
            user.replace_all_uses_with(result[user.args[1]])
            graph.erase_node(user)
    graph.erase_node(node)


class DecomposeNodesPass(PassBase):
    """Decomposes every call of an operator in `ops` (ATen `OpOverload`s)
    with torch.export's default table, then brings the new nodes into the
    Edge dialect."""

    def __init__(self, ops: Collection):
        super().__init__()
        self.ops = set(ops)

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        nodes = [
            n
            for n in gm.graph.nodes
            if n.op == "call_function" and to_aten_op(n.target) in self.ops
        ]
        if not nodes:
            return PassResult(gm, False)
        table = dict(torch.export.default_decompositions().items())
        for node in nodes:
            _decompose_node(gm, node, table)
        AtenToEdgePass()(gm)
        gm.graph.lint()
        return PassResult(gm, True)
