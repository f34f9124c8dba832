"""The export-time kernel check: an operator the target runtime has no kernel
for fails `to_executorch` before any `.pte` exists, naming the operator and
the Python line that produced it."""

import os

import pytest
import torch

from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.exir.kernel_check import KernelLibrary, MissingKernelError

# A custom operator with an out variant but no C++ kernel anywhere.
_LIB = torch.library.Library("kernel_check_test", "DEF")
_LIB.define("scale(Tensor x, float factor) -> Tensor")
_LIB.define("scale.out(Tensor x, float factor, *, Tensor(a!) out) -> Tensor(a!)")


@torch.library.impl(_LIB, "scale", "CompositeExplicitAutograd")
def _scale(x, factor):
    return x * factor


@torch.library.impl(_LIB, "scale.out", "CompositeExplicitAutograd")
def _scale_out(x, factor, *, out):
    return out.copy_(x * factor)


class UsesCustomOp(torch.nn.Module):
    def forward(self, x):
        y = x + 1
        return torch.ops.kernel_check_test.scale(y, 2.0)  # the offending line


def _edge_program():
    x = torch.randn(2, 3)
    return to_edge(torch.export.export(UsesCustomOp(), (x,)))


def test_missing_kernel_names_operator_and_source_line(tmp_path):
    edge = _edge_program()
    with pytest.raises(MissingKernelError) as error:
        edge.to_executorch().save(str(tmp_path / "model.pte"))
    message = str(error.value)
    assert "kernel_check_test::scale.out" in message
    assert "method 'forward'" in message
    assert os.path.basename(__file__) in message
    assert "the offending line" in message
    # Operators that do have kernels are not reported.
    assert "aten::add" not in message
    assert not (tmp_path / "model.pte").exists()


def test_library_with_the_kernel_passes():
    library = KernelLibrary.portable() | KernelLibrary(["kernel_check_test::scale.out"])
    config = ExecutorchBackendConfig(kernel_library=library)
    assert _edge_program().to_executorch(config).buffer[4:8] == b"ET12"


def test_check_can_be_skipped():
    config = ExecutorchBackendConfig(kernel_library=None)
    assert _edge_program().to_executorch(config).buffer[4:8] == b"ET12"


def test_yaml_entries_in_both_formats(tmp_path):
    path = tmp_path / "custom_ops.yaml"
    path.write_text(
        "- op: add.out\n"
        "  kernels:\n"
        "    - arg_meta: null\n"
        "      kernel_name: torch::executor::add_out\n"
        "- func: my_ns::my_op.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)\n"
        "  kernels:\n"
        "    - arg_meta: null\n"
        "      kernel_name: my_ns::my_op_out\n"
    )
    library = KernelLibrary.from_yaml(str(path))
    assert library.operator_names == {"aten::add.out", "my_ns::my_op.out"}


def test_bad_yaml_entry_names_the_file(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("- kernels: []\n")
    with pytest.raises(ValueError, match="bad.yaml.*neither 'op' nor 'func'"):
        KernelLibrary.from_yaml(str(path))


def test_default_library_matches_the_runtime():
    """The YAML the check reads must describe what the runtime registers."""
    from executorch.extension.pybindings import portable_lib

    registered = set(portable_lib._get_operator_names())
    assert KernelLibrary.default().operator_names == registered
