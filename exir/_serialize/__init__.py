"""Serialization of emitted programs to `.pte` bytes (FlatBuffer, `eh00`
header and data segments) and back."""

from ._extended_header import ExtendedHeader
from ._flatbuffer import schema
from ._program import (
    FILE_IDENTIFIER,
    PteFile,
    deserialize_pte_binary,
    serialize_pte_binary,
)

__all__ = [
    "ExtendedHeader",
    "FILE_IDENTIFIER",
    "PteFile",
    "deserialize_pte_binary",
    "schema",
    "serialize_pte_binary",
]
