#!/usr/bin/env python3
"""Times representative kernels: the optimized library against the portable
one and against eager PyTorch, and the GEMM against this CPU's peak.

Each kernel is exported as a one-op program (`torch.export` -> `to_edge` ->
`to_executorch`) and timed on the same inputs, in the same run:

- runtime: `executor_runner --num_executions N` times `Method::execute()`
  alone on the default kernels (optimized, portable for the rest); the
  median run is kept;
- optimized / portable: `run_method` through the Python bindings, in this
  process (optimized kernels first) and in a child process with
  EXECUTORCH_KERNELS=portable; both carry the same binding overhead (printed
  first, from a one-element add), so their ratio, the speed-up, is if
  anything understated for small kernels;
- eager: the same torch call (views made contiguous, since the runtime
  copies them), single-threaded (`torch.set_num_threads(1)`) and with the
  default thread count.

executor_runner uses the process-wide pool at its default size (one
thread per core); `--threads N` sets the pool of the binding runs. Before the table,
`optimized_gemm_peak` (kernels/optimized/tools/gemm_peak.cpp) prints the
GEMM's fraction of the peak float32 FMA rate at 1 thread, the peak computed
from the instruction set in use and the measured clock.

`--clock cpu` counts CPU time instead of wall-clock time (the process's,
all threads; executor_runner's by its resource usage, per execution): on a
machine shared with other work, preemption then does not count. On a quiet
machine the two agree at one thread.

Outputs are checked against eager first; a kernel that fails to lower or
run is listed with the reason instead of a time. A script, not a test:
nothing asserts on wall-clock time.

    .venv/bin/python benchmarks/kernel_benchmark.py [--only conv2d] [--budget 0.5] \
        [--threads 1] [--clock wall|cpu]
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from typing import Callable, List, Tuple

import torch
import torch.nn.functional as F
from machine_limits import gemm_peak_report

from executorch.exir import to_edge
from executorch.extension.pybindings.portable_lib import (
    _get_kernel_library,
    _load_for_executorch_from_buffer,
    _unsafe_reset_threadpool,
)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("EXECUTORCH_BUILD_DIR", os.path.join(REPO, "build"))
RUNNER = os.path.join(BUILD, "examples", "executor_runner", "executor_runner")


class Call(torch.nn.Module):
    """A module whose forward is `fn(*inputs)`."""

    def __init__(self, fn: Callable):
        super().__init__()
        self.fn = fn

    def forward(self, *inputs):
        return self.fn(*inputs)


def _long(high: int, *shape: int) -> torch.Tensor:
    return torch.randint(0, high, shape)


# (name, what the shapes mean, function, input factory)
KERNELS: List[Tuple[str, str, Callable, Callable[[], tuple]]] = [
    (
        "conv2d",
        "x 1x32x56x56, w 64x32x3x3, pad 1",
        lambda x, w, b: F.conv2d(x, w, b, padding=1),
        lambda: (
            torch.randn(1, 32, 56, 56),
            torch.randn(64, 32, 3, 3),
            torch.randn(64),
        ),
    ),
    (
        "conv2d 1x1",
        "x 1x32x56x56, w 192x32x1x1",
        lambda x, w: F.conv2d(x, w),
        lambda: (torch.randn(1, 32, 56, 56), torch.randn(192, 32, 1, 1)),
    ),
    (
        "conv2d 7x7 s2",
        "x 1x3x224x224, w 64x3x7x7, pad 3",
        lambda x, w: F.conv2d(x, w, stride=2, padding=3),
        lambda: (torch.randn(1, 3, 224, 224), torch.randn(64, 3, 7, 7)),
    ),
    (
        "conv2d deep",
        "x 1x256x14x14, w 256x256x3x3, pad 1",
        lambda x, w: F.conv2d(x, w, padding=1),
        lambda: (torch.randn(1, 256, 14, 14), torch.randn(256, 256, 3, 3)),
    ),
    (
        "mm",
        "256x512 @ 512x256",
        torch.mm,
        lambda: (torch.randn(256, 512), torch.randn(512, 256)),
    ),
    (
        "depthwise conv",
        "x 1x96x56x56, w 96x1x3x3, pad 1",
        lambda x, w: F.conv2d(x, w, padding=1, groups=96),
        lambda: (torch.randn(1, 96, 56, 56), torch.randn(96, 1, 3, 3)),
    ),
    (
        "depthwise s2",
        "x 1x144x56x56, w 144x1x3x3, s 2, pad 1",
        lambda x, w: F.conv2d(x, w, stride=2, padding=1, groups=144),
        lambda: (torch.randn(1, 144, 56, 56), torch.randn(144, 1, 3, 3)),
    ),
    (
        "linear",
        "197x192 @ (768x192)^T + bias",
        F.linear,
        lambda: (torch.randn(197, 192), torch.randn(768, 192), torch.randn(768)),
    ),
    (
        "bmm",
        "3 heads: 197x64 @ 64x197",
        torch.bmm,
        lambda: (torch.randn(3, 197, 64), torch.randn(3, 64, 197)),
    ),
    (
        "batch_norm",
        "1x96x56x56, inference",
        lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, training=False),
        lambda: (
            torch.randn(1, 96, 56, 56),
            torch.randn(96),
            torch.rand(96) + 0.5,
            torch.randn(96),
            torch.randn(96),
        ),
    ),
    (
        "transpose",
        "1000x1280 -> 1280x1000",
        lambda x: x.t(),
        lambda: (torch.randn(1000, 1280),),
    ),
    (
        "add (broadcast)",
        "8x64x56x56 + 64x1x1",
        torch.add,
        lambda: (torch.randn(8, 64, 56, 56), torch.randn(64, 1, 1)),
    ),
    (
        "softmax",
        "8x12x128x128, last dim",
        lambda x: torch.softmax(x, -1),
        lambda: (torch.randn(8, 12, 128, 128),),
    ),
    (
        "layer_norm",
        "16x128x768 over 768",
        lambda x, w, b: F.layer_norm(x, [768], w, b),
        lambda: (torch.randn(16, 128, 768), torch.randn(768), torch.randn(768)),
    ),
    (
        "mean",
        "16x128x768 over last dim",
        lambda x: x.mean(-1),
        lambda: (torch.randn(16, 128, 768),),
    ),
    (
        "cat",
        "3 x 16x128x256 on last dim",
        lambda a, b, c: torch.cat([a, b, c], -1),
        lambda: tuple(torch.randn(16, 128, 256) for _ in range(3)),
    ),
    (
        "permute",
        "16x128x12x64 -> 0,2,1,3",
        lambda x: x.permute(0, 2, 1, 3),
        lambda: (torch.randn(16, 128, 12, 64),),
    ),
    (
        "gelu",
        "8x128x3072",
        F.gelu,
        lambda: (torch.randn(8, 128, 3072),),
    ),
    (
        "max_pool2d",
        "4x64x112x112, k3 s2 p1",
        lambda x: F.max_pool2d(x, 3, 2, 1),
        lambda: (torch.randn(4, 64, 112, 112),),
    ),
    (
        "index_select",
        "50000x128 rows, 4096 indices",
        lambda x, i: torch.index_select(x, 0, i),
        lambda: (torch.randn(50000, 128), _long(50000, 4096)),
    ),
    (
        "gather",
        "1024x512, dim 1, 1024x128 indices",
        lambda x, i: torch.gather(x, 1, i),
        lambda: (torch.randn(1024, 512), _long(512, 1024, 128)),
    ),
    (
        "embedding",
        "32000x512 table, 16x128 tokens",
        lambda w, i: F.embedding(i, w),
        lambda: (torch.randn(32000, 512), _long(32000, 16, 128)),
    ),
]

OVERHEAD_PROBE = ("add 1 element", torch.add, lambda: (torch.ones(1), torch.ones(1)))


# What the timings count: wall-clock seconds, or the CPU seconds of this
# process (all its threads), which preemption on a shared machine does not
# inflate. Set by --clock.
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
_clock = CLOCKS["wall"]


def _per_call(fn: Callable[[], object], budget: float) -> float:
    """Median seconds per call of `fn` over repeated batches within about
    `budget` seconds (after one warm-up call), on the chosen clock."""
    fn()
    start = _clock()
    fn()
    single = max(_clock() - start, 1e-7)
    batch = max(1, int(budget / 5 / single))
    samples = []
    for _ in range(5):
        start = _clock()
        for _ in range(batch):
            fn()
        samples.append((_clock() - start) / batch)
    return statistics.median(samples)


def _runner_cpu_seconds(command: List[str], pin: bool) -> float:
    """CPU seconds (user + system) executor_runner spends on `command`,
    pinned to one core when `pin` (its pool then has one thread)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        command, capture_output=True, check=True,
        preexec_fn=(lambda: os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}))
        if pin else None,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _runtime_time(program: bytes, inputs: tuple, budget: float, single: float,
                  pin: bool = False) -> float:
    """Seconds of `Method::execute()` measured by executor_runner: the
    median run it reports (wall clock), or with --clock cpu its CPU time per
    execution (N + 1 executions minus one, so loading does not count)."""
    runs = max(5, min(2000, int(budget / max(single, 1e-6))))
    with tempfile.TemporaryDirectory(prefix="kernel_bench_") as tmp:
        model = os.path.join(tmp, "model.pte")
        with open(model, "wb") as f:
            f.write(program)
        files = []
        for k, tensor in enumerate(inputs):
            path = os.path.join(tmp, f"input{k}.bin")
            tensor.contiguous().numpy().tofile(path)
            files.append(path)
        command = [RUNNER, "--model_path", model]
        if files:
            command += ["--inputs", ",".join(files)]
        if _clock is CLOCKS["cpu"]:
            once = _runner_cpu_seconds(command + ["--num_executions", "1"], pin)
            many = _runner_cpu_seconds(
                command + ["--num_executions", str(runs + 1)], pin)
            return max(many - once, 0.0) / runs
        command += ["--num_executions", str(runs)]
        result = subprocess.run(command, capture_output=True, text=True, check=True)
    times = [
        float(line.split(":")[1].split()[0]) / 1e3
        for line in result.stdout.splitlines()
        if line.startswith("Run ")
    ]
    return statistics.median(times[1:] if len(times) > 1 else times)


# Times a program on the portable kernels alone: run in a child process,
# since the kernel library is chosen once, when the bindings are imported.
_PORTABLE_WORKER = """
import sys, torch
sys.path.insert(0, sys.argv[1])
import kernel_benchmark
from kernel_benchmark import _per_call
kernel_benchmark._clock = kernel_benchmark.CLOCKS[sys.argv[6]]
from executorch.extension.pybindings.portable_lib import (
    _get_kernel_library, _load_for_executorch_from_buffer, _unsafe_reset_threadpool)
assert _get_kernel_library() == "portable", _get_kernel_library()
threads = int(sys.argv[4])
if threads:
    _unsafe_reset_threadpool(threads)
program = open(sys.argv[2], "rb").read()
inputs = torch.load(sys.argv[3])
method = _load_for_executorch_from_buffer(program)
print(_per_call(lambda: method.run_method("forward", inputs), float(sys.argv[5])))
"""


def _portable_time(program: bytes, inputs: tuple, budget: float, threads: int) -> float:
    """Seconds per `run_method` call with EXECUTORCH_KERNELS=portable."""
    with tempfile.TemporaryDirectory(prefix="kernel_bench_") as tmp:
        path = os.path.join(tmp, "model.pte")
        with open(path, "wb") as f:
            f.write(program)
        torch.save(tuple(inputs), os.path.join(tmp, "inputs.pt"))
        result = subprocess.run(
            [sys.executable, "-c", _PORTABLE_WORKER, os.path.dirname(__file__), path,
             os.path.join(tmp, "inputs.pt"), str(threads), str(budget),
             "cpu" if _clock is CLOCKS["cpu"] else "wall"],
            capture_output=True, text=True, check=True, cwd=REPO,
            env={**os.environ, "EXECUTORCH_KERNELS": "portable"},
        )
    return float(result.stdout.strip().splitlines()[-1])


def _materialized(result: torch.Tensor) -> torch.Tensor:
    """`result` with its own contiguous storage: eager returns views (a
    permute) lazily, while the runtime writes every output element."""
    return result.contiguous()


def _lower(fn: Callable, inputs: tuple) -> bytes:
    exported = torch.export.export(Call(fn), inputs)
    return to_edge(exported).to_executorch().buffer


def _measure(fn: Callable, make_inputs: Callable, budget: float, threads: int,
             pool_threads: int = 0):
    """(runtime s, optimized bindings s, portable bindings s, eager 1-thread
    s, eager default s) or a reason string when the kernel cannot be
    lowered, run or matched."""
    torch.manual_seed(0)
    inputs = make_inputs()
    try:
        program = _lower(fn, inputs)
        method = _load_for_executorch_from_buffer(program)
        outputs = method.run_method("forward", inputs)
    except Exception as error:
        return f"{type(error).__name__}: {str(error).splitlines()[0][:150]}"
    expected = fn(*inputs)
    if not torch.allclose(outputs[0], expected, rtol=1e-4, atol=1e-4):
        return "output differs from eager"
    bindings = _per_call(lambda: method.run_method("forward", inputs), budget)
    runtime = _runtime_time(program, inputs, budget, bindings, pin=pool_threads == 1)
    try:
        portable = _portable_time(program, inputs, budget, pool_threads)
    except subprocess.CalledProcessError as error:
        return f"portable run failed: {error.stderr.strip().splitlines()[-1:]}"
    torch.set_num_threads(1)
    eager_single = _per_call(lambda: _materialized(fn(*inputs)), budget)
    torch.set_num_threads(threads)
    eager_default = _per_call(lambda: _materialized(fn(*inputs)), budget)
    return runtime, bindings, portable, eager_single, eager_default


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", help="kernels whose name has this")
    parser.add_argument(
        "--budget", type=float, default=0.5, help="seconds of timing per measurement"
    )
    parser.add_argument(
        "--clock", choices=sorted(CLOCKS), default="wall",
        help="wall: wall-clock time (a quiet machine); cpu: CPU time of the "
        "process, all threads (a shared machine; with --threads 1 "
        "executor_runner is pinned to one core so its pool has one thread)",
    )
    parser.add_argument(
        "--threads", type=int, default=0,
        help="threads of the pool in the binding runs (0: one per core)",
    )
    args = parser.parse_args()
    global _clock
    _clock = CLOCKS[args.clock]
    warnings.filterwarnings("ignore")
    if not os.path.exists(RUNNER):
        print(f"executor_runner not found at {RUNNER}; run scripts/setup.sh")
        return 1
    print(gemm_peak_report() + "\n")
    if args.threads:
        _unsafe_reset_threadpool(args.threads)
    threads = torch.get_num_threads()
    print(
        f"torch {torch.__version__}; eager default threads: {threads}; kernel "
        f"library: {_get_kernel_library()}; load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; times in µs "
        f"of {'CPU time' if args.clock == 'cpu' else 'wall-clock time'}"
    )

    probe = _measure(OVERHEAD_PROBE[1], OVERHEAD_PROBE[2], args.budget, threads, args.threads)
    if isinstance(probe, str):
        print(f"binding overhead probe failed: {probe}")
        return 1
    overhead = probe[1] - probe[0]
    print(
        f"binding overhead (run_method minus Method::execute on a one-element "
        f"add): {_us(overhead)} µs per call\n"
    )
    header = (
        f"{'kernel':<16} {'shapes':<36} {'runtime':>11} {'optimized':>11} "
        f"{'portable':>11} {'speed-up':>9} {'eager 1T':>11} "
        f"{'eager ' + str(threads) + 'T':>11} {'ratio 1T':>9} {'ratio ' + str(threads) + 'T':>9}"
    )
    print(header)
    print("-" * len(header))
    for name, shapes, fn, make_inputs in KERNELS:
        if args.only and not any(s in name for s in args.only):
            continue
        result = _measure(fn, make_inputs, args.budget, threads, args.threads)
        if isinstance(result, str):
            print(f"{name:<16} {shapes:<36} not run: {result}")
            continue
        runtime, bindings, portable, eager_single, eager_default = result
        print(
            f"{name:<16} {shapes:<36} {_us(runtime):>11} {_us(bindings):>11} "
            f"{_us(portable):>11} {portable / bindings:>9.2f} "
            f"{_us(eager_single):>11} {_us(eager_default):>11} "
            f"{runtime / eager_single:>9.2f} {runtime / eager_default:>9.2f}",
            flush=True,
        )
    print(
        "\nruntime: Method::execute() in executor_runner (default kernels; "
        "median run, or CPU time per execution with --clock cpu); optimized / portable: run_method from Python, including the "
        "overhead above; speed-up = portable / optimized; ratio = runtime / "
        "eager with that many threads (>1: ours is slower)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
