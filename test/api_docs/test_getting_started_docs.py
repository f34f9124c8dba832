"""Upstream's "Getting Started with ExecuTorch" and "Model Export and
Lowering" pages (docs.pytorch.org/executorch: getting-started.html,
using-executorch-export.html), with a small local CNN in place of the
torchvision MobileNet V2 download."""

from typing import List

import torch

from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime
from executorch.test.api_docs._docs import (
    MATMUL_TOL,
    assert_matches_eager,
    seeded,
)


class SmallCNN(torch.nn.Module):
    """Stands in for MobileNet V2: conv, batch norm, ReLU6, pooling, linear."""

    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, stride=2, padding=1),
            torch.nn.BatchNorm2d(8),
            torch.nn.ReLU6(),
            torch.nn.Conv2d(8, 8, 3, padding=1, groups=8),
            torch.nn.ReLU6(),
        )
        self.classifier = torch.nn.Linear(8, 10)

    def forward(self, x):
        x = self.features(x)
        x = torch.nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.classifier(x)


def _model():
    torch.manual_seed(0)
    return SmallCNN().eval()


def test_getting_started_exporting_then_testing_the_model(tmp_path):
    """getting-started.html, "Exporting" and "Testing the Model": lower with
    XnnpackPartitioner, write `et_program.buffer`, load it with
    `Runtime.get().load_program(path)`, compare with the eager model."""
    model = _model()
    sample_inputs = (torch.randn(1, 3, 32, 32),)
    et_program = to_edge_transform_and_lower(
        torch.export.export(model, sample_inputs), partitioner=[XnnpackPartitioner()]
    ).to_executorch()
    with open(tmp_path / "model.pte", "wb") as f:
        f.write(et_program.buffer)

    runtime = Runtime.get()
    input_tensor: torch.Tensor = seeded(1, 3, 32, 32)
    program = runtime.load_program(str(tmp_path / "model.pte"))
    method = program.load_method("forward")
    output: List[torch.Tensor] = method.execute([input_tensor])
    eager_reference_output = model(input_tensor)
    assert torch.allclose(output[0], eager_reference_output, rtol=1e-3, atol=1e-5)


def test_export_dynamic_shapes():
    """using-executorch-export.html, "Dynamic Shapes": height and width
    as `torch.export.Dim`s; the program runs at sizes inside the range."""
    model = _model()
    sample_inputs = (torch.randn(1, 3, 32, 32),)
    dynamic_shapes = {
        "x": {
            2: torch.export.Dim("h", min=16, max=64),
            3: torch.export.Dim("w", min=16, max=64),
        }
    }
    exported_program = torch.export.export(
        model, sample_inputs, dynamic_shapes=dynamic_shapes
    )
    executorch_program = to_edge_transform_and_lower(
        exported_program, partitioner=[XnnpackPartitioner()]
    ).to_executorch()
    runtime = Runtime.get()
    method = runtime.load_program(executorch_program.buffer).load_method("forward")
    for h, w in [(16, 16), (48, 24), (64, 64)]:
        x = seeded(1, 3, h, w, seed=h + w)
        assert_matches_eager(method.execute([x]), model(x), MATMUL_TOL)


def test_export_multiple_methods_and_per_method_partitioners():
    """using-executorch-export.html, "Advanced Topics": several methods
    in one program, with a partitioner list per method name."""

    class Encode(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.relu(x * 2.0)

    class Decode(torch.nn.Module):
        def forward(self, x):
            return x - 1.0

    x = seeded(2, 4)
    et_program = to_edge_transform_and_lower(
        {
            "encode": torch.export.export(Encode(), (x,)),
            "decode": torch.export.export(Decode(), (x,)),
        },
        partitioner={"encode": [XnnpackPartitioner()], "decode": []},
        constant_methods={"get_max_len": 128},
    ).to_executorch()
    assert et_program.methods == {"encode", "decode"}
    assert et_program.config_methods == {"get_max_len"}
    program = Runtime.get().load_program(et_program.buffer)
    assert_matches_eager(program.load_method("encode").execute([x]), Encode()(x))
    assert_matches_eager(program.load_method("decode").execute([x]), Decode()(x))
    assert program.load_method("get_max_len").execute([]) == [128]


def test_export_program_data_separation(tmp_path):
    """using-executorch-export.html, "Program Data Separation":
    `ExecutorchBackendConfig(external_constants=True)`, the weights
    written with `write_tensor_data_to_file`, loaded with `data_path`."""
    from executorch.exir import ExecutorchBackendConfig, to_edge
    from executorch.extension.pybindings.portable_lib import _load_for_executorch

    model = torch.nn.Linear(4, 3).eval()
    example = (torch.randn(2, 4),)
    et_program = to_edge(torch.export.export(model, example)).to_executorch(
        ExecutorchBackendConfig(external_constants=True)
    )
    (tmp_path / "model.pte").write_bytes(et_program.buffer)
    et_program.write_tensor_data_to_file(str(tmp_path))
    (ptd,) = tmp_path.glob("*.ptd")
    module = _load_for_executorch(str(tmp_path / "model.pte"), data_path=str(ptd))
    x = seeded(2, 4)
    assert_matches_eager(module.forward([x]), model(x), MATMUL_TOL)
