"""XnnpackPartitioner: tags the parts of an Edge program the XNNPACK backend
can run. Nodes go to XNNPACK when backends/xnnpack/lowering.py can lower
them (the same check the lowering applies), grouped into convex partitions;
everything else stays on portable kernels. After `partition`, `report()`
says how many nodes each partition took, which quantized ops run in int8
and which in fp32 inside the delegate (lowering/quant.py), and which
operators stayed out, and why.

Dynamic shapes: nodes with symbolic sizes are delegated when the lowering
can make their sizes follow the delegate's inputs at run time. The size
computations feeding views (sym_size, arithmetic on sizes) go into the
partition of the view that reads them, one copy per reader, since a
delegate's inputs and outputs are tensors."""

import collections
import operator
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Type, Union

import torch
from torch.export import ExportedProgram
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

# Registers the XnnpackBackend preprocess for to_backend.
import executorch.backends.xnnpack.xnnpack_preprocess  # noqa: F401
from executorch.backends.xnnpack.lowering import (
    is_constant_node,
    is_float32_tensor,
    is_size_node,
    unsupported_reason,
)
from executorch.backends.xnnpack.lowering.core import aten, aten_op, same_size
from executorch.backends.xnnpack.lowering.quant import feeds_int8_linear, int8_pattern
from executorch.backends.xnnpack.partition.config import ALL_PARTITIONER_CONFIGS
from executorch.backends.xnnpack.partition.config.xnnpack_config import (
    ConfigPrecisionType,
    XNNPartitionerConfig,
    node_precision,
)
from executorch.exir.backend import (
    CompileSpec,
    DelegationSpec,
    PartitionResult,
    Partitioner,
)
from executorch.exir.backend.partitioner import DELEGATION_TAG

BACKEND_ID = "XnnpackBackend"

aten = torch.ops.aten

# Kept whole by the Core ATen decomposition so that each lowers as one
# XNNPACK node (decomposed, they become several nodes or ops on bool
# tensors that stay outside).
_KEEP_WHOLE = [
    aten.hardswish.default,
    aten.prelu.default,
    aten._safe_softmax.default,
    aten.gelu.default,
    aten.leaky_relu.default,
    aten.elu.default,
    aten.upsample_bilinear2d.vec,
]


_SHARED_WEIGHT = "a weight it needs is shared with nodes outside its partition"


class _Support(OperatorSupportBase):
    def __init__(
        self,
        ep: ExportedProgram,
        reasons: Dict[torch.fx.Node, str],
        configs: Sequence[XNNPartitionerConfig],
        precisions: Sequence[ConfigPrecisionType],
    ):
        self.ep = ep
        self.reasons = reasons
        self.configs = configs
        self.precisions = precisions

    def _config_reason(self, node: torch.fx.Node) -> Optional[str]:
        """Why the partitioner's configs leave `node` out, or None."""
        if node.target is operator.getitem:
            # An output of a multi-output operator goes where it goes.
            return self._config_reason(node.args[0])
        config = next((c for c in self.configs if c.matches(node)), None)
        if config is None:
            return "no config among XnnpackPartitioner(configs=...) covers it"
        precision = node_precision(node)
        if precision not in self.precisions:
            return f"{precision.name} is not in config_precisions"
        if precision not in config.supported_precision_types():
            return f"{type(config).__name__} does not support {precision.name}"
        return None

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        if node.op != "call_function":
            return False
        if node in self.reasons:
            return False
        if is_size_node(node):
            # Lowers to nothing; goes where its reader goes. The tensor it
            # measures becomes a delegate input, which must be float32.
            if any(_is_non_float_tensor(a) for a in node.all_input_nodes):
                self.reasons[node] = _SIZE_OF_NON_FLOAT
                return False
            return all(self.is_node_supported(submodules, u) for u in node.users)
        reason = unsupported_reason(node, self.ep)
        if reason is None and not is_constant_node(node, self.ep):
            reason = self._config_reason(node)
        if reason is not None:
            self.reasons[node] = reason
        return reason is None


_SIZE_OF_NON_FLOAT = (
    "measures a tensor that is not float32, which cannot be a delegate input"
)


def _is_non_float_tensor(node: torch.fx.Node) -> bool:
    return isinstance(node.meta.get("val"), torch.Tensor) and not is_float32_tensor(node)


def _stays_constant(node: torch.fx.Node, inside, ep: ExportedProgram) -> bool:
    """True when a constant input reaches the delegate as a constant: a
    weight moves into a partition only when all its users are inside, and
    a node computed from weights must be inside with its own inputs."""
    if node.op == "placeholder":
        return all(u in inside for u in node.users)
    return node in inside and all(
        _stays_constant(a, inside, ep) for a in node.all_input_nodes
    )


def _shared_weight_users(nodes, ep: ExportedProgram) -> List[torch.fx.Node]:
    """Nodes of a partition that read a weight which would reach the
    delegate as a runtime input (lowering needs conv and linear weights
    constant)."""
    inside = set(nodes)
    return [
        n
        for n in nodes
        if any(
            is_constant_node(a, ep) and not _stays_constant(a, inside, ep)
            for a in n.all_input_nodes
        )
    ]


_NOT_FLOAT_OUTPUT = "a result read outside its partition is not a float32 tensor"


def _non_float_outputs(nodes) -> List[torch.fx.Node]:
    """Nodes of a partition whose result would leave the delegate but is
    not float32, the only dtype of its outputs: constants (a bool mask
    from `full`) folded in with float consumers inside and others outside."""
    inside = set(nodes)
    return [
        n
        for n in nodes
        if not is_size_node(n)
        and not is_float32_tensor(n)
        and any(u not in inside for u in n.users)
    ]


_NOT_FLOAT_INPUT = "reads a result from outside its partition that is not float32"


def _non_float_inputs(nodes) -> List[torch.fx.Node]:
    """Nodes of a partition that would read a non-float32 delegate input
    (a dequantize step whose quantize step stays outside)."""
    inside = set(nodes)
    return [
        n
        for n in nodes
        if any(
            a not in inside and a.op != "placeholder" and not is_float32_tensor(a)
            for a in n.all_input_nodes
            if not is_size_node(a)
        )
    ]


def _quantized_patterns(nodes, ep: ExportedProgram, int8, fp32) -> None:
    """Counts the quantized ops of a partition: `int8[target]` run as int8
    XNNPACK ops, `fp32[(target, why)]` in fp32 between converts."""
    inside = set(nodes)
    for n in nodes:
        if feeds_int8_linear(n, ep, inside.__contains__):
            continue  # part of the linear's pattern
        pattern, why = int8_pattern(n, ep, inside.__contains__)
        if pattern is not None:
            int8[str(aten_op(n.target))] += 1
        elif why is not None:
            fp32[(str(aten_op(n.target)), why)] += 1


_SIZE_OUTSIDE = "reads a size computed outside its partition"
_SIZE_READ_OUTSIDE = "a size read outside its partition"


def _size_crossings(nodes) -> Dict[torch.fx.Node, str]:
    """Nodes of a partition that would pass a size (not a tensor) across
    its boundary, with the reason."""
    inside = set(nodes)
    crossings = {}
    for n in nodes:
        if is_size_node(n) and any(u not in inside for u in n.users):
            crossings[n] = _SIZE_READ_OUTSIDE
        elif any(is_size_node(a) and a not in inside for a in n.all_input_nodes):
            crossings[n] = _SIZE_OUTSIDE
    return crossings


def _give_each_reader_its_own_sizes(graph_module: torch.fx.GraphModule) -> None:
    """Copies size nodes that several nodes read, so that each copy can
    follow its reader into (or out of) a partition. Users come before
    their inputs, so the copies' own inputs are copied in turn."""
    graph = graph_module.graph
    copied = False
    for node in reversed(list(graph.nodes)):
        if not is_size_node(node):
            continue
        for user in list(node.users)[1:]:
            with graph.inserting_after(node):
                copy = graph.node_copy(node)
            user.replace_input_with(node, copy)
            copied = True
    if copied:
        graph_module.recompile()


def _measure_float_inputs(graph_module: torch.fx.GraphModule) -> None:
    """Points a size measured on a tensor that cannot be a delegate input
    (Hugging Face measures the int64 token ids for every view of the
    hidden states) at a float input of the node reading it that has a dim
    of that size, and moves it just before that node: the size can then
    follow its reader into a partition. Run after
    _give_each_reader_its_own_sizes (each size has one reader)."""
    graph = graph_module.graph
    moved = False
    for node in list(graph.nodes):
        if node.target != aten.sym_size.int or is_float32_tensor(node.args[0]):
            continue
        readers = list(node.users)
        if len(readers) != 1 or is_size_node(readers[0]):
            continue
        reader, size = readers[0], node.meta["val"]
        for tensor in reader.all_input_nodes:
            if tensor is node or not is_float32_tensor(tensor):
                continue
            dims = tensor.meta["val"].shape
            match = [d for d, other in enumerate(dims) if same_size(other, size)]
            if match:
                node.args = (tensor, match[0])
                reader.prepend(node)
                moved = True
                break
    if moved:
        graph_module.recompile()


class XnnpackPartitioner(Partitioner):
    """Delegates to XNNPACK every node it can lower.

    Args:
        configs: the per-operator configs (classes from
            `executorch.backends.xnnpack.partition.config`) whose operators
            may be delegated; by default `ALL_PARTITIONER_CONFIGS`.
        config_precisions: a `ConfigPrecisionType` or a list of them: only
            nodes of these precisions are delegated (default: all).
        per_op_mode: one delegate per operator instead of the largest
            partitions (each delegate call is smaller, at a little overhead
            per call).
        verbose: print `report()` after each `partition`.
        num_threads: when given, the "num_threads" compile spec of every
            partition (threads of its XNNPACK runtimes; by default the
            runtime's process-wide setting).
        kwargs: passed to every config's constructor.
    """

    def __init__(
        self,
        configs: Optional[List[Type[XNNPartitionerConfig]]] = None,
        config_precisions: Optional[
            Union[ConfigPrecisionType, List[ConfigPrecisionType]]
        ] = None,
        per_op_mode: bool = False,
        verbose: bool = False,
        num_threads: Optional[int] = None,
        **kwargs,
    ) -> None:
        specs = []
        if num_threads is not None:
            specs.append(
                CompileSpec("num_threads", int(num_threads).to_bytes(4, "little"))
            )
        self.delegation = DelegationSpec(BACKEND_ID, specs)
        self.configs = [
            config(**kwargs) for config in (configs or ALL_PARTITIONER_CONFIGS)
        ]
        if config_precisions is None:
            config_precisions = list(ConfigPrecisionType)
        elif isinstance(config_precisions, ConfigPrecisionType):
            config_precisions = [config_precisions]
        self.config_precisions = list(config_precisions)
        self.per_op_mode = per_op_mode
        self.verbose = verbose
        self._report = "XnnpackPartitioner: partition() has not run"

    def ops_to_not_decompose(
        self, ep: ExportedProgram
    ) -> Tuple[List[torch._ops.OpOverload], Optional[Callable]]:
        return list(_KEEP_WHOLE), None

    def partition(self, exported_program: ExportedProgram) -> PartitionResult:
        reasons: Dict[torch.fx.Node, str] = {}
        _give_each_reader_its_own_sizes(exported_program.graph_module)
        _measure_float_inputs(exported_program.graph_module)
        # Leaving out a node that reads a shared weight, or a size from
        # another partition, reshapes the partitions, so propose again until
        # none is left.
        while True:
            partitions = CapabilityBasedPartitioner(
                exported_program.graph_module,
                _Support(
                    exported_program, reasons, self.configs, self.config_precisions
                ),
                allows_single_node_partition=True,
            ).propose_partitions()
            excluded = {}
            for partition in partitions:
                nodes = list(partition.nodes)
                for n in _shared_weight_users(nodes, exported_program):
                    excluded[n] = _SHARED_WEIGHT
                for n in _non_float_outputs(nodes):
                    excluded[n] = _NOT_FLOAT_OUTPUT
                for n in _non_float_inputs(nodes):
                    excluded[n] = _NOT_FLOAT_INPUT
                excluded.update(_size_crossings(nodes))
            if not excluded:
                break
            reasons.update(excluded)
        groups = [list(p.nodes) for p in partitions]
        if self.per_op_mode:
            groups = [g for nodes in groups for g in _one_per_op(nodes, exported_program)]
        tags: Dict[str, DelegationSpec] = {}
        sizes = []
        int8, fp32 = collections.Counter(), collections.Counter()
        for nodes in groups:
            # Nodes computed only from weights are folded into their
            # consumers' partitions; alone they are not worth a delegate.
            if all(
                is_constant_node(n, exported_program) or is_size_node(n) for n in nodes
            ):
                continue
            # One operator's group (per_op_mode) cannot hold a quantize or
            # dequantize step alone: the delegate's inputs and outputs are
            # float32. Such steps stay on the quantized kernels.
            if _non_float_outputs(nodes) or _non_float_inputs(nodes):
                continue
            tag = f"xnnpack_{len(tags)}"
            for node in nodes:
                node.meta[DELEGATION_TAG] = tag
            tags[tag] = self.delegation
            sizes.append(len(nodes))
            _quantized_patterns(nodes, exported_program, int8, fp32)
        self._report = _format_report(sizes, reasons, int8, fp32)
        if self.verbose:
            print(self._report)
        return PartitionResult(exported_program, tags)

    def report(self) -> str:
        """What the last `partition` delegated and what it left out."""
        return self._report


def _one_per_op(nodes, ep: ExportedProgram) -> List[List[torch.fx.Node]]:
    """Splits a partition into one group per operator. Outputs of a
    multi-output operator (getitem) stay with it; weights, nodes computed
    from weights and size computations go with their first reader."""
    inside = set(nodes)
    order = [n for n in next(iter(nodes)).graph.nodes if n in inside]
    group_of: Dict[torch.fx.Node, int] = {}
    groups: List[List[torch.fx.Node]] = []
    for node in order:
        if node.target is operator.getitem and node.args[0] in group_of:
            group_of[node] = group_of[node.args[0]]
        elif not (is_constant_node(node, ep) or is_size_node(node)):
            group_of[node] = len(groups)
            groups.append([])
    for node in reversed(order):
        if node not in group_of:
            readers = [u for u in order if u in node.users and u in group_of]
            if readers:
                group_of[node] = group_of[readers[0]]
    for node in order:
        if node in group_of:
            groups[group_of[node]].append(node)
    return groups


def _format_report(
    sizes: Sequence[int],
    reasons: Dict[torch.fx.Node, str],
    int8: Dict[str, int],
    fp32: Dict[Tuple[str, str], int],
) -> str:
    lines = [
        f"XNNPACK: {sum(sizes)} nodes in {len(sizes)} delegated partition(s)"
        + (f" ({', '.join(str(s) for s in sizes)} nodes)" if sizes else "")
    ]
    if int8:
        lines.append("quantized ops run in int8 by XNNPACK:")
        lines.extend(f"  {target} x{count}" for target, count in sorted(int8.items()))
    if fp32:
        lines.append("quantized ops run in fp32 inside the delegate (between converts):")
        for (target, why), count in sorted(fp32.items()):
            lines.append(f"  {target} x{count}: {why}")
    left = collections.Counter((str(n.target), r) for n, r in reasons.items())
    if left:
        lines.append("left on portable kernels:")
        for (target, reason), count in sorted(left.items()):
            lines.append(f"  {target} x{count}: {reason}")
    return "\n".join(lines)
