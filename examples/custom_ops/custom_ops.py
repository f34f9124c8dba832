"""The Python side of the custom operator my_ops::scaled_tanh: its schema
and reference implementation for torch, so that a module calling
torch.ops.my_ops.scaled_tanh exports, and its out variant, which the
compiler's out-variant pass turns the call into (the runtime kernel is
op_scaled_tanh.cpp, declared in custom_ops.yaml).

Importing this module registers the operator (once per process).
"""

import os

import torch

CUSTOM_OPS_YAML = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "custom_ops.yaml"
)

_lib = torch.library.Library("my_ops", "DEF")
_lib.define("scaled_tanh(Tensor input, float scale) -> Tensor")
_lib.define(
    "scaled_tanh.out(Tensor input, float scale, *, Tensor(a!) out) -> Tensor(a!)"
)


def scaled_tanh_reference(input: torch.Tensor, scale: float) -> torch.Tensor:
    return scale * torch.tanh(input)


@torch.library.impl(_lib, "scaled_tanh", "CompositeExplicitAutograd")
def _scaled_tanh(input, scale):
    return scaled_tanh_reference(input, scale)


@torch.library.impl(_lib, "scaled_tanh.out", "CompositeExplicitAutograd")
def _scaled_tanh_out(input, scale, *, out):
    out.copy_(scaled_tanh_reference(input, scale))
    return out


@torch.library.register_fake("my_ops::scaled_tanh")
def _scaled_tanh_fake(input, scale):
    return torch.empty_like(input)


@torch.library.register_fake("my_ops::scaled_tanh.out")
def _scaled_tanh_out_fake(input, scale, *, out):
    return out
