"""The staged harness itself: every stage leaves its artifact, skipped stages
are filled in, a wrong output fails the comparison, and the tolerance table
has one entry per dtype."""

import pytest
import torch

from executorch.backends.test.harness import Tester, tolerance_for
from executorch.backends.test.harness.tester import ACCUMULATING, EXACT, TOLERANCES
from executorch.test.modules import Lambda


def inputs():
    return (torch.randn(3, 4, generator=torch.Generator().manual_seed(0)),)


def test_stages_leave_their_artifacts():
    tester = Tester(Lambda(lambda x: torch.tanh(x) + 1), inputs())
    tester.export().to_edge().to_executorch().serialize()
    assert set(tester.stages) == {"export", "to_edge", "to_executorch", "serialize"}
    assert isinstance(tester.get_artifact(), bytes)
    assert tester.get_artifact("export").graph_module is not None
    tester.run_method_and_compare_outputs()


def test_missing_stages_are_run_in_order():
    tester = Tester(Lambda(lambda x: x * 2), inputs())
    tester.run_method_and_compare_outputs(inputs=(torch.ones(3, 4),))
    assert list(tester.stages) == ["export", "to_edge", "to_executorch", "serialize"]


def test_partition_stage_lowers_to_a_backend():
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
        XnnpackPartitioner,
    )

    tester = Tester(torch.nn.Linear(4, 2), inputs())
    tester.export().to_edge().partition(XnnpackPartitioner()).serialize()
    graph = tester.get_artifact("partition").exported_program().graph_module.graph
    assert any("executorch_call_delegate" in str(n.target) for n in graph.nodes)
    tester.run_method_and_compare_outputs(precision=ACCUMULATING)


def test_a_wrong_output_fails_naming_the_output():
    tester = Tester(Lambda(lambda x: (x + 1, x * 3)), inputs())
    with pytest.raises(AssertionError, match="output 1"):
        tester.run_method_and_compare_outputs(reference=lambda x: (x + 1, x * 3.001))


def test_tolerance_table():
    assert tolerance_for(torch.int64) == dict(rtol=0, atol=0)
    assert tolerance_for(torch.bool) == dict(rtol=0, atol=0)
    assert tolerance_for(torch.float32) == dict(rtol=1.3e-6, atol=1e-5)
    assert tolerance_for(torch.float32, EXACT) == dict(rtol=0, atol=0)
    assert tolerance_for(torch.float32, ACCUMULATING) == dict(rtol=1e-4, atol=1e-5)
    assert tolerance_for(torch.bfloat16)["rtol"] > tolerance_for(torch.float32)["rtol"]
    assert set(TOLERANCES) >= {torch.float16, torch.float64, torch.complex64}
