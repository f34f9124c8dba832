"""Programs whose weights live in a .ptd file run on our runtime, written by
our exporter and by upstream ExecuTorch's, and ours run on upstream's
runtime; for both ways of putting weights there (the program's constants with external_constants=True, and XNNPACK
delegate weights tagged for a file), through every entry point (the
pybindings from a path or from bytes, executorch.runtime, executor_runner;
the C++ Module is tested in extension_flat_tensor_test). A missing or wrong
data file is an error naming the tensor.
"""

import re
import subprocess
import textwrap

import pytest
import torch

from .test_executor_runner import parse_outputs, run, runner  # noqa: F401

# Both exporters run this source; the seed makes the weights identical.
MODELS = textwrap.dedent("""
    import torch

    class TwoLayers(torch.nn.Module):
        def __init__(self, hidden=24):
            super().__init__()
            torch.manual_seed(0)
            self.encoder = torch.nn.Linear(12, hidden)
            self.decoder = torch.nn.Linear(hidden, 5)

        def forward(self, x):
            return self.decoder(torch.relu(self.encoder(x)))

    INPUTS = (torch.linspace(-1, 1, 36).reshape(3, 12),)
    """)

# Exports, with the exporter's own API (the same names on both sides):
# <dir>/constants.pte + .ptd (external_constants=True) and <dir>/delegate.pte
# + .ptd (XNNPACK weights tagged with delegate_external_constants_pass_unlifted),
# and <dir>/other_shapes.ptd (same names, other sizes).
EXPORT = textwrap.dedent("""
    import os, sys
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
        XnnpackPartitioner,
    )
    from executorch.exir import (
        ExecutorchBackendConfig, to_edge, to_edge_transform_and_lower,
    )
    from executorch.exir.passes.external_constants_pass import (
        delegate_external_constants_pass_unlifted,
    )

    def save(manager, directory, name, tag):
        with open(os.path.join(directory, name + ".pte"), "wb") as f:
            f.write(manager.buffer)
        manager.write_tensor_data_to_file(directory)
        os.rename(os.path.join(directory, tag + ".ptd"),
                  os.path.join(directory, name + ".ptd"))

    def constants(directory, name, model):
        ep = torch.export.export(model.eval(), INPUTS)
        config = ExecutorchBackendConfig(external_constants=True)
        save(to_edge(ep).to_executorch(config), directory,
             name, "_default_external_constant")

    def delegate(directory):
        unlifted = torch.export.export(
            TwoLayers().eval(), INPUTS, strict=True
        ).module()
        delegate_external_constants_pass_unlifted(unlifted, lambda n: "weights")
        ep = torch.export.export(unlifted, INPUTS, strict=True)
        lowered = to_edge_transform_and_lower(
            ep, partitioner=[XnnpackPartitioner()]
        )
        save(lowered.to_executorch(), directory, "delegate", "weights")

    def export_all(directory):
        constants(directory, "constants", TwoLayers())
        constants(directory, "other_shapes", TwoLayers(hidden=7))
        delegate(directory)
    """)

# Run by upstream after its exports: our programs on upstream's runtime, each
# with its .ptd; outputs to <dir>/<kind>.ours_on_upstream.
RUN_OURS = textwrap.dedent("""
    from executorch.extension.pybindings.portable_lib import _load_for_executorch
    export_all(sys.argv[1])
    for kind in ("constants", "delegate"):
        path = os.path.join(sys.argv[2], kind)
        module = _load_for_executorch(path + ".pte", data_path=path + ".ptd")
        torch.save(list(module.forward(INPUTS)),
                   os.path.join(sys.argv[1], kind + ".ours_on_upstream"))
    """)

KINDS = ["constants", "delegate"]


@pytest.fixture(scope="module")
def ours(tmp_path_factory):
    directory = tmp_path_factory.mktemp("ptd_ours")
    namespace = {}
    exec(MODELS + EXPORT, namespace)
    namespace["export_all"](str(directory))
    return directory


@pytest.fixture(scope="module")
def upstream(ours, upstream_python, tmp_path_factory):
    """Upstream's exports, and the outputs of ours on upstream's runtime
    (one process: importing upstream takes most of the time)."""
    directory = tmp_path_factory.mktemp("ptd_upstream")
    subprocess.run(
        [upstream_python, "-c", MODELS + EXPORT + RUN_OURS, str(directory), str(ours)],
        check=True,
        cwd="/",
    )
    return directory


@pytest.fixture(params=["ours", "upstream"])
def exported(request):
    return request.getfixturevalue(request.param)


@pytest.fixture(scope="module")
def eager():
    namespace = {}
    exec(MODELS, namespace)
    with torch.no_grad():
        expected = namespace["TwoLayers"]().eval()(*namespace["INPUTS"])
    return namespace["INPUTS"], expected


def _pybindings_path(pte, ptd, inputs):
    from executorch.extension.pybindings.portable_lib import _load_for_executorch

    return _load_for_executorch(str(pte), data_path=str(ptd)).forward(inputs)


def _pybindings_bytes(pte, ptd, inputs):
    from executorch.extension.pybindings.portable_lib import (
        _load_for_executorch_from_buffer,
    )

    module = _load_for_executorch_from_buffer(pte.read_bytes(), ptd.read_bytes())
    return module.forward(inputs)


def _runtime_api(pte, ptd, inputs):
    from executorch.runtime import Runtime

    program = Runtime.get().load_program(pte, data_path=ptd)
    return program.load_method("forward").execute(inputs)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("entry", [_pybindings_path, _pybindings_bytes, _runtime_api])
def test_runs_from_python(exported, eager, kind, entry):
    inputs, expected = eager
    (got,) = entry(exported / f"{kind}.pte", exported / f"{kind}.ptd", inputs)
    # fp32 through the same operators; XNNPACK may reassociate sums.
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", KINDS)
def test_runs_from_executor_runner(runner, exported, eager, kind, tmp_path):  # noqa: F811
    inputs, expected = eager
    (tmp_path / "x.bin").write_bytes(inputs[0].numpy().tobytes())
    result = run(
        runner,
        "--model_path",
        exported / f"{kind}.pte",
        "--data_path",
        exported / f"{kind}.ptd",
        "--inputs",
        tmp_path / "x.bin",
        "--print_output",
    )
    (got,) = parse_outputs(result.stdout)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", KINDS)
def test_ours_run_on_upstreams_runtime(upstream, eager, kind):
    (got,) = torch.load(upstream / f"{kind}.ours_on_upstream")
    torch.testing.assert_close(got, eager[1], rtol=1e-5, atol=1e-5)


def test_the_pte_alone_is_small(exported):
    weights = (12 * 24 + 24 + 24 * 5 + 5) * 4
    for kind in KINDS:
        pte, ptd = exported / f"{kind}.pte", exported / f"{kind}.ptd"
        assert ptd.stat().st_size > weights
        assert pte.stat().st_size < 4096


def _load_error(pte, ptd=None) -> str:
    from executorch.extension.pybindings.portable_lib import _load_for_executorch

    with pytest.raises(RuntimeError) as error:
        module = _load_for_executorch(
            str(pte), data_path=None if ptd is None else str(ptd)
        )
        module.forward((torch.zeros(3, 12),))
    return str(error.value)


def test_without_the_data_file_the_error_names_the_tensor(exported):
    message = _load_error(exported / "constants.pte")
    assert re.search(r"'(en|de)coder\.(weight|bias)' is stored outside the .pte", message)
    message = _load_error(exported / "delegate.pte")
    assert "is not in the named data" in message


def test_a_data_file_of_another_model_is_refused_naming_the_tensor(exported):
    message = _load_error(exported / "constants.pte", exported / "other_shapes.ptd")
    assert re.search(r"'(en|de)coder\.(weight|bias)'.*another export", message)
    message = _load_error(exported / "constants.pte", exported / "delegate.ptd")
    assert re.search(r"'(en|de)coder\.(weight|bias)' is not in the data file", message)


def test_a_file_that_is_not_a_ptd_is_refused(exported, runner):  # noqa: F811
    message = _load_error(exported / "constants.pte", exported / "constants.pte")
    assert "Not a .ptd file" in message
    result = run(
        runner,
        "--model_path",
        exported / "constants.pte",
        "--data_path",
        exported / "missing.ptd",
        expect_ok=False,
    )
    assert "cannot open the data file" in result.stderr
