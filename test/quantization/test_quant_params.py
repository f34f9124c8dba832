"""Bad quantization parameters are refused: at export (naming the node and
the source line) when they are constants; at load (naming the instruction,
the operator and the parameter) when they were corrupted in the .pte after
export (the quantized library's load checks, quantized.yaml's load_check);
and by the kernels at run time when they arrive as inputs."""

import struct

import pytest
import torch

from executorch.exir import to_edge
from executorch.exir.verification.quant_params import (
    QuantizationParameterError,
    check_quantization_parameters,
)
from executorch.extension.pybindings.portable_lib import (
    _load_for_executorch_from_buffer,
)
from executorch.runtime import Runtime

qd = torch.ops.quantized_decomposed


class PerTensor(torch.nn.Module):
    def __init__(self, scale, zero_point):
        super().__init__()
        self.scale, self.zero_point = scale, zero_point

    def forward(self, x):
        q = qd.quantize_per_tensor(x, self.scale, self.zero_point, -128, 127, torch.int8)
        return qd.dequantize_per_tensor(q, 0.1, 0, -128, 127, torch.int8)


class PerChannelWeight(torch.nn.Module):
    """A linear layer whose int8 weight is dequantized per channel."""

    def __init__(self, scales, zero_points):
        super().__init__()
        self.register_buffer("weight", torch.randint(-127, 127, (3, 4), dtype=torch.int8))
        self.register_buffer("scales", scales)
        self.register_buffer("zero_points", zero_points)

    def forward(self, x):
        w = qd.dequantize_per_channel(
            self.weight, self.scales, self.zero_points, 0, -127, 127, torch.int8
        )
        return torch.nn.functional.linear(x, w)


@pytest.mark.parametrize(
    "module,message",
    [
        (PerTensor(0.0, 0), "scale 0 of 1 is 0.0"),
        (PerTensor(float("inf"), 0), "scale 0 of 1 is inf"),
        (PerTensor(float("nan"), 0), "scale 0 of 1 is nan"),
        (PerTensor(0.1, 200), "zero point 0 of 1 is 200, outside [quant_min, quant_max] = [-128, 127]"),
        (
            PerChannelWeight(torch.tensor([0.1, float("nan"), 0.2]), torch.zeros(3, dtype=torch.long)),
            "scale 1 of 3 is nan",
        ),
        (
            PerChannelWeight(torch.tensor([0.1, 0.1, 0.2]), torch.tensor([0, -128, 0])),
            "zero point 1 of 3 is -128, outside [quant_min, quant_max] = [-127, 127]",
        ),
    ],
    ids=["zero_scale", "inf_scale", "nan_scale", "zero_point", "nan_channel", "channel_zero_point"],
)
def test_constant_qparams_are_checked_at_export(module, message):
    exported = torch.export.export(module, (torch.randn(2, 4),))
    with pytest.raises(QuantizationParameterError) as error:
        to_edge(exported)
    text = str(error.value)
    assert message in text
    # The node and the line of this file that produced it.
    assert "node '" in text and "test_quant_params.py" in text


def test_group_size_that_does_not_divide_the_width_is_refused():
    class Grouped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("weight", torch.randint(-8, 7, (2, 8), dtype=torch.int8))
            self.register_buffer("scales", torch.full((2, 2), 0.1))

        def forward(self, x):
            w = qd.dequantize_per_channel_group(
                self.weight, self.scales, None, -8, 7, torch.int8, 4, torch.float32
            )
            return torch.nn.functional.linear(x, w)

    edge = to_edge(torch.export.export(Grouped(), (torch.randn(1, 8),)))
    program = edge.exported_program()
    # torch.export itself refuses such a call; edit the exported one.
    node = next(n for n in program.graph.nodes if "per_channel_group" in str(n.target))
    node.args = node.args[:6] + (3,) + node.args[7:]
    with pytest.raises(QuantizationParameterError, match="group_size 3 must be > 1 and divide the last dim 8"):
        check_quantization_parameters(program)


def test_qparams_given_at_run_time_are_checked_by_the_kernel():
    class FromInputs(torch.nn.Module):
        def forward(self, x, scale, zero_point):
            q = qd.quantize_per_tensor.tensor(x, scale, zero_point, -128, 127, torch.int8)
            return qd.dequantize_per_tensor.tensor(q, scale, zero_point, -128, 127, torch.int8)

    x = torch.randn(4)
    good = (x, torch.tensor([0.05], dtype=torch.float64), torch.tensor([3]))
    program = to_edge(torch.export.export(FromInputs(), good)).to_executorch()
    module = _load_for_executorch_from_buffer(program.buffer)
    torch.testing.assert_close(module.forward(good)[0], FromInputs()(*good), rtol=0, atol=0)
    bad = (x, torch.tensor([0.0], dtype=torch.float64), torch.tensor([3]))
    with pytest.raises(RuntimeError, match="quantize_per_tensor.Tensor_out: scale 0 is 0"):
        module.forward(bad)
    # The method still works after the failure.
    torch.testing.assert_close(module.forward(good)[0], FromInputs()(*good), rtol=0, atol=0)


def test_torchao_weight_with_a_zero_scale_is_refused_at_export():
    from torchao.quantization import IntxWeightOnlyConfig, quantize_
    from torchao.quantization.granularity import PerGroup

    model = torch.nn.Sequential(torch.nn.Linear(64, 8))
    quantize_(model, IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(32)))
    model[0].weight.scale[3, 1] = 0.0
    exported = torch.export.export(model, (torch.randn(2, 64),))
    with pytest.raises(QuantizationParameterError, match=r"torchao::dequantize_affine.*scale 7 of 16 is 0.0"):
        to_edge(exported)


def _patched(buffer: bytes, old: bytes, new: bytes) -> bytes:
    """`buffer` with its one occurrence of `old` replaced by `new`."""
    assert buffer.count(old) == 1, "the value to corrupt must be unique in the program"
    return buffer.replace(old, new)


@pytest.mark.parametrize(
    "module,old,new,message",
    [
        (PerTensor(0.0123, -77), struct.pack("<d", 0.0123), struct.pack("<d", float("nan")), "quantize_per_tensor.out: scale 0 is nan"),
        (PerTensor(0.0123, -77), struct.pack("<d", 0.0123), struct.pack("<d", 0.0), "quantize_per_tensor.out: scale 0 is 0"),
        (PerTensor(0.0123, -77), struct.pack("<q", -77), struct.pack("<q", 300), "quantize_per_tensor.out: zero point 0 is 300"),
        (
            PerChannelWeight(torch.tensor([0.1, 0.0123, 0.2]), torch.zeros(3, dtype=torch.long)),
            struct.pack("<f", 0.0123),
            struct.pack("<f", float("inf")),
            "weight_only_linear.out: scale 1 is inf",  # to_edge fused dequantize + linear
        ),
    ],
    ids=["nan_scale", "zero_scale", "zero_point", "inf_channel_scale"],
)
def test_hostile_program_qparams_fail_the_load_naming_them(module, old, new, message):
    """A .pte whose qparams were corrupted after export (past the export
    checks): loading the method fails, naming the instruction, the operator
    and the parameter; nothing runs."""
    x = (torch.randn(2, 4),)
    buffer = to_edge(torch.export.export(module, x)).to_executorch().buffer
    good = _load_for_executorch_from_buffer(buffer)
    torch.testing.assert_close(good.forward(x)[0], module(*x), rtol=0, atol=1e-6)
    program = Runtime.get().load_program(_patched(buffer, old, new))
    with pytest.raises(RuntimeError) as error:
        program.load_method("forward")
    text = str(error.value)
    assert message in text, text
    assert "refuses the constant arguments the program gives it" in text, text
