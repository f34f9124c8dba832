"""The interface of compiler passes.

A pass rewrites one graph: a `PassBase` whose `call(graph_module)` edits the
graph and returns `PassResult(graph_module, modified)` (torch.fx's
interface, which upstream ExecuTorch uses too). A plain function of a graph
module returning a `PassResult` (or None, meaning "edited in place") is
accepted wherever a pass is. The pass manager runs graph passes on the
method's graph and on every control-flow branch and body inside it, so a
pass never walks submodules itself.

`ExportPass` is the convenient way to write the common kind of pass, as
upstream's documentation does: it rebuilds the graph operator by operator,
calling `call_operator(op, args, kwargs, meta)` for each, so a subclass
overrides only that to replace, drop or add operators; the new graph's
values get their metadata (`meta["val"]`) by running each operator on the
fake tensors of its inputs.

A few steps change more than one graph: the graph signature (which inputs
are buffers, which outputs write them back), the program's constants, or
its dialect. They are `ExportedProgramPassBase`s, taking and returning a
whole `ExportedProgram`.

The pipelines built from both kinds are in `exir/passes/pipelines.py`;
`exir/pass_manager.py` runs them.
"""

from abc import ABC, abstractmethod
from typing import Any, Dict, NamedTuple, Optional

import torch
from torch._guards import detect_fake_mode
from torch.export import ExportedProgram
from torch.fx.passes.infra.pass_base import PassBase, PassResult
from torch.utils import _pytree as pytree

from executorch.exir.dialects.edge._ops import EdgeOpOverload

__all__ = [
    "ExportPass",
    "ExportedProgramPassBase",
    "ExportedProgramPassResult",
    "NodeMetadata",
    "PassBase",
    "PassResult",
    "ProxyValue",
]


class NodeMetadata:
    """The metadata of the node being rebuilt (`meta.data` is its dict)."""

    def __init__(self, data: Dict[str, Any]):
        self.data = dict(data)

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.data[key] = value

    def __contains__(self, key: str) -> bool:
        return key in self.data

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def copy(self) -> "NodeMetadata":
        return NodeMetadata(self.data)


class ProxyValue:
    """A value of the graph being built: its node there and its example
    value (`data`, a fake tensor for tensors)."""

    def __init__(self, data: Any, node: torch.fx.Node):
        self.data = data
        self.node = node

    def to_tensor(self) -> torch.Tensor:
        assert isinstance(self.data, torch.Tensor), f"{self.node} is not a tensor"
        return self.data

    def is_tensor(self) -> bool:
        return isinstance(self.data, torch.Tensor)

    def __repr__(self) -> str:
        return f"ProxyValue({self.node.name})"


def _is_operator(target: Any) -> bool:
    return isinstance(target, (torch._ops.OpOverload, EdgeOpOverload))


class ExportPass(PassBase):
    """Rebuilds a graph, passing every operator call through
    `call_operator`; placeholders, attributes, control flow and the output
    are copied. Returns a new graph module."""

    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        self._graph = torch.fx.Graph()
        self._fake_mode = detect_fake_mode(
            [n.meta.get("val") for n in graph_module.graph.nodes if n.op == "placeholder"]
        )
        values: Dict[torch.fx.Node, Any] = {}
        for node in graph_module.graph.nodes:
            args, kwargs = pytree.tree_map_only(
                torch.fx.Node, values.__getitem__, (node.args, node.kwargs)
            )
            if node.op == "call_function" and _is_operator(node.target):
                self._original = node
                values[node] = self.call_operator(
                    node.target, args, kwargs, NodeMetadata(node.meta)
                )
            elif node.op == "output":
                self._graph.output(pytree.tree_map_only(ProxyValue, _node_of, args[0]))
            else:
                values[node] = self._copy(node, args, kwargs)
        rebuilt = torch.fx.GraphModule(graph_module, self._graph)
        rebuilt.meta.update(graph_module.meta)
        return PassResult(rebuilt, True)

    def call_operator(self, op, args, kwargs, meta: NodeMetadata) -> ProxyValue:
        """Adds `op(*args, **kwargs)` to the new graph. `args` hold the
        inputs' `ProxyValue`s; override to rewrite, and call this to emit."""
        node = self._graph.call_function(
            op, *pytree.tree_map_only(ProxyValue, _node_of, (tuple(args), dict(kwargs)))
        )
        node.meta = dict(meta.data)
        val = self._fake_value(op, args, kwargs)
        if val is not None:
            node.meta["val"] = val
        return ProxyValue(node.meta.get("val"), node)

    def _fake_value(self, op, args, kwargs) -> Optional[Any]:
        """The output of `op` on its inputs' fake tensors; the original
        node's when it is the same operator and cannot be run (an operator
        without a meta kernel)."""
        if self._fake_mode is None:
            return None
        fake_args, fake_kwargs = pytree.tree_map_only(
            ProxyValue, lambda v: v.data, (tuple(args), dict(kwargs))
        )
        try:
            with self._fake_mode:
                return op(*fake_args, **fake_kwargs)
        except Exception as error:
            if op is self._original.target and "val" in self._original.meta:
                return self._original.meta["val"]
            raise RuntimeError(
                f"{type(self).__name__}: {op} cannot run on the fake inputs of "
                f"node {self._original.name}: {error}"
            ) from error

    def _copy(self, node: torch.fx.Node, args, kwargs) -> ProxyValue:
        new_args, new_kwargs = pytree.tree_map_only(ProxyValue, _node_of, (args, kwargs))
        copied = self._graph.create_node(
            node.op, node.target, new_args, new_kwargs, name=node.name
        )
        copied.meta = dict(node.meta)
        return ProxyValue(node.meta.get("val"), copied)


def _node_of(value: ProxyValue) -> torch.fx.Node:
    return value.node


class ExportedProgramPassResult(NamedTuple):
    exported_program: ExportedProgram
    modified: bool


class ExportedProgramPassBase(ABC):
    """A step that rewrites a whole program (graph, signature, constants)
    and returns a new one; its input stays as it was."""

    def __call__(self, exported_program: ExportedProgram) -> ExportedProgramPassResult:
        return self.call(exported_program)

    @abstractmethod
    def call(self, exported_program: ExportedProgram) -> ExportedProgramPassResult:
        """Returns the rewritten program and whether anything changed."""
