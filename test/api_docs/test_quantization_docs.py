"""Upstream's "Quantization Overview" (quantization-overview.html) and
"XNNPACK Quantization" (backends/xnnpack/xnnpack-quantization.html), "Static
int8 / PT2E quantization": XNNPACKQuantizer with torchao's prepare_pt2e /
convert_pt2e, then XNNPACK lowering. A small CNN stands in for
MobileNet V2; the program is compared with the quantized model run in
eager PyTorch (the reference int8 arithmetic), within 3% of the output
range (a few quantization steps)."""

import torch

from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
    XNNPACKQuantizer,
    get_symmetric_quantization_config,
)
from executorch.exir import to_edge_transform_and_lower
from executorch.test.api_docs._docs import run, seeded
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        return self.fc(torch.nn.functional.adaptive_avg_pool2d(x, 1).flatten(1))


def test_pt2e_static_quantization_with_xnnpack_quantizer():
    model = SmallCNN().eval()
    sample_inputs = (torch.randn(1, 3, 16, 16),)

    qparams = get_symmetric_quantization_config(is_per_channel=True)
    quantizer = XNNPACKQuantizer()
    quantizer.set_global(qparams)

    training_ep = torch.export.export(model, sample_inputs).module()
    prepared_model = prepare_pt2e(training_ep, quantizer)
    for cal_sample in [seeded(1, 3, 16, 16, seed=s) for s in range(4)]:
        prepared_model(cal_sample)
    quantized_model = convert_pt2e(prepared_model)

    et_program = to_edge_transform_and_lower(
        torch.export.export(quantized_model, sample_inputs),
        partitioner=[XnnpackPartitioner()],
    ).to_executorch()

    x = seeded(1, 3, 16, 16, seed=1)
    expected = quantized_model(x)
    (actual,) = run(et_program.buffer, [x])
    scale = expected.abs().max().item()
    assert (actual - expected).abs().max().item() <= 0.03 * scale
