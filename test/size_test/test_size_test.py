"""size_test (the runtime core with no kernels) loads and runs a program
that calls no operator, and refuses one that does, naming the error."""

import os
import subprocess

import torch
from executorch.exir import to_edge


class PassThrough(torch.nn.Module):
    """Outputs its inputs: a program with no kernel call."""

    def forward(self, x, y):
        return y, x


def size_test(build_dir, pte):
    binary = os.path.join(build_dir, "test", "size_test", "size_test")
    return subprocess.run(
        [binary, pte], check=False, capture_output=True, text=True, timeout=60
    )


def test_runs_a_program_without_operators(build_dir, tmp_path):
    inputs = (torch.randn(2, 3), torch.randn(5))
    pte = str(tmp_path / "pass_through.pte")
    to_edge(torch.export.export(PassThrough(), inputs)).to_executorch().save(pte)
    result = size_test(build_dir, pte)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = dict(
        line.split(": ", 1)
        for line in result.stdout.splitlines()
        if line.startswith(("input", "output"))
    )
    # Outputs are the inputs swapped, byte for byte.
    assert (
        lines["output 0"]
        == lines["input 1"]
        == "20 bytes, " + lines["input 1"].split(", ")[1]
    )
    assert lines["output 1"] == lines["input 0"]
    assert lines["input 0"].startswith("24 bytes")


class Add(torch.nn.Module):
    def forward(self, x):
        return x + 1


def test_a_program_with_operators_fails_to_load(build_dir, tmp_path):
    pte = str(tmp_path / "add.pte")
    to_edge(torch.export.export(Add(), (torch.ones(2),))).to_executorch().save(pte)
    result = size_test(build_dir, pte)
    assert result.returncode == 1
    assert "load_method failed" in result.stdout
    assert "operator 'aten::add.Scalar_out' has no registered kernel" in result.stderr
