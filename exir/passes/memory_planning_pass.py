"""MemoryPlanningPass: assigns planned memory to a graph's tensors."""

from typing import Callable, Dict, List, Optional, Tuple, Union

import torch
from torch.export import ExportedProgram

from executorch.exir.error import ExportError, ExportErrorType
from executorch.exir.memory_planning import (
    ALGORITHMS,
    collect_planned_specs,
    flatten_specs,
    memory_report,
    verify_memory_plan,
)
from executorch.exir.pass_base import (
    ExportedProgramPassBase,
    ExportedProgramPassResult,
    PassBase,
    PassResult,
)
from executorch.exir.passes.spec_prop_pass import SpecPropPass
from executorch.exir.tensor import TensorSpec


class MemoryBudgetError(ExportError, ValueError):
    """A memory plan exceeds `MemoryPlanningPass(memory_budget=...)`."""

    error_type = ExportErrorType.VIOLATION_OF_SPEC


class MemoryPlanningPass(PassBase):
    """Plans every non-constant tensor of a graph whose specs were propagated
    (`SpecPropPass`) into memory buffers.

    Args:
        memory_planning_algo: "greedy" (default; best fit over lifetimes),
            "naive" (no reuse), or a callable `algo(specs, alignment) ->
            buffer_sizes` (see `executorch.exir.memory_planning`).
        allow_lifetime_and_storage_overlap: upstream's switch letting the
            plan's check accept tensors that are live together and share
            memory; only False (every plan is checked) is supported.
        alloc_graph_input: plan the method's inputs (the runtime copies
            inputs into planned memory); otherwise the caller provides them.
        alloc_graph_output: plan the method's outputs; otherwise the caller
            provides output buffers.
        alloc_mutable_buffers: plan mutable buffers (their state lives in
            planned memory); only True is supported.
        share_mutable_buffers: place the mutable buffers in buffer 2 (memory
            id 2), each at one offset for every method this pass plans,
            found by the buffer's name: methods of one program then share
            them (a prefill and a decode method sharing a KV cache) when the
            runtime gives all methods the same buffer 2 (C++
            `Module(..., share_memory_arenas=true)`). Use one pass object
            for all the methods.
        alignment: byte alignment of every planned tensor.
        memory_budget: if given, the most bytes the planned buffers may take
            together; a plan above it raises MemoryBudgetError saying which
            tensors are live at the peak.

    After `run`, `graph_module.meta["non_const_buffer_sizes"]` holds the size
    of each buffer (entry 0 reserved), `graph_module.meta["memory_report"]`
    a `MemoryReport`, and `self.buffer_sizes` the sizes of the last run.
    """

    def __init__(
        self,
        memory_planning_algo: Union[str, Callable, None] = None,
        allow_lifetime_and_storage_overlap: bool = False,
        alloc_graph_input: bool = True,
        alloc_graph_output: bool = True,
        alloc_mutable_buffers: bool = True,
        share_mutable_buffers: bool = False,
        alignment: int = 16,
        memory_budget: Optional[int] = None,
    ):
        super().__init__()
        unsupported = {
            "allow_lifetime_and_storage_overlap": allow_lifetime_and_storage_overlap,
            "alloc_mutable_buffers": not alloc_mutable_buffers,
        }
        for name, asked in unsupported.items():
            if asked:
                raise NotImplementedError(
                    f"MemoryPlanningPass({name}=...): only upstream's default "
                    "is supported"
                )
        if memory_planning_algo is None:
            memory_planning_algo = "greedy"
        if isinstance(memory_planning_algo, str):
            if memory_planning_algo not in ALGORITHMS:
                raise ValueError(
                    f"unknown memory planning algorithm '{memory_planning_algo}'; "
                    f"known: {sorted(ALGORITHMS)}"
                )
            memory_planning_algo = ALGORITHMS[memory_planning_algo]
        if alignment <= 0 or alignment & (alignment - 1):
            raise ValueError(f"alignment must be a power of two, got {alignment}")
        self.memory_planning_algo = memory_planning_algo
        self.alignment = alignment
        self.alloc_graph_input = alloc_graph_input
        self.alloc_graph_output = alloc_graph_output
        self.memory_budget = memory_budget
        self.share_mutable_buffers = share_mutable_buffers
        # With share_mutable_buffers: (offset, bytes) of each buffer by name,
        # over all methods planned so far, and the end of the last one.
        self._shared_offsets: Dict[str, Tuple[int, int]] = {}
        self._shared_end = 0
        self.buffer_sizes: Optional[List[int]] = None

    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        return self.run(graph_module)

    def run(
        self, graph_module: torch.fx.GraphModule, graph_signature=None
    ) -> PassResult:
        """Plans `graph_module` in place. `graph_signature` is accepted for
        upstream compatibility; constness comes from the specs."""
        specs = collect_planned_specs(
            graph_module, self.alloc_graph_input, self.alloc_graph_output
        )
        shared = (
            self._place_shared_buffers(graph_module, graph_signature)
            if self.share_mutable_buffers
            else []
        )
        planned = [s for s in specs if all(s is not t for t in shared)]
        buffer_sizes = list(self.memory_planning_algo(planned, self.alignment))
        verify_memory_plan(planned, buffer_sizes, self.alignment)
        if shared:
            buffer_sizes += [0] * (3 - len(buffer_sizes))
            buffer_sizes[2] = max(buffer_sizes[2], self._shared_end)
        for node in graph_module.graph.nodes:
            for spec in flatten_specs(node.meta.get("spec")):
                if spec.base is not None and spec.base.mem_offset is not None:
                    spec.mem_id = spec.base.mem_id
                    spec.mem_offset = spec.base.mem_offset + spec.view_offset
        graph_module.meta["non_const_buffer_sizes"] = buffer_sizes
        report = memory_report(graph_module, specs)
        graph_module.meta["memory_report"] = report
        if self.memory_budget is not None and sum(buffer_sizes) > self.memory_budget:
            raise MemoryBudgetError(
                f"The plan needs more than the budget of {self.memory_budget} "
                f"bytes.\n{report}"
            )
        self.buffer_sizes = buffer_sizes
        return PassResult(graph_module, True)

    def _place_shared_buffers(
        self, graph_module: torch.fx.GraphModule, graph_signature
    ) -> List[TensorSpec]:
        """Puts each mutable buffer of the graph at its offset in buffer 2
        (a new name goes after those seen before); returns their specs."""
        if graph_signature is None:
            raise ValueError(
                "share_mutable_buffers needs the graph signature (the buffer "
                "names): run the pass through to_executorch"
            )
        names = graph_signature.inputs_to_buffers
        placed = []
        for node in graph_module.graph.nodes:
            spec = node.meta.get("spec")
            if node.op != "placeholder" or not isinstance(spec, TensorSpec):
                continue
            if not spec.mutable or node.name not in names:
                continue
            name, nbytes = names[node.name], spec.nbytes
            if name not in self._shared_offsets:
                offset = -(-self._shared_end // self.alignment) * self.alignment
                self._shared_offsets[name] = (offset, nbytes)
                self._shared_end = offset + nbytes
            offset, known = self._shared_offsets[name]
            if known != nbytes:
                raise ValueError(
                    f"shared mutable buffer '{name}' has {nbytes} bytes in "
                    f"this method but {known} in one planned before"
                )
            spec.mem_id, spec.mem_offset = 2, offset
            placed.append(spec)
        return placed


class PlanMemoryPass(ExportedProgramPassBase):
    """The last step of `to_executorch`: tensor specs (`SpecPropPass`, which
    reads from the graph signature which inputs are constants) and then the
    method's memory plan (`planning`, a `MemoryPlanningPass`)."""

    def __init__(self, planning):
        self.planning = planning

    def call(self, exported_program: ExportedProgram) -> ExportedProgramPassResult:
        graph_module = exported_program.graph_module
        signature = exported_program.graph_signature
        SpecPropPass(signature)(graph_module)
        self.planning.run(graph_module, signature)
        return ExportedProgramPassResult(exported_program, True)
