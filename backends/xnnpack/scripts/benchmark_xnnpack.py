#!/usr/bin/env python3
"""Latency of whole models four ways, in the same run, at 1 and 2 threads:

- eager PyTorch (`torch.set_num_threads(n)`);
- our runtime with portable kernels only (through the Python extension);
- our runtime with XNNPACK (`XnnpackPartitioner(num_threads=n)`), through
  the Python extension when it registers XnnpackBackend; until then, a
  fully delegated model is timed with `xnnpack_run_blob --repeat` (the
  delegate alone, marked "blob");
- upstream ExecuTorch with its XNNPACK delegate on the same nn.Module
  (exported here, saved with torch.export.save and lowered in the Python
  that EXECUTORCH_UPSTREAM_PYTHON names), when that is set.

Each cell is the median latency in ms and its ratio to eager at the same
thread count. Models: mobilenet_v2, mobilenet_v3_small and resnet18 from
executorch.examples.models (skipped while not defined there) and a small
transformer encoder defined here. A script, not a test.

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
from typing import Callable, Dict, List, Optional, Tuple

import torch

from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
    XnnpackPartitioner,
)
from executorch.exir import to_edge, to_edge_transform_and_lower
from executorch.exir._serialize._flatbuffer import InstructionArguments

_ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")
RUN_BLOB = os.environ.get(
    "XNNPACK_RUN_BLOB",
    os.path.join(_ROOT, "build", "backends", "xnnpack", "xnnpack_run_blob"),
)


def transformer_encoder() -> Tuple[torch.nn.Module, tuple]:
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(128, 4, 256, batch_first=True, dropout=0.0)
    model = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    return model.eval(), (torch.randn(1, 64, 128),)


def model_factories() -> Dict[str, Callable[[], Tuple[torch.nn.Module, tuple]]]:
    from executorch.examples.models import MODELS, get_model

    factories = {"transformer_encoder": transformer_encoder}
    for name in ("mobilenet_v2", "mobilenet_v3_small", "resnet18"):
        if name in MODELS:
            factories[name] = lambda name=name: get_model(name)
    return factories


def median_ms(run: Callable[[], object], iterations: int) -> float:
    run()
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def eager_ms(model, inputs, threads: int, iterations: int) -> float:
    torch.set_num_threads(threads)
    with torch.no_grad():
        return median_ms(lambda: model(*inputs), iterations)


def _runtime():
    from executorch.extension.pybindings import portable_lib

    return portable_lib


def runtime_ms(pte: bytes, inputs, iterations: int) -> float:
    module = _runtime()._load_for_executorch_from_buffer(pte)
    return median_ms(lambda: module.forward(list(inputs)), iterations)


def portable_ms(model, inputs, threads: int, iterations: int):
    pte = to_edge(torch.export.export(model, inputs)).to_executorch().buffer
    return runtime_ms(pte, inputs, iterations), ""


def _only_one_delegate(manager) -> bool:
    (plan,) = manager.executorch_program.executionPlan
    kinds = [i.instrArgsType for i in plan.chains[0].instructions]
    return not plan.operators and kinds == [InstructionArguments.DelegateCall]


def xnnpack_ms(model, inputs, threads: int, iterations: int):
    edge = to_edge_transform_and_lower(
        torch.export.export(model, inputs),
        partitioner=[XnnpackPartitioner(num_threads=threads)],
    )
    manager = edge.to_executorch()
    if "XnnpackBackend" in _runtime()._get_registered_backend_names():
        return runtime_ms(manager.buffer, inputs, iterations), ""
    if not (_only_one_delegate(manager) and os.path.exists(RUN_BLOB)):
        return None, "runtime lacks XnnpackBackend"
    blob = bytes(manager.executorch_program.backendDelegateData[0].data)
    with tempfile.TemporaryDirectory() as tmp:
        paths = [os.path.join(tmp, "graph.xnb")]
        with open(paths[0], "wb") as f:
            f.write(blob)
        for i, x in enumerate(inputs):
            paths.append(os.path.join(tmp, f"in{i}.bin"))
            x.numpy().tofile(paths[-1])
        command = [RUN_BLOB, paths[0], os.path.join(tmp, "out")]
        command += ["--threads", str(threads), "--repeat", str(iterations + 1)]
        out = subprocess.run(
            command + paths[1:], check=True, capture_output=True, text=True
        ).stdout
    return float(re.search(r"latency: ([0-9.]+) ms", out).group(1)), "blob"


_UPSTREAM_SCRIPT = """
import statistics, sys, time, torch
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.extension.pybindings import portable_lib
ep = torch.export.load(sys.argv[1])
inputs = torch.load(sys.argv[2])
threads, iterations = int(sys.argv[3]), int(sys.argv[4])
pte = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]).to_executorch().buffer
portable_lib._unsafe_reset_threadpool(threads)
module = portable_lib._load_for_executorch_from_buffer(pte)
module.forward(inputs)
times = []
for _ in range(iterations):
    start = time.perf_counter()
    module.forward(inputs)
    times.append((time.perf_counter() - start) * 1000)
print("UPSTREAM_MS", statistics.median(times))
"""


def upstream_ms(model, inputs, threads: int, iterations: int):
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
            + [str(threads), str(iterations)],
            capture_output=True,
            text=True,
        )
    match = re.search(r"UPSTREAM_MS ([0-9.]+)", result.stdout)
    if match is None:
        lines = result.stderr.strip().splitlines() or ["no output"]
        return None, f"upstream failed: {lines[-1][:80]}"
    return float(match.group(1)), ""


COLUMNS = [
    ("ours portable", portable_ms),
    ("ours XNNPACK", xnnpack_ms),
    ("upstream XNNPACK", upstream_ms),
]


def cell(ms: Optional[float], note: str, eager: float) -> str:
    if ms is None:
        return f"n/a ({note})"
    return f"{ms:8.3f} ms x{ms / eager:5.2f}" + (f" [{note}]" if note else "")


def main(argv: List[str]) -> None:
    factories = model_factories()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--models",
        nargs="*",
        default=[
            "mobilenet_v2",
            "mobilenet_v3_small",
            "resnet18",
            "transformer_encoder",
        ],
    )
    parser.add_argument("--threads", nargs="*", type=int, default=[1, 2])
    parser.add_argument("--iterations", type=int, default=20)
    args = parser.parse_args(argv)
    print("model, threads: eager | " + " | ".join(name for name, _ in COLUMNS))
    for name in args.models:
        if name not in factories:
            print(f"{name}: not defined in executorch.examples.models yet")
            continue
        model, inputs = factories[name]()
        for threads in args.threads:
            eager = eager_ms(model, inputs, threads, args.iterations)
            cells = []
            for _, measure in COLUMNS:
                try:
                    ms, note = measure(model, inputs, threads, args.iterations)
                except Exception as e:  # report and go on to the next cell
                    ms, note = None, f"{type(e).__name__}: {str(e)[:60]}"
                cells.append(cell(ms, note, eager))
            print(f"{name}, {threads}: {eager:8.3f} ms | " + " | ".join(cells))


if __name__ == "__main__":
    main(sys.argv[1:])
