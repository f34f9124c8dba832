"""The demo partitioners of upstream's tutorials, delegating to
BackendWithCompilerDemo: AddMulPartitionerDemo (add and mm nodes) and
AddAttributePartitionerDemo (add nodes and the constants they read)."""

from typing import Dict, final

import torch
from torch.export import ExportedProgram
from torch.fx.passes.operator_support import OperatorSupportBase, any_chain

from executorch.exir.backend.canonical_partitioners.pattern_op_partitioner import (
    generate_pattern_op_partitions,
)
from executorch.exir.backend.compile_spec_schema import CompileSpec
from executorch.exir.backend.partitioner import (
    DELEGATION_TAG,
    DelegationSpec,
    PartitionResult,
    Partitioner,
)
from executorch.exir.backend.test.backend_with_compiler_demo import (
    BackendWithCompilerDemo,
)
from executorch.exir.dialects._ops import ops as exir_ops
from executorch.exir.graph_utils import control_flow_graphs


class _TargetSupport(OperatorSupportBase):
    def __init__(self, *targets):
        self.targets = targets

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        return node.op == "call_function" and node.target in self.targets


class AddOperatorSupport(_TargetSupport):
    def __init__(self):
        super().__init__(exir_ops.edge.aten.add.Tensor)


class MatmulOperatorSupport(_TargetSupport):
    def __init__(self):
        super().__init__(exir_ops.edge.aten.mm.default)


def _tag_partitions(graph_module, op_support, delegation_spec, tags) -> None:
    """Tags the partitions of `graph_module` and of its control-flow graphs;
    records each tag's delegation in `tags`."""
    for gm in [graph_module, *control_flow_graphs(graph_module)]:
        for partition in generate_pattern_op_partitions(gm, op_support=op_support):
            tag = f"tag{len(tags)}"
            for node in partition.nodes:
                node.meta[DELEGATION_TAG] = tag
            tags[tag] = delegation_spec


@final
class AddMulPartitionerDemo(Partitioner):
    """Delegates every connected group of add and mm nodes."""

    def __init__(self) -> None:
        self.op_support = any_chain(AddOperatorSupport(), MatmulOperatorSupport())
        self.delegation_spec = DelegationSpec(
            BackendWithCompilerDemo.__name__,
            [CompileSpec("max_value", bytes([4]))],
        )

    def partition(self, exported_program: ExportedProgram) -> PartitionResult:
        tags: Dict[str, DelegationSpec] = {}
        _tag_partitions(
            exported_program.graph_module, self.op_support, self.delegation_spec, tags
        )
        return PartitionResult(
            tagged_exported_program=exported_program, partition_tags=tags
        )


@final
class AddAttributePartitionerDemo(Partitioner):
    """Delegates add nodes, and the constants they read with them."""

    def __init__(self) -> None:
        self.op_support = AddOperatorSupport()
        self.delegation_spec = DelegationSpec(BackendWithCompilerDemo.__name__, [])

    def partition(self, edge_exported_program: ExportedProgram) -> PartitionResult:
        tags: Dict[str, DelegationSpec] = {}
        graph_module = edge_exported_program.graph_module
        _tag_partitions(graph_module, self.op_support, self.delegation_spec, tags)
        signature = edge_exported_program.graph_signature
        constants = {
            **signature.inputs_to_parameters,
            **signature.inputs_to_buffers,
            **signature.inputs_to_lifted_tensor_constants,
        }
        for node in graph_module.graph.nodes:
            tag = node.meta.get(DELEGATION_TAG)
            if tag is None:
                continue
            for arg in node.all_input_nodes:
                if arg.op == "get_attr" or arg.name in constants:
                    arg.meta[DELEGATION_TAG] = tag
        return PartitionResult(
            tagged_exported_program=edge_exported_program, partition_tags=tags
        )
