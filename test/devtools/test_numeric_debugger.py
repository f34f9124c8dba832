"""The numeric debugger steps programs through the C++ runtime and finds the
first operator that departs from eager PyTorch."""

import inspect

import pytest
import torch
from torch.fx.passes.infra.pass_base import PassResult

from executorch.devtools import find_first_divergence
from executorch.devtools.find_divergence import main as find_divergence_main
from executorch.devtools.numeric_debugger import user_frame
from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.exir.dialects._ops import ops as exir_ops
from executorch.extension.pybindings import portable_lib
from executorch.test.modules import relu_becomes_abs


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = torch.nn.Linear(6, 8)
        self.second = torch.nn.Linear(8, 4)

    def forward(self, x):
        hidden = torch.relu(self.first(x))
        return self.second(hidden).softmax(-1), hidden.sum()


RELU_LINE = inspect.getsourcelines(Mlp.forward)[1] + 1


def mlp_edge():
    torch.manual_seed(0)
    model = Mlp().eval()
    inputs = (torch.randn(3, 6),)
    return to_edge(torch.export.export(model, inputs)), inputs


def test_faithful_program_matches_at_every_kernel_call():
    edge, inputs = mlp_edge()
    report = find_first_divergence(edge, inputs)
    assert report.first_divergence is None
    # Every kernel call of the MLP (two addmm, relu, softmax, sum; the weight
    # transposes are folded into constants at export) was compared.
    assert [c.node for c in report.comparisons] == [
        "addmm",
        "relu",
        "addmm_1",
        "_softmax",
        "sum_1",
    ]
    assert "all match" in str(report)


def test_broken_pass_is_found_at_its_operator_and_source_line():
    edge, inputs = mlp_edge()
    broken = edge.to_executorch(ExecutorchBackendConfig(passes=[relu_becomes_abs]))
    report = find_first_divergence(edge, inputs, executorch_program=broken)
    first = report.first_divergence
    assert first is not None
    assert (first.node, first.operator) == ("relu", "aten::abs.out")
    assert first.source.startswith(f"{__file__}:{RELU_LINE} in forward")
    assert "hidden = torch.relu(self.first(x))" in first.source
    assert "elements differ" in first.detail
    # The operators before it matched.
    assert all(c.matches for c in report.comparisons[: report.comparisons.index(first)])
    text = str(report)
    assert "first divergence at instruction" in text and "aten::abs.out" in text


def test_integer_results_must_match_exactly():
    class Count(torch.nn.Module):
        def forward(self, x):
            return (x > 0).sum(dtype=torch.int64) + 1

    inputs = (torch.randn(10),)
    edge = to_edge(torch.export.export(Count(), inputs))

    def plus_becomes_minus(graph_module):
        for node in graph_module.graph.nodes:
            if node.target == exir_ops.edge.aten.add.Scalar:
                node.target = exir_ops.edge.aten.sub.Scalar
        graph_module.recompile()
        return PassResult(graph_module, True)

    broken = edge.to_executorch(ExecutorchBackendConfig(passes=[plus_becomes_minus]))
    first = find_first_divergence(
        edge, inputs, executorch_program=broken, atol=100.0
    ).first_divergence
    assert first is not None and first.operator == "aten::sub.Scalar_out"
    assert "exact" in first.detail


def test_user_frame_skips_torch_internals():
    trace = (
        'File "/home/me/model.py", line 12, in forward\n'
        "    y = self.fc(x)\n"
        f'File "{torch.__file__.rsplit("/", 1)[0]}/nn/modules/linear.py", line 134, in forward\n'
        "    return F.linear(input, self.weight, self.bias)"
    )
    assert user_frame(trace) == "/home/me/model.py:12 in forward: y = self.fc(x)"
    assert user_frame(None) is None


def test_method_steps_and_reads_values():
    edge, inputs = mlp_edge()
    manager = edge.to_executorch()
    plan = manager.executorch_program.executionPlan[0]
    method = portable_lib._load_program_from_buffer(manager.buffer).load_method(
        "forward"
    )
    method.set_inputs(list(inputs))
    steps = 0
    while method.step():
        steps += 1
    assert steps == len(plan.chains[0].instructions)
    # After the last step the outputs hold the eager results.
    output = method.get_value(plan.outputs[0])
    torch.manual_seed(0)
    torch.testing.assert_close(output, Mlp().eval()(*inputs)[0])
    with pytest.raises(
        IndexError, match=r"has \d+ values; value 100000 is out of range"
    ):
        method.get_value(100000)
    # The next step starts a new run.
    assert method.step()


def test_command_line(tmp_path, capsys):
    factory = tmp_path / "factory.py"
    factory.write_text(
        "import torch\n"
        "def make():\n"
        "    return torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh()), (torch.randn(4, 3),)\n"
    )
    assert find_divergence_main(["--module", f"{factory}:make", "--all"]) == 0
    assert find_divergence_main(["--module", f"{factory}:make", "--same-inputs"]) == 0
    out = capsys.readouterr().out
    assert "ok  " in out and "aten::tanh.out" in out and "all match" in out
    with pytest.raises(SystemExit, match="has no function 'missing'"):
        find_divergence_main(["--module", f"{factory}:missing"])


def test_same_inputs_judges_each_call_on_the_runtime_values_it_read():
    """With relu emitted as abs, eager from eager's own values differs at
    relu and at everything after it; recomputed from the runtime's values,
    only relu differs."""
    edge, inputs = mlp_edge()
    broken = edge.to_executorch(ExecutorchBackendConfig(passes=[relu_becomes_abs]))
    chained = find_first_divergence(edge, inputs, executorch_program=broken)
    assert [c.node for c in chained.comparisons if not c.matches] == [
        "relu",
        "addmm_1",
        "_softmax",
        "sum_1",
    ]
    forced = find_first_divergence(
        edge, inputs, executorch_program=broken, same_inputs=True
    )
    assert [c.node for c in forced.comparisons if not c.matches] == ["relu"]
    assert len(forced.comparisons) == len(chained.comparisons)
