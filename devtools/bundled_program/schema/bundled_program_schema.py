"""The BundledProgram tables as dataclasses, one per table of
bundled_program_schema.fbs with the same field names. `Value.val` is one of
Tensor, Int, Bool, Double."""

from dataclasses import dataclass
from typing import List, Union


@dataclass
class Int:
    int_val: int


@dataclass
class Bool:
    bool_val: bool


@dataclass
class Double:
    double_val: float


@dataclass
class Tensor:
    scalar_type: int
    sizes: List[int]
    data: bytes
    dim_order: List[int]


ValueUnion = Union[Tensor, Int, Bool, Double]


@dataclass
class Value:
    val: ValueUnion


@dataclass
class BundledMethodTestCase:
    inputs: List[Value]
    expected_outputs: List[Value]


@dataclass
class BundledMethodTestSuite:
    method_name: str
    test_cases: List[BundledMethodTestCase]


@dataclass
class BundledProgram:
    version: int
    method_test_suites: List[BundledMethodTestSuite]
    program: bytes
