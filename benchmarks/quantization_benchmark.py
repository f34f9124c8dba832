#!/usr/bin/env python3
"""fp32 vs int8 latency, ours vs upstream ExecuTorch, in one run.

Models: MobileNetV2 and ResNet-18 (1x3x224x224; int8 = static, per-channel
weights, XNNPACKQuantizer + PT2E) and all-MiniLM-L6-v2 (8 sentences of 32
tokens; int8 = PT2E dynamic, per-channel weights). Each model is quantized
once, here; the same exported programs go to

- ours: `to_edge_transform_and_lower(..., XnnpackPartitioner(num_threads=n))`,
  run through our Python extension (what XNNPACK does not take runs on the
  portable and quantized kernels);
- upstream: upstream's `to_edge_transform_and_lower` with its
  XnnpackPartitioner, run by upstream's runtime in a worker process (the
  Python that EXECUTORCH_UPSTREAM_PYTHON names) with its threadpool at n.

Timing is interleaved: in each of `--rounds` rounds every system runs
`--iterations` times, in an order that rotates between rounds, so load from
other processes falls on all of them alike. Each cell is the median over
all rounds of wall-clock ms and of CPU ms (the process's CPU time over the
call, all threads). Ratios come from the same run: int8 / fp32 of ours and
ours int8 / upstream int8. Program sizes (MB, int8 / fp32) follow each
model's table. The load average is printed beside each row: figures taken
under load are not comparable across machines or runs.

    EXECUTORCH_UPSTREAM_PYTHON=/work/main/.venv-upstream/bin/python \\
        .venv/bin/python benchmarks/quantization_benchmark.py [--threads 1 2] \\
        [--models mobilenet_v2 resnet18 minilm] [--rounds 5] [--iterations 5]

The goal (#19): ours int8 / fp32 <= 0.6 and ours int8 / upstream int8 <= 1
in both columns. Our static int8 convolutions run on our AVX512-VNNI kernel
where the CPU has it (backends/xnnpack/README.md); run with
EXECUTORCH_XNNPACK_HOST_KERNELS=0 to time Debian XNNPACK's own int8 kernels
instead.

`--quick` checks that everything runs: small inputs, one round.
A script, not a test.
"""

import argparse
import os
import sys
import tempfile
import textwrap
from typing import Dict, List, Tuple

import torch
from timing import JsonWorker, measure, timed

MODELS = ["mobilenet_v2", "resnet18", "minilm"]

# Runs in upstream's Python: lowers one saved program, then times it on
# request. stdin: one JSON command per line ({"iterations": n}); stdout:
# one JSON line per command with the per-call wall and CPU ms. One process
# per program: upstream's runtime crashed (SIGSEGV) running MiniLM's fp32
# program in a process that had also loaded the int8 one.
_UPSTREAM_WORKER = textwrap.dedent("""
    import json, sys, time, torch
    import executorch.kernels.quantized  # noqa: F401
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower
    from executorch.extension.pybindings import portable_lib
    directory, name, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    inputs = torch.load(directory + "/inputs.pt")
    portable_lib._unsafe_reset_threadpool(threads)
    ep = torch.export.load(f"{directory}/{name}.pt2")
    pte = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]).to_executorch().buffer
    module = portable_lib._load_for_executorch_from_buffer(pte)
    module.forward(inputs)
    print(json.dumps({"ready": True, "bytes": len(pte)}), flush=True)
    for line in sys.stdin:
        iterations = json.loads(line)["iterations"]
        wall, cpu = [], []
        for _ in range(iterations):
            w, c = time.perf_counter(), time.process_time()
            module.forward(inputs)
            wall.append((time.perf_counter() - w) * 1e3)
            cpu.append((time.process_time() - c) * 1e3)
        print(json.dumps({"wall": wall, "cpu": cpu}), flush=True)
""")


def model_and_inputs(name: str, quick: bool):
    if name == "minilm":
        from executorch.examples.models.minilm import SENTENCES, load_minilm, tokenize

        sentences = SENTENCES[:2] if quick else SENTENCES
        return load_minilm(), tokenize(sentences)
    from executorch.examples.models import get_model

    model, _ = get_model(name)
    size = 64 if quick else 224
    return model, (torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(0)),)


def quantize(name: str, model, inputs) -> torch.fx.GraphModule:
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )

    config = get_symmetric_quantization_config(
        is_per_channel=True, is_dynamic=(name == "minilm")
    )
    prepared = prepare_pt2e(
        torch.export.export(model, inputs).module(), XNNPACKQuantizer().set_global(config)
    )
    prepared(*inputs)
    return convert_pt2e(prepared)


class Ours:
    def __init__(self, ep, inputs, threads: int):
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
            XnnpackPartitioner,
        )
        from executorch.exir import to_edge_transform_and_lower
        from executorch.extension.pybindings.portable_lib import (
            _load_for_executorch_from_buffer,
        )

        edge = to_edge_transform_and_lower(
            ep, partitioner=[XnnpackPartitioner(num_threads=threads)]
        )
        buffer = edge.to_executorch().buffer
        self.bytes = len(buffer)
        self.threads = threads
        self._use_threads()  # before loading: the delegate shares the pool then
        self.module = _load_for_executorch_from_buffer(buffer)
        self.inputs = list(inputs)
        self.module.forward(self.inputs)

    def _use_threads(self) -> None:
        # The kernels outside the delegate (the et_quantized linears) run
        # on the process-wide pool: give it the row's thread count, as the
        # upstream worker does with its own.
        from executorch.extension.pybindings import portable_lib

        if portable_lib._threadpool_get_thread_count() != self.threads:
            portable_lib._unsafe_reset_threadpool(self.threads)

    def run(self, iterations: int) -> Tuple[List[float], List[float]]:
        self._use_threads()
        return timed(lambda: self.module.forward(self.inputs), iterations)


class Upstream(JsonWorker):
    """Upstream's runtime in its own Python, one process per program."""

    def __init__(self, python: str, directory: str, threads: int, name: str):
        super().__init__(python, _UPSTREAM_WORKER, [directory, name, str(threads)])
        # The first reply: {"ready": true, "bytes": program size}.
        self.bytes = self.ready["bytes"]


def main(argv: List[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=MODELS)
    parser.add_argument("--threads", nargs="*", type=int, default=[1, 2])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="small inputs, one round")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.iterations = 1, 2
    upstream_python = os.environ.get("EXECUTORCH_UPSTREAM_PYTHON")
    print(f"# {os.cpu_count()} CPUs; quick={args.quick}; rounds={args.rounds} x "
          f"{args.iterations} calls per system; medians of wall ms (CPU ms)")
    print("| model | threads | ours fp32 | ours int8 | upstream fp32 | upstream int8 "
          "| ours int8/fp32 | ours int8 / upstream int8 | load avg |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for name in args.models:
        model, inputs = model_and_inputs(name, args.quick)
        programs = {
            "fp32": torch.export.export(model, inputs),
            "int8": torch.export.export(quantize(name, model, inputs), inputs),
        }
        with tempfile.TemporaryDirectory() as directory:
            for key, ep in programs.items():
                torch.export.save(ep, f"{directory}/{key}.pt2")
            torch.save(tuple(inputs), f"{directory}/inputs.pt")
            sizes = {}
            for threads in args.threads:
                systems = {f"ours {k}": Ours(ep, inputs, threads) for k, ep in programs.items()}
                if upstream_python:
                    for key in programs:
                        systems[f"upstream {key}"] = Upstream(
                            upstream_python, directory, threads, key
                        )
                wall, cpu = measure(systems, args.rounds, args.iterations, description=f"{name}, {threads} threads")
                sizes.update({key: system.bytes for key, system in systems.items()})
                for system in systems.values():
                    if isinstance(system, Upstream):
                        system.process.kill()

                def cell(key):
                    if key not in wall:
                        return "n/a (EXECUTORCH_UPSTREAM_PYTHON unset)"
                    return f"{wall[key]:.2f} ({cpu[key]:.2f})"

                def ratio(a, b):
                    if a not in wall or b not in wall:
                        return "n/a"
                    return f"{wall[a] / wall[b]:.2f} ({cpu[a] / cpu[b]:.2f})"

                load = " ".join(f"{x:.2f}" for x in os.getloadavg())
                print(
                    f"| {name} | {threads} | {cell('ours fp32')} | {cell('ours int8')} "
                    f"| {cell('upstream fp32')} | {cell('upstream int8')} "
                    f"| {ratio('ours int8', 'ours fp32')} "
                    f"| {ratio('ours int8', 'upstream int8')} | {load} |",
                    flush=True,
                )
        print(f"#   {name} program sizes: {_sizes(sizes)}", flush=True)


def _sizes(sizes: Dict[str, int]) -> str:
    """'ours 13.99 MB fp32, 3.73 MB int8 (0.27x); upstream ...'."""
    parts = []
    for system in ("ours", "upstream"):
        fp32, int8 = sizes.get(f"{system} fp32"), sizes.get(f"{system} int8")
        if fp32 and int8:
            parts.append(
                f"{system} {fp32 / 1e6:.2f} MB fp32, {int8 / 1e6:.2f} MB int8 "
                f"({int8 / fp32:.3f}x)"
            )
    return "; ".join(parts)


if __name__ == "__main__":
    main(sys.argv[1:])
