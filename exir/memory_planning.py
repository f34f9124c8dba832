"""Memory planning algorithms and the lifetime analysis they work on.

A planning algorithm is any callable `algo(specs, alignment) -> buffer_sizes`
that sets `mem_id` and `mem_offset` of each given TensorSpec so that no two
specs of the same buffer whose lifetimes overlap share bytes, with every
offset a multiple of `alignment`. It returns the size of each buffer by
mem_id; entry 0 is reserved (always 0), as in the program's
`non_const_buffer_sizes`.
"""

import dataclasses
from typing import Callable, Iterable, List, Optional, Tuple

import torch

from executorch.exir import control_flow, memory
from executorch.exir.tensor import TensorSpec

PLANNED_MEM_ID = 1

MemoryPlanningAlgorithm = Callable[[List[TensorSpec], int], List[int]]


def flatten_specs(spec) -> List[TensorSpec]:
    """The TensorSpecs in a node's spec (a spec, None, or a nested list)."""
    if isinstance(spec, TensorSpec):
        return [spec]
    if isinstance(spec, (list, tuple)):
        return [s for item in spec for s in flatten_specs(item)]
    return []


def _align(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def _overlap(a: TensorSpec, b: TensorSpec) -> bool:
    return a.lifetime[0] <= b.lifetime[1] and b.lifetime[0] <= a.lifetime[1]


def _loop_ranges(nodes: List[torch.fx.Node]) -> List[Tuple[int, int]]:
    """[label index, jump index] of each loop of a lowered graph: a jump to
    a label placed before it runs the nodes in between again."""
    labels = {}
    loops = []
    for index, node in enumerate(nodes):
        if node.op != "call_function":
            continue
        if node.target is control_flow.label:
            labels[node.args[0]] = index
        elif control_flow.is_jump(node) and node.args[-1] in labels:
            loops.append((labels[node.args[-1]], index))
    return loops


def _keep_alive_through_loops(specs, loops) -> None:
    """A tensor defined before a loop and used in it is read again by later
    iterations: it lives until the loop's last node. (One defined in the
    loop is written again before each iteration's uses.)"""
    for start, end in loops:
        for spec in specs:
            if spec.lifetime[0] < start <= spec.lifetime[1]:
                spec.lifetime[1] = max(spec.lifetime[1], end)


def collect_planned_specs(
    graph_module: torch.fx.GraphModule,
    alloc_graph_input: bool = True,
    alloc_graph_output: bool = True,
) -> List[TensorSpec]:
    """Computes the lifetime of every non-constant TensorSpec of the graph
    (node indices from definition to last use) and returns those to plan,
    each once, in order of first appearance.

    Graph inputs are live from the start (the caller writes them before the
    first instruction), graph outputs until the end (the caller reads them
    after the last), mutable buffers throughout (their memory holds state
    from one call to the next). Control flow lowered to jumps is laid out
    in the order it runs: forward jumps only skip nodes, and values used in
    a loop are kept alive through it.
    """
    nodes = list(graph_module.graph.nodes)
    end = len(nodes) - 1
    specs = {}
    inputs, outputs = set(), set()

    def touch(spec: TensorSpec, index: int) -> None:
        # A view is live through its base: uses of the view keep it alive.
        spec = spec.base or spec
        if spec.const:
            return
        if id(spec) not in specs:
            specs[id(spec)] = spec
            spec.lifetime = [index, index]
        spec.lifetime[0] = min(spec.lifetime[0], index)
        spec.lifetime[1] = max(spec.lifetime[1], index)

    for index, node in enumerate(nodes):
        for spec in flatten_specs(node.meta.get("spec")):
            touch(spec, 0 if node.op == "placeholder" else index)
            if node.op == "placeholder" and not spec.mutable:
                inputs.add(id(spec))
        for used in node.all_input_nodes:
            for spec in flatten_specs(used.meta.get("spec")):
                touch(spec, end if node.op == "output" else index)
                if node.op == "output":
                    outputs.add(id(spec))
    _keep_alive_through_loops(specs.values(), _loop_ranges(nodes))
    for spec in specs.values():
        if spec.mutable:
            # A mutable buffer keeps its state between calls of the method.
            spec.lifetime = [0, end]
    return [
        spec
        for key, spec in specs.items()
        if (alloc_graph_input or key not in inputs)
        and (alloc_graph_output or key not in outputs)
    ]


def greedy(specs: List[TensorSpec], alignment: int) -> List[int]:
    """Greedy best fit: largest tensors first, each into the tightest
    aligned gap left between tensors already placed whose lifetimes overlap
    its own, or after all of them."""
    placed: List[TensorSpec] = []
    arena = 0
    for spec in sorted(specs, key=lambda s: (-s.nbytes, s.lifetime[0])):
        live = sorted(
            (p for p in placed if _overlap(p, spec)), key=lambda p: p.mem_offset
        )
        best: Optional[int] = None
        best_gap = None
        cursor = 0
        for other in live:
            start = _align(cursor, alignment)
            gap = other.mem_offset - start
            if gap >= spec.nbytes and (best_gap is None or gap < best_gap):
                best, best_gap = start, gap
            cursor = max(cursor, other.mem_offset + other.nbytes)
        spec.mem_offset = best if best is not None else _align(cursor, alignment)
        spec.mem_id = PLANNED_MEM_ID
        placed.append(spec)
        arena = max(arena, spec.mem_offset + spec.nbytes)
    return [0, _align(arena, alignment)]


def naive(specs: List[TensorSpec], alignment: int) -> List[int]:
    """Every tensor gets its own bytes (no reuse): the upper bound any
    algorithm must beat, and a baseline for debugging a plan."""
    cursor = 0
    for spec in specs:
        spec.mem_id = PLANNED_MEM_ID
        spec.mem_offset = cursor
        cursor = _align(cursor + spec.nbytes, alignment)
    return [0, cursor]


ALGORITHMS = {"greedy": greedy, "naive": naive}


def verify_memory_plan(
    specs: Iterable[TensorSpec], buffer_sizes: List[int], alignment: int
) -> None:
    """Raises ValueError if two tensors live at the same time share bytes, if
    an offset is misaligned, or if a tensor runs past its buffer."""
    specs = list(specs)
    for spec in specs:
        if spec.mem_id is None or spec.mem_id <= 0 or spec.mem_id >= len(buffer_sizes):
            raise ValueError(f"{spec} has no valid memory id")
        if spec.mem_offset % alignment:
            raise ValueError(f"{spec} is not aligned to {alignment}")
        if spec.mem_offset + spec.nbytes > buffer_sizes[spec.mem_id]:
            raise ValueError(
                f"{spec} ends past its buffer of {buffer_sizes[spec.mem_id]} bytes"
            )
    for i, a in enumerate(specs):
        for b in specs[i + 1 :]:
            if (
                a.mem_id == b.mem_id
                and _overlap(a, b)
                and a.nbytes
                and b.nbytes
                and a.mem_offset < b.mem_offset + b.nbytes
                and b.mem_offset < a.mem_offset + a.nbytes
            ):
                raise ValueError(f"{a} and {b} are live together and overlap")


@dataclasses.dataclass
class MemoryReport:
    """How a method's planned memory is used.

    Attributes:
        buffer_sizes: bytes of each planned buffer by mem_id (entry 0 is
            reserved).
        peak_live_bytes: the most bytes of tensors live at one node, a lower
            bound for any plan.
        peak_node: the node where that peak is reached.
        live_at_peak: (producing node, bytes) of the tensors live there,
            largest first.
        dynamic_tensors: (producing node, upper-bound shape, bytes) of the
            planned tensors with dynamic sizes, which take their upper
            bounds' bytes whatever size a run uses; largest first.
    """

    buffer_sizes: List[int]
    peak_live_bytes: int
    peak_node: Optional[str]
    live_at_peak: List[Tuple[str, int]]
    dynamic_tensors: List[Tuple[str, List[int], int]] = dataclasses.field(
        default_factory=list
    )

    def __str__(self) -> str:
        lines = [
            f"planned memory: {sum(self.buffer_sizes)} bytes "
            f"(buffers {self.buffer_sizes[1:]}); peak of live tensors "
            f"{self.peak_live_bytes} bytes at node '{self.peak_node}':"
        ]
        lines += [f"  {name}: {size} bytes" for name, size in self.live_at_peak]
        if self.dynamic_tensors:
            lines.append(
                f"{len(self.dynamic_tensors)} dynamic tensors planned at their "
                "upper bounds:"
            )
            lines += [
                f"  {name}: {shape} {size} bytes"
                for name, shape, size in self.dynamic_tensors
            ]
        return "\n".join(lines)


def memory_report(
    graph_module: torch.fx.GraphModule, specs: Iterable[TensorSpec]
) -> MemoryReport:
    """Reports the planned `specs` of `graph_module` (after planning)."""
    specs = list(specs)
    nodes = list(graph_module.graph.nodes)
    # Name each tensor after the call that writes it rather than its
    # `alloc` (the fallback for one nothing writes).
    producer = {}
    for node in sorted(nodes, key=lambda n: n.target is memory.alloc):
        for spec in flatten_specs(node.meta.get("spec")):
            producer.setdefault(id(spec), node.name)
    peak, peak_index = 0, None
    for index in range(len(nodes)):
        live = sum(s.nbytes for s in specs if s.lifetime[0] <= index <= s.lifetime[1])
        if live > peak:
            peak, peak_index = live, index
    at_peak = sorted(
        (
            (producer[id(s)], s.nbytes)
            for s in specs
            if peak_index is not None and s.lifetime[0] <= peak_index <= s.lifetime[1]
        ),
        key=lambda item: -item[1],
    )
    dynamic = sorted(
        ((producer[id(s)], list(s.shape), s.nbytes) for s in specs if s.is_dynamic),
        key=lambda item: -item[2],
    )
    return MemoryReport(
        list(graph_module.meta.get("non_const_buffer_sizes", [0])),
        peak,
        nodes[peak_index].name if peak_index is not None else None,
        at_peak,
        dynamic,
    )
