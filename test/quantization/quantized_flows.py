"""PT2E quantization of the example models, shared by the quantization
tests: each (model, scheme) is quantized and exported once per session
(quantized exports are slow), and each test lowers or runs what it needs.

The reference a test compares with is the converted model run by torch
(`Quantized.converted`): the same quantize/dequantize steps, computed by
torch's reference implementations.
"""

import copy
import functools
from dataclasses import dataclass
from typing import Optional, Tuple

import torch
from torchao.quantization.pt2e import move_exported_model_to_eval
from torchao.quantization.pt2e.quantize_pt2e import (
    convert_pt2e,
    prepare_pt2e,
    prepare_qat_pt2e,
)

from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
    XNNPACKQuantizer,
    get_symmetric_quantization_config,
)
from executorch.examples.models import get_model

SCHEMES = {
    "static_per_tensor": dict(),
    "static_per_channel": dict(is_per_channel=True),
    "dynamic": dict(is_per_channel=True, is_dynamic=True),
    "qat": dict(is_per_channel=True, is_qat=True),
}

# Image models run at 64x64 here (the architectures take any size >= 32),
# which keeps the portable runs short.
_IMAGE_SIZE = 64


@dataclass
class Quantized:
    converted: torch.fx.GraphModule
    inputs: Tuple[torch.Tensor, ...]
    exported: torch.export.ExportedProgram
    # The scale of the last quantize step (one step of the quantized
    # output), or None when the output is not quantized (dynamic).
    output_step: Optional[float]


def model_inputs(name: str, seed: int) -> Tuple[torch.Tensor, ...]:
    _, example = get_model(name)
    generator = torch.Generator().manual_seed(seed)
    x = example[0]
    if x.is_floating_point():
        if x.dim() == 4 and x.shape[-1] == 224:
            return (torch.randn(1, 3, _IMAGE_SIZE, _IMAGE_SIZE, generator=generator),)
        return (torch.randn(x.shape, generator=generator),)
    return (torch.randint(0, 1000, x.shape, generator=generator),)


def _train_briefly(prepared: torch.fx.GraphModule, name: str) -> None:
    """Two SGD steps with fake quantization on, as QAT would run."""
    optimizer = torch.optim.SGD(prepared.parameters(), lr=1e-3)
    for seed in (1, 2):
        (x,) = model_inputs(name, seed)
        loss = prepared(x).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def _last_quantize_scale(gm: torch.fx.GraphModule) -> Optional[float]:
    output = next(n for n in gm.graph.nodes if n.op == "output").args[0][0]
    if "dequantize_per_tensor" in str(output.target):
        scale = output.args[1]
        return float(scale) if isinstance(scale, float) else None
    return None


@functools.lru_cache(maxsize=None)
def quantize(name: str, scheme: str) -> Quantized:
    """The example model `name` quantized with `scheme` (a key of SCHEMES)
    by XNNPACKQuantizer, calibrated on two random inputs."""
    model, _ = get_model(name)
    config = SCHEMES[scheme]
    inputs = model_inputs(name, 0)
    quantizer = XNNPACKQuantizer().set_global(
        get_symmetric_quantization_config(**config)
    )
    if config.get("is_qat"):
        graph = torch.export.export(model.train(), inputs).module()
        prepared = prepare_qat_pt2e(graph, quantizer)
        _train_briefly(prepared, name)
        move_exported_model_to_eval(prepared)
    else:
        graph = torch.export.export(model, inputs).module()
        prepared = prepare_pt2e(graph, quantizer)
        for seed in (1, 2):
            prepared(*model_inputs(name, seed))
    converted = convert_pt2e(prepared)
    exported = torch.export.export(converted, inputs)
    return Quantized(converted, inputs, exported, _last_quantize_scale(converted))


def check_steps(actual, expected, step, max_steps, within_one_step=1.0):
    """|actual - expected| <= max_steps steps everywhere, and <= one step
    for at least the fraction `within_one_step` of the elements."""
    steps = (actual - expected).abs() / step
    assert steps.max().item() <= max_steps + 1e-3, f"max {steps.max().item():.2f} steps"
    close = (steps <= 1 + 1e-3).float().mean().item()
    assert close >= within_one_step, f"only {close:.3f} within one step"


def with_int32_biases(converted: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """A copy of `converted` whose conv and linear biases are rounded to
    multiples of input_scale * weight_scale, as XNNPACK's int8 kernels hold
    them (int32 on that scale). The rest is the reference's arithmetic, so
    this is the reference for int8 XNNPACK delegates: without it the bias
    rounding (up to half of input_scale * weight_scale) moves a deep
    model's outputs by many steps through 50 layers."""
    rounded = copy.deepcopy(converted)
    tensors = dict(rounded.named_parameters())
    tensors.update(rounded.named_buffers())
    for node in rounded.graph.nodes:
        if node.target not in (torch.ops.aten.conv2d.default, torch.ops.aten.linear.default):
            continue
        if len(node.args) < 3 or node.args[2] is None:
            continue
        x, w, b = node.args[:3]
        if "dequantize_per_tensor" not in str(x.target):
            continue
        if "dequantize_per_channel" in str(w.target):
            weight_scale = tensors[w.args[1].target].double()
        elif "dequantize_per_tensor" in str(w.target):
            weight_scale = torch.tensor([float(w.args[1])], dtype=torch.float64)
        else:
            continue
        bias = tensors[b.target]
        step = (weight_scale * x.args[1]).float().double()
        bias.data = (torch.round(bias.data.double() / step) * step).to(bias.dtype)
    return rounded
