"""Models for the runtime tests, as Python source that both our Python and
upstream ExecuTorch's can run, and helpers to export and check them."""

import textwrap

import pytest
import torch

# Each entry is Python source that defines `model` and `inputs`; it runs both
# here (for eager results) and under upstream's Python (to export).
MODELS = {
    "add_with_parameter": """
        import torch

        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = torch.nn.Parameter(torch.arange(6.0).reshape(2, 3))

            def forward(self, x, y):
                return torch.add(x, y, alpha=2.0) + self.w

        g = torch.Generator().manual_seed(0)
        model = Model()
        inputs = (torch.randn(2, 3, generator=g), torch.randn(3, generator=g))
        """,
    "mlp": """
        import torch

        torch.manual_seed(0)
        model = torch.nn.Sequential(
            torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)
        )
        inputs = (torch.randn(5, 8, generator=torch.Generator().manual_seed(1)),)
        """,
    "scalar_inputs": """
        import torch

        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = torch.nn.Parameter(torch.ones(3))

            def forward(self, x, n: int, s: float, flag: bool):
                return x * n + s * self.w if flag else x

        model = Model()
        inputs = (torch.arange(3.0), 3, 0.5, True)
        """,
    "bfloat16": """
        import torch

        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                w = torch.linspace(-1, 1, 6).reshape(2, 3).to(torch.bfloat16)
                self.w = torch.nn.Parameter(w)

            def forward(self, x, y):
                return x * y + self.w

        g = torch.Generator().manual_seed(2)
        model = Model()
        inputs = tuple(torch.randn(2, 3, generator=g).to(torch.bfloat16) for _ in "xy")
        """,
    "channels_last": """
        import torch

        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = torch.nn.Parameter(torch.linspace(-1, 1, 18).reshape(1, 2, 3, 3))

            def forward(self, x):
                return x * 2 + self.w

        g = torch.Generator().manual_seed(3)
        x = torch.randn(1, 2, 3, 3, generator=g)
        model = Model()
        inputs = (x.to(memory_format=torch.channels_last),)
        """,
    "half_and_uint8": """
        import torch

        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("scale", torch.full((4,), 2.0).half())

            def forward(self, x, y, z):
                return x * y * self.scale, z.to(torch.float32) + 1

        g = torch.Generator().manual_seed(4)
        model = Model()
        inputs = (
            torch.randn(4, generator=g).half(),
            torch.randn(4, generator=g).half(),
            torch.arange(250, 254, dtype=torch.uint8),
        )
        """,
    "integer_and_bool": """
        import torch

        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("offset", torch.tensor([1, -2, 3]))

            def forward(self, x):
                return x * 3 + self.offset, x > 2

        model = Model()
        inputs = (torch.arange(6, dtype=torch.int64).reshape(2, 3),)
        """,
}


def model_and_inputs(name):
    """Runs the source of model `name` here; returns (model, inputs)."""
    namespace = {}
    exec(textwrap.dedent(MODELS[name]), namespace)
    return namespace["model"].eval(), namespace["inputs"]


def export_with_ours(name, **memory_planning):
    """Exports model `name` with our exporter; `memory_planning` goes to
    MemoryPlanningPass (e.g. alloc_graph_output=False)."""
    try:
        from executorch.exir import ExecutorchBackendConfig, to_edge
        from executorch.exir.passes import MemoryPlanningPass
    except ImportError as e:
        pytest.skip(f"our exporter does not import yet: {e}")
    model, inputs = model_and_inputs(name)
    config = ExecutorchBackendConfig(
        memory_planning_pass=MemoryPlanningPass(**memory_planning)
    )
    edge = to_edge(torch.export.export(model, inputs))
    return edge.to_executorch(config).buffer


def eager(name):
    """(inputs, outputs as a tuple) of model `name` in PyTorch eager."""
    model, inputs = model_and_inputs(name)
    with torch.no_grad():
        outputs = model(*inputs)
    if not isinstance(outputs, (tuple, list)):
        outputs = (outputs,)
    return inputs, tuple(outputs)


def assert_matches(actual, expected):
    """Integers and bools exactly; float32/64 to 1e-5; 16-bit floats with
    torch's default tolerances for their dtype."""
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        if not want.is_floating_point():
            tol = dict(rtol=0, atol=0)
        elif want.dtype in (torch.float32, torch.float64):
            tol = dict(rtol=1e-5, atol=1e-5)
        else:
            tol = {}
        torch.testing.assert_close(got, want, **tol)
