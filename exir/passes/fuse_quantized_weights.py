"""Fuses linear layers and embeddings on quantized weights into kernels
that read the quantized weights directly.

torchao's `quantize_` configs (IntxWeightOnlyConfig,
Int8DynamicActivationIntxWeightConfig: the weight-only and 8da4w schemes of
upstream's LLM flow) and PT2E's dynamic configuration export a linear layer
as "dequantize the integer weight, then an fp32 linear", and for dynamic
activations "choose parameters, quantize, dequantize" in front. Left as they
are, the program stores the weight as one int8 per value and dequantizes it
on every call. This pass, run by `to_edge` before the Core ATen
decomposition, replaces each such linear with

- `et_quantized::weight_only_linear` (fp32 activations), or
- `et_quantized::dynamic_int8_linear_panels` (activations quantized per call, per
  token as torchao does or per tensor as PT2E does),

whose weight is packed with its scales and zero points per group
(`kernels/quantized/cpu/quantized_linear.h`): for the weight-only linear in
rows (4-bit values two per byte), for the dynamic one in the panels of 16
output features its kernels multiply as stored (`pack_linear_panels`), so
that no call copies its weight; and
each embedding whose table torchao quantized to 2, 4 or 8 bits with
upstream's `quantized_decomposed::embedding_{2bit,4bit,byte}` on the
packed table. Dynamic linears that quantize the same input alike
(attention's q, k and v) become one linear on their concatenated weights,
whose output is sliced back into theirs, so that the input is quantized
once per call rather than once per linear. The results are those of the
unfused graph up to float summation order (embeddings: exactly).

Recognised weights: `torchao.dequantize_affine` of a constant with
block size [1, group] and a 4- or 8-bit range, and
`quantized_decomposed.dequantize_per_channel` (axis 0) of a constant.
Anything else (other bit widths, static activation quantization, weights
that are not constants) is left for the decomposition.
"""

import dataclasses
import operator
from dataclasses import dataclass
from typing import Dict, List, Optional

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import ExportGraphSignature, TensorArgument

import executorch.kernels.quantized as quantized_kernels
from executorch.exir.graph_utils import copy_program
from executorch.exir.pass_base import ExportedProgramPassBase, ExportedProgramPassResult
from executorch.exir.passes.program_constants import ProgramConstants

aten = torch.ops.aten
qd = torch.ops.quantized_decomposed

def _torchao_op(name: str):
    torchao = getattr(torch.ops, "torchao", None)
    packet = getattr(torchao, name, None) if torchao is not None else None
    return packet.default if packet is not None else None


@dataclass
class _Weight:
    values: torch.Tensor  # int8 [N, K]
    scales: torch.Tensor  # float32 [N, K / group]
    zero_points: Optional[torch.Tensor]  # int8 [N, K / group] or None
    bits: int
    group_size: int


@dataclass
class _DynamicActivation:
    source: torch.fx.Node  # the fp32 input
    per_token: bool
    eps: float
    quant_min: int
    quant_max: int


def _match_weight(node, constants: ProgramConstants) -> Optional[_Weight]:
    if not isinstance(node, torch.fx.Node) or node.op != "call_function":
        return None
    if node.target == _torchao_op("dequantize_affine"):
        return _match_torchao_weight(node, constants)
    if node.target == qd.dequantize_per_channel.default:
        return _match_per_channel_weight(node, constants)
    return None


def _bits_of(quant_min, quant_max) -> Optional[int]:
    if -2 <= quant_min <= quant_max <= 1:
        return 2
    if -8 <= quant_min <= quant_max <= 7:
        return 4
    if -128 <= quant_min <= quant_max <= 127:
        return 8
    return None


def _match_torchao_weight(node, constants) -> Optional[_Weight]:
    args = list(node.args) + [None] * 7
    values, block, scales, zero_points, dtype, qmin, qmax = args[:7]
    output_dtype = node.kwargs.get("output_dtype", torch.float32)
    values, scales = constants.value(values), constants.value(scales)
    zp = constants.value(zero_points) if zero_points is not None else None
    if values is None or scales is None or (zero_points is not None and zp is None):
        return None
    if values.dim() != 2 or values.dtype != torch.int8 or output_dtype != torch.float32:
        return None
    if dtype != torch.int8 or list(block)[:1] != [1] or len(block) != 2:
        return None
    qmin = -128 if qmin is None else qmin
    qmax = 127 if qmax is None else qmax
    bits = _bits_of(qmin, qmax)
    group = block[1]
    rows, cols = values.shape
    if bits is None or cols % group or group % (8 // bits):
        return None
    if zp is not None and (zp.dtype.is_floating_point or zp.numel() != scales.numel()):
        return None
    return _Weight(values, scales.float().reshape(rows, cols // group), zp, bits, group)


def _match_per_channel_weight(node, constants) -> Optional[_Weight]:
    values, scales, zero_points, axis, qmin, qmax, dtype = node.args[:7]
    values, scales = constants.value(values), constants.value(scales)
    zp = constants.value(zero_points) if zero_points is not None else None
    if values is None or scales is None or (zero_points is not None and zp is None):
        return None
    if values.dim() != 2 or axis != 0 or dtype != torch.int8 or values.dtype != torch.int8:
        return None
    if scales.dtype != torch.float32 or _bits_of(qmin, qmax) is None:
        return None
    rows, cols = values.shape
    return _Weight(values, scales.reshape(rows, 1), zp, 8, cols)


def _getitem_source(node, index):
    if node.target is operator.getitem and node.args[1] == index:
        return node.args[0]
    return None


def _match_dynamic_activation(node) -> Optional[_DynamicActivation]:
    """`node` = dequantize(quantize(x, params), params) with params chosen
    from x itself, per token (torchao) or per tensor (PT2E)."""
    if not isinstance(node, torch.fx.Node) or node.op != "call_function":
        return None
    if node.target == _torchao_op("dequantize_affine"):
        quantize = node.args[0]
        if not isinstance(quantize, torch.fx.Node) or quantize.target != _torchao_op(
            "quantize_affine"
        ):
            return None
        scale, zp = quantize.args[2], quantize.args[3]
        choose = _getitem_source(scale, 0)
        if choose is None or _getitem_source(zp, 1) is not choose:
            return None
        if choose.target != _torchao_op("choose_qparams_affine"):
            return None
        x, mapping, block, dtype, qmin, qmax = choose.args[:6]
        eps = choose.args[6] if len(choose.args) > 6 else choose.kwargs.get("eps")
        shape = x.meta["val"].shape
        per_token = list(block) == [1] * (len(shape) - 1) + [shape[-1]]
        if mapping != "ASYMMETRIC" or dtype != torch.int8 or not per_token:
            return None
        if quantize.args[0] is not x or node.args[1:4] != quantize.args[1:4]:
            return None
        eps = torch.finfo(torch.float32).smallest_normal if eps is None else eps
        return _DynamicActivation(x, True, eps, qmin, qmax)
    if node.target == qd.dequantize_per_tensor.tensor:
        quantize = node.args[0]
        if not isinstance(quantize, torch.fx.Node) or quantize.target != qd.quantize_per_tensor.tensor:
            return None
        choose = _getitem_source(quantize.args[1], 0)
        if choose is None or _getitem_source(quantize.args[2], 1) is not choose:
            return None
        if choose.target != qd.choose_qparams.tensor:
            return None
        x, qmin, qmax, eps, dtype = choose.args[:5]
        if quantize.args[0] is not x or dtype != torch.int8 or node.args[1:3] != quantize.args[1:3]:
            return None
        return _DynamicActivation(x, False, eps, qmin, qmax)
    return None


def _is_dequantized(node) -> bool:
    return (
        isinstance(node, torch.fx.Node)
        and node.op == "call_function"
        and "dequantize" in getattr(node.target, "__name__", "")
    )


def _packed_inputs(weight: _Weight, graph, constants, base: str, panels: bool):
    pack = (
        quantized_kernels.pack_linear_panels
        if panels
        else quantized_kernels.pack_embedding_weight
    )
    packed = pack(weight.values, weight.bits)
    zero_points = weight.zero_points
    if zero_points is not None and not bool(zero_points.any()):
        zero_points = None  # symmetric: no table to store or read
    elif zero_points is not None:
        zero_points = zero_points.to(torch.int8).reshape(weight.scales.shape).clone()
    # Clones: a new constant must not alias the parameter it came from.
    return (
        constants.add(graph, f"{base}_packed", packed.clone()),
        constants.add(graph, f"{base}_scales", weight.scales.clone()),
        None if zero_points is None else constants.add(graph, f"{base}_zero_points", zero_points),
    )


def unwrap_tensor_subclasses(ep: ExportedProgram) -> ExportedProgram:
    """torchao's quantized weights are tensor subclasses, which the exported
    graph reads through `export.access_subclass_inner_tensor`; an empty
    decomposition makes their integer data, scales and zero points plain
    constant inputs (and decomposes nothing)."""
    reads_subclass = any(
        getattr(n.target, "namespace", None) == "export" for n in ep.graph.nodes
    )
    return ep.run_decompositions({}) if reads_subclass else ep


_EMBEDDING_OPS = {
    8: "embedding_byte",
    4: "embedding_4bit",
    2: "embedding_2bit",
}


def _fuse_embedding(node, weight: _Weight, graph, constants) -> torch.fx.Node:
    """upstream's embedding_{byte,4bit,2bit}.dtype on the packed table; its
    zero points are floats (as upstream's operators take them)."""
    packed = quantized_kernels.pack_embedding_weight(weight.values, weight.bits).clone()
    zero_points = weight.zero_points
    if zero_points is not None and bool(zero_points.any()):
        zero_points = constants.add(
            graph,
            f"{node.name}_zero_points",
            zero_points.float().reshape(weight.scales.shape).clone(),
        )
    else:
        zero_points = None
    bound = (1 << (weight.bits - 1))
    op = getattr(torch.ops.quantized_decomposed, _EMBEDDING_OPS[weight.bits]).dtype
    with graph.inserting_before(node):
        return graph.call_function(
            op,
            (
                constants.add(graph, f"{node.name}_packed", packed),
                constants.add(graph, f"{node.name}_scales", weight.scales.clone()),
                zero_points,
                -bound,
                bound - 1,
                node.args[1],
            ),
            {"dtype": torch.float32},
        )


@dataclass
class _DynamicLinear:
    node: torch.fx.Node  # the aten.linear
    w: torch.fx.Node  # its dequantized weight
    weight: _Weight
    bias: Optional[torch.fx.Node]
    activation: _DynamicActivation


def _merge_key(activation: _DynamicActivation, weight: _Weight, bias, constants):
    """Dynamic linears with the same key quantize the same input in the same
    way and have weights of one kind: they can be one linear. None: not
    mergeable (a bias that is not a constant)."""
    if bias is not None and constants.value(bias) is None:
        return None
    return (
        activation.source,
        activation.per_token,
        float(activation.eps),
        activation.quant_min,
        activation.quant_max,
        weight.bits,
        weight.group_size,
    )


def _dynamic_linear(node, activation, weight: _Weight, packed_inputs, bias, graph):
    """An et_quantized::dynamic_int8_linear_panels before `node`."""
    packed, scales, zero_points = packed_inputs
    with graph.inserting_before(node):
        return graph.call_function(
            torch.ops.et_quantized.dynamic_int8_linear_panels.default,
            (
                activation.source,
                packed,
                scales,
                zero_points,
                weight.bits,
                weight.group_size,
                bias,
                activation.per_token,
                float(activation.eps),
                activation.quant_min,
                activation.quant_max,
            ),
        )


def _fuse_merged(linears, graph, constants) -> None:
    """Dynamic linears of one input (attention's q, k and v) as one linear
    with their weights concatenated, whose output is sliced back into
    theirs: the input is quantized once instead of once per linear. Each
    output feature is computed as the separate linear computes it."""
    weights = [linear.weight for linear in linears]
    zero_points = None
    if any(w.zero_points is not None for w in weights):
        zero_points = torch.cat(
            [
                torch.zeros(w.scales.shape, dtype=torch.int8)
                if w.zero_points is None
                else w.zero_points.to(torch.int8).reshape(w.scales.shape)
                for w in weights
            ]
        )
    merged = _Weight(
        torch.cat([w.values for w in weights]),
        torch.cat([w.scales for w in weights]),
        zero_points,
        weights[0].bits,
        weights[0].group_size,
    )
    sizes = [w.values.shape[0] for w in weights]
    bias = None
    if any(linear.bias is not None for linear in linears):
        bias = constants.add(
            graph,
            f"{linears[0].node.name}_merged_bias",
            torch.cat(
                [
                    torch.zeros(n, dtype=torch.float32)
                    if linear.bias is None
                    else constants.value(linear.bias).detach().float().reshape(n)
                    for linear, n in zip(linears, sizes)
                ]
            ),
        )
    first = linears[0].node
    packed = _packed_inputs(merged, graph, constants, f"{first.name}_merged_panels{merged.bits}", True)
    node = _dynamic_linear(first, linears[0].activation, merged, packed, bias, graph)
    val = first.meta["val"]
    node.meta = dict(first.meta)
    node.meta["val"] = val.new_empty((*val.shape[:-1], sum(sizes)))
    start = 0
    for linear, n in zip(linears, sizes):
        with graph.inserting_after(node):
            piece = graph.call_function(
                aten.slice_copy.Tensor, (node, val.dim() - 1, start, start + n)
            )
        piece.meta = dict(linear.node.meta)
        linear.node.replace_all_uses_with(piece)
        graph.erase_node(linear.node)
        start += n


def fuse_quantized_weights(ep: ExportedProgram, merge_shared_inputs: bool = True) -> ExportedProgram:
    """A program with `ep`'s quantized-weight linear layers fused (`ep`
    itself when there are none; `ep` is never modified). With
    `merge_shared_inputs`, dynamic linears that quantize the same input
    alike become one linear (`_fuse_merged`)."""
    if not any(_is_dequantized(n) for n in ep.graph.nodes) and not any(
        getattr(n.target, "namespace", None) == "export" for n in ep.graph.nodes
    ):
        return ep
    ep = unwrap_tensor_subclasses(ep)
    gm, signature = copy_program(ep)
    ep = ep._update(gm, signature)
    constants = ProgramConstants(ep)
    graph = gm.graph
    packed_by_weight: Dict[tuple, tuple] = {}
    dynamic: Dict[Optional[tuple], List[_DynamicLinear]] = {}
    fused = 0
    for node in list(graph.nodes):
        if node.op != "call_function":
            continue
        if node.target == aten.embedding.default:
            weight = _match_weight(node.args[0], constants)
            if weight is not None and weight.scales.shape[1] * weight.group_size == weight.values.shape[1]:
                replacement = _fuse_embedding(node, weight, graph, constants)
                replacement.meta = dict(node.meta)
                node.replace_all_uses_with(replacement)
                graph.erase_node(node)
                fused += 1
            continue
        if node.target != aten.linear.default:
            continue
        x, w = node.args[0], node.args[1]
        bias = node.args[2] if len(node.args) > 2 else None
        weight = _match_weight(w, constants)
        if weight is None or weight.bits == 2:
            continue
        if bias is not None and not isinstance(bias, torch.fx.Node):
            continue
        activation = _match_dynamic_activation(x)
        if activation is None and _is_dequantized(x):
            continue  # statically quantized activations: not ours to fuse
        fused += 1
        if activation is not None:
            dynamic.setdefault(_merge_key(activation, weight, bias, constants), []).append(
                _DynamicLinear(node, w, weight, bias, activation)
            )
            continue
        key = (w, False)
        if key not in packed_by_weight:
            base = f"{w.name}_w{weight.bits}"
            packed_by_weight[key] = _packed_inputs(weight, graph, constants, base, False)
        packed, scales, zero_points = packed_by_weight[key]
        weight_args = (packed, scales, zero_points, weight.bits, weight.group_size, bias)
        with graph.inserting_before(node):
            replacement = graph.call_function(
                torch.ops.et_quantized.weight_only_linear.default, (x, *weight_args)
            )
        replacement.meta = dict(node.meta)
        node.replace_all_uses_with(replacement)
        graph.erase_node(node)
    for key, linears in dynamic.items():
        if key is not None and merge_shared_inputs and len(linears) > 1:
            _fuse_merged(linears, graph, constants)
            continue
        for linear in linears:
            node, w = linear.node, linear.w
            if (w, True) not in packed_by_weight:
                base = f"{w.name}_panels{linear.weight.bits}"
                packed_by_weight[(w, True)] = _packed_inputs(
                    linear.weight, graph, constants, base, True
                )
            replacement = _dynamic_linear(
                node, linear.activation, linear.weight, packed_by_weight[(w, True)], linear.bias, graph
            )
            replacement.meta = dict(node.meta)
            node.replace_all_uses_with(replacement)
            graph.erase_node(node)
    if not fused:
        return ep
    graph.eliminate_dead_code()
    gm.recompile()
    # Outputs that were fused linears are now their replacements.
    returned = next(n for n in graph.nodes if n.op == "output").args[0]
    output_specs = [
        dataclasses.replace(spec, arg=TensorArgument(name=value.name))
        if isinstance(spec.arg, TensorArgument) and isinstance(value, torch.fx.Node)
        else spec
        for spec, value in zip(ep.graph_signature.output_specs, returned)
    ]
    signature = ExportGraphSignature(input_specs=constants.specs, output_specs=output_specs)
    return ep._update(gm, signature, constants=constants.tensors)


class UnwrapTensorSubclassesPass(ExportedProgramPassBase):
    """`unwrap_tensor_subclasses` as a step of a pipeline."""

    def call(self, exported_program: ExportedProgram) -> ExportedProgramPassResult:
        unwrapped = unwrap_tensor_subclasses(exported_program)
        return ExportedProgramPassResult(unwrapped, unwrapped is not exported_program)


class FuseQuantizedWeightsPass(ExportedProgramPassBase):
    """`fuse_quantized_weights` as a step of a pipeline."""

    def call(self, exported_program: ExportedProgram) -> ExportedProgramPassResult:
        fused = fuse_quantized_weights(exported_program)
        return ExportedProgramPassResult(fused, fused is not exported_program)
