"""Lists the operators a `.pte` program calls and the dtypes of the tensors
each call passes, without torch: it reads the FlatBuffer with the schema
modules generated into exir/_serialize/generated and the `flatbuffers`
package. gen_oplist.py turns the result
into a selected-operators YAML.
"""

import importlib
import importlib.util
import os
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Tuple

_GENERATED = os.path.join(
    os.path.dirname(os.path.abspath(__file__)),
    "..",
    "..",
    "exir",
    "_serialize",
    "generated",
)
_SCHEMA_PACKAGE = "_executorch_pte_schema"

# (dtype value, dim order) of each tensor a call passes, in argument order.
CallSignature = Tuple[Tuple[int, Tuple[int, ...]], ...]


class PteError(ValueError):
    pass


@dataclass
class ProgramOperators:
    # Qualified operator name ("aten::add.out") -> distinct call signatures.
    calls: Dict[str, List[CallSignature]] = field(default_factory=dict)


def _schema(table: str):
    """The generated class `table` of the .pte schema. The generated package
    is loaded from its directory under a private name: importing it as
    `executorch.exir._serialize.generated` would import torch, which reading
    a .pte does not need."""
    if _SCHEMA_PACKAGE not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            _SCHEMA_PACKAGE,
            os.path.join(_GENERATED, "__init__.py"),
            submodule_search_locations=[_GENERATED],
        )
        package = importlib.util.module_from_spec(spec)
        sys.modules[_SCHEMA_PACKAGE] = package
        spec.loader.exec_module(package)
    try:
        module = importlib.import_module(
            f"{_SCHEMA_PACKAGE}.executorch_flatbuffer.{table}"
        )
    except ImportError as e:
        raise SystemExit(
            f"pte_operators: reading a .pte needs the Python package "
            f"'flatbuffers' (pip install flatbuffers): {e}"
        )
    return getattr(module, table)


class _PlanReader:
    """Reads the kernel calls of one execution plan, checking every index."""

    def __init__(self, plan, where: str):
        self.plan = plan
        self.where = where
        self.types = _schema("KernelTypes")

    def _value(self, index: int, what: str):
        if not 0 <= index < self.plan.ValuesLength():
            raise PteError(
                f"{self.where} {what}: value index {index} out of range "
                f"({self.plan.ValuesLength()} values)"
            )
        return self.plan.Values(index)

    def _table(self, evalue, table: str):
        found = _schema(table)()
        found.Init(evalue.Val().Bytes, evalue.Val().Pos)
        return found

    def tensors(self, index: int, what: str) -> List[Tuple[int, Tuple[int, ...]]]:
        """(dtype, dim order) of the tensor(s) value `index` holds."""
        evalue = self._value(index, what)
        kind = evalue.ValType()
        if kind == self.types.Tensor:
            tensor = self._table(evalue, "Tensor")
            dim_order = tuple(
                tensor.DimOrder(d) for d in range(tensor.DimOrderLength())
            )
            return [(tensor.ScalarType(), dim_order)]
        if kind in (self.types.TensorList, self.types.OptionalTensorList):
            table = (
                "TensorList" if kind == self.types.TensorList else "OptionalTensorList"
            )
            items = self._table(evalue, table)
            # Optional lists mark absent tensors with -1.
            return [
                meta
                for i in range(items.ItemsLength())
                if items.Items(i) >= 0
                for meta in self.tensors(items.Items(i), what)
            ]
        return []

    def kernel_calls(self):
        """(qualified operator name, call signature) of every kernel call."""
        kernel_call = _schema("InstructionArguments").KernelCall
        for c in range(self.plan.ChainsLength()):
            chain = self.plan.Chains(c)
            for i in range(chain.InstructionsLength()):
                instruction = chain.Instructions(i)
                if instruction.InstrArgsType() != kernel_call:
                    continue
                call = _schema("KernelCall")()
                call.Init(instruction.InstrArgs().Bytes, instruction.InstrArgs().Pos)
                what = f"chains[{c}].instructions[{i}]"
                num_operators = self.plan.OperatorsLength()
                if not 0 <= call.OpIndex() < num_operators:
                    raise PteError(
                        f"{self.where} {what}: op_index {call.OpIndex()} out of "
                        f"range ({num_operators} operators)"
                    )
                operator = self.plan.Operators(call.OpIndex())
                name = (operator.Name() or b"").decode()
                overload = (operator.Overload() or b"").decode()
                signature = tuple(
                    meta
                    for a in range(call.ArgsLength())
                    for meta in self.tensors(call.Args(a), what)
                )
                yield (f"{name}.{overload}" if overload else name), signature


def read_operators(data: bytes, source: str = "model.pte") -> ProgramOperators:
    """The operators every method of the program calls, with the dtypes and
    dim orders of the tensor arguments of each call. Raises PteError naming
    the field that is out of range."""
    if data[4:8] != b"ET12":
        raise PteError(
            f"{source}: not a .pte file (file identifier {data[4:8]!r}, expected b'ET12')"
        )
    program = _schema("Program").GetRootAs(data, 0)
    result = ProgramOperators()
    for p in range(program.ExecutionPlanLength()):
        reader = _PlanReader(program.ExecutionPlan(p), f"{source}: execution_plan[{p}]")
        for op, signature in reader.kernel_calls():
            signatures = result.calls.setdefault(op, [])
            if signature not in signatures:
                signatures.append(signature)
    return result


def read_operators_file(path: str) -> ProgramOperators:
    with open(path, "rb") as f:
        return read_operators(f.read(), source=path)
