"""Lowers an exported graph (ATen or Edge dialect, fp32) to an XNNPACK
delegate blob (see README.md for the blob's semantics).

`lower_to_xnnpack(exported_program)` serializes every operator of the graph;
`unsupported_reason(node, exported_program)` says why a node cannot be
lowered (None when it can), for partitioners and partition reports. Both use
one table of handlers, so what the partitioner accepts is what lowering
handles.

Layouts: values start in the contiguous (NCHW for 4-D) layout the graph
uses. Nodes that XNNPACK runs in NHWC (convolutions, pooling, prelu, bilinear
resize) ask for their input in NHWC, and the lowering inserts one
static_transpose per value and layout change, reused by every consumer; a
permutation that only moves size-1 dims becomes a reshape. Elementwise nodes
keep the layout of their input.

Constants: parameters, buffers and lifted constants become constant values;
a node whose tensor inputs are all constants is evaluated here (e.g. the
permute of a linear weight); batch norm after a convolution is folded into
its weights.

Dynamic shapes: values are declared at the upper bounds of their symbolic
sizes (as memory planning plans them), and inputs list their dynamic dims.
The runtime recomputes every other value's dims from the inputs', so a node
with symbolic sizes is lowered only when its params can follow them: a
reshape records where each output size comes from (an input dim, a static
size, or one dim inferred from the element count), a slice whether it runs
to the end of a dynamic dim or counts from it.
"""

import math
import operator
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import sympy
import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind

from executorch.backends.xnnpack.serialization.xnnpack_graph_schema import (
    ConcatenateParamsT,
    ConstantPadParamsT,
    Conv2dParamsT,
    FullyConnectedParamsT,
    GeluParamsT,
    LayerNormParamsT,
    NodeKind,
    OutputClampT,
    Pool2dParamsT,
    ReshapeParamsT,
    ResizeBilinear2dParamsT,
    ScalarParamsT,
    SliceMode,
    SliceParamsT,
    TransposeParamsT,
    ValueFlags,
)
from executorch.backends.xnnpack.serialization.xnnpack_graph_serialize import (
    XnnpackGraphBuilder,
)
from executorch.exir.dialects.edge import to_aten_op
from executorch.exir.error import ExportError, ExportErrorType
from executorch.exir.tensor import upper_bound

aten = torch.ops.aten

_CONTIGUOUS = "contiguous"
_NHWC = "nhwc"
_TO_NHWC = [0, 2, 3, 1]
_TO_NCHW = [0, 3, 1, 2]
_MAX_RANK = 6


class XnnpackLoweringError(ExportError, ValueError):
    """A partition the XNNPACK delegate cannot lower."""

    error_type = ExportErrorType.NOT_SUPPORTED


def _aten_op(target: Any) -> Any:
    """The ATen overload behind an Edge dialect op (or `target` itself)."""
    return to_aten_op(target)


def _normalized_args(node: torch.fx.Node) -> Dict[str, Any]:
    """The node's arguments by schema name, defaults filled in."""
    schema = _aten_op(node.target)._schema
    out = {}
    for i, arg in enumerate(schema.arguments):
        if i < len(node.args):
            out[arg.name] = node.args[i]
        elif arg.name in node.kwargs:
            out[arg.name] = node.kwargs[arg.name]
        elif arg.has_default_value():
            out[arg.name] = arg.default_value
        else:
            out[arg.name] = None
    return out


def _sym_shape(node: torch.fx.Node) -> List[Any]:
    """Sizes as the export has them: ints, and SymInts for dynamic ones."""
    return list(node.meta["val"].shape)


def _bound(size: Any) -> int:
    return upper_bound(size)[0]


def _shape(node: torch.fx.Node) -> List[int]:
    """Sizes with dynamic ones at their upper bounds (what the blob
    declares)."""
    return [_bound(d) for d in _sym_shape(node)]


def _dynamic(size: Any) -> bool:
    return not isinstance(size, int)


def _same_size(a: Any, b: Any) -> bool:
    """True when sizes `a` and `b` (ints or SymInts) are equal at every size
    the export allows."""

    def expr(size):
        return sympy.Integer(size) if isinstance(size, int) else size.node.expr

    return sympy.expand(expr(a) - expr(b)) == 0


def _nhwc(shape: Sequence[int]) -> List[int]:
    return [shape[p] for p in _TO_NHWC]


def _pair(v: Any) -> List[int]:
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return v * 2 if len(v) == 1 else v


def _keeps_memory_order(dims: Sequence[int], perm: Sequence[int]) -> bool:
    """True when permuting `dims` by `perm` moves only size-1 dims, so the
    data is the same and a reshape suffices."""
    moved = [p for p in perm if dims[p] != 1]
    return moved == sorted(moved)


def is_size_node(node: torch.fx.Node) -> bool:
    """A call computing a symbolic size (sym_size, and integer arithmetic on
    sizes) for a view's or an expand's arguments. The lowering takes sizes
    from the graph's shapes, so such nodes lower to nothing."""
    return (
        node.op == "call_function"
        and isinstance(node.meta.get("val"), (int, torch.SymInt))
        and (
            node.target == aten.sym_size.int
            or getattr(node.target, "__module__", None) == "_operator"
        )
    )


def is_float32_tensor(node: Any) -> bool:
    val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return isinstance(val, torch.Tensor) and val.dtype == torch.float32


# Unary kinds with no params: aten op -> node kind.
_UNARY = {
    aten.sigmoid.default: NodeKind.sigmoid,
    aten.tanh.default: NodeKind.tanh,
    aten.hardswish.default: NodeKind.hardswish,
    aten.abs.default: NodeKind.abs,
    aten.neg.default: NodeKind.negate,
    aten.sqrt.default: NodeKind.square_root,
    aten.floor.default: NodeKind.floor,
    aten.ceil.default: NodeKind.ceiling,
}

_BINARY = {
    aten.add.Tensor: NodeKind.add,
    aten.add.Scalar: NodeKind.add,
    aten.sub.Tensor: NodeKind.subtract,
    aten.sub.Scalar: NodeKind.subtract,
    aten.mul.Tensor: NodeKind.multiply,
    aten.mul.Scalar: NodeKind.multiply,
    aten.div.Tensor: NodeKind.divide,
    aten.div.Scalar: NodeKind.divide,
    aten.maximum.default: NodeKind.maximum,
    aten.minimum.default: NodeKind.minimum,
}

# Node kinds that take a fused output clamp.
_FUSES_CLAMP = {
    NodeKind.conv2d,
    NodeKind.deconv2d,
    NodeKind.fully_connected,
    NodeKind.add,
    NodeKind.subtract,
    NodeKind.multiply,
    NodeKind.divide,
    NodeKind.max_pool2d,
    NodeKind.avg_pool2d,
    NodeKind.global_avg_pool2d,
}

_VIEWS = {
    aten.view.default,
    aten.view_copy.default,
    aten._unsafe_view.default,
    aten.reshape.default,
    aten.squeeze.dims,
    aten.squeeze_copy.dims,
    aten.squeeze.dim,
    aten.squeeze_copy.dim,
    aten.unsqueeze.default,
    aten.unsqueeze_copy.default,
    aten.clone.default,
    aten.alias.default,
    aten.alias_copy.default,
}


class _Lowering:
    def __init__(self, ep: ExportedProgram) -> None:
        self.ep = ep
        self.builder = XnnpackGraphBuilder()
        # (fx node, layout) -> blob value index.
        self.ids: Dict[Tuple[torch.fx.Node, str], int] = {}
        # fx node -> constant tensor (parameters and folded nodes).
        self.constants: Dict[torch.fx.Node, torch.Tensor] = {}
        # blob value index -> the blob node producing it.
        self.producers: Dict[int, Any] = {}
        self.num_inputs = 0

    # Values ---------------------------------------------------------------

    def add_node(self, kind, inputs, output, params=None, clamp=None) -> None:
        self.producers[output] = self.builder.add_node(
            kind, inputs, [output], params, clamp
        )

    def constant(self, tensor: torch.Tensor) -> int:
        return self.builder.add_constant(tensor.detach().to(torch.float32).contiguous())

    def define(self, node: torch.fx.Node, layout: str = _CONTIGUOUS) -> int:
        """A new intermediate value for `node`'s output in `layout`."""
        shape = _shape(node)
        value = self.builder.add_tensor(_nhwc(shape) if layout == _NHWC else shape)
        self.ids[(node, layout)] = value
        return value

    def lowered(self, node: torch.fx.Node) -> bool:
        return (
            node in self.constants
            or (node, _CONTIGUOUS) in self.ids
            or (node, _NHWC) in self.ids
        )

    def layout_of(self, node: torch.fx.Node) -> str:
        return _CONTIGUOUS if (node, _CONTIGUOUS) in self.ids else _NHWC

    def value(self, node: Any, layout: str = _CONTIGUOUS) -> int:
        """`node`'s value in `layout`, converting (once) if needed."""
        if node in self.constants:
            tensor = self.constants[node]
            if layout == _NHWC:
                # Lower ranks broadcast as if padded with leading 1s.
                tensor = tensor.reshape([1] * (4 - tensor.dim()) + list(tensor.shape))
                tensor = tensor.permute(_TO_NHWC)
            key = (node, layout)
            if key not in self.ids:
                self.ids[key] = self.constant(tensor)
            return self.ids[key]
        key = (node, layout)
        if key in self.ids:
            return self.ids[key]
        source_layout = _NHWC if layout == _CONTIGUOUS else _CONTIGUOUS
        source = self.ids[(node, source_layout)]
        shape = _sym_shape(node)
        source_dims = shape if source_layout == _CONTIGUOUS else _nhwc(shape)
        perm = _TO_NHWC if layout == _NHWC else _TO_NCHW
        out = self.define(node, layout)
        dims = [source_dims[p] for p in perm]
        if _keeps_memory_order([_bound(d) for d in source_dims], perm):
            self.add_node(
                NodeKind.static_reshape,
                [source],
                out,
                _reshape_params(dims, source_dims),
            )
        else:
            self.add_node(
                NodeKind.static_transpose, [source], out, _transpose_params(perm)
            )
        return out

    def scalar(self, x: float) -> int:
        return self.constant(torch.tensor([float(x)]))

    def operand(self, x: Any, layout: str) -> int:
        """A binary op's operand: a node's value or a Python scalar."""
        if isinstance(x, torch.fx.Node):
            return self.value(x, layout)
        return self.scalar(x)

    # Graph ----------------------------------------------------------------

    def run(self) -> bytes:
        graph = self.ep.graph
        kinds = {spec.arg.name: spec for spec in self.ep.graph_signature.input_specs}
        for node in graph.nodes:
            if node.op == "placeholder":
                self.placeholder(node, kinds[node.name])
            elif node.op == "call_function":
                if self.lowered(node):
                    continue
                self.call(node)
            elif node.op == "output":
                self.outputs(node.args[0])
        return self.builder.build()

    def placeholder(self, node: torch.fx.Node, spec) -> None:
        if spec.kind == InputKind.USER_INPUT:
            if not is_float32_tensor(node):
                raise XnnpackLoweringError(f"input {node.name} is not a float32 tensor")
            self.ids[(node, _CONTIGUOUS)] = self.builder.add_tensor(
                _shape(node),
                external_input=self.num_inputs,
                dynamic_dims=[
                    d for d, size in enumerate(_sym_shape(node)) if _dynamic(size)
                ],
            )
            self.num_inputs += 1
            return
        if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER):
            tensor = self.ep.state_dict.get(spec.target)
            if tensor is None:
                tensor = self.ep.constants[spec.target]
        elif spec.kind == InputKind.CONSTANT_TENSOR:
            tensor = self.ep.constants[spec.target]
        else:
            raise XnnpackLoweringError(
                f"input {node.name} of kind {spec.kind} is not supported"
            )
        self.constants[node] = tensor

    def call(self, node: torch.fx.Node) -> None:
        if is_size_node(node):
            return
        if is_constant_node(node, self.ep):
            self.constants[node] = _evaluate(node, self.constants)
            return
        reason = _reason(node, self.ep)
        if reason is not None:
            raise XnnpackLoweringError(f"{node.name} ({node.target}): {reason}")
        _HANDLERS[_aten_op(node.target)][0](self, node)

    def outputs(self, outputs: Sequence[Any]) -> None:
        values = self.builder.graph.values
        used = set()
        for j, node in enumerate(outputs):
            if not isinstance(node, torch.fx.Node) or not is_float32_tensor(node):
                raise XnnpackLoweringError(f"output {j} is not a float32 tensor")
            value = self.value(node, _CONTIGUOUS)
            v = values[value]
            if value in used or v.flags or v.constant is not None:
                # An input, a constant or an output already: copy it.
                copy = self.builder.add_tensor(_shape(node))
                self.add_node(
                    NodeKind.static_reshape,
                    [value],
                    copy,
                    _reshape_params(_sym_shape(node), _sym_shape(node)),
                )
                value, v = copy, values[copy]
            used.add(value)
            v.flags = ValueFlags.external_output
            v.externalIndex = self.num_inputs + j

    # Handlers -------------------------------------------------------------

    def unary(self, node):
        x = node.args[0]
        layout = self.layout_of(x) if x not in self.constants else _CONTIGUOUS
        self.add_node(
            _UNARY[_aten_op(node.target)],
            [self.value(x, layout)],
            self.define(node, layout),
        )

    def binary(self, node):
        args = _normalized_args(node)
        a, b = args["self"], args["other"]
        kind = _BINARY[_aten_op(node.target)]
        # Broadcasting between 4-D operands works the same in NHWC, so an
        # NHWC input keeps the op in NHWC when every operand is 4-D, a
        # constant (padded to 4-D) or a number.
        layout = _CONTIGUOUS
        nodes = [x for x in (a, b) if isinstance(x, torch.fx.Node)]
        if (
            len(_shape(node)) == 4
            and any(
                x not in self.constants and self.layout_of(x) == _NHWC for x in nodes
            )
            and all(x in self.constants or len(_shape(x)) == 4 for x in nodes)
        ):
            layout = _NHWC
        b_value = self.operand(b, layout)
        alpha = args.get("alpha", 1)
        if alpha not in (None, 1):
            scaled = self.builder.add_tensor(self.builder.graph.values[b_value].dims)
            self.add_node(NodeKind.multiply, [b_value, self.scalar(alpha)], scaled)
            b_value = scaled
        self.add_node(
            kind, [self.operand(a, layout), b_value], self.define(node, layout)
        )

    def clamp(self, node):
        args = _normalized_args(node)
        target = _aten_op(node.target)
        if target == aten.relu.default:
            lo, hi = 0.0, math.inf
        elif target == aten.hardtanh.default:
            lo, hi = float(args["min_val"]), float(args["max_val"])
        else:
            lo = -math.inf if args["min"] is None else float(args["min"])
            hi = math.inf if args["max"] is None else float(args["max"])
        x = args["self"]
        layout = self.layout_of(x)
        source = self.value(x, layout)
        producer = self.producers.get(source)
        # Fuse into the producer when nothing else reads its unclamped output;
        # clamping twice clamps to the intersection.
        if (
            producer is not None
            and producer.kind in _FUSES_CLAMP
            and len(x.users) == 1
            and not self.builder.graph.values[source].flags
            and (x, _other(layout)) not in self.ids
        ):
            merged_lo, merged_hi = lo, hi
            if producer.clamp is not None:
                merged_lo = max(lo, producer.clamp.min)
                merged_hi = min(hi, producer.clamp.max)
            if merged_lo < merged_hi:
                producer.clamp = _clamp(merged_lo, merged_hi)
                self.ids[(node, layout)] = source
                return
        self.add_node(
            NodeKind.clamp, [source], self.define(node, layout), clamp=(lo, hi)
        )

    def gelu(self, node):
        params = GeluParamsT()
        params.tanhApproximation = _normalized_args(node)["approximate"] == "tanh"
        x = node.args[0]
        layout = self.layout_of(x)
        self.add_node(
            NodeKind.gelu, [self.value(x, layout)], self.define(node, layout), params
        )

    def scalar_activation(self, node):
        args = _normalized_args(node)
        params = ScalarParamsT()
        if _aten_op(node.target) == aten.leaky_relu.default:
            kind, params.value = NodeKind.leaky_relu, float(args["negative_slope"])
        else:
            kind, params.value = NodeKind.elu, float(args["alpha"])
        x = args["self"]
        layout = self.layout_of(x)
        self.add_node(kind, [self.value(x, layout)], self.define(node, layout), params)

    def square(self, node):
        x = node.args[0]
        layout = self.layout_of(x)
        self.add_node(
            NodeKind.square, [self.value(x, layout)], self.define(node, layout)
        )

    def prelu(self, node):
        x, weight = node.args
        channels = _shape(x)[1]
        slope = self.constants[weight].reshape(-1).expand(channels)
        self.add_node(
            NodeKind.prelu,
            [self.value(x, _NHWC), self.constant(slope)],
            self.define(node, _NHWC),
        )

    def convolution(self, node):
        args = _normalized_args(node)
        x, weight, bias = args["input"], args["weight"], args["bias"]
        w = self.constants[weight]
        b = self.constants[bias] if bias is not None else None
        groups = int(args["groups"])
        out_node = node
        bn = _single_batch_norm_user(node, self.constants)
        if bn is not None and not args["transposed"]:
            bn_node, out_node = bn
            w, b = _fold_batch_norm(w, b, bn_node, self.constants)
        params = Conv2dParamsT()
        params.paddingTop, params.paddingLeft = _pair(args["padding"])
        params.paddingBottom, params.paddingRight = _pair(args["padding"])
        params.strideHeight, params.strideWidth = _pair(args["stride"])
        params.dilationHeight, params.dilationWidth = _pair(args["dilation"])
        params.groups = groups
        in_channels = _shape(x)[1]
        params.groupInputChannels = in_channels // groups
        if args["transposed"]:
            # [IC, OC/g, KH, KW] -> [g * OC/g, KH, KW, IC/g]
            ic, goc, kh, kw = w.shape
            w = w.reshape(groups, ic // groups, goc, kh, kw).permute(0, 2, 3, 4, 1)
            w = w.reshape(groups * goc, kh, kw, ic // groups)
            params.groupOutputChannels = goc
            params.adjustmentHeight, params.adjustmentWidth = _pair(
                args["output_padding"]
            )
            kind = NodeKind.deconv2d
        else:
            params.groupOutputChannels = w.shape[0] // groups
            params.depthwise = groups == in_channels and groups > 1
            # [OC, IC/g, KH, KW] -> [OC, KH, KW, IC/g], or [1, KH, KW, OC]
            w = w.permute(1, 2, 3, 0) if params.depthwise else w.permute(0, 2, 3, 1)
            kind = NodeKind.conv2d
        params.kernelHeight, params.kernelWidth = int(w.shape[1]), int(w.shape[2])
        inputs = [self.value(x, _NHWC), self.constant(w)]
        if b is not None:
            inputs.append(self.constant(b))
        output = self.define(out_node, _NHWC)
        if out_node is not node:
            self.ids[(node, _NHWC)] = output
            self.ids[(bn[0], _NHWC)] = output
        self.add_node(kind, inputs, output, params)

    def batch_norm(self, node):
        # Not after a foldable convolution: y = x * scale + shift, per channel.
        args = _normalized_args(node)
        x = args["input"]
        scale, shift = _batch_norm_affine(node, self.constants)
        getitem = _getitem_zero(node)
        rank = len(_shape(x))
        layout = _NHWC if rank == 4 else _CONTIGUOUS
        if layout == _CONTIGUOUS:
            scale = scale.reshape([-1] + [1] * (rank - 2))
            shift = shift.reshape([-1] + [1] * (rank - 2))
        scaled = self.builder.add_tensor(
            _nhwc(_shape(x)) if layout == _NHWC else _shape(x)
        )
        self.add_node(
            NodeKind.multiply, [self.value(x, layout), self.constant(scale)], scaled
        )
        out = self.define(getitem, layout)
        self.ids[(node, layout)] = out
        self.add_node(NodeKind.add, [scaled, self.constant(shift)], out)

    def linear(self, node):
        target = _aten_op(node.target)
        args = _normalized_args(node)
        if target == aten.addmm.default:
            bias, x, weight = args["self"], args["mat1"], args["mat2"]
            transposed = True
        elif target == aten.mm.default:
            bias, x, weight = None, args["self"], args["mat2"]
            transposed = True
        else:
            bias, x, weight = args["bias"], args["input"], args["weight"]
            transposed = False
        params = FullyConnectedParamsT()
        params.transposeWeights = transposed
        inputs = [self.value(x), self.constant(self.constants[weight])]
        if bias is not None:
            inputs.append(self.constant(self.constants[bias].reshape(-1)))
        self.add_node(NodeKind.fully_connected, inputs, self.define(node), params)

    def mm(self, node):
        # A constant right operand makes it a fully connected layer.
        if _check_linear(node, self.ep) is None:
            self.linear(node)
        else:
            self.matmul(node)

    def matmul(self, node):
        a, b = node.args[0], node.args[1]
        self.add_node(
            NodeKind.batch_matrix_multiply,
            [self.value(a), self.value(b)],
            self.define(node),
        )

    def softmax(self, node):
        kind = (
            NodeKind.safe_softmax
            if _aten_op(node.target) == aten._safe_softmax.default
            else NodeKind.softmax
        )
        self.add_node(kind, [self.value(node.args[0])], self.define(node))

    def pool(self, node):
        args = _normalized_args(node)
        target = _aten_op(node.target)
        params = Pool2dParamsT()
        params.poolingHeight, params.poolingWidth = _pair(args["kernel_size"])
        stride = args["stride"] or args["kernel_size"]
        params.strideHeight, params.strideWidth = _pair(stride)
        params.paddingTop, params.paddingLeft = _pair(args["padding"])
        params.paddingBottom, params.paddingRight = _pair(args["padding"])
        if target == aten.avg_pool2d.default:
            kind, out_node = NodeKind.avg_pool2d, node
        else:
            kind = NodeKind.max_pool2d
            params.dilationHeight, params.dilationWidth = _pair(args["dilation"])
            out_node = (
                _getitem_zero(node)
                if target == aten.max_pool2d_with_indices.default
                else node
            )
        output = self.define(out_node, _NHWC)
        self.add_node(kind, [self.value(args["self"], _NHWC)], output, params)
        if out_node is not node:
            self.ids[(node, _NHWC)] = output

    def global_pool(self, node):
        # NHWC [N, 1, 1, C] has the memory of NCHW [N, C, 1, 1] and [N, C].
        x = node.args[0]
        n, c = _sym_shape(x)[:2]
        pooled = self.builder.add_tensor([_bound(n), 1, 1, _bound(c)])
        self.add_node(NodeKind.global_avg_pool2d, [self.value(x, _NHWC)], pooled)
        if len(_shape(node)) == 4:
            self.ids[(node, _NHWC)] = pooled
        else:
            self.add_node(
                NodeKind.static_reshape,
                [pooled],
                self.define(node),
                _reshape_params(_sym_shape(node), [n, 1, 1, c]),
            )

    def view(self, node):
        self.add_node(
            NodeKind.static_reshape,
            [self.value(node.args[0])],
            self.define(node),
            _reshape_params(_sym_shape(node), _sym_shape(node.args[0])),
        )

    def select(self, node):
        # A size-1 slice, then a reshape that drops the dim.
        x, dim, params = _select_params(node)
        sliced_shape = _sym_shape(x)
        sliced_shape[dim] = 1
        sliced = self.builder.add_tensor([_bound(d) for d in sliced_shape])
        self.add_node(NodeKind.static_slice, [self.value(x)], sliced, params)
        self.add_node(
            NodeKind.static_reshape,
            [sliced],
            self.define(node),
            _reshape_params(_sym_shape(node), sliced_shape),
        )

    def layer_norm(self, node):
        args = _normalized_args(node)
        x, weight, bias = args["input"], args["weight"], args["bias"]
        normalized = list(args["normalized_shape"])
        params = LayerNormParamsT()
        params.normalizedDims = len(normalized)
        params.epsilon = float(args["eps"])
        inputs = [self.value(x)]
        if weight is not None or bias is not None:
            inputs.append(
                self.value(weight)
                if weight is not None
                else self.constant(torch.ones(normalized))
            )
        if bias is not None:
            inputs.append(self.value(bias))
        out = self.define(_getitem_zero(node))
        self.ids[(node, _CONTIGUOUS)] = out
        self.add_node(NodeKind.layer_norm, inputs, out, params)

    def permute(self, node):
        target = _aten_op(node.target)
        rank = len(_shape(node))
        if target in (aten.t.default, aten.t_copy.default):
            perm = [1, 0] if rank == 2 else [0]
        elif target in (aten.transpose.int, aten.transpose_copy.int):
            perm = list(range(rank))
            d0, d1 = (d % rank for d in node.args[1:3])
            perm[d0], perm[d1] = perm[d1], perm[d0]
        else:
            perm = [d % rank for d in node.args[1]]
        x = node.args[0]
        # Reading an NHWC value through an NCHW -> NHWC permute is free.
        if perm == _TO_NHWC and (x, _NHWC) in self.ids:
            self.add_node(
                NodeKind.static_reshape,
                [self.ids[(x, _NHWC)]],
                self.define(node),
                _reshape_params(_sym_shape(node), _nhwc(_sym_shape(x))),
            )
            return
        if _keeps_memory_order(_shape(x), perm):
            self.add_node(
                NodeKind.static_reshape,
                [self.value(x)],
                self.define(node),
                _reshape_params(_sym_shape(node), _sym_shape(x)),
            )
            return
        self.add_node(
            NodeKind.static_transpose,
            [self.value(x)],
            self.define(node),
            _transpose_params(perm),
        )

    def cat(self, node):
        args = _normalized_args(node)
        tensors = args["tensors"]
        params = ConcatenateParamsT()
        params.axis = int(args["dim"]) % len(_shape(node))
        self.add_node(
            NodeKind.concatenate,
            [self.value(t) for t in tensors],
            self.define(node),
            params,
        )

    def slice(self, node):
        args = _normalized_args(node)
        self.add_node(
            NodeKind.static_slice,
            [self.value(args["self"])],
            self.define(node),
            _slice_params(node),
        )

    def pad(self, node):
        args = _normalized_args(node)
        pad = list(args["pad"])
        rank = len(_shape(node))
        pre, post = [0] * rank, [0] * rank
        for i in range(len(pad) // 2):
            pre[rank - 1 - i], post[rank - 1 - i] = pad[2 * i], pad[2 * i + 1]
        params = ConstantPadParamsT()
        params.prePaddings, params.postPaddings = pre, post
        params.paddingValue = float(args["value"])
        self.add_node(
            NodeKind.constant_pad, [self.value(args["self"])], self.define(node), params
        )

    def upsample(self, node):
        args = _normalized_args(node)
        shape = _shape(node)
        params = ResizeBilinear2dParamsT()
        params.newHeight, params.newWidth = shape[2], shape[3]
        params.alignCorners = bool(args["align_corners"])
        x = args.get("input", args.get("self"))
        self.add_node(
            NodeKind.resize_bilinear2d,
            [self.value(x, _NHWC)],
            self.define(node, _NHWC),
            params,
        )


def _other(layout: str) -> str:
    return _NHWC if layout == _CONTIGUOUS else _CONTIGUOUS


def _clamp(lo: float, hi: float) -> OutputClampT:
    clamp = OutputClampT()
    clamp.min, clamp.max = lo, hi
    return clamp


# ReshapeParams.dim_sources entries other than input dims.
_KEEP_SIZE = -1
_INFERRED_SIZE = -2


def _reshape_params(
    out_shape: Sequence[Any], in_shape: Sequence[Any]
) -> ReshapeParamsT:
    """static_reshape from `in_shape` to `out_shape` (ints or SymInts). With
    dynamic sizes, each output dim follows the input dim of the same size,
    keeps its static size, or (one dim at most) is inferred from the element
    count."""
    params = ReshapeParamsT()
    params.newShape = [_bound(d) for d in out_shape]
    if not any(_dynamic(d) for d in [*out_shape, *in_shape]):
        return params
    sources = []
    for size in out_shape:
        if not _dynamic(size):
            sources.append(_KEEP_SIZE)
            continue
        same = [k for k, s in enumerate(in_shape) if _same_size(size, s)]
        sources.append(same[0] if same else _INFERRED_SIZE)
    if sources.count(_INFERRED_SIZE) > 1:
        raise XnnpackLoweringError(
            f"reshape from {list(in_shape)} to {list(out_shape)}: more than one "
            "dynamic output size that is not an input size (the backend infers "
            "one from the element count)"
        )
    params.dimSources = sources
    return params


def _slice_window(
    size: Any, start: Any, end: Any, out_size: Any
) -> Tuple[int, int, int]:
    """(SliceMode, offset, size at the upper bounds) of PyTorch's slice
    [start:end] (step 1) of a dim of `size`, whose result the export gives as
    `out_size`."""
    start = 0 if start is None else start
    to_end = (
        end is None
        or (isinstance(end, int) and end >= _bound(size))
        or (_dynamic(end) and _same_size(end, size))
    )
    if _dynamic(start) or (_dynamic(end) and not to_end):
        raise XnnpackLoweringError(
            "slice bounds that follow a dynamic size other than the sliced dim's"
        )
    if not _dynamic(size):
        # PyTorch's clamping of out-of-range bounds.
        start = max(0, min(size, start + size if start < 0 else start))
        return SliceMode.fixed, start, _bound(out_size)
    if to_end and start >= 0:
        mode, offset, expected = SliceMode.to_end, start, size - start
    elif start >= 0 and end >= 0:
        mode, offset, expected = SliceMode.fixed, start, end - start
    elif start < 0 and (to_end or end < 0):
        mode, offset = SliceMode.from_end, -start
        expected = -start if to_end else end - start
    else:
        raise XnnpackLoweringError(
            f"slice [{start}:{end}] of a dynamic dim counts its start from the "
            "beginning and its end from the end"
        )
    # PyTorch clamps bounds past the size; the backend rejects them at run
    # time, so the export's size must be the unclamped one.
    if not _same_size(expected, out_size):
        raise XnnpackLoweringError(
            f"slice [{start}:{end}] of a dynamic dim of {size}: the exported "
            f"size {out_size} is not {expected}"
        )
    return mode, offset, _bound(out_size)


def _slice_params_for(
    in_shape: Sequence[Any], dim: int, start: Any, end: Any, out_size: Any
) -> SliceParamsT:
    """static_slice of [start:end] along `dim`; other dims whole (dynamic ones
    to their end)."""
    params = SliceParamsT()
    params.offsets, params.sizes, modes = [], [], []
    for d, size in enumerate(in_shape):
        if d == dim:
            mode, offset, bound = _slice_window(size, start, end, out_size)
        else:
            mode = SliceMode.to_end if _dynamic(size) else SliceMode.fixed
            offset, bound = 0, _bound(size)
        modes.append(mode)
        params.offsets.append(offset)
        params.sizes.append(bound)
    if any(m != SliceMode.fixed for m in modes):
        params.modes = modes
    return params


def _size_arg(arg: Any) -> Any:
    """An int argument, or the SymInt a size node computes for it."""
    return arg.meta["val"] if isinstance(arg, torch.fx.Node) else arg


def _slice_params(node: torch.fx.Node) -> SliceParamsT:
    args = _normalized_args(node)
    shape = _sym_shape(args["self"])
    dim = int(args["dim"]) % len(shape)
    return _slice_params_for(
        shape,
        dim,
        _size_arg(args["start"]),
        _size_arg(args["end"]),
        _sym_shape(node)[dim],
    )


def _select_params(node: torch.fx.Node):
    """(input, dim, SliceParams of the size-1 slice) of a select."""
    args = _normalized_args(node)
    x = args["self"]
    shape = _sym_shape(x)
    dim = int(args["dim"]) % len(shape)
    index = _size_arg(args["index"])
    if _dynamic(index):
        raise XnnpackLoweringError("select at an index that follows a dynamic size")
    if not _dynamic(shape[dim]):
        index %= shape[dim]
    # Index -1 takes [-1:], which has no end index.
    end = None if index == -1 else index + 1
    return x, dim, _slice_params_for(shape, dim, index, end, 1)


def _transpose_params(perm: Sequence[int]) -> TransposeParamsT:
    params = TransposeParamsT()
    params.perm = list(perm)
    return params


def _evaluate(node: torch.fx.Node, constants) -> torch.Tensor:
    """Runs a node whose tensor inputs are all constants."""

    def load(a):
        return constants[a] if isinstance(a, torch.fx.Node) else a

    args = torch.fx.node.map_arg(node.args, load)
    kwargs = torch.fx.node.map_arg(node.kwargs, load)
    return _aten_op(node.target)(*args, **kwargs)


def _getitem_zero(node: torch.fx.Node) -> torch.fx.Node:
    (user,) = node.users
    return user


def _only_first_output_used(node: torch.fx.Node) -> bool:
    return len(node.users) == 1 and all(
        u.target == operator.getitem and u.args[1] == 0 for u in node.users
    )


_BATCH_NORMS = {aten._native_batch_norm_legit_no_training.default}


def _single_batch_norm_user(node, constants):
    """(batch norm node, its output getitem) when `node`'s only user is an
    inference batch norm with constant statistics."""
    if len(node.users) != 1:
        return None
    (user,) = node.users
    if _aten_op(user.target) not in _BATCH_NORMS or not _only_first_output_used(user):
        return None
    if not all(a in constants for a in user.args[1:5] if a is not None):
        return None
    return user, _getitem_zero(user)


def _batch_norm_affine(node, constants):
    args = _normalized_args(node)
    var = constants[args["running_var"]]
    mean = constants[args["running_mean"]]
    weight = args["weight"]
    bias = args["bias"]
    gamma = constants[weight] if weight is not None else torch.ones_like(var)
    beta = constants[bias] if bias is not None else torch.zeros_like(var)
    scale = gamma / torch.sqrt(var + float(args["eps"]))
    return scale, beta - mean * scale


def _fold_batch_norm(w, b, bn_node, constants):
    scale, shift = _batch_norm_affine(bn_node, constants)
    w = w * scale.reshape(-1, 1, 1, 1)
    b = shift if b is None else b * scale + shift
    return w, b


# Checks: each returns None when the node can be lowered, else the reason.


def _check_unary(node, ep):
    return None


def _check_binary(node, ep):
    args = _normalized_args(node)
    if _aten_op(node.target) == aten.div.Tensor and args.get("rounding_mode"):
        return "only true division"
    for x in (args["self"], args["other"]):
        if isinstance(x, torch.fx.Node):
            if len(_shape(x)) > _MAX_RANK:
                return f"rank above {_MAX_RANK}"
        elif not isinstance(x, (int, float)):
            return "operand is neither a tensor nor a number"
    return None


def _check_clamp(node, ep):
    args = _normalized_args(node)
    lo = args.get("min", args.get("min_val"))
    hi = args.get("max", args.get("max_val"))
    if lo is not None and hi is not None and not float(lo) < float(hi):
        return "empty clamp range"
    if isinstance(lo, torch.fx.Node) or isinstance(hi, torch.fx.Node):
        return "tensor bounds"
    return None


def _check_elu(node, ep):
    args = _normalized_args(node)
    if _aten_op(node.target) == aten.elu.default and (
        args["scale"] != 1 or args["input_scale"] != 1
    ):
        return "elu with scale or input_scale"
    return None


def _check_square(node, ep):
    return None if node.args[1] == 2 else "pow with an exponent other than 2"


# Tensor factories that is_constant_node folds (to_edge turns numbers in
# tensor slots into them).
_CREATION_OPS = {
    aten.full.default,
    aten.scalar_tensor.default,
    aten.zeros.default,
    aten.ones.default,
}


def is_constant_node(x, ep) -> bool:
    """True for parameters, buffers and lifted constants (and nodes computed
    only from them)."""
    if not isinstance(x, torch.fx.Node):
        return False
    if x.op == "placeholder":
        kinds = {s.arg.name: s.kind for s in ep.graph_signature.input_specs}
        return kinds.get(x.name) in (
            InputKind.PARAMETER,
            InputKind.BUFFER,
            InputKind.CONSTANT_TENSOR,
        )
    if x.op != "call_function":
        return False
    # Of the nodes without tensor inputs, only deterministic ones fold.
    if not x.all_input_nodes:
        return _aten_op(x.target) in _CREATION_OPS
    return all(is_constant_node(a, ep) for a in x.all_input_nodes)


def _check_prelu(node, ep):
    x, weight = node.args
    if len(_shape(x)) != 4:
        return "prelu on a tensor that is not 4-D"
    if not is_constant_node(weight, ep):
        return "non-constant slope"
    return None


def _check_conv(node, ep):
    args = _normalized_args(node)
    if len(_shape(node)) != 4:
        return "only 2-D convolution"
    if not is_constant_node(args["weight"], ep) or (
        args["bias"] is not None and not is_constant_node(args["bias"], ep)
    ):
        return "non-constant weights"
    if any(p < 0 for p in _pair(args["padding"])):
        return "negative padding"
    return None


def _check_batch_norm(node, ep):
    if not _only_first_output_used(node):
        return "batch norm statistics outputs are used"
    if not all(is_constant_node(a, ep) for a in node.args[1:5] if a is not None):
        return "non-constant batch norm parameters"
    return None


def _check_linear(node, ep):
    target = _aten_op(node.target)
    args = _normalized_args(node)
    if target == aten.addmm.default:
        bias, weight = args["self"], args["mat2"]
        if args["beta"] != 1 or args["alpha"] != 1:
            return "addmm with alpha or beta"
        if len(_shape(bias)) not in (1, 2) or (
            len(_shape(bias)) == 2 and _shape(bias)[0] != 1
        ):
            return "addmm bias is not a row"
    elif target == aten.mm.default:
        bias, weight = None, args["mat2"]
    else:
        bias, weight = args["bias"], args["weight"]
    if not is_constant_node(weight, ep) or (
        bias is not None and not is_constant_node(bias, ep)
    ):
        return "non-constant weights (lowered as batch matmul when both are 2-D+)"
    return None


def _check_mm(node, ep):
    if _check_linear(node, ep) is None:
        return None
    return _check_matmul(node, ep)


def _check_matmul(node, ep):
    a, b = node.args[0], node.args[1]
    if len(_shape(a)) != len(_shape(b)) or len(_shape(a)) < 2:
        return "operands of different ranks"
    if _shape(a)[:-2] != _shape(b)[:-2]:
        return "broadcast batch dims"
    return None


def _check_softmax(node, ep):
    rank = len(_shape(node))
    if node.args[1] % rank != rank - 1:
        return "softmax over a dim other than the last"
    if len(node.args) > 2 and node.args[2]:
        return "half_to_float or a dtype"
    return None


def _check_pool(node, ep):
    args = _normalized_args(node)
    target = _aten_op(node.target)
    if len(_shape(args["self"])) != 4:
        return "pooling on a tensor that is not 4-D"
    if args["ceil_mode"]:
        return "ceil_mode"
    if target == aten.avg_pool2d.default:
        if args["divisor_override"] is not None:
            return "divisor_override"
        if args["count_include_pad"] and any(_pair(args["padding"])):
            return "count_include_pad with padding (XNNPACK excludes padding)"
    if target == aten.max_pool2d_with_indices.default and not _only_first_output_used(
        node
    ):
        return "max pool indices are used"
    if target != aten.avg_pool2d.default and _pair(args["kernel_size"]) == [1, 1]:
        return "1x1 max pooling"
    return None


def _check_global_pool(node, ep):
    x = node.args[0]
    if len(_shape(x)) != 4:
        return "not a 4-D input"
    target = _aten_op(node.target)
    if target == aten.mean.dim:
        args = _normalized_args(node)
        dims = sorted(d % 4 for d in args["dim"] or [])
        if dims != [2, 3]:
            return "mean over dims other than H and W"
        if args["dtype"] is not None:
            return "mean with a dtype"
    elif list(node.args[1]) != [1, 1]:
        return "adaptive pooling to a size other than 1x1"
    return None


def _lowering_error(build: Callable[[], Any]) -> Optional[str]:
    """The reason `build` (a params builder) raises, or None."""
    try:
        build()
    except XnnpackLoweringError as e:
        return str(e)
    return None


def _check_rank(node, ep):
    return None if len(_shape(node)) <= _MAX_RANK else f"rank above {_MAX_RANK}"


def _check_view(node, ep):
    return _check_rank(node, ep) or _lowering_error(
        lambda: _reshape_params(_sym_shape(node), _sym_shape(node.args[0]))
    )


def _check_select(node, ep):
    return _check_rank(node, ep) or _lowering_error(lambda: _select_params(node))


def _check_expand(node, ep):
    source, target = _shape(node.args[0]), _shape(node)
    if math.prod(source) != math.prod(target):
        return "expand that repeats data"
    return _check_view(node, ep)


def _check_layer_norm(node, ep):
    if not _only_first_output_used(node):
        return "layer norm statistics outputs are used"
    return None


def _check_cat(node, ep):
    tensors = _normalized_args(node)["tensors"]
    if not all(isinstance(t, torch.fx.Node) for t in tensors):
        return "non-tensor inputs"
    return None


def _check_slice(node, ep):
    args = _normalized_args(node)
    if args["step"] != 1:
        return "slice with a step"
    return _lowering_error(lambda: _slice_params(node))


def _check_pad(node, ep):
    if any(p < 0 for p in _normalized_args(node)["pad"]):
        return "negative padding (cropping)"
    return None


def _check_upsample(node, ep):
    if len(_shape(node)) != 4:
        return "not a 4-D input"
    if any(_dynamic(d) for d in _sym_shape(node)[2:]):
        return "resize to a size that follows a dynamic size"
    return None


_HANDLERS: Dict[Any, Tuple[Callable, Callable]] = {}


def _register(ops, handler, check) -> None:
    for op in ops:
        _HANDLERS[op] = (handler, check)


_register(_UNARY, _Lowering.unary, _check_unary)
_register(_BINARY, _Lowering.binary, _check_binary)
_register(
    [aten.relu.default, aten.hardtanh.default, aten.clamp.default],
    _Lowering.clamp,
    _check_clamp,
)
_register([aten.gelu.default], _Lowering.gelu, _check_unary)
_register(
    [aten.leaky_relu.default, aten.elu.default],
    _Lowering.scalar_activation,
    _check_elu,
)
_register([aten.pow.Tensor_Scalar], _Lowering.square, _check_square)
_register(
    [aten._prelu_kernel.default, aten.prelu.default], _Lowering.prelu, _check_prelu
)
_register([aten.convolution.default], _Lowering.convolution, _check_conv)
_register(_BATCH_NORMS, _Lowering.batch_norm, _check_batch_norm)
_register([aten.addmm.default, aten.linear.default], _Lowering.linear, _check_linear)
_register([aten.mm.default], _Lowering.mm, _check_mm)
_register([aten.bmm.default], _Lowering.matmul, _check_matmul)
_register(
    [aten._softmax.default, aten._safe_softmax.default],
    _Lowering.softmax,
    _check_softmax,
)
_register(
    [
        aten.max_pool2d.default,
        aten.max_pool2d_with_indices.default,
        aten.avg_pool2d.default,
    ],
    _Lowering.pool,
    _check_pool,
)
_register(
    [
        aten.mean.dim,
        aten._adaptive_avg_pool2d.default,
        aten.adaptive_avg_pool2d.default,
    ],
    _Lowering.global_pool,
    _check_global_pool,
)
_register(_VIEWS, _Lowering.view, _check_view)
_register(
    [
        aten.permute.default,
        aten.permute_copy.default,
        aten.t.default,
        aten.t_copy.default,
        aten.transpose.int,
        aten.transpose_copy.int,
    ],
    _Lowering.permute,
    _check_rank,
)
_register(
    [aten.expand.default, aten.expand_copy.default], _Lowering.view, _check_expand
)
_register([aten.select.int, aten.select_copy.int], _Lowering.select, _check_select)
_register([aten.native_layer_norm.default], _Lowering.layer_norm, _check_layer_norm)
_register([aten.cat.default], _Lowering.cat, _check_cat)
_register([aten.slice.Tensor, aten.slice_copy.Tensor], _Lowering.slice, _check_slice)
_register([aten.constant_pad_nd.default], _Lowering.pad, _check_pad)
_register(
    [aten.upsample_bilinear2d.default, aten.upsample_bilinear2d.vec],
    _Lowering.upsample,
    _check_upsample,
)


def _has_bounded_shape(node: torch.fx.Node) -> bool:
    vals = node.meta.get("val")
    vals = vals if isinstance(vals, (tuple, list)) else [vals]
    try:
        for v in vals:
            if isinstance(v, torch.Tensor):
                [_bound(d) for d in v.shape]
    except ValueError:
        return False
    return True


def _is_empty(node: torch.fx.Node) -> bool:
    val = node.meta.get("val")
    # Of a multi-output op only the first output is lowered (batch norm's
    # statistics outputs are empty in inference).
    if isinstance(val, (tuple, list)):
        val = val[0] if val else None
    return isinstance(val, torch.Tensor) and any(_bound(d) == 0 for d in val.shape)


# Multi-output ops whose first output (through getitem 0) is what is used.
_TUPLE_OUTPUTS = _BATCH_NORMS | {
    aten.max_pool2d_with_indices.default,
    aten.native_layer_norm.default,
}


def _reason(node: torch.fx.Node, ep: ExportedProgram) -> Optional[str]:
    target = _aten_op(node.target)
    if target == operator.getitem:
        source = node.args[0]
        if node.args[1] != 0 or _aten_op(source.target) not in _TUPLE_OUTPUTS:
            return "getitem of an unsupported multi-output op"
        return _reason(source, ep)
    if is_constant_node(node, ep) or is_size_node(node):
        # Evaluated at lowering time, or not needed (sizes come from shapes).
        return None
    if target not in _HANDLERS:
        return "no XNNPACK lowering for this operator"
    if not all(_has_bounded_shape(n) for n in [node, *node.all_input_nodes]):
        return "a dynamic size without an upper bound (give its Dim a max)"
    if any(_is_empty(n) for n in [node, *node.all_input_nodes]):
        return "empty tensors"
    if target not in _TUPLE_OUTPUTS and not is_float32_tensor(node):
        return "output is not a float32 tensor"
    for a in node.all_input_nodes:
        val = a.meta.get("val")
        if isinstance(val, torch.Tensor) and val.dtype != torch.float32:
            return f"input {a.name} is {val.dtype}, not float32"
        if not isinstance(val, torch.Tensor) and not is_size_node(a):
            return f"input {a.name} is not a tensor"
    return _HANDLERS[target][1](node, ep)


def unsupported_reason(node: torch.fx.Node, ep: ExportedProgram) -> Optional[str]:
    """Why `node` (a call_function of `ep`'s graph) cannot be lowered to
    XNNPACK, or None when it can."""
    if node.op != "call_function":
        return "not an operator call"
    return _reason(node, ep)


def lower_to_xnnpack(ep: ExportedProgram) -> bytes:
    """The XNNPACK blob for `ep`'s graph: user inputs become the delegate's
    inputs in order, user outputs its outputs. Raises XnnpackLoweringError
    naming the first node that cannot be lowered."""
    return _Lowering(ep).run()
