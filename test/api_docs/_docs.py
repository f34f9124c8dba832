"""Shared by the documentation-example tests: running a program on our
runtime and comparing with eager PyTorch.

Tolerances: float32 rtol=atol=1e-5 for elementwise work, 1e-4 where matrix
products or convolutions sum in a different order than eager does.
"""

import torch

from executorch.runtime import Runtime

FLOAT_TOL = dict(rtol=1e-5, atol=1e-5)
MATMUL_TOL = dict(rtol=1e-4, atol=1e-4)


def run(program, inputs, method="forward"):
    """Runs `program` (`.pte` bytes or a path) on our runtime."""
    loaded = Runtime.get().load_program(program)
    return loaded.load_method(method).execute(list(inputs))


def assert_matches_eager(actual, expected, tol=FLOAT_TOL):
    if isinstance(expected, torch.Tensor):
        expected = (expected,)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        torch.testing.assert_close(got, want, **tol)


def seeded(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))
