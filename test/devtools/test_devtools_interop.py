"""The developer tools' files cross between us and upstream ExecuTorch:
our ETDump is read by upstream's Inspector and upstream's ETDump and
ETRecord by ours; our .bpte runs and verifies on upstream's runtime and
upstream's on ours.

Needs upstream ExecuTorch in its own environment (the `upstream_python`
fixture); one subprocess does all of upstream's side.
"""

import subprocess
import textwrap

import pytest
import torch

from executorch.devtools import BundledProgram, Inspector
from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
from executorch.devtools.bundled_program.serialize import (
    serialize_from_bundled_program_to_flatbuffer,
)
from executorch.exir import to_edge
from executorch.extension.pybindings import portable_lib
from executorch.test import modules

# Defines `model` and `inputs` on either side (test/modules.py needs only
# torch: upstream's side loads it by path).
MODEL = textwrap.dedent(
    f"""
    import importlib.util, torch
    spec = importlib.util.spec_from_file_location("modules", {modules.__file__!r})
    test_modules = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(test_modules)
    torch.manual_seed(0)
    model = test_modules.ReluMlp().eval()
    inputs = (torch.randn(3, 6),)
    """
)

# Upstream's side, in directory argv[1]: read our ETDump (ours.etdp,
# ours.bin) and verify our ours.bpte; then export the same model, run it
# with an ETDump and write upstream.{etdp,bin,etrecord,bpte}.
UPSTREAM = MODEL + textwrap.dedent(
    """
    import copy, os, sys
    from executorch.devtools import BundledProgram, Inspector, generate_etrecord
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.serialize import (
        serialize_from_bundled_program_to_flatbuffer,
    )
    from executorch.exir import to_edge
    from executorch.extension.pybindings import portable_lib as rt

    d = sys.argv[1]
    p = lambda name: os.path.join(d, name)
    result = {}
    inspector = Inspector(etdump_path=p("ours.etdp"), debug_buffer_path=p("ours.bin"))
    result["blocks"] = [
        [(e.name, e._instruction_id, len(e.perf_data.raw) if e.perf_data else 0,
          [tuple(v.shape) for v in e.debug_data if isinstance(v, torch.Tensor)])
         for e in b.events]
        for b in inspector.event_blocks
    ]
    result["values"] = {
        e._instruction_id: e.debug_data[0]
        for b in inspector.event_blocks for e in b.events
        if e.name.startswith("native_call_") and e.debug_data
    }
    bundle = rt._load_bundled_program_from_buffer(open(p("ours.bpte"), "rb").read())
    result["bpte_outputs"] = [
        bundle.verify_result_with_bundled_expected_output("forward", i, 1e-5, 1e-5)
        for i in range(2)
    ]

    edge = to_edge(torch.export.export(model, inputs))
    program = copy.deepcopy(edge).to_executorch()
    generate_etrecord(p("upstream.etrecord"), edge, program)
    with open(p("upstream.pte"), "wb") as f:
        f.write(program.buffer)
    module = rt._load_for_executorch(p("upstream.pte"), enable_etdump=True,
                                     debug_buffer_size=1 << 20)
    for _ in range(2):
        module.forward(inputs)
    module.write_etdump_result_to_file(p("upstream.etdp"), p("upstream.bin"))
    bundled = BundledProgram(program, [MethodTestSuite("forward", [
        MethodTestCase(inputs, model(*inputs)),
        MethodTestCase((inputs[0] * 3,), model(inputs[0] * 3)),
    ])])
    with open(p("upstream.bpte"), "wb") as f:
        f.write(serialize_from_bundled_program_to_flatbuffer(bundled))
    torch.save(result, p("result.pt"))
    """
)


@pytest.fixture(scope="module")
def exchanged(upstream_python, tmp_path_factory):
    """Our files, upstream's files and what upstream read from ours."""
    directory = tmp_path_factory.mktemp("devtools_interop")
    scope = {}
    exec(MODEL, scope)
    model, inputs = scope["model"], scope["inputs"]
    edge = to_edge(torch.export.export(model, inputs))
    program = edge.to_executorch()
    module = portable_lib._load_for_executorch_from_buffer(
        program.buffer, enable_etdump=True, debug_buffer_size=1 << 20
    )
    for _ in range(3):
        module.forward(inputs)
    module.write_etdump_result_to_file(
        str(directory / "ours.etdp"), str(directory / "ours.bin")
    )
    ours = Inspector(
        etdump_path=str(directory / "ours.etdp"),
        debug_buffer_path=str(directory / "ours.bin"),
    )
    cases = [
        MethodTestCase(inputs, model(*inputs)),
        MethodTestCase((inputs[0] - 1,), model(inputs[0] - 1)),
    ]
    bundled = BundledProgram(program, [MethodTestSuite("forward", cases)])
    (directory / "ours.bpte").write_bytes(
        serialize_from_bundled_program_to_flatbuffer(bundled)
    )
    script = directory / "upstream_side.py"
    script.write_text(UPSTREAM)
    run = subprocess.run(
        [upstream_python, str(script), str(directory)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    return {
        "dir": directory,
        "model": model,
        "inputs": inputs,
        "ours": ours,
        "cases": cases,
        "upstream": torch.load(directory / "result.pt"),
    }


def test_upstream_inspector_reads_our_etdump(exchanged):
    ours = exchanged["ours"]
    theirs = exchanged["upstream"]["blocks"]
    assert len(theirs) == len(ours.event_blocks)
    for block, their_block in zip(ours.event_blocks, theirs):
        assert [(e.name, e._instruction_id) for e in block.events] == [
            (name, instruction) for name, instruction, _, _ in their_block
        ]
        for event, (_, _, runs, shapes) in zip(block.events, their_block):
            assert runs == (len(event.perf_data.raw) if event.perf_data else 0)
            assert shapes == [
                tuple(v.shape) for v in event.debug_data if isinstance(v, torch.Tensor)
            ]
    (execute,) = [b for b in ours.event_blocks if b.name == "Execute"]
    for event in execute.events:
        if event.name.startswith("native_call_"):
            assert torch.equal(
                exchanged["upstream"]["values"][event._instruction_id],
                event.debug_data[0],
            )


def test_our_inspector_reads_upstream_etdump_and_etrecord(exchanged):
    d = exchanged["dir"]
    inspector = Inspector(
        etdump_path=str(d / "upstream.etdp"),
        etrecord=str(d / "upstream.etrecord"),
        debug_buffer_path=str(d / "upstream.bin"),
    )
    (execute,) = [b for b in inspector.event_blocks if b.name == "Execute"]
    kernels = [e for e in execute.events if e.name.startswith("native_call_")]
    assert {e.name for e in kernels} >= {
        "native_call_addmm.out",
        "native_call_relu.out",
        "native_call__softmax.out",
    }
    for event in kernels:
        assert len(event.perf_data.raw) == 2
        assert event.op_types and event.stack_traces
    relu = next(e for e in kernels if e.name == "native_call_relu.out")
    assert "hidden = torch.relu(self.first(x))" in next(
        iter(relu.stack_traces.values())
    )
    torch.testing.assert_close(
        execute.run_output[0], exchanged["model"](*exchanged["inputs"])
    )
    gaps = inspector.calculate_numeric_gap("MSE")
    assert len(gaps) >= 4
    assert max(g[0] for g in gaps["gap"]) < 1e-10


def test_our_bpte_verifies_on_upstream_runtime(exchanged):
    for outputs, case in zip(exchanged["upstream"]["bpte_outputs"], exchanged["cases"]):
        torch.testing.assert_close(outputs[0], case.expected_outputs[0])


def test_upstream_bpte_verifies_on_our_runtime(exchanged):
    data = (exchanged["dir"] / "upstream.bpte").read_bytes()
    module = portable_lib._load_bundled_program_from_buffer(data)
    model, inputs = exchanged["model"], exchanged["inputs"]
    for index, x in enumerate([inputs[0], inputs[0] * 3]):
        outputs = module.verify_result_with_bundled_expected_output("forward", index)
        torch.testing.assert_close(outputs[0], model(x))
