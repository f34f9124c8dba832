"""What a user does with the installed wheel, run by scripts/test_wheel.sh
with the fresh environment's Python from a directory outside the checkout:
check that every package and console command is there, export a CNN, run it
through `executorch.runtime` and the pybindings (portable, and
XNNPACK-delegated when the wheel has the backend), run the shipped
`executor_runner` on it, and run examples/app (built against the wheel's
CMake package) on it. Every output is compared with eager PyTorch.

Usage: wheel_check.py SOURCE_CHECKOUT APP_BINARY
"""

import importlib.metadata
import os
import re
import subprocess
import sys
from pathlib import Path

import torch

import executorch
from executorch.exir import to_edge, to_edge_transform_and_lower
from executorch.extension.pybindings.portable_lib import (
    _get_registered_backend_names,
    _load_for_executorch,
)
from executorch.runtime import Runtime

# fp32 through different kernels (portable, optimized, XNNPACK) than eager's:
# reductions reassociate, so allow a few ulps of the output's scale.
RTOL, ATOL = 1e-4, 1e-4
RUNNER_OUTPUT = re.compile(r"^Output (\d+): tensor Float\[([\d, ]*)\] = \[(.*)\]$", re.M)


class SmallCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.pool = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn(self.conv(x))))
        return self.fc(torch.flatten(x, 1))


# Top-level directories of the checkout that the wheel leaves out on purpose
# (of test/, it ships only what executorch-op-sweep needs).
NOT_PACKAGED = {"test", "third-party", "docs", "benchmarks", "scripts", "cmake"}


def check_package_contents(package, source):
    """Every Python package, schema and kernel YAML of the checkout is in the
    installed package, with the C++ SDK (headers, CMake package, runner)."""
    missing = []
    for path in source.rglob("*"):
        rel = path.relative_to(source)
        top = rel.parts[0]
        if top in NOT_PACKAGED or top.startswith((".", "build")) or "__pycache__" in rel.parts:
            continue
        if path.name == "__init__.py" or path.suffix in (".fbs", ".yaml"):
            if not (package / rel).is_file():
                missing.append(str(rel))
    for rel in (
        "include/executorch/runtime/executor/program.h",
        "lib/cmake/executorch/executorchConfig.cmake",
        "bin/executor_runner",
        "_build_info.py",
    ):
        if not (package / rel).is_file():
            missing.append(rel)
    assert not missing, f"missing from the installed package: {missing}"
    print(f"[wheel] package contents: complete")


def check_console_commands():
    """Each command the wheel declares runs from the environment's bin/."""
    commands = importlib.metadata.distribution("executorch").entry_points
    names = [c.name for c in commands if c.group == "console_scripts"]
    for name in names:
        run_tool([name, "--help"])
    print(f"[wheel] console commands answer --help: {', '.join(sorted(names))}")


def check(name, got, want):
    torch.testing.assert_close(got, want, rtol=RTOL, atol=ATOL)
    print(f"[wheel] {name}: matches eager")


def export_programs(model, example):
    exported = torch.export.export(model, example)
    programs = {"portable": to_edge(exported).to_executorch().buffer}
    if "XnnpackBackend" in _get_registered_backend_names():
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
            XnnpackPartitioner,
        )

        lowered = to_edge_transform_and_lower(
            exported, partitioner=[XnnpackPartitioner()]
        )
        programs["xnnpack"] = lowered.to_executorch().buffer
    else:
        print("[wheel] the wheel has no XNNPACK backend: portable only")
    return programs


def run_tool(args):
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{args[0]} failed ({result.returncode}):\n{result.stderr}")
    return result.stdout


def main():
    package = Path(executorch.__file__).resolve().parent
    assert "site-packages" in package.parts, f"imported from {package}"
    source, app = Path(sys.argv[1]), sys.argv[2]
    check_package_contents(package, source)
    check_console_commands()
    torch.manual_seed(0)
    model = SmallCnn().eval()
    x = torch.ones(1, 3, 16, 16)
    want = model(x)

    for name, buffer in export_programs(model, (x,)).items():
        path = Path(f"cnn_{name}.pte")
        path.write_bytes(buffer)

        program = Runtime.get().load_program(buffer)
        check(f"{name}, executorch.runtime", program.load_method("forward").execute([x])[0], want)
        check(f"{name}, pybindings", _load_for_executorch(str(path)).forward([x])[0], want)

        # Inputs default to ones, which is what x is.
        printed = run_tool(["executor_runner", "--model_path", path, "--print_output"])
        (_, sizes, values), = RUNNER_OUTPUT.findall(printed)
        got = torch.tensor([float(v) for v in values.split(", ")])
        check(f"{name}, executor_runner", got.reshape(want.shape), want)

        out_prefix = Path(f"app_{name}_")
        input_file = Path("x.bin")
        input_file.write_bytes(x.numpy().tobytes())
        run_tool([app, path, "--input", input_file, "--output_prefix", out_prefix])
        got = torch.frombuffer(
            bytearray(Path(f"{out_prefix}0.bin").read_bytes()), dtype=torch.float32
        )
        check(f"{name}, examples/app", got.reshape(want.shape), want)
    print(f"[wheel] all checks passed (package at {package})")


if __name__ == "__main__":
    main()
