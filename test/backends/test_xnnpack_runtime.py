"""Programs lowered with XnnpackPartitioner, run by our runtime (the Python
extension, with XnnpackBackend registered) and compared with eager PyTorch:
every op the partitioner delegates, partial delegation around an unsupported
op, two separate delegated subgraphs, a ResNet block with and without the
Winograd host kernel, the example MobileNetV2 and ResNet-18 fully
delegated, thread counts, and executor_runner on a delegated .pte.

Inputs are drawn from the ranges the ops see in real models: activations
get pre-activation values spread over their saturating regions (N(0, 3)),
sqrt gets positive magnitudes up to 100, divisors stay away from zero,
softmax gets logits of spread 4, images are N(0, 1). Programs go through
the staged harness (executorch.backends.test.harness.Tester) and its
tolerance table: "pointwise" for data movement and exact elementwise ops,
"accumulating" where XNNPACK uses polynomial approximations (sigmoid, elu,
softmax, hardswish) or sums in another order (convolutions, matrix
products, pooling, whole networks)."""

import os
import subprocess
import sys

import pytest
import torch

from executorch.backends.test.harness import Tester
from executorch.backends.test.harness.tester import ACCUMULATING, POINTWISE, compare
from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
    XnnpackPartitioner,
)
from executorch.exir._serialize._flatbuffer import InstructionArguments
from executorch.test.modules import ResNetBlock

sys.path.insert(0, os.path.dirname(__file__))
from test_xnnpack_lowering import BINARY, UNARY, Lambda  # noqa: E402
from test_xnnpack_partitioner import Split  # noqa: E402


def _runtime_has_xnnpack() -> bool:
    try:
        from executorch.extension.pybindings.portable_lib import (
            _get_registered_backend_names,
        )
    except ImportError:
        return False
    return "XnnpackBackend" in _get_registered_backend_names()


pytestmark = pytest.mark.skipif(
    not _runtime_has_xnnpack(),
    reason="the Python extension is built without the XNNPACK backend",
)

F = torch.nn.functional


def lower(model, inputs, **partitioner_options):
    """A Tester of `model` with what XNNPACK supports delegated, through
    to_executorch."""
    return (
        Tester(model, inputs)
        .to_edge_transform_and_lower([XnnpackPartitioner(**partitioner_options)])
        .to_executorch()
    )


def delegate_calls_and_operators(manager):
    """The number of DelegateCall instructions in an ExecutorchProgramManager's
    program and the names of the operators it still calls on portable
    kernels."""
    (plan,) = manager.executorch_program.executionPlan
    calls = sum(
        1
        for chain in plan.chains
        for i in chain.instructions
        if i.instrArgsType == InstructionArguments.DelegateCall
    )
    return calls, [op.name for op in plan.operators]


def check(model, inputs, precision, delegates=1, **partitioner_options):
    """Runs `model` delegated through the runtime and compares every output
    with eager at the harness's `precision`; the program must consist of
    `delegates` delegate calls and nothing else."""
    tester = lower(model, inputs, **partitioner_options)
    calls, operators = delegate_calls_and_operators(tester.get_artifact("to_executorch"))
    assert (calls, operators) == (delegates, [])
    tester.run_method_and_compare_outputs(precision=precision)


# Inputs of the ops whose realistic domain is not N(0, 3).
UNARY_INPUTS = {
    "sqrt": lambda shape: torch.rand(shape) * 100,
    "softmax": lambda shape: torch.randn(shape) * 4,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    fn, precision = UNARY[name]
    shape = (2, 8, 6, 6)
    x = UNARY_INPUTS.get(name, lambda s: torch.randn(s) * 3)(shape)
    check(Lambda(fn), (x,), precision)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name):
    # A feature map and a per-channel operand (divisors away from zero).
    a = torch.randn(2, 8, 5, 5)
    b = (torch.rand(8, 1, 1) + 0.5) * torch.sign(torch.randn(8, 1, 1))
    check(Lambda(BINARY[name]), (a, b), POINTWISE)


CONVOLUTIONS = {
    "conv3x3": torch.nn.Conv2d(3, 16, 3, padding=1),
    "conv_strided_dilated_grouped": torch.nn.Conv2d(
        8, 16, 3, stride=2, padding=2, dilation=2, groups=2
    ),
    "depthwise": torch.nn.Conv2d(8, 8, 3, padding=1, groups=8),
    "depthwise_multiplier": torch.nn.Conv2d(8, 16, 5, padding=2, groups=8),
    "pointwise": torch.nn.Conv2d(8, 24, 1, bias=False),
    "transposed": torch.nn.ConvTranspose2d(
        8, 4, 3, stride=2, padding=1, output_padding=1
    ),
}


@pytest.mark.parametrize("host_kernels", ["1", "0"])
def test_resnet_block_on_winograd_and_on_xnnpack(host_kernels, monkeypatch):
    """A ResNet basic block whose 3x3 convolutions the backend runs on the
    Winograd host kernel (kernels/optimized/cpu/winograd.h; the gtests check
    it is taken) or, with EXECUTORCH_XNNPACK_HOST_KERNELS=0, on XNNPACK:
    both match eager at the harness's accumulating tolerance (Winograd errs
    by ~1e-5 of the largest output)."""
    monkeypatch.setenv("EXECUTORCH_XNNPACK_HOST_KERNELS", host_kernels)
    check(ResNetBlock(), (torch.randn(2, 24, 15, 13),), ACCUMULATING)


@pytest.mark.parametrize("name", sorted(CONVOLUTIONS))
def test_convolution(name):
    conv = CONVOLUTIONS[name]
    check(conv, (torch.randn(1, conv.in_channels, 12, 12),), ACCUMULATING)


LAYERS = {
    "linear": (torch.nn.Linear(64, 32), (4, 64)),
    "linear_3d": (torch.nn.Linear(64, 32), (2, 10, 64)),
    "mm": (Lambda(lambda x: x @ torch.ones(64, 16) / 8), (4, 64)),
    "bmm": (Lambda(lambda a: torch.bmm(a, a.transpose(1, 2))), (3, 10, 16)),
    "max_pool": (torch.nn.MaxPool2d(3, 2, 1), (1, 8, 11, 11)),
    "avg_pool": (torch.nn.AvgPool2d(2), (1, 8, 10, 10)),
    "global_mean": (Lambda(lambda x: x.mean((2, 3), keepdim=True)), (1, 8, 7, 7)),
    "batch_norm": (torch.nn.BatchNorm2d(8), (2, 8, 5, 5)),
    "layer_norm": (torch.nn.LayerNorm(32), (2, 10, 32)),
    "prelu": (torch.nn.PReLU(8), (1, 8, 5, 5)),
    "upsample_bilinear": (
        torch.nn.Upsample(scale_factor=2, mode="bilinear"),
        (1, 8, 5, 5),
    ),
    "cat_permute_slice_pad": (
        Lambda(
            lambda x: F.pad(
                torch.cat([x, x * 2], 1).permute(0, 2, 3, 1)[:, 1:4], (1, 1), value=0.5
            )
        ),
        (2, 4, 5, 6),
    ),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer(name):
    layer, shape = LAYERS[name]
    if isinstance(layer, torch.nn.BatchNorm2d):
        with torch.no_grad():
            layer.running_mean.uniform_(-1, 1)
            layer.running_var.uniform_(0.5, 2)
    check(layer, (torch.randn(shape),), ACCUMULATING)


def test_partial_delegation_around_an_unsupported_op():
    """conv -> relu | cumsum on portable kernels | linear -> tanh."""
    model, x = Split(), torch.randn(2, 3, 8, 8)
    tester = lower(model, (x,))
    calls, operators = delegate_calls_and_operators(tester.get_artifact("to_executorch"))
    assert calls == 2
    assert operators and all("cumsum" in op or "slice" in op for op in operators)
    tester.run_method_and_compare_outputs(precision=ACCUMULATING)


class TwoBranches(torch.nn.Module):
    """Two independent delegated subgraphs whose outputs meet in an op
    XNNPACK cannot run (an integer-valued sort)."""

    def __init__(self):
        super().__init__()
        self.image = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.Hardswish()
        )
        self.sequence = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.GELU())

    def forward(self, image, sequence):
        a = self.image(image).mean((2, 3))
        b = self.sequence(sequence).sum(1)
        ranked = torch.sort(a, dim=1).values
        return ranked + b, a


def test_two_delegated_subgraphs_with_a_portable_op_between():
    model = TwoBranches()
    inputs = (torch.randn(2, 3, 6, 6), torch.randn(2, 5, 16))
    tester = lower(model, inputs)
    calls, operators = delegate_calls_and_operators(tester.get_artifact("to_executorch"))
    assert calls >= 2
    assert any("sort" in op for op in operators)
    assert not any("convolution" in op or "addmm" in op for op in operators)
    tester.run_method_and_compare_outputs(precision=ACCUMULATING)


@pytest.mark.parametrize("threads", [1, 2])
def test_thread_counts_give_the_same_result(threads):
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(16, 8, 1)
    )
    check(model, (torch.randn(1, 3, 16, 16),), ACCUMULATING, num_threads=threads)


def test_host_kernels_split_across_threads():
    """Operators the backend runs itself (Debian's XNNPACK lacks them)
    split large tensors across the pool's threads; tensors this size (above
    the backend's serial-work thresholds, the largest of which is 1 MiB moved
    for a transpose or slice) take that path."""
    model = Lambda(
        lambda x, y: (
            torch.tanh(x),
            F.gelu(x),
            x.permute(0, 2, 3, 1),
            x[:, 8:56] * 2,
            F.layer_norm(x, (64,)),
            torch.bmm(y, y.transpose(1, 2)),
        )
    )
    inputs = (torch.randn(2, 64, 64, 64), torch.randn(4, 128, 64))
    check(model, inputs, ACCUMULATING, num_threads=2)



_WORKER_CPU_SCRIPT = """
import glob, sys
import torch
from executorch.extension.pybindings import portable_lib
portable_lib._unsafe_reset_threadpool(2)
module = portable_lib._load_for_executorch(sys.argv[1])
x = torch.randn(1, 32, 96, 96)
for _ in range(40):
    module.forward((x,))
ticks = 0
for task in glob.glob("/proc/self/task/*"):
    with open(task + "/comm") as f:
        if f.read().strip() != "et_pool_worker":
            continue
    with open(task + "/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks += int(fields[11]) + int(fields[12])  # utime + stime
print("worker_ticks", ticks)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux /proc")
def test_delegated_work_runs_on_the_shared_pool_workers(tmp_path):
    """XNNPACK's own operators run on our pool (extension/threadpool
    implements pthreadpool's API in place of Debian's libpthreadpool, which
    libXNNPACK.so links): with 2 threads, the pool's named worker thread
    spends CPU time on a program that is one delegated convolution and
    nothing else, and no error says XNNPACK fell back to one thread."""
    model = torch.nn.Sequential(torch.nn.Conv2d(32, 64, 3, padding=1))
    tester = lower(model, (torch.randn(1, 32, 96, 96),), num_threads=2)
    calls, operators = delegate_calls_and_operators(tester.get_artifact("to_executorch"))
    assert (calls, operators) == (1, [])
    path = tmp_path / "conv.pte"
    path.write_bytes(tester.get_artifact("to_executorch").buffer)
    result = subprocess.run(
        [sys.executable, "-c", _WORKER_CPU_SCRIPT, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "single-threaded" not in result.stderr, result.stderr
    ticks = int(result.stdout.split("worker_ticks")[1])
    assert ticks > 0, result.stdout


@pytest.mark.parametrize("threads", [1, 2])
def test_gelu_matches_torch_over_its_whole_range(threads):
    """Exact (erf) GELU, a host step on the optimized kernels' rational erf
    approximation, against torch's: a sweep of [-12, 12] (odd length, above
    the serial-work threshold so it splits across threads at 2), values
    around the approximation's limit (|x| / sqrt(2) = 3.92), tiny and large
    values (near the float limit torch overflows to inf where ours gives x;
    the gtest checks those against double). Tolerance atol 2e-6, rtol 1e-6:
    the erf approximation's relative error is 3.1e-7, which gelu scales by
    |x| / 2, and torch's float erf is off by up to ~4e-7 itself."""
    limit = 3.92 * 2**0.5
    edges = torch.tensor(
        [limit, limit * (1 - 1e-6), limit * (1 + 1e-6), 1e-30, 1e-6, 1e30, 0.0]
    )
    x = torch.cat([torch.linspace(-12, 12, 40001), edges, -edges])
    tester = lower(Lambda(F.gelu), (x,), num_threads=threads)
    assert delegate_calls_and_operators(tester.get_artifact("to_executorch")) == (1, [])
    from executorch.extension.pybindings.portable_lib import (
        _load_for_executorch_from_buffer,
    )

    module = _load_for_executorch_from_buffer(tester.get_artifact("to_executorch").buffer)
    (got,) = module.forward([x])
    torch.testing.assert_close(got, F.gelu(x), atol=2e-6, rtol=1e-6)


def _step_names(tester, inputs, tmp_path):
    """The outputs of one profiled run and the names of its XNNPACK steps."""
    from executorch.devtools import Inspector
    from executorch.extension.pybindings.portable_lib import (
        _load_for_executorch_from_buffer,
    )

    program = tester.get_artifact("to_executorch").buffer
    module = _load_for_executorch_from_buffer(program, enable_etdump=True)
    outputs = module.forward(list(inputs))
    module.write_etdump_result_to_file(str(tmp_path / "run.etdp"))
    inspector = Inspector(etdump_path=str(tmp_path / "run.etdp"))
    names = [
        e.name
        for block in inspector.event_blocks
        for e in block.events
        if e.is_delegated_op
    ]
    return outputs, names


@pytest.mark.parametrize("threads", [1, 2])
def test_layer_norm_and_safe_softmax_run_as_fused_host_steps(threads, tmp_path):
    """The lowering writes layer norm and _safe_softmax as runs of nodes
    (upstream's format has no kind for them); the runtime recognises each
    run at init and executes it as one host step, with an odd row length
    (37, not a multiple of any vector width), broadcast weight and bias,
    layer norm without affine parameters, and a fully masked row that
    _safe_softmax turns into zeros."""
    mask = torch.zeros(5, 37)
    mask[2] = float("-inf")
    mask[3, ::2] = float("-inf")
    norm = torch.nn.LayerNorm(37)
    torch.nn.init.normal_(norm.weight)
    torch.nn.init.normal_(norm.bias)
    model = Lambda(
        lambda x: (
            norm(x),
            F.layer_norm(x * 3, (37,), eps=1e-3),
            torch.ops.aten._safe_softmax(x * 4 + mask, -1),
        )
    )
    inputs = (torch.randn(2, 5, 37) * 3,)
    tester = lower(model, inputs, num_threads=threads)
    assert delegate_calls_and_operators(tester.get_artifact("to_executorch")) == (1, [])
    outputs, names = _step_names(tester, inputs, tmp_path)
    assert sum(n.startswith("host layer_norm nodes") for n in names) == 2, names
    assert sum(n.startswith("host safe_softmax nodes") for n in names) == 1, names
    with torch.no_grad():
        expected = model(*inputs)
    for got, want in zip(outputs, expected):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    assert torch.all(outputs[2][:, 2] == 0)


# Attention's scores before their softmax, as models write them: (scores,
# mask) -> logits. The masks: a BERT padding mask [B, 1, 1, L] with padded
# positions at -10000, a per-batch mask [B, 1, L, L] with -inf entries, a
# mask with the scores' own shape, and none.
SCORE_SOFTMAXES = {
    "divided_plus_padding_mask": (lambda s, m: s / 5.656854 + m, (2, 1, 1, 37)),
    "scaled_plus_batch_mask": (lambda s, m: s * 0.125 + m, (2, 1, 9, 37)),
    "scale_first_plus_full_mask": (lambda s, m: 0.5 * s + m, (2, 3, 9, 37)),
    "scaled_only": (lambda s, m: s * 0.25, None),
    "mask_only": (lambda s, m: s + m, (9, 37)),
}


def _score_mask(shape):
    if shape is None:
        return None
    mask = torch.zeros(shape)
    mask[..., -5:] = -10000.0
    if len(shape) == 4 and shape[2] > 1:
        mask[0, 0, 1, ::3] = float("-inf")
    return mask


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", sorted(SCORE_SOFTMAXES))
def test_scaled_and_masked_softmax_runs_as_one_host_step(case, threads, tmp_path):
    """softmax(scores * c or / c, + a mask broadcast over the rows) runs as
    one host step (one pass per row) instead of XNNPACK's scale, add and
    softmax nodes, with the mask a runtime input as in BERT, rows of 37
    (not a multiple of any vector width), and matches eager. Tolerance
    1e-6 absolute on probabilities: a division by c becomes a product with
    1/c (an ulp of the logit)."""
    logits, mask_shape = SCORE_SOFTMAXES[case]
    mask = _score_mask(mask_shape)
    if mask is None:
        model = Lambda(lambda s: torch.softmax(logits(s, None), -1))
        inputs = (torch.randn(2, 3, 9, 37) * 4,)
    else:
        model = Lambda(lambda s, m: torch.softmax(logits(s, m), -1))
        inputs = (torch.randn(2, 3, 9, 37) * 4, mask)
    tester = lower(model, inputs, num_threads=threads)
    assert delegate_calls_and_operators(tester.get_artifact("to_executorch")) == (1, [])
    outputs, names = _step_names(tester, inputs, tmp_path)
    assert sum(n.startswith("host softmax nodes") for n in names) == 1, names
    assert not any(n.startswith("XNNPACK") for n in names), names
    with torch.no_grad():
        expected = model(*inputs)
    torch.testing.assert_close(outputs[0], expected, rtol=1e-5, atol=1e-6)


def test_softmax_whose_logits_are_read_elsewhere_is_not_fused(tmp_path):
    """The scaled and masked scores are also an output: the run is not
    self-contained, so its nodes run one by one (and a softmax alone stays
    XNNPACK's)."""
    def logits_and_softmaxes(s, m):
        logits = s * 0.5 + m
        return logits, torch.softmax(logits, -1), torch.softmax(s, -1)

    model = Lambda(logits_and_softmaxes)
    inputs = (torch.randn(1, 2, 4, 16), torch.zeros(1, 1, 1, 16))
    tester = lower(model, inputs)
    outputs, names = _step_names(tester, inputs, tmp_path)
    assert not any("softmax" in n for n in names), names
    with torch.no_grad():
        expected = model(*inputs)
    for got, want in zip(outputs, expected):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def _host_depthwise_steps(names):
    return sum(n.startswith("host depthwise_conv2d node") for n in names)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("stride", [1, 2])
def test_fp32_depthwise_3x3_runs_on_the_host_kernel(stride, threads, tmp_path):
    """MobileNetV2's inverted residual block (1x1 expansion to 60 channels:
    not a multiple of any vector width, depthwise 3x3 with ReLU6 at stride 1
    or 2, 1x1 projection; batch 2, odd size 15) runs its depthwise
    convolution on the host kernel (runtime/f32_dwconv.h: the profile names
    it a host step) and matches eager. Tolerance: the harness's
    "accumulating" (atol 1e-4, rtol 1e-5): each depthwise output is a bias
    plus 9 fp32 products summed in another order than eager's, a few
    roundings of partial sums of magnitude ~10 here (~1e-6), which the
    projection's 60-term sums carry into the output."""
    from executorch.examples.models.layers import init_as_trained
    from executorch.examples.models.mobilenet_v2 import InvertedResidual

    block = InvertedResidual(10, 10 if stride == 1 else 16, stride, 6).eval()
    init_as_trained(block, in_channels=10)
    inputs = (torch.randn(2, 10, 15, 15),)
    tester = lower(block, inputs, num_threads=threads)
    assert delegate_calls_and_operators(tester.get_artifact("to_executorch")) == (1, [])
    outputs, names = _step_names(tester, inputs, tmp_path)
    assert _host_depthwise_steps(names) == 1, names
    with torch.no_grad():
        compare(outputs[0], block(*inputs), ACCUMULATING, "block")


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("stride", [1, 2])
def test_large_inverted_residual_blocks_run_as_one_fused_step(
    stride, threads, tmp_path
):
    """An inverted residual block whose expanded tensor is past L2 (16 -> 96
    channels at 57x57, 1.2 MB; batch 2, odd size) runs its expansion,
    depthwise and projection convolutions, and at stride 1 the residual
    add, as one fused host step (runtime/f32_inverted_residual.h: the
    profile names it, and no depthwise step is left), and matches eager at
    the harness's "accumulating" tolerance (16-, 9- and 96-term fp32 sums in
    another order than eager's)."""
    from executorch.examples.models.layers import init_as_trained
    from executorch.examples.models.mobilenet_v2 import InvertedResidual

    block = InvertedResidual(16, 16 if stride == 1 else 24, stride, 6).eval()
    init_as_trained(block, in_channels=16)
    inputs = (torch.randn(2, 16, 57, 57),)
    tester = lower(block, inputs, num_threads=threads)
    assert delegate_calls_and_operators(tester.get_artifact("to_executorch")) == (1, [])
    outputs, names = _step_names(tester, inputs, tmp_path)
    fused = {n for n in names if n.startswith("host inverted_residual nodes")}
    assert len(fused) == 1 and _host_depthwise_steps(names) == 0, names
    with torch.no_grad():
        compare(outputs[0], block(*inputs), ACCUMULATING, "block")


def test_mobilenet_v2_early_blocks_run_fused(tmp_path):
    """At 224x224 MobileNetV2's three blocks whose expanded tensors are past
    L2 (at 112x112 and 56x56) run as fused steps, its other 14 depthwise
    convolutions on the host depthwise kernel, and the network matches
    eager at the harness's "accumulating" tolerance."""
    from executorch.examples.models import get_model

    model, inputs = get_model("mobilenet_v2")
    tester = lower(model, inputs)
    outputs, names = _step_names(tester, inputs, tmp_path)
    fused = {n for n in names if n.startswith("host inverted_residual nodes")}
    assert len(fused) == 3 and _host_depthwise_steps(names) == 14, names
    with torch.no_grad():
        compare(outputs[0], model(*inputs), ACCUMULATING, "mobilenet_v2")


def test_inverted_residual_whose_expansion_is_read_elsewhere_is_not_fused(
    tmp_path,
):
    """The fused step computes the expanded tensor a few rows at a time and
    never whole, so a block whose expansion is also an output runs node by
    node (the depthwise convolution on its host kernel), and both outputs
    match eager."""
    expand = torch.nn.Sequential(torch.nn.Conv2d(16, 96, 1), torch.nn.ReLU6())
    depthwise = torch.nn.Sequential(
        torch.nn.Conv2d(96, 96, 3, padding=1, groups=96), torch.nn.ReLU6()
    )
    project = torch.nn.Conv2d(96, 16, 1)

    def block(x):
        expanded = expand(x)
        return project(depthwise(expanded)) + x, expanded

    model = Lambda(block).eval()
    inputs = (torch.randn(1, 16, 57, 57),)
    tester = lower(model, inputs)
    outputs, names = _step_names(tester, inputs, tmp_path)
    assert not any("inverted_residual" in n for n in names), names
    assert _host_depthwise_steps(names) == 1, names
    with torch.no_grad():
        expected = model(*inputs)
    compare(outputs[0], expected[0], ACCUMULATING, "block")
    compare(outputs[1], expected[1], ACCUMULATING, "expansion")


@pytest.mark.parametrize("threads", [1, 2])
def test_convolutions_with_filters_past_l2_run_as_one_gemm(threads, tmp_path):
    """ResNet-18's last stage's convolutions (3x3, 256 -> 512 at stride 2 and
    512 -> 512: 4.7 and 9.4 MB of filter, 7x7 outputs, where Winograd does
    not pay) run on the host GEMM convolution (runtime/f32_gemm_conv.h: two
    host conv2d steps), the 1x1 stride-2 shortcut (0.5 MB) stays on
    XNNPACK, and the block matches eager at the harness's "accumulating"
    tolerance (4608-term fp32 sums in another order than eager's)."""

    class LastStage(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = torch.nn.Conv2d(256, 512, 3, 2, 1)
            self.conv2 = torch.nn.Conv2d(512, 512, 3, 1, 1)
            self.shortcut = torch.nn.Conv2d(256, 512, 1, 2)

        def forward(self, x):
            y = self.conv2(torch.relu(self.conv1(x)))
            return torch.relu(y + self.shortcut(x))

    model = LastStage().eval()
    inputs = (torch.randn(1, 256, 14, 14),)
    tester = lower(model, inputs, num_threads=threads)
    assert delegate_calls_and_operators(tester.get_artifact("to_executorch")) == (1, [])
    outputs, names = _step_names(tester, inputs, tmp_path)
    assert sum(n.startswith("host conv2d node") for n in names) == 2, names
    with torch.no_grad():
        compare(outputs[0], model(*inputs), ACCUMULATING, "last stage")


@pytest.mark.parametrize("threads", [1, 2])
def test_linears_with_weights_past_l2_run_as_one_gemm(threads, tmp_path):
    """MiniLM's feed-forward block (384 -> 1536 -> 384: 2.4 MB per weight)
    runs its two linears on the host GEMM (a fully connected node as a 1x1
    convolution of its rows, runtime/f32_gemm_conv.h: "host
    fully_connected" steps) and the 384 -> 384 projection (0.6 MB) on
    XNNPACK's operator, with a dynamic sequence length: 128 rows, and 1
    row as in an LLM's decode step (the GEMM computes only that row). Tolerance:
    the harness's "accumulating" (1536-term fp32 sums in another order
    than eager's)."""

    class FeedForward(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.up = torch.nn.Linear(384, 1536)
            self.down = torch.nn.Linear(1536, 384)
            self.projection = torch.nn.Linear(384, 384)

        def forward(self, x):
            return self.projection(x) + self.down(F.gelu(self.up(x)))

    model = FeedForward().eval()
    inputs = (torch.randn(1, 128, 384),)
    sequence = torch.export.Dim("sequence", min=1, max=128)
    tester = (
        Tester(model, inputs, dynamic_shapes=({1: sequence},))
        .to_edge_transform_and_lower([XnnpackPartitioner(num_threads=threads)])
        .to_executorch()
    )
    assert delegate_calls_and_operators(tester.get_artifact("to_executorch"))[0] == 1
    outputs, names = _step_names(tester, inputs, tmp_path)
    host = [n for n in names if n.startswith("host fully_connected node")]
    assert len(host) == 2, names
    assert sum(n.startswith("XNNPACK fully_connected node") for n in names) == 1
    with torch.no_grad():
        compare(outputs[0], model(*inputs), ACCUMULATING, "128 rows")
        decode = (torch.randn(1, 1, 384),)
        outputs, _ = _step_names(tester, decode, tmp_path)
        compare(outputs[0], model(*decode), ACCUMULATING, "1 row")


def test_mobilenet_v2_depthwise_convolutions_run_on_the_host_kernel(tmp_path):
    """All 17 of MobileNetV2's depthwise convolutions (strides 1 and 2, 32
    to 960 channels) run on the host kernel, and the network matches eager
    at the harness's "accumulating" tolerance (as every whole network here;
    at 64x64 to keep the test fast). With EXECUTORCH_XNNPACK_HOST_KERNELS=0
    none does (a new process: the setting is read at load)."""
    from executorch.examples.models import get_model

    model, _ = get_model("mobilenet_v2")
    inputs = (torch.randn(1, 3, 64, 64),)
    tester = lower(model, inputs)
    outputs, names = _step_names(tester, inputs, tmp_path)
    assert _host_depthwise_steps(names) == 17, names
    with torch.no_grad():
        compare(outputs[0], model(*inputs), ACCUMULATING, "mobilenet_v2")

    program = tmp_path / "mv2.pte"
    program.write_bytes(tester.get_artifact("to_executorch").buffer)
    script = f"""
import torch
from executorch.devtools import Inspector
from executorch.extension.pybindings.portable_lib import _load_for_executorch
module = _load_for_executorch({str(program)!r}, enable_etdump=True)
module.forward([torch.randn(1, 3, 64, 64)])
module.write_etdump_result_to_file({str(tmp_path / "off.etdp")!r})
names = [e.name for b in Inspector(etdump_path={str(tmp_path / "off.etdp")!r}).event_blocks
         for e in b.events if e.is_delegated_op]
print(sum(n.startswith("host depthwise_conv2d") for n in names))
"""
    env = dict(os.environ, EXECUTORCH_XNNPACK_HOST_KERNELS="0")
    result = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-1] == "0", result.stdout


@pytest.mark.parametrize("name", ["mobilenet_v2", "mobilenet_v3_small", "resnet18"])
def test_example_models_fully_delegated(name):
    """The example networks become one delegate call with no portable
    operator left, and match eager (at 64x64, to keep the test fast)."""
    from executorch.examples.models import get_model

    model, _ = get_model(name)
    check(model, (torch.randn(1, 3, 64, 64),), ACCUMULATING)


def test_example_transformer_encoder():
    """Everything after the token embedding (a gather XNNPACK cannot run)
    is one delegate call, and the logits match eager."""
    from executorch.examples.models import get_model

    model, (tokens,) = get_model("transformer_encoder")
    tester = lower(model, (tokens,))
    calls, operators = delegate_calls_and_operators(tester.get_artifact("to_executorch"))
    assert calls == 1
    assert all("embedding" in op for op in operators), operators
    tester.run_method_and_compare_outputs(precision=ACCUMULATING)


def test_executor_runner_runs_a_delegated_program(build_dir, tmp_path):
    """The export script's --delegate output runs in executor_runner, whose
    printed outputs match eager on its default inputs (ones)."""
    from executorch.examples.models import get_model

    runner = os.path.join(build_dir, "examples", "executor_runner", "executor_runner")
    if not os.path.exists(runner):
        pytest.skip(f"{runner} is not built")
    export = subprocess.run(
        [sys.executable, "-m", "executorch.examples.portable.scripts.export"]
        + ["-m", "cnn", "--delegate", "-o", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert export.returncode == 0, export.stderr
    assert "delegated partition" in export.stdout
    result = subprocess.run(
        [
            runner,
            "--model_path",
            str(tmp_path / "cnn_xnnpack_fp32.pte"),
            "--print_output",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    line = next(s for s in result.stdout.splitlines() if s.startswith("Output 0"))
    values = [float(v) for v in line.split("= [")[1].rstrip("]").split(",")]
    model, (x,) = get_model("cnn")
    with torch.no_grad():
        expected = model(torch.ones_like(x)).flatten()
    compare(torch.tensor(values), expected, ACCUMULATING, "printed output 0")
