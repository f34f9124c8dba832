"""Smoke run of benchmarks/cpu_benchmark.py --quick on one model, our
systems only (upstream and ONNX Runtime live in venvs of their own): the
script still runs end to end and prints, for each thread count, a row with
our timings, the ratios between them, the load average and the cores'
round trip. The timings themselves mean nothing here."""

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_cpu_benchmark_prints_a_row_per_thread_count():
    result = subprocess.run(
        [sys.executable, os.path.join(REPO, "benchmarks", "cpu_benchmark.py"), "--quick",
         "--models", "mobilenet_v2", "--threads", "1", "2",
         "--skip", "ours portable", "upstream XNNPACK", "ONNX Runtime"],
        capture_output=True, text=True, timeout=600, cwd=REPO,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    header = next(line for line in result.stdout.splitlines() if line.startswith("| model"))
    columns = [c.strip() for c in header.strip("|").split("|")]
    rows = [line for line in result.stdout.splitlines() if line.startswith("| mobilenet_v2")]
    assert len(rows) == 2, result.stdout
    for row, threads in zip(rows, ("1", "2")):
        cells = dict(zip(columns, (c.strip() for c in row.strip("|").split("|"))))
        assert cells["threads"] == threads
        for system in ("eager", "ours optimized", "ours XNNPACK"):
            assert float(cells[system].split()[0]) > 0, row
        assert cells["upstream XNNPACK"] == "n/a (skipped)"
        assert float(cells["optimized/XNNPACK"].split()[0]) > 0, row
        before, after = cells["core round trip ns"].split(" / ")
        assert before == "n/a" or float(before) > 0, row
        assert after == "n/a" or float(after) > 0, row
