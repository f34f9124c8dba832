"""ResNet-18 (He et al., 2015) for 224x224 RGB images: a 7x7 strided stem
with max pooling, four stages of two basic blocks (64 to 512 channels,
strided 1x1 projection shortcuts where the shape changes) and a linear
classifier."""

import torch

from .layers import ConvBNActivation, init_as_trained


class BasicBlock(torch.nn.Module):
    def __init__(self, in_channels: int, out_channels: int, stride: int):
        super().__init__()
        self.body = torch.nn.Sequential(
            ConvBNActivation(in_channels, out_channels, 3, stride),
            ConvBNActivation(out_channels, out_channels, 3, activation=None),
        )
        self.shortcut = (
            ConvBNActivation(in_channels, out_channels, 1, stride, activation=None)
            if stride != 1 or in_channels != out_channels
            else torch.nn.Identity()
        )

    def forward(self, x):
        return torch.relu(self.body(x) + self.shortcut(x))


class ResNet18(torch.nn.Module):
    def __init__(self, num_classes: int = 1000):
        super().__init__()
        layers = [
            ConvBNActivation(3, 64, 7, 2),
            torch.nn.MaxPool2d(3, 2, 1),
        ]
        channels = 64
        for width, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            layers += [BasicBlock(channels, width, stride), BasicBlock(width, width, 1)]
            channels = width
        self.features = torch.nn.Sequential(*layers)
        self.fc = torch.nn.Linear(channels, num_classes)

    def forward(self, x):
        x = torch.nn.functional.adaptive_avg_pool2d(self.features(x), 1)
        return self.fc(torch.flatten(x, 1))


def resnet18():
    model = ResNet18()
    init_as_trained(model)
    return model, (torch.randn(1, 3, 224, 224),)
