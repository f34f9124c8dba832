"""Hugging Face models built from small configs (random weights), exported
through the default path and XNNPACK and run by our runtime against eager
(fp32: rtol = atol = 1e-4). Each case once failed: YOLOS reshapes a
channels-last interpolation; ConvNeXt converted to channels-last has its
weights emitted in that dim order; BERT with a dynamic sequence length
exports a masked `_safe_softmax` over a dynamic dim."""

import pytest
import torch
from torch.export import Dim

from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
    XnnpackPartitioner,
)
from executorch.exir import to_edge, to_edge_transform_and_lower
from executorch.extension.pybindings.portable_lib import (
    _load_for_executorch_from_buffer,
)

transformers = pytest.importorskip("transformers")

TOL = dict(rtol=1e-4, atol=1e-4)
_IMAGE = (1, 3, 64, 64)
_LAYERS = dict(num_hidden_layers=2, num_attention_heads=4)


def _yolos():
    config = transformers.YolosConfig(
        image_size=[64, 64], patch_size=16, num_detection_tokens=4,
        hidden_size=64, intermediate_size=128, **_LAYERS,
    )
    return transformers.YolosModel(config), [(torch.randn(*_IMAGE),)], None


def _convnext_channels_last():
    config = transformers.ConvNextConfig(
        hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 1, 1]
    )
    model = transformers.ConvNextModel(config).to(memory_format=torch.channels_last)
    x = torch.randn(*_IMAGE).to(memory_format=torch.channels_last)
    return model, [(x,)], None


def _bert_dynamic_length():
    config = transformers.BertConfig(
        vocab_size=1000, hidden_size=64, intermediate_size=128, **_LAYERS
    )
    inputs = [(torch.randint(0, 1000, (1, n)),) for n in (16, 5, 32)]
    return transformers.BertModel(config), inputs, ({1: Dim("seq", max=32)},)


CASES = {
    "yolos": _yolos,
    "convnext_channels_last": _convnext_channels_last,
    "bert_dynamic_length": _bert_dynamic_length,
}


@pytest.mark.parametrize("xnnpack", [False, True], ids=["default", "xnnpack"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_model_runs_like_eager(name, xnnpack):
    torch.manual_seed(0)
    model, inputs, dynamic_shapes = CASES[name]()
    model.eval()
    ep = torch.export.export(
        model, inputs[0], dynamic_shapes=dynamic_shapes, strict=False
    )
    if xnnpack:
        edge = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])
    else:
        edge = to_edge(ep)
    module = _load_for_executorch_from_buffer(edge.to_executorch().buffer)
    for x in inputs:
        with torch.no_grad():
            want = model(*x).last_hidden_state
        torch.testing.assert_close(module.forward(list(x))[0], want, **TOL)
