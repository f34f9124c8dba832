"""Partitioner hygiene: for pools and convolutions over a sweep of window
parameters (kernel, stride, padding, dilation, ceil_mode, groups), a program
is either delegated to XNNPACK, loads and matches eager, or keeps the op on
the portable kernels; never delegated and then refused by XNNPACK at load
(as a 1x1 average pool once was). Skipped unless the Python extension
registers XnnpackBackend.
"""

import itertools

import pytest
import torch

from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
    XnnpackPartitioner,
)
from executorch.exir import to_edge_transform_and_lower
from executorch.exir._serialize._program import deserialize_pte_binary
from executorch.extension.pybindings import portable_lib

pytestmark = pytest.mark.skipif(
    "XnnpackBackend" not in portable_lib._get_registered_backend_names(),
    reason="the Python extension was built without the XNNPACK backend",
)


class Op(torch.nn.Module):
    def __init__(self, op):
        super().__init__()
        self.op = op

    def forward(self, x):
        return self.op(x)


def _pools():
    # (kernel, stride, padding, ceil_mode): 1x1 windows (a copy, or refused
    # with a stride), padding, ceil_mode with and without a partial window.
    for kernel, stride, padding, ceil in [
        (1, 1, 0, False),
        (1, 2, 0, False),
        (2, 2, 0, False),
        (2, 2, 0, True),
        (3, 1, 1, False),
        (3, 2, 1, False),
        (3, 2, 0, True),
        (3, 2, 1, True),
    ]:
        suffix = f"k{kernel}s{stride}p{padding}c{int(ceil)}"
        yield f"avg_{suffix}", torch.nn.AvgPool2d(kernel, stride, padding, ceil)
        yield f"max_{suffix}", torch.nn.MaxPool2d(kernel, stride, padding, ceil_mode=ceil)
    yield "max_dilated", torch.nn.MaxPool2d(3, 1, 1, dilation=2)


def _convs():
    torch.manual_seed(0)
    for kernel, stride, padding, dilation, groups in [
        (1, 1, 0, 1, 1),
        (1, 2, 0, 1, 1),
        (3, 1, 1, 1, 1),
        (3, 2, 0, 1, 4),
        (3, 1, 2, 2, 1),
        (2, 3, 1, 1, 2),
    ]:
        name = f"conv_k{kernel}s{stride}p{padding}d{dilation}g{groups}"
        yield name, torch.nn.Conv2d(4, 8, kernel, stride, padding, dilation, groups)


CASES = dict(itertools.chain(_pools(), _convs()))


@pytest.mark.parametrize("name", sorted(CASES))
def test_delegated_programs_load_and_match_eager(name):
    model = Op(CASES[name]).eval()
    x = (torch.randn(1, 4, 7, 9),)
    program = to_edge_transform_and_lower(
        torch.export.export(model, x), partitioner=[XnnpackPartitioner()]
    ).to_executorch()
    (plan,) = deserialize_pte_binary(program.buffer).program.executionPlan
    module = portable_lib._load_for_executorch_from_buffer(program.buffer)
    (got,) = module.forward(x)
    with torch.no_grad():
        expected = model(*x)
    # fp32; XNNPACK sums convolution windows in another order.
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)
    # Not a vacuous sweep: most parameter sets are delegated.
    if name in ("avg_k1s1p0c0", "max_k3s2p1c0", "conv_k3s1p1d1g1"):
        assert len(plan.delegates) == 1
