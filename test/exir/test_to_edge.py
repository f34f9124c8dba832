"""to_edge: Edge operators, view copies, dim orders, scalar overloads, the
Core ATen verifier, several programs, transforms and the manager API."""

import pytest
import torch
import torch.nn.functional as F
from torch._decomp import decomposition_table
from torch._export.verifier import SpecViolationError
from torch.fx.passes.infra.pass_base import PassBase, PassResult

from executorch.exir import (
    EdgeCompileConfig,
    EdgeProgramManager,
    ExecutorchBackendConfig,
    ExecutorchProgramManager,
    to_edge,
)
from executorch.exir.dialects._ops import ops as exir_ops
from executorch.exir.dialects.edge import EdgeOpOverload
from executorch.test.modules import Lambda


def edge_graph(fn, *inputs, **kwargs):
    edge = to_edge(torch.export.export(Lambda(fn), inputs), **kwargs)
    return edge.exported_program().graph_module


def targets(gm):
    return [n.target for n in gm.graph.nodes if n.op == "call_function"]


def test_edge_op_objects():
    add = exir_ops.edge.aten.add.Tensor
    assert isinstance(add, EdgeOpOverload)
    assert add is exir_ops.edge.aten.add.Tensor
    assert add._op is torch.ops.aten.add.Tensor
    assert add.name() == "aten::add.Tensor"
    torch.testing.assert_close(add(torch.ones(2), torch.ones(2)), torch.full((2,), 2.0))
    copy = exir_ops.edge.dim_order_ops._to_dim_order_copy.default
    assert copy.name() == "dim_order_ops::_to_dim_order_copy"
    assert "dim_order_ops::_to_dim_order_copy.out" in str(
        torch.ops.dim_order_ops._to_dim_order_copy.out._schema
    )


def test_operators_become_edge_ops_after_core_aten_decomposition():
    gm = edge_graph(lambda x: torch.nn.functional.hardswish(x) + x, torch.randn(3))
    assert all(isinstance(t, EdgeOpOverload) for t in targets(gm))
    names = {t.name() for t in targets(gm)}
    assert "aten::hardswish" not in names  # decomposed: not Core ATen
    assert "aten::add.Tensor" in names


def test_views_become_copies_with_contiguous_results():
    gm = edge_graph(lambda x: x.permute(1, 0).reshape(-1)[1:], torch.randn(2, 3))
    names = [t.name() for t in targets(gm)]
    assert "aten::permute_copy" in names
    assert not any(n in ("aten::permute", "aten::view") for n in names)
    permute = next(n for n in gm.graph.nodes if "permute" in n.name)
    assert permute.meta["val"].is_contiguous()


def test_memory_formats_become_dim_orders():
    gm = edge_graph(
        lambda x: (x.to(torch.float16), x.to(memory_format=torch.channels_last)),
        torch.randn(1, 2, 3, 4),
    )
    copies = [n for n in gm.graph.nodes if n.op == "call_function"]
    assert all(
        n.target is exir_ops.edge.dim_order_ops._to_dim_order_copy.default
        for n in copies
    )
    assert copies[0].kwargs == {"dtype": torch.float16, "dim_order": [0, 1, 2, 3]}
    assert copies[1].kwargs["dim_order"] == [0, 2, 3, 1]
    assert "memory_format" not in copies[1].kwargs


def test_only_layout_changing_clones_become_dim_order_clones():
    gm = edge_graph(
        lambda x: (
            x.clone(),
            x.clone(memory_format=torch.contiguous_format),
            x.clone(memory_format=torch.channels_last),
        ),
        torch.randn(1, 2, 3, 4),
    )
    plain, contiguous, channels_last = [
        n for n in gm.graph.nodes if n.op == "call_function"
    ]
    assert plain.target is exir_ops.edge.aten.clone.default
    assert contiguous.target is exir_ops.edge.aten.clone.default
    assert channels_last.target is exir_ops.edge.dim_order_ops._clone_dim_order.default
    assert channels_last.kwargs == {"dim_order": [0, 2, 3, 1]}


def test_skip_dim_order_keeps_to_copy():
    gm = edge_graph(
        lambda x: x.to(torch.float16),
        torch.randn(2),
        compile_config=EdgeCompileConfig(_skip_dim_order=True),
    )
    assert targets(gm) == [exir_ops.edge.aten._to_copy.default]


def test_python_numbers_move_to_scalar_overloads():
    gm = edge_graph(lambda x: (x * 2, x + 1.5, x / 3), torch.randn(2))
    assert targets(gm) == [
        exir_ops.edge.aten.mul.Scalar,
        exir_ops.edge.aten.add.Scalar,
        exir_ops.edge.aten.div.Scalar,
    ]


def test_number_without_scalar_overload_becomes_a_0d_tensor():
    gm = edge_graph(lambda x: 1 - x, torch.arange(3))
    full, sub = [n for n in gm.graph.nodes if n.op == "call_function"]
    assert full.target is exir_ops.edge.aten.full.default
    assert full.args == ([], 1) and full.kwargs == {"dtype": torch.int64}
    assert sub.target is exir_ops.edge.aten.sub.Tensor and sub.args[0] is full


def test_non_core_ops_left_by_the_default_table_are_decomposed():
    gm = edge_graph(lambda x: torch.linalg.vector_norm(x, dim=1), torch.randn(2, 3))
    names = {t.name() for t in targets(gm)}
    assert "aten::linalg_vector_norm" not in names
    assert all(torch.Tag.core in t._op.tags for t in targets(gm))


def test_decompositions_into_prims_are_not_used():
    with pytest.raises(SpecViolationError, match="aten::exp2"):
        edge_graph(torch.exp2, torch.randn(3))


def test_decompositions_that_leave_the_op_are_not_used(monkeypatch):
    # Like torch's adaptive_max_pool2d for sizes that do not divide: the
    # operator stays, and is reported instead of decomposed forever.
    histc = torch.ops.aten.histc.default
    monkeypatch.setitem(decomposition_table, histc, lambda *args: NotImplemented)
    with pytest.raises(SpecViolationError, match="aten::histc"):
        edge_graph(lambda x: torch.histc(x, bins=4), torch.randn(8))


def test_non_core_ops_without_a_usable_torch_decomposition_are_decomposed():
    x = torch.randn(2, 3, 7, 5)
    fn = lambda x: (x.max(), x.min(), F.adaptive_max_pool2d(x, (3, 2)))
    gm = edge_graph(fn, x)
    names = {t.name() for t in targets(gm) if isinstance(t, EdgeOpOverload)}
    assert not names & {"aten::max", "aten::min", "aten::adaptive_max_pool2d"}


def test_asserts_from_dtype_conversions_are_removed():
    gm = edge_graph(lambda x: x.to(torch.int32), torch.randn(2))
    assert all("assert" not in t.name() for t in targets(gm))


def test_edge_program_still_runs_eagerly():
    x = torch.randn(3, 4)
    fn = lambda x: (torch.softmax(x.t(), 0) * 2, x.to(torch.int64).sum(1))
    module = to_edge(torch.export.export(Lambda(fn), (x,))).exported_program().module()
    for got, want in zip(module(x), fn(x)):
        torch.testing.assert_close(got, want)


class NotCore(torch.nn.Module):
    def forward(self, x):
        y = x + 1
        return torch.histc(y, bins=4)


def test_verifier_names_node_operator_and_source_line():
    ep = torch.export.export(NotCore(), (torch.randn(8),))
    with pytest.raises(SpecViolationError) as error:
        to_edge(ep)
    message = str(error.value)
    assert "node 'histc'" in message
    assert "aten::histc" in message
    assert "test_to_edge.py" in message
    assert "return torch.histc(y, bins=4)" in message


def test_verifier_exceptions_and_switch():
    ep = torch.export.export(NotCore(), (torch.randn(8),))
    histc = torch.ops.aten.histc.default
    allowed = to_edge(
        ep, compile_config=EdgeCompileConfig(_core_aten_ops_exception_list=[histc])
    )
    assert exir_ops.edge.aten.histc.default in targets(
        allowed.exported_program().graph_module
    )
    unchecked = to_edge(ep, compile_config=EdgeCompileConfig(_check_ir_validity=False))
    assert unchecked.exported_program() is not None


class UsesCustomOp(torch.nn.Module):
    def forward(self, x):
        return torch.ops.exir_test_verifier.scale(x + 1)


@pytest.fixture(scope="module")
def custom_op():
    lib = torch.library.Library("exir_test_verifier", "DEF")
    lib.define("scale(Tensor x) -> Tensor")
    lib.impl("scale", lambda x: x * 3, "CompositeExplicitAutograd")
    yield torch.ops.exir_test_verifier.scale.default
    lib._destroy()


def test_custom_operators_pass_the_verifier(custom_op):
    """Users' operators outside ATen become Edge ops; whether the runtime has
    a kernel for them is checked by to_executorch."""
    ep = torch.export.export(UsesCustomOp(), (torch.randn(2),))
    edge = to_edge(ep)
    assert exir_ops.edge.exir_test_verifier.scale.default in targets(
        edge.exported_program().graph_module
    )


def test_preserved_ops_are_not_decomposed():
    linear = torch.nn.Linear(3, 2)
    ep = torch.export.export(linear, (torch.randn(1, 3),))
    kept = to_edge(
        ep,
        compile_config=EdgeCompileConfig(_preserve_ops=[torch.ops.aten.linear.default]),
    )
    names = [t.name() for t in targets(kept.exported_program().graph_module)]
    assert names == ["aten::linear"]


def test_dict_of_programs_and_constant_methods():
    x = torch.randn(2)
    programs = {
        "forward": torch.export.export(Lambda(lambda x: x + 1), (x,)),
        "double": torch.export.export(Lambda(lambda x: x * 2), (x,)),
    }
    edge = to_edge(programs, constant_methods={"version": 3})
    assert isinstance(edge, EdgeProgramManager)
    assert edge.methods == {"forward", "double"}
    assert edge.config_methods == {"version"}
    assert edge.exported_program("double") is not edge.exported_program()
    program = edge.to_executorch()
    assert isinstance(program, ExecutorchProgramManager)
    names = sorted(p.name for p in program.executorch_program.executionPlan)
    assert names == ["double", "forward", "version"]


def test_method_names_must_be_unique():
    ep = torch.export.export(Lambda(lambda x: x + 1), (torch.randn(2),))
    with pytest.raises(ValueError, match="defined twice"):
        to_edge(ep, constant_methods={"forward": 1})


class MulToAdd(PassBase):
    """Replaces x * y by x + y (a test transform)."""

    def call(self, gm):
        for node in gm.graph.nodes:
            if node.target is exir_ops.edge.aten.mul.Tensor:
                node.target = exir_ops.edge.aten.add.Tensor
        gm.recompile()
        return PassResult(gm, True)


def test_transform_runs_passes_and_keeps_the_original():
    x, y = torch.randn(3), torch.randn(3)
    edge = to_edge(torch.export.export(Lambda(lambda x, y: x * y), (x, y)))
    transformed = edge.transform([MulToAdd()])
    torch.testing.assert_close(transformed.exported_program().module()(x, y), x + y)
    torch.testing.assert_close(edge.exported_program().module()(x, y), x * y)
    assert targets(transformed.exported_program().graph_module) == [
        exir_ops.edge.aten.add.Tensor
    ]


def test_transform_output_is_verified():
    edge = to_edge(torch.export.export(Lambda(lambda x: x.relu()), (torch.randn(2),)))

    class ToHardswish(PassBase):
        def call(self, gm):
            for node in gm.graph.nodes:
                if node.op == "call_function":
                    node.target = exir_ops.edge.aten.hardswish.default
            return PassResult(gm, True)

    with pytest.raises(SpecViolationError, match="aten::hardswish"):
        edge.transform([ToHardswish()])


def test_to_executorch_runs_user_passes_first():
    x, y = torch.randn(3), torch.randn(3)
    edge = to_edge(torch.export.export(Lambda(lambda x, y: x * y), (x, y)))
    manager = edge.to_executorch(ExecutorchBackendConfig(passes=[MulToAdd()]))
    plan = manager.executorch_program.executionPlan[0]
    assert [(o.name, o.overload) for o in plan.operators] == [("aten::add", "out")]
    # The Edge program itself is unchanged.
    assert targets(edge.exported_program().graph_module) == [
        exir_ops.edge.aten.mul.Tensor
    ]


class TwoNonCore(torch.nn.Module):
    def forward(self, x):
        y = torch.histc(x, bins=4)
        return torch.histc(y + 1, bins=2)


def test_verifier_lists_every_violation():
    with pytest.raises(SpecViolationError) as error:
        to_edge(torch.export.export(TwoNonCore(), (torch.randn(8),)))
    message = str(error.value)
    assert "node 'histc'" in message and "node 'histc_1'" in message
    assert "torch.histc(x, bins=4)" in message
    assert "torch.histc(y + 1, bins=2)" in message
