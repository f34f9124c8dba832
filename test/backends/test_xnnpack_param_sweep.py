"""Partitioner hygiene: for every node kind XnnpackPartitioner delegates, a
sweep of its parameters (pool and convolution windows, linear with and
without bias, matrix products, broadcasting, clamp bounds, activation
parameters, softmax dims, cat/slice/pad/permute/reshape arguments,
resizes, reductions, static int8) gives a program that is either
delegated whole, loads and matches eager, or keeps the op on the portable
kernels with the reason the case names; never delegated and then refused
by XNNPACK at load (as a 1x1 average pool once was). The delegated
programs also run on upstream's runtime (one upstream process; skipped
without it). Skipped unless the Python extension registers XnnpackBackend.
"""

import dataclasses
import functools
import itertools
import subprocess
import textwrap
from typing import Callable, Optional, Tuple

import pytest
import torch

from executorch.backends.test.harness import tolerance_for
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

F = torch.nn.functional

_NO_LOWERING = "no XNNPACK lowering for this operator"


class Fn(torch.nn.Module):
    """`fn(self, *inputs)`, with `weights` as (frozen) parameters."""

    def __init__(self, fn: Callable, **weights: torch.Tensor):
        super().__init__()
        self.fn = fn
        for name, value in weights.items():
            weight = torch.nn.Parameter(value, requires_grad=False)
            self.register_parameter(name, weight)

    def forward(self, *xs):
        return self.fn(self, *xs)


@dataclasses.dataclass
class Case:
    model: torch.nn.Module
    inputs: Tuple[torch.Tensor, ...]
    # None: delegated. Otherwise the reason the partition report gives for
    # the op it leaves on the portable kernels.
    outside: Optional[str] = None


def _op(fn: Callable, *inputs: torch.Tensor, outside: Optional[str] = None) -> Case:
    """A case applying `fn` to `inputs`."""
    return Case(Fn(lambda m, *xs: fn(*xs)), inputs, outside)


_GENERATOR = torch.Generator().manual_seed(0)


def _rand(*shape):
    return torch.randn(*shape, generator=_GENERATOR)


def _pools():
    # (kernel, stride, padding, ceil_mode): 1x1 windows (a copy, or refused
    # with a stride), padding, ceil_mode with and without a partial window.
    x = (_rand(1, 4, 7, 9),)
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
        avg = torch.nn.AvgPool2d(kernel, stride, padding, ceil)
        why = _avg_pool_reason(kernel, stride, padding, ceil)
        yield f"avg_{suffix}", Case(avg, x, why)
        max_pool = torch.nn.MaxPool2d(kernel, stride, padding, ceil_mode=ceil)
        one_by_one = kernel == 1 and stride > 1
        yield f"max_{suffix}", Case(max_pool, x, "1x1 pooling" if one_by_one else None)
    yield "max_dilated", Case(torch.nn.MaxPool2d(3, 1, 1, dilation=2), x)
    divisor = torch.nn.AvgPool2d(2, divisor_override=3)
    yield "avg_divisor", Case(divisor, x, "divisor_override")
    exclude_pad = torch.nn.AvgPool2d(3, 1, 1, count_include_pad=False)
    yield "avg_exclude_pad", Case(exclude_pad, x)
    yield "adaptive_avg_1", Case(torch.nn.AdaptiveAvgPool2d(1), x)
    yield "adaptive_avg_2", Case(torch.nn.AdaptiveAvgPool2d(2), x, "other than 1x1")


def _avg_pool_reason(kernel, stride, padding, ceil):
    if kernel == 1 and stride > 1:
        return "1x1 pooling"
    if ceil:
        return "ceil_mode"
    if padding:
        return "count_include_pad with padding"
    return None


def _convs():
    x = (_rand(1, 4, 7, 9),)
    for kernel, stride, padding, dilation, groups in [
        (1, 1, 0, 1, 1),
        (1, 2, 0, 1, 1),
        (3, 1, 1, 1, 1),
        (3, 2, 0, 1, 4),
        (3, 1, 2, 2, 1),
        (2, 3, 1, 1, 2),
    ]:
        name = f"conv_k{kernel}s{stride}p{padding}d{dilation}g{groups}"
        conv = torch.nn.Conv2d(4, 8, kernel, stride, padding, dilation, groups)
        yield name, Case(conv, x)
    yield "conv_no_bias", Case(torch.nn.Conv2d(4, 8, 3, bias=False), x)
    yield "conv_transpose", Case(torch.nn.ConvTranspose2d(4, 8, 3, 2, 1, 1), x)
    yield "conv_1d", Case(torch.nn.Conv1d(4, 8, 3), (_rand(1, 4, 9),), "only 2-D")


def _gemms():
    w, b = _rand(5, 8), _rand(5)
    yield "linear_bias", Case(torch.nn.Linear(8, 5), (_rand(3, 8),))
    yield "linear_no_bias", Case(torch.nn.Linear(8, 5, bias=False), (_rand(3, 8),))
    yield "linear_3d", Case(torch.nn.Linear(8, 5), (_rand(2, 3, 8),))
    no_bias = torch.nn.Linear(8, 5, bias=False)
    yield "linear_4d_no_bias", Case(no_bias, (_rand(2, 2, 3, 8),))
    addmm = lambda m, x: torch.addmm(m.b, x, m.w.t())  # noqa: E731
    yield "addmm", Case(Fn(addmm, w=w, b=b), (_rand(3, 8),))
    scaled = lambda m, x: torch.addmm(m.b, x, m.w.t(), beta=0.5, alpha=2)  # noqa: E731
    yield "addmm_alpha_beta", Case(Fn(scaled, w=w, b=b), (_rand(3, 8),), "or beta")
    yield "mm_weight", Case(Fn(lambda m, x: x @ m.w.t(), w=w), (_rand(3, 8),))
    yield "mm_inputs", _op(torch.mm, _rand(3, 8), _rand(8, 4))
    yield "bmm", _op(torch.bmm, _rand(2, 3, 8), _rand(2, 8, 4))
    matmul = Fn(lambda m, x, y: x @ y)
    yield "matmul_4d", Case(matmul, (_rand(2, 3, 4, 8), _rand(2, 3, 8, 5)))
    yield "matmul_3d_2d", Case(matmul, (_rand(2, 3, 8), _rand(8, 5)))


def _binaries():
    ops = {
        "add": torch.add,
        "sub": torch.sub,
        "mul": torch.mul,
        "div": torch.div,
        "maximum": torch.maximum,
        "minimum": torch.minimum,
    }
    shapes = {
        "same": ((2, 3, 4), (2, 3, 4)),
        "row": ((2, 3, 4), (4,)),
        "both": ((2, 1, 4), (1, 3, 1)),
        "rank4": ((1, 2, 3, 4), (2, 1, 1)),
    }
    for (op, fn), (shape, (a, b)) in itertools.product(ops.items(), shapes.items()):
        # Divisors away from zero.
        yield f"{op}_{shape}", _op(fn, _rand(*a), _rand(*b).abs() + 0.5)
    x = (_rand(2, 3, 4),)
    yield "add_scalar", Case(Fn(lambda m, x: x + 2.5), x)
    add_alpha = functools.partial(torch.add, alpha=2.0)
    yield "add_alpha", _op(add_alpha, _rand(2, 3), _rand(2, 3))
    yield "sub_scalar", Case(Fn(lambda m, x: 1.5 - x), x)
    yield "mul_scalar", Case(Fn(lambda m, x: x * -3.0), x)
    yield "div_scalar", Case(Fn(lambda m, x: x / 4.0), x)
    yield "div_floor", Case(
        Fn(lambda m, x: torch.div(x, 0.7, rounding_mode="floor")), x, _NO_LOWERING
    )
    ints = (torch.randint(-5, 5, (2, 3)), torch.randint(-5, 5, (2, 3)))
    yield "add_int64", Case(Fn(lambda m, x, y: x + y), ints, "not a float32")


def _unaries():
    ops = {
        "abs": torch.abs,
        "ceil": torch.ceil,
        "floor": torch.floor,
        "neg": torch.neg,
        "sqrt": lambda x: torch.sqrt(x.abs()),
        "rsqrt": lambda x: torch.rsqrt(x.abs() + 0.1),
        "exp": torch.exp,
        "log": lambda x: torch.log(x.abs() + 0.1),
        "sin": torch.sin,
        "cos": torch.cos,
        "tanh": torch.tanh,
        "sigmoid": torch.sigmoid,
        "relu": torch.relu,
        "hardswish": F.hardswish,
        "gelu": F.gelu,
        "gelu_tanh": functools.partial(F.gelu, approximate="tanh"),
        "elu": F.elu,
        "elu_alpha": functools.partial(F.elu, alpha=0.5),
        "leaky_relu": functools.partial(F.leaky_relu, negative_slope=0.2),
        "hardtanh": F.hardtanh,
        "hardtanh_0_6": functools.partial(F.hardtanh, min_val=0.0, max_val=6.0),
        "clamp_min": functools.partial(torch.clamp, min=-0.5),
        "clamp_max": functools.partial(torch.clamp, max=0.5),
        "clamp_both": functools.partial(torch.clamp, min=-0.5, max=0.25),
                "square": lambda x: x**2,
    }
    x = (_rand(2, 3, 5) * 2,)
    for name, fn in ops.items():
        yield name, Case(Fn(lambda m, x, fn=fn: fn(x)), x)
    yield "selu", Case(Fn(lambda m, x: F.selu(x)), x, "elu with scale")
    yield "pow_3", Case(Fn(lambda m, x: x**3), x, "exponent other than 2")
    # XNNPACK's clamp needs min < max.
    point = Fn(lambda m, x: torch.clamp(x, min=0.5, max=0.5))
    yield "clamp_point", Case(point, x, "empty clamp range")
    bounds = Fn(lambda m, x, lo: torch.clamp(x, min=lo))
    yield "clamp_tensor", Case(bounds, (_rand(2, 3), _rand(2, 3)), _NO_LOWERING)
    yield "prelu", Case(torch.nn.PReLU(4), (_rand(1, 4, 3, 5),))
    yield "prelu_2d", Case(torch.nn.PReLU(4), (_rand(3, 4),), "not 4-D")


def _norms():
    x = (_rand(2, 3, 8),)
    for dim in (-1, 2):
        yield f"softmax_dim{dim}", Case(torch.nn.Softmax(dim), x)
    yield "softmax_dim1", Case(torch.nn.Softmax(1), x, "other than the last")
    yield "layer_norm", Case(torch.nn.LayerNorm(8), x)
    yield "layer_norm_2d", Case(torch.nn.LayerNorm([3, 8]), x)
    yield "layer_norm_plain", Case(torch.nn.LayerNorm(8, elementwise_affine=False), x)
    yield "batch_norm", Case(torch.nn.BatchNorm2d(4).eval(), (_rand(1, 4, 3, 5),))


def _shapes():
    x = _rand(2, 3, 4, 5)
    for dim, count in [(0, 2), (1, 3), (-1, 5), (2, 2)]:
        cat = Fn(lambda m, *xs, dim=dim: torch.cat(xs, dim))
        yield f"cat_dim{dim}_n{count}", Case(cat, tuple(x + i for i in range(count)))
    cat = lambda a, b: torch.cat([a, b], 1)  # noqa: E731
    yield "cat_sizes", _op(cat, _rand(2, 3, 4), _rand(2, 5, 4))
    slices = {
        "slice_front": lambda x: x[:, 1:],
        "slice_negative": lambda x: x[..., -3:-1],
        "slice_past_end": lambda x: x[:, :, 2:100],
        "select": lambda x: x[:, 1],
        "select_last": lambda x: x[..., -1],
        "permute": lambda x: x.permute(0, 2, 3, 1),
        "permute_reverse": lambda x: x.permute(3, 2, 1, 0),
        "transpose": lambda x: x.transpose(1, 3),
        "reshape": lambda x: x.reshape(6, 20),
        "flatten": lambda x: x.flatten(1),
        "unsqueeze": lambda x: x.unsqueeze(2),
        "squeeze": lambda x: x[:, :1].squeeze(1),
        "expand_new_dims": lambda x: x.expand(1, 2, 3, 4, 5),
        "pad_last": lambda x: F.pad(x, (1, 2)),
        "pad_two_dims": lambda x: F.pad(x, (1, 1, 2, 0), value=3.5),
        "pad_four_dims": lambda x: F.pad(x, (1, 0, 0, 1, 1, 0, 0, 1)),
    }
    for name, fn in slices.items():
        yield name, Case(Fn(lambda m, x, fn=fn: fn(x) + 1), (x,))
    yield "slice_step", Case(Fn(lambda m, x: x[:, ::2] + 1), (x,), "slice with a step")
    repeat = lambda x: x[:, :1].expand(2, 3, 4, 5) + 1  # noqa: E731
    yield "expand_repeats", _op(repeat, x, outside="repeats data")


def _crops():
    crop = Fn(lambda m, x: F.pad(x, (-1, 1)) + 1)
    yield "pad_negative", Case(crop, (_rand(2, 3, 4),), "negative padding")


def _resizes_and_reductions():
    x = (_rand(1, 3, 5, 6),)
    for align in (False, True):
        for name, kwargs in [("x2", dict(scale_factor=2)), ("size", dict(size=(7, 4)))]:
            resize = functools.partial(
                F.interpolate, mode="bilinear", align_corners=align, **kwargs
            )
            yield f"bilinear_{name}_align{int(align)}", _op(resize, *x)
    nearest = lambda x: F.interpolate(x, scale_factor=2) + 1  # noqa: E731
    yield "nearest", _op(nearest, *x, outside=_NO_LOWERING)
    yield "mean_hw", Case(Fn(lambda m, x: x.mean((2, 3), keepdim=True)), x)
    yield "mean_hw_flat", Case(Fn(lambda m, x: x.mean((-1, -2))), x)
    yield "mean_last", Case(Fn(lambda m, x: x.mean(-1)), x, "other than H and W")
    yield "sum_hw", Case(Fn(lambda m, x: x.sum((2, 3)) + 1), x, _NO_LOWERING)


FAMILIES = {
    "pool": dict(_pools()),
    "conv": dict(_convs()),
    "gemm": dict(_gemms()),
    "binary": dict(_binaries()),
    "unary": dict(_unaries()),
    "norm": dict(_norms()),
    "shape": dict(_shapes()),
    "crop": dict(_crops()),
    "resize_reduce": dict(_resizes_and_reductions()),
}


class Family(torch.nn.Module):
    """Every case of a family side by side in one program (one export and
    lowering per family keeps the sweep cheap): the inputs are the cases'
    inputs in order, the outputs each case's output in order."""

    def __init__(self, cases):
        super().__init__()
        self.cases = torch.nn.ModuleList(case.model for case in cases.values())
        self.arity = [len(case.inputs) for case in cases.values()]

    def forward(self, *xs):
        outputs, start = [], 0
        for model, arity in zip(self.cases, self.arity):
            outputs.append(model(*xs[start : start + arity]))
            start += arity
        return tuple(outputs)


def _inputs(family: str) -> Tuple[torch.Tensor, ...]:
    return tuple(x for case in FAMILIES[family].values() for x in case.inputs)


@functools.lru_cache(maxsize=None)
def _lowered(family: str) -> Tuple[bytes, str]:
    """The family's program lowered with XnnpackPartitioner, and the
    partition report."""
    partitioner = XnnpackPartitioner()
    model = Family(FAMILIES[family]).eval()
    program = to_edge_transform_and_lower(
        torch.export.export(model, _inputs(family)), partitioner=[partitioner]
    ).to_executorch()
    return program.buffer, partitioner.report()


def _compare(got, family: str, runtime: str):
    """Each case's output (one per case; tuple outputs flattened) against
    eager, naming the case."""
    assert not isinstance(got, str), f"{runtime}: {got}"
    got = list(got)
    for name, case in FAMILIES[family].items():
        with torch.no_grad():
            for want in torch.utils._pytree.tree_leaves(case.model(*case.inputs)):
                # fp32; XNNPACK sums windows and rows in another order, and
                # its transcendental functions are approximations.
                torch.testing.assert_close(
                    got.pop(0),
                    want,
                    **tolerance_for(torch.float32, "accumulating"),
                    msg=lambda m, name=name: f"{runtime}, case {name}: {m}",
                )
    assert not got


@pytest.mark.parametrize("family", FAMILIES)
def test_delegated_or_kept_out_with_its_reason(family):
    """Every op is delegated except the cases that name a reason, and
    those are left out with it; then the program loads and matches eager."""
    pte, report = _lowered(family)
    (plan,) = deserialize_pte_binary(pte).program.executionPlan
    assert plan.delegates, report
    left_out = report.partition("left on portable kernels:")[2].strip().splitlines()
    reasons = {case.outside for case in FAMILIES[family].values() if case.outside}
    for reason in reasons:
        assert any(reason in line for line in left_out), f"{reason!r} not in\n{report}"
    for line in left_out:
        assert any(reason in line for reason in reasons), f"unexpected: {line}"
    module = portable_lib._load_for_executorch_from_buffer(pte)
    _compare(module.forward(_inputs(family)), family, "ours")


_RUN_ON_UPSTREAM = textwrap.dedent("""
    import os, sys, torch
    from executorch.extension.pybindings.portable_lib import _load_for_executorch
    directory = sys.argv[1]
    for name in sys.argv[2:]:
        path = os.path.join(directory, name)
        try:
            module = _load_for_executorch(path + ".pte")
            result = list(module.forward(tuple(torch.load(path + ".in"))))
        except Exception as error:
            result = repr(error)
        torch.save(result, path + ".out")
    """)


@pytest.fixture(scope="module")
def upstream_outputs(upstream_python, tmp_path_factory):
    """Each family's outputs on upstream's runtime (or its error text),
    from one upstream process."""
    directory = tmp_path_factory.mktemp("sweep")
    families = [f for f in FAMILIES if f != "crop"]
    for family in families:
        (directory / f"{family}.pte").write_bytes(_lowered(family)[0])
        torch.save(_inputs(family), directory / f"{family}.in")
    subprocess.run(
        [upstream_python, "-c", _RUN_ON_UPSTREAM, str(directory), *families],
        check=True,
        cwd="/",
        capture_output=True,
    )
    return {family: torch.load(directory / f"{family}.out") for family in families}


def _upstream_family(family):
    if family == "crop":
        # Left on the portable kernels, and upstream's constant_pad_nd
        # refuses negative padding (InvalidArgument) where ours crops.
        reason = "upstream's portable constant_pad_nd takes no negative padding"
        return pytest.param(family, marks=pytest.mark.skip(reason=reason))
    return family


@pytest.mark.parametrize("family", [_upstream_family(f) for f in FAMILIES])
def test_program_runs_on_upstream_runtime(upstream_outputs, family):
    _compare(upstream_outputs[family], family, "upstream")
