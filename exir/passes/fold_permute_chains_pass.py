"""Folds a permute of a permute into one permute.

`permute_copy(permute_copy(x, p), q)` is `permute_copy(x, [p[d] for d in
q])`: one copy instead of two, and none when the composition is the identity
on an intermediate value (ReplaceViewCopyWithViewPass then aliases it).
Clones between the two permutes are looked through (they copy the same
values). Why: attention as `nn.MultiheadAttention` exports it permutes its
heads' output to [L, N, H, D], clones it, and permutes it back and forth
again: three copies per layer where one does. Results are bit-identical.
"""

from typing import Optional

import torch

from executorch.exir.dialects._ops import ops as exir_ops
from executorch.exir.pass_base import PassBase, PassResult

_PERMUTE = exir_ops.edge.aten.permute_copy.default
_CLONE = exir_ops.edge.aten.clone.default


def _call_of(value, target) -> bool:
    return (
        isinstance(value, torch.fx.Node)
        and value.op == "call_function"
        and value.target is target
    )


def _permute_feeding(node: torch.fx.Node) -> Optional[torch.fx.Node]:
    """The permute whose result reaches `node`'s input through clones only."""
    source = node.args[0]
    while _call_of(source, _CLONE):
        source = source.args[0]
    return source if _call_of(source, _PERMUTE) else None


class FoldPermuteChainsPass(PassBase):
    """Composes each permute_copy with the permute_copy it reads."""

    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        bypassed = []
        # In graph order, so a chain of any length folds from its start.
        for node in graph_module.graph.nodes:
            if not _call_of(node, _PERMUTE):
                continue
            inner = _permute_feeding(node)
            if inner is None:
                continue
            bypassed.append(node.args[0])
            rank = len(node.args[1])
            first = [d % rank for d in inner.args[1]]
            node.args = (inner.args[0], [first[d % rank] for d in node.args[1]])
        # The permutes and clones left without readers, last first.
        erased = set()
        for node in reversed(bypassed):
            while (
                _call_of(node, _PERMUTE) or _call_of(node, _CLONE)
            ) and not (node in erased or node.users):
                erased.add(node)
                source = node.args[0]  # erase_node clears the args
                graph_module.graph.erase_node(node)
                node = source
        graph_module.recompile()
        return PassResult(graph_module, bool(bypassed))
