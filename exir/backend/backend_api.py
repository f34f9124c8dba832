"""to_backend: lowers an Edge program, whole or by partitions, to backends."""

import copy
import operator
from typing import Dict, List, Union

import torch
from torch.export import ExportedProgram
from torch.export.exported_program import ModuleCallEntry, ModuleCallSignature
from torch.export.graph_signature import (
    ExportGraphSignature,
    InputKind,
    InputSpec,
    OutputKind,
    OutputSpec,
    TensorArgument,
)
from torch.utils import _pytree as pytree

from executorch.exir.backend.backend_details import find_backend
from executorch.exir.backend.compile_spec_schema import CompileSpec
from executorch.exir.backend.partitioner import (
    DELEGATION_TAG,
    DelegationSpec,
    Partitioner,
)
from executorch.exir.error import ExportError, ExportErrorType
from executorch.exir.graph_utils import (
    copy_program,
    rename_signature,
    stable_topological_sort,
)
from executorch.exir.lowered_backend_module import (
    LoweredBackendModule,
    executorch_call_delegate,
)
from executorch.exir.verification.verifier import EXIREdgeDialectVerifier

_CONSTANT_KINDS = (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)


class PartitionError(ExportError, ValueError):
    """A partition cannot be delegated as tagged."""

    error_type = ExportErrorType.VIOLATION_OF_SPEC


def _lower(ep: ExportedProgram, delegation: DelegationSpec) -> LoweredBackendModule:
    backend = find_backend(delegation.backend_id)
    result = backend.preprocess(ep, list(delegation.compile_specs))
    lowered = LoweredBackendModule(
        ep,
        delegation.backend_id,
        result.processed_bytes,
        delegation.compile_specs,
        result.data_store_output,
    )
    if result.debug_handle_map is not None:
        lowered.meta["debug_handle_map"] = dict(result.debug_handle_map)
    return lowered


class _Delegator:
    """Replaces tagged partitions of one program by delegate calls."""

    def __init__(self, ep: ExportedProgram):
        self.ep = ep
        self.gm, signature = copy_program(ep)
        self.input_specs = list(signature.input_specs)
        self.output_specs = list(signature.output_specs)
        self.state_dict = dict(ep.state_dict)
        self.constants = dict(ep.constants)
        self.count = 0

    def _spec_of(self, placeholder: torch.fx.Node) -> InputSpec:
        placeholders = [n for n in self.gm.graph.nodes if n.op == "placeholder"]
        return self.input_specs[placeholders.index(placeholder)]

    def _partition_nodes(self, tag: str) -> List[torch.fx.Node]:
        nodes = [
            n
            for n in self.gm.graph.nodes
            if n.op == "call_function" and n.meta.get(DELEGATION_TAG) == tag
        ]
        chosen = set(nodes)
        # Results of multi-output operators are read through getitem.
        for node in list(nodes):
            for user in node.users:
                if user.target is operator.getitem and user not in chosen:
                    chosen.add(user)
        return [n for n in self.gm.graph.nodes if n in chosen]

    def _check_convex(self, tag: str, nodes: List[torch.fx.Node]) -> None:
        inside = set(nodes)
        frontier = [u for n in nodes for u in n.users if u not in inside]
        seen = set()
        while frontier:
            node = frontier.pop()
            if node in seen:
                continue
            seen.add(node)
            if node in inside:
                raise PartitionError(
                    f"partition '{tag}' is not convex: a path leaves it and "
                    f"comes back at node '{node.name}'"
                )
            frontier.extend(node.users)

    def _owned_constants(self, inputs, inside) -> List[torch.fx.Node]:
        """Parameter/buffer/constant inputs used only inside the partition:
        their data moves into the delegate."""
        return [
            n
            for n in inputs
            if n.op == "placeholder"
            and self._spec_of(n).kind in _CONSTANT_KINDS
            and all(u in inside for u in n.users)
        ]

    def _sub_program(self, nodes, owned, user_inputs, outputs) -> ExportedProgram:
        graph = torch.fx.Graph()
        env: Dict[torch.fx.Node, torch.fx.Node] = {}
        input_specs = []
        for node in owned + user_inputs:
            placeholder = graph.placeholder(node.name)
            placeholder.meta = copy.copy(node.meta)
            env[node] = placeholder
        state_dict, constants = {}, {}
        for node in owned:
            spec = self._spec_of(node)
            input_specs.append(
                InputSpec(
                    spec.kind,
                    TensorArgument(env[node].name),
                    spec.target,
                    spec.persistent,
                )
            )
            if spec.target in self.state_dict:
                state_dict[spec.target] = self.state_dict[spec.target]
            else:
                constants[spec.target] = self.constants[spec.target]
        for node in user_inputs:
            input_specs.append(
                InputSpec(InputKind.USER_INPUT, TensorArgument(env[node].name), None)
            )
        for node in nodes:
            env[node] = graph.node_copy(node, lambda n: env[n])
        graph.output(tuple(env[o] for o in outputs))
        output_specs = [
            OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(env[o].name), None)
            for o in outputs
        ]
        signature = ModuleCallSignature(
            inputs=[],
            outputs=[],
            in_spec=pytree.tree_structure((tuple(user_inputs), {})),
            out_spec=pytree.tree_structure(tuple(outputs)),
        )
        return ExportedProgram(
            root=torch.fx.GraphModule(torch.nn.Module(), graph),
            graph=graph,
            graph_signature=ExportGraphSignature(input_specs, output_specs),
            state_dict=state_dict,
            range_constraints=copy.copy(self.ep.range_constraints),
            module_call_graph=[ModuleCallEntry("", signature)],
            constants=constants,
            verifiers=[EXIREdgeDialectVerifier],
        )

    def delegate(self, tag: str, delegation: DelegationSpec) -> None:
        nodes = self._partition_nodes(tag)
        if not nodes:
            return
        inside = set(nodes)
        self._check_convex(tag, nodes)
        inputs = list(
            dict.fromkeys(
                a for n in nodes for a in n.all_input_nodes if a not in inside
            )
        )
        owned = self._owned_constants(inputs, inside)
        user_inputs = [n for n in inputs if n not in owned]
        outputs = [n for n in nodes if any(u not in inside for u in n.users)]
        lowered = _lower(
            self._sub_program(nodes, owned, user_inputs, outputs), delegation
        )

        name = f"lowered_module_{self.count}"
        self.count += 1
        self.gm.add_submodule(name, lowered)
        graph = self.gm.graph
        with graph.inserting_before(nodes[0]):
            module = graph.get_attr(name)
            call = graph.call_function(executorch_call_delegate, (module, *user_inputs))
            call.meta["val"] = tuple(o.meta["val"] for o in outputs)
            call.meta["stack_trace"] = nodes[0].meta.get("stack_trace")
            for i, out in enumerate(outputs):
                item = graph.call_function(operator.getitem, (call, i))
                item.meta = copy.copy(out.meta)
                out.replace_all_uses_with(
                    item, delete_user_cb=lambda u: u not in inside
                )
        for node in reversed(nodes):
            graph.erase_node(node)
        for node in owned:
            spec = self._spec_of(node)
            self.input_specs.remove(spec)
            self.state_dict.pop(spec.target, None)
            self.constants.pop(spec.target, None)
            graph.erase_node(node)
        stable_topological_sort(graph)

    def program(self) -> ExportedProgram:
        self.gm.graph.lint()
        self.gm.recompile()
        signature = rename_signature(
            self.gm, ExportGraphSignature(self.input_specs, self.output_specs)
        )
        return self.ep._update(
            self.gm,
            signature,
            state_dict=self.state_dict,
            constants=self.constants,
            verifiers=[EXIREdgeDialectVerifier],
        )


def to_backend(
    first: Union[str, ExportedProgram],
    second: Union[ExportedProgram, Partitioner],
    compile_specs: List[CompileSpec] = None,
) -> Union[LoweredBackendModule, ExportedProgram]:
    """Lowers to backends, in one of two ways:

    - `to_backend(backend_id, edge_program, compile_specs)`: the whole
      program, returning a LoweredBackendModule;
    - `to_backend(edge_program, partitioner)`: the partitions the
      partitioner tags, returning the program with each partition replaced
      by a call of its delegate.
    """
    if isinstance(first, str):
        return _lower(second, DelegationSpec(first, list(compile_specs or [])))
    # The partitioner tags nodes (and may add some) in a copy, so the
    # caller's program stays as it was.
    gm, signature = copy_program(first)
    result = second.partition(first._update(gm, signature))
    delegator = _Delegator(result.tagged_exported_program)
    for tag, delegation in result.partition_tags.items():
        delegator.delegate(tag, delegation)
    return delegator.program()
