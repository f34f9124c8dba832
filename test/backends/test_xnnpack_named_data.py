"""Delegate weights as the program's named data (upstream's NamedDataStore
and `.pte` named_data segments): stored once by content, read by our
runtime's XnnpackBackend through NamedDataMap, and a missing key is a clear
load error."""

import hashlib

import pytest
import torch

from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
    XnnpackPartitioner,
)
from executorch.backends.xnnpack.serialization.xnnpack_graph_serialize import (
    NAMED_OFFSET,
    deserialize_xnnpack_blob,
)
from executorch.exir import to_edge_transform_and_lower
from executorch.exir._serialize._named_data_store import NamedDataStore
from executorch.exir._serialize._program import deserialize_pte_binary


def _lower(model, inputs) -> bytes:
    ep = torch.export.export(model.eval(), inputs)
    edge = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])
    return edge.to_executorch().buffer


def _run(pte: bytes, inputs):
    from executorch.extension.pybindings.portable_lib import (
        _load_for_executorch_from_buffer,
    )

    return _load_for_executorch_from_buffer(pte).forward(list(inputs))


def test_store_keeps_identical_bytes_once_and_rejects_a_reused_key():
    store = NamedDataStore()
    store.add_named_data("a", b"\x01\x02\x03\x04", 4)
    store.add_named_data("b", b"\x01\x02\x03\x04", 16)
    store.add_named_data("a", b"\x01\x02\x03\x04")
    store.add_named_data("c", b"\x05", external_tag="weights")
    output = store.get_named_data_store_output()
    assert output.pte_data == {"a": 0, "b": 0}
    assert output.external_data == {"weights": {"c": 1}}
    assert [(e.buffer, e.alignment) for e in output.buffers] == [
        (b"\x01\x02\x03\x04", 16),
        (b"\x05", 1),
    ]
    with pytest.raises(ValueError, match="'a' in the .pte is already stored"):
        store.add_named_data("a", b"\x09")
    with pytest.raises(ValueError, match="not a power of 2"):
        store.add_named_data("d", b"\x09", 3)


class TwoLinears(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = torch.nn.Linear(16, 16)
        self.second = torch.nn.Linear(16, 16)
        # Identical weights in two layers, as after deep-copying a layer.
        self.second.load_state_dict(self.first.state_dict())

    def forward(self, x):
        return self.second(torch.relu(self.first(x)))


def test_delegate_weights_are_named_data_stored_once_by_content():
    model, x = TwoLinears(), torch.randn(3, 16)
    pte_bytes = _lower(model, (x,))
    pte = deserialize_pte_binary(pte_bytes)
    weight = model.first.weight.detach().numpy().tobytes()
    bias = model.first.bias.detach().numpy().tobytes()
    # One weight and one bias for both layers, each under the SHA-256 of
    # its bytes (as laid out for XNNPACK).
    assert sorted(map(len, pte.named_data.values())) == [len(bias), len(weight)]
    for key, data in pte.named_data.items():
        assert key == hashlib.sha256(data).hexdigest()
    (delegate,) = pte.program.executionPlan[0].delegates
    blob = deserialize_xnnpack_blob(pte.segments[delegate.processed.index])
    assert blob.constant_data == b""
    entries = blob.graph.constantData[1:]
    assert entries and all(e.offset == NAMED_OFFSET for e in entries)
    # The weights are in the file once: twice would take 2 * 1024 bytes more.
    assert len(pte_bytes) < 2 * len(weight) + 2048
    with torch.no_grad():
        want = model(x)
    torch.testing.assert_close(_run(pte_bytes, (x,))[0], want, rtol=1e-5, atol=1e-5)


def test_missing_named_data_fails_the_load_naming_the_key():
    model, x = TwoLinears(), torch.randn(3, 16)
    pte_bytes = bytearray(_lower(model, (x,)))
    pte = deserialize_pte_binary(bytes(pte_bytes))
    key = sorted(pte.named_data)[0].encode()
    # Renames the key in the program's named_data table (the flatbuffer comes
    # before the segments), leaving the blob's reference dangling.
    end = pte.header.segment_base_offset
    at = bytes(pte_bytes[:end]).index(key)
    pte_bytes[at : at + 4] = b"zzzz"
    with pytest.raises(RuntimeError) as error:
        _run(bytes(pte_bytes), (x,))
    assert f"constant '{key.decode()}' is not in the named data" in str(error.value)
    assert "NotFound" in str(error.value)
