"""TensorSpec: what the memory planner and the emitter know of a tensor."""

import math
from typing import List, Optional, Tuple

import torch

from executorch.exir.dim_order_utils import dim_order_of

# ScalarType codes of the .pte schema (scalar_type.fbs), which are c10's.
_SCALAR_TYPE_CODES = {
    torch.uint8: 0,
    torch.int8: 1,
    torch.int16: 2,
    torch.int32: 3,
    torch.int64: 4,
    torch.float16: 5,
    torch.float32: 6,
    torch.float64: 7,
    torch.complex32: 8,
    torch.complex64: 9,
    torch.complex128: 10,
    torch.bool: 11,
    torch.qint8: 12,
    torch.quint8: 13,
    torch.qint32: 14,
    torch.bfloat16: 15,
    torch.quint4x2: 16,
    torch.quint2x4: 17,
    torch.bits16: 22,
    torch.float8_e5m2: 23,
    torch.float8_e4m3fn: 24,
    torch.float8_e5m2fnuz: 25,
    torch.float8_e4m3fnuz: 26,
    torch.uint16: 27,
    torch.uint32: 28,
    torch.uint64: 29,
}

_MEMORY_FORMAT_CODES = {
    torch.contiguous_format: 0,
    torch.preserve_format: 1,
    torch.channels_last: 2,
    torch.channels_last_3d: 3,
}


def scalar_type_code(dtype: torch.dtype) -> int:
    """The schema's ScalarType code of `dtype`."""
    if dtype not in _SCALAR_TYPE_CODES:
        raise ValueError(f"{dtype} has no ScalarType in the .pte format")
    return _SCALAR_TYPE_CODES[dtype]


def dtype_of_scalar_type_code(code: int) -> torch.dtype:
    """The dtype of a schema ScalarType code."""
    for dtype, known in _SCALAR_TYPE_CODES.items():
        if known == code:
            return dtype
    raise ValueError(f"ScalarType code {code} names no dtype")


def memory_format_code(memory_format: torch.memory_format) -> int:
    """c10's MemoryFormat code, which is how kernels receive one."""
    return _MEMORY_FORMAT_CODES[memory_format]


# Tensor sizes are int32 in the schema.
_MAX_SIZE = 2**31 - 1


def upper_bound(size) -> Tuple[int, bool]:
    """(static size or upper bound of a symbolic size, whether symbolic)."""
    if isinstance(size, int):
        return size, False
    node = size.node
    bound = node.shape_env.bound_sympy(node.expr).upper
    if not math.isfinite(float(bound)):
        raise ValueError(
            f"symbolic size {size} has no upper bound; give the dynamic "
            "dimension a max in torch.export.Dim"
        )
    if int(bound) > _MAX_SIZE:
        raise ValueError(
            f"symbolic size {size} has upper bound {int(bound)}, more than a "
            f".pte size can hold ({_MAX_SIZE}); give the dynamic dimension a "
            "smaller max in torch.export.Dim"
        )
    return int(bound), True


class TensorSpec:
    """A tensor of a planned graph: its type and layout, and where it lives.

    Attributes:
        dtype, shape (upper bounds for symbolic sizes), dim_order.
        is_dynamic: some size is symbolic (`shape` holds upper bounds).
        const: the data is a constant (parameter, buffer, lifted constant),
            stored in the program's constant segment, never planned.
        mutable: a buffer the program writes to.
        lifetime: [first, last] node index at which the tensor is live;
            None until computed by memory planning.
        base: for a view (`memory.view`), the spec whose memory it shares.
        view_offset: for a view, the bytes from its base's start to its own.
        mem_id, mem_offset: the planned buffer and byte offset in it; None
            when the tensor is not planned.
    """

    def __init__(
        self,
        dtype: torch.dtype,
        shape: List[int],
        dim_order: Optional[List[int]] = None,
        *,
        is_dynamic: bool = False,
        const: bool = False,
        mutable: bool = False,
        requires_grad: bool = False,
    ):
        self.dtype = dtype
        self.shape = list(shape)
        self.dim_order = (
            list(dim_order) if dim_order is not None else list(range(len(shape)))
        )
        self.is_dynamic = is_dynamic
        self.const = const
        self.mutable = mutable
        self.requires_grad = requires_grad
        self.lifetime: List[Optional[int]] = [None, None]
        self.mem_id: Optional[int] = None
        self.mem_offset: Optional[int] = None
        # Set for a view: the spec whose memory this one aliases, and where
        # in it this one starts.
        self.base: Optional["TensorSpec"] = None
        self.view_offset = 0

    @classmethod
    def from_tensor(cls, tensor: torch.Tensor, const: bool = False) -> "TensorSpec":
        """The spec of a real or fake tensor (symbolic sizes become their
        upper bounds)."""
        bounds = [upper_bound(s) for s in tensor.shape]
        return cls(
            tensor.dtype,
            [b for b, _ in bounds],
            dim_order_of(tensor),
            is_dynamic=any(dynamic for _, dynamic in bounds),
            const=const,
            requires_grad=tensor.requires_grad,
        )

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """Bytes of the tensor's data (at its upper-bound shape)."""
        return self.numel * torch.empty((), dtype=self.dtype).element_size()

    @property
    def planned(self) -> bool:
        return self.mem_id is not None

    def __repr__(self) -> str:
        where = (
            f"mem_id={self.mem_id}, mem_offset={self.mem_offset}"
            if self.planned
            else ("const" if self.const else "unplanned")
        )
        return (
            f"TensorSpec({self.dtype}, shape={self.shape}, "
            f"dim_order={self.dim_order}, lifetime={self.lifetime}, {where})"
        )
