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
