"""Example models, each with example inputs, by name.

`get_model(name)` returns `(model, example_inputs)` with the model in eval
mode and its weights drawn from a fixed seed, so an export and an eager run
of the same name see the same module.
"""

from typing import Callable, Dict, Tuple

import torch

from . import small_models

MODELS: Dict[str, Callable[[], Tuple[torch.nn.Module, tuple]]] = {
    "add": small_models.add,
    "add_mul": small_models.add_mul,
    "linear": small_models.linear,
    "mlp": small_models.mlp,
    "softmax": small_models.softmax,
    "cnn": small_models.cnn,
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
