"""The installed package: `cmake --install` into a fresh prefix, then
examples/app (a standalone CMake project using find_package(executorch))
is configured and built against it alone, and runs exported programs with
Module, matching eager. The app links executorch::portable_ops_lib with no
linker flags, so this also checks that kernel registration survives a
static link."""

import shutil
import subprocess
from pathlib import Path

import pytest
import torch

from .programs import assert_matches, eager, export_with_ours

REPO = Path(__file__).resolve().parents[2]
# Inputs and outputs cross as raw bytes in memory order.
MODELS = ["mlp", "add_with_parameter", "integer_and_bool", "channels_last"]


def run(*args, cwd=None):
    result = subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, cwd=cwd
    )
    assert result.returncode == 0, f"{args}\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def app(build_dir, tmp_path_factory):
    """Path of examples/app built against a fresh install of `build_dir`."""
    if not (Path(build_dir) / "CMakeCache.txt").exists():
        pytest.skip(f"{build_dir} is not configured")
    if shutil.which("cmake") is None:
        pytest.skip("cmake is not installed")
    root = tmp_path_factory.mktemp("installed")
    prefix, app_build = root / "prefix", root / "app-build"
    run("cmake", "--install", build_dir, "--prefix", prefix)
    # Nothing from the source tree or the build tree: only the prefix.
    run(
        "cmake",
        "-S",
        REPO / "examples/app",
        "-B",
        app_build,
        f"-DCMAKE_PREFIX_PATH={prefix}",
        "-DCMAKE_BUILD_TYPE=Release",
    )
    run("cmake", "--build", app_build, "-j2")
    return app_build / "executorch_app"


def memory_order_bytes(tensor):
    """The bytes of `tensor` as laid out in memory (its dim order)."""
    if tensor.dim() == 4 and tensor.is_contiguous(memory_format=torch.channels_last):
        tensor = tensor.permute(0, 2, 3, 1)
    return tensor.contiguous().numpy().tobytes()


def from_memory_order(data, like):
    flat = torch.frombuffer(bytearray(data), dtype=like.dtype)
    if like.dim() == 4 and like.is_contiguous(memory_format=torch.channels_last):
        n, c, h, w = like.shape
        return flat.reshape(n, h, w, c).permute(0, 3, 1, 2)
    return flat.reshape(like.shape)


def run_app(app, tmp_path, pte, inputs):
    """Runs the app on `pte` and `inputs`; returns its stdout and outputs
    (as tensors shaped like the eager ones)."""
    model = tmp_path / "model.pte"
    model.write_bytes(pte)
    args = [app, model, "--output_prefix", tmp_path / "out"]
    for i, tensor in enumerate(inputs):
        path = tmp_path / f"in{i}.bin"
        path.write_bytes(memory_order_bytes(tensor))
        args += ["--input", path]
    stdout = run(*args).stdout
    count = len(list(tmp_path.glob("out*.bin")))
    return stdout, [(tmp_path / f"out{i}.bin").read_bytes() for i in range(count)]


@pytest.mark.parametrize("name", MODELS)
def test_installed_app_matches_eager(app, export_pte, tmp_path, name):
    inputs, expected = eager(name)
    stdout, outputs = run_app(app, tmp_path, export_pte(name), inputs)
    assert stdout.count("Output ") == len(expected)
    assert "tensor(sizes=" in stdout
    assert len(outputs) == len(expected)
    actual = [from_memory_order(o, want) for o, want in zip(outputs, expected)]
    assert_matches(actual, expected)


def test_installed_app_runs_an_xnnpack_delegate(app, tmp_path):
    """xnnpack_backend from the package registers itself in the app."""
    try:
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
            XnnpackPartitioner,
        )
        from executorch.exir import to_edge_transform_and_lower
    except ImportError as e:
        pytest.skip(f"XNNPACK lowering unavailable: {e}")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU()).eval()
    inputs = (torch.randn(3, 8),)
    edge = to_edge_transform_and_lower(
        torch.export.export(model, inputs), partitioner=[XnnpackPartitioner()]
    )
    pte = edge.to_executorch().buffer
    if b"XnnpackBackend" not in pte:
        pytest.skip("nothing was delegated to XNNPACK")
    _, outputs = run_app(app, tmp_path, pte, inputs)
    expected = model(*inputs).detach()
    # XNNPACK may reassociate the dot products.
    torch.testing.assert_close(
        from_memory_order(outputs[0], expected), expected, rtol=1e-4, atol=1e-4
    )


def test_installed_app_reports_bad_input(app, tmp_path):
    model = tmp_path / "model.pte"
    model.write_bytes(export_with_ours("mlp"))
    short = tmp_path / "short.bin"
    short.write_bytes(b"\0" * 12)
    result = subprocess.run(
        [app, model, "--input", short], capture_output=True, text=True
    )
    assert result.returncode == 1
    assert "input 0 needs 160 bytes" in result.stderr
    missing = subprocess.run(
        [app, tmp_path / "missing.pte"], capture_output=True, text=True
    )
    assert missing.returncode == 1
    assert "missing.pte" in missing.stderr
