"""Graph-level memory operations of the ExecuTorch dialect."""

from typing import List, Tuple, Union

import torch

AllocSpec = Tuple[Tuple[int, ...], torch.dtype]


def alloc(spec: Union[AllocSpec, List[AllocSpec]]):
    """Allocates the out tensor(s) of an out-variant call.

    A graph node calling `alloc` stands for planned memory: the memory planner
    gives it an offset and the emitter turns it into a Tensor value. `spec` is
    `(shape, dtype)`, or a list of them for a `Tensor[]` out argument. Called
    eagerly, it returns empty tensors of that shape.
    """
    if isinstance(spec, list):
        return [alloc(s) for s in spec]
    shape, dtype = spec
    return torch.empty(shape, dtype=dtype)


def view(base: torch.Tensor, shape: List[int], offset: int = 0) -> torch.Tensor:
    """A reshape, or a contiguous block, that aliases `base`'s memory instead
    of copying it.

    The result is the elements of the contiguous `base` from `offset` on, as
    many as `shape` holds. The memory planner gives a `view` node the memory
    of its base from that offset and the emitter writes a Tensor value over
    those bytes, so no instruction runs. Called eagerly, it is
    `base.view(-1)[offset:offset + n].view(shape)`.
    """
    if offset == 0 and base.numel() == torch.Size(shape).numel():
        return base.view(shape)
    flat = base.reshape(-1)
    return flat[offset : offset + torch.Size(shape).numel()].view(shape)
