"""Dynamic linears that quantize the same input (attention's q, k and v)
are merged by the fusion pass (exir/passes/fuse_quantized_weights.py) into
one et_quantized::dynamic_int8_linear_panels on their concatenated weights, whose
output is sliced back into theirs.

Tolerances, and why: each output feature of the merged linear is computed
as the separate linear computes it (the same quantized input, the same
integer sums, the same scaling), so the merged program's outputs equal the
unmerged program's bit for bit. Against the quantized reference (the
converted model run by torch), fp32 rounding: relative 1e-4 of the output's
range, as for the other dynamic programs (test_quantized_portable.py).
"""

import pytest
import torch
from torchao.quantization import Int8DynamicActivationIntxWeightConfig, quantize_
from torchao.quantization.granularity import PerGroup
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
    XNNPACKQuantizer,
    get_symmetric_quantization_config,
)
from executorch.exir import to_edge
from executorch.exir.passes.fuse_quantized_weights import fuse_quantized_weights
from executorch.extension.pybindings.portable_lib import (
    _load_for_executorch_from_buffer,
)


class SharedInputs(torch.nn.Module):
    """Three linears on x (odd widths, one without bias), one on y, and a
    linear on x's q output (a consumer between the merged ones' uses)."""

    def __init__(self):
        super().__init__()
        self.q = torch.nn.Linear(64, 40)
        self.k = torch.nn.Linear(64, 24, bias=False)
        self.v = torch.nn.Linear(64, 33)
        self.other = torch.nn.Linear(64, 16)
        self.after = torch.nn.Linear(40, 8)

    def forward(self, x, y):
        q = self.q(x)
        return self.after(torch.relu(q)), self.k(x) * 2.0, self.v(x), self.other(y)


def _inputs():
    generator = torch.Generator().manual_seed(0)
    return (
        torch.randn(2, 5, 64, generator=generator),
        torch.randn(2, 5, 64, generator=generator),
    )


def _pt2e_dynamic():
    torch.manual_seed(0)
    model = SharedInputs().eval()
    inputs = _inputs()
    graph = torch.export.export(model, inputs).module()
    quantizer = XNNPACKQuantizer().set_global(
        get_symmetric_quantization_config(is_per_channel=True, is_dynamic=True)
    )
    prepared = prepare_pt2e(graph, quantizer)
    prepared(*inputs)
    converted = convert_pt2e(prepared)
    return converted, torch.export.export(converted, inputs)


def _torchao_8da4w():
    torch.manual_seed(0)
    model = SharedInputs().eval()
    quantize_(
        model,
        Int8DynamicActivationIntxWeightConfig(
            weight_dtype=torch.int4, weight_granularity=PerGroup(8)
        ),
    )
    return model, torch.export.export(model, _inputs())


def _dynamic_linears(ep):
    return [
        n
        for n in ep.graph.nodes
        if n.op == "call_function" and "dynamic_int8_linear_panels" in str(n.target)
    ]


def _run(ep):
    program = to_edge(ep).to_executorch()
    return _load_for_executorch_from_buffer(program.buffer).forward(_inputs())


@pytest.mark.parametrize("flow", [_pt2e_dynamic, _torchao_8da4w])
def test_merged_linears_match_unmerged_and_the_reference(flow):
    reference_model, exported = flow()
    merged = fuse_quantized_weights(exported)
    unmerged = fuse_quantized_weights(exported, merge_shared_inputs=False)
    # q, k and v become one linear; `other` and `after` stay on their own.
    assert len(_dynamic_linears(unmerged)) == 5
    assert len(_dynamic_linears(merged)) == 3
    widths = sorted(n.meta["val"].shape[-1] for n in _dynamic_linears(merged))
    assert widths == [8, 16, 40 + 24 + 33]

    # The torch reference implementations of the fused programs agree.
    for ours, theirs in zip(merged.module()(*_inputs()), unmerged.module()(*_inputs())):
        torch.testing.assert_close(ours, theirs, atol=1e-5, rtol=1e-5)

    actual = _run(merged)
    separate = _run(unmerged)
    expected = reference_model(*_inputs())
    for ours, theirs, reference in zip(actual, separate, expected):
        assert torch.equal(ours, theirs)
        scale = reference.abs().max().item()
        torch.testing.assert_close(ours, reference, atol=1e-4 * scale, rtol=0)
