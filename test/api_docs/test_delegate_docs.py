"""Upstream's delegation examples: "Exporting to ExecuTorch" tutorial,
"Delegating to a Backend" (export-to-executorch-tutorial.html) and
"Lowering a Model as a Delegate" (compiler-delegate-and-partitioner.html),
flows 1-3, with the demo backend and partitioners they import
(`executorch.exir.backend.test.backend_with_compiler_demo`,
`...op_partitioner_demo`). Each program runs on our runtime, whose demo
backend interprets the blob, and matches eager."""

import torch
from torch.export import export

from executorch.exir import to_edge
from executorch.test.api_docs._docs import MATMUL_TOL, assert_matches_eager, run, seeded


class LowerableModule(torch.nn.Module):
    def forward(self, x):
        return torch.sin(x)


def _lowered_sin():
    from executorch.exir.backend.backend_api import LoweredBackendModule, to_backend
    from executorch.exir.backend.test.backend_with_compiler_demo import (  # noqa: F401
        BackendWithCompilerDemo,
    )

    example_args = (torch.ones(1),)
    aten_dialect = export(LowerableModule(), example_args, strict=True)
    to_be_lowered_module = to_edge(aten_dialect).exported_program()
    lowered_module: LoweredBackendModule = to_backend(
        "BackendWithCompilerDemo", to_be_lowered_module, []
    )
    return lowered_module


def test_flow1_lowering_the_whole_module(tmp_path):
    """Flow 1: `to_backend("BackendWithCompilerDemo", edge_program, [])`,
    its attributes, and `f.write(lowered_module.buffer())`."""
    lowered_module = _lowered_sin()
    assert lowered_module.backend_id == "BackendWithCompilerDemo"
    assert isinstance(lowered_module.processed_bytes, bytes)
    assert lowered_module.compile_specs == []
    assert lowered_module.original_module is not None
    with open(tmp_path / "delegate.pte", "wb") as f:
        f.write(lowered_module.buffer())
    program = lowered_module.program()
    assert [d.id for d in program.executionPlan[0].delegates] == ["BackendWithCompilerDemo"]
    x = seeded(1)
    assert_matches_eager(run(str(tmp_path / "delegate.pte"), [x]), torch.sin(x))


def test_flow2_composing_the_lowered_module():
    """Flow 2: the lowered module inside another module, exported again
    and run with the parts around it on portable kernels."""
    lowered_module = _lowered_sin()

    class NotLowerableModule(torch.nn.Module):
        def __init__(self, bias):
            super().__init__()
            self.bias = bias

        def forward(self, a, b):
            return torch.add(torch.add(a, b), self.bias)

    class ComposedModule(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.non_lowerable = NotLowerableModule(torch.ones(1) * 0.3)
            self.lowerable = lowered_module

        def forward(self, x):
            a = self.lowerable(x)
            b = self.lowerable(a)
            ret = self.non_lowerable(a, b)
            return a, b, ret

    example_args = (torch.ones(1),)
    edge_program = to_edge(export(ComposedModule(), example_args, strict=True))
    exported_program = edge_program.exported_program()
    assert exported_program.graph_module.lowered_module_0.backend_id == "BackendWithCompilerDemo"
    x = seeded(1)
    a = torch.sin(x)
    b = torch.sin(a)
    expected = (a, b, a + b + 0.3)
    assert_matches_eager(run(edge_program.to_executorch().buffer, [x]), expected)


class Foo(torch.nn.Module):
    def forward(self, a, x, b):
        y = torch.mm(a, x)
        z = y + b
        a = z - a
        y = torch.mm(a, x)
        z = y + b
        return z


def test_flow3_partitioning_with_add_mul_partitioner_demo():
    """Flow 3: `to_backend(exported_program, AddMulPartitionerDemo())` and
    `edge_program.to_backend(AddMulPartitionerDemo())`: two delegates, one
    (mm, add) each, around the portable sub."""
    from executorch.exir.backend.backend_api import to_backend
    from executorch.exir.backend.test.op_partitioner_demo import AddMulPartitionerDemo

    example_args_3 = (torch.randn(2, 2), torch.randn(2, 2), torch.randn(2, 2))
    aten_dialect = export(Foo(), example_args_3, strict=True)
    edge_program = to_edge(aten_dialect)
    exported_program = edge_program.exported_program()
    delegated_program = to_backend(exported_program, AddMulPartitionerDemo())
    gm = delegated_program.graph_module
    assert gm.lowered_module_0.original_module is not None
    assert gm.lowered_module_1.original_module is not None

    delegated = edge_program.to_backend(AddMulPartitionerDemo())
    inputs = [seeded(2, 2, seed=i) for i in range(3)]
    assert_matches_eager(
        run(delegated.to_executorch().buffer, inputs), Foo()(*inputs), MATMUL_TOL
    )


def test_flow3_model_with_add_mul_sub_div():
    """compiler-delegate-and-partitioner.html, Flow 3's model: the adds
    are delegated, the rest runs on portable kernels."""
    from executorch.exir.backend.test.op_partitioner_demo import AddMulPartitionerDemo

    class Model(torch.nn.Module):
        def forward(self, x, y):
            x = x + y
            x = x * y
            x = x - y
            x = x / y
            x = x * y
            x = x + y
            return x

    model_inputs = (torch.randn(1, 3), torch.randn(1, 3))
    edge = to_edge(export(Model(), model_inputs))
    edge = edge.to_backend(AddMulPartitionerDemo())
    exec_prog = edge.to_executorch()
    x, y = seeded(1, 3), seeded(1, 3, seed=1) + 3.0
    assert_matches_eager(run(exec_prog.buffer, [x, y]), Model()(x, y))


def test_add_attribute_partitioner_demo_moves_the_weight_into_the_delegate():
    """AddAttributePartitionerDemo: the add and the constant it reads go
    into the delegate together."""
    from executorch.exir.backend.test.op_partitioner_demo import (
        AddAttributePartitionerDemo,
    )

    class AddWeight(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.arange(6.0).reshape(2, 3))

        def forward(self, x):
            return torch.sin(x + self.weight)

    model = AddWeight()
    edge = to_edge(export(model, (torch.randn(2, 3),))).to_backend(
        AddAttributePartitionerDemo()
    )
    x = seeded(2, 3)
    with torch.no_grad():
        expected = model(x)
    assert_matches_eager(run(edge.to_executorch().buffer, [x]), expected)


def test_executor_runner_runs_the_demo_delegate(build_dir, tmp_path):
    """The `delegate.pte` of Flow 3 runs in executor_runner, which
    registers the demo backend, and prints eager's outputs (inputs: ones)."""
    from executorch.exir.backend.test.op_partitioner_demo import AddMulPartitionerDemo
    from executorch.test.e2e.test_executor_runner import printed_outputs, run_runner

    ones = (torch.ones(2, 2), torch.ones(2, 2), torch.ones(2, 2))
    edge = to_edge(export(Foo(), ones)).to_backend(AddMulPartitionerDemo())
    path = tmp_path / "delegate.pte"
    path.write_bytes(edge.to_executorch().buffer)
    result = run_runner(build_dir, str(path), "--print_output")
    assert result.returncode == 0, result.stderr + result.stdout
    torch.testing.assert_close(printed_outputs(result.stdout)[0], Foo()(*ones))
