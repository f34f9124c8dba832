"""The XNNPACK blob serializer: layout, round trip, malformed blobs, and the
checked-in fixture the C++ tests run (backends/xnnpack/test/fixtures)."""

import os
import struct

import numpy as np
import pytest
import torch

from executorch.backends.xnnpack.serialization.xnnpack_graph_schema import (
    Conv2dParamsT,
    DataType,
    FullyConnectedParamsT,
    NodeKind,
    NodeParams,
    ValueFlags,
)
from executorch.backends.xnnpack.serialization.xnnpack_graph_serialize import (
    BLOB_MAGIC,
    CONSTANT_ALIGNMENT,
    HEADER_SIZE,
    TRAILING_PADDING,
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
    bias = b.add_constant(np.array([0.5, -0.5, 0.25, -0.25], dtype=np.float32))
    y = b.add_tensor([2, 4], external_output=1)
    b.add_node(
        NodeKind.fully_connected,
        [x, w, bias],
        [y],
        FullyConnectedParamsT(),
        clamp=(0.0, float("inf")),
    )
    return b.build()


def test_header_locates_aligned_parts():
    blob = linear_relu_blob()
    magic, header_size, fb_offset, fb_size, const_offset, const_size = (
        struct.unpack_from("<4sIQQQQ", blob, 0)
    )
    assert magic == BLOB_MAGIC
    assert header_size == HEADER_SIZE
    assert fb_offset % 16 == 0 and fb_offset >= header_size
    assert blob[fb_offset + 4 : fb_offset + 8] == b"XG01"
    assert const_offset % CONSTANT_ALIGNMENT == 0
    assert const_offset >= fb_offset + fb_size
    assert len(blob) == const_offset + const_size + TRAILING_PADDING


def test_round_trip_keeps_values_nodes_and_constants():
    weight = torch.randn(8, 3, 3, 3)
    b = XnnpackGraphBuilder()
    x = b.add_tensor([1, 5, 5, 3], external_input=0)
    w = b.add_constant(weight)
    y = b.add_tensor([1, 5, 5, 8], external_output=1)
    params = Conv2dParamsT()
    params.paddingTop = params.paddingBottom = 1
    params.paddingLeft = params.paddingRight = 1
    params.kernelHeight = params.kernelWidth = 3
    params.groupInputChannels = 3
    params.groupOutputChannels = 8
    b.add_node(NodeKind.conv2d, [x, w], [y], params, clamp=(0.0, 6.0))

    parsed = deserialize_xnnpack_blob(b.build())
    values = parsed.graph.values
    assert [list(v.dims) for v in values] == [[1, 5, 5, 3], [8, 3, 3, 3], [1, 5, 5, 8]]
    assert values[0].flags == ValueFlags.external_input
    assert values[2].flags == ValueFlags.external_output
    assert values[2].externalIndex == 1
    assert values[1].datatype == DataType.fp32
    ref = values[1].constant
    stored = np.frombuffer(
        parsed.constant_data[ref.offset : ref.offset + ref.size], dtype=np.float32
    )
    np.testing.assert_array_equal(stored, weight.numpy().reshape(-1))

    (node,) = parsed.graph.nodes
    assert node.kind == NodeKind.conv2d
    assert node.paramsType == NodeParams.Conv2dParams
    assert node.params.kernelHeight == 3 and node.params.groups == 1
    assert (node.clamp.min, node.clamp.max) == (0.0, 6.0)


def test_constants_are_aligned():
    b = XnnpackGraphBuilder()
    for n in (1, 3, 17):
        b.add_constant(np.ones(n, dtype=np.float32))
    parsed = deserialize_xnnpack_blob(b.build())
    assert all(v.constant.offset % CONSTANT_ALIGNMENT == 0 for v in parsed.graph.values)


def test_rejects_unsupported_constant_dtype():
    with pytest.raises(ValueError, match="unsupported constant dtype"):
        XnnpackGraphBuilder().add_constant(np.zeros(3, dtype=np.int64))


def test_dynamic_dims_round_trip_on_inputs_only():
    builder = XnnpackGraphBuilder()
    x = builder.add_tensor([8, 3], external_input=0, dynamic_dims=[0])
    builder.add_tensor([8, 3], external_output=1)
    values = deserialize_xnnpack_blob(builder.build()).graph.values
    assert list(values[x].dynamicDims) == [0]
    assert values[x + 1].dynamicDims is None
    with pytest.raises(ValueError, match="only external inputs"):
        builder.add_tensor([8, 3], dynamic_dims=[0])


def test_rejects_value_both_input_and_output():
    with pytest.raises(ValueError, match="either"):
        XnnpackGraphBuilder().add_tensor([1], external_input=0, external_output=1)


@pytest.mark.parametrize(
    "corrupt, message",
    [
        (lambda b: b"YNB1" + b[4:], "bad blob magic"),
        (lambda b: b[:20], "shorter than the header"),
        (
            lambda b: b[:16] + struct.pack("<Q", len(b)) + b[24:],
            "flatbuffer .* outside the blob",
        ),
        (
            lambda b: b[:32] + struct.pack("<Q", len(b)) + b[40:],
            "constant data .* outside the blob",
        ),
    ],
)
def test_malformed_blobs_raise(corrupt, message):
    with pytest.raises(ValueError, match=message):
        deserialize_xnnpack_blob(corrupt(linear_relu_blob()))


def test_wrong_identifier_raises():
    blob = bytearray(linear_relu_blob())
    fb_offset = struct.unpack_from("<Q", blob, 8)[0]
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
