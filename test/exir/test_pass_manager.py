"""One pass interface: graph passes run on every control-flow graph, program
passes on the whole program, user passes through the same manager as the
built-in pipelines."""

import pytest
import torch

from executorch.exir import (
    EdgeCompileConfig,
    ExecutorchBackendConfig,
    to_edge,
)
from executorch.exir.dialects._ops import ops as exir_ops
from executorch.exir.graph_utils import control_flow_graphs
from executorch.exir.pass_base import (
    ExportPass,
    ExportedProgramPassBase,
    ExportedProgramPassResult,
    PassBase,
    PassResult,
)
from executorch.exir.pass_manager import ExportedProgramPassManager, PassManager
from executorch.extension.pybindings.portable_lib import (
    _load_for_executorch_from_buffer,
)
from executorch.exir.passes.aten_to_edge import AtenToEdgePass
from executorch.exir.passes.fuse_quantized_weights import FuseQuantizedWeightsPass
from executorch.exir.passes.lower_control_flow_pass import LowerControlFlowPass
from executorch.exir.passes.memory_planning_pass import PlanMemoryPass
from executorch.exir.passes.pipelines import edge_passes, executorch_passes
from executorch.exir.verification.verifier import EXIREdgeDialectVerifier
from executorch.test.modules import CondLinear

_RELU = exir_ops.edge.aten.relu.default
_ABS = exir_ops.edge.aten.abs.default


def _targets(graph_module):
    return [n.target for n in graph_module.graph.nodes if n.op == "call_function"]


def _all_targets(graph_module):
    graphs = [graph_module] + control_flow_graphs(graph_module)
    return [t for g in graphs for t in _targets(g)]


class ReluToAbs(PassBase):
    def __init__(self):
        self.graphs_seen = 0

    def call(self, graph_module):
        self.graphs_seen += 1
        modified = False
        for node in graph_module.graph.nodes:
            if node.target == _RELU:
                node.target = _ABS
                modified = True
        return PassResult(graph_module, modified)


def _cond_edge(**kwargs):
    return to_edge(torch.export.export(CondLinear(), (torch.randn(2, 3),)), **kwargs)


def test_graph_pass_runs_on_every_control_flow_graph():
    edge = _cond_edge()
    before = edge.exported_program()
    assert _RELU in _all_targets(before.graph_module)
    relu_to_abs = ReluToAbs()
    transformed = edge.transform([relu_to_abs]).exported_program()
    # The method's graph and both branches of the cond.
    assert relu_to_abs.graphs_seen == 3
    assert _RELU not in _all_targets(transformed.graph_module)
    assert _ABS in _all_targets(transformed.graph_module)
    # The program given is unchanged.
    assert _RELU in _all_targets(before.graph_module)
    assert _ABS not in _all_targets(before.graph_module)


def test_to_edge_runs_transform_passes_before_the_check():
    edge = _cond_edge(transform_passes=[ReluToAbs()])
    assert _ABS in _all_targets(edge.exported_program().graph_module)

    def to_hardswish(graph_module):
        for node in graph_module.graph.nodes:
            if node.target == _RELU:
                node.target = torch.ops.aten.hardswish.default

    # A plain function editing in place (returning None) is a pass too, and
    # what it produces is checked like the rest of the program.
    with pytest.raises(Exception, match="hardswish"):
        _cond_edge(transform_passes=[to_hardswish])


def test_executorch_backend_config_passes_reach_the_branches():
    relu_to_abs = ReluToAbs()
    manager = _cond_edge().to_executorch(ExecutorchBackendConfig(passes=[relu_to_abs]))
    assert relu_to_abs.graphs_seen == 3
    ops = {str(op.name) for op in manager.executorch_program.executionPlan[0].operators}
    assert "aten::abs" in ops and "aten::relu" not in ops


def test_graph_pass_must_return_a_pass_result():
    def returns_a_number(graph_module):
        return 3

    with pytest.raises(TypeError, match="returns_a_number returned int"):
        _cond_edge().transform([returns_a_number])


def test_replacing_a_branch_graph_module_updates_its_owner():
    edge = _cond_edge()
    graph_module = edge.exported_program().graph_module
    branch = control_flow_graphs(graph_module)[0]

    def rebuild(gm):
        return PassResult(torch.fx.GraphModule(gm, gm.graph), True)

    result = PassManager([rebuild])(graph_module)
    assert result.modified
    new_branch = control_flow_graphs(result.graph_module)[0]
    assert new_branch is not branch
    assert _targets(new_branch) == _targets(branch)


class _CountPlaceholders(ExportedProgramPassBase):
    def __init__(self):
        self.counts = []

    def call(self, exported_program):
        self.counts.append(
            sum(n.op == "placeholder" for n in exported_program.graph.nodes)
        )
        return ExportedProgramPassResult(exported_program, False)


def test_program_passes_and_graph_passes_run_in_order():
    program = torch.export.export(torch.nn.Linear(3, 3), (torch.randn(1, 3),))
    counter = _CountPlaceholders()
    result = ExportedProgramPassManager(
        [counter, AtenToEdgePass(), counter]
    )(program)
    # weight, bias, input; the graph pass copied the program first.
    assert counter.counts == [3, 3]
    assert result.modified
    assert any(
        isinstance(t, type(_RELU)) for t in _targets(result.exported_program.graph_module)
    )
    assert not any(
        isinstance(t, type(_RELU)) for t in _targets(program.graph_module)
    )


def test_pipelines_are_lists_of_passes_in_order():
    edge = edge_passes(EdgeCompileConfig(), "forward", [ReluToAbs()])
    names = [type(p).__name__ for p in edge]
    assert names == [
        "UnwrapTensorSubclassesPass",
        "CheckQuantizationParametersPass",
        "FuseQuantizedWeightsPass",
        "CoreAtenDecompositionPass",
        "AtenToEdgePass",
        "DialectPass",
        "RemoveUnusedConstantsPass",
        "ReluToAbs",
    ]
    assert edge[5].verifier is EXIREdgeDialectVerifier
    unfused = edge_passes(EdgeCompileConfig(fuse_quantized_weights=False), "forward")
    assert not any(isinstance(p, FuseQuantizedWeightsPass) for p in unfused)

    user = ReluToAbs()
    config = ExecutorchBackendConfig(passes=[user])
    steps = executorch_passes(config, "forward")
    assert steps[0] is user
    assert config.to_out_var_pass in steps
    assert isinstance(steps[-2], LowerControlFlowPass)
    assert isinstance(steps[-1], PlanMemoryPass)
    assert steps[-1].planning is config.memory_planning_pass


class ReluToAbsAndDouble(ExportPass):
    """relu becomes abs followed by a mul: one operator into two."""

    def call_operator(self, op, args, kwargs, meta):
        if op != _RELU:
            return super().call_operator(op, args, kwargs, meta)
        absolute = super().call_operator(_ABS, args, kwargs, meta)
        return super().call_operator(
            exir_ops.edge.aten.mul.Scalar, (absolute, 2.0), {}, meta
        )


def test_export_pass_rewrites_operators_and_their_metadata():
    class Model(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x - 1).sum(dim=1)

    x = torch.randn(4, 3)
    dim = torch.export.Dim("batch", min=1, max=8)
    edge = to_edge(torch.export.export(Model(), (x,), dynamic_shapes=({0: dim},)))
    transformed = edge.transform([ReluToAbsAndDouble()])
    graph = transformed.exported_program().graph_module.graph
    targets = [n.target for n in graph.nodes if n.op == "call_function"]
    assert _RELU not in targets and _ABS in targets
    # Every new node carries the fake value of its output, symbolic batch
    # size included.
    for node in graph.nodes:
        if node.op == "call_function":
            assert isinstance(node.meta["val"], torch.Tensor)
            assert isinstance(node.meta["val"].shape[0], torch.SymInt)
    program = _load_for_executorch_from_buffer(transformed.to_executorch().buffer)
    for rows in (1, 4, 7):
        x = torch.randn(rows, 3)
        torch.testing.assert_close(
            program.forward([x])[0], (2 * (x - 1).abs()).sum(dim=1)
        )


def test_export_pass_runs_on_control_flow_branches():
    transformed = _cond_edge().transform([ReluToAbsAndDouble()]).exported_program()
    assert _RELU not in _all_targets(transformed.graph_module)
    assert _ABS in _all_targets(transformed.graph_module)


def test_export_pass_names_the_node_it_cannot_rebuild():
    class MatmulToAdd(ExportPass):
        def call_operator(self, op, args, kwargs, meta):
            if op == exir_ops.edge.aten.mm.default:
                op = exir_ops.edge.aten.add.Tensor
            return super().call_operator(op, args, kwargs, meta)

    class Model(torch.nn.Module):
        def forward(self, x, y):
            return x @ y

    edge = to_edge(torch.export.export(Model(), (torch.randn(2, 3), torch.randn(3, 5))))
    with pytest.raises(RuntimeError, match="MatmulToAdd.*add.Tensor.*node mm"):
        edge.transform([MatmulToAdd()])


def test_pass_manager_checks_before_and_after_each_pass(caplog):
    graph_module = torch.fx.symbolic_trace(lambda x: torch.relu(x))
    seen = []

    def count_relus(gm):
        seen.append(sum(n.target is torch.relu for n in gm.graph.nodes))
        if seen[-1] == 0:
            raise ValueError("no relu left")

    def relu_to_sigmoid(gm):
        for node in gm.graph.nodes:
            if node.target is torch.relu:
                node.target = torch.sigmoid

    manager = PassManager([relu_to_sigmoid], run_checks_after_each_pass=True)
    manager.add_checks(count_relus)
    with pytest.raises(ValueError, match="no relu left"):
        manager(graph_module)
    assert seen == [1, 0]

    quiet = PassManager(
        [relu_to_sigmoid], run_checks_after_each_pass=True, suppress_check_failures=True
    )
    quiet.add_checks(count_relus)
    quiet(torch.fx.symbolic_trace(lambda x: torch.relu(x)))
    assert "count_relus failed: no relu left" in caplog.text
