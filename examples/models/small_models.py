"""Small models that run on the portable kernels; each factory returns
`(module, example_inputs)`."""

import torch


class Add(torch.nn.Module):
    def forward(self, x, y):
        return x + y


class AddMul(torch.nn.Module):
    def forward(self, x, y, z):
        return torch.add(x * y, z, alpha=2)


class Softmax(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


class Cnn(torch.nn.Module):
    """A LeNet-style classifier for 1x28x28 images: conv, batch norm, relu
    and pooling, then two fully connected layers."""

    def __init__(self, num_classes: int = 10):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(1, 8, kernel_size=5, padding=2),
            torch.nn.BatchNorm2d(8),
            torch.nn.ReLU(),
            torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(8, 16, kernel_size=5),
            torch.nn.ReLU(),
            torch.nn.AvgPool2d(2),
        )
        self.classifier = torch.nn.Sequential(
            torch.nn.Linear(16 * 5 * 5, 64),
            torch.nn.ReLU(),
            torch.nn.Linear(64, num_classes),
        )

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


def add():
    return Add(), (torch.ones(2, 3), torch.ones(2, 3))


def add_mul():
    return AddMul(), (torch.randn(3, 4), torch.randn(3, 4), torch.randn(4))


def linear():
    return torch.nn.Linear(16, 8), (torch.randn(4, 16),)


def mlp():
    layers = torch.nn.Sequential(
        torch.nn.Linear(32, 64),
        torch.nn.ReLU(),
        torch.nn.Linear(64, 64),
        torch.nn.ReLU(),
        torch.nn.Linear(64, 10),
    )
    return layers, (torch.randn(8, 32),)


def softmax():
    return Softmax(), (torch.randn(4, 10),)


def cnn():
    model = Cnn()
    # Non-trivial batch norm statistics, as after training.
    model.features[1].running_mean.uniform_(-0.2, 0.2)
    model.features[1].running_var.uniform_(0.5, 1.5)
    return model, (torch.randn(1, 1, 28, 28),)
