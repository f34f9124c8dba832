"""Helpers for looking at delegated programs: `format_delegated_graph`."""

from typing import List

import torch

from executorch.exir.lowered_backend_module import (
    LoweredBackendModule,
    executorch_call_delegate,
)


def _graph_lines(graph_module: torch.fx.GraphModule, indent: str) -> List[str]:
    lines = []
    for node in graph_module.graph.nodes:
        lines.append(indent + node.format_node())
        if node.op == "call_function" and node.target is executorch_call_delegate:
            lowered = getattr(graph_module, node.args[0].target)
            assert isinstance(lowered, LoweredBackendModule)
            lines.append(f"{indent}    # {lowered.backend_id} runs:")
            lines += _graph_lines(lowered.original_module.graph_module, indent + "    ")
    return lines


def format_delegated_graph(graph_module: torch.fx.GraphModule) -> str:
    """The graph one node per line, each delegate call followed by the
    nodes of the program its delegate runs (indented, recursively)."""
    return "\n".join(_graph_lines(graph_module, ""))
