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
from executorch.exir.memory_planning import flatten_specs
from executorch.exir.passes import MemoryPlanningPass
from executorch.test.api_docs._docs import assert_matches_eager, run, seeded


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
    # The plan: every planned tensor of the method (views share their
    # base's memory), with its lifetime, buffer and offset.
    graph = program.exported_program().graph
    specs = {
        id(s): (n.name, s)
        for n in graph.nodes
        for s in flatten_specs(n.meta.get("spec"))
        if s.planned and s.base is None
    }
    assert sorted(e["name"] for e in events) == sorted(n for n, _ in specs.values())
    by_name = {n: s for n, s in specs.values()}
    for e in events:
        spec = by_name[e["name"]]
        assert (e["ts"], e["ts"] + e["dur"] - 1) == tuple(spec.lifetime)
        assert e["pid"] == e["args"]["mem_id"] == spec.mem_id
        assert e["args"]["size"] == spec.nbytes
        if enable_memory_offsets:
            assert e["args"]["offset"] == e["tid"] == spec.mem_offset
    if enable_memory_offsets:
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
    else:
        # Rows without offsets: tensors sharing a row never live together.
        for a in events:
            for b in events:
                if a is not b and (a["pid"], a["tid"]) == (b["pid"], b["tid"]):
                    assert a["ts"] + a["dur"] <= b["ts"] or b["ts"] + b["dur"] <= a["ts"]
