"""A method's memory plan, read from its `.pte`: where each planned tensor
lives (buffer, offset, bytes) and for which instructions it is live (from
the first to the last instruction that refers to it; method inputs from the
start, outputs to the end)."""

import dataclasses
from typing import Dict, List, Optional

import torch

from executorch.exir._serialize._flatbuffer import (
    InstructionArguments,
    KernelTypes,
    Program,
    ProgramT,
)
from executorch.exir.tensor import dtype_of_scalar_type_code


@dataclasses.dataclass
class PlannedTensor:
    value: int
    offset: int
    nbytes: int
    first: int  # instruction index
    last: int
    shape: List[int]
    dtype: str


@dataclasses.dataclass
class PlannedBuffer:
    index: int  # the memory id in the program (1-based; 0 is reserved)
    size: int
    tensors: List[PlannedTensor]

    @property
    def peak_live_bytes(self) -> int:
        """The most bytes of tensors live at one instruction."""
        ends = sorted({t.first for t in self.tensors} | {t.last for t in self.tensors})
        return max(
            (
                sum(t.nbytes for t in self.tensors if t.first <= i <= t.last)
                for i in ends
            ),
            default=0,
        )

    @property
    def high_water(self) -> int:
        """The end of the highest tensor: the bytes the plan needs."""
        return max((t.offset + t.nbytes for t in self.tensors), default=0)


@dataclasses.dataclass
class MemoryPlan:
    method: str
    num_instructions: int
    buffers: List[PlannedBuffer]


def _decoded(name) -> str:
    return name.decode() if isinstance(name, bytes) else name


def _ints(vector) -> List[int]:
    """A vector field of the object API (a numpy array, a list or None)."""
    return [] if vector is None else [int(i) for i in vector]


def _referenced_values(instruction, values) -> List[int]:
    kind, args = instruction.instrArgsType, instruction.instrArgs
    if kind in (InstructionArguments.KernelCall, InstructionArguments.DelegateCall):
        indices = _ints(args.args)
    elif kind == InstructionArguments.MoveCall:
        indices = [args.moveFrom, args.moveTo]
    elif kind == InstructionArguments.JumpFalseCall:
        indices = [args.condValueIndex]
    elif kind == InstructionArguments.FreeCall:
        indices = [args.valueIndex]
    else:
        indices = []
    referenced = []
    for index in indices:
        referenced.append(index)
        value = values[index]
        if value.valType in (KernelTypes.TensorList, KernelTypes.OptionalTensorList):
            referenced += [i for i in _ints(value.val.items) if i >= 0]
    return referenced


def memory_plan(pte: bytes, method: Optional[str] = None) -> MemoryPlan:
    """The plan of `method` (by default "forward", or the only method)."""
    program = ProgramT.InitFromObj(Program.GetRootAs(pte, 0))
    plans = {_decoded(p.name): p for p in program.executionPlan}
    if method is None:
        method = "forward" if "forward" in plans else next(iter(plans))
    if method not in plans:
        raise ValueError(
            f"the program has no method {method!r} (it has {sorted(plans)})"
        )
    plan = plans[method]
    instructions = [i for chain in plan.chains or [] for i in chain.instructions or []]
    first: Dict[int, int] = {}
    last: Dict[int, int] = {}
    for index, instruction in enumerate(instructions):
        for value in _referenced_values(instruction, plan.values):
            first.setdefault(value, index)
            last[value] = index
    end = max(len(instructions) - 1, 0)
    for value in _ints(plan.inputs):
        first[value] = 0
    for value in _ints(plan.outputs):
        last[value] = end
        first.setdefault(value, end)
    sizes = _ints(plan.nonConstBufferSizes)
    buffers = {i: PlannedBuffer(i, size, []) for i, size in enumerate(sizes) if i > 0}
    for index, value in enumerate(plan.values or []):
        if value.valType != KernelTypes.Tensor or value.val.allocationInfo is None:
            continue
        tensor = value.val
        info = tensor.allocationInfo
        dtype = dtype_of_scalar_type_code(tensor.scalarType)
        shape = _ints(tensor.sizes)
        nbytes = torch.Size(shape).numel() * torch.empty((), dtype=dtype).element_size()
        if info.memoryId not in buffers or index not in first:
            continue
        buffers[info.memoryId].tensors.append(
            PlannedTensor(
                index,
                info.memoryOffsetLow + (info.memoryOffsetHigh << 32),
                nbytes,
                first[index],
                last[index],
                shape,
                str(dtype).removeprefix("torch."),
            )
        )
    return MemoryPlan(method, len(instructions), list(buffers.values()))
