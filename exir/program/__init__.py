"""Program managers of the compilation pipeline."""

from ._program import (
    EdgeProgramManager,
    ExecutorchProgramManager,
    to_edge,
    to_edge_transform_and_lower,
)

__all__ = [
    "EdgeProgramManager",
    "ExecutorchProgramManager",
    "to_edge",
    "to_edge_transform_and_lower",
]
