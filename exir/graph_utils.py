"""Graph utilities shared by the compilation stages."""

import dataclasses
import heapq
from typing import List, Tuple

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import ExportGraphSignature, TensorArgument

# Higher-order operators whose branches and bodies are graphs of their own.
CONTROL_FLOW_OPS = (
    torch.ops.higher_order.cond,
    torch.ops.higher_order.map_impl,
    torch.ops.higher_order.while_loop,
)

# Operators on symbolic sizes, and reading a one-element tensor as a
# Scalar (`.item()`); they are runtime prim ops, not Edge operators.
SYM_OPS = (
    torch.ops.aten.sym_size.int,
    torch.ops.aten.sym_numel.default,
    torch.ops.aten.sym_stride.int,
    torch.ops.aten.sym_storage_offset.default,
    torch.ops.aten.sym_is_contiguous.default,
    torch.ops.aten._local_scalar_dense.default,
)


def control_flow_graphs(gm: torch.fx.GraphModule) -> List[torch.fx.GraphModule]:
    """The branch and body graphs of `gm`'s control-flow operators, nested
    ones included (innermost first)."""
    graphs = []
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in CONTROL_FLOW_OPS:
            for arg in node.args:
                if isinstance(arg, torch.fx.Node) and arg.op == "get_attr":
                    sub = getattr(gm, arg.target)
                    graphs += control_flow_graphs(sub) + [sub]
    return graphs


def _renamed(spec, name):
    if isinstance(spec.arg, TensorArgument):
        return dataclasses.replace(spec, arg=TensorArgument(name=name))
    return spec


def rename_signature(
    gm: torch.fx.GraphModule, signature: ExportGraphSignature
) -> ExportGraphSignature:
    """`signature` with its tensor inputs and outputs named after the
    placeholders and output values of `gm`, in order (after a copy or a
    rewrite renamed or replaced them)."""
    placeholders = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    outputs = [getattr(n, "name", None) for n in gm.graph.output_node().args[0]]
    return ExportGraphSignature(
        [_renamed(s, n) for s, n in zip(signature.input_specs, placeholders)],
        [_renamed(s, n) for s, n in zip(signature.output_specs, outputs)],
    )


def _copy_graph_module(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    graph = torch.fx.Graph()
    graph.output(graph.graph_copy(gm.graph, {}))
    copied = torch.fx.GraphModule(gm, graph)
    copied.meta.update(gm.meta)
    # Branch and loop-body graphs of control flow are rewritten too.
    for name, child in gm.named_children():
        if isinstance(child, torch.fx.GraphModule):
            setattr(copied, name, _copy_graph_module(child))
    return copied


def copy_program(
    ep: ExportedProgram,
) -> Tuple[torch.fx.GraphModule, ExportGraphSignature]:
    """A copy of `ep`'s graph module that can be rewritten without touching
    `ep`, and the graph signature naming its nodes (copying may rename them:
    an input called `input` becomes `input_1`). Control-flow subgraphs are
    copied too. Node metadata is copied shallowly (fake tensors are
    shared)."""
    copied = _copy_graph_module(ep.graph_module)
    return copied, rename_signature(copied, ep.graph_signature)


def stable_topological_sort(graph: torch.fx.Graph) -> None:
    """Reorders nodes so that each comes after its inputs, keeping the
    original order wherever it is already valid."""
    nodes = list(graph.nodes)
    position = {n: i for i, n in enumerate(nodes)}
    waiting = {n: len(set(n.all_input_nodes)) for n in nodes}
    ready = [(position[n], n.name) for n in nodes if waiting[n] == 0]
    by_name = {n.name: n for n in nodes}
    heapq.heapify(ready)
    ordered = []
    while ready:
        node = by_name[heapq.heappop(ready)[1]]
        ordered.append(node)
        for user in node.users:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, (position[user], user.name))
    for before, after in zip(ordered, ordered[1:]):
        before.append(after)
