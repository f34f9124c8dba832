"""BundledProgram: a program with test cases for its methods, saved as a
`.bpte` (serialize.serialize_from_bundled_program_to_flatbuffer) that
executor_runner and the runtime's bundled_program helpers run and check.

    suite = MethodTestSuite("forward", [MethodTestCase((x,), (model(x),))])
    bundled = BundledProgram(edge.to_executorch(), [suite])
    data = serialize_from_bundled_program_to_flatbuffer(bundled)

Each test case is checked against the program when bundling: the method
exists, the number of inputs, each input's kind (tensor, int, bool, float)
and tensor dtype, and that expected outputs are tensors of the outputs'
dtypes; a mismatch raises ValueError naming the method, the test case and
the value.
"""

from typing import List, Optional, Sequence

import torch

from executorch.devtools.bundled_program.config import MethodTestSuite
from executorch.devtools.bundled_program.schema import (
    bundled_program_schema as schema,
)
from executorch.exir._serialize._flatbuffer import KernelTypes, Program, ProgramT
from executorch.exir.dim_order_utils import dim_order_of
from executorch.exir.tensor import dtype_of_scalar_type_code, scalar_type_code

BUNDLED_PROGRAM_SCHEMA_VERSION = 0

_KINDS = {
    KernelTypes.Tensor: torch.Tensor,
    KernelTypes.Int: int,
    KernelTypes.Bool: bool,
    KernelTypes.Double: float,
}


class BundledProgram:
    """`executorch_program` (an ExecutorchProgramManager) or the `.pte` at
    `pte_file_path`, with `method_test_suites` (sorted by method name, as
    the format keeps them)."""

    def __init__(
        self,
        executorch_program,
        method_test_suites: Sequence[MethodTestSuite],
        pte_file_path: Optional[str] = None,
    ):
        if (executorch_program is None) == (pte_file_path is None):
            raise ValueError("give exactly one of executorch_program and pte_file_path")
        self.executorch_program = executorch_program
        self._pte_file_path = pte_file_path
        self.method_test_suites: List[MethodTestSuite] = sorted(
            method_test_suites, key=lambda suite: suite.method_name
        )
        self._program_bytes: Optional[bytes] = None
        self._check_against(
            ProgramT.InitFromObj(Program.GetRootAs(self.program_bytes, 0))
        )

    @property
    def program_bytes(self) -> bytes:
        """The `.pte` file being bundled."""
        if self._program_bytes is None:
            if self.executorch_program is not None:
                self._program_bytes = self.executorch_program.buffer
            else:
                with open(self._pte_file_path, "rb") as f:
                    self._program_bytes = f.read()
        return self._program_bytes

    def _check_against(self, program: ProgramT) -> None:
        plans = {
            plan.name.decode() if isinstance(plan.name, bytes) else plan.name: plan
            for plan in program.executionPlan
        }
        for suite in self.method_test_suites:
            plan = plans.get(suite.method_name)
            if plan is None:
                raise ValueError(
                    f"test suite for method '{suite.method_name}': the program has "
                    f"no such method (it has {sorted(plans)})"
                )
            for index, case in enumerate(suite.test_cases):
                where = f"method '{suite.method_name}' test case {index}"
                _check_values(where, "input", case.inputs, plan, plan.inputs)
                if case.expected_outputs:
                    _check_values(
                        where,
                        "expected output",
                        case.expected_outputs,
                        plan,
                        plan.outputs,
                    )

    def serialize_to_schema(self) -> schema.BundledProgram:
        """The bundled program as the format's tables."""
        return schema.BundledProgram(
            version=BUNDLED_PROGRAM_SCHEMA_VERSION,
            method_test_suites=[
                schema.BundledMethodTestSuite(
                    method_name=suite.method_name,
                    test_cases=[
                        schema.BundledMethodTestCase(
                            inputs=[_value(v) for v in case.inputs],
                            expected_outputs=[_value(v) for v in case.expected_outputs],
                        )
                        for case in suite.test_cases
                    ],
                )
                for suite in self.method_test_suites
            ],
            program=self.program_bytes,
        )


def _check_values(where, what, values, plan, indices) -> None:
    if len(values) != len(indices):
        raise ValueError(
            f"{where}: the method has {len(indices)} {what}s, the test case "
            f"gives {len(values)}"
        )
    for i, (value, index) in enumerate(zip(values, indices)):
        declared = plan.values[index]
        expected = _KINDS.get(declared.valType)
        if expected is None:
            raise ValueError(
                f"{where}: {what} {i} of the method cannot be bundled (only "
                "tensor, int, bool and float values can)"
            )
        if type(value) is not expected:
            raise ValueError(
                f"{where}: {what} {i} should be a {expected.__name__}, got "
                f"{type(value).__name__}"
            )
        if expected is torch.Tensor:
            dtype = dtype_of_scalar_type_code(declared.val.scalarType)
            if value.dtype != dtype:
                raise ValueError(
                    f"{where}: {what} {i} should have dtype {dtype}, got {value.dtype}"
                )


def _value(value) -> schema.Value:
    if isinstance(value, torch.Tensor):
        order = dim_order_of(value)
        # The bytes in the tensor's own layout (its dim order, outermost
        # first).
        laid_out = value.detach().permute(order).contiguous()
        return schema.Value(
            schema.Tensor(
                scalar_type=scalar_type_code(value.dtype),
                sizes=list(value.shape),
                data=(
                    laid_out.view(torch.uint8).numpy().tobytes()
                    if laid_out.numel()
                    else b""
                ),
                dim_order=list(order),
            )
        )
    if isinstance(value, bool):
        return schema.Value(schema.Bool(value))
    if isinstance(value, int):
        return schema.Value(schema.Int(value))
    return schema.Value(schema.Double(float(value)))
