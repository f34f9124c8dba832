"""Exports a module that calls the custom operator my_ops::scaled_tanh to a
.pte for custom_ops_runner (executor_runner with the custom kernel linked):

    python -m executorch.examples.custom_ops.export_custom_op --output_dir out
    build/examples/custom_ops/custom_ops_runner --model_path out/custom_op.pte

The export checks that the runtime has every kernel: the portable kernels
plus those in custom_ops.yaml.
"""

import argparse
import os

import torch
from executorch.examples.custom_ops.custom_ops import CUSTOM_OPS_YAML
from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.exir.kernel_check import KernelLibrary


class ScaledTanhModel(torch.nn.Module):
    """Portable operators around the custom one."""

    def forward(self, x):
        return torch.ops.my_ops.scaled_tanh(x * 2, 0.5) + 1


def example_inputs():
    return (torch.randn(2, 3, 4),)


def export_custom_op_program(path: str) -> None:
    exported = torch.export.export(ScaledTanhModel(), example_inputs())
    library = KernelLibrary.portable() | KernelLibrary.from_yaml(CUSTOM_OPS_YAML)
    program = to_edge(exported).to_executorch(
        ExecutorchBackendConfig(kernel_library=library)
    )
    program.save(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output_dir", default=".")
    args = parser.parse_args()
    os.makedirs(args.output_dir, exist_ok=True)
    path = os.path.join(args.output_dir, "custom_op.pte")
    export_custom_op_program(path)
    print(f"Saved {path}")


if __name__ == "__main__":
    main()
