"""Verification of Edge dialect programs.

`EXIREdgeDialectVerifier` is the structural verifier torch runs on every
`ExportedProgram` of the Edge dialect (it admits Edge operators as call
targets). `check_edge_ops` is the op-level check of
`EdgeCompileConfig(_check_ir_validity=True)`: every operator must be Core ATen
(or a `*_copy` of a Core ATen view, an operator outside ATen such as
`dim_order_ops` or a user's custom operator, or an allowed exception), and a
violation names the node, its operator and the source line that produced it.
"""

import operator
import types
from typing import Iterable, Optional, Type

import torch
from torch._export.verifier import SpecViolationError, Verifier
from torch._ops import HigherOrderOperator, OpOverload
from torch.export import ExportedProgram

from executorch.exir.dialects.edge._ops import EdgeOpOverload, to_aten_op
from executorch.exir.graph_utils import CONTROL_FLOW_OPS, SYM_OPS, control_flow_graphs
from executorch.exir.pass_base import ExportedProgramPassBase, ExportedProgramPassResult
from executorch.exir.lowered_backend_module import executorch_call_delegate
from executorch.exir.passes.remove_auto_functionalized_pass import (
    AUTO_FUNCTIONALIZED_OPS,
)
from executorch.exir.source_info import source_line


class EXIREdgeDialectVerifier(Verifier):
    """Structural verifier of Edge programs: Edge operators are valid call
    targets (op-level checks are `check_edge_ops`)."""

    dialect = "EDGE"

    def allowed_op_types(self):
        return (OpOverload, HigherOrderOperator, EdgeOpOverload)


class EXIRExecutorchVerifier(Verifier):
    """Structural verifier of planned (out-variant) programs: admits Edge
    operators wrapping out variants and the `executorch.exir.memory.alloc`
    function."""

    dialect = "EXECUTORCH"

    def allowed_op_types(self):
        return (OpOverload, HigherOrderOperator, EdgeOpOverload, types.FunctionType)


class DialectPass(ExportedProgramPassBase):
    """Marks where a pipeline moves the program into a dialect: from here on
    it is verified with `verifier` (EXIREdgeDialectVerifier after the Edge
    rewrites, EXIRExecutorchVerifier after the out-variant conversion)."""

    def __init__(self, verifier: Type[Verifier]):
        self.verifier = verifier

    def call(self, exported_program: ExportedProgram) -> ExportedProgramPassResult:
        marked = exported_program._update(
            exported_program.graph_module,
            exported_program.graph_signature,
            verifiers=[self.verifier],
        )
        return ExportedProgramPassResult(marked, False)


def _is_allowed(op: OpOverload, exceptions: Iterable) -> bool:
    # Operators outside ATen are the runtime's own or users' custom operators;
    # whether a kernel exists for them is checked at to_executorch.
    if op in exceptions or op.namespace != "aten":
        return True
    return torch.Tag.core in op.tags or torch.Tag.view_copy in op.tags


def _problem_of_op(op, exceptions) -> Optional[str]:
    if _is_allowed(to_aten_op(op), exceptions):
        return None
    return f"operator {to_aten_op(op).name()} is not a Core ATen operator"


def _problem(node: torch.fx.Node, exceptions) -> Optional[str]:
    """Why `node` may not be in an Edge program, or None if it may."""
    target = node.target
    if target in (operator.getitem, executorch_call_delegate) or target in SYM_OPS:
        return None
    if target is torch.sym_ite:
        # Symbolic if-then-else (from reading a bool with .item()); a prim op.
        return None
    if target in AUTO_FUNCTIONALIZED_OPS:
        # A custom operator mutating its inputs, functionalized by export;
        # to_executorch calls it in place again.
        return _problem_of_op(node.args[0], exceptions)
    if target in CONTROL_FLOW_OPS:
        # Lowered to jumps by to_executorch; their graphs are checked too.
        return None
    if isinstance(target, EdgeOpOverload):
        return _problem_of_op(target, exceptions)
    if isinstance(target, OpOverload):
        return f"operator {target.name()} is not a Core ATen operator"
    if callable(target) and getattr(target, "__module__", "") in (
        "_operator",
        "math",
        "builtins",
    ):
        # Arithmetic on symbolic sizes becomes runtime prim ops.
        return None
    return f"call target {target!r} is not an operator"


def check_edge_ops(
    gm: torch.fx.GraphModule,
    exception_list: Optional[Iterable] = None,
    method_name: str = "forward",
) -> None:
    """Raises `SpecViolationError` listing every operator that is not
    allowed in an Edge program, each with its node and source line."""
    exceptions = set(to_aten_op(op) for op in (exception_list or ()))
    problems = []
    nodes = [n for g in [gm] + control_flow_graphs(gm) for n in g.graph.nodes]
    for node in nodes:
        problem = _problem(node, exceptions) if node.op == "call_function" else None
        if problem is not None:
            source = source_line(node).replace("\n", "\n    ")
            problems.append(
                f"Method '{method_name}', node '{node.name}': {problem}.\n"
                f"  Source: {source}"
            )
    if problems:
        raise SpecViolationError(
            "\n".join(problems) + "\nThese operators have no Edge dialect "
            "equivalent: keep them out of the model, or allow them with "
            "EdgeCompileConfig(_core_aten_ops_exception_list=[...])."
        )
