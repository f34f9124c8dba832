"""executor_runner on the README's model: the outputs it prints match
PyTorch eager on the same inputs (all ones, the runner's default)."""

import os
import re
import subprocess

import pytest
import torch

from executorch.examples.models import get_model
from executorch.examples.portable.scripts.export import export_to_pte

OUTPUT_LINE = re.compile(r"^Output (\d+): tensor (\w+)\[([\d, ]*)\] = \[(.*)\]$")


def run_runner(build_dir, pte_path, *flags):
    runner = os.path.join(build_dir, "examples", "executor_runner", "executor_runner")
    result = subprocess.run(
        [runner, "--model_path", pte_path, *flags],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return result


def printed_outputs(stdout):
    outputs = {}
    for line in stdout.splitlines():
        match = OUTPUT_LINE.match(line.strip())
        if match:
            index, _dtype, sizes, values = match.groups()
            shape = [int(s) for s in sizes.split(",") if s.strip()]
            data = [float(v) for v in values.split(",") if v.strip()]
            outputs[int(index)] = torch.tensor(data).reshape(shape)
    return outputs


@pytest.mark.parametrize("model_name", ["cnn", "mlp"])
def test_runner_output_matches_eager(build_dir, tmp_path, model_name):
    pte = export_to_pte(model_name, str(tmp_path), segment_alignment=128)
    result = run_runner(build_dir, pte, "--num_executions", "2", "--print_output")
    assert result.returncode == 0, result.stderr + result.stdout
    assert "Run 2:" in result.stdout

    model, example_inputs = get_model(model_name)
    with torch.no_grad():
        expected = model(*(torch.ones_like(t) for t in example_inputs))
    outputs = printed_outputs(result.stdout)
    assert list(outputs) == [0]
    # The runner prints 9 significant digits; matrix products may sum in
    # another order than eager.
    torch.testing.assert_close(outputs[0], expected, rtol=1e-4, atol=1e-5)


def test_runner_reports_a_missing_file(build_dir, tmp_path):
    missing = str(tmp_path / "absent.pte")
    result = run_runner(build_dir, missing)
    assert result.returncode != 0
    assert "absent.pte" in result.stderr + result.stdout


def test_runner_reads_inputs_from_files(build_dir, tmp_path):
    pte = export_to_pte("add_mul", str(tmp_path), segment_alignment=128)
    model, example_inputs = get_model("add_mul")
    paths = []
    for index, tensor in enumerate(example_inputs):
        path = tmp_path / f"input{index}.bin"
        path.write_bytes(tensor.contiguous().numpy().tobytes())
        paths.append(str(path))
    result = run_runner(build_dir, pte, "--inputs", ",".join(paths), "--print_output")
    assert result.returncode == 0, result.stderr + result.stdout
    with torch.no_grad():
        expected = model(*example_inputs)
    torch.testing.assert_close(printed_outputs(result.stdout)[0], expected)


def test_runner_rejects_an_input_file_of_the_wrong_size(build_dir, tmp_path):
    pte = export_to_pte("add_mul", str(tmp_path), segment_alignment=128)
    short = tmp_path / "short.bin"
    short.write_bytes(b"\0" * 8)
    result = run_runner(build_dir, pte, "--inputs", f"{short},{short},{short}")
    assert result.returncode != 0
    assert "short.bin" in result.stderr + result.stdout
