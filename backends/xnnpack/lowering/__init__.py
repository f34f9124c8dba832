"""Lowers an exported graph (ATen or Edge dialect; fp32, with int8 between
PT2E's quantize steps) to an XNNPACK
delegate blob in upstream ExecuTorch's format (README.md describes it).

`lower_to_xnnpack(exported_program)` serializes every operator of the graph;
`unsupported_reason(node, exported_program)` says why a node cannot be
lowered (None when it can), for partitioners and partition reports. Both use
the one operator table in core.py, which the family modules below fill:

    elementwise  unary math, activations, clamps, binary arithmetic
    conv         2-D convolutions (batch norm folded in)
    gemm         linear, addmm, mm, bmm
    pool         max, average and global average pooling
    shape        views, permutes, slices, concatenation, padding
    norm         batch norm, layer norm, softmax
    resize       bilinear upsampling
    quant        int8 ops between PT2E's dequantize and quantize steps
"""

from typing import Optional

import torch
from torch.export import ExportedProgram

# Importing the families registers their operators.
from executorch.backends.xnnpack.lowering import (  # noqa: F401
    conv,
    elementwise,
    gemm,
    norm,
    pool,
    quant,
    resize,
    shape,
)
from executorch.backends.xnnpack.lowering.core import (
    Lowering,
    XnnpackLoweringError,
    is_constant_node,
    is_float32_tensor,
    is_size_node,
    reason,
)
from executorch.backends.xnnpack.serialization.xnnpack_graph_serialize import (
    XnnpackGraphBuilder,
)

__all__ = [
    "XnnpackLoweringError",
    "is_constant_node",
    "is_float32_tensor",
    "is_size_node",
    "lower_to_xnnpack",
    "unsupported_reason",
]


def unsupported_reason(node: torch.fx.Node, ep: ExportedProgram) -> Optional[str]:
    """Why `node` (a call_function of `ep`'s graph) cannot be lowered to
    XNNPACK, or None when it can."""
    if node.op != "call_function":
        return "not an operator call"
    return reason(node, ep)


def lower_to_xnnpack(
    ep: ExportedProgram, named_data_store=None, external_tag: Optional[str] = None
) -> bytes:
    """The XNNPACK blob for `ep`'s graph: user inputs become the delegate's
    inputs in order, user outputs its outputs. Constants go to
    `named_data_store` (exir's NamedDataStore, under the SHA-256 of their
    bytes, in the .ptd file `external_tag` when given) or, without one, into
    the blob. Raises XnnpackLoweringError naming the first node that cannot
    be lowered."""
    builder = XnnpackGraphBuilder(named_data_store, external_tag)
    return Lowering(ep, builder).run()
