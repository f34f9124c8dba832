"""Writes and reads the XNNPACK delegate blob in upstream ExecuTorch's format.

Blob layout (all integers little-endian):

    offset  size  field
    0       4     unused (zero)
    4       4     magic b"XH00"
    8       2     header length (30)
    10      4     flatbuffer offset (the header padded to 16)
    14      4     flatbuffer size
    18      4     constant data offset (after the flatbuffer, padded to 16)
    22      8     constant data size
    ...           the XNNGraph flatbuffer (schema.fbs, identifier b"XN01")
    ...           constant data; ConstantDataOffset.offset is relative to its
                  start and aligned to CONSTANT_ALIGNMENT

Constants are stored either in the blob's constant data or, when the builder
is given a NamedDataStore, in the program's named data under the SHA-256 of
their bytes (offset UINT64_MAX and a named_key in the blob), which stores
identical weights once across layers and delegates, as upstream does.
"""

import hashlib
import struct
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence

import flatbuffers
import torch

from executorch.backends.xnnpack.serialization.xnnpack_graph_schema import (
    ConstantDataOffsetT,
    OutputMinMaxT,
    XNN_INVALID_VALUE_ID,
    XNN_VALUE_FLAG_EXTERNAL_INPUT,
    XNN_VALUE_FLAG_EXTERNAL_OUTPUT,
    XNNDatatype,
    XNNGraph,
    XNNGraphT,
    XNNQuantizedTensorValueT,
    XNNTensorValueT,
    XNodeT,
    XValueT,
    XValueUnion,
)

HEADER_MAGIC = b"XH00"
FILE_IDENTIFIER = b"XN01"
_HEADER = struct.Struct("<4s4sHIIIQ")
HEADER_SIZE = _HEADER.size  # 30
FLATBUFFER_ALIGNMENT = 16
CONSTANT_ALIGNMENT = 16
# ConstantDataOffset.offset of a constant stored by key.
NAMED_OFFSET = 0xFFFFFFFFFFFFFFFF

_DATATYPES = {
    torch.float32: XNNDatatype.xnn_datatype_fp32,
    torch.float16: XNNDatatype.xnn_datatype_fp16,
    torch.int32: XNNDatatype.xnn_datatype_int32,
}


def _align(n: int, alignment: int) -> int:
    return (n + alignment - 1) // alignment * alignment


def tensor_bytes(tensor: torch.Tensor) -> bytes:
    """The contiguous bytes of `tensor` (any dtype)."""
    tensor = tensor.detach().contiguous().cpu()
    return tensor.reshape(-1).view(torch.uint8).numpy().tobytes()


def serialize_xnnpack_blob(graph: XNNGraphT, constant_data: bytes) -> bytes:
    """Lays out the header, `graph` as a flatbuffer and `constant_data`."""
    builder = flatbuffers.Builder(1024)
    builder.Finish(graph.Pack(builder), file_identifier=FILE_IDENTIFIER)
    flatbuffer = bytes(builder.Output())
    flatbuffer_offset = _align(HEADER_SIZE, FLATBUFFER_ALIGNMENT)
    constant_offset = _align(flatbuffer_offset + len(flatbuffer), CONSTANT_ALIGNMENT)
    header = _HEADER.pack(
        bytes(4),
        HEADER_MAGIC,
        HEADER_SIZE,
        flatbuffer_offset,
        len(flatbuffer),
        constant_offset,
        len(constant_data),
    )
    blob = bytearray(constant_offset + len(constant_data))
    blob[:HEADER_SIZE] = header
    blob[flatbuffer_offset : flatbuffer_offset + len(flatbuffer)] = flatbuffer
    blob[constant_offset:] = constant_data
    return bytes(blob)


@dataclass
class XnnpackBlob:
    graph: XNNGraphT
    constant_data: bytes


def deserialize_xnnpack_blob(blob: bytes) -> XnnpackBlob:
    """Parses a blob (with or without the header), checking the header's
    ranges and the flatbuffer identifier."""
    if blob[4:8] != HEADER_MAGIC:
        fb_offset, fb_size, const_offset, const_size = 0, len(blob), len(blob), 0
    else:
        if len(blob) < HEADER_SIZE:
            raise ValueError(f"blob of {len(blob)} bytes is shorter than the header")
        _, _, length, fb_offset, fb_size, const_offset, const_size = (
            _HEADER.unpack_from(blob, 0)
        )
        if length < HEADER_SIZE:
            raise ValueError(f"header length {length} < {HEADER_SIZE}")
        for name, offset, size in (
            ("flatbuffer", fb_offset, fb_size),
            ("constant data", const_offset, const_size),
        ):
            if offset < length or offset + size > len(blob):
                raise ValueError(
                    f"{name} [{offset}, {offset + size}) outside the blob of "
                    f"{len(blob)} bytes"
                )
    flatbuffer = bytes(blob[fb_offset : fb_offset + fb_size])
    if flatbuffer[4:8] not in (FILE_IDENTIFIER, b"XN00"):
        raise ValueError(
            f"flatbuffer identifier {flatbuffer[4:8]!r} is not {FILE_IDENTIFIER!r}"
        )
    graph = XNNGraphT.InitFromObj(XNNGraph.GetRootAs(flatbuffer, 0))
    return XnnpackBlob(graph, bytes(blob[const_offset : const_offset + const_size]))


class XnnpackGraphBuilder:
    """Builds an XNNGraph value by value and node by node; build() returns
    the blob. Value ids (id_out) are the values' positions.

    `named_data_store` (exir's NamedDataStore): when given, constants go to
    the program's named data, keyed by the SHA-256 of their bytes, with
    `external_tag` (a .ptd file name, or None for the .pte; the lowering
    changes it per constant); otherwise into the blob's constant data."""

    def __init__(self, named_data_store=None, external_tag: Optional[str] = None):
        self.graph = XNNGraphT()
        self.graph.version = "0"
        self.graph.xvalues = []
        self.graph.xnodes = []
        self.graph.inputIds = []
        self.graph.outputIds = []
        # Entry 0 means "no constant".
        entry = ConstantDataOffsetT()
        entry.offset, entry.size = 0, 0
        self.graph.constantData = [entry]
        self._constant_data = bytearray()
        self._named_data_store = named_data_store
        self.external_tag = external_tag

    # Values -----------------------------------------------------------------

    def add_value(
        self,
        dims: Sequence[int],
        datatype: int = XNNDatatype.xnn_datatype_fp32,
        *,
        external_input: Optional[int] = None,
        external_output: Optional[int] = None,
        constant: Optional[bytes] = None,
        quant_params_type: int = 0,
        quant_params: Any = None,
    ) -> int:
        """Adds a tensor value of `datatype`: an intermediate, a constant
        (`constant` holds its bytes), or the delegate call's arg
        `external_input` / `external_output` (positions in the whole args
        list: inputs first, then outputs). Quantized values also take their
        XNNQuantParams type and table. Returns its id."""
        if external_input is not None and external_output is not None:
            raise ValueError("a value is either an external input or an output")
        value_id = len(self.graph.xvalues)
        tensor = XNNTensorValueT()
        tensor.datatype = datatype
        tensor.dims = [int(d) for d in dims]
        tensor.numDims = len(tensor.dims)
        tensor.externalId = XNN_INVALID_VALUE_ID
        tensor.flags = 0
        tensor.idOut = value_id
        tensor.constantBufferIdx = 0
        if external_input is not None:
            tensor.flags = XNN_VALUE_FLAG_EXTERNAL_INPUT
            tensor.externalId = external_input
            self.graph.inputIds.append(value_id)
        elif external_output is not None:
            tensor.flags = XNN_VALUE_FLAG_EXTERNAL_OUTPUT
            tensor.externalId = external_output
            self.graph.outputIds.append(value_id)
        if constant is not None:
            tensor.constantBufferIdx = self.add_constant_data(constant)
        value = XValueT()
        if quant_params is None:
            value.xvalueUnionType = XValueUnion.XNNTensorValue
            value.xvalueUnion = tensor
        else:
            quantized = XNNQuantizedTensorValueT()
            quantized.tensorValue = tensor
            quantized.quantParamsType = quant_params_type
            quantized.quantParams = quant_params
            value.xvalueUnionType = XValueUnion.XNNQuantizedTensorValue
            value.xvalueUnion = quantized
        self.graph.xvalues.append(value)
        return value_id

    def add_tensor(
        self,
        dims: Sequence[int],
        *,
        external_input: Optional[int] = None,
        external_output: Optional[int] = None,
    ) -> int:
        """An fp32 tensor value (see add_value)."""
        return self.add_value(
            dims, external_input=external_input, external_output=external_output
        )

    def add_constant(self, tensor: torch.Tensor) -> int:
        """A constant value with `tensor`'s dims and contiguous bytes."""
        if tensor.dtype not in _DATATYPES:
            raise ValueError(f"unsupported constant dtype {tensor.dtype}")
        dims = list(tensor.shape) or [1]
        return self.add_value(
            dims, _DATATYPES[tensor.dtype], constant=tensor_bytes(tensor)
        )

    def add_constant_data(self, data: bytes) -> int:
        """Stores `data` (in the named data or the blob) and returns its
        index in constant_data."""
        entry = ConstantDataOffsetT()
        entry.size = len(data)
        if self._named_data_store is not None:
            key = hashlib.sha256(data).hexdigest()
            self._named_data_store.add_named_data(
                key, data, CONSTANT_ALIGNMENT, self.external_tag
            )
            entry.offset = NAMED_OFFSET
            entry.namedKey = key
        else:
            entry.offset = _align(len(self._constant_data), CONSTANT_ALIGNMENT)
            self._constant_data.extend(bytes(entry.offset - len(self._constant_data)))
            self._constant_data.extend(data)
        self.graph.constantData.append(entry)
        return len(self.graph.constantData) - 1

    def dims(self, value_id: int) -> List[int]:
        return list(self.tensor(value_id).dims)

    def tensor(self, value_id: int) -> XNNTensorValueT:
        value = self.graph.xvalues[value_id].xvalueUnion
        return value.tensorValue if hasattr(value, "tensorValue") else value

    # Nodes ------------------------------------------------------------------

    def add_node(
        self,
        kind: int,
        table: Any,
        output_min_max: Optional[tuple] = None,
        debug_handle: int = 0,
    ) -> XNodeT:
        """Appends a node of `kind` (an XNodeUnion member) with its params
        `table`; `output_min_max` is an optional fused (min, max) clamp."""
        node = XNodeT()
        node.xnodeUnionType = kind
        node.xnodeUnion = table
        node.debugHandle = debug_handle
        if output_min_max is not None:
            set_output_clamp(node, *output_min_max)
        self.graph.xnodes.append(node)
        return node

    def build(self) -> bytes:
        self.graph.numExterns = len(self.graph.inputIds) + len(self.graph.outputIds)
        return serialize_xnnpack_blob(self.graph, bytes(self._constant_data))


def set_output_clamp(node: XNodeT, lo: float, hi: float) -> None:
    node.outputMinMax = OutputMinMaxT()
    node.outputMinMax.outputMin = float(lo)
    node.outputMinMax.outputMax = float(hi)
