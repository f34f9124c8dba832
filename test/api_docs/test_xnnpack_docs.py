"""Upstream's XNNPACK pages: "XNNPACK Backend" overview
(backends/xnnpack/xnnpack-overview.html), the "Preparing a Model"
tutorial (xnnpack-basic-tutorial.html), the "Partitioner API" reference
(xnnpack-partitioner.html) and the nanoGPT "Building an ExecuTorch LLM"
tutorial's XNNPACK lowering (llm/build-run-llama3 / getting-started
"Delegation" section), which imports
`executorch.backends.xnnpack.utils.configs`."""

import torch

from executorch.backends.xnnpack.partition.config import (
    ALL_PARTITIONER_CONFIGS,
    AddConfig,
    LinearConfig,
)
from executorch.backends.xnnpack.partition.config.xnnpack_config import (
    ConfigPrecisionType,
)
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.backends.xnnpack.utils.configs import (
    get_transform_passes,
    get_xnnpack_capture_config,
    get_xnnpack_edge_compile_config,
    get_xnnpack_executorch_backend_config,
)
from executorch.exir import to_edge, to_edge_transform_and_lower
from executorch.runtime import Runtime
from executorch.test.api_docs._docs import MATMUL_TOL, assert_matches_eager, run, seeded


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)) + 1.0)


def _delegate_calls(edge) -> int:
    return sum(
        1
        for n in edge.exported_program().graph.nodes
        if n.op == "call_function" and "call_delegate" in str(n.target)
    )


def test_overview_using_the_xnnpack_backend(tmp_path):
    """xnnpack-overview.html, "Using the XNNPACK Backend":
    `et_program.write_to_file(file)`."""
    model = MLP().eval()
    sample_inputs = (torch.randn(2, 8),)
    et_program = to_edge_transform_and_lower(
        torch.export.export(model, sample_inputs),
        partitioner=[XnnpackPartitioner()],
    ).to_executorch()
    with open(tmp_path / "mv2_xnnpack.pte", "wb") as file:
        et_program.write_to_file(file)
    x = seeded(2, 8)
    assert_matches_eager(run(str(tmp_path / "mv2_xnnpack.pte"), [x]), model(x), MATMUL_TOL)


def test_tutorial_lower_save_and_smoke_test(tmp_path):
    """xnnpack-basic-tutorial.html, "Lower the Model" and "Smoke Test":
    `executorch_program.save(path)`, then `method.execute([input_tensor])[0]`."""
    model = MLP().eval()
    example_inputs = (torch.randn(2, 8),)
    exported_program = torch.export.export(model, example_inputs)
    executorch_program = to_edge_transform_and_lower(
        exported_program, partitioner=[XnnpackPartitioner()]
    ).to_executorch()
    executorch_program.save(str(tmp_path / "mv3_xnnpack.pte"))

    runtime = Runtime.get()
    input_tensor = torch.ones(2, 8)
    program = runtime.load_program(str(tmp_path / "mv3_xnnpack.pte"))
    method = program.load_method("forward")
    outputs = method.execute([input_tensor])[0]
    torch.testing.assert_close(outputs, model(input_tensor), **MATMUL_TOL)


def test_partitioner_api_configs_limit_the_delegated_operators():
    """xnnpack-partitioner.html: `configs` controls which operators are
    delegated."""
    model = MLP().eval()
    ep = torch.export.export(model, (torch.randn(2, 8),))
    only_add = to_edge_transform_and_lower(
        ep, partitioner=[XnnpackPartitioner(configs=[AddConfig])]
    )
    targets = [
        str(n.target)
        for n in only_add.exported_program().graph.nodes
        if n.op == "call_function"
    ]
    # The linear layers stay on portable kernels; the add is delegated.
    assert any("addmm" in t for t in targets)
    assert not any("add.Tensor" in t for t in targets)
    assert _delegate_calls(only_add) == 1
    x = seeded(2, 8)
    program = only_add.to_executorch()
    assert_matches_eager(run(program.buffer, [x]), model(x), MATMUL_TOL)
    with_linear = to_edge_transform_and_lower(
        ep, partitioner=[XnnpackPartitioner(configs=[AddConfig, LinearConfig])]
    )
    assert _delegate_calls(with_linear) >= 1


def test_partitioner_api_config_precisions_filter_by_dtype():
    """xnnpack-partitioner.html: `config_precisions` filters operators by
    precision; a float model with only STATIC_QUANT delegates nothing."""
    ep = torch.export.export(MLP().eval(), (torch.randn(2, 8),))
    quant_only = to_edge_transform_and_lower(
        ep,
        partitioner=[
            XnnpackPartitioner(config_precisions=ConfigPrecisionType.STATIC_QUANT)
        ],
    )
    assert _delegate_calls(quant_only) == 0
    fp32 = to_edge_transform_and_lower(
        ep,
        partitioner=[XnnpackPartitioner(config_precisions=[ConfigPrecisionType.FP32])],
    )
    assert _delegate_calls(fp32) == 1


def test_partitioner_api_per_op_mode_one_delegate_per_operator(capsys):
    """xnnpack-partitioner.html: `per_op_mode` emits a delegate call per
    operator; `verbose` prints what was lowered."""
    model = MLP().eval()
    ep = torch.export.export(model, (torch.randn(2, 8),))
    edge = to_edge_transform_and_lower(
        ep, partitioner=[XnnpackPartitioner(per_op_mode=True, verbose=True)]
    )
    # linear, relu, add, linear.
    assert _delegate_calls(edge) == 4
    assert "delegated partition" in capsys.readouterr().out
    x = seeded(2, 8)
    assert_matches_eager(run(edge.to_executorch().buffer, [x]), model(x), MATMUL_TOL)


def test_default_configs_cover_every_lowered_operator():
    """The default configs must not narrow what XNNPACK takes."""
    from executorch.backends.xnnpack.lowering.core import OPS

    covered = {t for config in ALL_PARTITIONER_CONFIGS for t in config.targets}
    assert set(OPS) <= covered, set(OPS) - covered


def test_llm_tutorial_delegation_with_utils_configs():
    """"Building an ExecuTorch LLM" (nanoGPT), "Delegation": `to_edge`
    with `get_xnnpack_edge_compile_config()`, then
    `edge_manager.to_backend(XnnpackPartitioner())`; the XNNPACK
    transform passes and executorch backend config from the same module."""
    model = MLP().eval()
    traced_model = torch.export.export(model, (torch.randn(2, 8),))
    edge_config = get_xnnpack_edge_compile_config()
    assert edge_config._check_ir_validity is False
    edge_manager = to_edge(traced_model, compile_config=edge_config)
    edge_manager = edge_manager.transform(get_transform_passes())
    edge_manager = edge_manager.to_backend(XnnpackPartitioner())
    assert _delegate_calls(edge_manager) == 1
    et_program = edge_manager.to_executorch(get_xnnpack_executorch_backend_config())
    x = seeded(2, 8)
    assert_matches_eager(run(et_program.buffer, [x]), model(x), MATMUL_TOL)
    capture = get_xnnpack_capture_config(dynamic_shape=True, enable_aot=True)
    assert capture.enable_dynamic_shape and capture.enable_aot and capture._unlift


def test_transform_passes_give_each_dequantize_user_its_own_copy():
    """`get_transform_passes()` ends with the duplicate-dequantize pass:
    a dequantize read by two operators becomes two."""
    import torchao.quantization.pt2e.quantize_pt2e  # noqa: F401 (registers q/dq ops)

    q = torch.ops.quantized_decomposed

    class Shared(torch.nn.Module):
        def forward(self, x):
            qx = q.quantize_per_tensor.default(x, 0.1, 0, -128, 127, torch.int8)
            dq = q.dequantize_per_tensor.default(qx, 0.1, 0, -128, 127, torch.int8)
            return torch.relu(dq), torch.sigmoid(dq)

    x = seeded(2, 3)
    edge = to_edge(
        torch.export.export(Shared(), (x,)),
        compile_config=get_xnnpack_edge_compile_config(),
    )
    after = edge.transform(get_transform_passes())
    dequantizes = [
        n
        for n in after.exported_program().graph.nodes
        if "dequantize" in str(n.target)
    ]
    assert len(dequantizes) == 2 and all(len(n.users) == 1 for n in dequantizes)
    for got, want in zip(after.exported_program().module()(x), Shared()(x)):
        torch.testing.assert_close(got, want)
