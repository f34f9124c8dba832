"""PT2E-quantized models lowered with XnnpackPartitioner, against the
quantized reference (the converted model run by torch).

What goes where today: the quantize/dequantize steps of a static program
stay on the quantized kernels (the delegate has no int8 lowering yet), the
fp32 operators between them go to XNNPACK; a dynamic program's linears are
fused into et_quantized::dynamic_int8_linear before partitioning. Each
test checks the partition report says so, and the outputs.

Tolerances: as test_quantized_portable.py (one output step for the small
models: the fp32 convolutions between quantize steps sum in XNNPACK's order
instead of torch's, which can flip a value at a .5 boundary; dynamic
outputs are fp32, within 1e-4 of the output's range).
"""

import pytest
import torch
from quantized_flows import check_steps, quantize

from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
    XnnpackPartitioner,
)
from executorch.exir import to_edge_transform_and_lower
from executorch.extension.pybindings.portable_lib import (
    _load_for_executorch_from_buffer,
)


def _run_delegated(quantized):
    partitioner = XnnpackPartitioner()
    program = to_edge_transform_and_lower(
        quantized.exported, partitioner=[partitioner]
    ).to_executorch()
    module = _load_for_executorch_from_buffer(program.buffer)
    return module.forward(quantized.inputs)[0], program, partitioner.report()


@pytest.mark.parametrize("scheme", ["static_per_tensor", "static_per_channel"])
def test_static_quantized_cnn_with_xnnpack_partitioner(scheme):
    quantized = quantize("cnn", scheme)
    actual, program, report = _run_delegated(quantized)
    assert "delegated partition" in report
    assert "quantize_per_tensor> x" in report, report
    expected = quantized.converted(*quantized.inputs)
    check_steps(actual, expected, quantized.output_step, max_steps=1)


def test_dynamic_quantized_transformer_with_xnnpack_partitioner():
    quantized = quantize("transformer_encoder", "dynamic")
    actual, program, _ = _run_delegated(quantized)
    assert "et_quantized::dynamic_int8_linear" in program.dump_program()
    expected = quantized.converted(*quantized.inputs)
    scale = expected.abs().max().item()
    torch.testing.assert_close(actual, expected, atol=1e-4 * scale, rtol=0)
