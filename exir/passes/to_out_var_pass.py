"""Out-variant conversion: every functional operator call becomes a call of
its out variant, writing into tensors allocated by `memory.alloc` nodes.

The runtime has only out-variant kernels; making the out tensors explicit
graph values lets memory planning place them. After this pass:

    %alloc = call_function[memory.alloc](((2, 3), torch.float32))
    %add = call_function[aten.add.out](%x, %y, out=%alloc)

An operator with several Tensor outputs gets one `alloc` per out argument
(users keep indexing the call's tuple with getitem); a `Tensor[]` out argument
(`split_with_sizes_copy.out`) gets one `alloc` of a list of specs, which the
getitem users of the call now index instead.
"""

import operator

import torch
from torch._ops import OpOverload

# Defines the out variants of the quantized_decomposed operators (the
# runtime's quantized kernel library) for programs quantized with PT2E.
import executorch.kernels.quantized  # noqa: F401
from executorch.exir import memory
from executorch.exir.dialects.edge._ops import EdgeOpOverload, edge_op, to_aten_op
from executorch.exir.error import ExportError, ExportErrorType
from executorch.exir.graph_utils import SYM_OPS
from executorch.exir.operator_schema import (
    bind_arguments,
    find_out_variant,
    out_arguments,
    split_call,
)
from executorch.exir.pass_base import PassBase, PassResult
from executorch.exir.source_info import source_line
from executorch.exir.tensor import upper_bound


class OutVariantError(ExportError, RuntimeError):
    """An operator of the program has no out variant."""

    error_type = ExportErrorType.NOT_SUPPORTED


def alloc_spec(val):
    """(shape, dtype) of the memory to allocate: symbolic sizes at their
    upper bounds, which is what planning reserves."""
    if isinstance(val, (list, tuple)):
        return [alloc_spec(v) for v in val]
    return (tuple(upper_bound(s)[0] for s in val.shape), val.dtype)


def _insert_alloc(graph: torch.fx.Graph, node: torch.fx.Node, val) -> torch.fx.Node:
    with graph.inserting_before(node):
        alloc = graph.call_function(memory.alloc, (alloc_spec(val),))
    alloc.meta["val"] = val
    return alloc


def convert_to_out_variant(graph: torch.fx.Graph, node: torch.fx.Node) -> None:
    """Makes functional call `node` a call of its out variant, writing into
    `alloc` nodes inserted before it."""
    op = to_aten_op(node.target)
    out_op = find_out_variant(op)
    if out_op is None:
        raise OutVariantError(
            f"Node '{node.name}': operator {op.name()} has no out variant, "
            "and the runtime runs only out-variant kernels.\n"
            f"Source: {source_line(node)}"
        )
    outs = out_arguments(out_op._schema)
    values = bind_arguments(op._schema, node.args, node.kwargs)
    # Arguments the out variant does not take (dtype of _to_dim_order_copy)
    # are implied by the out tensor's own type.
    kept = {a.name for a in out_op._schema.arguments}
    values = {k: v for k, v in values.items() if k in kept}
    val = node.meta["val"]
    if len(outs) == 1:
        alloc = _insert_alloc(graph, node, val)
        values[outs[0].name] = alloc
        if isinstance(outs[0].type, torch.ListType):
            # `Tensor[] out` returns nothing: users index the out list.
            for user in list(node.users):
                user.replace_input_with(node, alloc)
    else:
        for out_arg, out_val in zip(outs, val):
            values[out_arg.name] = _insert_alloc(graph, node, out_val)
    node.args, node.kwargs = split_call(out_op._schema, values)
    node.target = edge_op(out_op) if isinstance(node.target, EdgeOpOverload) else out_op


def _is_in_place(op: OpOverload) -> bool:
    """An operator that returns (an alias of) an input it writes, as
    `aten.copy_`: it stays as it is. One that writes into some inputs but
    returns new tensors (`llama::update_cache`, writing into its cache) has
    an out variant like any functional operator."""
    if not op._schema.is_mutable:
        return False
    returns = op._schema.returns
    return not returns or any(r.alias_info is not None for r in returns)


class ToOutVarPass(PassBase):
    """Replaces functional operator calls by their out variants.

    `ignore_to_out_var_failure` is upstream's option to leave operators
    without an out variant functional; the emitter needs out variants, so
    only False is accepted."""

    def __init__(self, ignore_to_out_var_failure: bool = False):
        super().__init__()
        if ignore_to_out_var_failure:
            raise NotImplementedError(
                "ToOutVarPass(ignore_to_out_var_failure=True): every operator "
                "call must become an out variant for the emitter"
            )

    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        graph = graph_module.graph
        modified = False
        for node in list(graph.nodes):
            if node.op != "call_function" or node.target is operator.getitem:
                continue
            op = to_aten_op(node.target)
            if not isinstance(op, OpOverload) or _is_in_place(op):
                continue
            if op in SYM_OPS:
                # Operators on sizes are prim ops, which have no out variant.
                continue
            convert_to_out_variant(graph, node)
            modified = True
        graph.lint()
        graph_module.recompile()
        return PassResult(graph_module, modified)
