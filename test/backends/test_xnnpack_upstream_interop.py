"""XNNPACK-delegated programs cross-run with upstream ExecuTorch: programs
our XnnpackPartitioner exports run on upstream's runtime, and programs
upstream's XnnpackPartitioner exports (weights in named data) run on ours,
both matching eager. A few small models here; the full set (MobileNetV2,
MobileNetV3-Small, ResNet-18, ...) runs with
`python -m executorch.backends.xnnpack.scripts.cross_run`.

Needs upstream ExecuTorch in its own environment (the `upstream_python`
fixture); skipped without it.
"""

import pytest
import torch

from executorch.backends.xnnpack.scripts.cross_run import cross_run
from executorch.exir._serialize._program import deserialize_pte_binary

MODELS = ["cnn", "transformer_encoder", "dynamic_mlp"]


@pytest.fixture(scope="module")
def runs(upstream_python, tmp_path_factory):
    directory = tmp_path_factory.mktemp("xnnpack_interop")
    return cross_run(MODELS, upstream_python, str(directory))


def _assert_matches(got, expected):
    assert not isinstance(got, str), got
    assert len(got) == len(expected)
    for outputs, want in zip(got, expected):
        assert len(outputs) == len(want)
        for g, e in zip(outputs, want):
            torch.testing.assert_close(g, e, rtol=1e-4, atol=1e-4)


def _xnnpack_delegates(pte: bytes) -> int:
    (plan,) = deserialize_pte_binary(pte).program.executionPlan
    ids = [d.id.decode() if isinstance(d.id, bytes) else d.id for d in plan.delegates]
    return ids.count("XnnpackBackend")


@pytest.mark.parametrize("name", MODELS)
def test_our_program_runs_on_upstream_runtime(runs, name):
    run = runs[name]
    assert _xnnpack_delegates(run.ours_pte) >= 1
    _assert_matches(run.ours_on_upstream, run.expected)


@pytest.mark.parametrize("name", MODELS)
def test_upstream_program_runs_on_our_runtime(runs, name):
    run = runs[name]
    assert _xnnpack_delegates(run.upstream_pte) >= 1
    # Upstream keeps delegate weights in the program's named data.
    assert deserialize_pte_binary(run.upstream_pte).named_data
    _assert_matches(run.upstream_on_ours, run.expected)


@pytest.mark.parametrize("name", MODELS)
def test_our_program_is_no_larger_than_upstreams(runs, name):
    run = runs[name]
    # Our dynamic-shape extension fields cost a few bytes per node.
    assert len(run.ours_pte) <= len(run.upstream_pte) * 1.03 + 64
