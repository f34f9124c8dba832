"""Reads and writes FlatBuffers described by a `.fbs` schema.

The developer tools' files (ETDump, BundledProgram) come from devices and
other tools, so reading checks every offset, length and vtable against the
buffer and names the field at fault ("run_data[2].events[7].profile_event.
name: string runs past the end of the 812-byte buffer"). The schema file is
the single description of the format: its tables, enums and unions are
parsed here (the subset of the .fbs language the schemas use: include,
namespace, file_identifier, root_type, enum, union, table; no structs).

    schema = Schema.load("devtools/etdump/etdump_schema.fbs")
    root = schema.decode(data, size_prefixed=True)     # SimpleNamespace tree
    data = schema.encode(root, size_prefixed=True)

Decoded tables are `types.SimpleNamespace` objects with every field of the
table (defaults filled in; absent strings, vectors and tables are None),
enums as ints, a union field as the member table with `<field>_type` the
member's name. `encode` reads the same attributes from any object (a
namespace or a dataclass); for a union it takes the member from
`<field>_type` or, failing that, from the value's class name.
"""

import dataclasses
import os
import re
import struct
import types
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import flatbuffers

from executorch.exir.error import ExportError, ExportErrorType

_SCALARS = {
    # name: (struct format, Builder.Prepend<X>Slot suffix)
    "bool": ("<?", "Bool"),
    "byte": ("<b", "Int8"),
    "ubyte": ("<B", "Uint8"),
    "int8": ("<b", "Int8"),
    "uint8": ("<B", "Uint8"),
    "short": ("<h", "Int16"),
    "ushort": ("<H", "Uint16"),
    "int": ("<i", "Int32"),
    "uint": ("<I", "Uint32"),
    "long": ("<q", "Int64"),
    "ulong": ("<Q", "Uint64"),
    "float": ("<f", "Float32"),
    "double": ("<d", "Float64"),
}


class SchemaError(ExportError, ValueError):
    """The .fbs file uses something this reader does not handle."""

    error_type = ExportErrorType.NOT_SUPPORTED


class FlatBufferError(ExportError, ValueError):
    """A buffer does not match its schema. `field` is the path of the field
    at fault, e.g. "run_data[0].events[3].debug_event"."""

    error_type = ExportErrorType.INVALID_INPUT_TYPE

    def __init__(self, field: str, problem: str):
        super().__init__(f"{field or '(root)'}: {problem}")
        self.field = field or "(root)"
        self.problem = problem


@dataclasses.dataclass
class FieldType:
    kind: str  # "scalar", "enum", "string", "table", "union", "vector"
    name: str = ""  # scalar, enum, table or union name
    element: Optional["FieldType"] = None  # of a vector


@dataclasses.dataclass
class Field:
    name: str
    type: FieldType
    slot: int  # vtable slot; a union's value (its type byte is slot - 1)
    default: Any = None
    align: int = 0  # force_align of a vector


@dataclasses.dataclass
class Table:
    name: str
    fields: List[Field]
    num_slots: int


class Schema:
    def __init__(self):
        self.tables: Dict[str, Table] = {}
        self.enums: Dict[str, Tuple[str, Dict[str, int]]] = {}
        self.unions: Dict[str, List[str]] = {}
        self.identifier: Optional[str] = None
        self.root_type: Optional[str] = None
        self._include_dirs: List[str] = []

    # ------------------------------------------------------------------
    # Parsing the .fbs

    @classmethod
    def load(cls, path: str, include_dirs: Sequence[str] = ()) -> "Schema":
        """Parses `path`; `include` statements are looked up next to the
        including file, then in `include_dirs`."""
        schema = cls()
        raw_tables: List[Tuple[str, List[Tuple[str, str, str, str]]]] = []
        schema._include_dirs = list(include_dirs)
        schema._parse_file(os.path.abspath(path), raw_tables, set(), top=True)
        for name, raw_fields in raw_tables:
            schema._add_table(name, raw_fields)
        if schema.root_type not in schema.tables:
            raise SchemaError(f"{path}: root_type {schema.root_type!r} is not a table")
        return schema

    def _parse_file(self, path, raw_tables, seen, top):
        if path in seen:
            return
        seen.add(path)
        with open(path) as f:
            text = re.sub(r"//[^\n]*", "", f.read())
        for include in re.findall(r'^\s*include\s+"([^"]+)"\s*;', text, re.M):
            candidates = [os.path.dirname(path)] + self._include_dirs
            found = [
                os.path.join(d, include)
                for d in candidates
                if os.path.exists(os.path.join(d, include))
            ]
            if not found:
                raise SchemaError(f"{path}: cannot find included {include!r}")
            self._parse_file(os.path.abspath(found[0]), raw_tables, seen, False)
        text = re.sub(r'^\s*include\s+"[^"]+"\s*;', "", text, flags=re.M)
        pattern = re.compile(
            r"(table|struct|enum|union)\s+(\w+)\s*(?::\s*(\w+))?\s*\{([^}]*)\}"
            r'|(file_identifier)\s+"([^"]*)"\s*;'
            r"|(root_type)\s+([\w.]+)\s*;"
            r"|(namespace|file_extension|attribute)\s+[^;]*;",
            re.S,
        )
        position = 0
        for match in pattern.finditer(text):
            if text[position : match.start()].strip():
                raise SchemaError(
                    f"{path}: cannot parse {text[position:match.start()].strip()[:40]!r}"
                )
            position = match.end()
            kind, name, base, body = match.group(1, 2, 3, 4)
            if kind == "struct":
                raise SchemaError(f"{path}: structs are not supported ({name})")
            if kind == "enum":
                self.enums[name] = (base, self._enum_values(body))
            elif kind == "union":
                members = [m.strip() for m in body.split(",") if m.strip()]
                self.unions[name] = [m.split(".")[-1] for m in members]
            elif kind == "table":
                raw_tables.append((name, self._raw_fields(path, name, body)))
            elif match.group(5) and top:
                self.identifier = match.group(6)
            elif match.group(7) and top:
                self.root_type = match.group(8).split(".")[-1]
        if text[position:].strip():
            raise SchemaError(f"{path}: cannot parse {text[position:].strip()[:40]!r}")

    @staticmethod
    def _enum_values(body: str) -> Dict[str, int]:
        values, next_value = {}, 0
        for item in (i.strip() for i in body.split(",")):
            if not item:
                continue
            name, _, value = (p.strip() for p in item.partition("="))
            next_value = int(value, 0) if value else next_value
            values[name] = next_value
            next_value += 1
        return values

    @staticmethod
    def _raw_fields(path, table, body):
        fields = []
        for item in (i.strip() for i in body.split(";")):
            if not item:
                continue
            match = re.fullmatch(
                r"(\w+)\s*:\s*(\[?\s*[\w.]+\s*\]?)\s*(?:=\s*([^\s(]+))?\s*(?:\((.*)\))?",
                item,
                re.S,
            )
            if match is None:
                raise SchemaError(f"{path}: table {table}: cannot parse field {item!r}")
            fields.append(match.groups())
        return fields

    def _type(self, text: str) -> FieldType:
        text = text.replace(" ", "")
        if text.startswith("["):
            return FieldType("vector", element=self._type(text[1:-1]))
        name = text.split(".")[-1]
        if name in _SCALARS:
            return FieldType("scalar", name)
        if name == "string":
            return FieldType("string")
        if name in self.enums:
            return FieldType("enum", name)
        if name in self.unions:
            return FieldType("union", name)
        return FieldType("table", name)

    def _add_table(self, name, raw_fields):
        fields, slot = [], 0
        for field_name, type_text, default, attributes in raw_fields:
            field_type = self._type(type_text)
            if field_type.kind == "union":
                slot += 1  # the type byte takes the slot before the value
            align = 0
            if attributes:
                found = re.search(r"force_align\s*:\s*(\d+)", attributes)
                align = int(found.group(1)) if found else 0
            fields.append(
                Field(
                    field_name,
                    field_type,
                    slot,
                    self._default(field_type, default),
                    align,
                )
            )
            slot += 1
        self.tables[name] = Table(name, fields, slot)

    def _default(self, field_type: FieldType, text: Optional[str]):
        if field_type.kind == "scalar":
            if text is None:
                return False if field_type.name == "bool" else 0
            if field_type.name == "bool":
                return text == "true"
            return (
                float(text) if field_type.name in ("float", "double") else int(text, 0)
            )
        if field_type.kind == "enum":
            if text is None:
                return 0
            values = self.enums[field_type.name][1]
            return values[text] if text in values else int(text, 0)
        return None

    def _element_size(self, field_type: FieldType) -> int:
        if field_type.kind == "scalar":
            return struct.calcsize(_SCALARS[field_type.name][0])
        if field_type.kind == "enum":
            return struct.calcsize(_SCALARS[self.enums[field_type.name][0]][0])
        return 4

    def _format(self, field_type: FieldType) -> str:
        name = (
            field_type.name
            if field_type.kind == "scalar"
            else self.enums[field_type.name][0]
        )
        return _SCALARS[name][0]

    # ------------------------------------------------------------------
    # Decoding

    def decode(
        self,
        data: bytes,
        size_prefixed: bool = False,
        factory: Callable[[str, Dict[str, Any]], Any] = (
            lambda table, fields: types.SimpleNamespace(**fields)
        ),
    ) -> Any:
        """Decodes and checks a buffer; raises FlatBufferError naming the
        field at fault. Each table becomes `factory(table_name, fields)`."""
        return _Decoder(self, bytes(data), factory).root(size_prefixed)

    def has_identifier(self, data: bytes, size_prefixed: bool = False) -> bool:
        start = 4 if size_prefixed else 0
        return self.identifier is not None and data[start + 4 : start + 8] == (
            self.identifier.encode()
        )

    # ------------------------------------------------------------------
    # Encoding

    def encode(self, root: Any, size_prefixed: bool = False) -> bytes:
        builder = flatbuffers.Builder(1024)
        offset = _Encoder(self, builder).table(self.tables[self.root_type], root, "")
        identifier = self.identifier.encode() if self.identifier else None
        if size_prefixed:
            builder.FinishSizePrefixed(offset, identifier)
        else:
            builder.Finish(offset, identifier)
        return bytes(builder.Output())


class _Decoder:
    def __init__(self, schema: Schema, data: bytes, factory):
        self.schema = schema
        self.data = data
        self.factory = factory
        # Shared sub-tables could make decoding exponential: bound the work.
        self.budget = 64 + 8 * len(data)

    def fail(self, field: str, problem: str):
        raise FlatBufferError(field, problem)

    def read(self, fmt: str, pos: int, field: str, what: str):
        size = struct.calcsize(fmt)
        if pos < 0 or pos + size > len(self.data):
            self.fail(
                field,
                f"{what} at byte {pos} runs past the end of the "
                f"{len(self.data)}-byte buffer",
            )
        return struct.unpack_from(fmt, self.data, pos)[0]

    def root(self, size_prefixed: bool):
        start = 0
        if size_prefixed:
            size = self.read("<I", 0, "", "size prefix")
            if size + 4 > len(self.data):
                self.fail(
                    "",
                    f"size prefix says {size} bytes follow, the buffer has "
                    f"{len(self.data) - 4} (truncated?)",
                )
            start = 4
        if self.schema.identifier is not None:
            found = self.data[start + 4 : start + 8]
            if found != self.schema.identifier.encode():
                self.fail(
                    "",
                    f"file identifier {found!r} is not {self.schema.identifier!r}",
                )
        offset = self.read("<I", start, "", "root offset")
        return self.table(self.schema.tables[self.schema.root_type], start + offset, "")

    def table(self, table: Table, pos: int, path: str):
        self.budget -= 1
        if self.budget < 0:
            self.fail(path, "too many nested references for the buffer's size")
        vtable = pos - self.read("<i", pos, path, f"{table.name} table")
        vtable_size = self.read("<H", vtable, path, f"{table.name} vtable")
        object_size = self.read("<H", vtable + 2, path, f"{table.name} vtable")
        if vtable_size < 4 or vtable_size % 2 or vtable + vtable_size > len(self.data):
            self.fail(path, f"{table.name} vtable at byte {vtable} is malformed")
        if object_size < 4 or pos + object_size > len(self.data):
            self.fail(path, f"{table.name} table at byte {pos} runs past the end")
        result: Dict[str, Any] = {}
        for field in table.fields:
            field_path = f"{path}.{field.name}" if path else field.name
            located = self.field_position(
                vtable, vtable_size, object_size, pos, field.slot, field_path
            )
            if field.type.kind == "union":
                self.union(
                    result, field, vtable, vtable_size, object_size, pos, field_path
                )
                continue
            if located is None:
                result[field.name] = field.default
                continue
            result[field.name] = self.value(field.type, located, field_path)
        return self.factory(table.name, result)

    def field_position(self, vtable, vtable_size, object_size, pos, slot, path):
        entry = 4 + 2 * slot
        if entry >= vtable_size:
            return None
        offset = struct.unpack_from("<H", self.data, vtable + entry)[0]
        if offset == 0:
            return None
        if offset >= object_size:
            self.fail(path, f"field offset {offset} lies outside its table")
        return pos + offset

    def union(self, result, field, vtable, vtable_size, object_size, pos, path):
        members = self.schema.unions[field.type.name]
        type_pos = self.field_position(
            vtable, vtable_size, object_size, pos, field.slot - 1, path
        )
        type_index = (
            0 if type_pos is None else self.read("<B", type_pos, path, "union type")
        )
        value_pos = self.field_position(
            vtable, vtable_size, object_size, pos, field.slot, path
        )
        result[field.name + "_type"] = None
        result[field.name] = None
        if type_index == 0:
            return
        if type_index > len(members):
            self.fail(path, f"union type {type_index} is not one of {members}")
        if value_pos is None:
            self.fail(path, f"union of type {members[type_index - 1]} has no value")
        member = members[type_index - 1]
        target = self.reference(value_pos, path)
        result[field.name + "_type"] = member
        result[field.name] = self.table(self.schema.tables[member], target, path)

    def reference(self, pos: int, path: str) -> int:
        target = pos + self.read("<I", pos, path, "offset")
        if target >= len(self.data):
            self.fail(
                path,
                f"offset at byte {pos} points to byte {target}, past the end of "
                f"the {len(self.data)}-byte buffer",
            )
        return target

    def value(self, field_type: FieldType, pos: int, path: str):
        kind = field_type.kind
        if kind in ("scalar", "enum"):
            return self.read(self.schema._format(field_type), pos, path, "value")
        target = self.reference(pos, path)
        if kind == "string":
            return self.string(target, path)
        if kind == "table":
            return self.table(self.schema.tables[field_type.name], target, path)
        return self.vector(field_type.element, target, path)

    def string(self, pos: int, path: str) -> str:
        length = self.read("<I", pos, path, "string length")
        if pos + 4 + length >= len(self.data):
            self.fail(
                path,
                f"string of {length} bytes at byte {pos} runs past the end of "
                f"the {len(self.data)}-byte buffer",
            )
        try:
            return self.data[pos + 4 : pos + 4 + length].decode("utf-8")
        except UnicodeDecodeError as error:
            self.fail(path, f"string is not UTF-8 ({error.reason})")

    def vector(self, element: FieldType, pos: int, path: str):
        count = self.read("<I", pos, path, "vector length")
        size = self.schema._element_size(element)
        start = pos + 4
        if start + count * size > len(self.data):
            self.fail(
                path,
                f"vector of {count} elements at byte {pos} runs past the end of "
                f"the {len(self.data)}-byte buffer",
            )
        if element.kind in ("scalar", "enum"):
            fmt = self.schema._format(element)
            if fmt == "<B":
                return self.data[start : start + count]
            return list(struct.unpack_from(f"<{count}{fmt[1]}", self.data, start))
        return [
            self.value(element, start + 4 * i, f"{path}[{i}]") for i in range(count)
        ]


class _Encoder:
    def __init__(self, schema: Schema, builder: flatbuffers.Builder):
        self.schema = schema
        self.builder = builder

    def table(self, table: Table, obj: Any, path: str) -> int:
        # Children first: FlatBuffers are written back to front.
        children: Dict[str, int] = {}
        union_types: Dict[str, int] = {}
        for field in table.fields:
            value = getattr(obj, field.name, None)
            field_path = f"{path}.{field.name}" if path else field.name
            if value is None or field.type.kind in ("scalar", "enum"):
                continue
            if field.type.kind == "union":
                member = (
                    getattr(obj, field.name + "_type", None) or type(value).__name__
                )
                members = self.schema.unions[field.type.name]
                if member not in members:
                    raise FlatBufferError(
                        field_path, f"{member} is not one of {members}"
                    )
                union_types[field.name] = members.index(member) + 1
                children[field.name] = self.table(
                    self.schema.tables[member], value, field_path
                )
            else:
                children[field.name] = self.reference(field, value, field_path)
        self.builder.StartObject(table.num_slots)
        for field in table.fields:
            if field.name in children:
                if field.type.kind == "union":
                    self.builder.PrependUint8Slot(
                        field.slot - 1, union_types[field.name], 0
                    )
                self.builder.PrependUOffsetTRelativeSlot(
                    field.slot, children[field.name], 0
                )
            elif field.type.kind in ("scalar", "enum"):
                value = getattr(obj, field.name, None)
                value = (
                    field.default
                    if value is None
                    else _plain(value, self.schema, field.type)
                )
                name = (
                    field.type.name
                    if field.type.kind == "scalar"
                    else self.schema.enums[field.type.name][0]
                )
                prepend = getattr(self.builder, f"Prepend{_SCALARS[name][1]}Slot")
                prepend(field.slot, value, field.default)
        return self.builder.EndObject()

    def reference(self, field: Field, value: Any, path: str) -> int:
        kind = field.type.kind
        if kind == "string":
            return self.builder.CreateString(value)
        if kind == "table":
            return self.table(self.schema.tables[field.type.name], value, path)
        return self.vector(field.type.element, value, field.align, path)

    def vector(self, element: FieldType, items, align: int, path: str) -> int:
        if element.kind in ("scalar", "enum"):
            size = self.schema._element_size(element)
            fmt = self.schema._format(element)
            data = (
                bytes(items)
                if fmt in ("<B", "<b")
                and isinstance(items, (bytes, bytearray, memoryview))
                else struct.pack(
                    f"<{len(items)}{fmt[1]}",
                    *(_plain(i, self.schema, element) for i in items),
                )
            )
            self.builder.StartVector(size, len(items), max(size, align))
            self.builder.head -= len(data)
            self.builder.Bytes[self.builder.head : self.builder.head + len(data)] = data
            return self.builder.EndVector()
        if element.kind == "string":
            offsets = [self.builder.CreateString(i) for i in items]
        else:
            offsets = [
                self.table(self.schema.tables[element.name], item, f"{path}[{i}]")
                for i, item in enumerate(items)
            ]
        self.builder.StartVector(4, len(offsets), max(4, align))
        for offset in reversed(offsets):
            self.builder.PrependUOffsetTRelative(offset)
        return self.builder.EndVector()


def _plain(value: Any, schema: Schema, field_type: FieldType):
    """An int/float/bool from a value that may be an Enum member or name."""
    if hasattr(value, "value") and not isinstance(value, (int, float)):
        value = value.value
    if isinstance(value, str) and field_type.kind == "enum":
        return schema.enums[field_type.name][1][value]
    return value
