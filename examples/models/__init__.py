"""Example models, each with example inputs, by name.

`get_model(name)` returns `(model, example_inputs)` with the model in eval
mode and its weights drawn from a fixed seed, so an export and an eager run
of the same name see the same module. Besides small test models there are
MobileNetV2, MobileNetV3-Small and ResNet-18 (224x224 images; the
architectures are written here, not taken from torchvision, and their
random weights get batch norm statistics as after training, see
`layers.init_as_trained`) and a small transformer encoder over token ids.
"""

from typing import Callable, Dict, Tuple

import torch

from . import mobilenet_v2, mobilenet_v3, resnet, small_models, transformer_encoder

MODELS: Dict[str, Callable[[], Tuple[torch.nn.Module, tuple]]] = {
    "add": small_models.add,
    "add_mul": small_models.add_mul,
    "linear": small_models.linear,
    "mlp": small_models.mlp,
    "softmax": small_models.softmax,
    "cnn": small_models.cnn,
    "mobilenet_v2": mobilenet_v2.mobilenet_v2,
    "mobilenet_v3_small": mobilenet_v3.mobilenet_v3_small,
    "resnet18": resnet.resnet18,
    "transformer_encoder": transformer_encoder.transformer_encoder,
    # The names upstream's examples use for the same architectures.
    "mv2": mobilenet_v2.mobilenet_v2,
    "mv3": mobilenet_v3.mobilenet_v3_small,
}


def get_model(name: str) -> Tuple[torch.nn.Module, tuple]:
    """Returns `(model, example_inputs)` for the model called `name`."""
    if name not in MODELS:
        raise KeyError(
            f"Unknown model '{name}'; available: {', '.join(sorted(MODELS))}"
        )
    torch.manual_seed(0)
    model, example_inputs = MODELS[name]()
    return model.eval(), example_inputs
