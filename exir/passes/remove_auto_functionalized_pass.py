"""Custom operators that mutate their inputs, called on the buffers they
mutate again.

torch.export functionalizes a call such as `llama::update_cache(value,
cache, pos)`, which writes into `cache`, as an `auto_functionalized` node
that works on a copy of `cache` and returns the copy as the buffer's new
value; the Edge program keeps that form. A method keeps its buffers in
place across calls instead, so this pass (run first by `to_executorch`)
turns each such node back into a direct call of the operator on its inputs:
no copy of the cache per call, and the buffer's new value is the buffer
itself (which `InsertWriteBackPass` then needs no copy for).
"""

from torch._higher_order_ops.auto_functionalize import (
    auto_functionalized,
    auto_functionalized_v2,
)
from torch.export import ExportedProgram
from torch.export._remove_auto_functionalized_pass import (
    unsafe_remove_auto_functionalized_pass,
)

from executorch.exir.dialects.edge._ops import edge_op
from executorch.exir.graph_utils import copy_program
from executorch.exir.pass_base import ExportedProgramPassBase, ExportedProgramPassResult

AUTO_FUNCTIONALIZED_OPS = (auto_functionalized, auto_functionalized_v2)


class RemoveAutoFunctionalizedPass(ExportedProgramPassBase):
    """The pass of this module (the program it is given stays as it was)."""

    def call(self, exported_program: ExportedProgram) -> ExportedProgramPassResult:
        if not any(
            n.op == "call_function" and n.target in AUTO_FUNCTIONALIZED_OPS
            for n in exported_program.graph.nodes
        ):
            return ExportedProgramPassResult(exported_program, False)
        graph_module, signature = copy_program(exported_program)
        program = exported_program._update(graph_module, signature)
        mutating_ops = {
            n.args[0]
            for n in graph_module.graph.nodes
            if n.op == "call_function" and n.target in AUTO_FUNCTIONALIZED_OPS
        }
        # torch's pass rewrites the program it is given in place.
        program = unsafe_remove_auto_functionalized_pass(program)
        # As Edge operators, like every other call of the program (the
        # verifier admits raw ATen-style operators only when functional).
        for node in program.graph.nodes:
            if node.op == "call_function" and node.target in mutating_ops:
                node.target = edge_op(node.target)
        program.graph_module.recompile()
        return ExportedProgramPassResult(program, True)
