"""Operator selection for selective builds, in upstream ExecuTorch's
selected-operators YAML format. Needs PyYAML only.

A selection says which operators a kernel library registers and, for
dtype-selective builds, which dtypes their kernels must handle:

    include_all_operators: false
    operators:
      aten::add.out:
        is_root_operator: true
        include_all_overloads: false
        debug_info: [model.pte]
    et_kernel_metadata:
      aten::add.out:
        - v1/6;0,1|6;0,1|6;0,1      # one "<dtype>;<dim order>" per tensor arg

An operator listed without metadata (or with the entry "default") needs
every dtype. An operator name without an overload ("aten::add") selects all
of its overloads when its entry has `include_all_overloads: true`.
"""

from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterable, List, Optional, Set

import yaml

# ScalarType names by their value in the .pte schema and in et_kernel_metadata.
SCALAR_TYPE_NAMES = {
    0: "Byte",
    1: "Char",
    2: "Short",
    3: "Int",
    4: "Long",
    5: "Half",
    6: "Float",
    7: "Double",
    8: "ComplexHalf",
    9: "ComplexFloat",
    10: "ComplexDouble",
    11: "Bool",
    12: "QInt8",
    13: "QUInt8",
    14: "QInt32",
    15: "BFloat16",
    16: "QUInt4x2",
    17: "QUInt2x4",
    18: "Bits1x8",
    19: "Bits2x4",
    20: "Bits4x2",
    21: "Bits8",
    22: "Bits16",
    23: "Float8_e5m2",
    24: "Float8_e4m3fn",
    25: "Float8_e5m2fnuz",
    26: "Float8_e4m3fnuz",
    27: "UInt16",
    28: "UInt32",
    29: "UInt64",
}

# Half and BFloat16 kernels compute in float, so they need its branches too.
_COMPUTE_TYPES = {"Half": "Float", "BFloat16": "Float"}

SCALAR_TYPE_VALUES = {name: value for value, name in SCALAR_TYPE_NAMES.items()}

_METADATA_VERSION = "v1/"


class SelectionError(ValueError):
    pass


def qualify(op: str) -> str:
    """ "add.out" -> "aten::add.out"; names with a namespace are kept."""
    op = op.strip()
    return op if "::" in op else f"aten::{op}"


@dataclass
class OperatorSelection:
    """The operators a build keeps. `dtypes[op]` is the set of dtype names
    the op's kernel must handle, or None when it needs all of them."""

    include_all_operators: bool = False
    # Qualified name -> dtype names (None: all dtypes).
    dtypes: Dict[str, Optional[Set[str]]] = field(default_factory=dict)
    # Base names ("aten::add") whose every overload is selected.
    all_overloads: Set[str] = field(default_factory=set)
    # Qualified name -> where the selection came from (model paths, "list").
    debug_info: Dict[str, List[str]] = field(default_factory=dict)
    # Qualified name -> et_kernel_metadata strings, kept for round trips.
    kernel_metadata: Dict[str, List[str]] = field(default_factory=dict)

    def add(self, op: str, dtypes: Optional[Iterable[str]], source: str) -> None:
        """Selects `op` for `dtypes` (None: all), merging with what is there."""
        op = qualify(op)
        if op in self.dtypes:
            known = self.dtypes[op]
            self.dtypes[op] = (
                None if known is None or dtypes is None else known | set(dtypes)
            )
        else:
            self.dtypes[op] = None if dtypes is None else set(dtypes)
        sources = self.debug_info.setdefault(op, [])
        if source not in sources:
            sources.append(source)

    def merge(self, other: "OperatorSelection") -> None:
        self.include_all_operators |= other.include_all_operators
        self.all_overloads |= other.all_overloads
        for op, dtypes in other.dtypes.items():
            for source in other.debug_info.get(op, ["merged"]):
                self.add(op, dtypes, source)
        for op, entries in other.kernel_metadata.items():
            mine = self.kernel_metadata.setdefault(op, [])
            mine.extend(e for e in entries if e not in mine)

    def is_selected(self, op: str) -> bool:
        op = qualify(op)
        return (
            self.include_all_operators
            or op in self.dtypes
            or op.split(".", 1)[0] in self.all_overloads
        )

    def build_dtypes(self, ops: Iterable[str]) -> Optional[FrozenSet[str]]:
        """The dtypes a dtype-selective library registering `ops` compiles:
        the union of what they need (and the types those compute in), or
        None when one of them needs every dtype."""
        union: Set[str] = set()
        for op in map(qualify, ops):
            dtypes = None if self.include_all_operators else self.dtypes.get(op)
            if dtypes is None:
                return None
            union |= dtypes
        union |= {_COMPUTE_TYPES[t] for t in union if t in _COMPUTE_TYPES}
        return frozenset(union)


def from_op_list(ops: Iterable[str], source: str = "op list") -> OperatorSelection:
    """Selects `ops` ("aten::add.out" or "add.out") for every dtype."""
    selection = OperatorSelection()
    for op in ops:
        if op.strip():
            selection.add(op, None, source)
    return selection


def dtypes_of_metadata(entry: str, where: str) -> Optional[Set[str]]:
    """Dtype names in one et_kernel_metadata entry; None for "default"."""
    if entry == "default":
        return None
    if not entry.startswith(_METADATA_VERSION):
        raise SelectionError(
            f"{where}: kernel metadata '{entry}' does not start with "
            f"'{_METADATA_VERSION}'"
        )
    dtypes = set()
    for tensor in entry[len(_METADATA_VERSION) :].split("|"):
        value = tensor.split(";", 1)[0]
        if not value.isdigit() or int(value) not in SCALAR_TYPE_NAMES:
            raise SelectionError(
                f"{where}: kernel metadata '{entry}' has an unknown dtype '{value}'"
            )
        dtypes.add(SCALAR_TYPE_NAMES[int(value)])
    return dtypes


def from_yaml_text(text: str, source: str = "selected_operators.yaml"):
    """Reads a selected-operators YAML (upstream's format)."""
    data = yaml.safe_load(text) or {}
    if not isinstance(data, dict):
        raise SelectionError(f"{source}: expected a mapping at the top level")
    selection = OperatorSelection(
        include_all_operators=bool(data.get("include_all_operators", False))
    )
    metadata = data.get("et_kernel_metadata") or {}
    operators = data.get("operators") or {}
    if isinstance(operators, list):  # a bare list of names is accepted too
        operators = {name: {} for name in operators}
    for name, info in operators.items():
        info = info or {}
        op = qualify(name)
        entries = metadata.get(name, metadata.get(op))
        if entries is None:
            dtypes = None
        else:
            dtypes = set()
            for entry in entries:
                found = dtypes_of_metadata(entry, f"{source}: {op}")
                if found is None:
                    dtypes = None
                    break
                dtypes |= found
            selection.kernel_metadata[op] = list(entries)
        if info.get("include_all_overloads") and "." not in op.split("::", 1)[1]:
            selection.all_overloads.add(op)
        for origin in info.get("debug_info") or [source]:
            selection.add(op, dtypes, str(origin))
    return selection


def load_yaml(path: str) -> OperatorSelection:
    with open(path) as f:
        return from_yaml_text(f.read(), source=path)


def to_yaml_text(selection: OperatorSelection) -> str:
    operators = {
        op: {
            "debug_info": selection.debug_info.get(op, []),
            "include_all_overloads": op in selection.all_overloads,
            "is_root_operator": True,
            "is_used_for_training": False,
        }
        for op in sorted(selection.dtypes)
    }
    metadata = {
        op: selection.kernel_metadata[op]
        for op in sorted(selection.dtypes)
        if op in selection.kernel_metadata
    }
    data = {
        "build_features": [],
        "custom_classes": [],
        "et_kernel_metadata": metadata,
        "include_all_non_op_selectives": False,
        "include_all_operators": selection.include_all_operators,
        "kernel_metadata": {},
        "operators": operators,
    }
    return yaml.safe_dump(data, sort_keys=True, default_flow_style=False)


def kernel_metadata_entry(tensors: Iterable[tuple]) -> str:
    """et_kernel_metadata for one call: `tensors` holds (dtype value,
    dim order) per tensor argument, in argument order."""
    parts = [
        f"{dtype};{','.join(str(d) for d in dim_order)}" for dtype, dim_order in tensors
    ]
    return _METADATA_VERSION + "|".join(parts) if parts else "default"
