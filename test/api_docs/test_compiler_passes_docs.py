"""Upstream's "Custom Compiler Passes and Partitioners"
(compiler-custom-compiler-passes.html), "Backend Dialect"
(compiler-backend-dialect.html) and "Export IR Specification", "Edge
Operators" (ir-exir.html)."""

import pytest
import torch
from torch.export import export
from torch.fx.passes.operator_support import OperatorSupportBase
from torch.library import Library

from executorch.exir import pass_base, to_edge
from executorch.exir.dialects._ops import ops as exir_ops


def test_edge_operators_allowed_types():
    """ir-exir.html, "Edge Operators": `sigmoid._schema.arguments[0]
    .allowed_types` and `.returns[0].allowed_types`."""
    sigmoid = exir_ops.edge.aten.sigmoid.default
    assert str(sigmoid._schema) == "aten::sigmoid(Tensor self) -> Tensor"
    self_arg = sigmoid._schema.arguments[0]
    _return = sigmoid._schema.returns[0]
    assert {torch.float32, torch.float64, torch.int32, torch.bool} <= self_arg.allowed_types
    assert {torch.float32, torch.float64} <= _return.allowed_types
    assert torch.bool not in _return.allowed_types
    add = exir_ops.edge.aten.add.Tensor
    assert torch.float32 in add._schema.arguments[0].allowed_types
    # Each listed dtype really runs in ATen and gives an allowed result.
    for dtype in self_arg.allowed_types:
        assert sigmoid(torch.zeros(2, dtype=dtype)).dtype in _return.allowed_types
    # Non-tensor arguments carry no dtype constraint.
    assert add._schema.arguments[2].name == "alpha"
    assert add._schema.arguments[2].allowed_types is None


def test_edge_dtype_table_is_what_aten_runs():
    """The checked-in table agrees with a fresh probe of ATen (regenerate
    it with `python -m executorch.exir.dialects.edge.dtype_table`)."""
    from executorch.exir.dialects.edge.dtype_table import allowed_dtypes, probe

    for op in (torch.ops.aten.sigmoid.default, torch.ops.aten.add.Tensor,
               torch.ops.aten.mm.default, torch.ops.aten.logical_not.default):
        for name, dtypes in probe(op).items():
            assert allowed_dtypes(op.name(), name) == dtypes, (op, name)


def test_backend_dialect_bind_pattern_to_op():
    """compiler-backend-dialect.html, "Pattern Binding Decorator" and
    "Example": an add_relu backend operator whose kernel is the pattern."""
    from executorch.exir.dialects._ops import bind_pattern_to_op

    lib = Library("foo_namespace_docs", "DEF")

    @bind_pattern_to_op(lib, "add_relu(Tensor self, Tensor other) -> Tensor")
    def pattern(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        z = torch.ops.aten.add.Tensor(x, y)
        out = torch.ops.aten.relu.default(z)
        return out

    x, y = torch.randn(3), torch.randn(3)
    op = torch.ops.foo_namespace_docs.add_relu.default
    torch.testing.assert_close(op(x, y), torch.relu(x + y))
    edge_op = exir_ops.edge.foo_namespace_docs.add_relu.default
    torch.testing.assert_close(edge_op(x, y), torch.relu(x + y))

    # Re-exported and decomposed, the backend operator becomes its pattern.
    class UsesFused(torch.nn.Module):
        def forward(self, a, b):
            return op(a, b)

    ep = export(UsesFused(), (x, y)).run_decompositions()
    targets = [n.target for n in ep.graph.nodes if n.op == "call_function"]
    assert torch.ops.aten.relu.default in targets
    torch.testing.assert_close(ep.module()(x, y), torch.relu(x + y))


def test_level3_pass_base_and_pass_manager():
    """compiler-custom-compiler-passes.html, "Level 3" and "Pass Manager":
    a `PassBase` with `call`/`requires`, run by `PassManager` with a check
    added by `add_checks`."""
    from executorch.exir.pass_manager import PassManager

    class ReplaceAddPass(pass_base.PassBase):
        def __init__(self, replace_op):
            self.replace_op = replace_op

        def call(self, graph_module):
            for node in graph_module.graph.nodes:
                if node.op == "call_function" and node.target == torch.add:
                    node.target = self.replace_op

        def requires(self, graph_module) -> None:
            for node in graph_module.graph.nodes:
                if node.op == "call_function" and node.target == torch.add:
                    return
            raise ValueError("No torch.add ops!")

    class F(torch.nn.Module):
        def forward(self, x, y):
            return torch.add(x, y)

    graph_module = torch.fx.symbolic_trace(F())
    pm = PassManager(
        passes=[ReplaceAddPass(torch.mul)],
        run_checks_after_each_pass=True,
        suppress_check_failures=False,
    )
    pm(graph_module)
    x, y = torch.randn(3), torch.randn(3)
    torch.testing.assert_close(graph_module(x, y), x * y)

    def check_mul_target(gm):
        for node in gm.graph.nodes:
            if node.op == "call_function" and node.target != torch.mul:
                raise ValueError("Target should be mul!")

    pm2 = PassManager(passes=[ReplaceAddPass(torch.sub)])
    pm2.add_checks(check_mul_target)
    with pytest.raises(ValueError):
        pm2(torch.fx.symbolic_trace(F()))


def test_combined_generate_pattern_op_partitions():
    """compiler-custom-compiler-passes.html, "Combined":
    `generate_pattern_op_partitions(graph_module, op_support=...)`."""
    from executorch.exir.backend.canonical_partitioners.pattern_op_partitioner import (
        generate_pattern_op_partitions,
    )

    class AddMulOperatorSupport(OperatorSupportBase):
        def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
            return node.op == "call_function" and node.target in [
                exir_ops.edge.aten.add.Tensor,
                exir_ops.edge.aten.mul.Tensor,
            ]

    class M(torch.nn.Module):
        def forward(self, x, y):
            a = (x + y) * y
            b = torch.sin(a)
            return b + x

    edge = to_edge(export(M(), (torch.randn(2), torch.randn(2))))
    partitions = generate_pattern_op_partitions(
        edge.exported_program().graph_module, op_support=AddMulOperatorSupport()
    )
    sizes = sorted(len(p.nodes) for p in partitions)
    assert sizes == [1, 2]
