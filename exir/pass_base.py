"""The interface of compiler passes.

A pass rewrites one graph: a `PassBase` whose `call(graph_module)` edits the
graph and returns `PassResult(graph_module, modified)` (torch.fx's
interface, which upstream ExecuTorch uses too). A plain function of a graph
module returning a `PassResult` (or None, meaning "edited in place") is
accepted wherever a pass is. The pass manager runs graph passes on the
method's graph and on every control-flow branch and body inside it, so a
pass never walks submodules itself.

A few steps change more than one graph: the graph signature (which inputs
are buffers, which outputs write them back), the program's constants, or
its dialect. They are `ExportedProgramPassBase`s, taking and returning a
whole `ExportedProgram`.

The pipelines built from both kinds are in `exir/passes/pipelines.py`;
`exir/pass_manager.py` runs them.
"""

from abc import ABC, abstractmethod
from typing import NamedTuple

from torch.export import ExportedProgram
from torch.fx.passes.infra.pass_base import PassBase, PassResult

__all__ = [
    "ExportedProgramPassBase",
    "ExportedProgramPassResult",
    "PassBase",
    "PassResult",
]


class ExportedProgramPassResult(NamedTuple):
    exported_program: ExportedProgram
    modified: bool


class ExportedProgramPassBase(ABC):
    """A step that rewrites a whole program (graph, signature, constants)
    and returns a new one; its input stays as it was."""

    def __call__(self, exported_program: ExportedProgram) -> ExportedProgramPassResult:
        return self.call(exported_program)

    @abstractmethod
    def call(self, exported_program: ExportedProgram) -> ExportedProgramPassResult:
        """Returns the rewritten program and whether anything changed."""
