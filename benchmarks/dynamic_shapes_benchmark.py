#!/usr/bin/env python3
"""What running a dynamic-shape program at its actual size buys.

Each model is exported once with a dynamic dimension bounded at `max`, and
run through the Python bindings at several sizes within the bound, in the
same run as:

- the same program at its upper bound (what a runtime that can only run a
  dynamic program at its bound would do for every input);
- eager PyTorch at the same size, single-threaded (a fair match for the
  single-threaded portable kernels).

Ratios: `vs bound` = time at the size / time at the bound (below 1: the
work saved by running at the actual size); `vs eager` = ours / eager
(above 1: slower than eager). The planned memory of the dynamic program (at
its bounds) is printed next to that of a program exported statically at
each size. Outputs are checked against eager first. This is a script, not
a test: nothing asserts on wall-clock time.

    .venv/bin/python benchmarks/dynamic_shapes_benchmark.py [--repeat 30]
"""

import argparse
import os
import statistics
import sys
import time

import torch
from torch.export import Dim

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "test", "dynamic"))
from test_dynamic_models import MLP, Block  # noqa: E402

from executorch.exir import to_edge  # noqa: E402
from executorch.extension.pybindings.portable_lib import (  # noqa: E402
    _load_for_executorch_from_buffer,
)


def _median_ms(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def _planned_bytes(model, inputs, dynamic_shapes=None):
    ep = torch.export.export(model, inputs, dynamic_shapes=dynamic_shapes)
    manager = to_edge(ep).to_executorch()
    return manager, sum(manager.memory_report().buffer_sizes)


def _mlp_inputs(n):
    return (torch.randn(n, 16),)


def _block_inputs(n):
    return (torch.randn(2, n, 16), torch.ones(2, n, dtype=torch.bool))


CASES = [
    # name, model, inputs(n), dynamic_shapes, sizes (last one is the bound)
    (
        "mlp batch",
        MLP(),
        _mlp_inputs,
        {"x": {0: Dim("b", min=1, max=512)}},
        [1, 64, 512],
    ),
    (
        "attention seq",
        Block(),
        _block_inputs,
        {"x": {1: Dim("s", min=2, max=128)}, "keep": {1: Dim("s", min=2, max=128)}},
        [2, 32, 128],
    ),
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    print(
        f"{'model':<15}{'size':>6}{'ours ms':>10}{'vs bound':>10}{'eager ms':>10}"
        f"{'vs eager':>10}{'planned B (dyn)':>17}{'static B':>10}"
    )
    for name, model, make, dynamic_shapes, sizes in CASES:
        model = model.eval()
        dynamic, dynamic_bytes = _planned_bytes(model, make(sizes[1]), dynamic_shapes)
        module = _load_for_executorch_from_buffer(dynamic.buffer)
        bound_inputs = make(sizes[-1])
        at_bound = _median_ms(lambda: module.forward(bound_inputs), args.repeat)
        for n in sizes:
            inputs = make(n)
            with torch.no_grad():
                want = model(*inputs)
            torch.testing.assert_close(
                module.forward(inputs)[0], want, rtol=1e-4, atol=1e-4
            )
            ours = _median_ms(lambda: module.forward(inputs), args.repeat)
            with torch.no_grad():
                eager = _median_ms(lambda: model(*inputs), args.repeat)
            _, static_bytes = _planned_bytes(model, inputs)
            print(
                f"{name:<15}{n:>6}{ours:>10.3f}{ours / at_bound:>10.2f}{eager:>10.3f}"
                f"{ours / eager:>10.2f}{dynamic_bytes:>17}{static_bytes:>10}"
            )


if __name__ == "__main__":
    main()
