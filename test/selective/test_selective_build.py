"""Selective build from a .pte, end to end: one build directory per session
(build/selective_test, reused across sessions) configured with
EXECUTORCH_SELECT_OPS_MODEL=<the CNN's .pte> and dtype-selective kernels,
fully statically linked, building only executor_runner. Its runner must run
the CNN like eager, and fail with the named-operator error on a model that
needs an operator it did not select."""

import os
import re
import subprocess
import sys

import pytest
import torch
import yaml
from executorch.examples.models import get_model
from executorch.examples.portable.scripts.export import export_to_pte
from executorch.exir import to_edge

OUTPUT_LINE = re.compile(r"^Output 0: tensor \w+\[([\d, ]*)\] = \[(.*)\]$")
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class SelectiveBuild:
    def __init__(self, directory, pte):
        self.directory = directory
        self.pte = pte
        self.runner = os.path.join(
            directory, "examples", "executor_runner", "executor_runner"
        )
        self.selected_yaml = os.path.join(
            directory,
            "kernels",
            "portable",
            "portable_ops_lib",
            "selected_operators.yaml",
        )

    def run(self, pte, *flags):
        return subprocess.run(
            [self.runner, "--model_path", pte, *flags],
            check=False,
            capture_output=True,
            text=True,
            timeout=120,
        )


@pytest.fixture(scope="session")
def selective_build(build_dir):
    directory = os.path.join(build_dir, "selective_test")
    os.makedirs(directory, exist_ok=True)
    pte = export_to_pte("cnn", directory, segment_alignment=128)
    subprocess.run(
        [
            "cmake", "-S", REPO_ROOT, "-B", directory,
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DPython3_EXECUTABLE={sys.executable}",
            "-DEXECUTORCH_BUILD_TESTS=OFF",
            "-DEXECUTORCH_BUILD_PYBIND=OFF",
            f"-DEXECUTORCH_SELECT_OPS_MODEL={pte}",
            "-DEXECUTORCH_DTYPE_SELECTIVE_BUILD=ON",
            # A portable-only model; Debian's XNNPACK has no static library.
            "-DEXECUTORCH_BUILD_XNNPACK=OFF",
            # A fully static executable: registration must survive it.
            "-DCMAKE_EXE_LINKER_FLAGS=-static",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    build = subprocess.run(
        ["cmake", "--build", directory, "-j2", "--target", "executor_runner"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    return SelectiveBuild(directory, pte)


def printed_output(stdout):
    for line in stdout.splitlines():
        match = OUTPUT_LINE.match(line.strip())
        if match:
            sizes, values = match.groups()
            shape = [int(s) for s in sizes.split(",") if s.strip()]
            return torch.tensor([float(v) for v in values.split(",")]).reshape(shape)
    raise AssertionError(f"no output printed:\n{stdout}")


def test_selected_operators_are_the_models_with_their_dtypes(selective_build):
    with open(selective_build.selected_yaml) as f:
        selected = yaml.safe_load(f)
    # to_executorch folded the batch norm into the convolution before it and
    # the linear weights' transposes into constants.
    assert set(selected["operators"]) == {
        "aten::addmm.out",
        "aten::avg_pool2d.out",
        "aten::convolution.out",
        "aten::max_pool2d_with_indices.out",
        "aten::relu.out",
    }
    # Float (6) everywhere; max_pool2d's indices are Long (4).
    assert selected["et_kernel_metadata"]["aten::relu.out"][0].startswith("v1/6;")
    assert (
        "|4;0,1,2,3"
        in selected["et_kernel_metadata"]["aten::max_pool2d_with_indices.out"][0]
    )
    header = os.path.join(
        os.path.dirname(selective_build.selected_yaml), "et_selected_dtypes.h"
    )
    with open(header) as f:
        dtypes = set(re.findall(r"ScalarType::(\w+):", f.read()))
    assert dtypes == {"Float", "Long"}


def test_statically_linked_selective_runner_runs_the_model_like_eager(selective_build):
    with open(selective_build.runner, "rb") as f:
        elf = f.read()
    assert b"/ld-linux" not in elf  # no dynamic loader: a static executable
    result = selective_build.run(selective_build.pte, "--print_output")
    assert result.returncode == 0, result.stderr + result.stdout
    model, example_inputs = get_model("cnn")
    with torch.no_grad():
        expected = model(*(torch.ones_like(t) for t in example_inputs))
    # float32; the runner prints 9 significant digits.
    torch.testing.assert_close(
        printed_output(result.stdout), expected, rtol=1e-4, atol=1e-5
    )


def test_unselected_operator_is_absent_and_named(selective_build, tmp_path):
    pte = export_to_pte("add_mul", str(tmp_path), segment_alignment=128)
    result = selective_build.run(pte)
    assert result.returncode != 0
    log = result.stderr + result.stdout
    assert "operator 'aten::mul.out' has no registered kernel" in log
    assert "To include 'aten::mul.out' in a selective build" in log
    assert "EXECUTORCH_SELECT_OPS_LIST" in log
    assert "OperatorMissing" in log


class IntRelu(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)


def test_dtype_compiled_out_fails_naming_operator_and_dtype(
    selective_build, build_dir, tmp_path
):
    # The build compiles the Float and Long branches (the union of what the
    # CNN's operators use): relu.out's Int branch is compiled out.
    program = to_edge(
        torch.export.export(IntRelu(), (torch.ones(4, dtype=torch.int32),))
    )
    pte = str(tmp_path / "int_relu.pte")
    program.to_executorch().save(pte)
    result = selective_build.run(pte)
    assert result.returncode != 0
    log = result.stderr + result.stdout
    assert (
        "relu.out: unsupported dtype Int (compiled out of this dtype-selective build"
        in log
    )
    # The full build has the branch.
    full_runner = os.path.join(
        build_dir, "examples", "executor_runner", "executor_runner"
    )
    full = subprocess.run(
        [full_runner, "--model_path", pte, "--print_output"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert full.returncode == 0, full.stderr
    assert "Output 0: tensor Int[4] = [1, 1, 1, 1]" in full.stdout
