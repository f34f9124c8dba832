"""Upstream's "Memory Planning" page (compiler-memory-planning.html):
the MemoryPlanningPass options passed through ExecutorchBackendConfig, and
"Debugging Tool": `generate_memory_trace` writing a Chrome trace of the
plan."""

import json

import pytest
import torch
from torch.export import export

from executorch import exir
from executorch.exir import to_edge
from executorch.exir.passes import MemoryPlanningPass
from executorch.test.api_docs._docs import FLOAT_TOL, assert_matches_eager, run, seeded


class Chain(torch.nn.Module):
    def forward(self, x, y):
        a = x + y
        b = torch.sin(a) * x
        return torch.relu(b - a)


def _edge():
    return to_edge(export(Chain(), (torch.randn(4, 8), torch.randn(4, 8))))


@pytest.mark.parametrize("alloc_graph_input", [True, False])
@pytest.mark.parametrize("alloc_graph_output", [True, False])
def test_memory_planning_pass_options(alloc_graph_input, alloc_graph_output):
    """"Level 1 Customizations": `memory_planning_algo`,
    `alloc_graph_input`, `alloc_graph_output`. Inputs and outputs the plan
    leaves out are not in planned memory; the program still runs."""
    edge_program = _edge()
    program = edge_program.to_executorch(
        exir.ExecutorchBackendConfig(
            memory_planning_pass=MemoryPlanningPass(
                memory_planning_algo="greedy",
                alloc_graph_input=alloc_graph_input,
                alloc_graph_output=alloc_graph_output,
            )
        )
    )
    plan = program.executorch_program.executionPlan[0]
    def planned(index):
        return plan.values[index].val.allocationInfo is not None

    assert all(planned(i) == alloc_graph_input for i in plan.inputs)
    assert all(planned(i) == alloc_graph_output for i in plan.outputs)
    x, y = seeded(4, 8), seeded(4, 8, seed=1)
    assert_matches_eager(run(program.buffer, [x, y]), Chain()(x, y))


def test_custom_memory_planning_algorithm():
    """"Level 2 Customizations": a callable as `memory_planning_algo`
    (here: the built-in naive one, wrapped)."""
    from executorch.exir.memory_planning import ALGORITHMS

    calls = []

    def custom_memory_planning(specs, alignment):
        calls.append(len(specs))
        return ALGORITHMS["naive"](specs, alignment)

    program = _edge().to_executorch(
        exir.ExecutorchBackendConfig(
            memory_planning_pass=MemoryPlanningPass(
                memory_planning_algo=custom_memory_planning
            )
        )
    )
    assert calls and calls[0] > 0
    x, y = seeded(4, 8), seeded(4, 8, seed=1)
    assert_matches_eager(run(program.buffer, [x, y]), Chain()(x, y))


def test_enable_non_cpu_memory_planning_option():
    """ExecutorchBackendConfig(enable_non_cpu_memory_planning=...) is
    accepted; every tensor here is on the CPU, so the plan is the same."""
    default = _edge().to_executorch(exir.ExecutorchBackendConfig())
    non_cpu = _edge().to_executorch(
        exir.ExecutorchBackendConfig(enable_non_cpu_memory_planning=True)
    )
    plans = [p.executorch_program.executionPlan[0] for p in (default, non_cpu)]
    assert list(plans[0].nonConstBufferSizes) == list(plans[1].nonConstBufferSizes)


def _has_memory_profiler() -> bool:
    try:
        import executorch.util.activation_memory_profiler  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.xfail(
    not _has_memory_profiler(),
    reason="executorch.util.activation_memory_profiler (issue #22 item 4) not yet",
    strict=True,
)
@pytest.mark.parametrize("enable_memory_offsets", [True, False])
def test_generate_memory_trace(tmp_path, enable_memory_offsets):
    """"Debugging Tool": `generate_memory_trace(executorch_program_manager,
    chrome_trace_filename, enable_memory_offsets)` writes a Chrome trace;
    each planned tensor is one complete event spanning its lifetime, at
    its planned offset when offsets are enabled."""
    from executorch.util.activation_memory_profiler import generate_memory_trace

    program = _edge().to_executorch()
    path = tmp_path / "mem_profile.json"
    generate_memory_trace(
        executorch_program_manager=program,
        chrome_trace_filename=str(path),
        enable_memory_offsets=enable_memory_offsets,
    )
    trace = json.loads(path.read_text())
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    plan = program.executorch_program.executionPlan[0]
    planned = [
        v.val for v in plan.values
        if hasattr(v.val, "allocationInfo") and v.val.allocationInfo is not None
    ]
    assert len(events) == len(planned)
    assert all(e["dur"] >= 1 for e in events)
    if enable_memory_offsets:
        offsets = sorted(e["args"]["offset"] for e in events)
        expected = sorted(t.allocationInfo.memoryOffsetLow for t in planned)
        assert offsets == expected
        # Tensors whose lifetimes overlap never overlap in memory.
        for a in events:
            for b in events:
                if a is b or a["args"]["mem_id"] != b["args"]["mem_id"]:
                    continue
                live_together = a["ts"] < b["ts"] + b["dur"] and b["ts"] < a["ts"] + a["dur"]
                if live_together:
                    a_end = a["args"]["offset"] + a["args"]["size"]
                    b_end = b["args"]["offset"] + b["args"]["size"]
                    assert a_end <= b["args"]["offset"] or b_end <= a["args"]["offset"]
