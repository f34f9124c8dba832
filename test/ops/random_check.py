"""Property checks for random operators, whose values cannot match eager.

Our kernels draw from their own generator (kernels/portable/cpu/op_random.cpp),
so rand, randn, randperm and training-mode dropout are checked by what any
correct implementation must satisfy instead of by value:
- rand: every value in [0, 1); sample mean and variance within 5 standard
  errors of 1/2 and 1/12.
- randn: every value finite; sample mean and variance within 5 standard
  errors of 0 and 1.
- randperm: sorted, the values are exactly 0 .. n-1.
- native_dropout: at inference (train=False) or p == 0 the input itself
  and an all-true mask; in training the mask is bool, every element is either
  dropped (0, mask false) or kept and scaled by 1 / (1 - p) (mask true,
  within the dtype's tolerance); the kept fraction is within 5 standard
  errors of 1 - p.
The statistical bounds fail a correct kernel with probability below 1e-6
per check; samples are large enough (thousands of values) for the bounds to
catch a wrong distribution (e.g. rand scaled by 0.9 or a biased mask).
"""

import math
from typing import Callable, Dict, List, Optional, Sequence

import torch

from executorch.backends.test.harness.tester import ONE_OP, tolerance_for

# Standard errors a sample statistic may stray from its expectation.
SIGMAS = 5.0


def _moments(values: torch.Tensor, mean: float, variance: float, fourth: float):
    """Why the sample mean or variance of `values` is implausible for a
    distribution with the given mean, variance and fourth central moment,
    or None."""
    x = values.double().flatten()
    n = x.numel()
    if n < 2:
        return None
    got_mean = float(x.mean())
    got_var = float(x.var(unbiased=True))
    mean_bound = SIGMAS * math.sqrt(variance / n)
    var_bound = SIGMAS * math.sqrt((fourth - variance**2) / n)
    if abs(got_mean - mean) > mean_bound:
        return f"mean {got_mean:.4g} is not within {mean_bound:.3g} of {mean}"
    if abs(got_var - variance) > var_bound:
        return f"variance {got_var:.4g} is not within {var_bound:.3g} of {variance:.4g}"
    return None


def _rand(args, outputs) -> Optional[str]:
    (out,) = outputs
    values = out.double()
    if values.numel() and (values.min() < 0 or values.max() >= 1):
        return f"values outside [0, 1): min {values.min():.4g}, max {values.max():.4g}"
    return _moments(values, 0.5, 1 / 12, 1 / 80)


def _randn(args, outputs) -> Optional[str]:
    (out,) = outputs
    values = out.double()
    if not bool(values.isfinite().all()):
        return "non-finite values"
    return _moments(values, 0.0, 1.0, 3.0)


def _randperm(args, outputs) -> Optional[str]:
    (out,) = outputs
    n = args[0]
    got = sorted(int(v) for v in out.tolist())
    if got != list(range(n)):
        return f"not a permutation of 0..{n - 1}: sorted values {got[:10]}..."
    return None


def _dropout(args, outputs) -> Optional[str]:
    source, p = args[0], args[1]
    train = args[2] if len(args) > 2 else True
    out, mask = outputs
    if mask.dtype != torch.bool:
        return f"mask has dtype {mask.dtype}"
    if train is False or p == 0:
        if not (torch.equal(out, source) and bool(mask.all())):
            return "at inference dropout must return its input and an all-true mask"
        return None
    scaled = (source.double() / (1 - p)) if p < 1 else torch.zeros_like(source.double())
    expected = torch.where(mask, scaled, torch.zeros_like(scaled))
    close = torch.isclose(
        out.double(), expected, **tolerance_for(source.dtype, ONE_OP), equal_nan=True
    )
    if not bool(close.all()):
        where = (~close).nonzero()[0].tolist()
        return (
            f"element {where} is {out[tuple(where)].item()!r}, expected 0 or the "
            f"input scaled by 1/(1-p) as its mask says"
        )
    n = mask.numel()
    if n and 0 < p < 1:
        kept = float(mask.double().mean())
        bound = SIGMAS * math.sqrt(p * (1 - p) / n)
        if abs(kept - (1 - p)) > bound:
            return f"kept fraction {kept:.4g} is not within {bound:.3g} of {1 - p}"
    return None


# name -> (check(sample args, the sample's outputs) -> reason or None,
#          what the check verifies, for the coverage table)
PROPERTY_CHECKS: Dict[str, tuple] = {
    "aten::rand.default": (_rand, "values in [0, 1), mean and variance of U(0, 1)"),
    "aten::randn.default": (_randn, "finite values, mean and variance of N(0, 1)"),
    "aten::randperm.default": (_randperm, "a permutation of 0 .. n-1"),
    "aten::native_dropout.default": (
        _dropout,
        "each element dropped (0) or scaled by 1/(1-p) as the bool mask says; "
        "kept fraction near 1-p",
    ),
}


def check_properties(
    name: str, samples: Sequence, per_sample_outputs: List[list]
) -> Optional[str]:
    """Why the runtime's outputs violate `name`'s properties, or None (also
    when `name` has no property check)."""
    entry = PROPERTY_CHECKS.get(name)
    if entry is None:
        return None
    check: Callable = entry[0]
    for sample, outputs in zip(samples, per_sample_outputs):
        reason = check(sample.args, outputs)
        if reason:
            return f"{reason} [properties of {sample.describe()}]"
    return None
