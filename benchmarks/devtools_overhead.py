#!/usr/bin/env python3
"""What event tracing costs: MobileNetV2 (portable kernels, and delegated to
XNNPACK) run by executor_runner in three ways, interleaved round by round:

- `compiled out`: a runner built with EXECUTORCH_ENABLE_EVENT_TRACER=OFF (no
  hooks at all; built into build-notracer/ on first use);
- `tracing off`: the normal build, no EventTracer given (the hooks are a
  null check each): should match `compiled out` within noise;
- `profiling`: the normal build with --etdump_path (ETDumpGen timing every
  instruction, OPERATOR_CALL and native_call events, delegate calls).

Per-execution wall times come from the runner's own "Run i: x ms" lines
(the first run of each invocation is a warm-up and is dropped); the table
shows medians over all rounds and the ratio to `compiled out`, with the
load average next to it (wall times from a busy machine are noise). Beside
them, the CPU time (user + system, all threads) of each whole invocation
(load, warm-up and timed runs), which survives load far better: a
development signal, not the figure to publish. Outputs are checked against
eager PyTorch once. This is a script, not a test.

    .venv/bin/python benchmarks/devtools_overhead.py            # full
    .venv/bin/python benchmarks/devtools_overhead.py --quick    # smoke
"""

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile

import torch

from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
    XnnpackPartitioner,
)
from executorch.examples.models import get_model
from executorch.exir import to_edge, to_edge_transform_and_lower
from executorch.extension.progress import ProgressBar

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN_LINE = re.compile(r"^Run (\d+): ([\d.]+) ms$", re.M)
OUTPUT_LINE = re.compile(r"^Output 0: tensor Float\[[\d, ]*\] = \[(.*)\]$", re.M)


def runner_path(build_dir: str) -> str:
    return os.path.join(build_dir, "examples", "executor_runner", "executor_runner")


def build_without_tracer(build_dir: str) -> str:
    """executor_runner built with the event tracer hooks compiled out."""
    if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
        subprocess.run(
            [
                "cmake",
                "-S",
                REPO,
                "-B",
                build_dir,
                "-DCMAKE_BUILD_TYPE=Release",
                "-DEXECUTORCH_ENABLE_EVENT_TRACER=OFF",
                "-DEXECUTORCH_BUILD_TESTS=OFF",
                "-DEXECUTORCH_BUILD_PYBIND=OFF",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    print(f"building {build_dir} (tracer compiled out) ...", flush=True)
    subprocess.run(
        ["cmake", "--build", build_dir, "--target", "executor_runner", "-j2"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return runner_path(build_dir)


def export(directory: str):
    model, inputs = get_model("mobilenet_v2")
    # The runner feeds ones.
    inputs = tuple(torch.ones_like(x) for x in inputs)
    with torch.no_grad():
        expected = model(*inputs)
    exported = torch.export.export(model, inputs)
    programs = {
        "portable": to_edge(exported).to_executorch(),
        "xnnpack": to_edge_transform_and_lower(
            exported, partitioner=[XnnpackPartitioner()]
        ).to_executorch(),
    }
    paths = {}
    for name, program in programs.items():
        paths[name] = os.path.join(directory, f"mobilenet_v2_{name}.pte")
        program.save(paths[name])
    return paths, expected


def run(runner: str, pte: str, executions: int, etdump: str = None):
    flags = [
        "--model_path",
        pte,
        "--num_executions",
        str(executions + 1),
        "--print_output",
    ]
    if etdump:
        flags += ["--etdump_path", etdump]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run(
        [runner, *flags], capture_output=True, text=True, check=True
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    times = [
        float(ms)
        for run_index, ms in RUN_LINE.findall(result.stdout)
        if run_index != "1"
    ]
    output = OUTPUT_LINE.search(result.stdout)
    return times, cpu, output.group(1) if output else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument(
        "--executions", type=int, default=10, help="timed runs per invocation"
    )
    parser.add_argument(
        "--quick", action="store_true", help="2 rounds of 2 runs: a smoke test"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--build-dir", default=os.path.join(REPO, "build"))
    parser.add_argument(
        "--notracer-build-dir", default=os.path.join(REPO, "build-notracer")
    )
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.executions = 2, 2

    runners = {
        "compiled out": build_without_tracer(args.notracer_build_dir),
        "tracing off": runner_path(args.build_dir),
        "profiling": runner_path(args.build_dir),
    }
    with tempfile.TemporaryDirectory() as directory:
        paths, expected = export(directory)
        for name, pte in paths.items():
            _, _, printed = run(runners["tracing off"], pte, 1)
            values = torch.tensor([float(v) for v in printed.split(",")])
            torch.testing.assert_close(values, expected.flatten(), rtol=1e-3, atol=1e-3)

        times = {(m, c): [] for m in paths for c in runners}
        cpu_times = {(m, c): [] for m in paths for c in runners}
        configs = list(runners)
        bar = ProgressBar(args.rounds * len(paths) * len(configs), "rounds", args.quiet)
        for round_index in range(args.rounds):
            # Rotate the order so no configuration always runs first.
            order = configs[round_index % 3 :] + configs[: round_index % 3]
            for model, pte in paths.items():
                for config in order:
                    bar.begin(f"round {round_index + 1}: {model}, {config}")
                    etdump = (
                        os.path.join(directory, "run.etdp")
                        if config == "profiling"
                        else None
                    )
                    measured, cpu, _ = run(
                        runners[config], pte, args.executions, etdump
                    )
                    times[(model, config)] += measured
                    cpu_times[(model, config)].append(cpu)
                    bar.step()
        bar.close()

    load = os.getloadavg()
    print(
        f"\nMobileNetV2, executor_runner, {args.rounds} rounds x {args.executions} runs; "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
        f"({os.cpu_count()} CPUs)"
    )
    print(
        f"{'model':<10} {'configuration':<14} {'median ms':>10} {'vs compiled out':>16}"
        f" {'CPU s/invocation':>17} {'vs compiled out':>16}"
    )
    for model in paths:
        base = statistics.median(times[(model, "compiled out")])
        cpu_base = statistics.median(cpu_times[(model, "compiled out")])
        for config in configs:
            median = statistics.median(times[(model, config)])
            cpu = statistics.median(cpu_times[(model, config)])
            print(
                f"{model:<10} {config:<14} {median:>10.3f} {median / base:>15.3f}x"
                f" {cpu:>17.3f} {cpu / cpu_base:>15.3f}x"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
