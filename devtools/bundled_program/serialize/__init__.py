"""`.bpte` files: BundledProgram to bytes and back. Reading checks every
offset and raises BundledProgramError naming the field at fault."""

import functools
import os
from typing import Any, Dict, Optional

from executorch.devtools.bundled_program.core import BundledProgram
from executorch.devtools.bundled_program.schema import (
    bundled_program_schema as schema,
)
from executorch.devtools.flatbuffer_codec import FlatBufferError, Schema
from executorch.exir.error import ExportError, ExportErrorType

_HERE = os.path.dirname(__file__)
_SCHEMA_PATH = os.path.join(_HERE, "..", "schema", "bundled_program_schema.fbs")
_INCLUDE_DIR = os.path.join(_HERE, "..", "..", "..", "schema")


class BundledProgramError(ExportError, ValueError):
    """A `.bpte` that cannot be read; says which file and field."""

    error_type = ExportErrorType.INVALID_INPUT_TYPE


@functools.lru_cache(maxsize=None)
def _schema() -> Schema:
    return Schema.load(_SCHEMA_PATH, [_INCLUDE_DIR])


def _make(table: str, fields: Dict[str, Any]):
    if table == "Value":
        return schema.Value(fields["val"])
    for name in ("data", "program"):
        if name in fields and fields[name] is not None:
            fields[name] = bytes(fields[name])
    for name in ("dim_order", "sizes", "inputs", "expected_outputs", "test_cases"):
        if name in fields and fields[name] is None:
            fields[name] = []
    if "dim_order" in fields:
        fields["dim_order"] = list(fields["dim_order"])
    return getattr(schema, table)(**fields)


def serialize_from_bundled_program_to_flatbuffer(
    bundled_program: BundledProgram,
) -> bytes:
    """The `.bpte` bytes of `bundled_program`."""
    return _schema().encode(bundled_program.serialize_to_schema())


def is_bundled_program(data: bytes) -> bool:
    return _schema().has_identifier(data)


def deserialize_from_flatbuffer_to_bundled_program(
    flatbuffer: bytes, source: Optional[str] = None
) -> schema.BundledProgram:
    """The tables of a `.bpte`. `source` (a file name) prefixes errors."""
    where = f"{source}: " if source else ""
    try:
        return _schema().decode(flatbuffer, factory=_make)
    except FlatBufferError as error:
        if error.field == "(root)":
            raise BundledProgramError(
                f"{where}not a bundled program: {error.problem}"
            ) from None
        raise BundledProgramError(f"{where}bundled program field {error}") from None
