"""executor_runner: runs a .pte with inputs from raw files and prints outputs
that match eager; reports bad inputs clearly."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from .programs import eager, export_with_ours

REPO = Path(__file__).resolve().parents[2]
RUNNER = (
    Path(os.environ.get("EXECUTORCH_BUILD_DIR", REPO / "build"))
    / "examples/executor_runner/executor_runner"
)
OUTPUT = re.compile(r"^Output (\d+): tensor (\w+)\[([\d, ]*)\] = \[(.*)\]$", re.M)
TORCH_DTYPES = {"Float": torch.float32, "Long": torch.int64, "Bool": torch.bool}


@pytest.fixture
def runner():
    if not RUNNER.exists():
        pytest.skip(f"{RUNNER} is not built")
    return RUNNER


def run(runner, *args, expect_ok=True):
    """Runs the runner; on an unexpected exit code, fails showing stderr."""
    result = subprocess.run([runner, *map(str, args)], capture_output=True, text=True)
    assert (result.returncode == 0) == expect_ok, result.stderr
    return result


def parse_outputs(stdout):
    outputs = []
    for _, dtype, sizes, values in OUTPUT.findall(stdout):
        shape = [int(s) for s in sizes.split(",") if s.strip()]
        parsed = [
            v == "true" if dtype == "Bool" else float(v) for v in values.split(", ")
        ]
        outputs.append(torch.tensor(parsed).to(TORCH_DTYPES[dtype]).reshape(shape))
    return outputs


def write_model_and_inputs(tmp_path, pte, inputs):
    model = tmp_path / "model.pte"
    model.write_bytes(pte)
    files = []
    for i, tensor in enumerate(inputs):
        files.append(tmp_path / f"input{i}.bin")
        files[-1].write_bytes(tensor.contiguous().numpy().tobytes())
    return model, ",".join(str(f) for f in files)


@pytest.mark.parametrize("name", ["mlp", "integer_and_bool"])
def test_printed_outputs_match_eager(runner, export_pte, tmp_path, name):
    inputs, expected = eager(name)
    model, files = write_model_and_inputs(tmp_path, export_pte(name), inputs)
    result = run(
        runner,
        "--model_path",
        model,
        "--inputs",
        files,
        "--print_output",
        "--num_executions",
        3,
    )
    assert len(re.findall(r"^Run \d: [\d.]+ ms$", result.stdout, re.M)) == 3
    assert "Average over 3 runs" in result.stdout
    actual = parse_outputs(result.stdout)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)


def test_default_inputs_are_ones(runner, export_pte, tmp_path):
    model, _ = write_model_and_inputs(tmp_path, export_pte("add_with_parameter"), [])
    result = run(runner, f"--model_path={model}")
    assert "Input 1: Float[3] (ones)" in result.stdout
    (actual,) = parse_outputs(result.stdout)
    torch.testing.assert_close(actual, 3 + torch.arange(6.0).reshape(2, 3))


def test_bad_input_file_is_reported(runner, export_pte, tmp_path):
    model, _ = write_model_and_inputs(tmp_path, export_pte("add_with_parameter"), [])
    short = tmp_path / "short.bin"
    short.write_bytes(b"\0" * 12)
    result = run(
        runner, "--model_path", model, "--inputs", f"{short},{short}", expect_ok=False
    )
    expected = (
        f"input 0 (Float[2, 3]) from '{short}': expected 24 bytes, the file has 12"
    )
    assert expected in result.stderr
    result = run(runner, "--model_path", model, "--inputs", short, expect_ok=False)
    assert (
        "method 'forward' has 2 tensor inputs, --inputs gave 1 files" in result.stderr
    )


def test_missing_model_and_method_are_reported(runner, export_pte, tmp_path):
    result = run(runner, "--model_path", tmp_path / "missing.pte", expect_ok=False)
    assert "cannot open model" in result.stderr and "missing.pte" in result.stderr
    model, _ = write_model_and_inputs(tmp_path, export_pte("add_with_parameter"), [])
    result = run(
        runner, "--model_path", model, "--method_name", "backward", expect_ok=False
    )
    assert "has no method 'backward' (it has: forward)" in result.stderr


@pytest.mark.parametrize("model_name", ["cnn", "mlp"])
def test_example_models_with_default_inputs(runner, tmp_path, model_name):
    """The README's flow: the export script writes an example model, the
    runner runs it on ones, and its printed outputs match eager on ones."""
    from executorch.examples.models import get_model

    export = subprocess.run(
        [
            sys.executable,
            "-m",
            "executorch.examples.portable.scripts.export",
            "--model_name",
            model_name,
            "--output_dir",
            tmp_path,
        ],
        capture_output=True,
        text=True,
    )
    assert export.returncode == 0, export.stderr
    result = run(
        runner, "--model_path", tmp_path / f"{model_name}.pte", "--print_output"
    )
    model, example_inputs = get_model(model_name)
    with torch.no_grad():
        expected = model(*(torch.ones_like(t) for t in example_inputs))
    (actual,) = parse_outputs(result.stdout)
    torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-5)


def test_unplanned_inputs_and_outputs(runner, tmp_path):
    """The runner gives unplanned outputs buffers of their own and lends its
    input data to unplanned inputs."""
    pte = export_with_ours(
        "add_with_parameter", alloc_graph_input=False, alloc_graph_output=False
    )
    inputs, (expected,) = eager("add_with_parameter")
    model, files = write_model_and_inputs(tmp_path, pte, inputs)
    result = run(runner, "--model_path", model, "--inputs", files, "--print_output")
    (actual,) = parse_outputs(result.stdout)
    torch.testing.assert_close(actual, expected)


class _DynamicBatch(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, x, y):
        return self.linear(x).relu() + y.sum(0), torch.cat([x, x * 2])


def test_dynamic_model_runs_at_the_sizes_given(runner, tmp_path):
    from torch.export import Dim

    from executorch.exir import to_edge

    torch.manual_seed(0)
    model = _DynamicBatch().eval()
    ep = torch.export.export(
        model,
        (torch.randn(4, 4), torch.randn(2, 3)),
        dynamic_shapes={
            "x": {0: Dim("batch", min=1, max=16)},
            "y": {0: Dim("rows", min=1, max=5)},
        },
    )
    pte = to_edge(ep).to_executorch().buffer
    for batch, rows in ((1, 1), (16, 5), (7, 2)):
        inputs = (torch.randn(batch, 4), torch.randn(rows, 3))
        model_path, files = write_model_and_inputs(tmp_path, pte, inputs)
        result = run(
            runner,
            "--model_path",
            model_path,
            "--inputs",
            files,
            "--input_shapes",
            f"{batch},4;{rows},3",
            "--print_output",
        )
        with torch.no_grad():
            want = model(*inputs)
        got = parse_outputs(result.stdout)
        assert [g.shape for g in got] == [w.shape for w in want]
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w, rtol=1e-6, atol=1e-6)
    # Ones at a size given without files.
    ones = run(runner, "--model_path", model_path, "--input_shapes", "3,4;2,3")
    assert "Output 1: tensor Float[6, 4]" in ones.stdout
    # Above the bound: the error names the input, the size and the bound.
    over = run(
        runner,
        "--model_path",
        model_path,
        "--input_shapes",
        "17,4;2,3",
        expect_ok=False,
    )
    assert "input 0: size 17 at dim 0 is above its upper bound 16" in over.stderr
    wrong = run(
        runner, "--model_path", model_path, "--input_shapes", "3,4", expect_ok=False
    )
    assert "2 tensor inputs, --input_shapes gave 1 shapes" in wrong.stderr
    rank = run(
        runner,
        "--model_path",
        model_path,
        "--input_shapes",
        "3;2,3",
        expect_ok=False,
    )
    assert "input 0: --input_shapes gave 1 sizes, the input has rank 2" in rank.stderr
