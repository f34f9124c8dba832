"""Edge dialect ExportedPrograms to bytes and back, in upstream ExecuTorch's
layout: torch.export's JSON serialization in which an Edge operator's target
reads "executorch.exir.dialects.edge.ops.<namespace>.<op>.<overload>" and
each node's debug handle is kept in its metadata ("debug_handle"). The
ETRecord stores programs this way.

torch.export serializes only ATen operators, so Edge targets are unwrapped
before torch serializes the program and the JSON is then rewritten; loading
does the reverse.
"""

import json
from typing import Dict, Iterator, Tuple

import torch
from torch._export.serde import serialize as torch_serde
from torch._export.serde.serialize import SerializedArtifact
from torch._export.verifier import Verifier
from torch.export import ExportedProgram

from executorch.exir.dialects.edge._ops import EdgeOpOverload, edge_op
from executorch.exir.graph_utils import copy_program
from executorch.exir.verification.verifier import EXIREdgeDialectVerifier

_EDGE_PREFIX = "executorch.exir.dialects.edge.ops."
_TORCH_PREFIX = "torch.ops."

__all__ = ["SerializedArtifact", "deserialize", "serialize"]


def _graph_modules(gm: torch.fx.GraphModule) -> Iterator[torch.fx.GraphModule]:
    for module in gm.modules():
        if isinstance(module, torch.fx.GraphModule):
            yield module


def _json_nodes(graph: dict) -> Iterator[dict]:
    """Every serialized node, those of nested (control-flow) graphs too."""
    for node in graph.get("nodes", []):
        yield node
        for argument in node.get("inputs", []):
            subgraph = argument.get("arg", {}).get("as_graph")
            if subgraph:
                yield from _json_nodes(subgraph["graph"])


def serialize(ep: ExportedProgram) -> SerializedArtifact:
    """`ep` (Edge dialect) as upstream lays out an Edge program."""
    gm, signature = copy_program(ep)
    edge_nodes: Dict[Tuple[str, str], bool] = {}
    handles: Dict[str, int] = {}
    for module in _graph_modules(gm):
        for node in module.graph.nodes:
            if "debug_handle" in node.meta:
                handles[node.name] = node.meta["debug_handle"]
            if isinstance(node.target, EdgeOpOverload):
                node.target = node.target._op
                edge_nodes[(node.name, _torch_target(node.target))] = True
    aten = ep._update(gm, signature, verifiers=[Verifier])
    artifact = torch_serde.serialize(aten)
    program = json.loads(artifact.exported_program)
    for node in _json_nodes(program["graph_module"]["graph"]):
        if (node["name"], node["target"]) in edge_nodes:
            node["target"] = _EDGE_PREFIX + node["target"][len(_TORCH_PREFIX) :]
        if node["name"] in handles:
            node.setdefault("metadata", {})["debug_handle"] = str(handles[node["name"]])
    program["verifiers"] = [EXIREdgeDialectVerifier.dialect]
    return SerializedArtifact(
        json.dumps(program).encode(),
        artifact.state_dict,
        artifact.constants,
        artifact.example_inputs,
    )


def deserialize(artifact: SerializedArtifact) -> ExportedProgram:
    """The Edge program `serialize` (ours or upstream's) saved."""
    program = json.loads(artifact.exported_program)
    edge_names = set()
    handles: Dict[str, int] = {}
    for node in _json_nodes(program["graph_module"]["graph"]):
        if node["target"].startswith(_EDGE_PREFIX):
            node["target"] = _TORCH_PREFIX + node["target"][len(_EDGE_PREFIX) :]
            edge_names.add(node["name"])
        handle = node.get("metadata", {}).pop("debug_handle", None)
        if handle is not None:
            handles[node["name"]] = int(handle)
    program["verifiers"] = []
    aten = torch_serde.deserialize(
        SerializedArtifact(
            json.dumps(program).encode(),
            artifact.state_dict,
            artifact.constants,
            artifact.example_inputs,
        ),
        # Upstream writes an older schema version of the same layout.
        _unsafe_skip_version_check=True,
    )
    gm = aten.graph_module
    for module in _graph_modules(gm):
        for node in module.graph.nodes:
            if node.name in edge_names and isinstance(
                node.target, torch._ops.OpOverload
            ):
                node.target = edge_op(node.target)
            if node.name in handles:
                node.meta["debug_handle"] = handles[node.name]
        module.recompile()
    return aten._update(gm, aten.graph_signature, verifiers=[EXIREdgeDialectVerifier])


def _torch_target(op: torch._ops.OpOverload) -> str:
    """How torch's serializer writes `op`'s target."""
    return f"{_TORCH_PREFIX}{op.namespace}.{op._schema.name.split('::')[1]}.{op._overloadname}"
