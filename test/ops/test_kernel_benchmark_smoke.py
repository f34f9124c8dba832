"""Smoke run of benchmarks/kernel_benchmark.py: one kernel, a tiny budget,
one thread, CPU time (the wall-clock path differs only in the clock). It
checks that the script still runs end to end (GEMM peak line, portable
child process, executor_runner, eager) and prints a row with a speed-up;
the timings themselves mean nothing here."""

import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNNER = os.path.join(REPO, "build", "examples", "executor_runner", "executor_runner")


@pytest.mark.skipif(not os.path.exists(RUNNER), reason="executor_runner not built")
def test_kernel_benchmark_runs_one_kernel():
    result = subprocess.run(
        [sys.executable, os.path.join(REPO, "benchmarks", "kernel_benchmark.py"),
         "--only", "transpose", "--budget", "0.005", "--threads", "1", "--clock", "cpu"],
        capture_output=True, text=True, timeout=600, cwd=REPO,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "% of peak" in result.stdout or "not built" in result.stdout
    rows = [line for line in result.stdout.splitlines() if line.startswith("transpose ")]
    assert len(rows) == 1 and "not run" not in rows[0], result.stdout
