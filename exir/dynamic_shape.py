"""Upstream's names for how dynamic tensors are planned."""

from enum import Enum


class DynamicMemoryPlanningMode(Enum):
    """UPPER_BOUND: each dynamic tensor gets the memory its upper bound
    needs, planned ahead of time (the only mode this SDK runs). SYMBOLIC
    (sizes allocated at run time) is rejected by ExecutorchBackendConfig."""

    UPPER_BOUND = "upper_bound"
    SYMBOLIC = "symbolic"
