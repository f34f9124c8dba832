"""Tensor spec propagation: puts a `TensorSpec` in `node.meta["spec"]` for
every tensor value of a graph.

Values that share memory share one spec object: an out-variant call's result
is the spec of its `alloc`ed out argument, and a getitem yields the spec of
the indexed element. Memory planning and emission work on these objects, so
sharing is what makes a call write where its users read.
"""

import operator
from typing import Optional

import torch
from torch.export.graph_signature import ExportGraphSignature, InputKind

from executorch.exir import control_flow, memory
from executorch.exir.dialects.edge._ops import to_aten_op
from executorch.exir.operator_schema import bind_arguments, out_arguments
from executorch.exir.pass_base import PassBase, PassResult
from executorch.exir.tensor import TensorSpec

_CONSTANT_INPUTS = (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)


def _spec_of_val(val, const: bool = False):
    if isinstance(val, torch.Tensor):
        return TensorSpec.from_tensor(val, const=const)
    if isinstance(val, (list, tuple)):
        return type(val)(_spec_of_val(v, const) for v in val)
    return None


def _out_specs(node: torch.fx.Node):
    """Specs of an out-variant call's out arguments, or None for other calls."""
    op = to_aten_op(node.target)
    schema = getattr(op, "_schema", None)
    outs = out_arguments(schema) if schema is not None else []
    if not outs:
        return None
    bound = bind_arguments(schema, node.args, node.kwargs)
    specs = [bound[a.name].meta["spec"] for a in outs]
    return specs[0] if len(specs) == 1 else tuple(specs)


class SpecPropPass(PassBase):
    """Attaches TensorSpecs to placeholders, allocations and operator calls.

    With a graph signature, placeholders of parameters, buffers and lifted
    constants get constant specs (never planned; their data goes to the
    constant segment), except buffers that an in-place operator writes
    (after `insert_write_back_for_buffers`), which are marked mutable and
    planned.
    """

    def __init__(self, graph_signature: Optional[ExportGraphSignature] = None):
        super().__init__()
        self.graph_signature = graph_signature

    def _constant_names(self, graph_module: torch.fx.GraphModule):
        """(names of constant placeholders, names of mutated ones): a
        placeholder is mutated when an in-place operator writes to it."""
        if self.graph_signature is None:
            return set(), set()
        constants = {
            spec.arg.name
            for spec in self.graph_signature.input_specs
            if spec.kind in _CONSTANT_INPUTS
        }
        mutable = set()
        for node in graph_module.graph.nodes:
            schema = getattr(to_aten_op(node.target), "_schema", None)
            if node.op != "call_function" or schema is None or not schema.is_mutable:
                continue
            bound = bind_arguments(schema, node.args, node.kwargs)
            for arg in schema.arguments:
                written = arg.alias_info is not None and arg.alias_info.is_write
                if written and not arg.is_out:
                    mutable.add(bound[arg.name].name)
        return constants - mutable, mutable

    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        constants, mutable = self._constant_names(graph_module)
        for node in graph_module.graph.nodes:
            if node.op == "placeholder":
                spec = _spec_of_val(node.meta.get("val"), node.name in constants)
                if isinstance(spec, TensorSpec):
                    spec.mutable = node.name in mutable
            elif node.op != "call_function":
                continue
            elif node.target is memory.alloc:
                spec = _spec_of_val(node.meta["val"])
                if isinstance(spec, tuple):
                    spec = list(spec)
            elif node.target is memory.view:
                spec = _spec_of_val(node.meta["val"])
                base = node.args[0].meta["spec"]
                spec.base = base.base or base
                offset = node.args[2] if len(node.args) > 2 else 0
                spec.view_offset = base.view_offset + offset * spec.dtype.itemsize
            elif node.target is operator.getitem:
                source, index = node.args
                spec = source.meta["spec"][index]
            elif node.target is control_flow.copy_index:
                # A map's stacked result grows one row per iteration (the
                # runtime resizes it), so its shape is dynamic.
                node.args[0].meta["spec"].is_dynamic = True
                spec = None
            else:
                spec = _out_specs(node)
                if spec is None:
                    spec = _spec_of_val(node.meta.get("val"))
            node.meta["spec"] = spec
        return PassResult(graph_module, True)
