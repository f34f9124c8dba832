"""Rewrites of a Core ATen graph into the Edge dialect, applied by `to_edge`.

`AtenToEdgePass` applies these rewrites, each of a graph module in place:

- `remove_asserts`: graph-level assertions (tensor metadata, symbolic size
  ranges) are dropped; export already checked them for the example inputs
  and the runtime checks inputs against the method's declared shapes.
- `replace_view_ops_with_copies`: views become their `*_copy` operators
  (`aten.view` -> `aten.view_copy`), since the runtime has no aliasing.
- `use_scalar_overloads`: `aten.mul.Tensor(x, 2.5)` becomes
  `aten.mul.Scalar(x, 2.5)` (a Python number cannot be a Tensor argument of
  an out-variant kernel); without a Scalar overload the number becomes a 0-d
  tensor.
- `replace_memory_format_ops`: `aten._to_copy` (and layout-changing
  `aten.clone`) become the `dim_order_ops` operators, which describe layouts
  by dim order.
- `propagate_fake_tensors`: recomputes `meta["val"]` after the rewrites (a
  `permute_copy` is contiguous where the `permute` it replaces was strided).
- `replace_aten_with_edge_ops`: call targets become `EdgeOpOverload`s.
"""

import contextlib
import numbers
import operator
from typing import Optional

import torch
from torch.utils import _pytree as pytree
from torch._guards import detect_fake_mode
from torch._ops import OpOverload

from executorch.exir.dialects.edge._ops import edge_op, to_aten_op
from executorch.exir.dim_order_utils import dim_order_of
from executorch.exir.graph_utils import SYM_OPS
from executorch.exir.pass_base import PassBase, PassResult

# Registers the dim_order_ops operators that replace_memory_format_ops uses.
from executorch.exir.passes import dim_order_ops_registry  # noqa: F401

def _call_function_nodes(gm: torch.fx.GraphModule):
    return [n for n in gm.graph.nodes if n.op == "call_function"]


_ASSERT_OPS = (
    torch.ops.aten._assert_tensor_metadata.default,
    torch.ops.aten._assert_scalar.default,
    torch.ops.aten._assert_async.msg,
    torch.ops.aten.sym_constrain_range.default,
    torch.ops.aten.sym_constrain_range_for_size.default,
)


def remove_asserts(gm: torch.fx.GraphModule) -> None:
    """Erases assertion nodes (which have no users)."""
    for node in _call_function_nodes(gm):
        if node.target in _ASSERT_OPS and not node.users:
            gm.graph.erase_node(node)


def _is_view(op: OpOverload) -> bool:
    schema = op._schema
    returns = schema.returns
    return (
        not schema.is_mutable
        and len(returns) == 1
        and returns[0].alias_info is not None
        and not returns[0].alias_info.is_write
    )


def _copy_variant(op: OpOverload) -> Optional[OpOverload]:
    """`aten.<view>_copy.<overload>` for a view operator, if it exists."""
    namespace = getattr(torch.ops, op.namespace)
    base = op._schema.name.split("::")[1]
    packet = getattr(namespace, f"{base}_copy", None)
    if packet is None:
        return None
    return getattr(packet, op._overloadname, None)


def replace_view_ops_with_copies(gm: torch.fx.GraphModule) -> None:
    """Replaces each view operator by its copying variant."""
    for node in _call_function_nodes(gm):
        op = node.target
        if isinstance(op, OpOverload) and op not in SYM_OPS and _is_view(op):
            copy = _copy_variant(op)
            if copy is not None:
                node.target = copy


_SYMBOLIC_SCALARS = (torch.SymInt, torch.SymFloat, torch.SymBool)


def _is_number(value) -> bool:
    """A Python number, or a graph value holding a (symbolic) number such as
    a dynamic int input."""
    if isinstance(value, torch.fx.Node):
        return isinstance(value.meta.get("val"), _SYMBOLIC_SCALARS)
    return isinstance(value, numbers.Number)


def _example_number(value):
    """A Python number of the same kind as `value` (for type promotion)."""
    if isinstance(value, torch.fx.Node):
        value = value.meta["val"]
    for symbolic, plain in zip(_SYMBOLIC_SCALARS, (int, float, bool)):
        if isinstance(value, symbolic):
            return plain(1)
    return value


def _scalar_overload(op: OpOverload, number_positions) -> Optional[OpOverload]:
    """The overload of `op`'s operator that takes a Scalar exactly where `op`
    takes the Tensors given as numbers, and is otherwise the same."""
    wanted = op._schema.arguments
    packet = getattr(getattr(torch.ops, op.namespace), op._schema.name.split("::")[1])
    for name in packet.overloads():
        candidate = getattr(packet, name)
        args = candidate._schema.arguments
        if candidate is op or len(args) != len(wanted) or candidate._schema.is_mutable:
            continue
        if all(
            (
                isinstance(b.type, torch.NumberType)
                if i in number_positions
                else (a.name == b.name and a.type == b.type)
            )
            for i, (a, b) in enumerate(zip(wanted, args))
        ):
            return candidate
    return None


def _wrap_numbers(gm: torch.fx.GraphModule, node: torch.fx.Node, positions) -> None:
    """Passes each number at `positions` as a 0-d tensor made by
    `aten.full`, of the dtype the number takes in type promotion with the
    call's tensors (so the result dtype is unchanged)."""
    tensors = [
        a.meta["val"]
        for a in node.all_input_nodes
        if isinstance(a.meta.get("val"), torch.Tensor)
    ]
    args = list(node.args)
    for i in sorted(positions):
        number = args[i]
        dtype = (
            torch.result_type(tensors[0], _example_number(number)) if tensors else None
        )
        with gm.graph.inserting_before(node):
            args[i] = gm.graph.call_function(
                torch.ops.aten.full.default, ([], number), {"dtype": dtype}
            )
        args[i].meta["stack_trace"] = node.meta.get("stack_trace")
    node.args = tuple(args)


def use_scalar_overloads(gm: torch.fx.GraphModule) -> None:
    """Moves Python numbers passed as Tensor arguments to Scalar overloads,
    or, where the operator has none (`sub.Tensor(1, x)`), to 0-d tensors."""
    for node in _call_function_nodes(gm):
        op = node.target
        if not isinstance(op, OpOverload):
            continue
        arguments = op._schema.arguments
        positions = {
            i
            for i, arg in enumerate(arguments)
            if isinstance(arg.type, torch.TensorType)
            and _is_number(
                node.args[i] if i < len(node.args) else node.kwargs.get(arg.name)
            )
        }
        if not positions:
            continue
        overload = _scalar_overload(op, positions)
        if overload is not None:
            node.target = overload
        elif all(i < len(node.args) for i in positions):
            _wrap_numbers(gm, node, positions)


_KEEPS_LAYOUT = (None, torch.preserve_format, torch.contiguous_format)


def _changes_layout(node: torch.fx.Node) -> bool:
    """A clone whose result is laid out unlike its input (whatever its
    memory_format says: a contiguous clone of a channels-last tensor); by its
    memory_format when the input's layout is unknown."""
    source = getattr(node.args[0], "meta", {}).get("val")
    if not isinstance(source, torch.Tensor):
        return node.kwargs.get("memory_format") not in _KEEPS_LAYOUT
    return dim_order_of(source) != dim_order_of(node.meta["val"])


def replace_memory_format_ops(gm: torch.fx.GraphModule) -> None:
    """`aten._to_copy` -> `dim_order_ops._to_dim_order_copy`, and an
    `aten.clone` into another layout (channels last) ->
    `dim_order_ops._clone_dim_order`, with the dim order of the result in
    place of its memory format.

    A clone that keeps its input's layout stays `aten.clone`: `clone.out`
    handles those in every runtime (upstream's requires input and out in one
    dim order), while `_clone_dim_order.out` is a newer kernel.
    """
    for node in _call_function_nodes(gm):
        if node.target == torch.ops.aten._to_copy.default:
            kwargs = {"dtype": node.kwargs.get("dtype")}
            target = torch.ops.dim_order_ops._to_dim_order_copy.default
        elif node.target == torch.ops.aten.clone.default and _changes_layout(node):
            kwargs = {}
            target = torch.ops.dim_order_ops._clone_dim_order.default
        else:
            continue
        if node.kwargs.get("non_blocking", False):
            kwargs["non_blocking"] = True
        kwargs["dim_order"] = dim_order_of(node.meta["val"])
        node.target = target
        node.args = node.args[:1]
        node.kwargs = kwargs


def propagate_fake_tensors(gm: torch.fx.GraphModule) -> None:
    """Recomputes each operator node's `meta["val"]` from its inputs'."""
    fake_mode = detect_fake_mode(
        [n.meta["val"] for n in gm.graph.nodes if "val" in n.meta]
    )
    if fake_mode is None:
        return
    with fake_mode:
        for node in _call_function_nodes(gm):
            op = to_aten_op(node.target)
            if not isinstance(op, OpOverload) and op is not operator.getitem:
                continue
            if op in SYM_OPS:
                continue
            if op is not operator.getitem and torch.Tag.view_copy in op.tags:
                # A copy of a view has the view's shapes, laid out
                # contiguously. (Running some of their meta kernels on
                # symbolic sizes, split_with_sizes_copy's, would specialize
                # the sizes to the example before failing.)
                node.meta["val"] = pytree.tree_map_only(
                    torch.Tensor,
                    lambda v: torch.empty(v.shape, dtype=v.dtype, device=v.device),
                    node.meta["val"],
                )
                continue
            args, kwargs = torch.fx.node.map_arg(
                (node.args, node.kwargs), lambda n: n.meta["val"]
            )
            with _no_guards(fake_mode):
                val = op(*args, **kwargs)
            if not _loses_symbolic_sizes(node.meta.get("val"), val):
                node.meta["val"] = val


def _no_guards(fake_mode):
    """Some meta kernels read symbolic sizes as ints (upsample's): with
    guards on, that would specialize the whole program to the example."""
    shape_env = fake_mode.shape_env
    return shape_env.suppress_guards() if shape_env else contextlib.nullcontext()


def _loses_symbolic_sizes(old, new) -> bool:
    """Whether `new` has a static size where the export's `old` value had a
    symbolic one (a meta kernel that read sizes as ints): then the export's
    value is the right one."""
    pairs = zip(pytree.tree_leaves(old), pytree.tree_leaves(new))
    return any(
        isinstance(a, torch.Tensor)
        and isinstance(b, torch.Tensor)
        and any(
            isinstance(x, torch.SymInt) and not isinstance(y, torch.SymInt)
            for x, y in zip(a.shape, b.shape)
        )
        for a, b in pairs
    )


def replace_aten_with_edge_ops(gm: torch.fx.GraphModule) -> None:
    """Wraps every operator target (except symbolic-size ops) as an Edge op."""
    for node in _call_function_nodes(gm):
        if isinstance(node.target, OpOverload) and node.target not in SYM_OPS:
            node.target = edge_op(node.target)


class AtenToEdgePass(PassBase):
    """Applies all rewrites of this module to a Core ATen graph, in place;
    `skip_dim_order` keeps memory formats (EdgeCompileConfig._skip_dim_order)."""

    def __init__(self, skip_dim_order: bool = False):
        super().__init__()
        self.skip_dim_order = skip_dim_order

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        remove_asserts(gm)
        replace_view_ops_with_copies(gm)
        use_scalar_overloads(gm)
        # Layouts of the copies replacing views decide the dim orders below.
        propagate_fake_tensors(gm)
        if not self.skip_dim_order:
            replace_memory_format_ops(gm)
            propagate_fake_tensors(gm)
        replace_aten_with_edge_ops(gm)
        gm.recompile()
        return PassResult(gm, True)
