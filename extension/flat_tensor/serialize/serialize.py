"""Writes and reads `.ptd` files, upstream ExecuTorch's flat tensor format.

Layout of a file:

    [root offset][b"FT01"][FH01 header, padded to 16 bytes][rest of the
    flatbuffer][padding to segment_alignment][segment 0][padding]...

The header (FlatTensorHeader) says how long the flatbuffer is and where the
segments start. Each key of `named_data` names one segment (several keys may
share one) and, for a tensor, its layout. Like the `.pte` serializer, this
module only lays out bytes.
"""

import dataclasses
import math
import struct
from typing import Dict, List, Optional

import flatbuffers

from executorch.exir._serialize._named_data_store import NamedDataStoreOutput
from executorch.exir.tensor_layout import TensorLayout

from .generated.flat_tensor_flatbuffer.DataSegment import DataSegmentT
from .generated.flat_tensor_flatbuffer.FlatTensor import FlatTensor, FlatTensorT
from .generated.flat_tensor_flatbuffer.NamedData import NamedDataT
from .generated.flat_tensor_flatbuffer.TensorLayout import TensorLayoutT

FILE_IDENTIFIER = b"FT01"
# The newest format version this code writes and reads.
FLAT_TENSOR_VERSION = 0
# Where the header starts: after the root offset and the file identifier.
HEADER_OFFSET = 8
# Bytes inserted at HEADER_OFFSET: the header padded to 16. Flatbuffer
# offsets are relative, so the tables may move by any multiple of their
# largest alignment (8); upstream's reader takes flatbuffer_offset to be this.
_HEADER_PADDED_LENGTH = 48


@dataclasses.dataclass
class FlatTensorConfig:
    """`segment_alignment`: where each segment may start (a power of 2; an
    entry needing more alignment gets the least common multiple)."""

    segment_alignment: int = 128


@dataclasses.dataclass
class FlatTensorHeader:
    """The FH01 header: all fields little-endian uint64 after the magic and
    the uint32 header length."""

    MAGIC = b"FH01"
    LENGTH = 40

    # The header's bytes plus the flatbuffer's tables start at 0; the tables
    # proper end at flatbuffer_offset + flatbuffer_size.
    flatbuffer_offset: int
    flatbuffer_size: int
    # File offset of the first segment.
    segment_base_offset: int
    # Bytes from the first segment's start to the end of the last.
    segment_data_size: int

    def to_bytes(self) -> bytes:
        return self.MAGIC + struct.pack(
            "<IQQQQ",
            self.LENGTH,
            self.flatbuffer_offset,
            self.flatbuffer_size,
            self.segment_base_offset,
            self.segment_data_size,
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> "FlatTensorHeader":
        """Parses the header at HEADER_OFFSET of a file; ValueError when it is
        missing or too short."""
        head = data[HEADER_OFFSET : HEADER_OFFSET + cls.LENGTH]
        if head[:4] != cls.MAGIC:
            raise ValueError(
                f"Not a .ptd file: no {cls.MAGIC!r} header at byte {HEADER_OFFSET}"
            )
        if len(head) < cls.LENGTH:
            raise ValueError(f".ptd header truncated: {len(head)} of {cls.LENGTH} bytes")
        length, *fields = struct.unpack("<IQQQQ", head[4:])
        if length < cls.LENGTH:
            raise ValueError(f".ptd header length {length} < {cls.LENGTH}")
        return cls(*fields)


@dataclasses.dataclass
class PtdFile:
    """A parsed `.ptd`: each key's bytes and, for tensors, its layout."""

    version: int
    named_data: Dict[str, bytes]
    tensor_layouts: Dict[str, TensorLayout]


def _padding(size: int, alignment: int) -> int:
    return -size % alignment


def _layout_table(layout: TensorLayout) -> TensorLayoutT:
    table = TensorLayoutT()
    table.scalarType = int(layout.scalar_type)
    table.sizes = [int(s) for s in layout.sizes]
    table.dimOrder = [int(d) for d in layout.dim_order]
    return table


def serialize_ptd(
    store: NamedDataStoreOutput,
    tag: str,
    config: Optional[FlatTensorConfig] = None,
) -> bytes:
    """The `.ptd` file holding the keys `store` puts under `tag`; buffers
    shared by several keys are stored once."""
    config = config or FlatTensorConfig()
    keys = store.external_data[tag]
    segment_of_buffer: Dict[int, int] = {}
    payloads: List[bytes] = []
    segments: List[DataSegmentT] = []
    named_data: List[NamedDataT] = []
    end = 0
    for key, index in sorted(keys.items()):
        if index not in segment_of_buffer:
            entry = store.buffers[index]
            alignment = math.lcm(config.segment_alignment, entry.alignment)
            segment = DataSegmentT()
            segment.offset = end + _padding(end, alignment)
            segment.size = len(entry.buffer)
            end = segment.offset + segment.size
            segment_of_buffer[index] = len(segments)
            segments.append(segment)
            payloads.append(entry.buffer)
        item = NamedDataT()
        item.key = key
        item.segmentIndex = segment_of_buffer[index]
        layout = store.tensor_layouts.get(key)
        item.tensorLayout = None if layout is None else _layout_table(layout)
        named_data.append(item)

    table = FlatTensorT()
    table.version = FLAT_TENSOR_VERSION
    table.segments = segments
    table.namedData = named_data
    builder = flatbuffers.Builder(1024)
    builder.Finish(table.Pack(builder), file_identifier=FILE_IDENTIFIER)
    flatbuffer = bytes(builder.Output())

    with_header = len(flatbuffer) + _HEADER_PADDED_LENGTH
    base = with_header + _padding(with_header, config.segment_alignment)
    header = FlatTensorHeader(_HEADER_PADDED_LENGTH, len(flatbuffer), base, end)
    root_offset = int.from_bytes(flatbuffer[:4], "little") + _HEADER_PADDED_LENGTH
    out = bytearray(root_offset.to_bytes(4, "little"))
    out += flatbuffer[4:HEADER_OFFSET]
    out += header.to_bytes().ljust(_HEADER_PADDED_LENGTH, b"\0")
    out += flatbuffer[HEADER_OFFSET:]
    out += bytes(base - len(out))
    for segment, payload in zip(segments, payloads):
        out += bytes(base + segment.offset - len(out))
        out += payload
    return bytes(out)


def deserialize_ptd(data: bytes) -> PtdFile:
    """Parses a `.ptd` written by us or by upstream's tools; ValueError says
    which field is out of range."""
    if data[4:HEADER_OFFSET] != FILE_IDENTIFIER:
        raise ValueError(
            f"Not a .ptd file: file identifier is {data[4:HEADER_OFFSET]!r}, "
            f"expected {FILE_IDENTIFIER!r}"
        )
    header = FlatTensorHeader.from_bytes(data)
    try:
        table = FlatTensorT.InitFromObj(FlatTensor.GetRootAs(data, 0))
    except (IndexError, struct.error, UnicodeDecodeError, ValueError) as error:
        raise ValueError(f"Corrupt .ptd flatbuffer ({error})") from error
    if table.version > FLAT_TENSOR_VERSION:
        raise ValueError(
            f".ptd version {table.version} is newer than this reader "
            f"({FLAT_TENSOR_VERSION})"
        )
    segments = table.segments or []
    named_data, layouts = {}, {}
    for i, item in enumerate(table.namedData or []):
        key = item.key.decode()
        if item.segmentIndex >= len(segments):
            raise ValueError(
                f"named_data[{i}] ('{key}'): segment_index {item.segmentIndex} "
                f"out of range ({len(segments)} segments)"
            )
        segment = segments[item.segmentIndex]
        start = header.segment_base_offset + segment.offset
        if start + segment.size > len(data):
            raise ValueError(
                f"named_data[{i}] ('{key}'): segment {item.segmentIndex} ends past "
                f"the end of the {len(data)}-byte file"
            )
        named_data[key] = data[start : start + segment.size]
        if item.tensorLayout is not None:
            layout = item.tensorLayout
            layouts[key] = TensorLayout(
                layout.scalarType,
                [int(s) for s in (layout.sizes if layout.sizes is not None else [])],
                [int(d) for d in (layout.dimOrder if layout.dimOrder is not None else [])],
            )
    return PtdFile(table.version, named_data, layouts)
