"""Write-back of mutated buffers.

A functional graph returns the new value of each buffer it mutates (outputs
of kind BUFFER_MUTATION). A method keeps buffers in place across calls
instead: this pass copies each new value into its buffer with `aten.copy_` at
the end of the graph and drops those outputs, so the method returns only the
user's outputs.
"""

from typing import List

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import ExportGraphSignature, OutputKind

from executorch.exir.dialects.edge._ops import edge_op
from executorch.exir.graph_utils import copy_program
from executorch.exir.pass_base import ExportedProgramPassBase, ExportedProgramPassResult


class InsertWriteBackPass(ExportedProgramPassBase):
    """The pass of this module; the program it returns has no
    buffer-mutation outputs."""

    def call(self, exported_program: ExportedProgram) -> ExportedProgramPassResult:
        signature = exported_program.graph_signature
        if not any(s.kind == OutputKind.BUFFER_MUTATION for s in signature.output_specs):
            return ExportedProgramPassResult(exported_program, False)
        graph_module, signature = copy_program(exported_program)
        signature = _insert_write_back_for_buffers(graph_module, signature)
        return ExportedProgramPassResult(
            exported_program._update(graph_module, signature), True
        )


def _insert_write_back_for_buffers(
    graph_module: torch.fx.GraphModule, signature: ExportGraphSignature
) -> ExportGraphSignature:
    """Rewrites `graph_module` in place; returns the signature without the
    buffer-mutation outputs."""
    graph = graph_module.graph
    output = graph.output_node()
    values = list(output.args[0])
    placeholders = {n.name: n for n in graph.nodes if n.op == "placeholder"}
    buffer_inputs = {
        buffer: name for name, buffer in signature.inputs_to_buffers.items()
    }
    kept_values: List = []
    kept_specs = []
    copy = edge_op(torch.ops.aten.copy_.default)
    for value, spec in zip(values, signature.output_specs):
        if spec.kind != OutputKind.BUFFER_MUTATION:
            kept_values.append(value)
            kept_specs.append(spec)
            continue
        buffer = placeholders[buffer_inputs[spec.target]]
        if value is buffer:
            # Mutated in place (a custom operator writing into it).
            continue
        with graph.inserting_before(output):
            write = graph.call_function(copy, (buffer, value))
        write.meta["val"] = buffer.meta["val"]
        write.meta["stack_trace"] = value.meta.get("stack_trace")
    output.args = (tuple(kept_values),)
    graph_module.recompile()
    return ExportGraphSignature(list(signature.input_specs), kept_specs)
