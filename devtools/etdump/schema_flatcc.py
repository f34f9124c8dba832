"""The ETDump tables as Python dataclasses, one per table of
etdump_schema.fbs with the same field names (upstream's names for them).

`Value.val` holds the name of the ValueType member ("Tensor", "Int", ...);
`Tensor.scalar_type` the ScalarType code of the .pte schema.
"""

from dataclasses import dataclass
from enum import Enum
from typing import List, Optional


@dataclass
class Null:
    pass


@dataclass
class Tensor:
    scalar_type: int
    sizes: List[int]
    strides: List[int]
    # Where the tensor's bytes start in the debug buffer.
    offset: Optional[int]


@dataclass
class TensorList:
    tensors: List[Tensor]


@dataclass
class Int:
    int_val: int


@dataclass
class Bool:
    bool_val: bool


@dataclass
class Float:
    float_val: float


@dataclass
class Double:
    double_val: float


@dataclass
class String:
    string_val: str


class ValueType(Enum):
    NULL = "Null"
    INT = "Int"
    BOOL = "Bool"
    FLOAT = "Float"
    DOUBLE = "Double"
    TENSOR = "Tensor"
    TENSOR_LIST = "TensorList"
    STRING = "String"


@dataclass
class Value:
    val: str  # a ValueType value
    tensor: Optional[Tensor]
    tensor_list: Optional[TensorList]
    int_value: Optional[Int]
    float_value: Optional[Float]
    double_value: Optional[Double]
    bool_value: Optional[Bool]
    # Set (true) for a method output.
    output: Optional[Bool]


@dataclass
class DebugEvent:
    name: Optional[str]
    chain_index: int
    instruction_id: int
    delegate_debug_id_int: Optional[int]
    delegate_debug_id_str: Optional[str]
    debug_entry: Value


class PROFILE_EVENT_ENUM(Enum):
    """Names of the runtime's own profiling events."""

    RUN_MODEL = "Method::execute"
    OPERATOR_CALL = "OPERATOR_CALL"
    DELEGATE_CALL = "DELEGATE_CALL"
    LOAD_MODEL = "Program::load_method"


@dataclass
class ProfileEvent:
    name: Optional[str]
    chain_index: int
    instruction_id: int
    delegate_debug_id_int: Optional[int]
    delegate_debug_id_str: Optional[str]
    delegate_debug_metadata: Optional[bytes]
    start_time: int
    end_time: int


@dataclass
class AllocationEvent:
    allocator_id: int
    allocation_size: int


@dataclass
class Allocator:
    name: str


@dataclass
class Event:
    profile_event: Optional[ProfileEvent]
    allocation_event: Optional[AllocationEvent]
    debug_event: Optional[DebugEvent]


@dataclass
class RunData:
    name: str
    bundled_input_index: Optional[int]
    allocators: Optional[List[Allocator]]
    events: Optional[List[Event]]


@dataclass
class ETDumpFlatCC:
    version: int
    run_data: List[RunData]
