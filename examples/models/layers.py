"""Building blocks shared by the example CNNs, and the initialisation that
stands in for training."""

from typing import Optional, Type

import torch


def make_divisible(value: float, divisor: int = 8) -> int:
    """Rounds a channel count to a multiple of `divisor` (at least `divisor`)
    without going more than 10% below `value`, as the MobileNet papers do."""
    rounded = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


class ConvBNActivation(torch.nn.Sequential):
    """Convolution without bias, batch norm, then an optional activation;
    padding keeps the size for odd kernels at stride 1."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int = 3,
        stride: int = 1,
        groups: int = 1,
        activation: Optional[Type[torch.nn.Module]] = torch.nn.ReLU,
    ):
        layers = [
            torch.nn.Conv2d(
                in_channels,
                out_channels,
                kernel_size,
                stride,
                padding=(kernel_size - 1) // 2,
                groups=groups,
                bias=False,
            ),
            torch.nn.BatchNorm2d(out_channels),
        ]
        if activation is not None:
            layers.append(activation())
        super().__init__(*layers)


def init_as_trained(model: torch.nn.Module, in_channels: int = 3) -> None:
    """Gives a randomly initialised CNN the numeric character of a trained
    one: He-initialised convolutions, batch norms whose affine parameters are
    not the identity, and running statistics measured on random inputs (so
    activations keep a sane scale through the whole depth instead of
    vanishing or exploding; measured at 96x96, which is enough for the
    statistics and keeps this fast). Leaves the model in eval mode."""
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.Conv2d):
                torch.nn.init.kaiming_normal_(
                    module.weight, mode="fan_out", nonlinearity="relu"
                )
                if module.bias is not None:
                    module.bias.uniform_(-0.1, 0.1, generator=generator)
            elif isinstance(module, torch.nn.BatchNorm2d):
                module.weight.uniform_(0.5, 1.5, generator=generator)
                module.bias.uniform_(-0.2, 0.2, generator=generator)
                module.reset_running_stats()
                module.momentum = None  # a plain average over the batches
        model.train()
        for _ in range(2):
            model(torch.randn(4, in_channels, 96, 96, generator=generator))
    model.eval()
