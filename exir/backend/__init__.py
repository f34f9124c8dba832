"""Delegation of program partitions to backends: `Partitioner` tags nodes,
`to_backend` hands each tagged partition to its backend's `preprocess` and
replaces it by a call of the resulting delegate."""

from executorch.exir.backend.backend_api import to_backend
from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult
from executorch.exir.backend.compile_spec_schema import CompileSpec
from executorch.exir.backend.partitioner import (
    DelegationSpec,
    PartitionResult,
    Partitioner,
)

__all__ = [
    "BackendDetails",
    "CompileSpec",
    "DelegationSpec",
    "PartitionResult",
    "Partitioner",
    "PreprocessResult",
    "to_backend",
]
