"""What each emitted instruction runs, in the developer tools' terms.

For every instruction of a method, from the graph node it was emitted from:
the debug handles of the Edge nodes it runs (a kernel call runs one node, a
delegate call every node lowered into the delegate), which backend a delegate
call runs and how the backend's own event ids map to debug handles, and how
many outputs a delegate call has. These are upstream's `debug_handle_map`,
`delegate_map` and `instruction_id_to_num_outs_map`; the ETRecord stores
them and the Inspector maps runtime events back to graph nodes with them.
"""

import operator
from typing import Dict, List, Optional, Union

import torch

from executorch.exir.memory_planning import flatten_specs
from executorch.exir.lowered_backend_module import (
    LoweredBackendModule,
    executorch_call_delegate,
)

DebugHandles = Union[int, List[int]]


def _lowered_module(node: torch.fx.Node) -> Optional[LoweredBackendModule]:
    if node.target is not executorch_call_delegate:
        return None
    return getattr(node.graph.owning_module, node.args[0].target)


def _handles_in(program) -> List[int]:
    return sorted(
        node.meta["debug_handle"]
        for node in program.graph.nodes
        if node.op == "call_function"
        and node.target is not operator.getitem
        and "debug_handle" in node.meta
    )


def debug_handle_map(instruction_nodes: List[torch.fx.Node]) -> Dict[int, DebugHandles]:
    """Instruction index -> the debug handle of its node (an int), or of
    every node of its delegate (a list)."""
    result: Dict[int, DebugHandles] = {}
    for index, node in enumerate(instruction_nodes):
        lowered = _lowered_module(node)
        if lowered is not None:
            result[index] = _handles_in(lowered.original_module)
        elif "debug_handle" in node.meta:
            result[index] = node.meta["debug_handle"]
    return result


def delegate_map(instruction_nodes: List[torch.fx.Node]) -> Dict[int, dict]:
    """Delegate call index -> {"name": backend id, "delegate_map": the
    backend's event ids to debug handles (empty when it reports none)}."""
    result = {}
    for index, node in enumerate(instruction_nodes):
        lowered = _lowered_module(node)
        if lowered is not None:
            events = lowered.meta.get("debug_handle_map") or {}
            result[index] = {
                "name": lowered.backend_id,
                "delegate_map": {key: list(value) for key, value in events.items()},
            }
    return result


def num_outs_map(instruction_nodes: List[torch.fx.Node]) -> Dict[int, int]:
    """Delegate call index -> its number of outputs (the last values it
    logs; the runtime logs its inputs first)."""
    return {
        index: len(flatten_specs(node.meta["spec"]))
        for index, node in enumerate(instruction_nodes)
        if _lowered_module(node) is not None
    }
