"""PT2E-quantized models run on the portable and quantized kernels, against
the quantized reference (the converted model run by torch).

Tolerances, and why:
- A quantized output is a multiple of its scale (one "step"). Our kernels
  reproduce torch's quantize/dequantize bit for bit, but the fp32
  convolutions and matmuls between them sum in another order than torch's,
  so a value that lands within rounding error of a .5 boundary can round
  the other way: one step at that point. In a small model that is at most
  one step at the output. In a deep one a step flipped early on is carried
  through every later layer and can move the outputs by tens of steps, so
  deep models are compared operator by operator instead, each operator on
  the runtime's own inputs (numeric_debugger's same_inputs): quantize
  exactly, fp32 operators within 1e-4.
- Dynamic quantization has an fp32 output; its activations are quantized
  per call from their own range, identically here and in torch, so outputs
  agree to fp32 rounding (relative 1e-4 of the output's range).
"""

import pytest
import torch
from quantized_flows import check_steps, quantize

from executorch.devtools import find_first_divergence
from executorch.exir import EdgeCompileConfig, to_edge
from executorch.extension.pybindings.portable_lib import (
    _load_for_executorch_from_buffer,
)


def _run_portable(quantized, fuse=True):
    config = EdgeCompileConfig(fuse_quantized_weights=fuse)
    program = to_edge(quantized.exported, compile_config=config).to_executorch()
    module = _load_for_executorch_from_buffer(program.buffer)
    return module.forward(quantized.inputs)[0], program


# Small models: their outputs match the reference within one step.
SMALL_CASES = [
    ("cnn", "static_per_tensor"),
    ("cnn", "static_per_channel"),
    ("cnn", "qat"),
    ("transformer_encoder", "static_per_channel"),
]


@pytest.mark.parametrize("name,scheme", SMALL_CASES)
def test_static_quantized_models_match_the_reference(name, scheme):
    quantized = quantize(name, scheme)
    actual, _ = _run_portable(quantized)
    expected = quantized.converted(*quantized.inputs)
    assert quantized.output_step is not None
    check_steps(actual, expected, quantized.output_step, max_steps=1)


@pytest.mark.parametrize(
    "name,scheme,kernel_calls",
    [
        # Its classifier's dropout exports as a clone, which runs as an alias.
        ("mobilenet_v2", "static_per_channel", 297),
        ("resnet18", "static_per_tensor", 144),
    ],
)
def test_deep_quantized_models_match_the_reference_operator_by_operator(
    name, scheme, kernel_calls
):
    """MobileNetV2 and ResNet-18 are checked one kernel call at a time, each
    against torch run on the runtime's own inputs to it: every quantize
    gives torch's integers exactly, every fp32 operator is within 1e-4.
    Their end-to-end outputs cannot be held to a tight bound: one quantize
    in their 50+ layers rounding a near-tie the other way (fp32 sums in
    another order than torch's) moves the logits by up to 23 steps of a
    125-step range (measured over six inputs, on both kernel libraries),
    and which inputs it happens on depends on the CPU's instruction set."""
    quantized = quantize(name, scheme)
    config = EdgeCompileConfig(fuse_quantized_weights=True)
    edge = to_edge(quantized.exported, compile_config=config)
    report = find_first_divergence(edge, quantized.inputs, same_inputs=True)
    assert report.first_divergence is None, str(report)
    assert len(report.comparisons) == kernel_calls


@pytest.mark.parametrize(
    "name,fuse", [("cnn", False), ("cnn", True), ("transformer_encoder", True)]
)
def test_dynamic_quantized_models_match_the_reference(name, fuse):
    """Fused, the linears run on et_quantized::dynamic_int8_linear_panels (integer
    products); unfused, on choose_qparams / quantize / dequantize kernels
    and an fp32 linear."""
    quantized = quantize(name, "dynamic")
    actual, program = _run_portable(quantized, fuse)
    expected = quantized.converted(*quantized.inputs)
    scale = expected.abs().max().item()
    torch.testing.assert_close(actual, expected, atol=1e-4 * scale, rtol=0)
    listing = program.dump_program()
    assert ("et_quantized::dynamic_int8_linear_panels" in listing) == fuse
    assert ("choose_qparams.Tensor_out" in listing) != fuse


def test_int8_program_is_a_quarter_of_fp32():
    """Weights dominate MobileNetV2: its int8 program must be <= 0.27x the
    fp32 one (the fp32 weights PT2E leaves behind are not stored)."""
    from executorch.examples.models import get_model

    quantized = quantize("mobilenet_v2", "static_per_channel")
    model, _ = get_model("mobilenet_v2")
    fp32 = to_edge(torch.export.export(model, quantized.inputs)).to_executorch()
    int8 = to_edge(quantized.exported).to_executorch()
    ratio = len(int8.buffer) / len(fp32.buffer)
    assert ratio <= 0.27, f"int8 program is {ratio:.3f}x fp32"
