"""TensorLayout: how to read a tensor whose bytes are stored by key outside
the program (upstream ExecuTorch's `executorch.exir.tensor_layout`)."""

from dataclasses import dataclass
from typing import List


@dataclass
class TensorLayout:
    # A ScalarType code of the .pte schema (exir/_serialize/_flatbuffer.py).
    scalar_type: int
    sizes: List[int]
    # Dims from outermost to innermost in memory.
    dim_order: List[int]
