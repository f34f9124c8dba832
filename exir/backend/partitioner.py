"""Partitioner: chooses which nodes of a program a backend runs."""

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

import torch
from torch.export import ExportedProgram

from executorch.exir.backend.compile_spec_schema import CompileSpec

# node.meta key holding the partition a node is delegated with.
DELEGATION_TAG = "delegation_tag"


@dataclass
class DelegationSpec:
    """Which backend runs a partition, and with which compile specs."""

    backend_id: str
    compile_specs: List[CompileSpec] = field(default_factory=list)


@dataclass
class PartitionResult:
    """The program with nodes tagged (`node.meta["delegation_tag"]`) and the
    delegation of each tag."""

    tagged_exported_program: ExportedProgram
    partition_tags: Dict[str, DelegationSpec]


class Partitioner(ABC):
    """Tags the nodes of an Edge program that a backend takes over. Each tag
    must cover a convex set of operator nodes (no path leaves the set and
    comes back); parameter and buffer placeholders may carry the tag too,
    giving their data to the backend when all their users are in it."""

    @abstractmethod
    def partition(self, exported_program: ExportedProgram) -> PartitionResult:
        """Tags nodes and returns the tags' delegation specs."""

    def ops_to_not_decompose(
        self, ep: ExportedProgram
    ) -> Tuple[List[torch._ops.OpOverload], Optional[Callable]]:
        """Operators the backend wants kept whole by `to_edge_transform_and_lower`
        (and an optional filter on their nodes)."""
        return [], None
