"""Portable kernels against PyTorch eager, through the whole pipeline.

Each case is a small module exported with our compiler, run on our runtime
(Python bindings over the portable kernels) and compared with eager on the
same inputs, through the staged harness (executorch.backends.test.harness)
and its tolerance table at "accumulating" precision: many cases are
reductions, products or convolutions. A new case is one entry in CASES.
"""

import pytest
import torch
from executorch.backends.test.harness import Tester
from executorch.backends.test.harness.tester import ACCUMULATING
from executorch.test.modules import Lambda

g = torch.Generator().manual_seed(0)


def r(*shape):
    return torch.randn(*shape, generator=g)


def ri(*shape, hi=5):
    return torch.randint(-hi, hi, shape, generator=g)


CASES = {
    "maximum": (lambda x, y: torch.maximum(x, y), (r(3, 4), r(4))),
    "minimum_int": (lambda x, y: torch.minimum(x, y), (ri(3, 4), ri(4))),
    "remainder": (lambda x, y: torch.remainder(x, y), (r(3, 4), r(4).abs() + 0.5)),
    "remainder_int": (lambda x: torch.remainder(x, 3), (ri(3, 4),)),
    "fmod": (lambda x: torch.fmod(x, -1.5), (r(3, 4),)),
    "atan2": (lambda x, y: torch.atan2(x, y), (r(3, 4), r(3, 4))),
    "bitwise": (lambda x, y: (x & y, x | 3, x ^ y, ~x), (ri(3, 4), ri(3, 4))),
    "pow_scalar": (lambda x: torch.pow(2.0, x), (r(5),)),
    "isnan_isinf": (
        lambda x: (torch.isnan(x / x), torch.isinf(1 / x)),
        (torch.tensor([0.0, 1.0, -2.0]),),
    ),
    "elu": (lambda x: torch.nn.functional.elu(x, 0.7), (r(3, 4),)),
    "full_like": (lambda x: torch.full_like(x, 3.5), (r(3, 4),)),
    "masked_fill": (lambda x: x.masked_fill(x > 0, -1.0), (r(3, 4),)),
    "argmax": (
        lambda x: (
            torch.argmax(x, 1),
            torch.argmin(x),
            torch.argmax(x, 0, keepdim=True),
        ),
        (r(3, 4),),
    ),
    "max_dim": (lambda x: tuple(torch.max(x, 1)), (r(3, 4),)),
    "min_dim": (lambda x: tuple(torch.min(x, 0, keepdim=True)), (r(3, 4),)),
    "any_all": (
        lambda x: (
            torch.any(x > 1),
            torch.all(x > -3, dim=1),
            torch.any(x > 0, dim=0, keepdim=True),
        ),
        (r(3, 4),),
    ),
    "prod": (lambda x: (torch.prod(x), torch.prod(x, 1)), (r(3, 4),)),
    "var_std": (
        lambda x: (
            torch.var(x, 1),
            torch.std(x, (0, 1), correction=0),
            torch.var(x, keepdim=True, dim=0),
        ),
        (r(3, 4),),
    ),
    "cumsum": (lambda x: (torch.cumsum(x, 1), torch.cumsum(x, 0)), (r(3, 4),)),
    "cumsum_int": (lambda x: torch.cumsum(x, 0), (ri(3, 4),)),
    "gather": (
        lambda x, i: torch.gather(x, 1, i),
        (r(3, 4), torch.tensor([[0, 3], [1, 1], [2, 0]])),
    ),
    "scatter": (
        lambda x, i, s: (
            torch.scatter(x, 1, i, s),
            torch.scatter(x, 0, i[:1] % 3, 2.0),
            torch.scatter_add(x, 1, i, s),
        ),
        (r(3, 4), torch.tensor([[0, 3], [1, 2], [2, 0]]), r(3, 2)),
    ),
    "select_slice_scatter": (
        lambda x, s, t: (
            torch.select_scatter(x, s, 0, 1),
            torch.slice_scatter(x, t, 1, 1, 3),
        ),
        (r(3, 4), r(4), r(3, 2)),
    ),
    "flip": (lambda x: torch.flip(x, [0, 2]), (r(2, 3, 4),)),
    "roll": (
        lambda x: (
            torch.roll(x, 1, 1),
            torch.roll(x, -2),
            torch.roll(x, (1, 2), (0, 1)),
        ),
        (r(3, 4),),
    ),
    "repeat": (lambda x: x.repeat(2, 1, 3), (r(3, 4),)),
    "stack": (lambda x, y: torch.stack([x, y], 1), (r(3, 4), r(3, 4))),
    "unbind": (lambda x: torch.unbind(x, 1), (r(3, 4),)),
    "pad": (
        lambda x: (
            torch.nn.functional.pad(x, (1, 2, 0, 1), value=0.5),
            torch.nn.functional.pad(x, (-1, 1)),
        ),
        (r(2, 3, 4),),
    ),
    "pixel_shuffle": (
        lambda x: torch.nn.functional.pixel_shuffle(x, 2),
        (r(1, 8, 2, 3),),
    ),
    "tril_triu": (lambda x: (torch.tril(x), torch.triu(x, 1)), (r(2, 3, 4),)),
    "arange": (lambda x: x + torch.arange(4), (r(3, 4),)),
    "arange_step": (lambda x: x + torch.arange(1, 8, 2.0), (r(3, 4),)),
    "exp_tanh_sigmoid": (
        lambda x: (
            torch.exp(x),
            torch.tanh(x),
            torch.sigmoid(x),
            torch.rsqrt(x.abs() + 1),
        ),
        (r(3, 4),),
    ),
    "gelu": (
        lambda x: (
            torch.nn.functional.gelu(x),
            torch.nn.functional.gelu(x, approximate="tanh"),
        ),
        (r(3, 4),),
    ),
    "hardtanh_relu6": (
        lambda x: (torch.nn.functional.hardtanh(x), torch.nn.functional.relu6(x)),
        (r(3, 4),),
    ),
    "amax_mean": (
        lambda x: (torch.amax(x, 1), x.mean((0, 2), keepdim=True), x.sum()),
        (r(2, 3, 4),),
    ),
    "index_select_emb": (
        lambda w, i: (torch.index_select(w, 0, i), torch.nn.functional.embedding(i, w)),
        (r(5, 3), torch.tensor([4, 0, 2])),
    ),
    "where_int": (lambda c, x: torch.where(c > 0, x, 7), (r(3, 4), ri(3, 4))),
    "clamp": (lambda x: torch.clamp(x, -0.5, 0.5), (r(3, 4),)),
    "div_modes": (
        lambda x, y: (
            torch.div(x, y, rounding_mode="floor"),
            torch.div(x, y, rounding_mode="trunc"),
            x // y,
        ),
        (ri(3, 4), ri(4).abs() + 1),
    ),
    "expand": (lambda x: x.expand(2, 3, 4), (r(3, 1),)),
    "half": (lambda x: (x * 2 + 1).to(torch.float32), (r(3, 4).half(),)),
    "bf16": (lambda x, y: x + y, (r(3, 4).bfloat16(), r(4).bfloat16())),
    "upsample_nearest": (
        lambda x: torch.nn.functional.interpolate(x, scale_factor=2, mode="nearest"),
        (r(1, 2, 3, 3),),
    ),
    "upsample_bilinear": (
        lambda x: torch.nn.functional.interpolate(
            x, size=(5, 4), mode="bilinear", align_corners=False
        ),
        (r(1, 2, 3, 3),),
    ),
    "adaptive_avg": (
        lambda x: torch.nn.functional.adaptive_avg_pool2d(x, (2, 3)),
        (r(1, 2, 5, 7),),
    ),
    "group_norm": (lambda x: torch.nn.functional.group_norm(x, 2), (r(2, 4, 3, 3),)),
    "topk": (lambda x: tuple(torch.topk(x, 2)), (r(3, 5),)),
    "sort": (lambda x: tuple(torch.sort(x, 1, descending=True)), (r(3, 5),)),
    "index": (lambda x, i: x[i], (r(5, 3), torch.tensor([4, 0, 2]))),
    "index2": (
        lambda x, i, j: x[:, i, j],
        (r(2, 5, 3), torch.tensor([4, 0, 2]), torch.tensor([1])),
    ),
    "index_put": (
        lambda x, i, v: torch.index_put(x, (i,), v),
        (r(5, 3), torch.tensor([4, 0]), r(2, 3)),
    ),
    "conv_transpose": (
        lambda x, w: torch.nn.functional.conv_transpose2d(
            x, w, stride=2, padding=1, output_padding=1
        ),
        (r(1, 2, 3, 3), r(2, 3, 3, 3)),
    ),
    "conv_transpose_groups": (
        lambda x, w, b: torch.nn.functional.conv_transpose2d(
            x, w, b, stride=(1, 2), padding=(0, 1), dilation=2, groups=2
        ),
        (r(2, 4, 3, 4), r(4, 3, 2, 3), r(6)),
    ),
    "conv_transpose1d": (
        lambda x, w: torch.nn.functional.conv_transpose1d(x, w, stride=3),
        (r(1, 2, 5), r(2, 3, 2)),
    ),
    "sort_asc_int": (
        lambda x: tuple(torch.sort(x, 0)),
        (torch.randperm(7, generator=g),),
    ),
    "topk_smallest": (
        lambda x: tuple(torch.topk(x, 3, dim=0, largest=False)),
        (r(6, 2),),
    ),
    "hardswish": (
        lambda x: (
            torch.nn.functional.hardswish(x),
            torch.nn.functional.hardsigmoid(x),
            torch.nn.functional.silu(x),
        ),
        (r(3, 4),),
    ),
    "layer_norm_no_affine": (
        lambda x: torch.nn.functional.layer_norm(x, (4,)),
        (r(3, 4),),
    ),
    "softplus_logit_celu": (
        lambda x: (
            torch.nn.functional.softplus(x, beta=2.0),
            torch.logit(x.sigmoid(), eps=1e-3),
            torch.nn.functional.celu(x, 0.5),
        ),
        (r(3, 4),),
    ),
    "clamp_tensor": (lambda x, lo: torch.clamp(x, min=lo), (r(3, 4), r(4))),
    "narrow_diagonal_unfold": (
        lambda x: (
            torch.narrow(x, 1, 1, 2),
            torch.diagonal(x, 1),
            torch.diagonal(x, -1, 0, 1),
            x.unfold(1, 2, 1),
        ),
        (r(3, 4),),
    ),
    "split_equal": (lambda x: torch.split(x, 3, dim=1), (r(2, 7),)),
    "reflection_pad": (
        lambda x: torch.nn.functional.pad(x, (1, 2, 2, 1), mode="reflect"),
        (r(1, 2, 3, 4),),
    ),
    "replication_pad": (
        lambda x: torch.nn.functional.pad(x, (2, 0, 1, 3), mode="replicate"),
        (r(1, 2, 3, 4),),
    ),
    "batch_norm_training_mode": (
        lambda x, w, b: torch.nn.functional.batch_norm(
            x, None, None, w, b, training=True
        ),
        (r(4, 3, 2), r(3), r(3)),
    ),
    "cdist_pdist": (
        lambda x, y: (torch.cdist(x, y), torch.cdist(x, y, p=1.0), torch.pdist(x[0])),
        (r(2, 4, 3), r(2, 5, 3)),
    ),
    "glu": (lambda x: torch.nn.functional.glu(x, 1), (r(3, 4, 2),)),
    "sum_mean_all": (lambda x, i: (x.sum(), x.mean(), i.sum()), (r(3, 4), ri(3))),
    "group_norm_affine": (
        lambda x, w, b: torch.nn.functional.group_norm(x, 3, w, b),
        (r(2, 6, 2, 2), r(6), r(6)),
    ),
    "shifts": (
        lambda x, y: (
            torch.bitwise_left_shift(x, y % 4),
            torch.bitwise_right_shift(x, 1),
        ),
        (ri(3, 4, hi=50), ri(3, 4).abs()),
    ),
    "div_scalar_mode_rsub": (
        lambda x: (
            torch.div(x, 3, rounding_mode="floor"),
            2.5 - x,
            torch.rsub(x, 1, alpha=2),
        ),
        (ri(3, 4, hi=20),),
    ),
    "ones_zeros_fill": (
        lambda x: (
            x + torch.ones(3, 4),
            x * torch.zeros(4),
            torch.fill(x, torch.tensor(2.0)),
        ),
        (r(3, 4),),
    ),
    "masked_select": (lambda x: torch.masked_select(x, x > 0), (r(3, 4),)),
    "var_mean_max_min": (
        lambda x: (
            *torch.var_mean(x, 1),
            x.max(),
            x.min(),
            torch.var(x, 0, unbiased=False),
        ),
        (r(3, 4),),
    ),
    "pixel_unshuffle": (
        lambda x: torch.nn.functional.pixel_unshuffle(x, 2),
        (r(1, 2, 4, 6),),
    ),
    "index_put_inplace": (
        lambda x, i, v: x.clone().index_put_((i,), v, accumulate=True),
        (r(5, 3), torch.tensor([4, 0, 4]), r(3, 3)),
    ),
    "grid_sampler": (
        lambda x, g: (
            torch.nn.functional.grid_sample(x, g, align_corners=False),
            torch.nn.functional.grid_sample(
                x, g, mode="nearest", padding_mode="border", align_corners=True
            ),
            torch.nn.functional.grid_sample(
                x, g, padding_mode="reflection", align_corners=False
            ),
            torch.nn.functional.grid_sample(
                x, g, padding_mode="reflection", align_corners=True
            ),
        ),
        (r(2, 3, 4, 5), torch.rand(2, 3, 6, 2, generator=g) * 3 - 1.5),
    ),
    "embedding_bag": (
        lambda w, i, o, p: (
            torch.nn.functional.embedding_bag(i, w, o, mode="sum"),
            torch.nn.functional.embedding_bag(i, w, o, mode="mean", padding_idx=4),
            torch.nn.functional.embedding_bag(i, w, o, mode="max"),
            torch.nn.functional.embedding_bag(
                i, w, o, mode="sum", per_sample_weights=p
            ),
        ),
        (
            r(10, 3),
            torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]),
            torch.tensor([0, 4, 4]),
            r(8),
        ),
    ),
    "pool3d": (
        lambda x: (
            torch.nn.functional.max_pool3d(x, 2, stride=(1, 2, 2), padding=1),
            torch.nn.functional.avg_pool3d(
                x, (2, 3, 3), stride=2, padding=1, ceil_mode=True
            ),
            torch.nn.functional.avg_pool3d(x, 2, count_include_pad=False, padding=1),
        ),
        (r(1, 2, 4, 5, 6),),
    ),
    "pool2d": (
        lambda x: (
            torch.nn.functional.max_pool2d(
                x, 3, stride=2, padding=1, dilation=1, ceil_mode=True
            ),
            torch.nn.functional.avg_pool2d(
                x, 3, stride=2, padding=1, divisor_override=4
            ),
        ),
        (r(2, 3, 7, 6),),
    ),
    # A window wider than the input: with ceil_mode it still has one output
    # (EfficientNet's pooler, AvgPool2d(hidden_dim, ceil_mode=True)).
    "pool2d_window_past_input": (
        lambda x: (
            torch.nn.functional.avg_pool2d(x, 5, ceil_mode=True),
            torch.nn.functional.avg_pool2d(x, (4, 1), padding=(1, 0), ceil_mode=True),
            torch.nn.functional.max_pool2d(x, 5, ceil_mode=True),
        ),
        (r(1, 3, 2, 3),),
    ),
    # A reshape of a channels-last tensor (YOLOS's interpolated position
    # embeddings): read in logical order.
    "view_of_channels_last": (
        lambda x: (
            x.contiguous(memory_format=torch.channels_last).view(2, 3, 20),
            x.contiguous(memory_format=torch.channels_last).flatten(1),
        ),
        (r(2, 3, 4, 5),),
    ),
    "scatter_reduce": (
        lambda x, i, s: (
            torch.scatter_reduce(x, 1, i, s, "sum"),
            torch.scatter_reduce(x, 1, i, s, "prod", include_self=False),
            torch.scatter_reduce(x, 1, i, s, "amax"),
            torch.scatter_reduce(x, 1, i, s, "amin", include_self=False),
            torch.scatter_reduce(x, 1, i, s, "mean"),
            torch.scatter_reduce(x, 1, i, s, "mean", include_self=False),
        ),
        (r(3, 4), torch.tensor([[0, 3, 0], [1, 1, 2], [2, 0, 2]]), r(3, 3)),
    ),
    "adaptive_avg3d": (
        lambda x: torch.nn.functional.adaptive_avg_pool3d(x, (2, 3, 2)),
        (r(1, 2, 5, 7, 3),),
    ),
    "fold": (
        lambda x: (
            torch.nn.functional.fold(x, (4, 5), (2, 3), padding=1, stride=(1, 2)),
            torch.nn.functional.fold(x[0], (4, 5), (2, 3), padding=1, stride=(1, 2)),
        ),
        (r(2, 12, 15),),
    ),
    "scatter_reduce_int_mean": (
        lambda x, i, s: torch.scatter_reduce(x, 1, i, s, "mean"),
        (
            ri(3, 4, hi=9),
            torch.tensor([[0, 3, 0], [1, 1, 2], [2, 0, 2]]),
            ri(3, 3, hi=9),
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_matches_eager(name):
    from executorch.exir import EdgeCompileConfig

    fn, inputs = CASES[name]
    # Operators outside Core ATen (masked_select, var_mean, ...) have
    # portable kernels too; the IR check would reject them before export.
    config = EdgeCompileConfig(_check_ir_validity=False)
    tester = Tester(Lambda(fn), inputs, compile_config=config)
    tester.export().to_edge().to_executorch().serialize()
    tester.run_method_and_compare_outputs(precision=ACCUMULATING)
