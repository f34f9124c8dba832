"""Profiling and numeric debugging of MobileNetV2 through the whole flow:
export (portable and XNNPACK-delegated), ETRecord, a run of the C++ runtime
recording an ETDump with every intermediate value, and the Inspector."""

import os
import re

import pytest
import torch

from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
    XnnpackPartitioner,
)
from executorch.devtools import Inspector, generate_etrecord
from executorch.devtools.numeric_debugger import _step_through
from executorch.examples.models import get_model
from executorch.exir import to_edge, to_edge_transform_and_lower
from executorch.exir._serialize._flatbuffer import InstructionArguments
from executorch.extension.pybindings import portable_lib

MODELS_DIR = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    "examples",
    "models",
)


class Flow:
    """One program's files and Inspectors over them: `inspector` for two
    timed runs, `values` for one run logging every intermediate value."""

    def __init__(self, tmp, name, edge, inputs):
        self.edge = edge
        self.inputs = inputs
        self.program = edge.to_executorch()
        etrecord = str(tmp / f"{name}.etrecord")
        generate_etrecord(etrecord, edge, self.program)
        self.inspector = self._run(tmp / f"{name}_timed", etrecord, runs=2)
        self.values = self._run(tmp / f"{name}_values", etrecord, runs=1, values=True)

    def _run(self, stem, etrecord, runs, values=False):
        module = portable_lib._load_for_executorch_from_buffer(
            self.program.buffer,
            enable_etdump=True,
            # MobileNetV2's intermediates take about 70 MB.
            debug_buffer_size=(96 << 20) if values else 0,
        )
        for _ in range(runs):
            self.outputs = module.forward(self.inputs)
        debug = f"{stem}.bin" if values else None
        module.write_etdump_result_to_file(f"{stem}.etdp", debug)
        return Inspector(
            etdump_path=f"{stem}.etdp", etrecord=etrecord, debug_buffer_path=debug
        )

    def instructions(self):
        plan = self.program.executorch_program.executionPlan[0]
        return plan.chains[0].instructions

    def execute_events(self, inspector=None):
        """The events of the runs, without the framework's own."""
        inspector = inspector or self.inspector
        (block,) = [b for b in inspector.event_blocks if b.name == "Execute"]
        return [e for e in block.events if e.name != "Method::execute"]


@pytest.fixture(scope="module")
def mobilenet():
    model, inputs = get_model("mobilenet_v2")
    return model, inputs, torch.export.export(model, inputs)


@pytest.fixture(scope="module")
def portable(mobilenet, tmp_path_factory):
    model, inputs, exported = mobilenet
    return Flow(tmp_path_factory.mktemp("portable"), "mv2", to_edge(exported), inputs)


@pytest.fixture(scope="module")
def delegated(mobilenet, tmp_path_factory):
    model, inputs, exported = mobilenet
    edge = to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()])
    return Flow(tmp_path_factory.mktemp("xnnpack"), "mv2_xnnpack", edge, inputs)


def _model_source(stack_traces):
    """Whether some stack trace points into the model's own source."""
    return any(trace and MODELS_DIR in trace for trace in stack_traces.values())


def test_every_kernel_call_has_its_events_with_names_and_source_lines(portable):
    events = portable.execute_events()
    by_instruction = {}
    for event in events:
        by_instruction.setdefault(event._instruction_id, []).append(event)
    plan = portable.program.executorch_program.executionPlan[0]
    kernel_calls = 0
    for index, instruction in enumerate(portable.instructions()):
        if instruction.instrArgsType != InstructionArguments.KernelCall:
            continue
        kernel_calls += 1
        op = plan.operators[instruction.instrArgs.opIndex]
        name = op.name.decode() if isinstance(op.name, bytes) else op.name
        overload = (
            op.overload.decode() if isinstance(op.overload, bytes) else op.overload
        )
        expected = f"native_call_{name.split('::')[-1]}.{overload}"
        names = sorted(e.name for e in by_instruction[index])
        assert names == sorted(["OPERATOR_CALL", expected]), index
        for event in by_instruction[index]:
            assert len(event.perf_data.raw) == 2  # both runs
            assert event.op_types, (index, event.name)
            assert _model_source(event.stack_traces), (index, event.stack_traces)
            assert event.module_hierarchy
    assert kernel_calls > 60


def test_delegated_program_has_events_for_every_instruction(delegated):
    events = delegated.execute_events()
    instructions = delegated.instructions()
    covered = {e._instruction_id for e in events}
    assert covered == set(range(len(instructions)))
    delegate_calls = [e for e in events if e.name == "DELEGATE_CALL"]
    assert delegate_calls
    for event in delegate_calls:
        assert event.delegate_backend_name == "XnnpackBackend"
        # Every operator lowered into the delegate, with its source.
        assert len(event.op_types) > 10
        assert _model_source(event.stack_traces)
    torch.testing.assert_close(
        delegated.outputs[0],
        delegated.edge.exported_program().module()(*delegated.inputs),
    )


STEP_NAME = re.compile(
    r"(?:XNNPACK|host \w+) nodes (\d+)-(\d+)|(?:XNNPACK \w+|host \w+|view) node (\d+)"
)


def test_xnnpack_steps_are_timed_inside_their_delegate_call(delegated):
    """This XNNPACK cannot time single operators, so the delegate reports
    one named event per step (an XNNPACK runtime over a run of nodes, one
    node on the host, a fused run on the host, or a reshape run as a view),
    nested in its DELEGATE_CALL."""
    events = delegated.execute_events()
    for call in [e for e in events if e.name == "DELEGATE_CALL"]:
        steps = [
            e
            for e in events
            if e.is_delegated_op and e._instruction_id == call._instruction_id
        ]
        assert steps, call._instruction_id
        covered = []
        for step in steps:
            assert step.delegate_backend_name == "XnnpackBackend"
            match = STEP_NAME.fullmatch(step.name)
            assert match, step.name
            first, last, host = match.groups()
            if host:
                covered.append(int(host))
            else:
                covered += range(int(first), int(last) + 1)
            # Each run's step lies within that run's delegate call.
            for run in range(2):
                assert call._start_time[run] <= step._start_time[run]
                assert step.perf_data.raw[run] <= call.perf_data.raw[run]
        assert covered == list(range(len(covered)))
    # The steps map to no graph node, so module totals count the calls.
    kernels = [e for e in events if e.name.startswith("native_call_")]
    calls = [e for e in events if e.name == "DELEGATE_CALL"]
    assert delegated.inspector.find_total_for_module("") == pytest.approx(
        sum(e.perf_data.avg for e in kernels + calls)
    )


def test_logged_intermediates_are_the_values_the_runtime_computed(portable):
    """Each kernel call's logged result equals the value the numeric
    debugger reads from the method after stepping over the instruction."""
    program = portable_lib._load_program_from_buffer(portable.program.buffer)
    method = program.load_method("forward")
    method.set_inputs(list(portable.inputs))
    stepped = {}
    for index, instruction in _step_through(method, portable.instructions()):
        if instruction.instrArgsType == InstructionArguments.KernelCall:
            stepped[index] = method.get_value(instruction.instrArgs.args[-1])
    logged = {
        e._instruction_id: e.debug_data
        for e in portable.execute_events(portable.values)
        if e.name.startswith("native_call_")
    }
    assert set(logged) == set(stepped)
    for index, value in stepped.items():
        (runtime,) = logged[index]
        # Operators with several outputs log them as one list.
        if isinstance(value, list):
            assert len(runtime) == len(value), index
            assert all(torch.equal(r, v) for r, v in zip(runtime, value)), index
        else:
            assert torch.equal(runtime, value), index


def test_find_total_for_module_sums_its_operators(portable):
    inspector = portable.inspector
    kernels = [
        e for e in portable.execute_events() if e.name.startswith("native_call_")
    ]

    def under(event, prefix):
        return any(
            path == prefix or path.startswith(prefix + ".")
            for hierarchy in event.module_hierarchy.values()
            for path, _ in (hierarchy or {}).values()
        )

    for module in ("features.1", "features.3.body.1", "classifier"):
        expected = sum(e.perf_data.avg for e in kernels if under(e, module))
        assert expected > 0, module
        assert inspector.find_total_for_module(module) == pytest.approx(expected)
    # The whole model: every kernel once (not OPERATOR_CALL, not framework
    # events).
    everything = sum(e.perf_data.avg for e in kernels)
    assert inspector.find_total_for_module("") == pytest.approx(everything)
    assert inspector.find_total_for_module("no_such_module") == 0.0


def test_numeric_gap_is_zero_for_a_correct_program(portable, delegated):
    gaps = portable.values.calculate_numeric_gap("MSE")
    # One row per kernel call whose node is in the Edge program.
    assert len(gaps) > 60
    # float32 kernels summing in another order than eager: tiny, not zero.
    assert max(max(g) for g in gaps["gap"]) < 1e-8
    delegate_gaps = delegated.values.calculate_numeric_gap("L1")
    assert len(delegate_gaps) == 1 and delegate_gaps["runtime_ops"][0] == [
        "DELEGATE_CALL"
    ]
    assert delegate_gaps["gap"][0][0] < 1e-2
    assert delegate_gaps["aot_ops"][0] == ["addmm"]


def test_dataframe_and_table(portable, capsys):
    frame = portable.inspector.to_dataframe()
    assert {
        "event_block_name",
        "event_name",
        "p50 (ms)",
        "op_types",
        "stack_traces",
    } <= set(frame.columns)
    assert (frame["event_name"] == "OPERATOR_CALL").sum() > 60
    portable.inspector.print_data_tabular()
    printed = capsys.readouterr().out
    assert "native_call_convolution.out" in printed
    assert "OPERATOR_CALL" not in printed
