"""Drops parameters, buffers and lifted constants that no node reads.

A program quantized with PT2E keeps its original fp32 weights as inputs
after `convert_pt2e` has folded their quantized copies into new constants;
nothing reads them any more, and serializing them would make the int8
program larger than the fp32 one. User inputs and buffers the program
mutates are always kept (they are part of the method's interface).
"""

from torch.export import ExportedProgram
from torch.export.graph_signature import ExportGraphSignature, InputKind

from executorch.exir.graph_utils import copy_program
from executorch.exir.pass_base import ExportedProgramPassBase, ExportedProgramPassResult

_CONSTANT_KINDS = (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)


def remove_unused_constants(ep: ExportedProgram) -> ExportedProgram:
    """A program like `ep` without its unread constant inputs (`ep` itself
    when every constant is read; `ep` is never modified)."""
    placeholders = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    mutated = {
        spec.target
        for spec in ep.graph_signature.output_specs
        if spec.target is not None
    }
    unused = [
        spec
        for spec in ep.graph_signature.input_specs
        if spec.kind in _CONSTANT_KINDS
        and spec.target not in mutated
        and not placeholders[spec.arg.name].users
    ]
    if not unused:
        return ep
    gm, signature = copy_program(ep)
    renamed = {old.arg.name: new for old, new in zip(ep.graph_signature.input_specs, signature.input_specs)}
    dropped = {renamed[spec.arg.name].arg.name for spec in unused}
    for node in list(gm.graph.nodes):
        if node.op == "placeholder" and node.name in dropped:
            gm.graph.erase_node(node)
    gm.recompile()
    kept = [s for s in signature.input_specs if s.arg.name not in dropped]
    targets = {s.target for s in kept}
    return ep._update(
        gm,
        ExportGraphSignature(input_specs=kept, output_specs=list(signature.output_specs)),
        state_dict={k: v for k, v in ep.state_dict.items() if k in targets},
        constants={k: v for k, v in ep.constants.items() if k in targets},
    )


class RemoveUnusedConstantsPass(ExportedProgramPassBase):
    """`remove_unused_constants` as a step of a pipeline."""

    def call(self, exported_program: ExportedProgram) -> ExportedProgramPassResult:
        pruned = remove_unused_constants(exported_program)
        return ExportedProgramPassResult(pruned, pruned is not exported_program)
