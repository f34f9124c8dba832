"""This machine's ceilings, for the benchmark scripts (imported from the
scripts' directory): the peak float32 FMA rate of one core, the rate at
which memory can be read, and the time a cache line takes between cores. A model's FLOPs over the first, or the bytes it
must read over the second, bound its latency from below: the scripts print
those bounds beside their timings so that a goal can be checked against
what the hardware allows."""

import os
import re
import subprocess
import time
from typing import Optional

import torch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("EXECUTORCH_BUILD_DIR", os.path.join(REPO, "build"))
GEMM_PEAK = os.path.join(BUILD, "kernels", "optimized", "optimized_gemm_peak")
ROUND_TRIP = os.path.join(BUILD, "extension", "threadpool", "core_round_trip")


def gemm_peak_report(*sizes: int) -> str:
    """optimized_gemm_peak's report (the peak FMA rate, then the GEMM's
    fraction of it at each size), or why it is missing."""
    if not os.path.exists(GEMM_PEAK):
        return f"(GEMM peak: {GEMM_PEAK} not built)"
    result = subprocess.run([GEMM_PEAK, *map(str, sizes)], capture_output=True, text=True)
    return result.stdout.strip() or result.stderr.strip()


def core_round_trip() -> str:
    """The time a cache line takes from one core to another and back (ns, as
    core_round_trip measures it), or "n/a": what a 2-thread job pays to share
    data. On a VM it moves with where the host puts the vCPUs (on the 2-core
    EPYC VM, ~52 ns or ~350 ns), and 2-thread latencies move with it."""
    if not os.path.exists(ROUND_TRIP):
        return "n/a"
    result = subprocess.run([ROUND_TRIP], capture_output=True, text=True)
    match = re.search(r"core round trip: ([0-9.]+) ns", result.stdout)
    return match.group(1) if match else "n/a"


def fma_peak_gflops() -> Optional[float]:
    """Peak float32 GFLOP/s of one core (clock x FMA pipes x lanes x 2, as
    optimized_gemm_peak measures it), or None when the tool is not built."""
    match = re.search(r"peak ([0-9.]+) GFLOP/s", gemm_peak_report(64))
    return float(match.group(1)) if match else None


def model_flops(program: torch.export.ExportedProgram, inputs: tuple) -> int:
    """FLOPs of one call of an exported program as torch counts them in its
    Core ATen form (matrix products and convolutions, attention decomposed
    into them; 2 per multiply-add; elementwise work is not counted, so the
    bound it gives is a lower one)."""
    from torch.utils.flop_counter import FlopCounterMode

    module = program.run_decompositions().module()
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        module(*inputs)
    return counter.get_total_flops()


def read_seconds(nbytes: int, threads: int) -> float:
    """Best of 10 sums over `nbytes` of float32 at `threads` threads: this
    machine's time to stream that much memory."""
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    x = torch.ones(nbytes // 4)
    times = []
    for _ in range(10):
        start = time.perf_counter()
        x.sum()
        times.append(time.perf_counter() - start)
    torch.set_num_threads(previous)
    return min(times)
