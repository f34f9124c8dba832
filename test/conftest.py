"""Fixtures shared by the Python test suites."""

import os
import subprocess
import textwrap

import pytest


@pytest.fixture(scope="session")
def upstream_python():
    """Path of a Python with upstream ExecuTorch installed (set by
    scripts/test.sh as EXECUTORCH_UPSTREAM_PYTHON); interop tests skip
    without it."""
    python = os.environ.get("EXECUTORCH_UPSTREAM_PYTHON")
    if not python:
        pytest.skip(
            "EXECUTORCH_UPSTREAM_PYTHON is unset: upstream ExecuTorch unavailable"
        )
    return python


@pytest.fixture(scope="session")
def export_with_upstream(upstream_python, tmp_path_factory):
    """Returns a function that runs `script` (Python source that defines
    `model` and `inputs`) with upstream ExecuTorch, exports the model with
    upstream's portable flow and returns the `.pte` bytes."""

    def export(script: str) -> bytes:
        out = tmp_path_factory.mktemp("upstream") / "model.pte"
        program = textwrap.dedent(script) + textwrap.dedent(f"""
            from executorch.exir import to_edge
            exported = torch.export.export(model.eval(), inputs)
            to_edge(exported).to_executorch().save({str(out)!r})
            """)
        subprocess.run([upstream_python, "-c", program], check=True, cwd="/")
        return out.read_bytes()

    return export


@pytest.fixture(scope="session")
def build_dir():
    """The CMake build directory (scripts/test.sh exports it)."""
    repo_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.environ.get("EXECUTORCH_BUILD_DIR", os.path.join(repo_root, "build"))
