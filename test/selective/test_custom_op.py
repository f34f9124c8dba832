"""The custom operator example end to end: export a module calling
my_ops::scaled_tanh, run it with custom_ops_runner (executor_runner linked
with the custom kernel library) and with custom_ops_library_runner (the same
kernel registered by EXECUTORCH_LIBRARY) on random inputs, and compare with
the Python reference."""

import os
import re
import subprocess

import pytest
import torch
from executorch.examples.custom_ops.export_custom_op import (
    ScaledTanhModel,
    example_inputs,
    export_custom_op_program,
)

OUTPUT_LINE = re.compile(r"^Output 0: tensor Float\[([\d, ]*)\] = \[(.*)\]$")


def run(runner, pte, inputs):
    return subprocess.run(
        [runner, "--model_path", pte, "--inputs", inputs, "--print_output"],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )


# The kernel registered by custom_ops.yaml's generated code, and by
# EXECUTORCH_LIBRARY (extension/kernel_util).
RUNNERS = ["custom_ops_runner", "custom_ops_library_runner"]


@pytest.mark.parametrize("runner_name", RUNNERS)
def test_custom_op_runs_like_the_python_reference(build_dir, tmp_path, runner_name):
    pte = str(tmp_path / "custom_op.pte")
    export_custom_op_program(pte)
    (x,) = example_inputs()
    x = x * 3  # reach tanh's saturated range too
    inputs = tmp_path / "x.bin"
    inputs.write_bytes(x.contiguous().numpy().tobytes())
    runner = os.path.join(build_dir, "examples", "custom_ops", runner_name)
    result = run(runner, pte, str(inputs))
    assert result.returncode == 0, result.stderr + result.stdout
    assert "already registered" not in result.stderr
    match = next(filter(None, map(OUTPUT_LINE.match, result.stdout.splitlines())))
    shape = [int(s) for s in match.group(1).split(",")]
    actual = torch.tensor([float(v) for v in match.group(2).split(",")]).reshape(shape)
    with torch.no_grad():
        expected = ScaledTanhModel()(x)
    # float32 tanh of libm vs ATen's: a few ulps apart at most.
    torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-6)


def test_runner_without_the_custom_kernels_names_the_custom_operator(
    build_dir, tmp_path
):
    pte = str(tmp_path / "custom_op.pte")
    export_custom_op_program(pte)
    inputs = tmp_path / "x.bin"
    inputs.write_bytes(example_inputs()[0].numpy().tobytes())
    runner = os.path.join(build_dir, "examples", "executor_runner", "executor_runner")
    result = run(runner, pte, str(inputs))
    assert result.returncode != 0
    assert (
        "operator 'my_ops::scaled_tanh.out' has no registered kernel" in result.stderr
    )
