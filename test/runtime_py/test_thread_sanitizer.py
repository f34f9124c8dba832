"""The threading contract under ThreadSanitizer: scripts/tsan_test.sh builds
the shared-Program thread test with -fsanitize=thread (in its own build
directory, next to the main one; about a minute the first time, seconds
after) and runs it; any data race fails it."""

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_shared_program_threads_are_race_free(build_dir):
    if os.environ.get("EXECUTORCH_SKIP_TSAN"):
        pytest.skip("EXECUTORCH_SKIP_TSAN is set")
    tsan_build = f"{os.path.abspath(build_dir)}-tsan"
    result = subprocess.run(
        ["bash", REPO / "scripts/tsan_test.sh", tsan_build],
        capture_output=True,
        text=True,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-5000:]
    assert "WARNING: ThreadSanitizer" not in output
    assert "[  PASSED  ] 2 tests." in output
