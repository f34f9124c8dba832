"""Runs the operator sweep in worker processes that survive kernel crashes.

A C++ abort or segfault in a kernel would kill the Python process that ran
it, so every check runs in a worker subprocess (`python -m
executorch.test.ops.sweep_runner`). The parent hands each worker one
operator at a time (with the dtypes still to check) over stdin as a JSON
line; the worker announces each dtype before checking it and reports the
outcome as a JSON line on stdout. When a worker dies or stops answering,
the announced (operator, dtype) is recorded as a failure naming the exit
status and the worker's last log line, a fresh worker is started, and the
operator continues with its remaining dtypes.
"""

import json
import os
import queue
import select
import subprocess
import sys
import tempfile
import threading
import warnings
from typing import Callable, List, Optional

import torch

from executorch.exir.dialects.edge.dtype_table import DTYPES
from executorch.test.ops.op_check import (
    FAIL,
    MISSING_KERNEL,
    Outcome,
    UNSUPPORTED,
    check,
)

NO_SAMPLE = "no sample"

# Seconds one (operator, dtype) may take before its worker is killed.
CHECK_TIMEOUT = 300


def check_target(
    task: dict, dtype_name: str, known_missing: Optional[str] = None
) -> Outcome:
    """Checks one sweep target (a `Target` as a dict plus its OpInfo keys)
    at one dtype; `known_missing` as in `op_check.check`. Runs inside a
    worker."""
    from executorch.test.ops import op_samples

    dtype = DTYPES[dtype_name]
    op = op_samples.resolve(task["name"])
    if op is None:
        return Outcome(FAIL, "operator is not registered with torch")
    keys = task["opinfos"]
    samples = op_samples.opinfo_samples(task["source"], keys, dtype) if keys else []
    if not samples:
        samples = op_samples.own_samples(task["name"], dtype) or op_samples.own_samples(
            task["source"], dtype
        )
    if not samples and keys:
        float_samples = op_samples.opinfo_samples(task["source"], keys, torch.float32)
        samples = op_samples.cast_samples(float_samples, dtype)
    if not samples:
        if not keys:
            return Outcome(NO_SAMPLE, "no OpInfo sample reaches this overload")
        if not op_samples.opinfo_supports(keys, dtype):
            return Outcome(
                UNSUPPORTED, f"OpInfo {', '.join(keys)} lists no {dtype_name}"
            )
        return Outcome(
            NO_SAMPLE, f"OpInfo {', '.join(keys)} reaches it only at other dtypes"
        )
    random = task["name"] in op_samples.RANDOM_OPERATORS
    return check(op, op_samples.representative(samples), random, known_missing)


def _worker_main() -> None:
    """Serves tasks from stdin until it closes. Messages go to a private
    copy of stdout; anything else written to stdout (runtime logs) goes to
    stderr, the worker's log."""
    channel = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    torch.manual_seed(0)
    for line in sys.stdin:
        task = json.loads(line)
        known_missing = None
        for dtype_name in task["dtypes"]:
            print(json.dumps({"start": dtype_name}), file=channel, flush=True)
            try:
                outcome = check_target(task, dtype_name, known_missing)
                if outcome.detail.startswith(MISSING_KERNEL):
                    known_missing = outcome.detail
            except Exception as error:  # a harness error must not end the sweep
                outcome = Outcome(
                    FAIL, f"harness error: {type(error).__name__}: {error}"
                )
            print(
                json.dumps(
                    {
                        "dtype": dtype_name,
                        "status": outcome.status,
                        "detail": outcome.detail,
                    }
                ),
                file=channel,
                flush=True,
            )
        print(json.dumps({"done": True}), file=channel, flush=True)


class _Worker:
    """One worker subprocess with a line reader that honours a timeout."""

    def __init__(self, log_dir: str, index: int):
        self.log_path = os.path.join(log_dir, f"worker{index}.log")
        self.log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "executorch.test.ops.sweep_runner"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            cwd="/",
        )
        self.pending = b""

    def send(self, task: dict) -> None:
        self.process.stdin.write((json.dumps(task) + "\n").encode())
        self.process.stdin.flush()

    def read(self, timeout: float) -> Optional[dict]:
        """The next message, or None when the worker died or timed out."""
        fd = self.process.stdout.fileno()
        while b"\n" not in self.pending:
            ready, _, _ = select.select([fd], [], [], timeout)
            chunk = os.read(fd, 65536) if ready else b""
            if not chunk:
                return None
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return json.loads(line)

    def death_reason(self) -> str:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
            return f"timeout: no answer within {CHECK_TIMEOUT} s"
        code = self.process.returncode
        how = f"signal {-code}" if code < 0 else f"exit status {code}"
        self.log.flush()
        with open(self.log_path, "rb") as f:
            lines = [
                l for l in f.read().decode(errors="replace").splitlines() if l.strip()
            ]
        last = f"; last log line: {lines[-1][:200]}" if lines else ""
        return f"crash: worker died ({how}){last}"

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait()
        self.log.close()


def _run_task(worker: _Worker, task: dict, record) -> Optional[str]:
    """Runs `task` on `worker`, recording outcomes; returns the dtype that
    was running when the worker died, or None when the task completed."""
    worker.send(task)
    running = None
    while True:
        message = worker.read(CHECK_TIMEOUT)
        if message is None:
            return running or task["dtypes"][0]
        if "start" in message:
            running = message["start"]
        elif "dtype" in message:
            record(
                task["name"],
                message["dtype"],
                Outcome(message["status"], message["detail"]),
            )
            running = None
        elif message.get("done"):
            return None


def run_sweep(
    tasks: List[dict],
    jobs: int,
    on_result: Callable[[str, str, Outcome], None],
) -> None:
    """Runs every task (a target dict with `opinfos` and `dtypes`) on `jobs`
    workers, calling `on_result(name, dtype, outcome)` per check."""
    todo: "queue.Queue[dict]" = queue.Queue()
    for task in tasks:
        todo.put(task)
    lock = threading.Lock()

    def record(name: str, dtype: str, outcome: Outcome) -> None:
        with lock:
            on_result(name, dtype, outcome)

    def serve(index: int, log_dir: str) -> None:
        worker = _Worker(log_dir, index)
        while True:
            try:
                task = todo.get_nowait()
            except queue.Empty:
                break
            while task is not None:
                crashed = _run_task(worker, task, record)
                if crashed is None:
                    break
                record(task["name"], crashed, Outcome(FAIL, worker.death_reason()))
                worker.close()
                worker = _Worker(log_dir, index)
                rest = task["dtypes"][task["dtypes"].index(crashed) + 1 :]
                task = dict(task, dtypes=rest) if rest else None
        worker.close()

    with tempfile.TemporaryDirectory(prefix="op_sweep_") as log_dir:
        threads = [
            threading.Thread(target=serve, args=(i, log_dir)) for i in range(jobs)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()


if __name__ == "__main__":
    _worker_main()
