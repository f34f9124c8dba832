"""Wire compatibility with upstream ExecuTorch: programs our compiler emits
run on upstream's runtime (its portable kernels) and match eager, and for
the same model we emit the same kernel calls as upstream's exporter.

Needs upstream ExecuTorch in its own environment (the `upstream_python`
fixture: EXECUTORCH_UPSTREAM_PYTHON, set by scripts/test.sh); skipped
without it.
"""

import subprocess
import textwrap

import pytest
import torch
from test_pipeline_against_eager import CASES

from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.exir._serialize._flatbuffer import Program, ProgramT
from executorch.test.modules import CondLinear

# For each <path>: runs <path>.pte on upstream's runtime with the inputs in
# <path>.in and saves the outputs (or the error text) to <path>.out.
_RUN_ON_UPSTREAM = textwrap.dedent("""
    import sys, torch
    from executorch.extension.pybindings.portable_lib import _load_for_executorch
    for path in sys.argv[1:]:
        try:
            module = _load_for_executorch(path + ".pte")
            result = list(module.run_method("forward", tuple(torch.load(path + ".in"))))
        except Exception as error:
            result = repr(error)
        torch.save(result, path + ".out")
    """)

# For each <path>: exports the ExportedProgram saved in <path>.ep with
# upstream's compiler into <path>.upstream.pte.
_EXPORT_WITH_UPSTREAM = textwrap.dedent("""
    import sys, torch
    from executorch.exir import to_edge
    for path in sys.argv[1:]:
        ep = torch.export.load(path + ".ep")
        with open(path + ".upstream.pte", "wb") as f:
            f.write(to_edge(ep).to_executorch().buffer)
    """)


def _upstream(python, script, paths):
    result = subprocess.run(
        [python, "-c", script, *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-4000:]


@pytest.fixture(scope="module")
def upstream_results(upstream_python, tmp_path_factory):
    """Outputs of every case's program (ours) on upstream's runtime."""
    directory = tmp_path_factory.mktemp("interop")
    paths = {}
    for name, (module, inputs) in CASES.items():
        path = directory / name
        manager = to_edge(torch.export.export(module.eval(), inputs)).to_executorch()
        manager.save(f"{path}.pte")
        torch.save(list(inputs), f"{path}.in")
        paths[name] = path
    _upstream(upstream_python, _RUN_ON_UPSTREAM, paths.values())
    return {name: torch.load(f"{path}.out") for name, path in paths.items()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_our_program_runs_on_upstream_runtime(upstream_results, name):
    module, inputs = CASES[name]
    got = upstream_results[name]
    assert not isinstance(got, str), got
    with torch.no_grad():
        want = module.eval()(*inputs)
    # The program's outputs are the leaves of the module's (nested) result.
    want = torch.utils._pytree.tree_leaves(want)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)


def _kernel_calls(pte: bytes):
    """(operator, overload, number of arguments) of each instruction, and the
    sizes of the outputs."""
    plan = ProgramT.InitFromObj(Program.GetRootAs(pte, 0)).executionPlan[0]
    calls = []
    for instruction in plan.chains[0].instructions:
        call = instruction.instrArgs
        op = plan.operators[call.opIndex]
        calls.append((op.name, op.overload, len(call.args)))
    return calls, [list(plan.values[i].val.sizes) for i in plan.outputs]


# Models whose programs should match upstream's call for call. Left out on
# purpose: Python-number operands (upstream lifts them to tensor constants
# where we call the Scalar overloads), contiguous clones (upstream calls
# `_clone_dim_order`, we keep `clone`) and reshapes of inputs (upstream
# aliases them too, we copy).
@pytest.mark.parametrize("name", ["linear", "mlp", "cnn", "layer_norm", "softmax"])
def test_same_kernel_calls_as_upstream(upstream_python, tmp_path, name):
    module, inputs = CASES[name]
    path = tmp_path / name
    ep = torch.export.export(module.eval(), inputs)
    torch.export.save(ep, f"{path}.ep")
    _upstream(upstream_python, _EXPORT_WITH_UPSTREAM, [path])
    # Upstream does not fold constants at export; with folding off, ours
    # calls the same kernels.
    ours = to_edge(ep).to_executorch(ExecutorchBackendConfig(fold_constants=False)).buffer
    with open(f"{path}.upstream.pte", "rb") as f:
        assert _kernel_calls(ours) == _kernel_calls(f.read())


class _MapMatmul(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(3, 3))

    def forward(self, xs):
        from torch._higher_order_ops.map import map as hop_map

        return hop_map(lambda row, w: row @ w + 1, xs, self.weight)


def test_control_flow_programs_run_on_upstream_runtime(upstream_python, tmp_path):
    """cond (both branches) and map, as we emit them (JumpFalseCall,
    MoveCall, et_copy_index on a DYNAMIC_BOUND result), on upstream's
    runtime."""
    torch.manual_seed(0)
    cases = {}
    for name, model, x in (
        ("cond", CondLinear().eval(), torch.randn(2, 3)),
        ("map", _MapMatmul().eval(), torch.randn(4, 3)),
    ):
        pte = to_edge(torch.export.export(model, (x,))).to_executorch().buffer
        for sign in (1, -1):
            path = tmp_path / f"{name}{sign}"
            path.with_suffix(".pte").write_bytes(pte)
            torch.save([sign * x], f"{path}.in")
            cases[path] = (model, sign * x)
    _upstream(upstream_python, _RUN_ON_UPSTREAM, cases)
    for path, (model, x) in cases.items():
        got = torch.load(f"{path}.out")
        assert not isinstance(got, str), got
        with torch.no_grad():
            want = model(x)
        want = want if isinstance(want, (tuple, list)) else (want,)
        for a, b in zip(got, want):
            torch.testing.assert_close(a, b)
