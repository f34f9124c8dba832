"""Core ATen decomposition: the first step of `to_edge`.

torch.export's default decomposition table, plus, for each non-core
operator it leaves in the graph, torch's own decomposition when that yields
core operators only, plus the decompositions written below for the
operators torch has none usable for.
"""

import torch
from torch._decomp import decomposition_table
from torch._ops import OpOverload
from torch.export import ExportedProgram

from executorch.exir.capture._config import EdgeCompileConfig
from executorch.exir.pass_base import ExportedProgramPassBase, ExportedProgramPassResult


def _needs_decomposition(op, config: EdgeCompileConfig) -> bool:
    """Whether `op` is an ATen operator outside Core ATen that torch has a
    decomposition for (and the user did not ask to keep)."""
    return (
        isinstance(op, OpOverload)
        and op.namespace == "aten"
        and torch.Tag.core not in op.tags
        and op not in config._preserve_ops
        and op not in config._core_aten_ops_exception_list
        and op in decomposition_table
    )


def _operators(ep: ExportedProgram) -> set:
    return {n.target for n in ep.graph.nodes if n.op == "call_function"}


def _var_mean(x, dim=None, *, correction=None, keepdim=False):
    var = torch.ops.aten.var.correction(x, dim, correction=correction, keepdim=keepdim)
    return var, torch.ops.aten.mean.dim(x, dim, keepdim)


def _amax(x):
    return torch.ops.aten.amax.default(x)


def _amin(x):
    return torch.ops.aten.amin.default(x)


def _adaptive_windows(size: int, out: int):
    """Indices [out, k] of each adaptive pooling window along a dimension,
    the shorter windows padded by repeating their last index (a repeat
    changes neither a max nor which index comes first)."""
    i = torch.arange(out)
    start = i * size // out
    end = ((i + 1) * size + out - 1) // out
    k = max(((j + 1) * size + out - 1) // out - j * size // out for j in range(out))
    return torch.minimum(start[:, None] + torch.arange(k), end[:, None] - 1), k


def _adaptive_max_pool2d(x, output_size):
    h, w = x.shape[-2:]
    if not (isinstance(h, int) and isinstance(w, int)):
        return NotImplemented
    rows, kh = _adaptive_windows(h, output_size[0])
    cols, kw = _adaptive_windows(w, output_size[1])
    # [..., oh * kh, ow * kw] -> [..., oh, ow, kh * kw]: each window on the last dim.
    y = x.index_select(-2, rows.flatten()).index_select(-1, cols.flatten())
    y = y.unflatten(-1, (-1, kw)).unflatten(-3, (-1, kh)).transpose(-3, -2)
    values, position = y.flatten(-2).max(-1)
    flat = (rows[:, None, :, None] * w + cols[None, :, None, :]).flatten(-2)
    indices = flat.expand(*position.shape, kh * kw).gather(-1, position[..., None])
    return values, indices[..., 0]


# Non-core operators torch has no decomposition for, or one that yields
# `prims` operators or applies to some shapes only, written in core
# operators instead (var_mean comes from training-mode batch norm).
_CORE_ONLY_DECOMPOSITIONS = {
    torch.ops.aten.var_mean.correction: _var_mean,
    torch.ops.aten.max.default: _amax,
    torch.ops.aten.min.default: _amin,
    torch.ops.aten.adaptive_max_pool2d.default: _adaptive_max_pool2d,
}


def _decompose(ep: ExportedProgram, config: EdgeCompileConfig) -> ExportedProgram:
    """Core ATen decomposition: torch.export's default table, plus torch's
    decomposition of each non-core operator the default table leaves in the
    graph (`linalg_vector_norm`), one at a time, kept only if it yields no
    `prims` operators (which no runtime has kernels for) and removes the
    operator (some decompositions apply to a subset of shapes only, like
    `adaptive_max_pool2d` to output sizes that divide the input's)."""
    table = torch.export.default_decompositions()
    for op, decompose in _CORE_ONLY_DECOMPOSITIONS.items():
        if op not in [*config._preserve_ops, *config._core_aten_ops_exception_list]:
            table[op] = decompose
    for op in config._preserve_ops:
        table.pop(op, None)
    core = ep.run_decompositions(table)
    rejected = set()
    while True:
        missing = [
            op
            for op in _operators(core)
            if _needs_decomposition(op, config) and op not in rejected
        ]
        if not missing:
            return core
        op = missing[0]
        table[op] = decomposition_table[op]
        candidate = ep.run_decompositions(table)
        left = _operators(candidate)
        if op in left or any(getattr(t, "namespace", None) == "prims" for t in left):
            del table[op]
            rejected.add(op)
        else:
            core = candidate


class CoreAtenDecompositionPass(ExportedProgramPassBase):
    """Decomposes a program to Core ATen, keeping the operators that
    `config._preserve_ops` names (and those of its exception list)."""

    def __init__(self, config: EdgeCompileConfig):
        self.config = config

    def call(self, exported_program: ExportedProgram) -> ExportedProgramPassResult:
        return ExportedProgramPassResult(_decompose(exported_program, self.config), True)
