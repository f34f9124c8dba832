#!/usr/bin/env python3
"""Latency of whole models four ways, in the same run, at 1 and 2 threads:

- eager PyTorch (`torch.set_num_threads(n)`);
- our runtime's default path: a `to_edge` program on the kernels the Python
  extension registers (optimized first, portable for the rest) with the
  process-wide thread pool set to n threads;
- our runtime with XNNPACK (`XnnpackPartitioner(num_threads=n)`), end to
  end through the Python extension (load once, then `forward`);
- upstream ExecuTorch with its XNNPACK delegate on the same nn.Module
  (exported here, saved with torch.export.save, lowered and run in the
  Python that EXECUTORCH_UPSTREAM_PYTHON names, in a subprocess since it
  has our import name), when that is set.

Each cell is the median latency in ms and its ratio to eager at the same
thread count; a cell stops after `--iterations` runs or `--budget` seconds,
whichever comes first (older builds' portable-only default path is slow on
the big models). Models:
mobilenet_v2, mobilenet_v3_small, resnet18 (1x3x224x224) and
transformer_encoder (64 tokens) from executorch.examples.models. A script,
not a test.

    EXECUTORCH_UPSTREAM_PYTHON=/work/main/.venv-upstream/bin/python \\
    .venv/bin/python -m executorch.backends.xnnpack.scripts.benchmark_xnnpack \\
        [--models resnet18 transformer_encoder] [--threads 1 2] [--iterations 20]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable, List, NamedTuple, Optional

import torch

from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
    XnnpackPartitioner,
)
from executorch.examples.models import get_model
from executorch.exir import to_edge, to_edge_transform_and_lower

MODELS = ["mobilenet_v2", "mobilenet_v3_small", "resnet18", "transformer_encoder"]


class Timing(NamedTuple):
    iterations: int  # timed runs per cell, at most
    budget: float  # seconds per cell, after which timing stops (3 runs min)


def median_ms(run: Callable[[], object], timing: Timing) -> float:
    """Median latency of `run` over the timed runs, after one warm-up."""
    run()
    times = []
    deadline = time.perf_counter() + timing.budget
    while len(times) < timing.iterations and (
        len(times) < 3 or time.perf_counter() < deadline
    ):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def eager_ms(model, inputs, threads: int, timing: Timing) -> float:
    torch.set_num_threads(threads)
    with torch.no_grad():
        return median_ms(lambda: model(*inputs), timing)


def _runtime():
    from executorch.extension.pybindings import portable_lib

    return portable_lib


def runtime_ms(pte: bytes, inputs, timing: Timing) -> float:
    module = _runtime()._load_for_executorch_from_buffer(pte)
    return median_ms(lambda: module.forward(list(inputs)), timing)


def default_ms(model, inputs, threads: int, timing: Timing):
    runtime = _runtime()
    # Builds without the optimized kernels' pool lack it (and run on one thread).
    if hasattr(runtime, "_unsafe_reset_threadpool"):
        runtime._unsafe_reset_threadpool(threads)
    pte = to_edge(torch.export.export(model, inputs)).to_executorch().buffer
    return runtime_ms(pte, inputs, timing), ""


def xnnpack_ms(model, inputs, threads: int, timing: Timing):
    if "XnnpackBackend" not in _runtime()._get_registered_backend_names():
        return None, "runtime built without XnnpackBackend"
    edge = to_edge_transform_and_lower(
        torch.export.export(model, inputs),
        partitioner=[XnnpackPartitioner(num_threads=threads)],
    )
    return runtime_ms(edge.to_executorch().buffer, inputs, timing), ""


# Runs in upstream's Python: lowers the saved program with upstream's
# partitioner, sets upstream's XNNPACK threadpool size and times forward
# the way median_ms does.
_UPSTREAM_SCRIPT = """
import statistics, sys, time, torch
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.extension.pybindings import portable_lib
ep = torch.export.load(sys.argv[1])
inputs = torch.load(sys.argv[2])
threads, iterations, budget = int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
pte = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]).to_executorch().buffer
portable_lib._unsafe_reset_threadpool(threads)
module = portable_lib._load_for_executorch_from_buffer(pte)
module.forward(inputs)
times = []
deadline = time.perf_counter() + budget
while len(times) < iterations and (len(times) < 3 or time.perf_counter() < deadline):
    start = time.perf_counter()
    module.forward(inputs)
    times.append((time.perf_counter() - start) * 1000)
print("UPSTREAM_MS", statistics.median(times))
"""


def upstream_ms(model, inputs, threads: int, timing: Timing):
    python = os.environ.get("EXECUTORCH_UPSTREAM_PYTHON")
    if not python:
        return None, "EXECUTORCH_UPSTREAM_PYTHON unset"
    with tempfile.TemporaryDirectory() as tmp:
        ep_path = os.path.join(tmp, "model.pt2")
        inputs_path = os.path.join(tmp, "inputs.pt")
        torch.export.save(torch.export.export(model, inputs), ep_path)
        torch.save(tuple(inputs), inputs_path)
        result = subprocess.run(
            [python, "-c", _UPSTREAM_SCRIPT, ep_path, inputs_path]
            + [str(threads), str(timing.iterations), str(timing.budget)],
            capture_output=True,
            text=True,
        )
    match = re.search(r"UPSTREAM_MS ([0-9.]+)", result.stdout)
    if match is None:
        lines = result.stderr.strip().splitlines() or ["no output"]
        return None, f"upstream failed: {lines[-1][:80]}"
    return float(match.group(1)), ""


COLUMNS = [
    ("ours default", default_ms),
    ("ours XNNPACK", xnnpack_ms),
    ("upstream XNNPACK", upstream_ms),
]


def cell(ms: Optional[float], note: str, eager: float) -> str:
    if ms is None:
        return f"n/a ({note})"
    return f"{ms:.2f} ms (x{ms / eager:.2f})"


def main(argv: List[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=MODELS)
    parser.add_argument("--threads", nargs="*", type=int, default=[1, 2])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument(
        "--budget", type=float, default=10.0, help="seconds per cell at most"
    )
    args = parser.parse_args(argv)
    timing = Timing(args.iterations, args.budget)
    # A markdown table, printed row by row as the cells are measured.
    print("| model | threads | eager | " + " | ".join(n for n, _ in COLUMNS) + " |")
    print("|---|---:|---:|" + "---:|" * len(COLUMNS))
    for name in args.models:
        model, inputs = get_model(name)
        for threads in args.threads:
            eager = eager_ms(model, inputs, threads, timing)
            cells = []
            for _, measure in COLUMNS:
                try:
                    ms, note = measure(model, inputs, threads, timing)
                except Exception as e:  # report and go on to the next cell
                    ms, note = None, f"{type(e).__name__}: {str(e)[:60]}"
                cells.append(cell(ms, note, eager))
            row = [name, str(threads), f"{eager:.2f} ms"] + cells
            print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
