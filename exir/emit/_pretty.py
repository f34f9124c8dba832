"""A readable listing of an emitted method, for debugging programs."""

from typing import List, Optional

from executorch.exir._serialize._flatbuffer import InstructionArguments, KernelTypes
from executorch.exir.source_info import source_line_of_trace
from executorch.exir.tensor import _SCALAR_TYPE_CODES

_DTYPE_NAMES = {
    code: str(dtype).replace("torch.", "") for dtype, code in _SCALAR_TYPE_CODES.items()
}

_SCALARS = {
    KernelTypes.Int: "intVal",
    KernelTypes.Double: "doubleVal",
    KernelTypes.Bool: "boolVal",
    KernelTypes.String: "stringVal",
}


def describe_value(plan, index: int) -> str:
    """One value of `plan`, e.g. `%3: float[2, 3] @1+64`, `%4: int 1`."""
    value = plan.values[index]
    kind, val = value.valType, value.val
    if kind == KernelTypes.Tensor:
        where = ""
        if val.allocationInfo is not None:
            info = val.allocationInfo
            offset = info.memoryOffsetLow | (info.memoryOffsetHigh << 32)
            where = f" @{info.memoryId}+{offset}"
            if val.dataBufferIdx:
                # State: planned, starting from stored mutable data.
                where += f" init#{val.dataBufferIdx}"
        elif val.dataBufferIdx:
            where = f" const#{val.dataBufferIdx}"
        sizes = ", ".join(str(s) for s in (val.sizes if val.sizes is not None else []))
        return f"%{index}: {_DTYPE_NAMES.get(val.scalarType, val.scalarType)}[{sizes}]{where}"
    if kind in _SCALARS:
        return f"%{index}: {getattr(val, _SCALARS[kind])!r}"
    if kind == KernelTypes.Null:
        return f"%{index}: None"
    items = list(val.items) if val.items is not None else []
    if kind in (KernelTypes.DoubleList, KernelTypes.BoolList):
        return f"%{index}: {items}"
    return f"%{index}: [{', '.join(f'%{i}' for i in items)}]"


def format_plan(plan, sources: Optional[List] = None) -> str:
    """The method's inputs, instructions (operator and argument values, and
    the source line of each kernel call when `sources` are given) and
    outputs, one per line."""
    sources = list(sources or [])
    lines = [
        f"method {plan.name}: planned buffers {list(plan.nonConstBufferSizes)}",
        "  inputs: " + ", ".join(describe_value(plan, i) for i in plan.inputs),
    ]
    for chain in plan.chains:
        for number, instruction in enumerate(chain.instructions or []):
            call = instruction.instrArgs
            kind = instruction.instrArgsType
            if kind == InstructionArguments.JumpFalseCall:
                condition = describe_value(plan, call.condValueIndex)
                lines.append(
                    f"  {number}: if not {condition}: goto {call.destinationInstruction}"
                )
                continue
            if kind == InstructionArguments.MoveCall:
                source = describe_value(plan, call.moveFrom)
                lines.append(f"  {number}: %{call.moveTo} = {source}")
                continue
            if kind == InstructionArguments.KernelCall:
                op = plan.operators[call.opIndex]
                name = f"{op.name}.{op.overload}" if op.overload else op.name
                source = sources.pop(0) if sources else None
            else:
                name = f"delegate {plan.delegates[call.delegateIndex].id}"
                source = None
            args = ", ".join(describe_value(plan, a) for a in call.args)
            lines.append(f"  {number}: {name}({args})")
            if source is not None and source.stack_trace:
                where = source_line_of_trace(source.stack_trace).replace("\n", ": ")
                lines.append(f"       {where}")
    lines.append(
        "  outputs: " + ", ".join(describe_value(plan, i) for i in plan.outputs)
    )
    return "\n".join(lines)
