"""The Python lowering (backends/xnnpack/lowering/) against eager PyTorch:
each module is exported, lowered whole to one XNNPACK blob, run by the C++
backend (the xnnpack_run_blob tool from the CMake build) and compared with
the staged harness's tolerance table (executorch.backends.test.harness):
"pointwise" for elementwise ops and data movement, "accumulating" where long
sums or XNNPACK's own approximations (convolutions, sigmoid, softmax) are
involved."""

import os
import subprocess
import tempfile

import numpy as np
import pytest
import torch

from executorch.backends.test.harness import Tester
from executorch.backends.test.harness.tester import ACCUMULATING, POINTWISE
from executorch.backends.xnnpack.lowering import (
    XnnpackLoweringError,
    lower_to_xnnpack,
    unsupported_reason,
)
from executorch.backends.xnnpack.serialization.xnnpack_graph_schema import (
    XNodeUnion as Kind,
)
from executorch.backends.xnnpack.serialization.xnnpack_graph_serialize import (
    deserialize_xnnpack_blob,
)
from executorch.test.modules import Lambda

_ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
RUNNER = os.environ.get(
    "XNNPACK_RUN_BLOB",
    os.path.join(_ROOT, "build", "backends", "xnnpack", "xnnpack_run_blob"),
)

pytestmark = pytest.mark.skipif(
    not os.path.exists(RUNNER),
    reason=f"{RUNNER} is not built (cmake --build build --target xnnpack_run_blob)",
)


def export(module, inputs, keep=()):
    """Exports to Core ATen, keeping the ops in `keep` whole (as a
    partitioner's ops_to_not_decompose would)."""
    table = torch.export.default_decompositions()
    for op in keep:
        table.pop(op, None)
    return torch.export.export(module.eval(), inputs).run_decompositions(table)


def run_blob(blob, inputs, threads=None):
    """The blob's outputs for `inputs`, run by xnnpack_run_blob, as tensors
    of the dims the blob declares for them."""
    graph = deserialize_xnnpack_blob(blob).graph
    outputs = sorted(
        (graph.xvalues[i].xvalueUnion for i in graph.outputIds),
        key=lambda value: value.externalId,
    )
    with tempfile.TemporaryDirectory() as tmp:
        blob_path = os.path.join(tmp, "graph.xnb")
        with open(blob_path, "wb") as f:
            f.write(blob)
        paths = []
        for i, x in enumerate(inputs):
            path = os.path.join(tmp, f"in{i}.bin")
            x.detach().numpy().astype(np.float32).tofile(path)
            paths.append(path)
        command = [RUNNER, blob_path, os.path.join(tmp, "out")]
        if threads:
            command += ["--threads", str(threads)]
        subprocess.run(command + paths, check=True, capture_output=True)
        return [
            torch.from_numpy(
                np.fromfile(os.path.join(tmp, f"out{j}.bin"), dtype=np.float32)
            ).reshape(tuple(int(d) for d in value.dims))
            for j, value in enumerate(outputs)
        ]


def check(module, inputs, precision=POINTWISE, keep=()):
    """Lowers `module` whole, runs it and compares every output with eager
    at the harness's `precision`; returns the parsed blob."""
    blob = lower_to_xnnpack(export(module, inputs, keep))
    Tester(module, inputs).compare_outputs(
        lambda: run_blob(blob, inputs), precision=precision
    )
    return deserialize_xnnpack_blob(blob).graph


def kinds(graph):
    return [n.xnodeUnionType for n in graph.xnodes]


F = torch.nn.functional
UNARY = {
    "relu": (torch.relu, POINTWISE),
    "relu6": (F.relu6, POINTWISE),
    "hardtanh": (lambda x: F.hardtanh(x, -0.5, 0.75), POINTWISE),
    "clamp": (lambda x: torch.clamp(x, min=-0.25), POINTWISE),
    "sigmoid": (torch.sigmoid, ACCUMULATING),
    "tanh": (torch.tanh, POINTWISE),
    "gelu": (F.gelu, POINTWISE),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), POINTWISE),
    "hardswish": (F.hardswish, POINTWISE),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), POINTWISE),
    "elu": (lambda x: F.elu(x, 0.7), ACCUMULATING),
    "abs": (torch.abs, POINTWISE),
    "neg": (torch.neg, POINTWISE),
    "sqrt": (lambda x: torch.sqrt(x.abs()), POINTWISE),
    "square": (lambda x: x**2, POINTWISE),
    "floor": (torch.floor, POINTWISE),
    "ceil": (torch.ceil, POINTWISE),
    "softmax": (lambda x: torch.softmax(x, -1), ACCUMULATING),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    fn, precision = UNARY[name]
    check(Lambda(fn), (torch.randn(2, 3, 4, 5) * 3,), precision)


BINARY = {
    "add": lambda a, b: a + b,
    "add_alpha": lambda a, b: torch.add(a, b, alpha=0.5),
    "sub": lambda a, b: a - b,
    "sub_alpha": lambda a, b: torch.sub(a, b, alpha=2),
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b.abs() + 0.5),
    "add_scalar": lambda a, b: a + 1.5 + b,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
    "add_relu": lambda a, b: torch.relu(a + b),
    "scalar_ops": lambda a, b: (a * 0.5 - 2) / 4 + b,
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_broadcasting(name):
    check(Lambda(BINARY[name]), (torch.randn(2, 3, 4), torch.randn(3, 1)))


@pytest.mark.parametrize(
    "conv",
    [
        torch.nn.Conv2d(3, 8, 3, padding=1),
        torch.nn.Conv2d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2),
        torch.nn.Conv2d(4, 8, 3, padding=1, groups=4),  # depthwise
        torch.nn.Conv2d(4, 4, 1, bias=False),
        torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1),
        torch.nn.ConvTranspose2d(4, 6, 3, stride=2, groups=2),
    ],
    ids=[
        "plain",
        "grouped_strided_dilated",
        "depthwise",
        "1x1_nobias",
        "deconv",
        "deconv_groups",
    ],
)
def test_convolution(conv):
    check(conv, (torch.randn(2, 4 if conv.in_channels == 4 else 3, 9, 8),), ACCUMULATING)


def test_conv_batch_norm_relu_folds_into_one_node():
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU()
    )
    with torch.no_grad():
        model[1].running_mean.uniform_(-1, 1)
        model[1].running_var.uniform_(0.5, 2)
        model[1].weight.uniform_(0.5, 1.5)
    graph = check(model, (torch.randn(1, 3, 8, 8),), ACCUMULATING)
    assert kinds(graph).count(Kind.XNNConv2d) == 1
    conv = next(n for n in graph.xnodes if n.xnodeUnionType == Kind.XNNConv2d)
    assert conv.outputMinMax is not None and conv.outputMinMax.outputMin == 0.0
    assert Kind.XNNMultiply not in kinds(graph)


def test_standalone_batch_norm():
    model = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.BatchNorm2d(4))
    with torch.no_grad():
        model[1].running_mean.uniform_(-1, 1)
        model[1].running_var.uniform_(0.5, 2)
    check(model, (torch.randn(2, 4, 5, 5),))


def test_linear_and_mm():
    linear = torch.nn.Linear(5, 4)
    w = torch.randn(5, 3)
    graph = check(
        Lambda(lambda x: (linear(x), x @ w)), (torch.randn(6, 5),)
    )
    assert kinds(graph).count(Kind.XNNFullyConnected) == 2


def test_linear_with_leading_dims():
    check(torch.nn.Linear(5, 4), (torch.randn(2, 3, 5),))


def test_bmm_and_dynamic_mm():
    graph = check(
        Lambda(lambda a, b, c, d: (torch.bmm(a, b), c @ d)),
        (
            torch.randn(3, 4, 5),
            torch.randn(3, 5, 2),
            torch.randn(4, 5),
            torch.randn(5, 3),
        ),
    )
    assert kinds(graph).count(Kind.XNNBatchMatrixMultiply) == 2


def test_prelu():
    graph = check(
        torch.nn.PReLU(4),
        (torch.randn(2, 4, 3, 3),),
        keep=[torch.ops.aten.prelu.default],
    )
    assert Kind.XNNPReLU in kinds(graph)


@pytest.mark.parametrize(
    "pool",
    [
        torch.nn.MaxPool2d(3, 2, 1),
        torch.nn.MaxPool2d(2),
        torch.nn.AvgPool2d(3, 2),
        torch.nn.AvgPool2d(3, 1, 1, count_include_pad=False),
    ],
    ids=["max_padded", "max", "avg", "avg_exclude_pad"],
)
def test_pooling(pool):
    check(pool, (torch.randn(2, 3, 9, 8),))


def test_avg_pool_counting_padding_is_not_supported():
    ep = export(torch.nn.AvgPool2d(3, 1, 1), (torch.randn(1, 2, 5, 5),))
    node = next(n for n in ep.graph.nodes if n.op == "call_function")
    assert "count_include_pad" in unsupported_reason(node, ep)
    with pytest.raises(XnnpackLoweringError, match="count_include_pad"):
        lower_to_xnnpack(ep)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.mean((2, 3), keepdim=True),
        lambda x: x.mean((-1, -2)),
        lambda x: F.adaptive_avg_pool2d(x, 1).flatten(1),
    ],
    ids=["mean_keepdim", "mean", "adaptive_flatten"],
)
def test_global_average_pooling(fn):
    graph = check(Lambda(fn), (torch.randn(2, 3, 4, 5),))
    # The NCHW <-> NHWC change around a 1x1 spatial result is a reshape.
    assert Kind.XNNStaticTranspose in kinds(graph)  # the input only
    assert kinds(graph).count(Kind.XNNStaticTranspose) == 1


def test_data_movement():
    check(
        Lambda(
            lambda x, y: (
                torch.cat([x, y], 1),
                x.permute(0, 2, 3, 1),
                x.transpose(1, 3),
                x.reshape(2, -1),
                x.unsqueeze(1),
                x[:, 1:3],
                F.pad(x, (1, 2, 0, 1), value=0.5),
            )
        ),
        (torch.randn(2, 3, 4, 5), torch.randn(2, 2, 4, 5)),
    )


@pytest.mark.parametrize("align_corners", [False, True])
def test_bilinear_upsample(align_corners):
    check(
        Lambda(
            lambda x: F.interpolate(
                x, size=(6, 10), mode="bilinear", align_corners=align_corners
            )
        ),
        (torch.randn(1, 3, 3, 5),),
    )


def test_layout_transposes_are_shared_and_minimal():
    """A chain of NHWC nodes pays one transpose in and one out."""
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.Conv2d(8, 8, 3, padding=1, groups=8),
        torch.nn.Hardswish(),
        torch.nn.MaxPool2d(2),
    )
    graph = check(model, (torch.randn(1, 3, 8, 8),), ACCUMULATING)
    assert kinds(graph).count(Kind.XNNStaticTranspose) == 2
    # relu is fused into the first convolution, hardswish's clamps into add.
    assert Kind.XNNClamp not in kinds(graph)


def test_small_classifier_with_threads():
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, stride=2, padding=1),
        torch.nn.BatchNorm2d(16),
        torch.nn.ReLU6(),
        torch.nn.Conv2d(16, 16, 3, padding=1, groups=16),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(16, 10),
    )
    x = torch.randn(2, 3, 32, 32)
    blob = lower_to_xnnpack(export(model, (x,)))
    tester = Tester(model, (x,))
    for threads in (1, 2):
        tester.compare_outputs(
            lambda: run_blob(blob, [x], threads=threads), precision=ACCUMULATING
        )


def test_unsupported_operator_is_named():
    ep = export(Lambda(lambda x: torch.cumsum(x, 0)), (torch.randn(3),))
    node = next(n for n in ep.graph.nodes if n.op == "call_function")
    assert unsupported_reason(node, ep) == "no XNNPACK lowering for this operator"
    with pytest.raises(XnnpackLoweringError, match="cumsum"):
        lower_to_xnnpack(ep)


def test_tensor_factories_fold_into_constants():
    graph = check(
        Lambda(lambda x: torch.maximum(x, torch.full((4,), 0.5)) + torch.zeros(4)),
        (torch.randn(3, 4),),
    )
    assert kinds(graph) == [Kind.XNNMaximum, Kind.XNNAdd]


def test_output_that_is_an_input_is_copied():
    check(Lambda(lambda x: (x, torch.relu(x))), (torch.randn(3, 4),))


class InvertedResidual(torch.nn.Module):
    """MobileNetV2's block: expand 1x1, depthwise 3x3, project 1x1, with a
    residual when shapes allow."""

    def __init__(self, channels, expansion, stride):
        super().__init__()
        hidden = channels * expansion
        self.residual = stride == 1
        self.body = torch.nn.Sequential(
            torch.nn.Conv2d(channels, hidden, 1, bias=False),
            torch.nn.BatchNorm2d(hidden),
            torch.nn.ReLU6(),
            torch.nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False),
            torch.nn.BatchNorm2d(hidden),
            torch.nn.ReLU6(),
            torch.nn.Conv2d(hidden, channels, 1, bias=False),
            torch.nn.BatchNorm2d(channels),
        )

    def forward(self, x):
        y = self.body(x)
        return x + y if self.residual else y


class SqueezeExcite(torch.nn.Module):
    """MobileNetV3's channel attention: a [N, C, 1, 1] gate broadcast over
    the feature map."""

    def __init__(self, channels):
        super().__init__()
        self.reduce = torch.nn.Conv2d(channels, channels // 2, 1)
        self.expand = torch.nn.Conv2d(channels // 2, channels, 1)

    def forward(self, x):
        gate = F.adaptive_avg_pool2d(x, 1)
        gate = F.hardsigmoid(self.expand(torch.relu(self.reduce(gate))))
        return x * gate


class BasicBlock(torch.nn.Module):
    """ResNet's block, with a strided 1x1 shortcut when downsampling."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(cout)
        self.conv2 = torch.nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(cout)
        self.shortcut = (
            torch.nn.Sequential(
                torch.nn.Conv2d(cin, cout, 1, stride, bias=False),
                torch.nn.BatchNorm2d(cout),
            )
            if stride != 1 or cin != cout
            else torch.nn.Identity()
        )

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + self.shortcut(x))


def randomize_batch_norms(model):
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
    return model


def small_cnn(name):
    """A small MobileNet-style (inverted residuals, hardswish, squeeze-excite)
    or ResNet-style (basic blocks, max pool) classifier with random batch
    norm statistics."""
    if name == "mobilenet":
        model = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, 2, 1),
            torch.nn.Hardswish(),
            InvertedResidual(8, 4, 1),
            InvertedResidual(8, 4, 2),
            SqueezeExcite(8),
            torch.nn.AdaptiveAvgPool2d(1),
            torch.nn.Flatten(),
            torch.nn.Linear(8, 10),
        )
    else:
        model = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 7, 2, 3, bias=False),
            torch.nn.BatchNorm2d(8),
            torch.nn.ReLU(),
            torch.nn.MaxPool2d(3, 2, 1),
            BasicBlock(8, 8, 1),
            BasicBlock(8, 16, 2),
            torch.nn.AdaptiveAvgPool2d(1),
            torch.nn.Flatten(),
            torch.nn.Linear(16, 10),
        )
    return randomize_batch_norms(model).eval()


@pytest.mark.parametrize("name", ["mobilenet", "resnet"])
def test_small_cnns_lower_whole_with_one_layout_change(name):
    model = small_cnn(name)
    graph = check(
        model,
        (torch.randn(2, 3, 32, 32),),
        ACCUMULATING,
        keep=[torch.ops.aten.hardswish.default],
    )
    # Only the input changes layout; batch norms are folded away, so the
    # only multiply is the squeeze-excite gate.
    assert kinds(graph).count(Kind.XNNStaticTranspose) == 1
    assert kinds(graph).count(Kind.XNNMultiply) == (1 if name == "mobilenet" else 0)


@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm(affine):
    norm = torch.nn.LayerNorm([4, 5], elementwise_affine=affine)
    if affine:
        with torch.no_grad():
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-1, 1)
    check(norm, (torch.randn(3, 4, 5) * 3,))


def test_select_and_expand():
    check(
        Lambda(lambda x: (x[1], x.select(2, -1), x[:, :1].expand(2, 1, 4))),
        (torch.randn(2, 3, 4),),
    )


def test_transformer_encoder_lowers_whole():
    """With _safe_softmax kept whole (as the partitioner keeps it), an
    encoder lowers entirely, in node kinds of upstream's format (layer norm
    and the safe softmax decomposed), and matches eager."""
    encoder = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(32, 4, 64, batch_first=True, dropout=0.0),
        2,
        enable_nested_tensor=False,
    )
    graph = check(
        encoder,
        (torch.randn(2, 10, 32),),
        ACCUMULATING,
        keep=[torch.ops.aten._safe_softmax.default],
    )
    assert Kind.XNNSoftmax in kinds(graph)
    # Two norms per layer, each with a mean and a variance reduction, and
    # four linears per layer.
    assert kinds(graph).count(Kind.XNNFullyConnected) == 2 * (2 * 2 + 4)
