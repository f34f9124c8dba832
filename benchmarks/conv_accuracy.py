#!/usr/bin/env python3
"""How far ResNet-18's output moves from eager's when our runtime runs its
3x3 convolutions on Winograd F(4x4, 3x3) (kernels/optimized/cpu/winograd.h).

The example ResNet-18 (trained-like initialisation), 1x3x224x224 N(0, 1)
inputs, through: our default path (optimized kernels, Winograd for the
3x3 stride-1 layers of layers 1-3), our XNNPACK delegate with its host
kernels (the same Winograd) and with EXECUTORCH_XNNPACK_HOST_KERNELS=0
(XNNPACK's GEMM convolutions). Each is compared with eager in float32 and
in float64: the largest absolute difference of the logits, and that over
the largest |logit| of the float64 reference. A measurement, not a test:

    .venv/bin/python benchmarks/conv_accuracy.py [--inputs 3]
"""

import argparse
import os

import torch

from executorch.examples.models import get_model
from executorch.exir import to_edge, to_edge_transform_and_lower
from executorch.extension.pybindings import portable_lib


def run(program: bytes, x: torch.Tensor) -> torch.Tensor:
    module = portable_lib._load_for_executorch_from_buffer(program)
    return module.forward([x])[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=3)
    args = parser.parse_args()
    torch.manual_seed(0)
    model, (example,) = get_model("resnet18")
    model.eval()
    ep = torch.export.export(model, (example,))
    default = to_edge(ep).to_executorch().buffer
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
        XnnpackPartitioner,
    )

    delegated = (
        to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])
        .to_executorch()
        .buffer
    )
    model64 = get_model("resnet18")[0].eval()
    model64.load_state_dict(model.state_dict())
    model64.double()
    print(
        "| path | vs eager fp32: max abs | vs eager fp64: max abs "
        "| vs fp64: max abs / max |logit| |"
    )
    print("|---|---:|---:|---:|")
    results = {}
    for _ in range(args.inputs):
        x = torch.randn(1, 3, 224, 224)
        with torch.no_grad():
            want32 = model(x)
            want64 = model64(x.double())
        scale = want64.abs().max().item()
        for name, program, host in (
            ("ours default (Winograd)", default, None),
            ("ours XNNPACK, host kernels (Winograd)", delegated, "1"),
            ("ours XNNPACK, EXECUTORCH_XNNPACK_HOST_KERNELS=0", delegated, "0"),
            ("eager fp32", None, None),
        ):
            if host is not None:
                os.environ["EXECUTORCH_XNNPACK_HOST_KERNELS"] = host
            got = want32 if program is None else run(program, x)
            os.environ.pop("EXECUTORCH_XNNPACK_HOST_KERNELS", None)
            e32 = (got - want32).abs().max().item()
            e64 = (got.double() - want64).abs().max().item()
            old = results.get(name, (0.0, 0.0, 0.0))
            results[name] = (max(old[0], e32), max(old[1], e64), max(old[2], e64 / scale))
    for name, (e32, e64, rel) in results.items():
        print(f"| {name} | {e32:.2e} | {e64:.2e} | {rel:.2e} |")


if __name__ == "__main__":
    main()
