"""Reads and writes ETDump files (size-prefixed FlatBuffers, identifier
"ED00"), checking every offset: a truncated or foreign file raises
ETDumpError naming the file and the field at fault."""

import functools
import os
from typing import Any, Dict, Optional, Union

from executorch.devtools.etdump import schema_flatcc
from executorch.devtools.etdump.schema_flatcc import ETDumpFlatCC
from executorch.devtools.flatbuffer_codec import FlatBufferError, Schema
from executorch.exir.error import ExportError, ExportErrorType

_SCHEMA_PATH = os.path.join(os.path.dirname(__file__), "etdump_schema.fbs")
_INCLUDE_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "schema")


class ETDumpError(ExportError, ValueError):
    """An ETDump that cannot be read; says which file and field."""

    error_type = ExportErrorType.INVALID_INPUT_TYPE


@functools.lru_cache(maxsize=None)
def _schema() -> Schema:
    return Schema.load(_SCHEMA_PATH, [_INCLUDE_DIR])


def _make(table: str, fields: Dict[str, Any]):
    if table == "Value":
        value_types = _schema().enums["ValueType"][1]
        names = {code: name for name, code in value_types.items()}
        fields["val"] = names.get(fields["val"], str(fields["val"]))
    if table == "ProfileEvent" and fields["delegate_debug_metadata"] is not None:
        fields["delegate_debug_metadata"] = bytes(fields["delegate_debug_metadata"])
    if table == "ETDump":
        return ETDumpFlatCC(**fields)
    return getattr(schema_flatcc, table)(**fields)


def deserialize_from_etdump_flatcc(
    data: bytes, size_prefixed: bool = True, source: Optional[str] = None
) -> ETDumpFlatCC:
    """The ETDump in `data`. `source` (a file name) prefixes error
    messages."""
    where = f"{source}: " if source else ""
    if len(data) < 12:
        raise ETDumpError(
            f"{where}not an ETDump: {len(data)} bytes is shorter than a header"
        )
    try:
        return _schema().decode(data, size_prefixed, _make)
    except FlatBufferError as error:
        if error.field == "(root)":
            raise ETDumpError(f"{where}not an ETDump: {error.problem}") from None
        raise ETDumpError(f"{where}ETDump field {error}") from None


def serialize_to_etdump_flatcc(etdump: ETDumpFlatCC) -> bytes:
    """`etdump` as a size-prefixed ETDump buffer."""
    return _schema().encode(_with_codes(etdump), size_prefixed=True)


def _with_codes(etdump):
    """A copy whose Value.val are ValueType codes (the dataclasses hold
    names)."""
    codes = _schema().enums["ValueType"][1]

    def convert(obj):
        if isinstance(obj, list):
            return [convert(o) for o in obj]
        if isinstance(obj, schema_flatcc.Value):
            fields = {k: convert(v) for k, v in vars(obj).items()}
            fields["val"] = codes[obj.val] if isinstance(obj.val, str) else obj.val
            return schema_flatcc.Value(**fields)
        if hasattr(obj, "__dataclass_fields__"):
            return type(obj)(**{k: convert(v) for k, v in vars(obj).items()})
        return obj

    return convert(etdump)


def read_etdump(path: Union[str, os.PathLike]) -> ETDumpFlatCC:
    """The ETDump file at `path`."""
    with open(path, "rb") as f:
        return deserialize_from_etdump_flatcc(f.read(), source=os.fspath(path))
