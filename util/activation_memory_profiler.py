"""A picture of a method's memory plan as a Chrome trace.

`generate_memory_trace(manager, "mem.json")` writes one complete event
("ph": "X") per planned tensor, for Perfetto or chrome://tracing: the
process is the planned buffer (mem_id), time is the node index of the
out-variant graph (the event spans the tensor's lifetime, both ends
included), and `args` give the tensor's node, dtype, shape, size and, with
`enable_memory_offsets`, its byte offset in the buffer. With offsets the
thread of an event is its offset, so tensors stack as they sit in memory;
without, tensors are packed onto as few rows as their lifetimes allow.
Views share their base's memory and are not drawn twice.
"""

import json
from typing import Dict, List, Tuple

import torch

from executorch.exir import memory
from executorch.exir.memory_planning import flatten_specs
from executorch.exir.tensor import TensorSpec


def _planned_tensors(
    graph_module: torch.fx.GraphModule,
) -> List[Tuple[str, TensorSpec]]:
    """(producing node, spec) of every planned tensor, once each. The
    producer is the operator writing into the tensor, not the `alloc` node
    that reserves it."""
    tensors: Dict[int, Tuple[str, TensorSpec]] = {}
    for node in graph_module.graph.nodes:
        if node.target is memory.alloc:
            continue
        for spec in flatten_specs(node.meta.get("spec")):
            if spec.planned and spec.base is None:
                tensors.setdefault(id(spec), (node.name, spec))
    return list(tensors.values())


def _rows_by_lifetime(specs: List[TensorSpec]) -> Dict[int, int]:
    """A row per spec such that specs on one row never live together."""
    row_end: List[int] = []
    rows = {}
    for spec in sorted(specs, key=lambda s: s.lifetime[0]):
        row = next(
            (r for r, end in enumerate(row_end) if end < spec.lifetime[0]),
            len(row_end),
        )
        if row == len(row_end):
            row_end.append(spec.lifetime[1])
        else:
            row_end[row] = spec.lifetime[1]
        rows[id(spec)] = row
    return rows


def generate_memory_trace(
    executorch_program_manager,
    chrome_trace_filename: str,
    enable_memory_offsets: bool = False,
    method_name: str = "forward",
) -> None:
    """Writes the memory plan of `method_name` of an
    ExecutorchProgramManager to `chrome_trace_filename` (Chrome trace
    JSON; see the module docstring)."""
    graph_module = executorch_program_manager.exported_program(
        method_name
    ).graph_module
    tensors = _planned_tensors(graph_module)
    rows = _rows_by_lifetime([spec for _, spec in tensors])
    events = []
    for name, spec in tensors:
        start, end = spec.lifetime
        args = {
            "node": name,
            "dtype": str(spec.dtype),
            "shape": list(spec.shape),
            "size": spec.nbytes,
            "mem_id": spec.mem_id,
        }
        if enable_memory_offsets:
            args["offset"] = spec.mem_offset
        events.append(
            {
                "name": name,
                "cat": "tensor",
                "ph": "X",
                "ts": start,
                "dur": end - start + 1,
                "pid": spec.mem_id,
                "tid": spec.mem_offset if enable_memory_offsets else rows[id(spec)],
                "args": args,
            }
        )
    for mem_id in sorted({spec.mem_id for _, spec in tensors}):
        events.append(
            {
                "name": "process_name",
                "ph": "M",
                "pid": mem_id,
                "args": {"name": f"{method_name}: planned buffer {mem_id}"},
            }
        )
    with open(chrome_trace_filename, "w") as f:
        json.dump({"traceEvents": events, "displayTimeUnit": "ns"}, f, indent=1)
