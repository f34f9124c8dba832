"""Control-flow lowering: `torch.cond`, `map` and `torch.while_loop` become
straight-line code with jumps, in the method's own graph.

The runtime runs one chain of instructions, so each branch or loop body is
inlined at the place its operator was, bracketed by the nodes of
`executorch.exir.control_flow`:

    cond(pred, t, f, ops)          map(body, xs, args)         while_loop(c, b, init)
      results = alloc(...)           results = alloc(...)        carried = alloc(...)
      jump_false(pred, else)         n = sym_size(xs, 0)         clone.out(init, carried)
      <t>  -> results                i = int_variable(0)       top:
      jump(end)                    top:                          <c> -> pred
    else:                            jump_false(i < n, end)      jump_false(pred, end)
      <f>  -> results                <body>(select(xs, i))       <b>  -> carried
    end:                             copy_index(results, o, i)   jump(top)
                                     increment(i); jump(top)   end:
                                   end:

A branch writes its result into the shared result tensor directly when the
kernel producing it can take that tensor as its out argument, and through a
`clone.out` copy otherwise. Loop bodies always copy into the carried tensors,
after the whole body ran, since the body still reads them.

Run after ToOutVarPass has converted the graph and every branch and body
graph, and before spec propagation: the inlined nodes are then planned like
any other (memory planning keeps values used in a loop alive through it).
"""

import itertools
import operator
from typing import List

import torch
from torch.utils import _pytree as pytree

from executorch.exir import control_flow, memory
from executorch.exir.dialects._ops import ops as exir_ops
from executorch.exir.error import ExportError, ExportErrorType
from executorch.exir.pass_base import PassBase, PassResult
from executorch.exir.passes.to_out_var_pass import alloc_spec, convert_to_out_variant
from executorch.exir.source_info import source_line

_COND = torch.ops.higher_order.cond
_MAP = torch.ops.higher_order.map_impl
_WHILE = torch.ops.higher_order.while_loop


class ControlFlowError(ExportError, RuntimeError):
    """A control-flow operator uses something the lowering cannot express."""

    error_type = ExportErrorType.NOT_SUPPORTED


def _tensor_val(node: torch.fx.Node, what: str, cf_node: torch.fx.Node):
    val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    if not isinstance(val, torch.Tensor):
        raise ControlFlowError(
            f"Node '{cf_node.name}' ({cf_node.target.__name__}): {what} must be "
            f"a tensor, got {val if val is not None else node!r}.\n"
            f"Source: {source_line(cf_node)}"
        )
    return val


class _Lowering:
    """Lowers the control-flow operators of one graph, in place."""

    def __init__(self, gm: torch.fx.GraphModule, labels: itertools.count):
        self.gm = gm
        self.graph = gm.graph
        self.labels = labels

    def _call(self, target, *args, **kwargs) -> torch.fx.Node:
        node = self.graph.call_function(target, args, kwargs)
        node.meta["val"] = None
        return node

    def _label_names(self, *kinds: str) -> List[str]:
        number = next(self.labels)
        return [f"{kind}_{number}" for kind in kinds]

    def _alloc(self, val) -> torch.fx.Node:
        node = self._call(memory.alloc, alloc_spec(val))
        node.meta["val"] = val
        return node

    def _copy(self, source: torch.fx.Node, destination: torch.fx.Node) -> None:
        """destination = source, resized to source's shape."""
        copy = self._call(exir_ops.edge.aten.clone.out, source, out=destination)
        copy.meta["val"] = destination.meta["val"]

    def _out_variant(self, target, args, val) -> torch.fx.Node:
        """A call of functional `target` converted to its out variant."""
        node = self.graph.call_function(target, args)
        node.meta["val"] = val
        convert_to_out_variant(self.graph, node)
        return node

    def _inline(self, node: torch.fx.Node, body: torch.fx.GraphModule, inputs):
        """Copies `body`'s nodes to the insertion point, its placeholders
        bound to `inputs`; returns the nodes it returns, flattened."""
        placeholders = [n for n in body.graph.nodes if n.op == "placeholder"]
        if len(placeholders) != len(inputs):
            raise ControlFlowError(
                f"Node '{node.name}': its graph takes {len(placeholders)} "
                f"inputs, given {len(inputs)}.\nSource: {source_line(node)}"
            )
        env = dict(zip(placeholders, inputs))
        for sub_node in body.graph.nodes:
            if sub_node.op == "output":
                return [
                    env.get(out, out) for out in pytree.tree_leaves(sub_node.args[0])
                ]
            if sub_node.op != "placeholder":
                env[sub_node] = self.graph.node_copy(sub_node, lambda n: env[n])
        raise ControlFlowError(f"Node '{node.name}': its graph has no output")

    def _write_in_place(self, out, result, outputs, operands) -> bool:
        """Makes the kernel that computes branch output `out` write into
        `result` instead of a tensor of its own, if it can: `out` is
        computed in the branch (not an operand) and returned once."""
        if (
            not isinstance(out, torch.fx.Node)
            or out in operands
            or outputs.count(out) != 1
        ):
            return False
        own = out.kwargs.get("out")
        if (
            not isinstance(own, torch.fx.Node)
            or own.target is not memory.alloc
            or len(own.users) != 1
            or own.args[0] != result.args[0]
        ):
            return False
        out.replace_input_with(own, result)
        self.graph.erase_node(own)
        return True

    def _branch(self, node, branch, operands, results) -> None:
        outputs = self._inline(node, branch, operands)
        for out, result in zip(outputs, results):
            if not self._write_in_place(out, result, outputs, operands):
                _tensor_val(out, "each branch output", node)
                self._copy(out, result)

    def _lower_cond(self, node: torch.fx.Node) -> List[torch.fx.Node]:
        pred, true_graph, false_graph, operands = node.args
        results = [self._alloc(val) for val in node.meta["val"]]
        otherwise, end = self._label_names("cond_else", "cond_end")
        self._call(control_flow.jump_false, pred, otherwise)
        self._branch(node, getattr(self.gm, true_graph.target), operands, results)
        self._call(control_flow.jump, end)
        self._call(control_flow.label, otherwise)
        self._branch(node, getattr(self.gm, false_graph.target), operands, results)
        self._call(control_flow.label, end)
        return results

    def _lower_map(self, node: torch.fx.Node) -> List[torch.fx.Node]:
        body_graph, xs, extra = node.args
        body = getattr(self.gm, body_graph.target)
        results = [self._alloc(val) for val in node.meta["val"]]
        slice_vals = [n.meta["val"] for n in body.graph.nodes if n.op == "placeholder"][
            : len(xs)
        ]
        count = self._call(torch.ops.aten.sym_size.int, xs[0], 0)
        count.meta["val"] = _tensor_val(xs[0], "mapped input", node).shape[0]
        index = self._call(control_flow.int_variable, 0)
        top, end = self._label_names("map_top", "map_end")
        self._call(control_flow.label, top)
        more = self._call(operator.lt, index, count)
        self._call(control_flow.jump_false, more, end)
        slices = [
            self._out_variant(exir_ops.edge.aten.select_copy.int, (x, 0, index), val)
            for x, val in zip(xs, slice_vals)
        ]
        outputs = self._inline(node, body, slices + list(extra))
        for out, result in zip(outputs, results):
            _tensor_val(out, "each map output", node)
            self._call(control_flow.copy_index, result, out, index)
        self._call(control_flow.increment, index)
        self._call(control_flow.jump, top)
        self._call(control_flow.label, end)
        return results

    def _lower_while(self, node: torch.fx.Node) -> List[torch.fx.Node]:
        cond_graph, body_graph, initial, extra = node.args
        carried = []
        for init, val in zip(initial, node.meta["val"]):
            _tensor_val(init, "each carried value", node)
            carried.append(self._alloc(val))
            self._copy(init, carried[-1])
        top, end = self._label_names("while_top", "while_end")
        self._call(control_flow.label, top)
        (pred,) = self._inline(
            node, getattr(self.gm, cond_graph.target), carried + list(extra)
        )
        self._call(control_flow.jump_false, pred, end)
        outputs = self._inline(
            node, getattr(self.gm, body_graph.target), carried + list(extra)
        )
        staged = []
        for out, var in zip(outputs, carried):
            _tensor_val(out, "each body output", node)
            if out in carried and out is not var:
                # Another carried value: copy it aside first, so that no
                # copy below reads a value already overwritten.
                out = self._out_variant(
                    exir_ops.edge.aten.clone.default, (out,), out.meta["val"]
                )
            staged.append(out)
        for out, var in zip(staged, carried):
            if out is not var:
                self._copy(out, var)
        self._call(control_flow.jump, top)
        self._call(control_flow.label, end)
        return carried

    def run(self) -> bool:
        lowerings = {_COND: self._lower_cond, _MAP: self._lower_map}
        lowerings[_WHILE] = self._lower_while
        modified = False
        for node in list(self.graph.nodes):
            if node.op != "call_function" or node.target not in lowerings:
                continue
            for arg in node.args:
                if isinstance(arg, torch.fx.Node) and arg.op == "get_attr":
                    _Lowering(getattr(self.gm, arg.target), self.labels).run()
            with self.graph.inserting_before(node):
                results = lowerings[node.target](node)
            for user in list(node.users):
                # Users index the operator's tuple of results.
                user.replace_all_uses_with(results[user.args[1]])
                self.graph.erase_node(user)
            subgraphs = [a for a in node.args if isinstance(a, torch.fx.Node)]
            self.graph.erase_node(node)
            for arg in subgraphs:
                if arg.op == "get_attr" and not arg.users:
                    self.graph.erase_node(arg)
                    delattr(self.gm, arg.target)
            modified = True
        return modified


class LowerControlFlowPass(PassBase):
    """Inlines `cond`, `map` and `while_loop` (nested ones too) as jumps."""

    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        modified = _Lowering(graph_module, itertools.count()).run()
        graph_module.graph.lint()
        graph_module.recompile()
        return PassResult(graph_module, modified)
