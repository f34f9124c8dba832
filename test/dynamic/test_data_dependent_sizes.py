"""Operators whose output size depends on tensor values (nonzero,
masked_select): planned at the largest size their inputs allow, run at the
size the data gives, compared with eager through the staged harness at
"exact" precision (the outputs are selected elements and indices, no
arithmetic)."""

import pytest
import torch
from torch.export import Dim

from executorch.backends.test.harness import Tester
from executorch.backends.test.harness.tester import EXACT
from executorch.exir import EdgeCompileConfig, to_edge
from executorch.test.modules import Lambda

# masked_select is not core ATen; it stays whole and runs on its kernel.
MASKED_SELECT_CONFIG = EdgeCompileConfig(
    _core_aten_ops_exception_list=[torch.ops.aten.masked_select.default]
)


def _load(fn, example, config=None):
    return Tester(Lambda(fn), example, compile_config=config).serialize()


def _check(tester, fn, inputs):
    tester.run_method_and_compare_outputs(inputs, precision=EXACT, reference=fn)


def test_nonzero_runs_at_every_count_of_true_elements():
    module = _load(torch.nonzero, (torch.ones(3, 4),))
    for kept in (0, 1, 7, 12):
        x = torch.zeros(12)
        x[torch.randperm(12)[:kept]] = 1.0
        _check(module, torch.nonzero, (x.reshape(3, 4),))


@pytest.mark.parametrize(
    "self_shape, mask_shape",
    [
        ((3, 4), (3, 4)),
        # The mask broadcasts self to more elements than self has.
        ((4,), (3, 4)),
        ((3, 1), (2, 3, 4)),
        ((), ()),
    ],
)
def test_masked_select_is_planned_for_the_broadcast_shape(self_shape, mask_shape):
    example = (torch.randn(self_shape), torch.ones(mask_shape, dtype=torch.bool))
    module = _load(torch.masked_select, example, MASKED_SELECT_CONFIG)
    for keep in (1.0, 0.5, 0.0):
        mask = torch.rand(mask_shape) < keep
        _check(module, torch.masked_select, (torch.randn(self_shape), mask))


def test_size_bound_beyond_int32_is_refused_at_export():
    ep = torch.export.export(
        Lambda(lambda x: x * 2),
        (torch.randn(4),),
        dynamic_shapes={"args": ({0: Dim("n", max=2**33)},)},
    )
    with pytest.raises(ValueError, match="upper bound 8589934592, more than a .pte"):
        to_edge(ep).to_executorch()
