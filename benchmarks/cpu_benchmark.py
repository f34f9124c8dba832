#!/usr/bin/env python3
"""CPU latency of whole models, every way we can run them, in one run.

Models: MobileNetV2 and ResNet-18 (1x3x224x224), ViT-tiny (d=192, 4 layers,
3 heads, patch 16, 224) and a BERT-style encoder of MiniLM-L6's shape (128
tokens, random weights). Systems, on the same inputs:

- eager: the PyTorch module, `torch.set_num_threads(n)`;
- ours portable: `to_edge` program on the portable kernels alone (a worker
  process with EXECUTORCH_KERNELS=portable);
- ours optimized: the same program on the default path (optimized kernels,
  portable for the rest), pool at n threads (`_unsafe_reset_threadpool`);
- ours XNNPACK: `to_edge_transform_and_lower` with XnnpackPartitioner;
- upstream XNNPACK: upstream ExecuTorch's lowering and runtime, in the
  Python that EXECUTORCH_UPSTREAM_PYTHON names;
- ONNX Runtime: the model exported to ONNX and run by onnxruntime with
  intra_op_num_threads=n, in the Python that EXECUTORCH_ORT_PYTHON names
  (`scripts/setup_ort.sh` makes that venv: torch==2.13.0, onnx, onnxscript
  and onnxruntime from PyPI; never our dependency).

Timing is interleaved: in each of `--rounds` rounds every system runs
`--iterations` times, in an order that rotates between rounds, so load from
other processes falls on all alike. Each cell is the median wall-clock ms
and, in parentheses, the median CPU ms of the process (all its threads).
Ratios are of the same run: ours optimized / eager, ours optimized / ours
XNNPACK, ours XNNPACK / ONNX Runtime (and / upstream). The load average is
printed with every row: figures taken under load are not comparable across
runs. So is the time a cache line takes between two cores, before / after
the row (`core_round_trip`, ns): on a VM it changes with where the host puts
the vCPUs, and 2-thread figures change with it (on the 2-core EPYC VM,
MobileNetV2 through our XNNPACK path took 3.3 ms at 2 threads with a 52 ns
round trip, 4.5 ms with 350 ns). The last column is the compute bound: the model's FLOPs (torch's
count of its matrix products and convolutions) at this CPU's peak float32
FMA rate (`optimized_gemm_peak`) on every thread; no system can be faster
than that with the same arithmetic. A script, not a test: nothing asserts
on time.

    EXECUTORCH_UPSTREAM_PYTHON=/work/main/.venv-upstream/bin/python \\
    EXECUTORCH_ORT_PYTHON=$(bash scripts/setup_ort.sh) \\
        .venv/bin/python benchmarks/cpu_benchmark.py [--threads 1 2] \\
        [--models mobilenet_v2 resnet18 vit_tiny minilm] [--rounds 5] \\
        [--iterations 5] [--skip "ours portable"]

`--quick` checks that everything runs: small inputs, one round of two calls.
"""

import argparse
import os
import sys
import tempfile
import textwrap
from typing import List, Tuple

import torch
from machine_limits import core_round_trip, fma_peak_gflops, model_flops
from timing import JsonWorker, measure, timed

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = ["mobilenet_v2", "resnet18", "vit_tiny", "minilm"]
SYSTEMS = [
    "eager",
    "ours portable",
    "ours optimized",
    "ours XNNPACK",
    "upstream XNNPACK",
    "ONNX Runtime",
]


class ViT(torch.nn.Module):
    """A ViT: patch embedding, class token, pre-norm encoder layers."""

    def __init__(self, size=224, patch=16, dim=192, layers=4, heads=3, classes=1000):
        super().__init__()
        self.embed = torch.nn.Conv2d(3, dim, patch, stride=patch)
        self.cls = torch.nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos = torch.nn.Parameter(torch.randn(1, (size // patch) ** 2 + 1, dim) * 0.02)
        layer = torch.nn.TransformerEncoderLayer(
            dim, heads, 4 * dim, dropout=0.0, activation="gelu", batch_first=True,
            norm_first=True,
        )
        self.encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = torch.nn.LayerNorm(dim)
        self.head = torch.nn.Linear(dim, classes)

    def forward(self, x):
        x = self.embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        return self.head(self.norm(self.encoder(x))[:, 0])


def model_and_inputs(name: str, quick: bool):
    generator = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    if name == "vit_tiny":
        size = 64 if quick else 224
        return ViT(size=size).eval(), (torch.randn(1, 3, size, size, generator=generator),)
    if name == "minilm":
        from executorch.examples.models.minilm import MiniLM

        tokens = 16 if quick else 128
        ids = torch.randint(1000, 20000, (1, tokens), generator=generator)
        return MiniLM().eval(), (ids, torch.ones(1, tokens, dtype=torch.long))
    from executorch.examples.models import get_model

    model, _ = get_model(name)
    size = 64 if quick else 224
    return model.eval(), (torch.randn(1, 3, size, size, generator=generator),)


class Eager:
    def __init__(self, model, inputs, threads: int):
        self.model, self.inputs, self.threads = model, inputs, threads

    def run(self, iterations: int):
        torch.set_num_threads(self.threads)
        with torch.no_grad():
            return timed(lambda: self.model(*self.inputs), iterations)


class Ours:
    """Our runtime in this process: default path or XNNPACK."""

    def __init__(self, ep, inputs, threads: int, xnnpack: bool):
        from executorch.extension.pybindings import portable_lib

        self.portable_lib, self.threads = portable_lib, threads
        program = _lower_ours(ep, threads, xnnpack)
        self.module = portable_lib._load_for_executorch_from_buffer(program)
        self.inputs = list(inputs)
        self.run(1)

    def run(self, iterations: int):
        self.portable_lib._unsafe_reset_threadpool(self.threads)
        return timed(lambda: self.module.forward(self.inputs), iterations)


def _lower_ours(ep, threads: int, xnnpack: bool) -> bytes:
    from executorch.exir import to_edge, to_edge_transform_and_lower

    if not xnnpack:
        return to_edge(ep).to_executorch().buffer
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

    partitioner = XnnpackPartitioner(num_threads=threads)
    return to_edge_transform_and_lower(ep, partitioner=[partitioner]).to_executorch().buffer


# A worker process: prepares one system from the saved program and inputs,
# then times it on request. stdin: one JSON command per line ({"iterations":
# n}); stdout: {"ready": true} once prepared, then one JSON line per command
# with the per-call wall and CPU ms.
_WORKER = textwrap.dedent("""
    import json, sys, time, torch
    kind, directory, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ep = torch.export.load(directory + "/program.pt2")
    inputs = torch.load(directory + "/inputs.pt")
    if kind == "ort":
        import onnxruntime
        path = directory + "/model.onnx"
        torch.onnx.export(ep.module(), inputs, path, dynamo=True)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        feed = {i.name: t.numpy() for i, t in zip(session.get_inputs(), inputs)}
        call = lambda: session.run(None, feed)
    else:
        from executorch.extension.pybindings import portable_lib
        from executorch.exir import to_edge, to_edge_transform_and_lower
        portable_lib._unsafe_reset_threadpool(threads)
        if kind == "upstream":
            from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
            edge = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])
        else:
            edge = to_edge(ep)
        # Upstream's bindings read the program from the buffer in place:
        # it must outlive the module (a temporary crashed its first call).
        buffer = edge.to_executorch().buffer
        module = portable_lib._load_for_executorch_from_buffer(buffer)
        call = lambda: module.forward(list(inputs))
    call()
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        wall, cpu = [], []
        for _ in range(json.loads(line)["iterations"]):
            w, c = time.perf_counter(), time.process_time()
            call()
            wall.append((time.perf_counter() - w) * 1e3)
            cpu.append((time.process_time() - c) * 1e3)
        print(json.dumps({"wall": wall, "cpu": cpu}), flush=True)
""")


def make_systems(model, inputs, ep, directory: str, threads: int, skip) -> Tuple[dict, dict]:
    """The systems that could be prepared, and why the others are missing."""
    makers = {
        "eager": lambda: Eager(model, inputs, threads),
        "ours portable": lambda: JsonWorker(
            sys.executable,
            _WORKER,
            ["portable", directory, str(threads)],
            cwd=REPO,
            env={"EXECUTORCH_KERNELS": "portable"},
        ),
        "ours optimized": lambda: Ours(ep, inputs, threads, xnnpack=False),
        "ours XNNPACK": lambda: Ours(ep, inputs, threads, xnnpack=True),
        "upstream XNNPACK": lambda: JsonWorker(
            os.environ["EXECUTORCH_UPSTREAM_PYTHON"], _WORKER, ["upstream", directory, str(threads)]
        ),
        "ONNX Runtime": lambda: JsonWorker(
            os.environ["EXECUTORCH_ORT_PYTHON"], _WORKER, ["ort", directory, str(threads)]
        ),
    }
    needs = {
        "upstream XNNPACK": "EXECUTORCH_UPSTREAM_PYTHON",
        "ONNX Runtime": "EXECUTORCH_ORT_PYTHON",
    }
    systems, missing = {}, {}
    for name, make in makers.items():
        if name in skip:
            missing[name] = "skipped"
        elif name in needs and not os.environ.get(needs[name]):
            missing[name] = f"{needs[name]} unset"
        else:
            try:
                systems[name] = make()
            except Exception as error:  # report and go on with the others
                missing[name] = f"failed: {str(error)[:120]}"
    return systems, missing


def main(argv: List[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=MODELS, choices=MODELS)
    parser.add_argument("--threads", nargs="*", type=int, default=[1, 2])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--skip", nargs="*", default=[], choices=SYSTEMS)
    parser.add_argument("--quick", action="store_true", help="small inputs, one round")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.iterations = 1, 2
    peak = fma_peak_gflops()
    print(
        f"# {os.cpu_count()} CPUs; quick={args.quick}; {args.rounds} rounds x "
        f"{args.iterations} calls per system; median wall ms (CPU ms); peak FMA rate "
        + (f"{peak:.1f} GFLOP/s per core" if peak else "unknown (optimized_gemm_peak not built)")
    )
    ratios = [
        ("optimized/eager", "ours optimized", "eager"),
        ("optimized/XNNPACK", "ours optimized", "ours XNNPACK"),
        ("portable/optimized", "ours portable", "ours optimized"),
        ("XNNPACK/ORT", "ours XNNPACK", "ONNX Runtime"),
        ("XNNPACK/upstream", "ours XNNPACK", "upstream XNNPACK"),
    ]
    print("| model | threads | " + " | ".join(SYSTEMS) + " | "
          + " | ".join(r[0] for r in ratios) + " | load avg | core round trip ns | compute bound |")
    print("|---|---:|" + "---:|" * (len(SYSTEMS) + len(ratios)) + "---|---:|---:|")
    for name in args.models:
        model, inputs = model_and_inputs(name, args.quick)
        with torch.no_grad():
            ep = torch.export.export(model, inputs)
        flops = model_flops(ep, inputs)
        with tempfile.TemporaryDirectory() as directory:
            torch.export.save(ep, f"{directory}/program.pt2")
            torch.save(tuple(inputs), f"{directory}/inputs.pt")
            for threads in args.threads:
                round_trip_before = core_round_trip()
                systems, missing = make_systems(model, inputs, ep, directory, threads, args.skip)
                wall, cpu = measure(systems, args.rounds, args.iterations, missing, f"{name}, {threads} threads")
                for system in systems.values():
                    if isinstance(system, JsonWorker):
                        system.close()
                cells = [
                    f"{wall[s]:.2f} ({cpu[s]:.2f})" if s in wall else f"n/a ({missing[s]})"
                    for s in SYSTEMS
                ]
                cells += [
                    f"{wall[a] / wall[b]:.2f} ({cpu[a] / cpu[b]:.2f})"
                    if a in wall and b in wall
                    else "n/a"
                    for _, a, b in ratios
                ]
                load = " ".join(f"{x:.2f}" for x in os.getloadavg())
                bound = (f"{flops / (peak * 1e9 * threads) * 1e3:.2f} ({flops / 1e9:.2f} GFLOP)"
                         if peak else "n/a")
                round_trip = f"{round_trip_before} / {core_round_trip()}"
                print(f"| {name} | {threads} | " + " | ".join(cells)
                      + f" | {load} | {round_trip} | {bound} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
