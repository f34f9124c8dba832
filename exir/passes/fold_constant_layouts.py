"""Computes layout operators on constants ahead of time.

A linear layer reaches the Edge dialect as `permute_copy(weight, [1, 0])`
feeding `addmm`; left in the program, the runtime transposes every weight
on every call (on the default path, which runs what nothing delegated).
This pass, run by `to_executorch` after delegation, replaces each
`permute_copy`, `transpose_copy`, `view_copy`, `unsqueeze_copy`,
`squeeze_copy` or `clone` with a contiguous result whose input is a
constant (a parameter, a buffer the program never mutates, or a lifted
constant) with a new constant holding its result, repeatedly, so chains
fold too. The original constant is then
dropped if nothing else reads it.

A node is folded only when its constant has no other reader, so the
program never stores a constant twice (a weight shared by an embedding and
a transposed output projection is left as it is). Results are bit-identical:
these operators move values, they compute nothing.
"""

import torch
from torch.export import ExportedProgram

from executorch.exir.dialects._ops import ops as exir_ops
from executorch.exir.dialects.edge import to_aten_op
from executorch.exir.graph_utils import copy_program
from executorch.exir.pass_base import ExportedProgramPassBase, ExportedProgramPassResult
from executorch.exir.passes.program_constants import ProgramConstants

_LAYOUT_OPS = (
    exir_ops.edge.aten.permute_copy.default,
    exir_ops.edge.aten.transpose_copy.int,
    exir_ops.edge.aten.view_copy.default,
    exir_ops.edge.aten.unsqueeze_copy.default,
    exir_ops.edge.aten.squeeze_copy.dims,
    exir_ops.edge.aten.squeeze_copy.dim,
    exir_ops.edge.aten.clone.default,
)


def _mutated_inputs(ep: ExportedProgram):
    """Names of the placeholders of buffers the program writes."""
    written = {spec.target for spec in ep.graph_signature.output_specs if spec.target is not None}
    return {spec.arg.name for spec in ep.graph_signature.input_specs if spec.target in written}


def _foldable(node, constants: ProgramConstants, mutated) -> bool:
    if node.op != "call_function" or node.target not in _LAYOUT_OPS:
        return False
    source = node.args[0]
    value = node.meta.get("val")
    return (
        # The result's layout is kept: it is contiguous, as the constant is.
        isinstance(value, torch.Tensor)
        and value.is_contiguous()
        and constants.value(source) is not None
        and source.name not in mutated
        and len(source.users) == 1
        and all(user.op != "output" for user in node.users)
    )


def fold_constant_layouts(ep: ExportedProgram) -> ExportedProgram:
    """A program like `ep` with its layout operators on constants computed
    (`ep` itself when there are none; `ep` is never modified)."""
    if not any(
        n.op == "call_function" and n.target in _LAYOUT_OPS
        and getattr(n.args[0], "op", None) == "placeholder"
        for n in ep.graph.nodes
    ):
        return ep
    constants = ProgramConstants(ep)
    if not any(_foldable(n, constants, _mutated_inputs(ep)) for n in ep.graph.nodes):
        return ep
    gm, signature = copy_program(ep)
    ep = ep._update(gm, signature)
    constants = ProgramConstants(ep)
    mutated = _mutated_inputs(ep)
    graph = gm.graph
    for node in list(graph.nodes):
        if not _foldable(node, constants, mutated):
            continue
        source = node.args[0]
        with torch.no_grad():
            value = to_aten_op(node.target)(constants.value(source), *node.args[1:], **node.kwargs)
        name = f"{source.name}_{to_aten_op(node.target).__name__.split('.')[0]}"
        folded = constants.add(graph, name, value.detach().contiguous())
        node.replace_all_uses_with(folded)
        graph.erase_node(node)
    return constants.updated_program(ep, gm)


class FoldConstantLayoutsPass(ExportedProgramPassBase):
    """`fold_constant_layouts` as a step of a pipeline."""

    def call(self, exported_program: ExportedProgram) -> ExportedProgramPassResult:
        folded = fold_constant_layouts(exported_program)
        return ExportedProgramPassResult(folded, folded is not exported_program)
