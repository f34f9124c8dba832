"""Upstream's "Exporting to ExecuTorch" tutorial
(tutorials/export-to-executorch-tutorial.html) and "Lowering a Model as a
Delegate" (compiler-delegate-and-partitioner.html), section by section,
with the demo backend and partitioners they import."""

import torch
from torch.export import Dim, ExportedProgram, export

from executorch.exir import (
    EdgeProgramManager,
    ExecutorchBackendConfig,
    ExecutorchProgramManager,
    to_edge,
)
from executorch.exir.passes import MemoryPlanningPass
from executorch.test.api_docs._docs import (
    MATMUL_TOL,
    assert_matches_eager,
    run,
    seeded,
)


class SimpleConv(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv2d(in_channels=3, out_channels=16, kernel_size=3, padding=1)
        self.relu = torch.nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.relu(self.conv(x))


class Basic(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


def test_lowering_to_edge_dialect_and_to_executorch():
    """"Lowering to Edge Dialect" and "Running User-Defined Passes and
    Memory Planning": `to_edge`, `exported_program()`, then
    `to_executorch(ExecutorchBackendConfig(passes=[],
    memory_planning_pass=MemoryPlanningPass()))`."""
    example_args = (torch.randn(1, 3, 16, 16),)
    aten_dialect: ExportedProgram = export(SimpleConv(), example_args, strict=True)
    edge_program: EdgeProgramManager = to_edge(aten_dialect)
    assert isinstance(edge_program.exported_program(), ExportedProgram)
    executorch_program: ExecutorchProgramManager = edge_program.to_executorch(
        ExecutorchBackendConfig(passes=[], memory_planning_pass=MemoryPlanningPass())
    )
    graph = str(executorch_program.exported_program().graph)
    assert "convolution.out" in graph
    x = seeded(1, 3, 16, 16)
    assert_matches_eager(run(executorch_program.buffer, [x]), SimpleConv()(x), MATMUL_TOL)


def test_expressing_dynamism():
    """"Expressing Dynamism": `Dim("dim1_x", min=1, max=10)` shared by
    both inputs."""
    example_args_2 = (torch.randn(3, 3), torch.randn(3, 3))
    dim1_x = Dim("dim1_x", min=1, max=10)
    dynamic_shapes = {"x": {1: dim1_x}, "y": {1: dim1_x}}
    aten_dialect = export(Basic(), example_args_2, dynamic_shapes=dynamic_shapes, strict=True)
    program = to_edge(aten_dialect).to_executorch()
    for n in (1, 3, 10):
        x, y = seeded(3, n, seed=n), seeded(3, n, seed=n + 1)
        assert_matches_eager(run(program.buffer, [x, y]), x + y)


def test_multiple_programs_in_one_edge_program_manager():
    """"Lowering to Edge Dialect": `to_edge({"encode": ..., "decode": ...})`,
    `edge_program.methods`, `edge_program.exported_program(method)`."""

    class Encode(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.linear(x, torch.ones(5, 10))

    class Decode(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.linear(x, torch.ones(10, 5))

    aten_encode = export(Encode(), (torch.randn(1, 10),), strict=True)
    aten_decode = export(Decode(), (torch.randn(1, 5),), strict=True)
    edge_program = to_edge({"encode": aten_encode, "decode": aten_decode})
    assert set(edge_program.methods) == {"encode", "decode"}
    for method in edge_program.methods:
        assert isinstance(edge_program.exported_program(method), ExportedProgram)
    buffer = edge_program.to_executorch().buffer
    x, z = seeded(1, 10), seeded(1, 5)
    assert_matches_eager(run(buffer, [x], "encode"), Encode()(x), MATMUL_TOL)
    assert_matches_eager(run(buffer, [z], "decode"), Decode()(z), MATMUL_TOL)


def test_transform_with_an_export_pass():
    """"Lowering to Edge Dialect": `edge_program.transform((ConvertReluToSigmoid(),))`
    with an `ExportPass` subclass."""
    from executorch.exir.dialects._ops import ops as exir_ops
    from executorch.exir.pass_base import ExportPass

    class ConvertReluToSigmoid(ExportPass):
        def call_operator(self, op, args, kwargs, meta):
            if op == exir_ops.edge.aten.relu.default:
                return super().call_operator(
                    exir_ops.edge.aten.sigmoid.default, args, kwargs, meta
                )
            return super().call_operator(op, args, kwargs, meta)

    edge_program = to_edge(export(SimpleConv(), (torch.randn(1, 3, 8, 8),), strict=True))
    transformed = edge_program.transform((ConvertReluToSigmoid(),))
    x = seeded(1, 3, 8, 8)
    m = SimpleConv()
    assert_matches_eager(
        run(transformed.to_executorch().buffer, [x]), torch.sigmoid(m.conv(x)), MATMUL_TOL
    )


def test_saving_to_a_file_end_to_end(tmp_path):
    """"Saving to a File": parameter + linear + clamp, `file.write(
    executorch_program.buffer)`."""

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.param = torch.nn.Parameter(torch.rand(3, 4))
            self.linear = torch.nn.Linear(4, 5)

        def forward(self, x):
            return self.linear(x + self.param).clamp(min=0.0, max=1.0)

    model = M()
    example_args = (torch.randn(3, 4),)
    aten_dialect = export(model, example_args, strict=True)
    executorch_program = to_edge(aten_dialect).to_executorch(ExecutorchBackendConfig(passes=[]))
    with open(tmp_path / "model.pte", "wb") as file:
        file.write(executorch_program.buffer)
    x = seeded(3, 4)
    with torch.no_grad():
        expected = model(x)
    assert_matches_eager(run(str(tmp_path / "model.pte"), [x]), expected, MATMUL_TOL)
