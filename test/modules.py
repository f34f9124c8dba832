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
