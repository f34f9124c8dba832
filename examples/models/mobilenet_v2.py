"""MobileNetV2 (Sandler et al., 2018) for 224x224 RGB images: a strided
stem, 17 inverted residual blocks (1x1 expansion, 3x3 depthwise, linear 1x1
projection, ReLU6 activations) and a 1280-wide head."""

import torch

from .layers import ConvBNActivation, init_as_trained, make_divisible

# (expansion factor, output channels, repeats, stride of the first repeat)
_BLOCKS = [
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
]


class InvertedResidual(torch.nn.Module):
    def __init__(
        self, in_channels: int, out_channels: int, stride: int, expansion: int
    ):
        super().__init__()
        hidden = in_channels * expansion
        layers = []
        if expansion != 1:
            layers.append(
                ConvBNActivation(in_channels, hidden, 1, activation=torch.nn.ReLU6)
            )
        layers += [
            ConvBNActivation(
                hidden, hidden, 3, stride, groups=hidden, activation=torch.nn.ReLU6
            ),
            ConvBNActivation(hidden, out_channels, 1, activation=None),
        ]
        self.body = torch.nn.Sequential(*layers)
        self.residual = stride == 1 and in_channels == out_channels

    def forward(self, x):
        y = self.body(x)
        return x + y if self.residual else y


class MobileNetV2(torch.nn.Module):
    def __init__(self, num_classes: int = 1000, width: float = 1.0):
        super().__init__()
        channels = make_divisible(32 * width)
        features = [ConvBNActivation(3, channels, 3, 2, activation=torch.nn.ReLU6)]
        for expansion, out, repeats, stride in _BLOCKS:
            out = make_divisible(out * width)
            for i in range(repeats):
                features.append(
                    InvertedResidual(channels, out, stride if i == 0 else 1, expansion)
                )
                channels = out
        last = make_divisible(1280 * max(1.0, width))
        features.append(ConvBNActivation(channels, last, 1, activation=torch.nn.ReLU6))
        self.features = torch.nn.Sequential(*features)
        self.classifier = torch.nn.Sequential(
            torch.nn.Dropout(0.2), torch.nn.Linear(last, num_classes)
        )

    def forward(self, x):
        x = torch.nn.functional.adaptive_avg_pool2d(self.features(x), 1)
        return self.classifier(torch.flatten(x, 1))


def mobilenet_v2():
    model = MobileNetV2()
    init_as_trained(model)
    return model, (torch.randn(1, 3, 224, 224),)
