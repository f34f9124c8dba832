"""Inputs outside a dynamic program's bounds, and a kernel whose result
would not fit its planned memory, fail with errors that say what and
where; the method keeps working at valid sizes afterwards."""

import pytest
import torch
from torch.export import Dim

from executorch.exir import to_edge

portable_lib = pytest.importorskip("executorch.extension.pybindings.portable_lib")


class AddScaled(torch.nn.Module):
    def forward(self, x, y):
        return x + 2 * y


def _manager():
    batch = Dim("batch", min=1, max=8)
    ep = torch.export.export(
        AddScaled(),
        (torch.randn(4, 3), torch.randn(4, 3)),
        dynamic_shapes={"x": {0: batch}, "y": {0: batch}},
    )
    return to_edge(ep).to_executorch()


def _still_works(module):
    x, y = torch.randn(5, 3), torch.randn(5, 3)
    (got,) = module.forward((x, y))
    torch.testing.assert_close(got, x + 2 * y)


def test_size_above_the_bound_names_input_dim_bound_and_size():
    module = portable_lib._load_for_executorch_from_buffer(_manager().buffer)
    with pytest.raises(
        RuntimeError, match="input 1: size 9 at dim 0 is above its upper bound 8"
    ):
        module.forward((torch.randn(8, 3), torch.randn(9, 3)))
    # Same element count as the bound, but dim 1 is over its size.
    with pytest.raises(
        RuntimeError, match="input 0: size 6 at dim 1 is above its upper bound 3"
    ):
        module.forward((torch.randn(4, 6), torch.randn(4, 6)))
    _still_works(module)


def test_inconsistent_dynamic_sizes_fail_at_the_kernel_that_combines_them():
    module = portable_lib._load_for_executorch_from_buffer(_manager().buffer)
    with pytest.raises(
        RuntimeError,
        match=r"does not broadcast.*instruction \d+ \(operator aten::add.out\)",
    ):
        module.forward((torch.randn(2, 3), torch.randn(3, 3)))
    _still_works(module)


def test_kernel_result_above_its_planned_capacity_fails_without_writing():
    manager = _manager()
    plan = manager.executorch_program.executionPlan[0]
    out = plan.values[plan.outputs[0]].val
    # A plan that gives the output room for 2 rows only.
    out.sizes = [2, 3]
    module = portable_lib._load_for_executorch_from_buffer(manager.buffer)
    x, y = torch.randn(2, 3), torch.randn(2, 3)
    torch.testing.assert_close(module.forward((x, y))[0], x + 2 * y)
    with pytest.raises(
        RuntimeError, match="exceeds the planned capacity of 6.*add.out"
    ):
        module.forward((torch.randn(3, 3), torch.randn(3, 3)))
    torch.testing.assert_close(module.forward((x, y))[0], x + 2 * y)
