"""XNNPACK-delegated programs cross-run with upstream ExecuTorch: programs
our XnnpackPartitioner exports run on upstream's runtime, and programs
upstream's XnnpackPartitioner exports (weights in named data) run on ours,
both matching eager. The models are those of
`python -m executorch.backends.xnnpack.scripts.cross_run`: a CNN,
MobileNetV2, MobileNetV3-Small, ResNet-18 (the ImageNet models at 64x64
here), a transformer encoder and an MLP with a dynamic batch size. Each
side exports each model once per module; upstream's export overlaps ours.

Upstream's own export of MobileNetV2 and MobileNetV3-Small takes 15-20 s
of CPU each, too much for the normal suite: their upstream -> ours runs
need EXECUTORCH_FULL_INTEROP=1 (the cross_run script runs them always).
Needs upstream ExecuTorch in its own environment (the `upstream_python`
fixture); skipped without it.
"""

import os

import pytest
import torch

from executorch.backends.xnnpack.scripts.cross_run import cross_run, MODELS
from executorch.exir._serialize._program import deserialize_pte_binary

_UPSTREAM_EXPORT_COSTLY = {"mobilenet_v2", "mobilenet_v3_small"}
_FULL = bool(os.environ.get("EXECUTORCH_FULL_INTEROP"))
UPSTREAM_EXPORTS = sorted(
    name for name in MODELS if _FULL or name not in _UPSTREAM_EXPORT_COSTLY
)


def _upstream_export(name):
    """`name`, skipped (with the reason) when upstream does not export it."""
    marks = []
    if name not in UPSTREAM_EXPORTS:
        marks.append(
            pytest.mark.skip(
                reason="upstream's export of this model costs 15-20 s of CPU: "
                "set EXECUTORCH_FULL_INTEROP=1"
            )
        )
    return pytest.param(name, marks=marks)


UPSTREAM_PROGRAMS = [_upstream_export(name) for name in sorted(MODELS)]


@pytest.fixture(scope="module")
def runs(upstream_python, tmp_path_factory):
    directory = tmp_path_factory.mktemp("xnnpack_interop")
    return cross_run(
        sorted(MODELS),
        upstream_python,
        str(directory),
        image_size=64,
        upstream_exports=UPSTREAM_EXPORTS,
    )


def _assert_matches(got, expected):
    assert not isinstance(got, str), got
    assert len(got) == len(expected)
    for outputs, want in zip(got, expected):
        assert len(outputs) == len(want)
        for g, e in zip(outputs, want):
            # fp32: XNNPACK sums in another order than eager (measured
            # <= 1.2e-5 on these models).
            torch.testing.assert_close(g, e, rtol=1e-4, atol=1e-4)


def _xnnpack_delegates(pte: bytes) -> int:
    (plan,) = deserialize_pte_binary(pte).program.executionPlan
    ids = [d.id.decode() if isinstance(d.id, bytes) else d.id for d in plan.delegates]
    return ids.count("XnnpackBackend")


@pytest.mark.parametrize("name", sorted(MODELS))
def test_our_program_runs_on_upstream_runtime(runs, name):
    run = runs[name]
    assert _xnnpack_delegates(run.ours_pte) >= 1
    _assert_matches(run.ours_on_upstream, run.expected)


@pytest.mark.parametrize("name", UPSTREAM_PROGRAMS)
def test_upstream_program_runs_on_our_runtime(runs, name):
    run = runs[name]
    assert _xnnpack_delegates(run.upstream_pte) >= 1
    # Upstream keeps delegate weights in the program's named data.
    assert deserialize_pte_binary(run.upstream_pte).named_data
    _assert_matches(run.upstream_on_ours, run.expected)


@pytest.mark.parametrize("name", UPSTREAM_PROGRAMS)
def test_our_program_is_no_larger_than_upstreams(runs, name):
    run = runs[name]
    # Our dynamic-shape extension fields cost a few bytes per node.
    assert len(run.ours_pte) <= len(run.upstream_pte) * 1.03 + 64
