"""How XNNPACKQuantizer annotates one operator of a PT2E graph.

An annotator looks at one node of the graph `torch.export` produced (before
`prepare_pt2e`), and records in `node.meta["quantization_annotation"]` which
of its inputs are observed (quantized) and how, and how its output is. The
observers that `prepare_pt2e` inserts from these annotations become the
quantize/dequantize pairs of the converted program.

Patterns that the backend runs as one quantized operator (convolution with
its batch norm and ReLU, linear with ReLU, add with ReLU) are annotated as a
unit: the first node's inputs and the last node's output are observed, the
nodes between are not, so no rounding happens between them.

Each annotator returns whether it annotated the node (it declines nodes
whose tensors are not floating point, and nodes already covered by a
pattern).
"""

import dataclasses
import operator
from typing import Callable, Dict, List, Optional

import torch
from torch.fx import Node
from torchao.quantization.pt2e.quantizer import (
    FixedQParamsQuantizationSpec,
    QuantizationAnnotation,
    QuantizationConfig,
    QuantizationSpec,
    SharedQuantizationSpec,
)

__all__ = [
    "QuantizationConfig",
    "ANNOTATORS",
    "annotate_node",
    "is_annotated",
]

aten = torch.ops.aten
ANNOTATION_KEY = "quantization_annotation"

AnnotatorType = Callable[[Node, QuantizationConfig], bool]

CONV_TARGETS = {aten.conv1d.default, aten.conv2d.default, aten.convolution.default}
CONV_TRANSPOSE_TARGETS = {aten.conv_transpose1d.default, aten.conv_transpose2d.input}
LINEAR_TARGETS = {aten.linear.default}
BATCH_NORM_TARGETS = {
    aten.batch_norm.default,
    aten._native_batch_norm_legit_no_training.default,
}
# Activations the backend fuses into the producing convolution, linear or
# add (an output clamp), so no quantization step sits between them.
FUSED_ACTIVATION_TARGETS = {
    aten.relu.default,
    aten.relu_.default,
    aten.hardtanh.default,
    aten.hardtanh_.default,
    aten.clamp.default,
}
BINARY_TARGETS = {
    aten.add.Tensor,
    aten.add_.Tensor,
    aten.mul.Tensor,
    aten.mul_.Tensor,
}
# Operators whose quantized output uses the input's scale and zero point:
# they only move, select or take the maximum of values (or average them,
# which stays within the input's range).
SHARING_TARGETS = {
    aten.max_pool2d.default,
    aten.avg_pool2d.default,
    aten.adaptive_avg_pool2d.default,
    aten.mean.dim,
}
# Operators that only move data: quantized when their input already is.
PASS_THROUGH_TARGETS = {
    aten.view.default,
    aten.reshape.default,
    aten.flatten.using_ints,
    aten.permute.default,
    aten.transpose.int,
    aten.squeeze.dim,
    aten.squeeze.dims,
    aten.unsqueeze.default,
    aten.slice.Tensor,
    aten.select.int,
    aten.dropout.default,
    aten.pixel_shuffle.default,
    aten.relu.default,
    aten.relu_.default,
    aten.hardtanh.default,
    aten.hardtanh_.default,
    aten.clamp.default,
}
# Activations with a fixed output range get fixed quantization parameters
# (what XNNPACK's int8 operators require: scale 1/256, zero point -128).
FIXED_RANGE_TARGETS = {
    aten.sigmoid.default,
    aten.softmax.int,
    aten._softmax.default,
}
OWN_RANGE_TARGETS = {aten.hardswish.default, aten.hardswish_.default}
CAT_TARGETS = {aten.cat.default, aten.concat.default}


def is_annotated(node: Node) -> bool:
    annotation = node.meta.get(ANNOTATION_KEY)
    return annotation is not None and annotation._annotated


def _is_float_tensor(node) -> bool:
    if not isinstance(node, Node):
        return False
    val = node.meta.get("val")
    return isinstance(val, torch.Tensor) and val.dtype.is_floating_point


def _mark(node: Node, inputs: Dict[Node, object], output=None) -> None:
    node.meta[ANNOTATION_KEY] = QuantizationAnnotation(
        input_qspec_map=inputs, output_qspec=output, _annotated=True
    )


def _only_user(node: Node) -> Optional[Node]:
    users = list(node.users)
    return users[0] if len(users) == 1 else None


def _fused_tail(node: Node, allow_batch_norm: bool) -> List[Node]:
    """The nodes after `node` that run fused with it: an optional batch
    norm (and the getitem of its result) and an optional clamp-like
    activation, each the only user of the one before."""
    tail: List[Node] = []
    last = node
    nxt = _only_user(last)
    if allow_batch_norm and nxt is not None and nxt.target in BATCH_NORM_TARGETS:
        tail.append(nxt)
        last = nxt
        getitem = _only_user(last)
        if getitem is not None and getitem.target is operator.getitem:
            tail.append(getitem)
            last = getitem
        nxt = _only_user(last)
    if nxt is not None and nxt.target in FUSED_ACTIVATION_TARGETS:
        tail.append(nxt)
    return [] if any(is_annotated(n) for n in tail) else tail


def _weight_spec_for_axis(spec: Optional[QuantizationSpec], axis: int):
    if spec is None or spec.qscheme != torch.per_channel_symmetric:
        return spec
    return dataclasses.replace(spec, ch_axis=axis)


def _annotate_weighted(
    node: Node, config: QuantizationConfig, weight_axis: int, allow_batch_norm: bool
) -> bool:
    activation, weight = node.args[0], node.args[1]
    if not (_is_float_tensor(activation) and _is_float_tensor(weight)):
        return False
    # A dynamically quantized operator has an fp32 output: nothing to fuse.
    dynamic = config.output_activation is None
    tail = [] if dynamic else _fused_tail(node, allow_batch_norm)
    inputs = {
        activation: config.input_activation,
        weight: _weight_spec_for_axis(config.weight, weight_axis),
    }
    bias = node.args[2] if len(node.args) > 2 else None
    if _is_float_tensor(bias) and config.bias is not None:
        inputs[bias] = config.bias
    if not tail:
        _mark(node, inputs, config.output_activation)
        return True
    _mark(node, inputs)
    for middle in tail[:-1]:
        _mark(middle, {})
    _mark(tail[-1], {}, config.output_activation)
    return True


def _annotate_conv(node: Node, config: QuantizationConfig) -> bool:
    return _annotate_weighted(node, config, weight_axis=0, allow_batch_norm=True)


def _annotate_conv_transpose(node: Node, config: QuantizationConfig) -> bool:
    # The weight of a transposed convolution is [in, out / groups, ...]: its
    # output channels are dim 1, and per channel only makes sense with one
    # group.
    groups = node.args[6] if len(node.args) > 6 else 1
    if groups != 1 and config.weight is not None:
        weight = config.weight
        if weight.qscheme == torch.per_channel_symmetric:
            return False
    return _annotate_weighted(node, config, weight_axis=1, allow_batch_norm=True)


def _annotate_linear(node: Node, config: QuantizationConfig) -> bool:
    return _annotate_weighted(node, config, weight_axis=0, allow_batch_norm=False)


def _annotate_binary(node: Node, config: QuantizationConfig) -> bool:
    operands = [a for a in node.args[:2] if _is_float_tensor(a)]
    if not operands or not _is_float_tensor(node):
        return False
    inputs = {operand: config.input_activation for operand in operands}
    tail = _fused_tail(node, allow_batch_norm=False)
    if not tail:
        _mark(node, inputs, config.output_activation)
        return True
    _mark(node, inputs)
    _mark(tail[-1], {}, config.output_activation)
    return True


def _annotate_sharing(node: Node, config: QuantizationConfig) -> bool:
    source = node.args[0]
    if not _is_float_tensor(source):
        return False
    _mark(
        node,
        {source: config.input_activation},
        SharedQuantizationSpec((source, node)),
    )
    return True


def _annotate_pass_through(node: Node, config: QuantizationConfig) -> bool:
    """Quantized only when the input already is: a reshape between two fp32
    operators stays fp32."""
    source = node.args[0]
    if not _is_float_tensor(source) or not is_annotated(source):
        return False
    producer = source.meta[ANNOTATION_KEY]
    if producer.output_qspec is None:
        return False
    shared = SharedQuantizationSpec(source)
    _mark(node, {source: shared}, shared)
    return True


def _fixed_range_spec(config: QuantizationConfig):
    activation = config.output_activation
    return FixedQParamsQuantizationSpec(
        dtype=activation.dtype,
        scale=1.0 / 256.0,
        zero_point=activation.quant_min,
        quant_min=activation.quant_min,
        quant_max=activation.quant_max,
        qscheme=torch.per_tensor_affine,
    )


def _annotate_fixed_range(node: Node, config: QuantizationConfig) -> bool:
    source = node.args[0]
    if not _is_float_tensor(source):
        return False
    _mark(node, {source: config.input_activation}, _fixed_range_spec(config))
    return True


def _annotate_own_range(node: Node, config: QuantizationConfig) -> bool:
    source = node.args[0]
    if not _is_float_tensor(source):
        return False
    _mark(node, {source: config.input_activation}, config.output_activation)
    return True


def _annotate_cat(node: Node, config: QuantizationConfig) -> bool:
    tensors = node.args[0]
    if not tensors or not all(_is_float_tensor(t) for t in tensors):
        return False
    first = tensors[0]
    shared = SharedQuantizationSpec((first, node))
    inputs = {first: config.input_activation}
    for other in tensors[1:]:
        inputs.setdefault(other, shared)
    _mark(node, inputs, shared)
    return True


def _table() -> Dict[object, AnnotatorType]:
    table: Dict[object, AnnotatorType] = {}
    groups = [
        (CONV_TARGETS, _annotate_conv),
        (CONV_TRANSPOSE_TARGETS, _annotate_conv_transpose),
        (LINEAR_TARGETS, _annotate_linear),
        (BINARY_TARGETS, _annotate_binary),
        (SHARING_TARGETS, _annotate_sharing),
        (FIXED_RANGE_TARGETS, _annotate_fixed_range),
        (OWN_RANGE_TARGETS, _annotate_own_range),
        (CAT_TARGETS, _annotate_cat),
        (PASS_THROUGH_TARGETS, _annotate_pass_through),
    ]
    for targets, annotator in groups:
        for target in targets:
            table.setdefault(target, annotator)
    return table


ANNOTATORS: Dict[object, AnnotatorType] = _table()

# Operators a dynamic configuration quantizes: only those whose activation
# quantization parameters the kernel computes per call.
DYNAMIC_TARGETS = LINEAR_TARGETS


def annotate_node(node: Node, config: QuantizationConfig) -> bool:
    """Annotates `node` (and the pattern it starts) for `config`; returns
    whether it did."""
    if node.op != "call_function" or is_annotated(node):
        return False
    dynamic = config.input_activation is not None and config.input_activation.is_dynamic
    if dynamic and node.target not in DYNAMIC_TARGETS:
        return False
    annotator = ANNOTATORS.get(node.target)
    return annotator(node, config) if annotator is not None else False
