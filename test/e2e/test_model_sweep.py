"""scripts/model_sweep.py, the sweep of Hugging Face architectures and
random layer stacks (static and with a dynamic token count) through both
paths: a short run of each family, and its verdicts on a model our runtime
gets wrong and on a child that dies."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
import torch

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "model_sweep.py"


@pytest.fixture(scope="module")
def sweep():
    spec = importlib.util.spec_from_file_location("model_sweep", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_family_runs_like_eager():
    pytest.importorskip("transformers")
    names = ["hf:bert", "random:1", "dynamic:0"]  # a CNN, a sequence model
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *names],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "ok=3", done.stdout


def test_random_models_are_reproducible_and_varied(sweep):
    kinds = set()
    for seed in range(20):
        first, second = sweep.build_random(seed), sweep.build_random(seed)
        assert first.model.kinds == second.model.kinds
        assert first.inputs[0].shape == second.inputs[0].shape
        kinds.update(first.model.kinds)
    # Both families appear, with their characteristic steps.
    assert {"depthwise", "conv", "residual"} <= kinds
    assert {"linear", "norm", "softmax"} <= kinds


def test_dynamic_models_run_at_other_lengths(sweep):
    for seed in range(10):
        case = sweep.build(f"dynamic:{seed}")
        assert "transpose_linear" not in case.model.kinds
        lengths = {x.shape[1] for (x,) in (case.inputs, *case.other_inputs)}
        assert len(lengths) >= 3, lengths


def test_a_wrong_output_is_a_mismatch(sweep, monkeypatch):
    from executorch.backends.test.harness import Tester

    run_method = Tester.run_method

    def off_by_a_little(self, *args, **kwargs):
        return [t + 1e-3 for t in run_method(self, *args, **kwargs)]

    monkeypatch.setattr(Tester, "run_method", off_by_a_little)
    row = sweep.run_one("random:0")
    assert row["verdict"] == "mismatch", row
    assert row["path"] == "default, 1 thread(s)"


def test_a_child_that_dies_in_our_code_is_a_crash(sweep, monkeypatch, tmp_path):
    # A stand-in child that dies after reaching our stages, and one that
    # dies while PyTorch still builds the model.
    for marker, verdict in (("#stage ours", "crash"), ("#stage build", "skipped")):
        child = tmp_path / f"child_{verdict}.py"
        child.write_text(f"import os\nprint({marker!r}, flush=True)\nos.abort()\n")
        monkeypatch.setattr(sweep, "__file__", str(child))
        row = sweep.run_in_child("random:0", timeout=60)
        assert row["verdict"] == verdict, row
        assert "exit code" in row["reason"]


def test_a_model_torch_cannot_export_is_skipped(sweep, monkeypatch):
    def unexportable(name):
        class DataDependent(torch.nn.Module):
            def forward(self, x):
                return x[: int(x.sum() > 0) + 1]

        return sweep.Case(DataDependent(), (torch.randn(3),))

    monkeypatch.setattr(sweep, "build", unexportable)
    assert sweep.run_one("random:0")["verdict"] == "skipped"


def test_rounding_is_judged_against_a_float64_run(sweep):
    model, inputs = sweep.build_random(3)[:2]
    model.eval()
    with torch.no_grad():
        eager = model(*inputs)
        exact = model.double()(*(x.double() for x in inputs)).float()
    model.float()

    class Outputs:
        """A tester whose program returns `outputs`."""

        def __init__(self, outputs):
            self.reference, self.outputs = model, outputs

        def run_method(self, inputs):
            return [self.outputs]

    ratio = sweep.error_ratio_to_eager
    assert ratio(Outputs(eager), inputs) == pytest.approx(1.0)
    assert ratio(Outputs(exact), inputs) < 1.0
    assert ratio(Outputs(eager + 1e-2), inputs) > sweep.ROUNDING_RATIO


@pytest.mark.parametrize("name", ["bert", "hf:", "random:x", "dynamic:-1", "cnn:3"])
def test_a_bad_name_is_refused_before_anything_runs(name):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "random:0", name],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{name!r}: expected hf:<model_type>" in done.stderr
    assert done.stdout == ""  # random:0 did not run either
