"""Serializes an XNNPACK graph and its constant tensors into the delegate
blob that the runtime backend (backends/xnnpack/runtime) loads, and parses a
blob back.

Blob layout, all integers little-endian:

    offset  size  field
    0       4     magic b"XNB1"
    4       4     header size in bytes (40; readers accept larger headers)
    8       8     flatbuffer offset
    16      8     flatbuffer size
    24      8     constant data offset
    32      8     constant data size
    ...           flatbuffer (xnnpack_graph.fbs, identifier "XG01"),
                  aligned to FLATBUFFER_ALIGNMENT
    ...           constant data, aligned to CONSTANT_ALIGNMENT; a constant
                  value's ConstantRef.offset is relative to its start and is
                  itself aligned to CONSTANT_ALIGNMENT
    ...           TRAILING_PADDING zero bytes

The trailing padding lets XNNPACK read constants in place: its kernels may
read up to 16 bytes (XNN_EXTRA_BYTES) past the end of a tensor.
"""

import struct
from dataclasses import dataclass
from typing import Optional, Sequence

import flatbuffers
import numpy as np

from executorch.backends.xnnpack.serialization.xnnpack_graph_schema import (
    ConcatenateParamsT,
    ConstantPadParamsT,
    ConstantRefT,
    Conv2dParamsT,
    DataType,
    FullyConnectedParamsT,
    GeluParamsT,
    Graph,
    GraphT,
    LayerNormParamsT,
    NodeParams,
    NodeT,
    OutputClampT,
    Pool2dParamsT,
    ReshapeParamsT,
    ResizeBilinear2dParamsT,
    ScalarParamsT,
    SliceParamsT,
    TransposeParamsT,
    ValueFlags,
    ValueT,
)

BLOB_MAGIC = b"XNB1"
FILE_IDENTIFIER = b"XG01"
_HEADER = struct.Struct("<4sIQQQQ")
HEADER_SIZE = _HEADER.size
FLATBUFFER_ALIGNMENT = 16
CONSTANT_ALIGNMENT = 64
TRAILING_PADDING = 16

_PARAMS_TYPES = {
    Conv2dParamsT: NodeParams.Conv2dParams,
    Pool2dParamsT: NodeParams.Pool2dParams,
    FullyConnectedParamsT: NodeParams.FullyConnectedParams,
    ScalarParamsT: NodeParams.ScalarParams,
    GeluParamsT: NodeParams.GeluParams,
    ConcatenateParamsT: NodeParams.ConcatenateParams,
    TransposeParamsT: NodeParams.TransposeParams,
    ReshapeParamsT: NodeParams.ReshapeParams,
    SliceParamsT: NodeParams.SliceParams,
    ConstantPadParamsT: NodeParams.ConstantPadParams,
    ResizeBilinear2dParamsT: NodeParams.ResizeBilinear2dParams,
    LayerNormParamsT: NodeParams.LayerNormParams,
}

_DATATYPES = {np.dtype(np.float32): DataType.fp32}


def _align(n: int, alignment: int) -> int:
    return (n + alignment - 1) // alignment * alignment


@dataclass
class XnnpackBlob:
    graph: GraphT
    constant_data: bytes


def serialize_xnnpack_blob(graph: GraphT, constant_data: bytes) -> bytes:
    """Lays out the header, `graph` as a flatbuffer and `constant_data`."""
    builder = flatbuffers.Builder(1024)
    builder.Finish(graph.Pack(builder), file_identifier=FILE_IDENTIFIER)
    flatbuffer = bytes(builder.Output())
    flatbuffer_offset = _align(HEADER_SIZE, FLATBUFFER_ALIGNMENT)
    constant_offset = _align(flatbuffer_offset + len(flatbuffer), CONSTANT_ALIGNMENT)
    header = _HEADER.pack(
        BLOB_MAGIC,
        HEADER_SIZE,
        flatbuffer_offset,
        len(flatbuffer),
        constant_offset,
        len(constant_data),
    )
    blob = bytearray(constant_offset + len(constant_data) + TRAILING_PADDING)
    blob[:HEADER_SIZE] = header
    blob[flatbuffer_offset : flatbuffer_offset + len(flatbuffer)] = flatbuffer
    blob[constant_offset : constant_offset + len(constant_data)] = constant_data
    return bytes(blob)


def deserialize_xnnpack_blob(blob: bytes) -> XnnpackBlob:
    """Parses a blob, checking the header's ranges and the identifier."""
    if len(blob) < HEADER_SIZE:
        raise ValueError(f"blob of {len(blob)} bytes is shorter than the header")
    magic, header_size, fb_offset, fb_size, const_offset, const_size = (
        _HEADER.unpack_from(blob, 0)
    )
    if magic != BLOB_MAGIC:
        raise ValueError(f"bad blob magic {magic!r}, expected {BLOB_MAGIC!r}")
    if header_size < HEADER_SIZE:
        raise ValueError(f"header size {header_size} < {HEADER_SIZE}")
    for name, offset, size in (
        ("flatbuffer", fb_offset, fb_size),
        ("constant data", const_offset, const_size),
    ):
        if offset < header_size or offset + size > len(blob):
            raise ValueError(
                f"{name} [{offset}, {offset + size}) outside the blob of "
                f"{len(blob)} bytes"
            )
    flatbuffer = bytes(blob[fb_offset : fb_offset + fb_size])
    if not Graph.GraphBufferHasIdentifier(flatbuffer, 0):
        raise ValueError(f"flatbuffer identifier is not {FILE_IDENTIFIER!r}")
    graph = GraphT.InitFromObj(Graph.GetRootAs(flatbuffer, 0))
    return XnnpackBlob(graph, bytes(blob[const_offset : const_offset + const_size]))


class XnnpackGraphBuilder:
    """Builds a graph value by value and node by node, collecting constant
    tensors into the constant data area; build() returns the blob."""

    def __init__(self) -> None:
        self.graph = GraphT()
        self.graph.values = []
        self.graph.nodes = []
        self._constant_data = bytearray()

    def _add_value(self, value: ValueT) -> int:
        self.graph.values.append(value)
        return len(self.graph.values) - 1

    def add_tensor(
        self,
        dims: Sequence[int],
        *,
        external_input: Optional[int] = None,
        external_output: Optional[int] = None,
        dynamic_dims: Sequence[int] = (),
    ) -> int:
        """Adds an fp32 tensor value: an intermediate, or the delegate call's
        arg `external_input` (an input) or `external_output` (an output; an
        index into the whole args span, after the inputs). An input's
        `dynamic_dims` take their size from the arg at run time, up to
        `dims`. Returns its index."""
        if external_input is not None and external_output is not None:
            raise ValueError("a value is either an external input or an output")
        if dynamic_dims and external_input is None:
            raise ValueError("only external inputs have dynamic dims")
        value = ValueT()
        value.datatype = DataType.fp32
        value.dims = [int(d) for d in dims]
        value.flags = 0
        if external_input is not None:
            value.flags = ValueFlags.external_input
            value.externalIndex = external_input
            if dynamic_dims:
                value.dynamicDims = [int(d) for d in dynamic_dims]
        elif external_output is not None:
            value.flags = ValueFlags.external_output
            value.externalIndex = external_output
        return self._add_value(value)

    def add_constant(self, data) -> int:
        """Adds a constant from a numpy array or torch tensor (its shape and
        contiguous bytes). Returns its index."""
        if hasattr(data, "detach"):
            data = data.detach().cpu().numpy()
        array = np.ascontiguousarray(data)
        if array.dtype not in _DATATYPES:
            raise ValueError(f"unsupported constant dtype {array.dtype}")
        offset = _align(len(self._constant_data), CONSTANT_ALIGNMENT)
        raw = array.tobytes()
        self._constant_data.extend(bytes(offset - len(self._constant_data)))
        self._constant_data.extend(raw)
        value = ValueT()
        value.datatype = _DATATYPES[array.dtype]
        value.dims = [int(d) for d in array.shape]
        value.flags = 0
        value.constant = ConstantRefT()
        value.constant.offset = offset
        value.constant.size = len(raw)
        return self._add_value(value)

    def add_node(
        self,
        kind: int,
        inputs: Sequence[int],
        outputs: Sequence[int],
        params=None,
        clamp: Optional[tuple] = None,
        debug_handle: int = 0,
    ) -> NodeT:
        """Appends a node of `kind` (a NodeKind). `params` is the kind's
        params object (e.g. Conv2dParamsT), `clamp` an optional (min, max)
        fused on the output."""
        node = NodeT()
        node.kind = kind
        node.inputs = list(inputs)
        node.outputs = list(outputs)
        if params is not None:
            node.paramsType = _PARAMS_TYPES[type(params)]
            node.params = params
        if clamp is not None:
            node.clamp = OutputClampT()
            node.clamp.min, node.clamp.max = (float(c) for c in clamp)
        node.debugHandle = debug_handle
        self.graph.nodes.append(node)
        return node

    def build(self) -> bytes:
        return serialize_xnnpack_blob(self.graph, bytes(self._constant_data))
