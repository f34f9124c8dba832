"""get_delegation_info: how many nodes of a lowered program each operator
contributes inside delegates and outside them.

    info = get_delegation_info(edge.exported_program().graph_module)
    print(info.get_summary())
    print(tabulate(info.get_operator_delegation_dataframe(), headers="keys"))
"""

import operator
from collections import defaultdict
from dataclasses import dataclass
from typing import Dict, Iterator

import pandas as pd
import torch

from executorch.exir.dialects.edge._ops import EdgeOpOverload
from executorch.exir.lowered_backend_module import (
    LoweredBackendModule,
    executorch_call_delegate,
)


@dataclass
class DelegationBreakdown:
    """Occurrences of one operator inside and outside delegates."""

    op_type: str = ""
    delegated: int = 0
    non_delegated: int = 0


@dataclass
class DelegationInfo:
    """Delegates and node counts of a lowered graph, per operator."""

    num_delegated_subgraphs: int
    num_delegated_nodes: int
    num_non_delegated_nodes: int
    delegation_by_operator: Dict[str, DelegationBreakdown]

    def get_summary(self) -> str:
        return (
            f"Total delegated subgraphs: {self.num_delegated_subgraphs}\n"
            f"Number of delegated nodes: {self.num_delegated_nodes}\n"
            f"Number of non-delegated nodes: {self.num_non_delegated_nodes}\n"
        )

    def get_operator_delegation_dataframe(self) -> pd.DataFrame:
        """One row per operator (by name), and a "Total" row."""
        rows = sorted(self.delegation_by_operator.values(), key=lambda b: b.op_type)
        frame = pd.DataFrame(
            {
                "op_type": [b.op_type for b in rows] + ["Total"],
                "occurrences_in_delegated_graphs": [b.delegated for b in rows]
                + [self.num_delegated_nodes],
                "occurrences_in_non_delegated_graphs": [b.non_delegated for b in rows]
                + [self.num_non_delegated_nodes],
            }
        )
        return frame


def _op_type(target) -> str:
    """Upstream's operator names: `aten_cumsum_default` for the Edge
    `aten::cumsum`."""
    if isinstance(target, EdgeOpOverload):
        return target.__name__.replace(".", "_")
    if isinstance(target, torch._ops.OpOverload):
        return target.name().replace("::", "_").replace(".", "_")
    return getattr(target, "__name__", str(target))


def _operator_nodes(graph_module: torch.fx.GraphModule) -> Iterator[torch.fx.Node]:
    """Nodes that run an operator (not getitem, not delegate calls)."""
    for node in graph_module.graph.nodes:
        if node.op == "call_function" and node.target not in (
            operator.getitem,
            executorch_call_delegate,
        ):
            yield node


def get_delegation_info(graph_module: torch.fx.GraphModule) -> DelegationInfo:
    """Counts the operator nodes of `graph_module` outside delegates and
    those inside each delegate it calls (from the programs they were
    lowered from)."""
    breakdown: Dict[str, DelegationBreakdown] = defaultdict(DelegationBreakdown)
    non_delegated = 0
    for node in _operator_nodes(graph_module):
        op_type = _op_type(node.target)
        breakdown[op_type].op_type = op_type
        breakdown[op_type].non_delegated += 1
        non_delegated += 1
    delegated = 0
    calls = [
        n
        for n in graph_module.graph.nodes
        if n.op == "call_function" and n.target is executorch_call_delegate
    ]
    for call in calls:
        lowered = getattr(graph_module, call.args[0].target)
        assert isinstance(lowered, LoweredBackendModule)
        for node in _operator_nodes(lowered.original_module.graph_module):
            op_type = _op_type(node.target)
            breakdown[op_type].op_type = op_type
            breakdown[op_type].delegated += 1
            delegated += 1
    return DelegationInfo(
        num_delegated_subgraphs=len(calls),
        num_delegated_nodes=delegated,
        num_non_delegated_nodes=non_delegated,
        delegation_by_operator=dict(breakdown),
    )
