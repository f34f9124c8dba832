"""Parses operator schemas ("aten::add.out(Tensor self, ...) -> Tensor(a!)").

Only what the kernel binding generator needs is kept: each argument's name,
type, whether it is written to and whether it has a default; and the
returns.
"""

from dataclasses import dataclass
from typing import List, Optional, Tuple

DEFAULT_NAMESPACE = "aten"


class SchemaError(ValueError):
    pass


@dataclass(frozen=True)
class Type:
    """A schema type: a base name ("Tensor", "int", ...) with list/optional
    modifiers. `elem_optional` is the inner "?" of "Tensor?[]"."""

    base: str
    is_list: bool = False
    optional: bool = False
    elem_optional: bool = False


@dataclass(frozen=True)
class Argument:
    name: str
    type: Type
    mutable: bool = False
    kwarg_only: bool = False
    default: Optional[str] = None


@dataclass(frozen=True)
class Return:
    type: Type
    alias: Optional[str] = None
    mutable: bool = False


@dataclass(frozen=True)
class Schema:
    namespace: str
    name: str
    overload: str
    arguments: Tuple[Argument, ...]
    returns: Tuple[Return, ...]

    @property
    def qualified_name(self) -> str:
        """The name the kernel registry and the .pte use: "ns::name.overload"."""
        base = f"{self.namespace}::{self.name}"
        return f"{base}.{self.overload}" if self.overload else base

    @property
    def op_name(self) -> str:
        """The name as written after `op:` in functions.yaml: "name.overload"."""
        return f"{self.name}.{self.overload}" if self.overload else self.name

    @property
    def out_arguments(self) -> Tuple[Argument, ...]:
        return tuple(a for a in self.arguments if a.mutable and a.kwarg_only)


def split_top_level(text: str, sep: str = ",") -> List[str]:
    """Splits on `sep` outside brackets and quotes."""
    parts, depth, quote, current = [], 0, None, []
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append("".join(current).strip())
            current = []
            continue
        current.append(ch)
    tail = "".join(current).strip()
    if tail or parts:
        parts.append(tail)
    return parts


def parse_type(text: str) -> Tuple[Type, Optional[str], bool]:
    """Parses "Tensor(a!)[]?" into (Type, alias set, mutable)."""
    alias, mutable = None, False
    if "(" in text:
        start, end = text.index("("), text.index(")")
        annotation = text[start + 1 : end]
        mutable = annotation.endswith("!")
        alias = annotation.rstrip("!")
        text = text[:start] + text[end + 1 :]
    optional = text.endswith("?")
    if optional:
        text = text[:-1]
    is_list = text.endswith("]")
    elem_optional = False
    if is_list:
        text = text[: text.index("[")]
        elem_optional = text.endswith("?")
        text = text.rstrip("?")
    if not text or not text.replace("_", "").isalnum():
        raise SchemaError(f"bad type '{text}'")
    return Type(text, is_list, optional, elem_optional), alias, mutable


def parse_argument(text: str, kwarg_only: bool) -> Argument:
    decl, _, default = text.partition("=")
    pieces = decl.split()
    if len(pieces) != 2:
        raise SchemaError(f"bad argument '{text}'")
    arg_type, _, mutable = parse_type(pieces[0])
    return Argument(
        name=pieces[1],
        type=arg_type,
        mutable=mutable,
        kwarg_only=kwarg_only,
        default=default.strip() if default else None,
    )


def parse_returns(text: str) -> Tuple[Return, ...]:
    text = text.strip()
    if text.startswith("(") and text.endswith(")"):
        items = split_top_level(text[1:-1])
    else:
        items = [text]
    returns = []
    for item in items:
        if not item:
            continue
        ret_type, alias, mutable = parse_type(item.split()[0])
        returns.append(Return(ret_type, alias, mutable))
    return tuple(returns)


def parse_schema(text: str) -> Schema:
    """Parses one schema; a name without "ns::" is in the aten namespace."""
    text = text.strip()
    open_paren = text.find("(")
    arrow = text.rfind("->")
    if open_paren < 0 or arrow < 0:
        raise SchemaError(f"not a schema: '{text}'")
    close_paren = text.rfind(")", 0, arrow)
    full_name = text[:open_paren].strip()
    namespace, _, name = full_name.rpartition("::")
    name, _, overload = name.partition(".")
    if not name:
        raise SchemaError(f"schema without a name: '{text}'")
    arguments, kwarg_only = [], False
    for item in split_top_level(text[open_paren + 1 : close_paren]):
        if item == "*":
            kwarg_only = True
        elif item:
            arguments.append(parse_argument(item, kwarg_only))
    return Schema(
        namespace=namespace or DEFAULT_NAMESPACE,
        name=name,
        overload=overload,
        arguments=tuple(arguments),
        returns=parse_returns(text[arrow + 2 :]),
    )


def load_schema_file(path: str) -> dict:
    """Reads a file of schemas, one per line ("#" starts a comment), into a
    dict keyed by qualified name."""
    schemas = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                schema = parse_schema(line)
                schemas[schema.qualified_name] = schema
    return schemas
