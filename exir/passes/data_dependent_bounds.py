"""Upper bounds for output sizes that depend on tensor data.

torch.export gives such a size an unbacked symbol; memory planning plans it
at the symbol's upper bound. For masked_select, torch bounds the symbol by
self.numel(), which is too small when the mask broadcasts self to a larger
shape, and leaves it unbounded for 0-dim inputs. This pass sets the bound
the operator's semantics give: the element count of the broadcast shape.
"""

import math

import sympy
import torch
from torch.utils._sympy.value_ranges import ValueRanges

from executorch.exir.dialects.edge._ops import to_aten_op
from executorch.exir.pass_base import PassBase, PassResult
from executorch.exir.tensor import upper_bound


def _numel_upper_bound(shapes) -> int:
    """Element count of the broadcast of `shapes`, at their upper bounds."""
    sizes = [[upper_bound(s)[0] for s in shape] for shape in shapes]
    return math.prod(torch.broadcast_shapes(*sizes))


def _masked_select_bound(node: torch.fx.Node) -> int:
    self_val, mask_val = (a.meta["val"] for a in node.args[:2])
    return _numel_upper_bound([self_val.shape, mask_val.shape])


# Operator -> the largest size its data-dependent output dim can take.
_BOUNDS = {torch.ops.aten.masked_select.default: _masked_select_bound}


class BoundDataDependentSizesPass(PassBase):
    """Sets the upper bound of each data-dependent output size of the
    operators in _BOUNDS from the operator's inputs."""

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        for node in gm.graph.nodes:
            if node.op != "call_function":
                continue
            bound_of = _BOUNDS.get(to_aten_op(node.target))
            if bound_of is None:
                continue
            (size,) = node.meta["val"].shape
            if isinstance(size, int):
                continue
            symbol = size.node.expr
            if isinstance(symbol, sympy.Symbol):
                size.node.shape_env.var_to_range[symbol] = ValueRanges(
                    0, bound_of(node)
                )
        # Only the bounds of symbols changed, never the graph.
        return PassResult(gm, False)
