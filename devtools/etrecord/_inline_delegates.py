"""An Edge program with its delegates put back: each delegate call is
replaced by the Edge nodes that were lowered into it (with their metadata
and debug handles), and the parameters the delegate owned become program
inputs again. The ETRecord keeps this form so that events of delegated
operators map to nodes with source lines, and the program runs eagerly
without the backend."""

import operator

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import ExportGraphSignature, InputKind, InputSpec

from executorch.exir.graph_utils import copy_program, rename_signature
from executorch.exir.lowered_backend_module import executorch_call_delegate
from executorch.exir.verification.verifier import EXIREdgeDialectVerifier


def inline_delegates(ep: ExportedProgram) -> ExportedProgram:
    graph = ep.graph
    if not any(n.target is executorch_call_delegate for n in graph.nodes):
        return ep
    gm, signature = copy_program(ep)
    inliner = _Inliner(gm, signature, ep)
    for call in [n for n in gm.graph.nodes if n.target is executorch_call_delegate]:
        inliner.inline(call)
    gm.graph.lint()
    gm.recompile()
    return ep._update(
        gm,
        rename_signature(
            gm, ExportGraphSignature(inliner.input_specs, signature.output_specs)
        ),
        state_dict=inliner.state_dict,
        constants=inliner.constants,
        verifiers=[EXIREdgeDialectVerifier],
    )


class _Inliner:
    def __init__(self, gm, signature, ep):
        self.gm = gm
        self.graph = gm.graph
        self.input_specs = list(signature.input_specs)
        self.state_dict = dict(ep.state_dict)
        self.constants = dict(ep.constants)

    def _add_constant_input(self, placeholder, spec: InputSpec, sub: ExportedProgram):
        """A new input of the outer program for a constant the delegate
        owned; constants go before the user inputs, as torch.export orders
        them."""
        placeholders = [n for n in self.graph.nodes if n.op == "placeholder"]
        first_user = next(
            (
                i
                for i, s in enumerate(self.input_specs)
                if s.kind == InputKind.USER_INPUT
            ),
            len(self.input_specs),
        )
        anchor = (
            placeholders[first_user]
            if first_user < len(placeholders)
            else next(n for n in self.graph.nodes if n.op != "placeholder")
        )
        with self.graph.inserting_before(anchor):
            node = self.graph.placeholder(placeholder.name)
        node.meta = dict(placeholder.meta)
        self.input_specs.insert(
            first_user,
            InputSpec(
                spec.kind, type(spec.arg)(node.name), spec.target, spec.persistent
            ),
        )
        if spec.target in sub.state_dict:
            self.state_dict[spec.target] = sub.state_dict[spec.target]
        else:
            self.constants[spec.target] = sub.constants[spec.target]
        return node

    def inline(self, call: torch.fx.Node) -> None:
        module_node = call.args[0]
        sub = getattr(self.gm, module_node.target).original_module
        user_args = iter(call.args[1:])
        env = {}
        placeholders = [n for n in sub.graph.nodes if n.op == "placeholder"]
        for spec, placeholder in zip(sub.graph_signature.input_specs, placeholders):
            if spec.kind == InputKind.USER_INPUT:
                env[placeholder] = next(user_args)
            else:
                env[placeholder] = self._add_constant_input(placeholder, spec, sub)
        outputs = None
        with self.graph.inserting_before(call):
            for node in sub.graph.nodes:
                if node.op == "call_function":
                    env[node] = self.graph.node_copy(node, lambda n: env[n])
                elif node.op == "output":
                    outputs = [env[o] for o in node.args[0]]
        if not isinstance(call.meta.get("val"), (tuple, list)):
            # A whole one-output program's delegate yields the tensor itself.
            call.replace_all_uses_with(outputs[0])
        for user in list(call.users):
            assert user.target is operator.getitem
            user.replace_all_uses_with(outputs[user.args[1]])
            self.graph.erase_node(user)
        self.graph.erase_node(call)
        if not module_node.users:
            self.graph.erase_node(module_node)
            delattr(self.gm, module_node.target)
