"""External data files (.ptd, upstream's flat tensor format): programs whose
constants, or whose delegates' weights, live outside the `.pte`.

Export side here: what goes to which file and the file's bytes against the
weights. Running them on our runtime and on upstream's (and upstream's on
ours): test/runtime_py/test_external_data.py and the C++
extension_flat_tensor_test.
"""

import pytest
import torch

from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.exir._serialize._program import deserialize_pte_binary
from executorch.exir.passes.external_constants_pass import (
    DEFAULT_EXTERNAL_CONSTANT_TAG,
)
from executorch.extension.flat_tensor.serialize.serialize import (
    deserialize_ptd,
    FlatTensorHeader,
)


class TwoLayers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.encoder = torch.nn.Linear(32, 64)
        self.decoder = torch.nn.Linear(64, 8)

    def forward(self, x):
        # The literal stays in the .pte (a lifted constant, part of the code).
        return self.decoder(torch.relu(self.encoder(x))) * torch.tensor([2.0])


INPUTS = (torch.randn(3, 32),)


def _export(config=None):
    ep = torch.export.export(TwoLayers().eval(), INPUTS)
    return to_edge(ep).to_executorch(config or ExecutorchBackendConfig())


@pytest.fixture(scope="module")
def external():
    return _export(ExecutorchBackendConfig(external_constants=True))


def test_constants_go_to_the_ptd_by_fully_qualified_name(external):
    state = TwoLayers().state_dict()
    assert list(external.data_files) == [DEFAULT_EXTERNAL_CONSTANT_TAG]
    ptd = deserialize_ptd(external.data_files[DEFAULT_EXTERNAL_CONSTANT_TAG])
    assert sorted(ptd.named_data) == sorted(state)
    for name, tensor in state.items():
        assert ptd.named_data[name] == tensor.numpy().tobytes()
        layout = ptd.tensor_layouts[name]
        assert layout.sizes == list(tensor.shape)
        assert layout.dim_order == list(range(tensor.dim()))
    # The program refers to them by name, with no data of its own.
    (plan,) = deserialize_pte_binary(external.buffer).program.executionPlan
    external_names = {
        v.val.extraTensorInfo.fullyQualifiedName.decode()
        for v in plan.values
        if getattr(v.val, "extraTensorInfo", None) is not None
    }
    assert external_names == set(state)


def test_the_pte_alone_is_small(external):
    # The same pipeline (external_constants turns constant folding off) with
    # every constant kept in the .pte.
    inline = _export(ExecutorchBackendConfig(external_constants=lambda node: None))
    weight_bytes = sum(t.numel() * 4 for t in TwoLayers().state_dict().values())
    # All but the names (and table entries) of the weights left the .pte.
    assert len(inline.buffer) - len(external.buffer) >= 0.95 * weight_bytes
    assert len(external.buffer) < weight_bytes / 3
    assert inline.data_files == {}


def test_a_tag_function_splits_files_and_none_keeps_constants_inline():
    def tag(node):
        if "encoder" in node.name:
            return "encoder"
        return None if "bias" in node.name else "decoder"

    manager = _export(ExecutorchBackendConfig(external_constants=tag))
    files = {k: deserialize_ptd(v) for k, v in manager.data_files.items()}
    assert sorted(files["encoder"].named_data) == ["encoder.bias", "encoder.weight"]
    assert sorted(files["decoder"].named_data) == ["decoder.weight"]


def test_write_tensor_data_to_file(external, tmp_path):
    external.write_tensor_data_to_file(str(tmp_path))
    path = tmp_path / f"{DEFAULT_EXTERNAL_CONSTANT_TAG}.ptd"
    assert path.read_bytes() == external.data_files[DEFAULT_EXTERNAL_CONSTANT_TAG]


def test_layout_of_a_file():
    data = _export(ExecutorchBackendConfig(external_constants=True)).data_files[
        DEFAULT_EXTERNAL_CONSTANT_TAG
    ]
    assert data[4:8] == b"FT01"
    header = FlatTensorHeader.from_bytes(data)
    # Segments start 128-aligned after the flatbuffer, and end the file.
    assert header.segment_base_offset % 128 == 0
    assert header.segment_base_offset >= header.flatbuffer_offset + header.flatbuffer_size
    assert header.segment_base_offset + header.segment_data_size == len(data)


@pytest.mark.parametrize(
    "corrupt, message",
    [
        (lambda d: d[:4] + b"XXXX" + d[8:], "file identifier"),
        (lambda d: d[:8] + b"XX01" + d[12:], "FH01"),
        (lambda d: d[:-4], "ends past the end"),
    ],
)
def test_malformed_files_are_refused(external, corrupt, message):
    data = external.data_files[DEFAULT_EXTERNAL_CONSTANT_TAG]
    with pytest.raises(ValueError, match=message):
        deserialize_ptd(corrupt(data))


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.net = torch.nn.Sequential(
            torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)
        )

    def forward(self, x):
        return self.net(x)


@pytest.fixture(scope="module")
def delegated():
    """Mlp lowered to XNNPACK with its weights tagged for "model.ptd" the
    way upstream does it: tag the unlifted module's weights, export again
    (strict, which carries the tags to the placeholders)."""
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
        XnnpackPartitioner,
    )
    from executorch.exir import to_edge_transform_and_lower
    from executorch.exir.passes.external_constants_pass import (
        delegate_external_constants_pass_unlifted,
    )

    inputs = (torch.randn(2, 16),)
    unlifted = torch.export.export(Mlp().eval(), inputs, strict=True).module()
    delegate_external_constants_pass_unlifted(unlifted, lambda node: "model")
    ep = torch.export.export(unlifted, inputs, strict=True)
    lowered = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])
    return lowered.to_executorch()


def test_tagged_delegate_weights_go_to_the_ptd_by_content_hash(delegated):
    import hashlib

    assert list(delegated.data_files) == ["model"]
    ptd = deserialize_ptd(delegated.data_files["model"])
    # Four weights (XNNPACK's layout of each), keyed by their SHA-256.
    assert len(ptd.named_data) == 4
    for key, data in ptd.named_data.items():
        assert key == hashlib.sha256(data).hexdigest()
    assert deserialize_pte_binary(delegated.buffer).named_data == {}
    weight_bytes = sum(t.numel() * 4 for t in Mlp().state_dict().values())
    assert len(delegated.buffer) < weight_bytes
