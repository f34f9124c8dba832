"""The quick subset of the operator sweep that CI runs.

Each case exports one operator call as a one-op program, runs it on our
runtime and compares with eager PyTorch (test/ops/op_check.py: tolerances
per dtype). The cases cover elementwise arithmetic with broadcasting and
type promotion, reductions, convolution, pooling, matmul, views and copies,
indexing, cat/split, softmax, norms, comparisons, where, casts, 0-dim and
empty tensors, bool and int64. Inputs are written here (no OpInfo), so the
subset needs nothing beyond torch. The full sweep is `executorch-op-sweep` (op_sweep.py).
"""

import pytest
import torch

from executorch.test.ops.op_check import PASS, Sample, check

aten = torch.ops.aten


def _f32(*shape):
    return torch.randn(*shape)


def _i64(*shape, high=10):
    return torch.randint(-high, high, shape)


def _bool(*shape):
    return torch.rand(*shape) > 0.5


# (case id, operator, sample factory). Factories run under a fixed seed.
CASES = [
    (
        "add_broadcast_f32",
        aten.add.Tensor,
        lambda: Sample((_f32(2, 3, 4), _f32(3, 1)), {"alpha": 2}),
    ),
    (
        "add_promote_i32_f32",
        aten.add.Tensor,
        lambda: Sample((_i64(2, 3).int(), _f32(3))),
    ),
    ("mul_broadcast_i64", aten.mul.Tensor, lambda: Sample((_i64(2, 1, 4), _i64(3, 1)))),
    ("sub_0dim_f32", aten.sub.Tensor, lambda: Sample((_f32(3, 4), torch.tensor(1.5)))),
    (
        "div_int_to_float",
        aten.div.Tensor,
        lambda: Sample((_i64(3, 4), _i64(4, high=3) * 2 + 1)),
    ),
    (
        "div_floor_i64",
        aten.div.Tensor_mode,
        lambda: Sample(
            (_i64(3, 4), torch.tensor([3, -2, 5, 7])), {"rounding_mode": "floor"}
        ),
    ),
    ("add_scalar_f32", aten.add.Scalar, lambda: Sample((_f32(4, 5), 2.5))),
    ("add_empty_f32", aten.add.Tensor, lambda: Sample((_f32(0, 3), _f32(3)))),
    ("exp_0dim_f32", aten.exp.default, lambda: Sample((torch.tensor(0.7),))),
    ("abs_i64", aten.abs.default, lambda: Sample((_i64(5, 3),))),
    (
        "gelu_tanh_f32",
        aten.gelu.default,
        lambda: Sample((_f32(4, 8),), {"approximate": "tanh"}),
    ),
    ("clamp_f32", aten.clamp.default, lambda: Sample((_f32(4, 6), -0.5, 0.5))),
    ("pow_scalar_f32", aten.pow.Tensor_Scalar, lambda: Sample((_f32(3, 4).abs(), 1.5))),
    ("logical_not_bool", aten.logical_not.default, lambda: Sample((_bool(3, 4),))),
    (
        "logical_and_bool",
        aten.logical_and.default,
        lambda: Sample((_bool(3, 4), _bool(4))),
    ),
    ("sum_dim_f32", aten.sum.dim_IntList, lambda: Sample((_f32(3, 4, 5), [1], True))),
    ("sum_bool_to_i64", aten.sum.dim_IntList, lambda: Sample((_bool(3, 4), [0]))),
    ("mean_dims_f32", aten.mean.dim, lambda: Sample((_f32(3, 4, 5), [0, 2]))),
    ("amax_i64", aten.amax.default, lambda: Sample((_i64(3, 4), [1]))),
    (
        "conv2d_groups_f32",
        aten.convolution.default,
        lambda: Sample(
            (
                _f32(1, 4, 7, 7),
                _f32(6, 2, 3, 3),
                _f32(6),
                [2, 1],
                [1, 0],
                [1, 1],
                False,
                [0, 0],
                2,
            )
        ),
    ),
    (
        "max_pool2d_f32",
        aten.max_pool2d_with_indices.default,
        lambda: Sample((_f32(1, 3, 7, 7), [3, 3], [2, 2], [1, 1])),
    ),
    (
        "avg_pool2d_f32",
        aten.avg_pool2d.default,
        lambda: Sample((_f32(2, 3, 6, 6), [2, 2], [2, 2])),
    ),
    ("mm_f32", aten.mm.default, lambda: Sample((_f32(5, 7), _f32(7, 3)))),
    ("bmm_f32", aten.bmm.default, lambda: Sample((_f32(2, 5, 7), _f32(2, 7, 3)))),
    (
        "addmm_broadcast_bias_f32",
        aten.addmm.default,
        lambda: Sample((_f32(3), _f32(5, 7), _f32(7, 3)), {"beta": 0.5, "alpha": 2.0}),
    ),
    ("view_f32", aten.view.default, lambda: Sample((_f32(2, 3, 4), [6, 4]))),
    ("permute_i64", aten.permute.default, lambda: Sample((_i64(2, 3, 4), [2, 0, 1]))),
    ("expand_bool", aten.expand.default, lambda: Sample((_bool(3, 1), [2, 3, 4]))),
    ("slice_step_f32", aten.slice.Tensor, lambda: Sample((_f32(4, 9), 1, 1, 8, 3))),
    ("select_neg_f32", aten.select.int, lambda: Sample((_f32(3, 4, 5), 1, -1))),
    (
        "cast_f32_to_i32",
        aten._to_copy.default,
        lambda: Sample((_f32(3, 4) * 10,), {"dtype": torch.int32}),
    ),
    (
        "cast_bool_to_f32",
        aten._to_copy.default,
        lambda: Sample((_bool(3, 4),), {"dtype": torch.float32}),
    ),
    (
        "index_select_f32",
        aten.index_select.default,
        lambda: Sample((_f32(5, 4), 0, torch.tensor([4, 0, 2, 2]))),
    ),
    (
        "gather_f32",
        aten.gather.default,
        lambda: Sample((_f32(4, 6), 1, torch.randint(0, 6, (4, 3)))),
    ),
    (
        "index_tensor_broadcast_f32",
        aten.index.Tensor,
        lambda: Sample(
            (_f32(5, 6, 7), [torch.tensor([[0], [4]]), None, torch.tensor([1, 6, 2])])
        ),
    ),
    (
        "embedding_f32",
        aten.embedding.default,
        lambda: Sample((_f32(10, 4), torch.tensor([[1, 3], [9, 0]]))),
    ),
    (
        "cat_with_empty_f32",
        aten.cat.default,
        lambda: Sample(([_f32(2, 3), _f32(2, 0), _f32(2, 2)], 1)),
    ),
    (
        "split_with_sizes_i64",
        aten.split_with_sizes.default,
        lambda: Sample((_i64(7, 2), [3, 4])),
    ),
    ("softmax_f32", aten._softmax.default, lambda: Sample((_f32(3, 10), -1, False))),
    (
        "log_softmax_f32",
        aten._log_softmax.default,
        lambda: Sample((_f32(4, 6), 0, False)),
    ),
    (
        "layer_norm_f32",
        aten.native_layer_norm.default,
        lambda: Sample((_f32(2, 3, 8), [8], _f32(8), _f32(8), 1e-5)),
    ),
    (
        "batch_norm_inference_f32",
        aten._native_batch_norm_legit_no_training.default,
        lambda: Sample(
            (
                _f32(2, 3, 4, 4),
                _f32(3),
                _f32(3),
                _f32(3),
                torch.rand(3) + 0.5,
                0.1,
                1e-5,
            )
        ),
    ),
    (
        "eq_broadcast_f32",
        aten.eq.Tensor,
        lambda: Sample(
            (torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([1.0, 4.0]))
        ),
    ),
    ("lt_scalar_i64", aten.lt.Scalar, lambda: Sample((_i64(3, 4), 2))),
    ("ne_bool", aten.ne.Tensor, lambda: Sample((_bool(3, 4), _bool(3, 4)))),
    (
        "where_broadcast_f32",
        aten.where.self,
        lambda: Sample((_bool(3, 4), _f32(3, 4), _f32(4))),
    ),
    (
        "full_i64",
        aten.full.default,
        lambda: Sample(([2, 3], 7), {"dtype": torch.int64}),
    ),
]


# Integer and bool dtypes, index dtypes and empty inputs that kernels once
# rejected.
CASES += [
    (
        "gather_int32_index_f32",
        aten.gather.default,
        lambda: Sample((_f32(4, 6), 1, torch.randint(0, 6, (4, 3)).int())),
    ),
    (
        "scatter_src_int32_index_i64",
        aten.scatter.src,
        lambda: Sample((_i64(5, 4), 0, torch.randint(0, 5, (2, 4)).int(), _i64(2, 4))),
    ),
    (
        "index_put_bool_mask_f32",
        aten.index_put.default,
        lambda: Sample(
            (_f32(5, 3), [torch.tensor([True, False, True, True, False])], _f32(3))
        ),
    ),
    (
        "index_put_2d_mask_accumulate_i64",
        aten.index_put.default,
        lambda: Sample((_i64(3, 4), [_bool(3, 4)], torch.tensor(5), True)),
    ),
    (
        "conv1d_i64",
        aten.convolution.default,
        lambda: Sample(
            (_i64(1, 2, 6), _i64(3, 2, 3), None, [1], [1], [1], False, [0], 1)
        ),
    ),
    (
        "scatter_reduce_amax_bool",
        aten.scatter_reduce.two,
        lambda: Sample(
            (_bool(4, 3), 0, torch.randint(0, 4, (2, 3)), _bool(2, 3), "amax"),
            {"include_self": False},
        ),
    ),
    (
        "searchsorted_sorter_f32",
        aten.searchsorted.Tensor,
        lambda: Sample(
            (torch.tensor([3.0, 1.0, 2.0, 5.0]), _f32(2, 3)),
            {"sorter": torch.tensor([1, 2, 0, 3])},
        ),
    ),
    (
        "softmax_empty_i64",
        aten._softmax.default,
        lambda: Sample((_i64(5, 0), -1, False)),
    ),
    (
        "local_scalar_dense_f64",
        aten._local_scalar_dense.default,
        lambda: Sample((torch.tensor([0.1], dtype=torch.float64),)),
    ),
    (
        "local_scalar_dense_bool",
        aten._local_scalar_dense.default,
        lambda: Sample((torch.tensor([True]),)),
    ),
    (
        "grid_sampler_bilinear_f16",
        aten.grid_sampler_2d.default,
        lambda: Sample(
            (_f32(1, 2, 5, 7).half(), (torch.rand(1, 4, 3, 2) * 2.4 - 1.2).half())
            + (0, 0, False)
        ),
    ),
    (
        "upsample_bilinear_f64",
        aten.upsample_bilinear2d.vec,
        lambda: Sample((_f32(1, 2, 4, 4).double(), [7, 6], False, None)),
    ),
]


def _max_pool_backward_sample() -> Sample:
    source = _f32(1, 2, 6, 6)
    _, indices = aten.max_pool2d_with_indices.default(source, [3, 3], [2, 2], [1, 1])
    grad = _f32(1, 2, 3, 3)
    return Sample((grad, source, [3, 3], [2, 2], [1, 1], [1, 1], False, indices))


# Core operators the Core ATen decomposition rewrites, checked with the
# operator preserved so the program calls their kernel.
PRESERVED_CASES = [
    (
        "avg_pool1d_f32",
        aten.avg_pool1d.default,
        lambda: Sample((_f32(2, 3, 9), [3], [2], [1])),
    ),
    (
        "adaptive_avg_pool1d_f32",
        aten.adaptive_avg_pool1d.default,
        lambda: Sample((_f32(2, 3, 10), [4])),
    ),
    (
        "replication_pad2d_negative_f32",
        aten.replication_pad2d.default,
        lambda: Sample((_f32(1, 2, 4, 4), [-1, 2, 1, -2])),
    ),
    (
        "avg_pool2d_backward_f32",
        aten.avg_pool2d_backward.default,
        lambda: Sample(
            (
                _f32(1, 2, 3, 3),
                _f32(1, 2, 6, 6),
                [3, 3],
                [2, 2],
                [1, 1],
                False,
                False,
                None,
            )
        ),
    ),
    (
        "avg_pool2d_backward_i64",
        aten.avg_pool2d_backward.default,
        lambda: Sample(
            (
                _i64(1, 2, 2, 2),
                _i64(1, 2, 4, 4),
                [2, 2],
                [2, 2],
                [0, 0],
                False,
                True,
                None,
            )
        ),
    ),
    (
        "max_pool2d_with_indices_backward_f32",
        aten.max_pool2d_with_indices_backward.default,
        _max_pool_backward_sample,
    ),
    (
        "convolution_backward_f32",
        aten.convolution_backward.default,
        lambda: Sample(
            (_f32(2, 4, 4, 4), _f32(2, 2, 7, 7), _f32(4, 1, 3, 3), [4], [2, 2], [1, 1])
            + ([1, 1], False, [0, 0], 2, [True, True, True])
        ),
    ),
    (
        "convolution_backward_transposed_f32",
        aten.convolution_backward.default,
        lambda: Sample(
            (_f32(1, 3, 7, 7), _f32(1, 2, 4, 4), _f32(2, 3, 3, 3), [3], [2, 2], [1, 1])
            + ([1, 1], True, [0, 0], 1, [True, True, True])
        ),
    ),
    (
        "native_layer_norm_backward_f32",
        aten.native_layer_norm_backward.default,
        lambda: Sample(
            (
                _f32(2, 3, 4),
                _f32(2, 3, 4),
                [3, 4],
                _f32(2, 1, 1),
                torch.rand(2, 1, 1) + 0.5,
            )
            + (_f32(3, 4), _f32(3, 4), [True, True, True])
        ),
    ),
    (
        "native_group_norm_backward_f32",
        aten.native_group_norm_backward.default,
        lambda: Sample(
            (_f32(2, 4, 5), _f32(2, 4, 5), _f32(2, 2), torch.rand(2, 2) + 0.5, _f32(4))
            + (2, 4, 5, 2, [True, True, True])
        ),
    ),
    (
        "embedding_dense_backward_scaled_f32",
        aten.embedding_dense_backward.default,
        lambda: Sample(
            (_f32(2, 3, 4), torch.tensor([[0, 2, 2], [5, 1, 2]]), 6, 1, True)
        ),
    ),
]

# Fourier transforms, the operators with complex inputs or outputs:
# power-of-two and other (Bluestein) lengths, several dims, each
# normalization, and an output whose eager strides are not contiguous.
CASES += [
    (
        "rfft_odd_length_f32",
        aten._fft_r2c.default,
        lambda: Sample((_f32(3, 7), [1], 0, True)),
    ),
    (
        "fft2_full_f64",
        aten._fft_r2c.default,
        lambda: Sample((_f32(4, 6, 8).double(), [1, 2], 2, False)),
    ),
    (
        "fft_middle_dim_strided_out_f32",
        aten._fft_r2c.default,
        lambda: Sample((_f32(5, 10, 7), [1], 1, False)),
    ),
    (
        "irfft2_odd_f32",
        aten._fft_c2r.default,
        lambda: Sample((torch.randn(3, 6, 4, dtype=torch.complex64), [1, 2], 1, 7)),
    ),
    (
        "ifft_c64",
        aten._fft_c2c.default,
        lambda: Sample((torch.randn(2, 100, dtype=torch.complex64), [1], 2, False)),
    ),
    (
        "abs_complex_c64",
        aten.abs.default,
        lambda: Sample((torch.randn(3, 5, dtype=torch.complex64),)),
    ),
    (
        "permute_complex_c128",
        aten.permute.default,
        lambda: Sample((torch.randn(2, 3, 4, dtype=torch.complex128), [2, 0, 1])),
    ),
]

# Random operators: checked by their properties (test/ops/random_check.py).
RANDOM_CASES = [
    ("rand_f32", aten.rand.default, lambda: Sample(([64, 64],))),
    (
        "randn_f64",
        aten.randn.default,
        lambda: Sample(([64, 64],), {"dtype": torch.float64}),
    ),
    ("randperm_i64", aten.randperm.default, lambda: Sample((300,))),
    (
        "dropout_train_f32",
        aten.native_dropout.default,
        lambda: Sample((_f32(64, 64), 0.25, True)),
    ),
]


@pytest.mark.parametrize(
    "op, factory", [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_operator_matches_eager(op, factory):
    torch.manual_seed(0)
    outcome = check(op, [factory()])
    assert outcome.status == PASS, outcome.detail


@pytest.mark.parametrize(
    "op, factory",
    [c[1:] for c in PRESERVED_CASES],
    ids=[c[0] for c in PRESERVED_CASES],
)
def test_preserved_operator_matches_eager(op, factory):
    torch.manual_seed(0)
    outcome = check(op, [factory()], preserve=True)
    assert outcome.status == PASS, outcome.detail


@pytest.mark.parametrize(
    "op, factory", [c[1:] for c in RANDOM_CASES], ids=[c[0] for c in RANDOM_CASES]
)
def test_random_operator_has_its_properties(op, factory):
    torch.manual_seed(0)
    outcome = check(op, [factory()], properties_only=True)
    assert outcome.status == PASS, outcome.detail
