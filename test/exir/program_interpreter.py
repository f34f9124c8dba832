"""A reference interpreter of emitted programs, for testing the compiler
without the C++ runtime.

It executes an `ExecutionPlanT` the way the runtime does: planned tensors are
views into one real byte arena per memory id at their planned offsets (so a
bad memory plan corrupts results), constants come from the constant data by
`data_buffer_idx`, and each KernelCall runs the torch out-variant operator it
names with its arguments decoded from the value table.
"""

import operator
import warnings
from typing import Callable, Dict, List, Optional, Sequence

import torch

from executorch.exir._serialize._flatbuffer import InstructionArguments, KernelTypes
from executorch.exir.tensor import _SCALAR_TYPE_CODES

_DTYPES = {code: dtype for dtype, code in _SCALAR_TYPE_CODES.items()}


# Scalar arithmetic of the runtime's prim ops, on Python numbers.
_PRIM_OPS = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "floordiv": operator.floordiv,
    "truediv": operator.truediv,
    "mod": operator.mod,
    "eq": operator.eq,
    "gt": operator.gt,
    "lt": operator.lt,
    "ge": operator.ge,
    "le": operator.le,
}


def _resolve(name: str, overload: str):
    namespace, op = name.split("::")
    if namespace == "executorch_prim":
        return _PRIM_OPS[op]
    if namespace == "dim_order_ops":
        import executorch.exir.passes.dim_order_ops_registry  # noqa: F401
    packet = getattr(getattr(torch.ops, namespace), op)
    return getattr(packet, overload or "default")


def _nbytes(t) -> int:
    numel = 1
    for s in t.sizes:
        numel *= s
    return numel * torch.empty((), dtype=_DTYPES[t.scalarType]).element_size()


def _storage_for(t) -> torch.Tensor:
    return torch.zeros(_nbytes(t), dtype=torch.uint8)


def _view(storage: torch.Tensor, offset: int, t) -> torch.Tensor:
    dtype = _DTYPES[t.scalarType]
    sizes = list(t.sizes)
    order = list(t.dimOrder)
    flat = storage[offset : offset + _nbytes(t)].view(dtype)
    # Memory holds the dims in dim order; permute back to logical order.
    physical = flat.view([sizes[d] for d in order])
    inverse = sorted(range(len(order)), key=lambda i: order[i])
    return physical.permute(inverse)


class PlanInterpreter:
    """Runs one method of an emitted program."""

    def __init__(
        self,
        plan,
        constant_data: Sequence[bytes],
        delegate_blobs: Sequence[bytes] = (),
        backends: Optional[Dict[str, Callable]] = None,
        mutable_data: Sequence[bytes] = (),
    ):
        """`backends` maps a backend id to a Python stand-in
        `run(blob, tensors)`, called with the DelegateCall's argument values
        (inputs, then outputs to write); blobs come from `delegate_blobs`
        (the program's inline delegate data). `mutable_data` holds the
        initial values of mutable buffers, copied into their planned memory
        as the runtime does at load."""
        self.plan = plan
        self.delegate_blobs = delegate_blobs
        self.backends = backends or {}
        self.arenas = [
            torch.zeros(size, dtype=torch.uint8) for size in plan.nonConstBufferSizes
        ]
        self.constants = [
            torch.frombuffer(bytearray(d), dtype=torch.uint8) if d else None
            for d in constant_data
        ]
        self.mutable_data = mutable_data
        self.values: List = [self._decode(v) for v in plan.values]

    def _decode(self, value):
        kind, val = value.valType, value.val
        if kind == KernelTypes.Null:
            return None
        if kind in (KernelTypes.Int, KernelTypes.Double, KernelTypes.Bool):
            return next(iter(vars(val).values()))
        if kind == KernelTypes.String:
            return val.stringVal
        if kind == KernelTypes.Tensor:
            info = val.allocationInfo
            if info is None and val.dataBufferIdx:
                return _view(self.constants[val.dataBufferIdx], 0, val)
            if info is None:
                # Memory the caller supplies (unplanned inputs and outputs).
                return _view(_storage_for(val), 0, val)
            offset = info.memoryOffsetLow | (info.memoryOffsetHigh << 32)
            tensor = _view(self.arenas[info.memoryId], offset, val)
            if val.dataBufferIdx:
                initial = bytearray(self.mutable_data[val.dataBufferIdx])
                initial = torch.frombuffer(initial, dtype=torch.uint8)
                tensor.copy_(_view(initial, 0, val))
            return tensor
        if kind in (KernelTypes.DoubleList, KernelTypes.BoolList):
            return list(val.items)
        # Lists of value indices, resolved when used (their items may change).
        return ("list", kind, list(val.items))

    def _arg(self, index: int):
        value = self.values[index]
        if isinstance(value, tuple) and value and value[0] == "list":
            return [self.values[i] for i in value[2]]
        return value

    def run(self, inputs: Sequence) -> List:
        for index, data in zip(self.plan.inputs, inputs):
            if isinstance(data, torch.Tensor):
                # Dynamic inputs may be smaller than planned (their bound).
                self.values[index].resize_(data.shape).copy_(data)
            else:
                self.values[index] = data
        for chain in self.plan.chains:
            for instruction in chain.instructions or []:
                if instruction.instrArgsType == InstructionArguments.DelegateCall:
                    self._delegate_call(instruction.instrArgs)
                else:
                    self._call(instruction.instrArgs)
        return [self._arg(i) for i in self.plan.outputs]

    def _delegate_call(self, call) -> None:
        delegate = self.plan.delegates[call.delegateIndex]
        blob = self.delegate_blobs[delegate.processed.index]
        self.backends[delegate.id](bytes(blob), [self._arg(i) for i in call.args])

    def _call(self, call) -> None:
        entry = self.plan.operators[call.opIndex]
        op = _resolve(entry.name, entry.overload)
        args = list(call.args)
        if entry.name.startswith("executorch_prim::") or not any(
            a.is_out for a in op._schema.arguments
        ):
            # Prim ops on sizes: the result goes to the last value.
            self.values[args[-1]] = op(*[self._arg(i) for i in args[:-1]])
            return
        schema = op._schema
        kwargs = {a.name: self._arg(i) for a, i in zip(schema.arguments, args)}
        assert len(args) >= len(schema.arguments), (entry.name, args)
        with warnings.catch_warnings():
            # Out tensors of dynamic shape are resized within their planned
            # (upper bound) memory, as the runtime does.
            warnings.filterwarnings("ignore", "An output with one or more elements")
            op(**kwargs)
