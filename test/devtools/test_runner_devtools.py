"""executor_runner's developer tools: --etdump_path (with --debug_output)
writes an ETDump the Inspector reads, and a bundled program (.bpte) runs
each test case and reports pass/fail with the worst element."""

import os
import re
import subprocess

import pytest
import torch

from executorch.devtools import BundledProgram, Inspector, generate_etrecord
from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
from executorch.devtools.bundled_program.serialize import (
    serialize_from_bundled_program_to_flatbuffer,
)
from executorch.exir import to_edge
from executorch.test.modules import ReluMlp


@pytest.fixture(scope="module")
def runner(build_dir):
    path = os.path.join(build_dir, "examples", "executor_runner", "executor_runner")
    if not os.path.exists(path):
        pytest.skip("executor_runner is not built")

    def run(*flags):
        return subprocess.run(
            [path, *flags], capture_output=True, text=True, timeout=120
        )

    return run


@pytest.fixture(scope="module")
def mlp():
    torch.manual_seed(0)
    model = ReluMlp().eval()
    inputs = (torch.ones(3, 6),)  # the runner's default inputs
    edge = to_edge(torch.export.export(model, inputs))
    return model, inputs, edge, edge.to_executorch()


def test_etdump_with_debug_output(runner, mlp, tmp_path):
    model, inputs, edge, program = mlp
    pte, etdump = tmp_path / "m.pte", tmp_path / "run.etdp"
    program.save(str(pte))
    generate_etrecord(str(tmp_path / "m.etrecord"), edge, program)
    result = runner(
        "--model_path",
        str(pte),
        "--num_executions",
        "4",
        "--etdump_path",
        str(etdump),
        "--debug_output",
    )
    assert result.returncode == 0, result.stderr
    assert f"ETDump: '{etdump}'" in result.stdout
    inspector = Inspector(
        etdump_path=str(etdump),
        etrecord=str(tmp_path / "m.etrecord"),
        debug_buffer_path=f"{etdump}.bin",
    )
    (block,) = [b for b in inspector.event_blocks if b.name == "Execute"]
    kernels = [e for e in block.events if e.name.startswith("native_call_")]
    # Two addmm, abs, softmax (the weights' transposes are folded at export).
    assert len(kernels) == 4
    assert all(len(e.perf_data.raw) == 4 for e in kernels)
    torch.testing.assert_close(block.run_output[0], model(*inputs))
    gaps = inspector.calculate_numeric_gap("MSE")
    assert len(gaps) == 4 and max(g[0] for g in gaps["gap"]) < 1e-10

    # Without --etdump_path, --debug_output is refused.
    refused = runner("--model_path", str(pte), "--debug_output")
    assert (
        refused.returncode == 2
        and "--debug_output needs --etdump_path" in refused.stderr
    )


def test_bundled_program_test_cases(runner, mlp, tmp_path):
    model, inputs, edge, program = mlp
    x = torch.randn(3, 6)
    cases = [
        MethodTestCase((x,), model(x)),
        MethodTestCase((x * 2,), model(x * 2) + torch.tensor([0, 0, 0.25, 0])),
    ]
    bpte = tmp_path / "m.bpte"
    bpte.write_bytes(
        serialize_from_bundled_program_to_flatbuffer(
            BundledProgram(program, [MethodTestSuite("forward", cases)])
        )
    )
    result = runner(
        "--model_path", str(bpte), "--etdump_path", str(tmp_path / "b.etdp")
    )
    assert result.returncode == 1
    assert "is a bundled program" in result.stdout
    assert re.search(r"Test case 0: PASS \(12 elements", result.stdout)
    # Column 2 of every row is off by 0.25: 3 elements, the worst one named.
    failure = re.search(
        r"Test case 1: FAIL: 3 of 12 elements differ .*worst: output 0 element (\d+)",
        result.stdout,
    )
    assert failure and int(failure.group(1)) % 4 == 2
    assert "1 of 2 test cases passed" in result.stdout
    # The ETDump marks each block with its test case.
    inspector = Inspector(etdump_path=str(tmp_path / "b.etdp"))
    indices = [
        b.bundled_input_index for b in inspector.event_blocks if b.name == "Execute"
    ]
    assert indices == [0, 1]

    loose = runner("--model_path", str(bpte), "--atol", "0.3")
    assert loose.returncode == 0 and "2 of 2 test cases passed" in loose.stdout

    truncated = tmp_path / "truncated.bpte"
    truncated.write_bytes(bpte.read_bytes()[:-500])
    damaged = runner("--model_path", str(truncated))
    assert damaged.returncode == 1
    assert "damaged bundled program" in damaged.stderr
