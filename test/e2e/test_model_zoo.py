"""A zoo of small, realistic models users bring: recurrent nets, transformer
pieces, vision blocks and index-heavy utilities. Each is exported with
torch.export, compiled by our exir (`to_edge(...).to_executorch()`), run by
our runtime and compared with eager through the staged harness
(executorch.backends.test.harness); a subset is also lowered through the
XNNPACK partitioner. Tolerances come from the harness's table: "pointwise"
precision, or "accumulating" for models dominated by convolutions and matrix
products, whose summation order differs from eager's; integer and bool
outputs are compared exactly.
Models with mutable buffers run twice, so the state the runtime keeps
between calls is checked too."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch._export.verifier import SpecViolationError
from torch.export import Dim

from executorch.backends.test.harness import Tester
from executorch.backends.test.harness.tester import ACCUMULATING, POINTWISE
from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
    XnnpackPartitioner,
)


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def randint(high, *shape, seed=0, dtype=torch.int64):
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(high, shape, generator=gen, dtype=dtype)


# Recurrent models.


class LSTMTagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 12, num_layers=2, batch_first=True, bidirectional=True)
        self.head = nn.Linear(24, 5)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return self.head(out).log_softmax(-1), h, c


class GRUTextClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 16, padding_idx=0)
        self.gru = nn.GRU(16, 24, batch_first=True)
        self.head = nn.Linear(24, 3)

    def forward(self, tokens):
        _, h = self.gru(self.embed(tokens))
        return self.head(h[-1])


class ElmanRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(6, 10, num_layers=2, nonlinearity="relu")

    def forward(self, x, h0):
        return self.rnn(x, h0)


# Transformer pieces.


class EncoderWithPadding(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(
            32, 4, dim_feedforward=64, dropout=0.0, batch_first=True
        )

    def forward(self, x, padding):
        return self.layer(x, src_key_padding_mask=padding)


class MaskedMultiheadAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(16, 2, batch_first=True)

    def forward(self, q, kv, padding, bias):
        out, weights = self.attn(q, kv, kv, key_padding_mask=padding, attn_mask=bias)
        return out, weights


class RotaryRMSNormAttention(nn.Module):
    """Llama-style: RMSNorm, rotary position embedding on q and k, causal
    scaled_dot_product_attention."""

    def __init__(self, dim=32, heads=4, max_len=16):
        super().__init__()
        self.heads = heads
        self.norm = nn.RMSNorm(dim, eps=1e-6)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)
        half = dim // heads // 2
        freqs = 1.0 / (10000 ** (torch.arange(half).float() / half))
        angles = torch.outer(torch.arange(max_len).float(), freqs)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def rotate(self, x):
        t = x.shape[2]
        x1, x2 = x.chunk(2, dim=-1)
        cos, sin = self.cos[:t], self.sin[:t]
        return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm(x)).split(d, dim=-1)
        q, k, v = (y.view(b, t, self.heads, -1).transpose(1, 2) for y in (q, k, v))
        y = F.scaled_dot_product_attention(
            self.rotate(q), self.rotate(k), v, is_causal=True
        )
        return x + self.out(y.transpose(1, 2).reshape(b, t, d))


class GPTBlock(nn.Module):
    """Pre-norm block with a causal mask built from triu and masked_fill."""

    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.ln2 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.mlp = nn.Sequential(
            nn.Linear(dim, 4 * dim),
            nn.GELU(approximate="tanh"),
            nn.Linear(4 * dim, dim),
        )

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        q, k, v = (y.view(b, t, self.heads, -1).transpose(1, 2) for y in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads)
        future = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        attn = scores.masked_fill(future, float("-inf")).softmax(-1)
        x = x + self.proj((attn @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x))


class KVCacheAttention(nn.Module):
    """One decoding step: writes k and v at `pos` into mutable caches
    (index_copy_ for k, index assignment for v) and attends over the cache
    with a mask from tril."""

    def __init__(self, dim=16, max_len=8):
        super().__init__()
        self.wq, self.wk, self.wv = (nn.Linear(dim, dim) for _ in range(3))
        self.register_buffer("k_cache", torch.zeros(1, max_len, dim))
        self.register_buffer("v_cache", torch.zeros(1, max_len, dim))
        self.register_buffer(
            "visible", torch.tril(torch.ones(max_len, max_len, dtype=torch.bool))
        )

    def forward(self, x, pos):
        self.k_cache.index_copy_(1, pos, self.wk(x))
        self.v_cache[:, pos] = self.wv(x)
        scores = self.wq(x) @ self.k_cache.transpose(1, 2)
        scores = scores.masked_fill(~self.visible[pos], float("-inf"))
        return scores.softmax(-1) @ self.v_cache


# Vision blocks.


class DepthwiseSeparable(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 16, 3, stride=2, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU6(),
            nn.Conv2d(16, 16, 3, padding=1, groups=16),
            nn.BatchNorm2d(16),
            nn.Hardswish(),
            nn.Conv2d(16, 24, 1),
        )

    def forward(self, x):
        return self.body(x)


class TinyUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.enc2 = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        self.up = nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.dec = nn.Sequential(nn.Conv2d(16, 8, 3, padding=1), nn.ReLU())
        self.head = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        skip = self.enc1(x)
        y = self.enc2(F.max_pool2d(skip, 2))
        y = self.dec(torch.cat([self.up(y), skip], dim=1))
        return self.head(y)


class SuperResolution(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 5, padding=2)
        self.conv2 = nn.Conv2d(16, 4, 3, padding=1)

    def forward(self, x):
        return F.pixel_shuffle(self.conv2(torch.tanh(self.conv1(x))), 2)


class NormalizationStack(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 8, 3)
        self.group = nn.GroupNorm(4, 8)
        self.instance = nn.InstanceNorm2d(8, affine=True)

    def forward(self, x):
        y = self.group(self.conv(x))
        return self.instance(F.silu(y))


class Resampler(nn.Module):
    def forward(self, x):
        return (
            F.interpolate(x, scale_factor=2, mode="nearest"),
            F.interpolate(x, size=(7, 9), mode="bilinear", align_corners=False),
            F.interpolate(x, size=(8, 8), mode="bilinear", align_corners=True),
            F.interpolate(x, scale_factor=1.5, mode="bicubic"),
        )


class AdaptivePoolHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3)

    def forward(self, x):
        y = self.conv(x)
        return F.adaptive_avg_pool2d(y, (3, 4)), F.adaptive_max_pool2d(y, 2)


class SpatialTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.loc = nn.Linear(2 * 6 * 6, 6)
        nn.init.zeros_(self.loc.weight)
        self.loc.bias.data = torch.tensor([0.9, 0.1, 0.05, -0.1, 1.1, -0.05])

    def forward(self, x):
        theta = self.loc(x.flatten(1)).view(-1, 2, 3)
        grid = F.affine_grid(theta, list(x.shape), align_corners=False)
        return F.grid_sample(x, grid, align_corners=False)


class SqueezeExcite(nn.Module):
    def __init__(self, channels=16, reduction=4):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.fc1 = nn.Conv2d(channels, channels // reduction, 1)
        self.fc2 = nn.Conv2d(channels // reduction, channels, 1)

    def forward(self, x):
        y = F.relu(self.conv(x))
        gate = torch.sigmoid(self.fc2(F.relu(self.fc1(y.mean((2, 3), keepdim=True)))))
        return y * gate


# Index-heavy and integer utilities.


class EinsumBilinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(randn(4, 6, 5, seed=1))

    def forward(self, x, y, a):
        return (
            torch.einsum("bi,kij,bj->bk", x, self.weight, y),
            torch.einsum("bhqd,bhkd->bhqk", a, a),
            torch.einsum("ii->i", a[0, 0, :3, :3]),
        )


class ScanOps(nn.Module):
    def forward(self, x, counts):
        return (
            torch.cumsum(x, dim=1),
            torch.cumsum(counts, dim=0),
            torch.cumsum(counts.to(torch.int32), dim=1),
            x.flip(1).cumsum(1).flip(1),
        )


class RankingOps(nn.Module):
    def forward(self, scores):
        values, indices = torch.topk(scores, 3, dim=-1)
        sorted_desc, order = torch.sort(scores, dim=0, descending=True)
        return values, indices, sorted_desc, order, torch.argsort(scores, dim=-1)


class GatherScatter(nn.Module):
    def forward(self, x, index, src):
        picked = torch.gather(x, 1, index)
        scattered = torch.zeros(3, 5).scatter_(1, index, src)
        summed = torch.zeros(3, 5).scatter_add(1, index, src)
        reduced = torch.ones(3, 5).scatter_reduce(
            1, index, src, reduce="amax", include_self=False
        )
        return picked, scattered, summed, reduced, x.index_select(1, index[:, 0])


class Featurizer(nn.Module):
    """Buckets a continuous feature and one-hot encodes it with a category."""

    def __init__(self):
        super().__init__()
        self.register_buffer("edges", torch.tensor([-1.0, -0.25, 0.0, 0.5, 1.5]))

    def forward(self, value, category):
        bucket = torch.bucketize(value, self.edges)
        return (
            F.one_hot(bucket, 6),
            F.one_hot(category, 4).float() * value.unsqueeze(-1),
            bucket,
        )


class IntegerArithmetic(nn.Module):
    def forward(self, a, b, x):
        mask = (a > 2) & ~(b == 0)
        return (
            torch.where(x > 0, x, 0.1),
            torch.where(mask, a, -1),
            torch.clamp(a, min=-3, max=5),
            torch.floor_divide(a, 3),
            torch.remainder(a, 4),
            torch.round(x * 3),
            mask,
            a.masked_fill(~mask, 7),
        )


class Int32Lookup(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(10, 4)

    def forward(self, ids):
        return self.table(ids), ids.to(torch.int64) * 2, ids + 1


class StructuredOutputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.box = nn.Linear(8, 4)
        self.cls = nn.Linear(8, 3)

    def forward(self, x):
        logits = self.cls(x)
        return {
            "boxes": self.box(x).sigmoid(),
            "scores": (logits.softmax(-1), logits.argmax(-1)),
            "summary": (x.sum(), x.amax() > 0, (x.mean(), logits.max())),
        }


class RunningStats(nn.Module):
    """Counts calls and keeps an exponential moving average in buffers."""

    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros((), dtype=torch.int64))
        self.register_buffer("ema", torch.zeros(4))

    def forward(self, x):
        self.calls.add_(1)
        self.ema.mul_(0.9).add_(x.mean(0), alpha=0.1)
        return x - self.ema, self.calls.clone()


class Case:
    def __init__(
        self,
        make,
        inputs,
        precision=POINTWISE,
        xnnpack=False,
        calls=1,
    ):
        self.make = make
        self.inputs = inputs
        self.precision = precision
        self.xnnpack = xnnpack
        self.calls = calls


def _seq_mask():
    padding = torch.zeros(2, 5, dtype=torch.bool)
    padding[1, 3:] = True
    return padding


CASES = {
    "lstm_tagger": Case(LSTMTagger, (randn(2, 5, 8),), ACCUMULATING),
    "gru_text_classifier": Case(GRUTextClassifier, (randint(50, 3, 7),), ACCUMULATING),
    "elman_rnn": Case(ElmanRNN, (randn(4, 2, 6), randn(2, 2, 10)), ACCUMULATING),
    "encoder_with_padding": Case(
        EncoderWithPadding, (randn(2, 5, 32), _seq_mask()), ACCUMULATING
    ),
    "masked_multihead_attention": Case(
        MaskedMultiheadAttention,
        (randn(2, 3, 16), randn(2, 5, 16, seed=1), _seq_mask(), randn(3, 5, seed=2)),
        ACCUMULATING,
    ),
    "rotary_rmsnorm_attention": Case(
        RotaryRMSNormAttention, (randn(2, 6, 32),), ACCUMULATING, xnnpack=True
    ),
    "gpt_block": Case(GPTBlock, (randn(2, 6, 32),), ACCUMULATING, xnnpack=True),
    "kv_cache_attention": Case(
        KVCacheAttention, (randn(1, 2, 16), torch.tensor([3, 4])), ACCUMULATING, calls=2
    ),
    "depthwise_separable": Case(
        DepthwiseSeparable, (randn(2, 3, 16, 16),), ACCUMULATING, xnnpack=True
    ),
    "tiny_unet": Case(TinyUNet, (randn(1, 3, 16, 16),), ACCUMULATING, xnnpack=True),
    "super_resolution": Case(
        SuperResolution, (randn(1, 1, 12, 12),), ACCUMULATING, xnnpack=True
    ),
    "normalization_stack": Case(NormalizationStack, (randn(2, 4, 9, 9),), ACCUMULATING),
    "resampler": Case(Resampler, (randn(1, 2, 5, 6),)),
    "adaptive_pool_head": Case(
        AdaptivePoolHead, (randn(1, 3, 11, 13),), ACCUMULATING, xnnpack=True
    ),
    "spatial_transformer": Case(SpatialTransformer, (randn(2, 2, 6, 6),)),
    "squeeze_excite_channels_last": Case(
        SqueezeExcite,
        (randn(2, 16, 8, 8).to(memory_format=torch.channels_last),),
        ACCUMULATING,
        xnnpack=True,
    ),
    # The whole model in channels-last (model.to(memory_format=...)): its
    # weights are emitted in that dim order, and XNNPACK reads and writes
    # such inputs and outputs through row-major copies.
    "squeeze_excite_all_channels_last": Case(
        lambda: SqueezeExcite().to(memory_format=torch.channels_last),
        (randn(2, 16, 8, 8).to(memory_format=torch.channels_last),),
        ACCUMULATING,
        xnnpack=True,
    ),
    "einsum_bilinear": Case(
        EinsumBilinear,
        (randn(3, 6), randn(3, 5, seed=1), randn(2, 2, 4, 3, seed=2)),
        ACCUMULATING,
    ),
    "scan_ops": Case(ScanOps, (randn(4, 6), randint(5, 4, 3))),
    "ranking_ops": Case(RankingOps, (randn(5, 7),)),
    "gather_scatter": Case(
        GatherScatter, (randn(3, 5), randint(5, 3, 2), randn(3, 2, seed=1))
    ),
    "featurizer": Case(Featurizer, (randn(6), randint(4, 6))),
    "integer_arithmetic": Case(
        IntegerArithmetic,
        (randint(10, 4, 5) - 5, randint(3, 4, 5, seed=1), randn(4, 5)),
    ),
    "int32_lookup": Case(Int32Lookup, (randint(10, 2, 3, dtype=torch.int32),)),
    "structured_outputs": Case(StructuredOutputs, (randn(3, 8),), ACCUMULATING),
    "running_stats": Case(RunningStats, (randn(5, 4),), calls=3),
}


# Exported with dynamic dimensions, run at several sizes within the bounds.
# (torch.export itself specializes a GRU's sequence length, and a cache
# written at a slice starting at a tensor's value is data dependent.)
DYNAMIC = {
    "gpt_block_batch_and_sequence": (
        GPTBlock,
        (randn(2, 6, 32),),
        ({0: Dim("batch", max=4), 1: Dim("seq", min=2, max=12)},),
        [(1, 2), (4, 12), (3, 5)],
        lambda b, t: (randn(b, t, 32, seed=b * t),),
    ),
    "lstm_tagger_batch": (
        LSTMTagger,
        (randn(2, 5, 8),),
        ({0: Dim("batch", max=6)},),
        [(1, 0), (6, 0), (4, 0)],
        lambda b, _: (randn(b, 5, 8, seed=b),),
    ),
    "depthwise_separable_batch": (
        DepthwiseSeparable,
        (randn(2, 3, 16, 16),),
        ({0: Dim("batch", max=8)},),
        [(1, 0), (8, 0), (5, 0)],
        lambda b, _: (randn(b, 3, 16, 16, seed=b),),
    ),
}


def _check(case, lower):
    """Exports case's model, lowers it with lower(tester) and compares each
    of case.calls runs with eager (state carried from call to call)."""
    torch.manual_seed(0)
    tester = Tester(case.make(), case.inputs).export()
    lower(tester)
    for _ in range(case.calls):
        tester.run_method_and_compare_outputs(precision=case.precision)


def _to_edge(tester):
    tester.to_edge()


def _to_xnnpack(tester):
    tester.to_edge_transform_and_lower([XnnpackPartitioner()])


@pytest.mark.parametrize("name", CASES)
def test_portable(name):
    _check(CASES[name], _to_edge)


@pytest.mark.parametrize("name", DYNAMIC)
def test_dynamic_shapes(name):
    make, example, dynamic_shapes, sizes, make_inputs = DYNAMIC[name]
    torch.manual_seed(0)
    tester = Tester(make(), example, dynamic_shapes=dynamic_shapes)
    for size in sizes:
        tester.run_method_and_compare_outputs(make_inputs(*size), ACCUMULATING)


class Cumprod(nn.Module):
    def forward(self, x):
        return x.cumprod(0)


def test_cumprod_is_reported_at_export_with_its_source_line():
    # aten::cumprod is not Core ATen, torch decomposes it into prims only,
    # and no portable kernel exists: to_edge must say so, and where.
    with pytest.raises(SpecViolationError, match="cumprod") as error:
        _check(Case(Cumprod, (randn(4, 3),)), _to_edge)
    assert "test_model_zoo.py" in str(error.value)


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c.xnnpack])
def test_xnnpack(name):
    _check(CASES[name], _to_xnnpack)
