"""MobileNetV3-Small (Howard et al., 2019) for 224x224 RGB images: inverted
residual blocks with 3x3 or 5x5 depthwise convolutions, squeeze-and-excite
gates (hardsigmoid) and hardswish activations in the deeper half."""

import torch

from .layers import ConvBNActivation, init_as_trained, make_divisible

# (kernel, expanded channels, output channels, squeeze-excite, hardswish,
# stride)
_BLOCKS = [
    (3, 16, 16, True, False, 2),
    (3, 72, 24, False, False, 2),
    (3, 88, 24, False, False, 1),
    (5, 96, 40, True, True, 2),
    (5, 240, 40, True, True, 1),
    (5, 240, 40, True, True, 1),
    (5, 120, 48, True, True, 1),
    (5, 144, 48, True, True, 1),
    (5, 288, 96, True, True, 2),
    (5, 576, 96, True, True, 1),
    (5, 576, 96, True, True, 1),
]


class SqueezeExcite(torch.nn.Module):
    """Scales each channel by a gate computed from the channel means."""

    def __init__(self, channels: int):
        super().__init__()
        squeezed = make_divisible(channels // 4)
        self.reduce = torch.nn.Conv2d(channels, squeezed, 1)
        self.expand = torch.nn.Conv2d(squeezed, channels, 1)

    def forward(self, x):
        gate = torch.nn.functional.adaptive_avg_pool2d(x, 1)
        gate = self.expand(torch.relu(self.reduce(gate)))
        return x * torch.nn.functional.hardsigmoid(gate)


class InvertedResidual(torch.nn.Module):
    def __init__(
        self, in_channels, kernel, expanded, out_channels, se, hardswish, stride
    ):
        super().__init__()
        activation = torch.nn.Hardswish if hardswish else torch.nn.ReLU
        layers = []
        if expanded != in_channels:
            layers.append(
                ConvBNActivation(in_channels, expanded, 1, activation=activation)
            )
        layers.append(
            ConvBNActivation(
                expanded,
                expanded,
                kernel,
                stride,
                groups=expanded,
                activation=activation,
            )
        )
        if se:
            layers.append(SqueezeExcite(expanded))
        layers.append(ConvBNActivation(expanded, out_channels, 1, activation=None))
        self.body = torch.nn.Sequential(*layers)
        self.residual = stride == 1 and in_channels == out_channels

    def forward(self, x):
        y = self.body(x)
        return x + y if self.residual else y


class MobileNetV3Small(torch.nn.Module):
    def __init__(self, num_classes: int = 1000):
        super().__init__()
        features = [ConvBNActivation(3, 16, 3, 2, activation=torch.nn.Hardswish)]
        channels = 16
        for kernel, expanded, out, se, hardswish, stride in _BLOCKS:
            features.append(
                InvertedResidual(channels, kernel, expanded, out, se, hardswish, stride)
            )
            channels = out
        features.append(
            ConvBNActivation(channels, 6 * channels, 1, activation=torch.nn.Hardswish)
        )
        self.features = torch.nn.Sequential(*features)
        self.classifier = torch.nn.Sequential(
            torch.nn.Linear(6 * channels, 1024),
            torch.nn.Hardswish(),
            torch.nn.Dropout(0.2),
            torch.nn.Linear(1024, num_classes),
        )

    def forward(self, x):
        x = torch.nn.functional.adaptive_avg_pool2d(self.features(x), 1)
        return self.classifier(torch.flatten(x, 1))


def mobilenet_v3_small():
    model = MobileNetV3Small()
    init_as_trained(model)
    return model, (torch.randn(1, 3, 224, 224),)
