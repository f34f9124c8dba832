"""fold_batch_norm: an inference batch norm after a convolution disappears
into the convolution's weight and bias at `to_executorch` (results equal
eager's to float32 rounding: rtol 1e-5, atol 1e-5), and is left alone when
the convolution's output, weight or bias has another reader, the result is
a program output, or the convolution is transposed; the input program is
not modified."""

import torch
from program_interpreter import PlanInterpreter

from executorch.exir import to_edge
from executorch.exir.dialects._ops import ops as exir_ops
from executorch.exir.passes.fold_batch_norm import fold_batch_norm

BATCH_NORM = exir_ops.edge.aten._native_batch_norm_legit_no_training.default


def edge_of(module, *inputs):
    return to_edge(torch.export.export(module.eval(), inputs))


def batch_norms(program):
    return sum(n.target == BATCH_NORM for n in program.graph.nodes)


def run(manager, *inputs):
    plan = manager.executorch_program.executionPlan[0]
    return PlanInterpreter(plan, manager.constant_data).run(inputs)


def trained_batch_norm(channels, dims=2):
    bn = (torch.nn.BatchNorm2d if dims == 2 else torch.nn.BatchNorm1d)(channels)
    with torch.no_grad():
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-1, 1)
    return bn


class ConvBn(torch.nn.Module):
    def __init__(self, bias=True, dims=2, transposed=False):
        super().__init__()
        if transposed:
            self.conv = torch.nn.ConvTranspose2d(3, 6, 3, bias=bias)
        else:
            conv = torch.nn.Conv2d if dims == 2 else torch.nn.Conv1d
            self.conv = conv(3, 6, 3, padding=1, bias=bias)
        self.bn = trained_batch_norm(6, dims)

    def forward(self, x):
        return self.bn(self.conv(x)).relu() * 2


def test_batch_norms_fold_into_convolutions():
    torch.manual_seed(0)
    for bias, dims in [(True, 2), (False, 2), (True, 1)]:
        model = ConvBn(bias=bias, dims=dims).eval()
        x = torch.randn(2, 3, 9, 7) if dims == 2 else torch.randn(2, 3, 11)
        edge = edge_of(model, x)
        program = edge.exported_program()
        folded = fold_batch_norm(program)
        assert batch_norms(folded) == 0, (bias, dims)
        assert batch_norms(program) == 1  # the input program is unchanged
        # Only the folded weight and bias remain of the constants.
        assert not folded.state_dict
        assert sorted(t.shape for t in folded.constants.values()) == sorted(
            [torch.Size([6]), model.conv.weight.shape]
        )
        manager = edge.to_executorch()
        with torch.no_grad():
            expected = model(x)
        torch.testing.assert_close(run(manager, x)[0], expected, rtol=1e-5, atol=1e-5)


def test_what_would_change_results_or_size_is_left_alone():
    torch.manual_seed(0)
    x = torch.randn(1, 3, 8, 8)

    class ConvRead(ConvBn):  # the convolution's output read twice
        def forward(self, x):
            y = self.conv(x)
            return self.bn(y) + y

    class Returned(ConvBn):  # the batch norm's result is an output
        def forward(self, x):
            return self.bn(self.conv(x))

    class SharedWeight(ConvBn):  # the weight read by a second convolution
        def forward(self, x):
            return self.bn(self.conv(x)) + torch.nn.functional.conv2d(
                x, self.conv.weight, padding=1
            )

    for model in [ConvRead(), Returned(), SharedWeight(), ConvBn(transposed=True)]:
        program = edge_of(model, x).exported_program()
        assert fold_batch_norm(program) is program, type(model).__name__
        manager = edge_of(model, x).to_executorch()
        with torch.no_grad():
            torch.testing.assert_close(run(manager, x)[0], model(x), rtol=1e-5, atol=1e-5)
