"""The serializer's byte layout, checked on hand-built programs: identifier,
extended header, segment and constant alignment, delegate extraction, and a
round trip through the parser."""

import struct

import pytest

from executorch.exir._serialize import (
    ExtendedHeader,
    deserialize_pte_binary,
    serialize_pte_binary,
)
from executorch.exir._serialize._flatbuffer import (
    BackendDelegateDataReferenceT,
    BackendDelegateInlineDataT,
    BackendDelegateT,
    DataLocation,
    ExecutionPlanT,
    ProgramT,
)

CONSTANTS = [b"", b"\x01\x02\x03", bytes(range(40)), b"\xff" * 5]


def make_program(delegate_blobs=()):
    plan = ExecutionPlanT()
    plan.name = "forward"
    plan.values, plan.inputs, plan.outputs, plan.chains = [], [], [], []
    plan.operators, plan.nonConstBufferSizes = [], [0]
    plan.delegates = []
    program = ProgramT()
    program.version = 0
    program.executionPlan = [plan]
    program.backendDelegateData = []
    for index, blob in enumerate(delegate_blobs):
        inline = BackendDelegateInlineDataT()
        inline.data = list(blob)
        program.backendDelegateData.append(inline)
        reference = BackendDelegateDataReferenceT()
        reference.location, reference.index = DataLocation.INLINE, index
        delegate = BackendDelegateT()
        delegate.id, delegate.processed, delegate.compileSpecs = "Fake", reference, []
        plan.delegates.append(delegate)
    return program


@pytest.mark.parametrize(
    "segment_alignment,constant_alignment", [(128, 16), (4096, 64)]
)
def test_header_segments_and_constant_alignment(segment_alignment, constant_alignment):
    pte = serialize_pte_binary(
        make_program(),
        CONSTANTS,
        segment_alignment=segment_alignment,
        constant_tensor_alignment=constant_alignment,
    )
    assert pte[4:8] == b"ET12"
    assert pte[8:12] == b"eh00"
    assert struct.unpack_from("<I", pte, 12)[0] == 32
    header = ExtendedHeader.from_bytes(pte)
    assert header.segment_base_offset % segment_alignment == 0
    assert header.program_size <= header.segment_base_offset
    assert header.segment_base_offset + header.segment_data_size == len(pte)

    parsed = deserialize_pte_binary(pte)
    (segment,) = parsed.program.segments
    assert segment.offset == 0
    offsets = list(parsed.program.constantSegment.offsets)
    assert len(offsets) == len(CONSTANTS)
    base = header.segment_base_offset
    for offset, data in zip(offsets, CONSTANTS):
        assert offset % constant_alignment == 0
        assert pte[base + offset : base + offset + len(data)] == data


def test_program_without_constants_has_an_empty_constant_segment():
    # As upstream writes it, and as upstream's runtime requires: offsets [0]
    # (the reserved entry) in a segment of no bytes.
    pte = serialize_pte_binary(make_program(), [b""])
    header = ExtendedHeader.from_bytes(pte)
    assert header.segment_data_size == 0
    assert header.segment_base_offset == len(pte) >= header.program_size
    parsed = deserialize_pte_binary(pte)
    assert parsed.segments == [b""]
    assert parsed.program.constantSegment.segmentIndex == 0
    assert list(parsed.program.constantSegment.offsets) == [0]
    assert parsed.program.executionPlan[0].name == b"forward"


def test_delegate_blobs_move_to_segments():
    blobs = [b"first blob", b"second" * 30]
    pte = serialize_pte_binary(make_program(blobs), CONSTANTS, segment_alignment=64)
    parsed = deserialize_pte_binary(pte)
    assert not parsed.program.backendDelegateData
    delegates = parsed.program.executionPlan[0].delegates
    # Segment 0 holds the constants, the blobs follow in order.
    for delegate, blob, expected_index in zip(delegates, blobs, [1, 2]):
        assert delegate.processed.location == DataLocation.SEGMENT
        assert delegate.processed.index == expected_index
        assert parsed.segments[expected_index] == blob
    for segment in parsed.program.segments:
        assert (parsed.header.segment_base_offset + segment.offset) % 64 == 0


def test_delegate_blobs_stay_inline_when_asked():
    pte = serialize_pte_binary(
        make_program([b"blob"]), [b""], extract_delegate_segments=False
    )
    parsed = deserialize_pte_binary(pte)
    assert bytes(parsed.program.backendDelegateData[0].data) == b"blob"
    assert parsed.program.executionPlan[0].delegates[0].processed.location == (
        DataLocation.INLINE
    )


def test_round_trip_constants():
    parsed = deserialize_pte_binary(serialize_pte_binary(make_program(), CONSTANTS))
    for got, want in zip(parsed.constant_data, CONSTANTS):
        assert got[: len(want)] == want


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(segment_alignment=100), "segment_alignment must be a positive power"),
        (dict(constant_tensor_alignment=0), "constant_tensor_alignment must be"),
    ],
)
def test_bad_alignment_is_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        serialize_pte_binary(make_program(), [b""], **kwargs)


def test_reserved_constant_entry_is_required():
    with pytest.raises(ValueError, match=r"constant_data\[0\] must be b''"):
        serialize_pte_binary(make_program(), [b"data"])


def test_parser_names_bad_fields():
    pte = bytearray(serialize_pte_binary(make_program(), CONSTANTS))
    with pytest.raises(ValueError, match="file identifier"):
        deserialize_pte_binary(b"\0\0\0\0ET13" + bytes(pte[8:]))
    with pytest.raises(ValueError, match=r"segments\[0\].*ends past the end"):
        deserialize_pte_binary(bytes(pte[:-8]))
    pte[8:12] = b"xx00"
    with pytest.raises(ValueError, match="No extended header"):
        deserialize_pte_binary(bytes(pte))


def test_parses_upstream_pte(export_with_upstream):
    pte = export_with_upstream("""
        import torch
        model = torch.nn.Linear(4, 3)
        inputs = (torch.ones(2, 4),)
        """)
    parsed = deserialize_pte_binary(pte)
    (plan,) = parsed.program.executionPlan
    assert plan.name == b"forward"
    operators = {(op.name, op.overload) for op in plan.operators}
    assert (b"aten::addmm", b"out") in operators or (
        b"aten::linear",
        b"out",
    ) in operators
    # Weight (3x4) and bias (3) float32 constants sit in the constant segment.
    sizes = sorted(len(data) for data in parsed.constant_data[1:])
    assert sizes[0] >= 3 * 4 and sizes[-1] >= 3 * 4 * 4
