"""Conversions between memory formats and dim orders.

A dim order lists a tensor's dimensions from outermost to innermost in memory:
a contiguous 4-D tensor has dim order (0, 1, 2, 3), a channels-last one
(0, 2, 3, 1). ExecuTorch programs describe layouts by dim order only.
"""

from typing import List, Optional, Sequence

import torch


def dim_order_from_memory_format(
    memory_format: torch.memory_format, ndim: int
) -> List[int]:
    """The dim order that `memory_format` gives a tensor of `ndim` dimensions."""
    if memory_format == torch.contiguous_format:
        return list(range(ndim))
    if memory_format == torch.channels_last and ndim == 4:
        return [0, 2, 3, 1]
    if memory_format == torch.channels_last_3d and ndim == 5:
        return [0, 2, 3, 4, 1]
    raise ValueError(f"{memory_format} has no dim order for a {ndim}-D tensor")


def memory_format_from_dim_order(
    dim_order: Optional[Sequence[int]],
) -> torch.memory_format:
    """The memory format with the given dim order; None means 'keep the
    input's layout' (`torch.preserve_format`)."""
    if dim_order is None:
        return torch.preserve_format
    dim_order = list(dim_order)
    if dim_order == list(range(len(dim_order))):
        return torch.contiguous_format
    if dim_order == [0, 2, 3, 1]:
        return torch.channels_last
    if dim_order == [0, 2, 3, 4, 1]:
        return torch.channels_last_3d
    raise ValueError(f"dim order {dim_order} has no torch memory format")


def dim_order_of(tensor: torch.Tensor) -> List[int]:
    """The dim order of a (possibly fake) tensor, from its strides; dims of
    equal stride keep their logical order, so a contiguous tensor always
    gets (0, 1, ..., n-1)."""
    strides = [_example_value(s) for s in tensor.stride()]
    return sorted(range(tensor.dim()), key=lambda d: -strides[d])


def _example_value(size) -> int:
    """A symbolic stride's value at the export's example inputs. Reading it
    this way adds no guard: `int()` on it would specialize the program's
    dynamic sizes to the example."""
    if isinstance(size, torch.SymInt):
        hint = size.node.hint
        return int(hint) if hint is not None else 0
    return int(size)
