"""Turns an emitted program into `.pte` bytes and back.

Layout of a file:

    [root offset][b"ET12"][eh00 header][rest of the flatbuffer]
    [padding to segment_alignment][segment 0][padding][segment 1]...

Constant tensor data goes into one segment (the constant segment) with a
table of offsets, one per `data_buffer_idx`; delegate blobs can be moved out
of the flatbuffer into segments of their own, so a loader can hand them to a
backend without copying the program. Named data (bytes backends look up by
key, e.g. delegate weights) takes one segment per unique buffer, listed in
`named_data` by key. The serializer knows nothing about
graphs: it only lays out bytes.
"""

import dataclasses
import struct
from typing import Dict, List, Optional, Sequence

import flatbuffers

from ._extended_header import HEADER_LENGTH, HEADER_OFFSET, ExtendedHeader
from ._named_data_store import NamedDataStoreOutput
from ._flatbuffer import (
    DataLocation,
    DataSegmentT,
    NamedDataT,
    Program,
    ProgramT,
    SubsegmentOffsetsT,
)

FILE_IDENTIFIER = b"ET12"


def _padding(size: int, alignment: int) -> int:
    return -size % alignment


def _check_alignment(name: str, alignment: int) -> None:
    if alignment <= 0 or alignment & (alignment - 1):
        raise ValueError(f"{name} must be a positive power of two, got {alignment}")


def _pack_constant_segment(constant_data: Sequence[bytes], alignment: int):
    """Concatenates constant tensors, each starting at a multiple of
    `alignment`; returns the bytes and the offset of each entry."""
    if len(constant_data) == 0 or len(constant_data[0]) != 0:
        raise ValueError(
            "constant_data[0] must be b'' (data_buffer_idx 0 means 'no constant')"
        )
    blob = bytearray()
    offsets = []
    for data in constant_data:
        blob += bytes(_padding(len(blob), alignment))
        offsets.append(len(blob))
        blob += data
    return bytes(blob), offsets


def _flatbuffer_bytes(program: ProgramT) -> bytes:
    builder = flatbuffers.Builder(1024)
    builder.Finish(program.Pack(builder), file_identifier=FILE_IDENTIFIER)
    return bytes(builder.Output())


def _insert_extended_header(flatbuffer: bytes, header: ExtendedHeader) -> bytes:
    """Puts `header` at byte 8. Offsets inside a flatbuffer are relative to
    where they are stored, so shifting everything after byte 8 only changes
    the root offset at byte 0; the shift is a multiple of 16, which keeps
    every field's alignment."""
    root_offset = int.from_bytes(flatbuffer[0:4], "little") + HEADER_LENGTH
    return (
        root_offset.to_bytes(4, "little")
        + flatbuffer[4:HEADER_OFFSET]
        + header.to_bytes()
        + flatbuffer[HEADER_OFFSET:]
    )


def serialize_pte_binary(
    program: ProgramT,
    constant_data: Sequence[bytes],
    *,
    segment_alignment: int = 128,
    constant_tensor_alignment: int = 16,
    extract_delegate_segments: bool = True,
    named_data: Optional[NamedDataStoreOutput] = None,
    mutable_data: Optional[Sequence[bytes]] = None,
) -> bytes:
    """Returns the `.pte` file for `program`.

    `constant_data[i]` holds the raw bytes of the tensors whose
    `data_buffer_idx` is `i`; entry 0 is reserved and must be empty. The
    program's `segments` and `constant_segment` are filled in here. With
    `extract_delegate_segments`, inline delegate blobs move into segments.
    `mutable_data[i]` (entry 0 reserved and empty, as for constants) holds
    the initial state of the planned tensors whose `data_buffer_idx` is `i`;
    it goes to a segment of its own named by `mutable_data_segments[0]`, and
    when there is none the program's bytes do not change.
    `program` is modified in place.
    """
    _check_alignment("segment_alignment", segment_alignment)
    _check_alignment("constant_tensor_alignment", constant_tensor_alignment)
    segments: List[bytes] = []

    constant_blob, offsets = _pack_constant_segment(
        constant_data, constant_tensor_alignment
    )
    # Written even when there are no constants (an empty segment, offsets
    # [0]): upstream's runtime refuses a program whose constant segment has
    # no offsets.
    program.constantSegment = SubsegmentOffsetsT()
    program.constantSegment.segmentIndex = len(segments)
    program.constantSegment.offsets = offsets
    segments.append(constant_blob)

    if mutable_data is not None and len(mutable_data) > 1:
        mutable_blob, mutable_offsets = _pack_constant_segment(
            mutable_data, constant_tensor_alignment
        )
        state = SubsegmentOffsetsT()
        state.segmentIndex = len(segments)
        state.offsets = mutable_offsets
        program.mutableDataSegments = [state]
        segments.append(mutable_blob)

    if extract_delegate_segments:
        _move_delegate_blobs_to_segments(program, segments)
    if named_data is not None:
        _add_named_data_segments(program, segments, named_data, segment_alignment)

    program.segments = []
    base = 0
    for data in segments:
        base += _padding(base, segment_alignment)
        segment = DataSegmentT()
        segment.offset = base
        segment.size = len(data)
        program.segments.append(segment)
        base += len(data)

    flatbuffer = _flatbuffer_bytes(program)
    program_size = len(flatbuffer) + HEADER_LENGTH
    segment_base_offset = (
        program_size + _padding(program_size, segment_alignment) if segments else 0
    )
    header = ExtendedHeader(program_size, segment_base_offset, base)
    out = bytearray(_insert_extended_header(flatbuffer, header))
    for segment, data in zip(program.segments, segments):
        out += bytes(segment_base_offset + segment.offset - len(out))
        out += data
    return bytes(out)


def _move_delegate_blobs_to_segments(program: ProgramT, segments: List[bytes]):
    """Rewrites every delegate whose blob is inline to point at a segment; a
    blob shared by several delegates becomes one segment."""
    inline = program.backendDelegateData or []
    segment_of_blob = {}
    for plan in program.executionPlan or []:
        for delegate in plan.delegates or []:
            reference = delegate.processed
            if reference.location != DataLocation.INLINE:
                continue
            if reference.index >= len(inline):
                raise ValueError(
                    f"Delegate '{delegate.id}' of method '{plan.name}' refers to "
                    f"inline data {reference.index}, but the program has "
                    f"{len(inline)} inline blobs"
                )
            if reference.index not in segment_of_blob:
                segment_of_blob[reference.index] = len(segments)
                data = inline[reference.index].data
                # A list of ints or a uint8 array (as emitted or unpacked).
                segments.append(b"" if data is None else bytes(data))
            reference.location = DataLocation.SEGMENT
            reference.index = segment_of_blob[reference.index]
    program.backendDelegateData = []


def _add_named_data_segments(
    program: ProgramT,
    segments: List[bytes],
    named_data: NamedDataStoreOutput,
    segment_alignment: int,
) -> None:
    segment_of_buffer: Dict[int, int] = {}
    program.namedData = []
    for key, index in sorted(named_data.pte_data.items()):
        entry = named_data.buffers[index]
        if segment_alignment % entry.alignment:
            raise ValueError(
                f"named data '{key}' needs alignment {entry.alignment}, which "
                f"segment_alignment {segment_alignment} is not a multiple of"
            )
        if index not in segment_of_buffer:
            segment_of_buffer[index] = len(segments)
            segments.append(entry.buffer)
        item = NamedDataT()
        item.key = key
        item.segmentIndex = segment_of_buffer[index]
        program.namedData.append(item)


@dataclasses.dataclass
class PteFile:
    """A parsed `.pte` file: the program and the data its segments hold."""

    program: ProgramT
    header: ExtendedHeader
    # Raw bytes of each entry of `program.segments`.
    segments: List[bytes]
    # Bytes of each constant by data_buffer_idx (entry 0 is the reserved b"");
    # empty when the program has no constant segment.
    constant_data: List[bytes]
    # Named data by key (the bytes of its segment).
    named_data: Dict[str, bytes] = dataclasses.field(default_factory=dict)


def deserialize_pte_binary(data: bytes) -> PteFile:
    """Parses `.pte` bytes written by `serialize_pte_binary` or by upstream
    ExecuTorch's tools. Raises ValueError saying which field is out of range."""
    if data[4:HEADER_OFFSET] != FILE_IDENTIFIER:
        raise ValueError(
            f"Not a .pte file: file identifier is {data[4:HEADER_OFFSET]!r}, "
            f"expected {FILE_IDENTIFIER!r}"
        )
    header = ExtendedHeader.from_bytes(data)
    if header.program_size > len(data):
        raise ValueError(
            f"Extended header program_size {header.program_size} exceeds the "
            f"file size {len(data)}"
        )
    program = _unpack_program(data)
    segments = []
    for index, segment in enumerate(program.segments or []):
        start = header.segment_base_offset + segment.offset
        if start + segment.size > len(data):
            raise ValueError(
                f"segments[{index}] (offset {segment.offset}, size "
                f"{segment.size}) ends past the end of the {len(data)}-byte file"
            )
        segments.append(data[start : start + segment.size])
    named_data = {}
    for index, item in enumerate(program.namedData or []):
        try:
            key = item.key.decode()
        except UnicodeDecodeError as error:
            raise ValueError(
                f"named_data[{index}]: key {item.key!r} is not UTF-8 ({error})"
            ) from error
        if item.segmentIndex >= len(segments):
            raise ValueError(
                f"named_data[{index}] ('{key}'): segment_index "
                f"{item.segmentIndex} is out of range: {len(segments)} segments"
            )
        named_data[key] = segments[item.segmentIndex]
    return PteFile(
        program, header, segments, _split_constants(program, segments), named_data
    )


def _unpack_program(data: bytes) -> ProgramT:
    """The flatbuffer as objects. The Python flatbuffers reader checks no
    offsets, so a corrupt file surfaces as whatever error the first bad read
    raises; that becomes a ValueError saying the file is corrupt."""
    try:
        return ProgramT.InitFromObj(Program.GetRootAs(data, 0))
    except (IndexError, struct.error, UnicodeDecodeError, ValueError,
            OverflowError, TypeError, MemoryError) as error:
        raise ValueError(
            f"Corrupt .pte: its program flatbuffer cannot be read "
            f"({type(error).__name__}: {error})"
        ) from error


def _split_constants(program: ProgramT, segments: List[bytes]) -> List[bytes]:
    constant_segment = program.constantSegment
    offsets = list(constant_segment.offsets) if constant_segment else []
    if not offsets:
        return []
    if constant_segment.segmentIndex >= len(segments):
        raise ValueError(
            f"constant_segment.segment_index {constant_segment.segmentIndex} is "
            f"out of range: {len(segments)} segments"
        )
    blob = segments[constant_segment.segmentIndex]
    ends = offsets[1:] + [len(blob)]
    # Entries are padded to the constant alignment; the tensors' sizes say
    # how many of those bytes are data, so the padding is kept here.
    return [blob[start:end] for start, end in zip(offsets, ends)]
