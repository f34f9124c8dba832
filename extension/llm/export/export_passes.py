"""Graph passes for exported LLMs, under upstream ExecuTorch's names.

`RemoveRedundantTransposes` drops pairs of transposes or permutes that undo
each other. The custom KV caches and attention
(`examples/models/llama/source_transformation/custom_kv_cache.py`) keep
tensors as [batch, seq, heads, head_dim] while the model around them works
in [batch, heads, seq, head_dim], so an exported graph is full of
`transpose(1, 2)` directly followed by another `transpose(1, 2)`; each such
pair is a copy of a tensor at run time for nothing.

Run it on a graph module (`RemoveRedundantTransposes()(gm)` returns a
`PassResult`), e.g. on `exported_program.module()` before exporting that
module again, as optimum-executorch does.
"""

from typing import List, Optional

import torch
from torch.fx import GraphModule, Node

from executorch.exir.pass_base import PassBase, PassResult

_aten = torch.ops.aten
_TRANSPOSES = (_aten.transpose.int, _aten.transpose_copy.int)
_PERMUTES = (_aten.permute.default, _aten.permute_copy.default)


def _permutation(node: Node) -> Optional[List[int]]:
    """The dims `node` reorders its input's dims into (output dim i is input
    dim p[i]), or None if it is not a transpose or permute."""
    if node.op != "call_function" or node.target not in _TRANSPOSES + _PERMUTES:
        return None
    source = node.args[0]
    value = source.meta.get("val") if isinstance(source, Node) else None
    if value is None:
        return None
    rank = value.dim()
    if node.target in _TRANSPOSES:
        a, b = (d % rank for d in node.args[1:3])
        order = list(range(rank))
        order[a], order[b] = order[b], order[a]
        return order
    return [d % rank for d in node.args[1]]


class RemoveRedundantTransposes(PassBase):
    """Where a transpose or permute feeds another one and the two together
    reorder nothing (transpose(1, 2) then transpose(1, 2); permute(p) then
    permute(inverse of p)), the second one's users read the first one's
    input directly; nodes left without users are removed."""

    def call(self, graph_module: GraphModule) -> PassResult:
        modified = False
        for node in graph_module.graph.nodes:
            first = _permutation(node)
            if first is None:
                continue
            for user in list(node.users):
                second = _permutation(user)
                if second is None or len(second) != len(first):
                    continue
                # Output dim j of `user` is input dim first[second[j]].
                if all(first[second[j]] == j for j in range(len(second))):
                    user.replace_all_uses_with(node.args[0])
                    modified = True
        if modified:
            graph_module.graph.eliminate_dead_code()
            graph_module.recompile()
        return PassResult(graph_module, modified)
