"""Buffers a method mutates: written back in place with aten::copy_, kept in
planned memory that nothing else reuses, so state carries between calls."""

import pytest
import torch
from program_interpreter import PlanInterpreter

from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.exir.memory_planning import collect_planned_specs
from executorch.exir.passes import MemoryPlanningPass


class Accumulator(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.tensor([1.0, -2.0, 0.5]))
        self.register_buffer("scale", torch.full((3,), 2.0))

    def forward(self, x):
        self.total.add_(x)
        return (self.total * self.scale).relu() - x


def export(**planning):
    config = ExecutorchBackendConfig(
        # The portable kernels have no copy_ yet; this tests the compiler.
        kernel_library=None,
        memory_planning_pass=MemoryPlanningPass(**planning),
    )
    ep = torch.export.export(Accumulator(), (torch.ones(3),))
    return to_edge(ep).to_executorch(config)


def test_mutation_is_written_back_in_place_at_the_end():
    manager = export()
    plan = manager.executorch_program.executionPlan[0]
    calls = [i.instrArgs for i in plan.chains[0].instructions]
    last = calls[-1]
    assert (
        plan.operators[last.opIndex].name,
        plan.operators[last.opIndex].overload,
    ) == (
        "aten::copy_",
        "",
    )
    buffer, source, non_blocking, returned = last.args
    assert returned == buffer
    assert plan.values[non_blocking].val.boolVal is False
    # The first call (add) reads the buffer and computes the source.
    assert calls[0].args[0] == buffer and source == calls[0].args[-1]
    # Only the user's output is returned; the buffer is planned memory that
    # starts from its initial value, stored in the mutable data.
    assert len(plan.outputs) == 1
    total = plan.values[buffer].val
    assert total.allocationInfo is not None and total.dataBufferIdx == 1


def test_unmutated_buffers_stay_constants():
    manager = export()
    gm = manager.exported_program().graph_module
    specs = {n.name: n.meta["spec"] for n in gm.graph.nodes if n.op == "placeholder"}
    assert specs["b_total"].mutable and not specs["b_total"].const
    assert specs["b_scale"].const and not specs["b_scale"].mutable


def test_buffer_memory_is_never_shared():
    manager = export()
    gm = manager.exported_program().graph_module
    nodes = list(gm.graph.nodes)
    buffer = nodes[0].meta["spec"]
    assert buffer.lifetime == [0, len(nodes) - 1]
    for spec in collect_planned_specs(gm):
        if spec is not buffer:
            assert (
                spec.mem_offset >= buffer.mem_offset + buffer.nbytes
                or spec.mem_offset + spec.nbytes <= buffer.mem_offset
            )


@pytest.mark.parametrize("alloc_graph_input", [True, False])
def test_state_carries_between_calls(alloc_graph_input):
    manager = export(alloc_graph_input=alloc_graph_input)
    plan = manager.executorch_program.executionPlan[0]
    interpreter = PlanInterpreter(
        plan, manager.constant_data, mutable_data=manager.mutable_data
    )
    reference = Accumulator()
    for step in range(3):
        x = torch.randn(3, generator=torch.Generator().manual_seed(step))
        # The buffer starts from its initial value, as in eager.
        got = interpreter.run((x,))[0]
        torch.testing.assert_close(got, reference(x))
