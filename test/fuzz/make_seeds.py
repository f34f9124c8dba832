"""Exports the small valid programs that seed the fuzzers and the mutation
script: a few model zoo models on portable kernels, control flow (cond and
while_loop), dynamic shapes, scalar inputs, constants in a segment, and
programs delegated to XNNPACK.

    .venv/bin/python test/fuzz/make_seeds.py [--out test/fuzz/corpus]

It writes corpus/program/*.pte, the delegates' blobs (corpus/xnnpack_blob/),
file heads (corpus/extended_header/) and files with a range to load
(corpus/data_loader/). The committed corpus was written by this script;
run it again after a change to the format or the emitter and commit the
result. The XNNPACK blobs are XnnpackPartitioner's delegates of small model
zoo models, with their constants in the blob. Each program is a few KB so that a fuzzer mutates the structure, not
megabytes of weights.
"""

import argparse
import pathlib
import struct

import torch
from torch.export import Dim

from executorch.examples.models import get_model
from executorch.exir import to_edge, to_edge_transform_and_lower

HERE = pathlib.Path(__file__).resolve().parent


class Cond(torch.nn.Module):
    def forward(self, x, y):
        return torch.cond(
            x.sum() > 0, lambda x, y: (x * y + 1,), lambda x, y: (x - y,), (x, y)
        )[0]


class Countdown(torch.nn.Module):
    """A while_loop: the runtime jumps back until the counter reaches 0."""

    def forward(self, n, x):
        return torch.while_loop(
            lambda n, x: n.sum() > 0, lambda n, x: (n - 1, x * 2), (n, x)
        )


class Scalars(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.arange(4.0))

    def forward(self, x, n: int, s: float):
        return x * n + s * self.w


class Gather(torch.nn.Module):
    """Integer indices, lists of tensors and views."""

    def forward(self, x, index):
        picked = torch.index_select(x, 0, index)
        return torch.cat([picked, x[:1]], dim=0).transpose(0, 1).contiguous()


class SmallConv(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 3, 3, padding=1)
        self.fc = torch.nn.Linear(3 * 4 * 4, 5)

    def forward(self, x):
        return self.fc(torch.flatten(torch.relu(self.conv(x)), 1)).softmax(-1)


def portable(model, inputs, dynamic_shapes=None):
    ep = torch.export.export(model, inputs, dynamic_shapes=dynamic_shapes)
    return to_edge(ep).to_executorch().buffer


def xnnpack_lowered(model, inputs):
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
        XnnpackPartitioner,
    )

    ep = torch.export.export(model, inputs)
    return to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])


def xnnpack(model, inputs):
    return xnnpack_lowered(model, inputs).to_executorch().buffer


def standalone_blobs(model, inputs):
    """Each XNNPACK delegate of `model` lowered again with its constants in
    the blob (XH00 header, XNNGraph flatbuffer, constant data): in a
    program they are in its named data, which a blob alone does not have."""
    from executorch.backends.xnnpack.lowering import lower_to_xnnpack
    from executorch.exir.lowered_backend_module import LoweredBackendModule

    program = xnnpack_lowered(model, inputs).exported_program()
    for module in program.graph_module.modules():
        if isinstance(module, LoweredBackendModule):
            yield lower_to_xnnpack(module.original_module)


def seeds():
    torch.manual_seed(0)
    for name in ("add", "add_mul", "linear", "softmax"):
        model, inputs = get_model(name)
        yield name, lambda m=model, i=inputs: portable(m, i)
    yield "small_conv", lambda: portable(SmallConv(), (torch.randn(1, 2, 4, 4),))
    yield "cond", lambda: portable(Cond(), (torch.randn(2, 3), torch.randn(2, 3)))
    yield "while_loop", lambda: portable(
        Countdown(), (torch.tensor([3]), torch.ones(2))
    )
    yield "scalars", lambda: portable(Scalars(), (torch.ones(4), 2, 0.5))
    yield "gather", lambda: portable(
        Gather(), (torch.randn(4, 3), torch.tensor([2, 0]))
    )
    yield "dynamic_linear", lambda: portable(
        torch.nn.Linear(6, 3),
        (torch.randn(4, 6),),
        dynamic_shapes=({0: Dim("batch", min=1, max=8)},),
    )
    yield "xnnpack_linear_relu", lambda: xnnpack(
        torch.nn.Sequential(torch.nn.Linear(6, 4), torch.nn.ReLU()),
        (torch.randn(2, 6),),
    )
    yield "xnnpack_small_conv", lambda: xnnpack(
        SmallConv(), (torch.randn(1, 2, 4, 4),)
    )


def blob_seeds():
    """Models of the zoo and of this file that XnnpackPartitioner delegates."""
    torch.manual_seed(0)
    for name in ("add", "add_mul", "linear", "mlp", "softmax"):
        yield name, get_model(name)
    yield "linear_relu", (
        torch.nn.Sequential(torch.nn.Linear(6, 4), torch.nn.ReLU()),
        (torch.randn(2, 6),),
    )
    yield "small_conv", (SmallConv(), (torch.randn(1, 2, 4, 4),))


# libFuzzer's -max_len in run_fuzzers.sh: a longer seed would be cut.
MAX_SEED_BYTES = 65536


def write(path: pathlib.Path, data: bytes):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    print(f"{path.relative_to(HERE)}: {len(data)} bytes")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=pathlib.Path, default=HERE / "corpus")
    args = parser.parse_args()
    programs = {}
    for name, export in seeds():
        programs[name] = export()
        write(args.out / "program" / f"{name}.pte", programs[name])
    for name, (model, inputs) in blob_seeds():
        for i, blob in enumerate(standalone_blobs(model, inputs)):
            if len(blob) <= MAX_SEED_BYTES:
                write(args.out / "xnnpack_blob" / f"{name}_{i}.xnb", blob)
            else:
                print(f"{name}_{i}: {len(blob)} bytes, too large for a seed")
    # The other targets see the head of a file, or a file and a range of it
    # (8-byte offset, 8-byte size, alignment exponent; see
    # fuzz_data_loader.cpp).
    for name in ("add", "linear", "xnnpack_linear_relu"):
        pte = programs[name]
        write(args.out / "extended_header" / f"{name}.bin", pte[:64])
        for offset, size in ((0, len(pte)), (len(pte) // 2, 64)):
            prefix = struct.pack("<QQB", offset, size, 4)
            write(args.out / "data_loader" / f"{name}_{offset}.bin", prefix + pte)


if __name__ == "__main__":
    main()
