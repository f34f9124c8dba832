"""Program managers of the compilation pipeline."""

from ._program import EdgeProgramManager, ExecutorchProgramManager, to_edge

__all__ = ["EdgeProgramManager", "ExecutorchProgramManager", "to_edge"]
