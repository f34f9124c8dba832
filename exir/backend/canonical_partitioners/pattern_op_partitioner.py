"""generate_pattern_op_partitions: the largest convex partitions of nodes
that match given patterns, are listed, or an operator-support check
accepts (upstream's helper, used by its demo partitioners)."""

from typing import List, Optional

import torch
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner, Partition
from torch.fx.passes.operator_support import OperatorSupportBase
from torch.fx.passes.utils.matcher_utils import SubgraphMatcher


class _Chosen(OperatorSupportBase):
    """Supports the nodes in `nodes`, and those `op_support` accepts."""

    def __init__(self, nodes, op_support: Optional[OperatorSupportBase]):
        self.nodes = nodes
        self.op_support = op_support

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        if node in self.nodes:
            return True
        return self.op_support is not None and self.op_support.is_node_supported(
            submodules, node
        )


def _pattern_nodes(graph_module, patterns, ignore_literals: bool):
    """Operator nodes of `graph_module` inside a match of any pattern."""
    nodes = set()
    for pattern in patterns:
        matcher = SubgraphMatcher(
            pattern, match_output=False, ignore_literals=ignore_literals
        )
        for match in matcher.match(graph_module.graph):
            nodes.update(
                matched
                for pattern_node, matched in match.nodes_map.items()
                if pattern_node.op not in ("placeholder", "output")
            )
    return nodes


def generate_pattern_op_partitions(
    graph_module: torch.fx.GraphModule,
    patterns: Optional[List[torch.fx.Graph]] = None,
    partitions_list: Optional[List[List[torch.fx.Node]]] = None,
    op_support: Optional[OperatorSupportBase] = None,
    ignore_literals: bool = False,
) -> List[Partition]:
    """Partitions of `graph_module` (each with `.id` and `.nodes`) made of
    nodes that lie in a match of one of `patterns`, in one of
    `partitions_list`, or that `op_support` accepts; single nodes count."""
    if patterns is None and partitions_list is None and op_support is None:
        raise ValueError(
            "generate_pattern_op_partitions needs patterns, partitions_list or "
            "op_support"
        )
    chosen = _pattern_nodes(graph_module, patterns or [], ignore_literals)
    for nodes in partitions_list or []:
        chosen.update(nodes)
    return CapabilityBasedPartitioner(
        graph_module,
        _Chosen(chosen, op_support),
        allows_single_node_partition=True,
    ).propose_partitions()
