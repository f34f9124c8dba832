"""The constant inputs of an exported program, for passes that read
constants and add new ones (parameters, buffers and lifted constants alike)."""

from typing import Optional

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import (
    ExportGraphSignature,
    InputKind,
    InputSpec,
    TensorArgument,
)

from executorch.exir.passes.remove_unused_constants import remove_unused_constants

CONSTANT_KINDS = (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)


class ProgramConstants:
    """Reads the constant inputs of an exported program and adds new ones
    (to `specs` and `tensors`, new lists the program does not share)."""

    def __init__(self, ep: ExportedProgram):
        self.tensors = dict(ep.constants)
        self.specs = list(ep.graph_signature.input_specs)
        self.by_name = {}
        for spec in self.specs:
            if spec.kind in CONSTANT_KINDS:
                source = ep.state_dict if spec.target in ep.state_dict else ep.constants
                if spec.target in source:
                    self.by_name[spec.arg.name] = source[spec.target]
        self.fake_mode = next(
            n.meta["val"].fake_mode
            for n in ep.graph.nodes
            if n.op == "placeholder" and isinstance(n.meta.get("val"), torch.Tensor)
        )

    def value(self, arg) -> Optional[torch.Tensor]:
        if isinstance(arg, torch.fx.Node) and arg.op == "placeholder":
            return self.by_name.get(arg.name)
        return None

    def add(self, graph: torch.fx.Graph, name: str, tensor: torch.Tensor) -> torch.fx.Node:
        """A new constant placeholder, placed after the existing constants
        (before the user inputs, as the signature orders them)."""
        placeholders = [n for n in graph.nodes if n.op == "placeholder"]
        index = next(
            (i for i, s in enumerate(self.specs) if s.kind == InputKind.USER_INPUT),
            len(self.specs),
        )
        taken = {n.name for n in graph.nodes}
        unique, k = name, 0
        while unique in taken or unique in self.tensors:
            k += 1
            unique = f"{name}_{k}"
        if index < len(placeholders):
            with graph.inserting_before(placeholders[index]):
                node = graph.placeholder(unique)
        else:
            with graph.inserting_after(placeholders[-1]):
                node = graph.placeholder(unique)
        node.meta["val"] = self.fake_mode.from_tensor(tensor, static_shapes=True)
        self.specs.insert(
            index,
            InputSpec(
                kind=InputKind.CONSTANT_TENSOR,
                arg=TensorArgument(name=unique),
                target=unique,
            ),
        )
        self.tensors[unique] = tensor
        self.by_name[unique] = tensor
        return node

    def updated_program(self, ep: ExportedProgram, gm: torch.fx.GraphModule) -> ExportedProgram:
        """`ep` with `gm` (the graph a pass rewrote) and these constants; the
        constants nothing reads any more (those the pass replaced) are dropped."""
        gm.recompile()
        signature = ExportGraphSignature(
            input_specs=self.specs, output_specs=list(ep.graph_signature.output_specs)
        )
        return remove_unused_constants(ep._update(gm, signature, constants=self.tensors))
