"""Timing shared by the benchmark scripts (imported from the scripts'
directory): per-call wall and CPU milliseconds, interleaved rounds over
several systems with a progress bar, and a worker process that times a
program in another Python (upstream's, ONNX Runtime's) on request."""

import json
import os
import statistics
import subprocess
import tempfile
import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from executorch.extension.progress import ProgressBar


# The pause before each system's calls (measure).
SETTLE_SECONDS = 0.2


def timed(call: Callable[[], object], iterations: int) -> Tuple[List[float], List[float]]:
    """Wall and CPU ms of each of `iterations` calls."""
    wall, cpu = [], []
    for _ in range(iterations):
        w, c = time.perf_counter(), time.process_time()
        call()
        wall.append((time.perf_counter() - w) * 1e3)
        cpu.append((time.process_time() - c) * 1e3)
    return wall, cpu


def measure(
    systems: Dict[str, object],
    rounds: int,
    iterations: int,
    missing: Optional[dict] = None,
    description: str = "timing",
):
    """Median wall and CPU ms per system (each has `run(iterations)`) over
    rounds that rotate which system goes first, each system's calls after a
    pause of SETTLE_SECONDS. A system that fails while
    timed (a worker that crashes) is dropped with the reason in `missing`,
    so one failing system does not cost the others their row."""
    missing = {} if missing is None else missing
    wall = {name: [] for name in systems}
    cpu = {name: [] for name in systems}
    names = list(systems)
    with ProgressBar(rounds * len(names), description) as bar:
        for r in range(rounds):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                bar.begin(f"round {r + 1}: {name}")
                bar.step()
                if name in missing:
                    continue
                # Let the previous system's pool go idle first: pthreadpool's
                # workers (upstream's, ONNX Runtime's) spin for milliseconds
                # after a call, and would take the cores from this one.
                time.sleep(SETTLE_SECONDS)
                try:
                    w, c = systems[name].run(iterations)
                except Exception as error:  # report and go on with the others
                    missing[name] = f"failed while timed: {str(error)[:120]}"
                    continue
                wall[name] += w
                cpu[name] += c
    return (
        {n: statistics.median(v) for n, v in wall.items() if n not in missing},
        {n: statistics.median(v) for n, v in cpu.items() if n not in missing},
    )


class JsonWorker:
    """`python -c script *args` speaking JSON lines: its first reply says it
    is ready (kept as `ready`), then each {"iterations": n} on stdin gets
    {"wall": [...], "cpu": [...]} back."""

    def __init__(
        self,
        python: str,
        script: str,
        args: Sequence[str],
        cwd: str = "/",
        env: Optional[dict] = None,
    ):
        self.errors = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen(
            [python, "-c", script, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.errors,
            text=True,
            # Another Python must not import our package from the source
            # tree: it starts elsewhere unless told.
            cwd=cwd,
            env={**os.environ, **(env or {})},
        )
        self.ready = self._reply()

    def _reply(self) -> dict:
        # Libraries may print lines of their own: the reply is the next line
        # that is a JSON object.
        for line in self.process.stdout:
            if line.startswith("{"):
                return json.loads(line)
        self.errors.seek(0)
        tail = self.errors.read().strip().splitlines()[-3:]
        raise RuntimeError(f"worker stopped (exit {self.process.wait()}): " + " / ".join(tail))

    def run(self, iterations: int) -> Tuple[List[float], List[float]]:
        self.process.stdin.write(json.dumps({"iterations": iterations}) + "\n")
        self.process.stdin.flush()
        result = self._reply()
        return result["wall"], result["cpu"]

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
