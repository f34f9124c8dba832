"""`pip wheel .` gives a complete, working package: scripts/test_wheel.sh
builds the wheel in the suite's CMake build directory (only the install step
runs), installs it into a fresh virtual environment and uses it from outside
the checkout (scripts/wheel_check.py says what it checks)."""

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_wheel_installs_and_runs_outside_the_checkout():
    build_dir = Path(os.environ.get("EXECUTORCH_BUILD_DIR", REPO / "build"))
    if not (build_dir / "CMakeCache.txt").exists():
        pytest.skip(f"{build_dir} is not configured (run scripts/setup.sh)")
    result = subprocess.run(
        ["bash", str(REPO / "scripts/test_wheel.sh"), "--reuse-build", str(build_dir)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert "[wheel] package contents: complete" in result.stdout
    assert "executorch-op-sweep" in result.stdout
    assert "[wheel] portable, examples/app: matches eager" in result.stdout
    if any(build_dir.glob("backends/xnnpack/libxnnpack_backend.*")):
        assert "[wheel] xnnpack, examples/app: matches eager" in result.stdout
    assert "[wheel] all checks passed" in result.stdout
