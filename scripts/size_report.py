"""Binary size report for size-optimized builds (EXECUTORCH_OPTIMIZE_SIZE:
-Os, no exceptions/RTTI, section garbage collection, stripped, no logging).

Builds, each in its own directory under <build>/size/:
  full/          size_test (runtime core + file loader, no kernels) and
                 executor_runner with every portable kernel;
  <model>-ops/   executor_runner with <model>'s operators, every dtype;
  <model>/       executor_runner selective for <model>'s .pte (operators
                 and dtypes), linked with a map file;
and prints the stripped sizes, the selective runner as a fraction of the
full one, and, from the selective runner's link map, the bytes each kernel,
the shared kernel utilities and the runtime core contribute.

    .venv/bin/python scripts/size_report.py [--model cnn]

Slow (three kernel builds): it is not part of the test suite.
"""

import argparse
import os
import re
import subprocess
import sys
from collections import defaultdict
from typing import Dict, Iterable, List, Tuple

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Upstream ExecuTorch's own figure for its core runtime, as an anchor.
UPSTREAM_CORE_BYTES = 50 * 1024


def configure_and_build(directory: str, targets: List[str], options: List[str]) -> None:
    subprocess.run(
        [
            "cmake", "-S", REPO_ROOT, "-B", directory,
            f"-DPython3_EXECUTABLE={sys.executable}",
            "-DEXECUTORCH_OPTIMIZE_SIZE=ON",
            # The runners measured here run portable programs only.
            "-DEXECUTORCH_BUILD_XNNPACK=OFF",
            *options,
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    for target in targets:
        print(f"[size_report] building {target} in {directory}", flush=True)
        subprocess.run(
            ["cmake", "--build", directory, "-j2", "--target", target],
            check=True,
            stdout=subprocess.DEVNULL,
        )


def export_model(model: str, directory: str) -> str:
    from executorch.examples.portable.scripts.export import export_to_pte

    os.makedirs(directory, exist_ok=True)
    return export_to_pte(model, directory, segment_alignment=128)


# One input section of a GNU ld map: name, then (possibly on the next line)
# address, size and the object it came from.
_SECTION = re.compile(r"^ (\.\S+)\s*$|^ (\.\S+)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+)")
_CONTINUATION = re.compile(r"^\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+)")


def map_sections(map_text: str) -> Iterable[Tuple[str, int, str]]:
    """(section name, size, object) of every input section the link kept."""
    kept = map_text.split("Linker script and memory map", 1)[-1]
    pending = None
    for line in kept.splitlines():
        if pending is not None:
            match = _CONTINUATION.match(line)
            if match:
                yield pending, int(match.group(1), 16), match.group(2)
            pending = None
            continue
        match = _SECTION.match(line)
        if not match:
            continue
        if match.group(1):
            pending = match.group(1)
        else:
            yield match.group(2), int(match.group(3), 16), match.group(4)


def demangle(names: List[str]) -> List[str]:
    result = subprocess.run(
        ["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True
    )
    return result.stdout.splitlines()


def kernel_functions(directory: str) -> List[str]:
    """Kernel functions the selective library registers, from its generated
    declarations ("add_out" for `Tensor& add_out(...)`)."""
    header = os.path.join(
        directory, "kernels", "portable", "portable_ops_lib", "NativeFunctions.h"
    )
    with open(header) as f:
        return re.findall(
            r"^\S.*?\b(\w+)\(KernelRuntimeContext& context", f.read(), re.MULTILINE
        )


def attribute(directory: str, map_path: str) -> Dict[str, int]:
    """Bytes of kept code and data by owner: each kernel, the shared kernel
    utilities, the runtime core, and everything else."""
    with open(map_path) as f:
        sections = [
            s
            for s in map_sections(f.read())
            if s[0].startswith((".text", ".rodata", ".data"))
        ]
    symbols = [
        name.split(".", 2)[-1] if name.count(".") >= 2 else ""
        for name, _, _ in sections
    ]
    demangled = demangle(symbols)
    kernels = kernel_functions(directory)
    owners: Dict[str, int] = defaultdict(int)
    for (name, size, obj), symbol in zip(sections, demangled):
        kernel = next((k for k in kernels if f"native::{k}(" in symbol), None)
        if kernel is None and "wrap_aten_" in symbol:
            kernel = "registration wrappers"
        if kernel is not None:
            owners[f"kernel {kernel}" if kernel in kernels else kernel] += size
        elif "libportable_ops_lib" in obj:
            owners["shared kernel utilities"] += size
        elif "libexecutorch_core" in obj:
            owners["runtime core"] += size
        else:
            owners["runner, data loader, libc++ templates"] += size
    return owners


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="cnn", help="model from examples/models")
    parser.add_argument("--build_dir", default=os.path.join(REPO_ROOT, "build", "size"))
    args = parser.parse_args()

    full_dir = os.path.join(args.build_dir, "full")
    model_dir = os.path.join(args.build_dir, args.model)
    pte = export_model(args.model, model_dir)
    configure_and_build(full_dir, ["size_test", "executor_runner"], [])
    ops_dir = model_dir + "-ops"
    configure_and_build(
        ops_dir, ["executor_runner"], [f"-DEXECUTORCH_SELECT_OPS_MODEL={pte}"]
    )
    runner_map = os.path.join(model_dir, "executor_runner.map")
    configure_and_build(
        model_dir,
        ["executor_runner"],
        [
            f"-DEXECUTORCH_SELECT_OPS_MODEL={pte}",
            "-DEXECUTORCH_DTYPE_SELECTIVE_BUILD=ON",
            f"-DCMAKE_EXE_LINKER_FLAGS=-Wl,-Map={runner_map}",
        ],
    )

    def size(directory: str, *path: str) -> int:
        return os.path.getsize(os.path.join(directory, *path))

    core = size(full_dir, "test", "size_test", "size_test")
    full = size(full_dir, "examples", "executor_runner", "executor_runner")
    ops_only = size(ops_dir, "examples", "executor_runner", "executor_runner")
    selective = size(model_dir, "examples", "executor_runner", "executor_runner")
    rows = [
        ("size_test (core, no kernels)", core, f"{core / UPSTREAM_CORE_BYTES:.2f}x upstream's ~50 KB core"),
        ("executor_runner, all portable kernels", full, ""),
        (f"executor_runner, {args.model} operators", ops_only, f"{ops_only / full:.3f}x the full runner"),
        (f"executor_runner, {args.model} operators + dtypes", selective, f"{selective / full:.3f}x the full runner"),
    ]  # fmt: skip
    print("\nStripped sizes (x86-64, EXECUTORCH_OPTIMIZE_SIZE):")
    for label, nbytes, ratio in rows:
        print(f"  {label:<44} {nbytes:>10,} B   {ratio}")
    print(f"\nKept code and data of the selective runner for {args.model} (link map):")
    owners = attribute(model_dir, runner_map)
    for owner, nbytes in sorted(owners.items(), key=lambda item: -item[1]):
        print(f"  {owner:<48} {nbytes:>9,} B")


if __name__ == "__main__":
    main()
