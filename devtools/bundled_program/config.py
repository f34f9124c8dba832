"""Test cases to bundle with a program: MethodTestCase (one run's inputs and
expected outputs) and MethodTestSuite (a method's test cases)."""

from dataclasses import dataclass
from typing import List, Optional, Sequence, Union

import torch
from torch.utils._pytree import tree_flatten

# What a bundled input or output may be.
ConfigValue = Union[torch.Tensor, int, bool, float]
MethodInputType = Sequence[ConfigValue]
MethodOutputType = Sequence[torch.Tensor]


def _flatten(values, what: str) -> List[ConfigValue]:
    leaves, _ = tree_flatten(values)
    for index, leaf in enumerate(leaves):
        if not isinstance(leaf, (torch.Tensor, int, bool, float)):
            raise TypeError(
                f"{what} {index} is a {type(leaf).__name__}; a bundled value is a "
                "tensor, int, bool or float"
            )
    return leaves


class MethodTestCase:
    """Inputs for one run of a method (nested lists, tuples and dicts are
    flattened in pytree order, as the program's inputs are) and, optionally,
    the outputs the run must give."""

    def __init__(
        self,
        inputs: MethodInputType,
        expected_outputs: Optional[MethodOutputType] = None,
    ) -> None:
        self.inputs: List[ConfigValue] = _flatten(inputs, "input")
        self.expected_outputs: List[ConfigValue] = (
            [] if expected_outputs is None else _flatten(expected_outputs, "output")
        )

    def __repr__(self) -> str:
        return (
            f"MethodTestCase({len(self.inputs)} inputs, "
            f"{len(self.expected_outputs)} expected outputs)"
        )


@dataclass
class MethodTestSuite:
    """The test cases of the method named `method_name`."""

    method_name: str
    test_cases: Sequence[MethodTestCase]
