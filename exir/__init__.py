"""EXIR, the ahead-of-time compiler: exported PyTorch programs to `.pte`.

import torch
from executorch.exir import to_edge

ep = torch.export.export(model, example_inputs)
to_edge(ep).to_executorch().save("model.pte")
"""

from torch.export import ExportedProgram

from executorch.exir.capture._config import (
    CaptureConfig,
    EdgeCompileConfig,
    ExecutorchBackendConfig,
)
from executorch.exir.program._program import (
    EdgeProgramManager,
    ExecutorchProgramManager,
    to_edge,
    to_edge_transform_and_lower,
)
from executorch.exir.tensor import TensorSpec

# Upstream's older name for a program ready to serialize, still used in type
# annotations (Hugging Face's optimum-executorch); here it is the manager.
ExecutorchProgram = ExecutorchProgramManager

__all__ = [
    "CaptureConfig",
    "EdgeCompileConfig",
    "EdgeProgramManager",
    "ExecutorchBackendConfig",
    "ExecutorchProgram",
    "ExecutorchProgramManager",
    "ExportedProgram",
    "TensorSpec",
    "to_edge",
    "to_edge_transform_and_lower",
]
