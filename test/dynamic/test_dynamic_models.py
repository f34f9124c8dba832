"""Models exported with dynamic dimensions, run by the C++ runtime
(portable_lib) at the smallest, the largest and in-between sizes of their
bounds, compared with eager. float32 tolerances: rtol 1e-5, atol 1e-5
(attention and convolution sum in a different order than ATen)."""

import math

import pytest
import torch
from torch.export import Dim

from executorch.exir import to_edge
from executorch.test.modules import MLP
from executorch.test.sizes import compare_at_sizes

portable_lib = pytest.importorskip("executorch.extension.pybindings.portable_lib")

TOL = dict(rtol=1e-5, atol=1e-5)


def _run_at_sizes(model, example, dynamic_shapes, make_inputs, sizes):
    torch.manual_seed(0)
    model = model.eval()
    ep = torch.export.export(model, example, dynamic_shapes=dynamic_shapes)
    module = portable_lib._load_for_executorch_from_buffer(
        to_edge(ep).to_executorch().buffer
    )
    compare_at_sizes(module, model, make_inputs, sizes, TOL)


def test_mlp_with_dynamic_batch():
    _run_at_sizes(
        MLP(),
        (torch.randn(4, 16),),
        {"x": {0: Dim("batch", min=1, max=32)}},
        lambda n: (torch.randn(n, 16),),
        [1, 32, 7],
    )


class CNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 4, 3, stride=2, padding=1)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv1(x)))
        y = torch.nn.functional.max_pool2d(y, 2, ceil_mode=False)
        y = self.conv2(y)
        return y, y.mean(dim=(2, 3))


def test_cnn_with_dynamic_height_and_width():
    # H and W are multiples of 4 so every pooling and stride stays exact.
    h = Dim("h4", min=2, max=16)
    w = Dim("w4", min=2, max=16)
    _run_at_sizes(
        CNN(),
        (torch.randn(1, 3, 32, 24),),
        {"x": {2: 4 * h, 3: 4 * w}},
        lambda hw: (torch.randn(1, 3, *hw),),
        [(8, 8), (64, 64), (20, 44), (64, 8)],
    )


class Block(torch.nn.Module):
    """Pre-norm attention with a causal mask and a padding mask, then an
    MLP, over a dynamic sequence length."""

    def __init__(self, dim=16, heads=2):
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.norm2 = torch.nn.LayerNorm(dim)
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(dim, 2 * dim),
            torch.nn.GELU(),
            torch.nn.Linear(2 * dim, dim),
        )

    def forward(self, x, keep):
        batch, seq, dim = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)

        def split(t):
            return t.reshape(batch, seq, self.heads, dim // self.heads).transpose(1, 2)

        q, k, v = split(q), split(k), split(v)
        scores = q @ k.transpose(-2, -1) / math.sqrt(dim // self.heads)
        positions = torch.arange(seq)
        causal = positions[None, :] <= positions[:, None]
        mask = causal[None, None] & keep[:, None, None, :]
        scores = scores.masked_fill(~mask, -1e9)
        attended = (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, seq, dim)
        x = x + self.proj(attended)
        return x + self.mlp(self.norm2(x))


def test_transformer_block_with_dynamic_sequence_length():
    seq = Dim("seq", min=2, max=24)

    def inputs(n):
        keep = torch.ones(2, n, dtype=torch.bool)
        keep[1, n // 2 + 1 :] = False  # padding at the end of the second row
        return (torch.randn(2, n, 16), keep)

    _run_at_sizes(
        Block(),
        inputs(6),
        {"x": {1: seq}, "keep": {1: seq}},
        inputs,
        [2, 24, 9],
    )


class Concat(torch.nn.Module):
    def forward(self, a, b):
        joined = torch.cat([a, b * 2], dim=0)
        return joined, torch.cat([joined, joined], dim=1)


def test_cat_of_dynamic_inputs():
    _run_at_sizes(
        Concat(),
        (torch.randn(3, 5), torch.randn(2, 5)),
        {"a": {0: Dim("n", min=1, max=10)}, "b": {0: Dim("m", min=1, max=6)}},
        lambda nm: (torch.randn(nm[0], 5), torch.randn(nm[1], 5)),
        [(1, 1), (10, 6), (4, 2), (1, 6)],
    )


class Reductions(torch.nn.Module):
    def forward(self, x):
        return (
            x.sum(dim=1),
            x.mean(dim=1, keepdim=True),
            x.amax(dim=1),
            x.argmin(dim=1),
            torch.logsumexp(x, dim=1),
            x.var(dim=1),
        )


def test_reductions_over_a_dynamic_dimension():
    _run_at_sizes(
        Reductions(),
        (torch.randn(3, 7),),
        {"x": {1: Dim("length", min=2, max=40)}},
        lambda n: (torch.randn(3, n),),
        [2, 40, 13],
    )


class Upsample(torch.nn.Module):
    """Its meta kernel reads sizes as ints: re-propagating fake tensors
    must not specialize the program to the example size."""

    def forward(self, x):
        y = torch.nn.functional.interpolate(x, scale_factor=2, mode="nearest")
        return y * 2 + 1


def test_upsample_with_dynamic_height():
    _run_at_sizes(
        Upsample(),
        (torch.randn(1, 2, 4, 5),),
        {"x": {2: Dim("h", min=1, max=12)}},
        lambda h: (torch.randn(1, 2, h, 5),),
        [1, 12, 4, 7],
    )
