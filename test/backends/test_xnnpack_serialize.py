"""The XNNPACK blob serializer (upstream ExecuTorch's format): layout, round
trip, named constants, malformed blobs, and the checked-in fixture the C++
tests run (backends/xnnpack/test/fixtures)."""

import hashlib
import os
import struct

import numpy as np
import pytest
import torch

from executorch.backends.xnnpack.serialization.xnnpack_graph_schema import (
    XNN_VALUE_FLAG_EXTERNAL_INPUT,
    XNN_VALUE_FLAG_EXTERNAL_OUTPUT,
    XNNDatatype,
    XNNFullyConnectedT,
    XNodeUnion,
    _XNNNodeConvT,
)
from executorch.backends.xnnpack.serialization.xnnpack_graph_serialize import (
    CONSTANT_ALIGNMENT,
    FILE_IDENTIFIER,
    HEADER_MAGIC,
    HEADER_SIZE,
    NAMED_OFFSET,
    XnnpackGraphBuilder,
    deserialize_xnnpack_blob,
    serialize_xnnpack_blob,
)

FIXTURE = os.path.join(
    os.path.dirname(__file__),
    "..",
    "..",
    "backends",
    "xnnpack",
    "test",
    "fixtures",
    "linear_relu.xnb",
)


def linear_relu_blob() -> bytes:
    """x [2, 3] -> linear(3 -> 4) with relu -> y [2, 4]; weights and bias
    are arange-based so the C++ test can recompute them."""
    b = XnnpackGraphBuilder()
    x = b.add_tensor([2, 3], external_input=0)
    w = b.add_constant(torch.arange(12, dtype=torch.float32).reshape(4, 3) / 10 - 0.5)
    bias = b.add_constant(torch.tensor([0.5, -0.5, 0.25, -0.25]))
    y = b.add_tensor([2, 4], external_output=1)
    table = XNNFullyConnectedT()
    table.input1Id, table.filterId, table.biasId, table.outputId = x, w, bias, y
    b.add_node(XNodeUnion.XNNFullyConnected, table, output_min_max=(0.0, float("inf")))
    return b.build()


def _header(blob: bytes):
    return struct.unpack_from("<4s4sHIIIQ", blob, 0)


def test_header_locates_aligned_parts():
    blob = linear_relu_blob()
    _, magic, header_size, fb_offset, fb_size, const_offset, const_size = _header(blob)
    assert magic == HEADER_MAGIC
    assert header_size == HEADER_SIZE == 30
    assert fb_offset % 16 == 0 and fb_offset >= header_size
    assert blob[fb_offset + 4 : fb_offset + 8] == FILE_IDENTIFIER == b"XN01"
    assert const_offset >= fb_offset + fb_size
    assert len(blob) == const_offset + const_size


def test_round_trip_keeps_values_nodes_and_constants():
    weight = torch.randn(8, 3, 3, 3)
    b = XnnpackGraphBuilder()
    x = b.add_tensor([1, 5, 5, 3], external_input=0)
    w = b.add_constant(weight)
    y = b.add_tensor([1, 5, 5, 8], external_output=1)
    conv = _XNNNodeConvT()
    conv.paddingTop = conv.paddingBottom = conv.paddingLeft = conv.paddingRight = 1
    conv.kernelHeight = conv.kernelWidth = 3
    conv.subsamplingHeight = conv.subsamplingWidth = 1
    conv.dilationHeight = conv.dilationWidth = 1
    conv.groups, conv.groupInputChannels, conv.groupOutputChannels = 1, 3, 8
    conv.input1Id, conv.filterId, conv.biasId, conv.outputId = x, w, 0xFFFFFFFF, y
    b.add_node(XNodeUnion.XNNConv2d, conv, output_min_max=(0.0, 6.0))

    graph = deserialize_xnnpack_blob(b.build())
    parsed, constant_data = graph.graph, graph.constant_data
    values = [v.xvalueUnion for v in parsed.xvalues]
    assert [list(v.dims) for v in values] == [[1, 5, 5, 3], [8, 3, 3, 3], [1, 5, 5, 8]]
    assert [v.idOut for v in values] == [0, 1, 2]
    assert values[0].flags == XNN_VALUE_FLAG_EXTERNAL_INPUT
    assert values[2].flags == XNN_VALUE_FLAG_EXTERNAL_OUTPUT
    assert values[2].externalId == 1
    assert list(parsed.inputIds) == [0] and list(parsed.outputIds) == [2]
    assert parsed.numExterns == 2
    assert values[1].datatype == XNNDatatype.xnn_datatype_fp32
    entry = parsed.constantData[values[1].constantBufferIdx]
    stored = np.frombuffer(
        constant_data[entry.offset : entry.offset + entry.size], dtype=np.float32
    )
    np.testing.assert_array_equal(stored, weight.numpy().reshape(-1))

    (node,) = parsed.xnodes
    assert node.xnodeUnionType == XNodeUnion.XNNConv2d
    assert node.xnodeUnion.kernelHeight == 3 and node.xnodeUnion.groups == 1
    assert node.xnodeUnion.filterId == w
    assert (node.outputMinMax.outputMin, node.outputMinMax.outputMax) == (0.0, 6.0)


def test_constants_are_aligned_and_entry_zero_is_unused():
    b = XnnpackGraphBuilder()
    for n in (1, 3, 17):
        b.add_constant(torch.ones(n))
    parsed = deserialize_xnnpack_blob(b.build()).graph
    assert parsed.constantData[0].size == 0
    assert all(e.offset % CONSTANT_ALIGNMENT == 0 for e in parsed.constantData[1:])
    assert [v.xvalueUnion.constantBufferIdx for v in parsed.xvalues] == [1, 2, 3]


class _RecordingStore:
    """Stands in for exir's NamedDataStore: records add_named_data calls."""

    def __init__(self):
        self.calls = []

    def add_named_data(self, key, data, alignment, external_tag):
        self.calls.append((key, bytes(data), alignment, external_tag))


def test_named_constants_are_keyed_by_content_and_left_out_of_the_blob():
    store = _RecordingStore()
    b = XnnpackGraphBuilder(store, external_tag="weights")
    weight = torch.randn(4, 3)
    b.add_constant(weight)
    blob = b.build()
    parsed = deserialize_xnnpack_blob(blob)
    (entry,) = parsed.graph.constantData[1:]
    data = weight.numpy().tobytes()
    assert entry.offset == NAMED_OFFSET and entry.size == len(data)
    assert entry.namedKey.decode() == hashlib.sha256(data).hexdigest()
    key = entry.namedKey.decode()
    assert store.calls == [(key, data, CONSTANT_ALIGNMENT, "weights")]
    assert parsed.constant_data == b""


def test_rejects_unsupported_constant_dtype():
    with pytest.raises(ValueError, match="unsupported constant dtype"):
        XnnpackGraphBuilder().add_constant(torch.zeros(3, dtype=torch.int64))


def test_rejects_value_both_input_and_output():
    with pytest.raises(ValueError, match="either"):
        XnnpackGraphBuilder().add_tensor([1], external_input=0, external_output=1)


@pytest.mark.parametrize(
    "corrupt, message",
    [
        (lambda b: b[:20], "shorter than the header"),
        (
            lambda b: b[:10] + struct.pack("<I", len(b)) + b[14:],
            "flatbuffer .* outside the blob",
        ),
        (
            lambda b: b[:22] + struct.pack("<Q", len(b)) + b[30:],
            "constant data .* outside the blob",
        ),
        # Without the header magic the blob is read as a bare flatbuffer.
        (lambda b: b[:4] + b"YH00" + b[8:], "identifier"),
    ],
)
def test_malformed_blobs_raise(corrupt, message):
    with pytest.raises(ValueError, match=message):
        deserialize_xnnpack_blob(corrupt(linear_relu_blob()))


def test_wrong_identifier_raises():
    blob = bytearray(linear_relu_blob())
    fb_offset = _header(blob)[3]
    blob[fb_offset + 4 : fb_offset + 8] = b"NOPE"
    with pytest.raises(ValueError, match="identifier"):
        deserialize_xnnpack_blob(bytes(blob))


def test_serialize_of_parsed_graph_is_stable():
    blob = linear_relu_blob()
    parsed = deserialize_xnnpack_blob(blob)
    assert serialize_xnnpack_blob(parsed.graph, parsed.constant_data) == blob


def test_checked_in_fixture_matches_serializer():
    """The C++ test runs this fixture, so the serializer's layout and the
    runtime's parser are tested against each other. Regenerate with
    `python test/backends/test_xnnpack_serialize.py` after a format change."""
    with open(FIXTURE, "rb") as f:
        assert f.read() == linear_relu_blob()


if __name__ == "__main__":
    with open(FIXTURE, "wb") as f:
        f.write(linear_relu_blob())
