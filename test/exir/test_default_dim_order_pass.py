"""DefaultDimOrderPass: channels-last programs run operators whose kernels
need the default dim order (softmax, cat, upsampling, norms, padding,
pixel shuffle) on our runtime, matching eager; operators that take any dim
order get no copies."""

import pytest
import torch
import torch.nn.functional as F

from executorch.exir import to_edge
from executorch.extension.pybindings.portable_lib import (
    _load_for_executorch_from_buffer,
)

class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


CASES = {
    "softmax_over_channels": lambda x: torch.softmax(x, 1),
    "cat": lambda x: torch.cat([x, x * 2], 1),
    "upsample_bilinear": lambda x: F.interpolate(
        x, scale_factor=2, mode="bilinear", align_corners=False
    ),
    "group_norm": lambda x: F.group_norm(x, 2),
    "pad": lambda x: F.pad(x, (1, 2, 0, 1)),
    # One output channel: channels-last strides read as dim order
    # [0, 2, 1, 3], the layout copy's argument must agree with its result.
    "pixel_shuffle": lambda x: F.pixel_shuffle(x, 2),
    "topk_values": lambda x: torch.topk(x, 2, 1)[0] + 1,
}


def _program(fn, x):
    return to_edge(torch.export.export(Fn(fn), (x,))).to_executorch()


def _layout_copies(manager):
    graph = manager.exported_program().graph
    return [n for n in graph.nodes if "_to_dim_order_copy" in str(n.target)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_channels_last_input_runs_like_eager(name):
    x = torch.randn(2, 4, 6, 8).to(memory_format=torch.channels_last)
    fn = CASES[name]
    manager = _program(fn, x)
    got = _load_for_executorch_from_buffer(manager.buffer).forward([x])[0]
    torch.testing.assert_close(got, fn(x), rtol=1e-5, atol=1e-5)


def test_copies_go_around_the_operator_and_back():
    x = torch.randn(2, 4, 6, 8).to(memory_format=torch.channels_last)
    copies = _layout_copies(_program(CASES["cat"], x))
    # Both inputs into the default order before cat; its result back to
    # channels-last, the layout eager gives it.
    assert [c.kwargs["dim_order"] for c in copies] == [
        [0, 1, 2, 3],
        [0, 1, 2, 3],
        [0, 2, 3, 1],
    ]


def test_operators_that_take_any_dim_order_get_no_copies():
    conv = torch.nn.Conv2d(4, 4, 3, padding=1).to(memory_format=torch.channels_last)
    x = torch.randn(2, 4, 6, 8).to(memory_format=torch.channels_last)
    manager = _program(lambda t: torch.relu(conv(t)).mean((2, 3)), x)
    assert _layout_copies(manager) == []


def test_quantized_channels_last_model_runs_like_its_quantized_eager():
    # quantized_decomposed's (de)quantize kernels need the default order
    # too: a channels-last weight's dequantize_per_channel once failed.
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        get_symmetric_quantization_config,
        XNNPACKQuantizer,
    )

    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.Conv2d(8, 4, 1)
    ).eval()
    model = model.to(memory_format=torch.channels_last)
    x = torch.randn(1, 3, 10, 10).to(memory_format=torch.channels_last)
    quantizer = XNNPACKQuantizer().set_global(
        get_symmetric_quantization_config(is_per_channel=True)
    )
    prepared = prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer)
    prepared(x)
    quantized = convert_pt2e(prepared)
    manager = to_edge(torch.export.export(quantized, (x,))).to_executorch()
    got = _load_for_executorch_from_buffer(manager.buffer).forward([x])[0]
    # The same integer arithmetic as the quantized eager model: one step of
    # the output's quantization at most.
    torch.testing.assert_close(got, quantized(x), rtol=0, atol=0.02)
