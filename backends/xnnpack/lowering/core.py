"""The lowering's engine: the one table of supported operators, the walk over
the graph, and what every op family shares (values, layouts, constants).

Each family module (elementwise, conv, gemm, pool, shape, norm, resize)
registers its operators here with `register`: a `lower` function that adds
the op's XNNPACK nodes and a `check` that returns why a node cannot be
lowered (None when it can). The partitioner asks `unsupported_reason`, which
runs the same checks, so the two cannot disagree.

Layouts: values start in the contiguous (NCHW for 4-D) layout the graph
uses. Kinds XNNPACK runs in NHWC (convolutions, pooling, prelu, bilinear
resize) ask for their input in NHWC, and the lowering inserts one
static_transpose per value and layout change, shared by every consumer; a
permutation that only moves size-1 dims becomes a reshape.

Constants: parameters, buffers and lifted constants become constant values;
a node whose tensor inputs are all constants is evaluated here (e.g. the
permute of a linear weight).

Dynamic shapes: values are declared at the upper bounds of their symbolic
sizes (as memory planning plans them); the runtime recomputes every value's
dims from the inputs', so a node with symbolic sizes is lowered only when
its params can follow them (see shape.py).
"""

import contextlib
import operator
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import sympy
import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind

from executorch.backends.xnnpack.serialization.xnnpack_graph_schema import (
    XNN_VALUE_FLAG_EXTERNAL_OUTPUT,
    DimSource,
    XNNStaticReshapeT,
    XNNStaticTransposeT,
    XNodeT,
    XNodeUnion,
    _XNNNode1x1T,
    _XNNNode2x1T,
)
from executorch.backends.xnnpack.serialization.xnnpack_graph_serialize import (
    XnnpackGraphBuilder,
    set_output_clamp,
)
from executorch.exir.dialects.edge import to_aten_op
from executorch.exir.error import ExportError, ExportErrorType
from executorch.exir.tensor import upper_bound

aten = torch.ops.aten

CONTIGUOUS = "contiguous"
NHWC = "nhwc"
# The same layouts of a value kept in int8 (quant.py): a node can have an
# fp32 and an int8 value at once.
Q_CONTIGUOUS = "q_contiguous"
Q_NHWC = "q_nhwc"
LAYOUTS = (CONTIGUOUS, NHWC, Q_CONTIGUOUS, Q_NHWC)
TO_NHWC = [0, 2, 3, 1]
TO_NCHW = [0, 3, 1, 2]
MAX_RANK = 6


class XnnpackLoweringError(ExportError, ValueError):
    """A partition the XNNPACK delegate cannot lower."""

    error_type = ExportErrorType.NOT_SUPPORTED


# The operator table -----------------------------------------------------------


@dataclass(frozen=True)
class OpEntry:
    lower: Callable[["Lowering", torch.fx.Node], None]
    check: Callable[[torch.fx.Node, ExportedProgram], Optional[str]]


OPS: Dict[Any, OpEntry] = {}

# Lowerings of patterns spanning several nodes (int8 ops between dequantize
# and quantize steps, quant.py): each `try_lower(ctx, node)` lowers the
# pattern rooted at `node` and returns True, or returns False and leaves
# the node to the operator table.
PATTERNS: List[Callable[["Lowering", torch.fx.Node], bool]] = []

# Why operators without a lowering are left out, where there is more to
# say than that (e.g. they run on a kernel library of ours instead).
NOT_LOWERED_BECAUSE: Dict[Any, str] = {}

# Operators whose check covers their dtypes (quantize / dequantize steps,
# whose integer side is an intermediate of the delegate).
OWN_DTYPES = set()


def no_check(node: torch.fx.Node, ep: ExportedProgram) -> Optional[str]:
    return None


def register(targets: Sequence[Any], check=no_check):
    """Decorator: `lower(ctx, node)` lowers the ATen ops `targets`, which
    `check(node, ep)` accepts."""

    def decorator(lower):
        for target in targets:
            OPS[target] = OpEntry(lower, check)
        return lower

    return decorator


# Graph and shape helpers ------------------------------------------------------


def aten_op(target: Any) -> Any:
    """The ATen overload behind an Edge dialect op (or `target` itself)."""
    return to_aten_op(target)


def normalized_args(node: torch.fx.Node) -> Dict[str, Any]:
    """The node's arguments by schema name, defaults filled in."""
    schema = aten_op(node.target)._schema
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


def sym_shape(node: torch.fx.Node) -> List[Any]:
    """Sizes as the export has them: ints, and SymInts for dynamic ones."""
    return list(node.meta["val"].shape)


def bound(size: Any) -> int:
    return upper_bound(size)[0]


def shape(node: torch.fx.Node) -> List[int]:
    """Sizes with dynamic ones at their upper bounds (what the blob
    declares)."""
    return [bound(d) for d in sym_shape(node)]


def dynamic(size: Any) -> bool:
    return not isinstance(size, int)


def same_size(a: Any, b: Any) -> bool:
    """True when sizes `a` and `b` (ints or SymInts) are equal at every size
    the export allows."""

    def expr(size):
        return sympy.Integer(size) if isinstance(size, int) else size.node.expr

    return sympy.expand(expr(a) - expr(b)) == 0


def nhwc(dims: Sequence[Any]) -> List[Any]:
    return [dims[p] for p in TO_NHWC]


def pair(v: Any) -> List[int]:
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return v * 2 if len(v) == 1 else v


def keeps_memory_order(dims: Sequence[int], perm: Sequence[int]) -> bool:
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


# Tensor factories that is_constant_node folds (to_edge turns numbers in
# tensor slots into them).
_CREATION_OPS = {
    aten.full.default,
    aten.scalar_tensor.default,
    aten.zeros.default,
    aten.ones.default,
}


def is_constant_node(x: Any, ep: ExportedProgram) -> bool:
    """True for parameters, buffers and lifted constants (and nodes computed
    only from them)."""
    if not isinstance(x, torch.fx.Node):
        return False
    constant_inputs = {
        s.arg.name
        for s in ep.graph_signature.input_specs
        if s.kind
        in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)
    }
    # A walk over x's ancestors, not a recursion: a deep network's chain of
    # activations would pass Python's recursion limit.
    seen, pending = set(), [x]
    while pending:
        node = pending.pop()
        if node in seen:
            continue
        seen.add(node)
        if node.op == "placeholder":
            if node.name not in constant_inputs:
                return False
        elif node.op != "call_function":
            return False
        elif node.all_input_nodes:
            pending.extend(node.all_input_nodes)
        # Of the nodes without tensor inputs, only deterministic ones fold.
        elif aten_op(node.target) not in _CREATION_OPS:
            return False
    return True


def getitem_zero(node: torch.fx.Node) -> torch.fx.Node:
    (user,) = node.users
    return user


def only_first_output_used(node: torch.fx.Node) -> bool:
    return len(node.users) == 1 and all(
        u.target == operator.getitem and u.args[1] == 0 for u in node.users
    )


def evaluate(node: torch.fx.Node, constants) -> torch.Tensor:
    """Runs a node whose tensor inputs are all constants."""

    def load(a):
        return constants[a] if isinstance(a, torch.fx.Node) else a

    args = torch.fx.node.map_arg(node.args, load)
    kwargs = torch.fx.node.map_arg(node.kwargs, load)
    return aten_op(node.target)(*args, **kwargs)


def lowering_error(build: Callable[[], Any]) -> Optional[str]:
    """The reason `build` (a params builder) raises, or None."""
    try:
        build()
    except XnnpackLoweringError as e:
        return str(e)
    return None


def check_rank(node: torch.fx.Node, ep: ExportedProgram) -> Optional[str]:
    return None if len(shape(node)) <= MAX_RANK else f"rank above {MAX_RANK}"


def reshape_params(
    out_shape: Sequence[Any], in_shape: Sequence[Any]
) -> XNNStaticReshapeT:
    """static_reshape from `in_shape` to `out_shape` (ints or SymInts). With
    dynamic sizes, each output dim follows the input dim of the same size,
    keeps its static size, or (one dim at most) is inferred from the
    element count (dim_sources, this project's extension). new_shape marks
    the inferred dim, or the only dynamic one, with 0: upstream's runtime,
    which reads no dim_sources, infers that dim and so follows the inputs
    too when at most one output size is dynamic."""
    params = XNNStaticReshapeT()
    params.numDims = len(out_shape)
    params.newShape = [bound(d) for d in out_shape]
    if not any(dynamic(d) for d in [*out_shape, *in_shape]):
        return params
    sources = []
    for size in out_shape:
        if not dynamic(size):
            sources.append(DimSource.keep)
            continue
        same = [k for k, s in enumerate(in_shape) if same_size(size, s)]
        sources.append(same[0] if same else DimSource.inferred)
    if sources.count(DimSource.inferred) > 1:
        raise XnnpackLoweringError(
            f"reshape from {list(in_shape)} to {list(out_shape)}: more than one "
            "dynamic output size that is not an input size (the backend infers "
            "one from the element count)"
        )
    params.dimSources = sources
    dynamic_dims = [i for i, d in enumerate(out_shape) if dynamic(d)]
    if DimSource.inferred in sources:
        params.newShape[sources.index(DimSource.inferred)] = 0
    elif len(dynamic_dims) == 1:
        params.newShape[dynamic_dims[0]] = 0
    return params


def node_1x1(x: int, out: int) -> _XNNNode1x1T:
    table = _XNNNode1x1T()
    table.inputId, table.outputId, table.flags = x, out, 0
    return table


def node_2x1(a: int, b: int, out: int) -> _XNNNode2x1T:
    table = _XNNNode2x1T()
    table.input1Id, table.input2Id, table.outputId, table.flags = a, b, out, 0
    return table


# Kinds that take a fused output clamp (output_min_max).
CLAMPABLE = {
    XNodeUnion.XNNConv2d,
    XNodeUnion.XNNDepthwiseConv2d,
    XNodeUnion.XNNConvTranspose2d,
    XNodeUnion.XNNFullyConnected,
    XNodeUnion.XNNAdd,
    XNodeUnion.XNNSubtract,
    XNodeUnion.XNNMultiply,
    XNodeUnion.XNNDiv,
    XNodeUnion.XNNMaxPooling2d,
    XNodeUnion.XNNAvgPooling2d,
    XNodeUnion.XNNGlobalAvgPooling2d,
    XNodeUnion.XNNClamp,
}


# The lowering -----------------------------------------------------------------


class Lowering:
    """Lowers one exported program. Family modules call its methods."""

    def __init__(self, ep: ExportedProgram, builder: XnnpackGraphBuilder) -> None:
        self.ep = ep
        self.builder = builder
        # (fx node, layout) -> value id.
        self.ids: Dict[Tuple[torch.fx.Node, str], int] = {}
        # fx node -> constant tensor (parameters and folded nodes).
        self.constants: Dict[torch.fx.Node, torch.Tensor] = {}
        # value id -> the node producing it.
        self.producers: Dict[int, XNodeT] = {}
        self.num_inputs = 0
        # Nodes lowered as part of another node's pattern (a fused relu, a
        # quantize step an int8 op produces directly).
        self.absorbed = set()
        # fx node -> a function defining its fp32 value on first use (a
        # dequantize step converts only when an fp32 op reads it).
        self.lazy: Dict[torch.fx.Node, Callable[[], None]] = {}
        # Constant node -> the .ptd file its bytes go to (upstream's
        # per-weight "delegate_constant_tag"; folded nodes inherit it).
        self.constant_tags: Dict[torch.fx.Node, str] = {}

    # Values ---------------------------------------------------------------

    def add_node(self, kind: int, table: Any, output: int, clamp=None) -> XNodeT:
        """Adds a node of `kind` whose (first) output is value `output`."""
        node = self.builder.add_node(kind, table, output_min_max=clamp)
        self.producers[output] = node
        return node

    def unary(self, kind: int, x: int, out: int, clamp=None) -> XNodeT:
        return self.add_node(kind, node_1x1(x, out), out, clamp)

    def binary(self, kind: int, a: int, b: int, out: int, clamp=None) -> XNodeT:
        return self.add_node(kind, node_2x1(a, b, out), out, clamp)

    def tensor(self, dims: Sequence[int]) -> int:
        """A new fp32 intermediate value."""
        return self.builder.add_tensor(dims)

    def constant(self, tensor: torch.Tensor) -> int:
        return self.builder.add_constant(tensor.detach().to(torch.float32))

    def scalar(self, x: float) -> int:
        return self.constant(torch.tensor([float(x)]))

    def define(self, node: torch.fx.Node, layout: str = CONTIGUOUS) -> int:
        """A new intermediate value for `node`'s output in `layout`."""
        dims = shape(node)
        value = self.tensor(nhwc(dims) if layout == NHWC else dims)
        self.ids[(node, layout)] = value
        return value

    def lowered(self, node: torch.fx.Node) -> bool:
        return (
            node in self.constants
            or node in self.absorbed
            or node in self.lazy
            or any((node, layout) in self.ids for layout in LAYOUTS)
        )

    def layout_of(self, node: torch.fx.Node) -> str:
        if node in self.constants:
            return CONTIGUOUS
        if node in self.lazy:
            self.lazy.pop(node)()
        return CONTIGUOUS if (node, CONTIGUOUS) in self.ids else NHWC

    def value(self, node: Any, layout: str = CONTIGUOUS) -> int:
        """`node`'s value in `layout`, converting (once) if needed."""
        key = (node, layout)
        if key in self.ids:
            return self.ids[key]
        if node in self.lazy:
            self.lazy.pop(node)()
            return self.value(node, layout)
        if node in self.constants:
            tensor = self.constants[node]
            if layout == NHWC:
                # Lower ranks broadcast as if padded with leading 1s.
                tensor = tensor.reshape([1] * (4 - tensor.dim()) + list(tensor.shape))
                tensor = tensor.permute(TO_NHWC)
            with self._storing_in(self.constant_tags.get(node)):
                self.ids[key] = self.constant(tensor)
            return self.ids[key]
        source_layout = NHWC if layout == CONTIGUOUS else CONTIGUOUS
        source = self.ids[(node, source_layout)]
        dims = sym_shape(node)
        source_dims = dims if source_layout == CONTIGUOUS else nhwc(dims)
        perm = TO_NHWC if layout == NHWC else TO_NCHW
        out = self.define(node, layout)
        self.permute(source, out, source_dims, perm)
        return out

    def permute(
        self, source: int, out: int, source_dims: Sequence[Any], perm: Sequence[int]
    ) -> None:
        """out = source permuted by `perm`: a reshape when only size-1 dims
        move, else a static_transpose."""
        out_dims = [source_dims[p] for p in perm]
        if keeps_memory_order([bound(d) for d in source_dims], perm):
            self.reshape(source, out, out_dims, source_dims)
            return
        table = XNNStaticTransposeT()
        table.numDims = len(perm)
        table.perm = list(perm)
        table.inputId, table.outputId, table.flags = source, out, 0
        self.add_node(XNodeUnion.XNNStaticTranspose, table, out)

    def reshape(
        self,
        source: int,
        out: int,
        out_shape: Sequence[Any],
        in_shape: Sequence[Any],
    ) -> None:
        table = reshape_params(out_shape, in_shape)
        table.inputId, table.outputId, table.flags = source, out, 0
        self.add_node(XNodeUnion.XNNStaticReshape, table, out)

    def operand(self, x: Any, layout: str) -> int:
        """A binary op's operand: a node's value or a Python scalar."""
        if isinstance(x, torch.fx.Node):
            return self.value(x, layout)
        return self.scalar(x)

    def fuse_clamp(self, x: torch.fx.Node, source: int, lo: float, hi: float) -> bool:
        """Folds clamp(lo, hi) of `x` (value `source`) into the node that
        produces it when nothing else reads its unclamped output; clamping
        twice clamps to the intersection. True when it did."""
        producer = self.producers.get(source)
        if (
            producer is None
            or producer.xnodeUnionType not in CLAMPABLE
            or len(x.users) != 1
            or self.builder.tensor(source).flags
            or ((x, CONTIGUOUS) in self.ids and (x, NHWC) in self.ids)
        ):
            return False
        clamp = producer.outputMinMax
        if clamp is not None:
            lo, hi = max(lo, clamp.outputMin), min(hi, clamp.outputMax)
        if not lo < hi:
            return False
        set_output_clamp(producer, lo, hi)
        return True

    # Graph ----------------------------------------------------------------

    def run(self) -> bytes:
        kinds = {spec.arg.name: spec for spec in self.ep.graph_signature.input_specs}
        for node in self.ep.graph.nodes:
            if node.op == "placeholder":
                self.placeholder(node, kinds[node.name])
            elif node.op == "call_function":
                if not self.lowered(node):
                    self.call(node)
            elif node.op == "output":
                self.outputs(node.args[0])
        return self.builder.build()

    def placeholder(self, node: torch.fx.Node, spec) -> None:
        if spec.kind == InputKind.USER_INPUT:
            if not is_float32_tensor(node):
                raise XnnpackLoweringError(f"input {node.name} is not a float32 tensor")
            dims = shape(node) or [1]
            self.ids[(node, CONTIGUOUS)] = self.builder.add_tensor(
                dims, external_input=self.num_inputs
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
        tag = node.meta.get("custom", {}).get("delegate_constant_tag")
        if tag is not None:
            self.constant_tags[node] = tag

    def call(self, node: torch.fx.Node) -> None:
        if is_size_node(node):
            return
        # Constants an op makes from its weights (e.g. a transposed filter)
        # go where those weights were tagged to go.
        tags = [
            self.constant_tags[a] for a in node.all_input_nodes if a in self.constant_tags
        ]
        if is_constant_node(node, self.ep):
            self.constants[node] = evaluate(node, self.constants)
            if tags:
                self.constant_tags[node] = tags[0]
            return
        with self._storing_in(tags[0] if tags else None):
            if any(try_lower(self, node) for try_lower in PATTERNS):
                return
            why = reason(node, self.ep)
            if why is not None:
                raise XnnpackLoweringError(f"{node.name} ({node.target}): {why}")
            OPS[aten_op(node.target)].lower(self, node)

    @contextlib.contextmanager
    def _storing_in(self, tag: Optional[str]):
        """Constants added inside go to the .ptd file `tag` (None: where the
        builder puts untagged constants)."""
        default = self.builder.external_tag
        self.builder.external_tag = tag if tag is not None else default
        try:
            yield
        finally:
            self.builder.external_tag = default

    def outputs(self, outputs: Sequence[Any]) -> None:
        used = set()
        for j, node in enumerate(outputs):
            if not isinstance(node, torch.fx.Node) or not is_float32_tensor(node):
                raise XnnpackLoweringError(f"output {j} is not a float32 tensor")
            value = self.value(node, CONTIGUOUS)
            tensor = self.builder.tensor(value)
            if value in used or tensor.flags or tensor.constantBufferIdx:
                # An input, a constant or an output already: copy it.
                copy = self.tensor(tensor.dims)
                self.unary(XNodeUnion.XNNCopy, value, copy)
                value, tensor = copy, self.builder.tensor(copy)
            used.add(value)
            tensor.flags = XNN_VALUE_FLAG_EXTERNAL_OUTPUT
            tensor.externalId = self.num_inputs + j
            self.builder.graph.outputIds.append(value)


# Checks shared by every node --------------------------------------------------


def _has_bounded_shape(node: torch.fx.Node) -> bool:
    vals = node.meta.get("val")
    vals = vals if isinstance(vals, (tuple, list)) else [vals]
    try:
        for v in vals:
            if isinstance(v, torch.Tensor):
                [bound(d) for d in v.shape]
    except ValueError:
        return False
    return True


def _is_empty(node: torch.fx.Node) -> bool:
    val = node.meta.get("val")
    # Of a multi-output op only the first output is lowered (batch norm's
    # statistics outputs are empty in inference).
    if isinstance(val, (tuple, list)):
        val = val[0] if val else None
    return isinstance(val, torch.Tensor) and any(bound(d) == 0 for d in val.shape)


# Multi-output ops whose first output (through getitem 0) is what is used;
# family modules add theirs.
TUPLE_OUTPUTS = set()


def reason(node: torch.fx.Node, ep: ExportedProgram) -> Optional[str]:
    target = aten_op(node.target)
    if target == operator.getitem:
        source = node.args[0]
        if node.args[1] != 0 or aten_op(source.target) not in TUPLE_OUTPUTS:
            return "getitem of an unsupported multi-output op"
        return reason(source, ep)
    if is_constant_node(node, ep) or is_size_node(node):
        # Evaluated at lowering time, or not needed (sizes come from shapes).
        return None
    if target not in OPS:
        return NOT_LOWERED_BECAUSE.get(target, "no XNNPACK lowering for this operator")
    if not all(_has_bounded_shape(n) for n in [node, *node.all_input_nodes]):
        return "a dynamic size without an upper bound (give its Dim a max)"
    if any(_is_empty(n) for n in [node, *node.all_input_nodes]):
        return "empty tensors"
    if target in OWN_DTYPES:
        return OPS[target].check(node, ep)
    if target not in TUPLE_OUTPUTS and not is_float32_tensor(node):
        return "output is not a float32 tensor"
    for a in node.all_input_nodes:
        val = a.meta.get("val")
        if isinstance(val, torch.Tensor) and val.dtype != torch.float32:
            return f"input {a.name} is {val.dtype}, not float32"
        if not isinstance(val, torch.Tensor) and not is_size_node(a):
            return f"input {a.name} is not a tensor"
    return OPS[target].check(node, ep)
