"""Drops parameters, buffers and lifted constants that no node reads.

A program quantized with PT2E keeps its original fp32 weights as inputs
after `convert_pt2e` has folded their quantized copies into new constants;
nothing reads them any more, and serializing them would make the int8
program larger than the fp32 one. User inputs and buffers the program
mutates are always kept (they are part of the method's interface).
"""

from torch.export import ExportedProgram
from torch.export.graph_signature import ExportGraphSignature, InputKind

_CONSTANT_KINDS = (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)


def remove_unused_constants(ep: ExportedProgram) -> ExportedProgram:
    """`ep` without its unread constant inputs (the same object when every
    constant is read)."""
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
    gm = ep.graph_module
    for spec in unused:
        gm.graph.erase_node(placeholders[spec.arg.name])
    gm.recompile()
    signature = ExportGraphSignature(
        input_specs=[s for s in ep.graph_signature.input_specs if s not in unused],
        output_specs=list(ep.graph_signature.output_specs),
    )
    still_used = {s.target for s in signature.input_specs}
    for spec in unused:
        if spec.target in still_used:
            continue
        ep.state_dict.pop(spec.target, None)
        ep.constants.pop(spec.target, None)
    return ep._update(gm, signature)
