"""Runs lists of passes (see `exir/pass_base.py`).

`PassManager(passes)(graph_module)` runs graph passes, each on every
control-flow branch and body of the graph (innermost first) and then on the
graph itself. `ExportedProgramPassManager(passes)(exported_program)` runs a
pipeline mixing graph passes and program passes; it is how `to_edge`,
`EdgeProgramManager.transform` and `to_executorch` run theirs, so user
passes and built-in ones behave alike.
"""

import logging
from typing import Callable, List, Optional, Sequence, Union

import torch
from torch.export import ExportedProgram

from executorch.extension.progress import ProgressBar

from executorch.exir.graph_utils import (
    control_flow_graphs,
    copy_program,
    rename_signature,
)
from executorch.exir.pass_base import (
    ExportedProgramPassBase,
    ExportedProgramPassResult,
    PassBase,
    PassResult,
)

GraphPass = Union[
    PassBase, Callable[[torch.fx.GraphModule], Optional[PassResult]]
]
PassType = Union[GraphPass, ExportedProgramPassBase]


def _pass_name(graph_pass) -> str:
    return getattr(graph_pass, "__name__", type(graph_pass).__name__)


def _run_on_one_graph(graph_pass: GraphPass, graph: torch.fx.GraphModule) -> PassResult:
    result = graph_pass(graph)
    if result is None:
        # A pass that edits in place and says nothing is taken at its word.
        result = PassResult(graph, True)
    if not isinstance(result, PassResult):
        raise TypeError(
            f"pass {_pass_name(graph_pass)} returned {type(result).__name__}; a "
            "graph pass returns a PassResult (or None after editing in place)"
        )
    if result.modified:
        result.graph_module.recompile()
    return result


def _replace_submodule(
    owners: List[torch.fx.GraphModule],
    old: torch.fx.GraphModule,
    new: torch.fx.GraphModule,
) -> None:
    for owner in owners:
        for name, child in owner.named_children():
            if child is old:
                setattr(owner, name, new)


def run_graph_pass(
    graph_pass: GraphPass, graph_module: torch.fx.GraphModule
) -> PassResult:
    """Runs `graph_pass` on each control-flow graph of `graph_module`
    (innermost first), then on `graph_module`."""
    modified = False
    subgraphs = control_flow_graphs(graph_module)
    for subgraph in subgraphs:
        result = _run_on_one_graph(graph_pass, subgraph)
        if result.graph_module is not subgraph:
            _replace_submodule([graph_module] + subgraphs, subgraph, result.graph_module)
        modified = modified or result.modified
    result = _run_on_one_graph(graph_pass, graph_module)
    return PassResult(result.graph_module, modified or result.modified)


class PassManager:
    """Graph passes run in order, each over the whole tree of graphs.

    Checks (`add_checks`: functions of a graph module that raise when
    something is wrong) run on the graph given, and after each pass with
    `run_checks_after_each_pass`; with `suppress_check_failures` a failing
    check is logged instead of raised."""

    def __init__(
        self,
        passes: Optional[Sequence[GraphPass]] = None,
        run_checks_after_each_pass: bool = False,
        suppress_check_failures: bool = False,
    ):
        self.passes = list(passes or [])
        self.checks: List[Callable[[torch.fx.GraphModule], None]] = []
        self.run_checks_after_each_pass = run_checks_after_each_pass
        self.suppress_check_failures = suppress_check_failures

    def add_pass(self, graph_pass: GraphPass) -> None:
        self.passes.append(graph_pass)

    def add_checks(self, check: Callable[[torch.fx.GraphModule], None]) -> None:
        self.checks.append(check)

    def check(self, graph_module: torch.fx.GraphModule) -> None:
        for check in self.checks:
            try:
                check(graph_module)
            except Exception as error:
                if not self.suppress_check_failures:
                    raise
                logging.warning("check %s failed: %s", _pass_name(check), error)

    def __call__(self, graph_module: torch.fx.GraphModule) -> PassResult:
        self.check(graph_module)
        modified = False
        for graph_pass in self.passes:
            graph_module, changed = run_graph_pass(graph_pass, graph_module)
            modified = modified or changed
            if self.run_checks_after_each_pass:
                self.check(graph_module)
        return PassResult(graph_module, modified)


class ExportedProgramPassManager:
    """A pipeline: program passes and graph passes run in order on an
    `ExportedProgram`. The program given is never modified: graph passes
    run on a copy, made before the first of them edits anything. A long
    pipeline shows a progress bar naming the pass under way."""

    def __init__(self, passes: Sequence[PassType], description: str = "passes"):
        self.passes = list(passes)
        self.description = description

    def __call__(self, exported_program: ExportedProgram) -> ExportedProgramPassResult:
        given = exported_program.graph_module
        program = exported_program
        modified = False
        with ProgressBar(len(self.passes), self.description) as bar:
            for each in self.passes:
                bar.begin(_pass_name(each))
                if isinstance(each, ExportedProgramPassBase):
                    program, changed = each(program)
                else:
                    if program.graph_module is given:
                        program = program._update(*copy_program(program))
                    program, changed = _run_graph_pass_on_program(each, program)
                modified = modified or changed
                bar.step()
        return ExportedProgramPassResult(program, modified)


def _run_graph_pass_on_program(
    graph_pass: GraphPass, program: ExportedProgram
) -> ExportedProgramPassResult:
    graph_module, modified = run_graph_pass(graph_pass, program.graph_module)
    # A pass may rename or replace the inputs and outputs it rewrites.
    signature = rename_signature(graph_module, program.graph_signature)
    if graph_module is not program.graph_module or signature != program.graph_signature:
        program = program._update(graph_module, signature)
    return ExportedProgramPassResult(program, modified)
