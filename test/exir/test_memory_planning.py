"""Memory planning: lifetimes, greedy best fit, alignment, pluggable
algorithms, and the checker that rejects bad plans."""

import random

import pytest
import torch

from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.exir.memory_planning import (
    collect_planned_specs,
    greedy,
    naive,
    verify_memory_plan,
)
from executorch.exir.passes import MemoryPlanningPass
from executorch.exir.passes.memory_planning_pass import MemoryBudgetError
from executorch.exir.tensor import TensorSpec


def spec(nbytes, start, end):
    s = TensorSpec(torch.uint8, [nbytes])
    s.lifetime = [start, end]
    return s


def overlapping_pairs(specs):
    """Pairs of specs live at the same time whose bytes intersect."""
    bad = []
    for i, a in enumerate(specs):
        for b in specs[i + 1 :]:
            live = a.lifetime[0] <= b.lifetime[1] and b.lifetime[0] <= a.lifetime[1]
            intersect = (
                a.mem_offset < b.mem_offset + b.nbytes
                and b.mem_offset < a.mem_offset + a.nbytes
            )
            if live and intersect and a.nbytes and b.nbytes:
                bad.append((a, b))
    return bad


@pytest.mark.parametrize("algo", [greedy, naive])
@pytest.mark.parametrize("alignment", [1, 16, 64])
def test_random_lifetimes_never_overlap_and_are_aligned(algo, alignment):
    rng = random.Random(alignment)
    for _ in range(50):
        specs = []
        for _ in range(rng.randint(1, 25)):
            start = rng.randint(0, 30)
            specs.append(spec(rng.randint(0, 300), start, start + rng.randint(0, 10)))
        sizes = algo(specs, alignment)
        assert sizes[0] == 0 and sizes[1] % alignment == 0
        assert not overlapping_pairs(specs)
        for s in specs:
            assert s.mem_id == 1
            assert s.mem_offset % alignment == 0
            assert s.mem_offset + s.nbytes <= sizes[1]
        verify_memory_plan(specs, sizes, alignment)


def test_greedy_reuses_memory_of_dead_tensors():
    # a dies before c is born: c can take a's place.
    a, b, c = spec(64, 0, 1), spec(64, 1, 3), spec(64, 2, 3)
    assert greedy([a, b, c], 16) == [0, 128]
    assert c.mem_offset == a.mem_offset
    assert naive([spec(64, 0, 1), spec(64, 1, 3), spec(64, 2, 3)], 16) == [0, 192]


def test_greedy_is_between_peak_live_bytes_and_naive():
    rng = random.Random(7)
    for _ in range(50):
        specs = []
        for _ in range(rng.randint(1, 20)):
            start = rng.randint(0, 20)
            specs.append(spec(16 * rng.randint(1, 8), start, start + rng.randint(0, 6)))
        peak = max(
            sum(s.nbytes for s in specs if s.lifetime[0] <= t <= s.lifetime[1])
            for t in range(30)
        )
        arena = greedy(specs, 16)[1]
        assert peak <= arena <= naive(specs, 16)[1]


def test_checker_rejects_overlap_misalignment_and_overflow():
    a, b = spec(32, 0, 5), spec(32, 3, 8)
    for s, offset in ((a, 0), (b, 16)):
        s.mem_id, s.mem_offset = 1, offset
    with pytest.raises(ValueError, match="overlap"):
        verify_memory_plan([a, b], [0, 64], 16)
    b.mem_offset = 40
    with pytest.raises(ValueError, match="aligned"):
        verify_memory_plan([a, b], [0, 128], 16)
    b.mem_offset = 48
    with pytest.raises(ValueError, match="past its buffer"):
        verify_memory_plan([a, b], [0, 64], 16)


class Chain(torch.nn.Module):
    def forward(self, x):
        a = x + 1
        b = a * 2
        c = b - 3
        return c.relu()


def planned(module, inputs, **pass_args):
    planning = MemoryPlanningPass(**pass_args)
    manager = to_edge(torch.export.export(module, inputs)).to_executorch(
        ExecutorchBackendConfig(memory_planning_pass=planning)
    )
    return manager, planning


def test_pass_plans_graph_lifetimes_and_reports_sizes():
    manager, planning = planned(Chain(), (torch.randn(4, 4),), alignment=32)
    gm = manager.exported_program().graph_module
    specs = collect_planned_specs(gm)
    assert not overlapping_pairs(specs)
    assert all(s.mem_offset % 32 == 0 for s in specs)
    # Input, a, b, c, relu: a chain needs at most two live intermediates plus
    # the input and output; far less than five separate tensors.
    assert planning.buffer_sizes == gm.meta["non_const_buffer_sizes"]
    assert planning.buffer_sizes[1] < 5 * 64
    plan = manager.executorch_program.executionPlan[0]
    assert list(plan.nonConstBufferSizes) == planning.buffer_sizes


def test_graph_inputs_are_live_from_the_start_and_outputs_to_the_end():
    manager, _ = planned(Chain(), (torch.randn(4, 4),))
    gm = manager.exported_program().graph_module
    nodes = list(gm.graph.nodes)
    x = nodes[0].meta["spec"]
    out = nodes[-1].args[0][0].meta["spec"]
    assert x.lifetime[0] == 0
    assert out.lifetime[1] == len(nodes) - 1


def test_custom_algorithm_is_called_with_specs_and_alignment():
    calls = []

    def everything_apart(specs, alignment):
        calls.append((len(specs), alignment))
        return naive(specs, alignment)

    manager, planning = planned(
        Chain(),
        (torch.randn(4, 4),),
        memory_planning_algo=everything_apart,
        alignment=64,
    )
    assert calls == [(5, 64)]
    assert planning.buffer_sizes == [0, 5 * 64]


def test_broken_algorithm_is_caught():
    def all_at_zero(specs, alignment):
        for s in specs:
            s.mem_id, s.mem_offset = 1, 0
        return [0, max(s.nbytes for s in specs)]

    with pytest.raises(ValueError, match="overlap"):
        planned(Chain(), (torch.randn(4, 4),), memory_planning_algo=all_at_zero)


def test_constants_are_not_planned():
    manager, _ = planned(torch.nn.Linear(4, 3), (torch.randn(2, 4),))
    gm = manager.exported_program().graph_module
    params = [n for n in gm.graph.nodes if n.op == "placeholder"][:2]
    for p in params:
        assert p.meta["spec"].const and not p.meta["spec"].planned


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="power of two"):
        MemoryPlanningPass(alignment=24)
    with pytest.raises(ValueError, match="unknown memory planning algorithm"):
        MemoryPlanningPass(memory_planning_algo="best")


def test_memory_report_names_the_tensors_live_at_the_peak():
    manager, planning = planned(Chain(), (torch.randn(4, 4),))
    report = manager.memory_report()
    assert report.buffer_sizes == planning.buffer_sizes
    assert report.peak_live_bytes <= sum(report.buffer_sizes)
    assert report.peak_live_bytes == sum(size for _, size in report.live_at_peak)
    assert all(size == 64 for _, size in report.live_at_peak)
    assert "x" in {name for name, _ in report.live_at_peak}
    assert "planned memory" in str(report)


def test_plan_over_budget_is_rejected_with_the_peak():
    _, planning = planned(Chain(), (torch.randn(4, 4),))
    needed = sum(planning.buffer_sizes)
    planned(Chain(), (torch.randn(4, 4),), memory_budget=needed)
    with pytest.raises(MemoryBudgetError, match="budget of 64 bytes") as error:
        planned(Chain(), (torch.randn(4, 4),), memory_budget=64)
    assert "peak of live tensors" in str(error.value)
