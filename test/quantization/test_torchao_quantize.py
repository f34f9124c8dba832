"""Weight-only and LLM-style schemes from torchao's `quantize_` (the configs
upstream's LLM flow uses): int8 and 4-bit group-wise (32/64/128) weight-only
linears and embeddings, 8-bit dynamic activations with 4- or 8-bit weights
(8da4w, 8da8w). Exported with `to_edge`, they run on the et_quantized
linear kernels and upstream's embedding operators with packed weights, and
match the quantized model run by torch.

Tolerance: the kernels compute what torch computes (the same dequantized
weights; for dynamic activations the same int8 values and parameters) and
differ only in float summation order, so outputs agree to 1e-5 of their
largest magnitude.
"""

import pytest
import torch
from torchao.quantization import (
    Int8DynamicActivationIntxWeightConfig,
    IntxWeightOnlyConfig,
    quantize_,
)
from torchao.quantization.granularity import PerAxis, PerGroup

from executorch.exir import EdgeCompileConfig, to_edge
from executorch.exir._serialize._program import (
    deserialize_pte_binary,
    serialize_pte_binary,
)
from executorch.extension.pybindings.portable_lib import (
    _load_for_executorch_from_buffer,
)
from executorch.runtime import Runtime


class TinyLM(torch.nn.Module):
    """Token embedding, a two-layer MLP block with a residual, a head."""

    def __init__(self, vocab=256, width=128, hidden=256):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, width)
        self.up = torch.nn.Linear(width, hidden)
        self.down = torch.nn.Linear(hidden, width, bias=False)
        self.head = torch.nn.Linear(width, vocab)

    def forward(self, tokens):
        x = self.embed(tokens)
        x = x + self.down(torch.nn.functional.gelu(self.up(x)))
        return self.head(x)


TOKENS = (torch.randint(0, 256, (2, 9), generator=torch.Generator().manual_seed(0)),)


def is_linear(module, fqn):
    return isinstance(module, torch.nn.Linear)


def is_embedding(module, fqn):
    return isinstance(module, torch.nn.Embedding)


def quantized_model(config, filter_fn):
    torch.manual_seed(0)
    model = TinyLM().eval()
    quantize_(model, config, filter_fn=filter_fn)
    return model


def run(model, fuse=True):
    edge = to_edge(
        torch.export.export(model, TOKENS),
        compile_config=EdgeCompileConfig(fuse_quantized_weights=fuse),
    )
    program = edge.to_executorch()
    output = _load_for_executorch_from_buffer(program.buffer).forward(TOKENS)[0]
    return output, program


def check(model, fused_operator, fuse=True):
    expected = model(*TOKENS)
    actual, program = run(model, fuse)
    atol = 1e-5 * expected.abs().max().item()
    torch.testing.assert_close(actual, expected, atol=atol, rtol=0)
    assert (fused_operator in program.dump_program()) == fuse
    return program


@pytest.mark.parametrize("group", [32, 64, 128])
def test_int4_weight_only_linear(group):
    config = IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(group))
    check(quantized_model(config, is_linear), "et_quantized::weight_only_linear")


def test_int8_weight_only_linear_per_channel():
    config = IntxWeightOnlyConfig(weight_dtype=torch.int8, granularity=PerAxis(0))
    check(quantized_model(config, is_linear), "et_quantized::weight_only_linear")


@pytest.mark.parametrize("group", [32, 64, 128])
def test_8da4w_linear(group):
    config = Int8DynamicActivationIntxWeightConfig(
        weight_dtype=torch.int4, weight_granularity=PerGroup(group)
    )
    check(quantized_model(config, is_linear), "et_quantized::dynamic_int8_linear_panels")


def test_a_program_of_the_row_layout_linear_is_refused_at_load():
    """Programs of earlier releases name the dynamic linear
    et_quantized::dynamic_int8_linear and store its weights in rows, which
    the panel kernel would misread (4-bit rows have the panels' shape and
    dtype): loading one fails, saying to re-export. Made here by renaming the
    operator of a current program back."""
    config = Int8DynamicActivationIntxWeightConfig(
        weight_dtype=torch.int4, weight_granularity=PerGroup(32)
    )
    _, program = run(quantized_model(config, is_linear))
    pte = deserialize_pte_binary(program.buffer)
    renamed = 0
    for operator in pte.program.executionPlan[0].operators:
        name = operator.name.decode() if isinstance(operator.name, bytes) else operator.name
        if name == "et_quantized::dynamic_int8_linear_panels":
            operator.name = "et_quantized::dynamic_int8_linear"
            renamed += 1
    assert renamed == 1
    old = Runtime.get().load_program(serialize_pte_binary(pte.program, pte.constant_data))
    with pytest.raises(RuntimeError) as error:
        old.load_method("forward")
    text = str(error.value)
    assert "stores the linear's weights in rows" in text and "re-export" in text, text


def test_8da8w_linear():
    config = Int8DynamicActivationIntxWeightConfig(
        weight_dtype=torch.int8, weight_granularity=PerAxis(0)
    )
    check(quantized_model(config, is_linear), "et_quantized::dynamic_int8_linear_panels")


@pytest.mark.parametrize(
    "dtype,granularity,operator",
    [
        (torch.int4, PerGroup(32), "embedding_4bit.dtype_out"),
        (torch.int8, PerAxis(0), "embedding_byte.dtype_out"),
        (torch.int2, PerGroup(64), "embedding_2bit.dtype_out"),
    ],
)
def test_quantized_embedding(dtype, granularity, operator):
    config = IntxWeightOnlyConfig(weight_dtype=dtype, granularity=granularity)
    check(quantized_model(config, is_embedding), operator)


def test_unfused_program_runs_on_portable_operators():
    """fuse_quantized_weights=False: torch's decomposition, no et_quantized
    operator (the program upstream's runtime can also run)."""
    config = Int8DynamicActivationIntxWeightConfig(
        weight_dtype=torch.int4, weight_granularity=PerGroup(32)
    )
    program = check(quantized_model(config, is_linear), "et_quantized::", fuse=False)
    assert "quantized_decomposed" not in program.dump_program()


def test_four_bit_and_int8_program_sizes():
    """Weights dominate TinyLM (~130K values): 4-bit group-128 programs must
    be <= 0.16x the fp32 one, int8 ones <= 0.27x."""
    torch.manual_seed(0)
    fp32 = len(run(TinyLM().eval())[1].buffer)
    int4 = IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(128))
    int8 = IntxWeightOnlyConfig(weight_dtype=torch.int8, granularity=PerAxis(0))
    everything = lambda m, fqn: is_linear(m, fqn) or is_embedding(m, fqn)  # noqa: E731
    four_bit = len(run(quantized_model(int4, everything))[1].buffer)
    eight_bit = len(run(quantized_model(int8, everything))[1].buffer)
    assert four_bit / fp32 <= 0.16, f"4-bit: {four_bit / fp32:.3f}x fp32"
    assert eight_bit / fp32 <= 0.27, f"int8: {eight_bit / fp32:.3f}x fp32"
