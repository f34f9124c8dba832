"""Quantized programs exported by upstream ExecuTorch (its XNNPACKQuantizer,
torchao's PT2E, its `to_edge(...).to_executorch()` with the portable and
quantized kernels) run on our runtime and match the quantized reference,
computed by torch in upstream's environment.

Covers static int8 per tensor and per channel (conv, batch norm, ReLU,
pooling, linear, add), dynamic int8 linears (choose_qparams per call), and
upstream's 8- and 4-bit embedding operators with their packed tables.
Needs upstream ExecuTorch (the `upstream_python` fixture); skipped
without it. One upstream process exports every program.
"""

import subprocess
import textwrap

import pytest
import torch

from executorch.extension.pybindings.portable_lib import (
    _load_for_executorch_from_buffer,
)

_EXPORT = textwrap.dedent("""
    import sys
    import torch
    import executorch.kernels.quantized  # noqa: F401 (out variants)
    from executorch.exir.passes import _quant_patterns_and_replacements  # noqa: F401
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer, get_symmetric_quantization_config)
    from executorch.exir import to_edge
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    out = sys.argv[1]
    torch.manual_seed(0)

    class Cnn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.bn = torch.nn.BatchNorm2d(8)
            self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1)
            self.fc = torch.nn.Linear(8, 5)

        def forward(self, x):
            y = torch.relu(self.bn(self.conv(x)))
            y = torch.nn.functional.max_pool2d(y, 2)
            y = y + torch.relu(self.conv2(y))
            y = torch.nn.functional.adaptive_avg_pool2d(y, 1).flatten(1)
            return self.fc(y)

    class Embeddings(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("w8", torch.randint(-128, 127, (20, 16), dtype=torch.int8))
            self.register_buffer("s8", torch.rand(20) * 0.1 + 0.01)
            self.register_buffer("w4", torch.randint(0, 255, (20, 8), dtype=torch.uint8))
            self.register_buffer("s4", torch.rand(20, 2) * 0.1 + 0.01)
            self.register_buffer("z4", torch.randint(-3, 3, (20, 2)).float())

        def forward(self, idx):
            qd = torch.ops.quantized_decomposed
            a = qd.embedding_byte.default(self.w8, self.s8, None, -128, 127, idx)
            b = qd.embedding_4bit.dtype(self.w4, self.s4, self.z4, -8, 7, idx, dtype=torch.float32)
            return torch.cat([a, b], -1)

    def output_step(module):
        # The scale of the output's dequantize (one quantization step).
        if not isinstance(module, torch.fx.GraphModule):
            return None
        output = next(n for n in module.graph.nodes if n.op == "output").args[0][0]
        scale = output.args[1] if "dequantize_per_tensor" in str(output.target) else None
        return scale if isinstance(scale, float) else None

    def save(name, module, inputs):
        program = to_edge(torch.export.export(module, inputs)).to_executorch()
        program.save(f"{out}/{name}.pte")
        torch.save({"inputs": inputs, "expected": module(*inputs),
                    "step": output_step(module)}, f"{out}/{name}.pt")

    x = torch.randn(2, 3, 16, 16)
    for name, config in [
        ("static_per_tensor", get_symmetric_quantization_config()),
        ("static_per_channel", get_symmetric_quantization_config(is_per_channel=True)),
        ("dynamic", get_symmetric_quantization_config(is_per_channel=True, is_dynamic=True)),
    ]:
        graph = torch.export.export(Cnn().eval(), (x,)).module()
        prepared = prepare_pt2e(graph, XNNPACKQuantizer().set_global(config))
        prepared(torch.randn(2, 3, 16, 16))
        prepared(x)
        save(name, convert_pt2e(prepared), (x,))
    save("embeddings", Embeddings(), (torch.tensor([[0, 19, 7], [3, 3, 11]]),))
    """)

NAMES = ["static_per_tensor", "static_per_channel", "dynamic", "embeddings"]


@pytest.fixture(scope="module")
def upstream_programs(upstream_python, tmp_path_factory):
    out = tmp_path_factory.mktemp("upstream_quantized")
    subprocess.run([upstream_python, "-c", _EXPORT, str(out)], check=True, cwd="/")
    return out


@pytest.mark.parametrize("name", NAMES)
def test_upstream_quantized_program_runs_on_our_runtime(upstream_programs, name):
    pte = (upstream_programs / f"{name}.pte").read_bytes()
    case = torch.load(upstream_programs / f"{name}.pt")
    actual = _load_for_executorch_from_buffer(pte).forward(case["inputs"])[0]
    expected = case["expected"]
    # Same arithmetic as the reference (quantize/dequantize and embeddings
    # bit for bit); the fp32 convolutions between them may sum in another
    # order, which can move a static model's quantized output by one step,
    # or a dynamic model's fp32 output by float rounding.
    step = case["step"]
    atol = step * 1.001 if step is not None else 1e-5 * expected.abs().max().item()
    assert ("static" in name) == (step is not None)
    torch.testing.assert_close(actual, expected, atol=atol, rtol=0)
