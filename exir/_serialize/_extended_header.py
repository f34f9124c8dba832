"""The `eh00` extended header that `.pte` files carry at byte 8.

A FlatBuffer starts with a 4-byte root offset and a 4-byte file identifier;
the header follows them and tells a loader where the flatbuffer ends and the
data segments start, so it can load only the part it needs. All fields are
little-endian.
"""

import dataclasses
import struct

HEADER_OFFSET = 8
MAGIC = b"eh00"
# magic, header length, program_size, segment_base_offset, segment_data_size.
_LAYOUT = struct.Struct("<4sIQQQ")
HEADER_LENGTH = _LAYOUT.size


@dataclasses.dataclass(frozen=True)
class ExtendedHeader:
    # Bytes of the flatbuffer, header included; segments start after it.
    program_size: int
    # File offset of the first segment, 0 when there are none.
    segment_base_offset: int
    # Bytes from segment_base_offset to the end of the last segment.
    segment_data_size: int

    def to_bytes(self) -> bytes:
        return _LAYOUT.pack(
            MAGIC,
            HEADER_LENGTH,
            self.program_size,
            self.segment_base_offset,
            self.segment_data_size,
        )

    @staticmethod
    def from_bytes(data: bytes) -> "ExtendedHeader":
        """Parses the header of a whole `.pte` file (`data` starts at byte 0)."""
        end = HEADER_OFFSET + HEADER_LENGTH
        if len(data) < end:
            raise ValueError(
                f"File of {len(data)} bytes is too short for an extended header "
                f"(needs {end})"
            )
        magic, length, program_size, base, segment_size = _LAYOUT.unpack_from(
            data, HEADER_OFFSET
        )
        if magic != MAGIC:
            raise ValueError(
                f"No extended header: bytes {HEADER_OFFSET}..{HEADER_OFFSET + 4} "
                f"are {magic!r}, expected {MAGIC!r}"
            )
        if length < HEADER_LENGTH:
            raise ValueError(
                f"Extended header length {length} is shorter than {HEADER_LENGTH}"
            )
        return ExtendedHeader(program_size, base, segment_size)
