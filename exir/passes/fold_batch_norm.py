"""Folds inference batch norms into the convolutions before them.

`conv(x, w, b)` followed by `_native_batch_norm_legit_no_training` with
constant statistics is `conv(x, w * scale, b * scale + shift)` per output
channel, scale = weight / sqrt(running_var + eps) and shift = bias -
running_mean * scale. This pass, run by `to_executorch` after delegation,
makes that rewrite on what runs outside delegates (the default path), so a
CNN's batch norms cost nothing at run time instead of a pass over each
convolution's output. The program stays standard operators.

Folded only when nothing else could see the difference: float32, a
convolution that is not transposed and whose only reader is the batch norm,
a batch norm whose statistics outputs nothing reads and whose result is not
a program output, weights and statistics that are constants read by
nothing else (so no constant is stored twice). Results match the unfolded
program to float32 rounding (one multiply moved into the weights).
"""

import operator

import torch
from torch.export import ExportedProgram

from executorch.exir.dialects._ops import ops as exir_ops
from executorch.exir.graph_utils import copy_program
from executorch.exir.pass_base import ExportedProgramPassBase, ExportedProgramPassResult
from executorch.exir.passes.program_constants import ProgramConstants

_BATCH_NORM = exir_ops.edge.aten._native_batch_norm_legit_no_training.default
_CONVOLUTION = exir_ops.edge.aten.convolution.default


def batch_norm_scale_shift(weight, bias, running_mean, running_var, eps: float):
    """(scale, shift) of an inference batch norm, y = x * scale + shift per
    channel; `weight` and `bias` may be None (1 and 0)."""
    gamma = weight if weight is not None else torch.ones_like(running_var)
    beta = bias if bias is not None else torch.zeros_like(running_var)
    scale = gamma / torch.sqrt(running_var + eps)
    return scale, beta - running_mean * scale


def scale_shift_into_convolution(weight, bias, scale, shift):
    """(weight, bias) of a convolution followed by y = x * scale + shift
    per output channel (dim 0 of `weight`); `bias` may be None."""
    weight = weight * scale.reshape([-1] + [1] * (weight.dim() - 1))
    return weight, shift if bias is None else bias * scale + shift


def _value(node, constants: ProgramConstants):
    return None if node is None else constants.value(node)


def _sole_reader(node, reader) -> bool:
    return len(node.users) == 1 and next(iter(node.users)) is reader


def _foldable(bn, constants: ProgramConstants):
    """(convolution, getitem of the batch norm's result) when `bn` folds."""
    conv = bn.args[0]
    if (
        getattr(conv, "target", None) != _CONVOLUTION
        or len(conv.args) != 9
        or conv.args[6]  # transposed
        or not _sole_reader(conv, bn)
        or len(bn.args) != 7
        or len(bn.users) != 1
    ):
        return None
    (result,) = bn.users
    if result.target != operator.getitem or result.args[1] != 0:
        return None
    if any(user.op == "output" for user in result.users):
        return None
    for i, node in enumerate([*conv.args[1:3], *bn.args[1:5]]):
        if node is None:
            continue
        value = constants.value(node)
        if value is None or value.dtype != torch.float32:
            return None
        if i < 2 and not _sole_reader(node, conv):  # the weight or bias
            return None
    return conv, result


def fold_batch_norm(ep: ExportedProgram) -> ExportedProgram:
    """A program like `ep` with its foldable batch norms folded into the
    convolutions before them (`ep` itself when there are none; `ep` is never
    modified)."""
    batch_norms = [n for n in ep.graph.nodes if n.op == "call_function" and n.target == _BATCH_NORM]
    if not batch_norms:
        return ep
    constants = ProgramConstants(ep)
    if not any(_foldable(n, constants) for n in batch_norms):
        return ep
    gm, signature = copy_program(ep)
    ep = ep._update(gm, signature)
    constants = ProgramConstants(ep)
    graph = gm.graph
    for bn in list(graph.nodes):
        if bn.op != "call_function" or bn.target != _BATCH_NORM:
            continue
        found = _foldable(bn, constants)
        if found is None:
            continue
        conv, result = found
        weight, bias = (_value(n, constants) for n in conv.args[1:3])
        with torch.no_grad():
            scale, shift = batch_norm_scale_shift(
                *(_value(n, constants) for n in bn.args[1:5]), float(bn.args[6])
            )
            weight, bias = scale_shift_into_convolution(weight, bias, scale, shift)
        conv.update_arg(1, constants.add(graph, f"{conv.args[1].name}_bn", weight))
        conv.update_arg(2, constants.add(graph, f"{conv.name}_bias_bn", bias))
        result.replace_all_uses_with(conv)
        # The convolution now computes the batch norm's output: tools that
        # match runtime outputs to Edge nodes (the numeric debugger) pair it
        # with the batch norm.
        if "debug_handle" in bn.meta:
            conv.meta["debug_handle"] = bn.meta["debug_handle"]
        graph.erase_node(result)
        graph.erase_node(bn)
    return constants.updated_program(ep, gm)


class FoldBatchNormPass(ExportedProgramPassBase):
    """`fold_batch_norm` as a step of a pipeline."""

    def call(self, exported_program: ExportedProgram) -> ExportedProgramPassResult:
        folded = fold_batch_norm(exported_program)
        return ExportedProgramPassResult(folded, folded is not exported_program)
