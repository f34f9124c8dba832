"""Lists the operators a `.pte` program calls and the dtypes of the tensors
each call passes, without torch: it reads the FlatBuffer with the schema
modules flatc generates into exir/_serialize/generated (the CMake build
makes them) and the `flatbuffers` package. gen_oplist.py turns the result
into a selected-operators YAML.
"""

import os
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Tuple

_GENERATED = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "exir", "_serialize", "generated"
)


def _schema_modules():
    """Imports the generated schema package (by path, so that reading a
    .pte never imports the torch-dependent `executorch.exir`)."""
    if not os.path.isdir(os.path.join(_GENERATED, "executorch_flatbuffer")):
        raise SystemExit(
            f"pte_operators: the .pte schema modules are missing from "
            f"{os.path.normpath(_GENERATED)}; build the "
            "'program_schema_generated' CMake target first"
        )
    if _GENERATED not in sys.path:
        sys.path.append(_GENERATED)
    try:
        import flatbuffers  # noqa: F401
    except ImportError:
        raise SystemExit(
            "pte_operators: reading a .pte needs the Python package "
            "'flatbuffers' (pip install flatbuffers)"
        )
    from executorch_flatbuffer.InstructionArguments import InstructionArguments
    from executorch_flatbuffer.KernelCall import KernelCall
    from executorch_flatbuffer.KernelTypes import KernelTypes
    from executorch_flatbuffer.OptionalTensorList import OptionalTensorList
    from executorch_flatbuffer.Program import Program
    from executorch_flatbuffer.Tensor import Tensor
    from executorch_flatbuffer.TensorList import TensorList

    return (
        InstructionArguments,
        KernelCall,
        KernelTypes,
        OptionalTensorList,
        Program,
        Tensor,
        TensorList,
    )


# (dtype value, dim order) of each tensor a call passes, in argument order.
CallSignature = Tuple[Tuple[int, Tuple[int, ...]], ...]


@dataclass
class ProgramOperators:
    # Qualified operator name ("aten::add.out") -> distinct call signatures.
    calls: Dict[str, List[CallSignature]] = field(default_factory=dict)


class PteError(ValueError):
    pass


def read_operators(data: bytes, source: str = "model.pte") -> ProgramOperators:
    """The operators every method of the program calls, with the dtypes and
    dim orders of the tensor arguments of each call. Raises PteError naming
    the field that is out of range."""
    (
        InstructionArguments,
        KernelCall,
        KernelTypes,
        OptionalTensorList,
        Program,
        Tensor,
        TensorList,
    ) = _schema_modules()
    if data[4:8] != b"ET12":
        raise PteError(
            f"{source}: not a .pte file (file identifier {data[4:8]!r}, expected b'ET12')"
        )
    program = Program.GetRootAs(data, 0)
    result = ProgramOperators()
    for p in range(program.ExecutionPlanLength()):
        plan = program.ExecutionPlan(p)
        where = f"{source}: execution_plan[{p}]"
        num_values = plan.ValuesLength()

        def value(index: int, what: str):
            if not 0 <= index < num_values:
                raise PteError(f"{where} {what}: value index {index} out of range ({num_values} values)")
            return plan.Values(index)

        def tensor_meta(evalue) -> Tuple[int, Tuple[int, ...]]:
            tensor = Tensor()
            tensor.Init(evalue.Val().Bytes, evalue.Val().Pos)
            dim_order = tuple(tensor.DimOrder(d) for d in range(tensor.DimOrderLength()))
            return tensor.ScalarType(), dim_order

        def tensors_of(index: int, what: str):
            evalue = value(index, what)
            kind = evalue.ValType()
            if kind == KernelTypes.Tensor:
                return [tensor_meta(evalue)]
            if kind in (KernelTypes.TensorList, KernelTypes.OptionalTensorList):
                holder = TensorList() if kind == KernelTypes.TensorList else OptionalTensorList()
                holder.Init(evalue.Val().Bytes, evalue.Val().Pos)
                items = [holder.Items(i) for i in range(holder.ItemsLength())]
                # Optional lists mark absent tensors with -1.
                return [m for i in items if i >= 0 for m in tensors_of(i, what)]
            return []

        for c in range(plan.ChainsLength()):
            chain = plan.Chains(c)
            for i in range(chain.InstructionsLength()):
                instruction = chain.Instructions(i)
                if instruction.InstrArgsType() != InstructionArguments.KernelCall:
                    continue
                call = KernelCall()
                call.Init(instruction.InstrArgs().Bytes, instruction.InstrArgs().Pos)
                what = f"chains[{c}].instructions[{i}]"
                if not 0 <= call.OpIndex() < plan.OperatorsLength():
                    raise PteError(
                        f"{where} {what}: op_index {call.OpIndex()} out of range "
                        f"({plan.OperatorsLength()} operators)"
                    )
                operator = plan.Operators(call.OpIndex())
                name = operator.Name().decode()
                overload = (operator.Overload() or b"").decode()
                qualified = f"{name}.{overload}" if overload else name
                signature: CallSignature = tuple(
                    m for a in range(call.ArgsLength()) for m in tensors_of(call.Args(a), what)
                )
                signatures = result.calls.setdefault(qualified, [])
                if signature not in signatures:
                    signatures.append(signature)
    return result


def read_operators_file(path: str) -> ProgramOperators:
    with open(path, "rb") as f:
        return read_operators(f.read(), source=path)
