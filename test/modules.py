"""Small modules the Python test suites export."""

import torch


class Lambda(torch.nn.Module):
    """Wraps a function of tensors as a module."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


class MLP(torch.nn.Module):
    """16 features in, 4 class probabilities out, through GELU and ReLU."""

    def __init__(self):
        super().__init__()
        self.layers = torch.nn.Sequential(
            torch.nn.Linear(16, 32),
            torch.nn.GELU(),
            torch.nn.Linear(32, 32),
            torch.nn.ReLU(),
            torch.nn.Linear(32, 4),
        )

    def forward(self, x):
        return self.layers(x).softmax(-1)


class ReluMlp(torch.nn.Module):
    """6 features in, 4 class probabilities out, through one ReLU (the line
    RELU_MLP_RELU_LINE of this file)."""

    def __init__(self):
        super().__init__()
        self.first = torch.nn.Linear(6, 8)
        self.second = torch.nn.Linear(8, 4)

    def forward(self, x):
        hidden = torch.relu(self.first(x))
        return self.second(hidden).softmax(-1)


RELU_MLP_RELU_LINE = ReluMlp.forward.__code__.co_firstlineno + 1


def relu_becomes_abs(graph_module):
    """A broken compiler pass (for ExecutorchBackendConfig(passes=...)):
    computes abs where the model asked for relu."""
    from torch.fx.passes.infra.pass_base import PassResult

    from executorch.exir.dialects._ops import ops as exir_ops

    for node in graph_module.graph.nodes:
        if node.target == exir_ops.edge.aten.relu.default:
            node.target = exir_ops.edge.aten.abs.default
    graph_module.recompile()
    return PassResult(graph_module, True)


class CondLinear(torch.nn.Module):
    """torch.cond on a data-dependent predicate (the sign of x's sum), both
    branches through one shared linear layer."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 3)

    def forward(self, x):
        return torch.cond(
            x.sum() > 0,
            lambda x: (self.linear(x).relu(),),
            lambda x: (self.linear(x) * 2 - x,),
            (x,),
        )


class ResNetBlock(torch.nn.Module):
    """A ResNet basic block (conv3x3 -> batch norm -> ReLU -> conv3x3 ->
    batch norm, plus the input, ReLU) whose 3x3 stride-1 convolutions have
    the channels and pixels that Winograd takes (kernels/optimized/
    cpu/winograd.h), with batch norm statistics away from the identity."""

    def __init__(self, channels=24):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.norm1 = torch.nn.BatchNorm2d(channels)
        self.conv2 = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.norm2 = torch.nn.BatchNorm2d(channels)
        with torch.no_grad():
            for norm in (self.norm1, self.norm2):
                norm.running_mean.uniform_(-0.5, 0.5)
                norm.running_var.uniform_(0.5, 2)
                norm.weight.uniform_(0.5, 1.5)
                norm.bias.uniform_(-0.5, 0.5)
        self.eval()

    def forward(self, x):
        y = torch.relu(self.norm1(self.conv1(x)))
        return torch.relu(x + self.norm2(self.conv2(y)))
