"""The `dim_order_ops` operators: layout-changing copies described by a dim
order instead of a `torch.memory_format`.

`to_edge` rewrites `aten._to_copy` and `aten.clone` into these, so that a
program names layouts the way the runtime does. Each has an `.out` overload
for the out-variant kernels the runtime registers as
`dim_order_ops::_to_dim_order_copy.out` and `dim_order_ops::_clone_dim_order.out`.
"""

import torch
from torch.library import Library

from executorch.exir.dim_order_utils import memory_format_from_dim_order

_lib = Library("dim_order_ops", "DEF")

_lib.define(
    "_to_dim_order_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, "
    "Device? device=None, bool? pin_memory=None, bool non_blocking=False, "
    "int[]? dim_order=None) -> Tensor"
)
# The out overload has no dtype/layout/device: they are those of `out`.
_lib.define(
    "_to_dim_order_copy.out(Tensor self, *, bool non_blocking=False, "
    "int[]? dim_order=None, Tensor(a!) out) -> Tensor(a!)"
)
_lib.define(
    "_clone_dim_order(Tensor self, *, bool non_blocking=False, "
    "int[]? dim_order=None) -> Tensor"
)
_lib.define(
    "_clone_dim_order.out(Tensor self, *, bool non_blocking=False, "
    "int[]? dim_order=None, Tensor(a!) out) -> Tensor(a!)"
)


def _laid_out(tensor, dim_order):
    """`tensor` copied with strides in `dim_order` (None: its own layout's).
    Any permutation: one without a torch memory format (a size-1 channel
    makes channels-last strides read as [0, 2, 1, 3]) is laid out through
    permutes."""
    try:
        return tensor.clone(memory_format=memory_format_from_dim_order(dim_order))
    except ValueError:
        inverse = sorted(range(len(dim_order)), key=lambda d: dim_order[d])
        return tensor.permute(list(dim_order)).contiguous().permute(inverse)


def _to_dim_order_copy(
    self,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=None,
    non_blocking=False,
    dim_order=None,
):
    converted = torch.ops.aten._to_copy.default(
        self,
        dtype=dtype,
        layout=layout,
        device=device,
        pin_memory=pin_memory,
        non_blocking=non_blocking,
    )
    return _laid_out(converted, dim_order)


def _to_dim_order_copy_out(self, *, non_blocking=False, dim_order=None, out):
    out.copy_(
        _to_dim_order_copy(
            self, dtype=out.dtype, non_blocking=non_blocking, dim_order=dim_order
        )
    )
    return out


def _clone_dim_order(self, *, non_blocking=False, dim_order=None):
    return _laid_out(self, dim_order)


def _clone_dim_order_out(self, *, non_blocking=False, dim_order=None, out):
    out.copy_(_clone_dim_order(self, dim_order=dim_order))
    return out


# CompositeExplicitAutograd covers every backend, Meta included, so fake
# tensors propagate through these without a separate meta kernel.
for _name, _fn in (
    ("_to_dim_order_copy", _to_dim_order_copy),
    ("_to_dim_order_copy.out", _to_dim_order_copy_out),
    ("_clone_dim_order", _clone_dim_order),
    ("_clone_dim_order.out", _clone_dim_order_out),
):
    _lib.impl(_name, _fn, "CompositeExplicitAutograd")
