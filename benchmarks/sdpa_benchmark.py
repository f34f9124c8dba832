#!/usr/bin/env python3
"""Times llama::custom_sdpa (extension/llm/custom_ops) on our runtime
against eager PyTorch's scaled_dot_product_attention and, with
EXECUTORCH_UPSTREAM_PYTHON set, upstream ExecuTorch's own custom_sdpa
kernel (called eagerly through its torch library), on LLM shapes: decode
(one query row over a long cache) and prefill (a block of rows, causal).

Each shape is a one-op program whose KV cache is a constant of the program
(random values), so a call passes only the query: the time is the kernel's
plus the bindings' fixed cost of one small input and output (measured on an
empty-cache shape and printed). Outputs are checked against eager first.
Medians of `--rounds` calls; ratios are ours / other (below 1: ours is
faster). A script, not a test: nothing asserts on time.

    .venv/bin/python benchmarks/sdpa_benchmark.py [--rounds 50] [--only decode_2k] [--threads N]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

from executorch.extension.llm.custom_ops import custom_ops  # noqa: F401

# name: (seq_len, start_pos, heads, kv_heads, head_dim, max_seq)
SHAPES = {
    "decode_512": (1, 511, 32, 8, 64, 512),
    "decode_2k": (1, 2047, 32, 8, 128, 2048),
    "prefill_128": (128, 0, 32, 8, 64, 512),
    "prefill_512": (512, 0, 16, 16, 64, 512),
}


class _Attention(torch.nn.Module):
    def __init__(self, start_pos, kv_heads, head_dim, max_seq):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        shape = (1, max_seq, kv_heads, head_dim)
        self.register_buffer("k", torch.randn(shape, generator=g))
        self.register_buffer("v", torch.randn(shape, generator=g))
        self.start_pos = start_pos

    def forward(self, q):
        return torch.ops.llama.custom_sdpa(q, self.k, self.v, self.start_pos, None, 0.0, True)


def _median_seconds(fn, rounds):
    fn()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _eager(model, q):
    seq, start = q.size(1), model.start_pos
    kv = start + seq
    k, v = (t[:, :kv].transpose(1, 2) for t in (model.k, model.v))
    mask = torch.ones(seq, kv, dtype=torch.bool).tril(start)
    return F.scaled_dot_product_attention(
        q.transpose(1, 2), k, v, attn_mask=mask, enable_gqa=True
    ).transpose(1, 2)


_UPSTREAM = """
import json, statistics, sys, time, torch
from executorch.extension.llm.custom_ops import custom_ops
seq, start, heads, kv_heads, dim, max_seq, rounds = map(int, sys.argv[1:8])
g = torch.Generator().manual_seed(0)
k = torch.randn((1, max_seq, kv_heads, dim), generator=g)
v = torch.randn((1, max_seq, kv_heads, dim), generator=g)
q = torch.randn((1, seq, heads, dim), generator=torch.Generator().manual_seed(1))
call = lambda: torch.ops.llama.custom_sdpa(q, k, v, start, None, 0.0, True)
call()
times = []
for _ in range(rounds):
    t = time.perf_counter(); call(); times.append(time.perf_counter() - t)
print(json.dumps(statistics.median(times)))
"""


def _upstream_seconds(shape, rounds):
    python = os.environ.get("EXECUTORCH_UPSTREAM_PYTHON")
    if not python:
        return None
    run = subprocess.run(
        [python, "-c", _UPSTREAM, *map(str, shape), str(rounds)],
        capture_output=True, text=True, cwd="/",
    )
    if run.returncode != 0:
        return None
    return json.loads(run.stdout.strip().splitlines()[-1])


def main(argv=None):
    from executorch.exir import to_edge
    from executorch.extension.pybindings.portable_lib import (
        _load_for_executorch_from_buffer,
    )

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--only", choices=sorted(SHAPES), action="append")
    parser.add_argument(
        "--threads", type=int, default=0,
        help="threads of our pool and of eager's multi-threaded column (0: all cores)",
    )
    args = parser.parse_args(argv)
    if args.threads:
        from executorch.extension.pybindings import portable_lib

        portable_lib._unsafe_reset_threadpool(args.threads)
        torch.set_num_threads(args.threads)
    print(f"{'shape':<12} {'ours ms':>9} {'eager 1t':>9} {'eager':>9} {'upstream':>9} "
          f"{'/eager 1t':>9} {'/eager':>7} {'/upstr.':>7}")
    for name in args.only or SHAPES:
        seq, start, heads, kv_heads, dim, max_seq = SHAPES[name]
        model = _Attention(start, kv_heads, dim, max_seq).eval()
        q = torch.randn((1, seq, heads, dim), generator=torch.Generator().manual_seed(1))
        program = to_edge(torch.export.export(model, (q,))).to_executorch()
        module = _load_for_executorch_from_buffer(program.buffer)
        torch.testing.assert_close(module.forward([q])[0], _eager(model, q), atol=1e-4, rtol=1e-4)
        ours = _median_seconds(lambda: module.forward([q]), args.rounds)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        eager_1t = _median_seconds(lambda: _eager(model, q), args.rounds)
        torch.set_num_threads(threads)
        eager = _median_seconds(lambda: _eager(model, q), args.rounds)
        upstream = _upstream_seconds(SHAPES[name], args.rounds)
        upstream_ms = f"{upstream * 1e3:9.3f}" if upstream else f"{'-':>9}"
        upstream_ratio = f"{ours / upstream:7.2f}" if upstream else f"{'-':>7}"
        print(f"{name:<12} {ours * 1e3:9.3f} {eager_1t * 1e3:9.3f} {eager * 1e3:9.3f} "
              f"{upstream_ms} {ours / eager_1t:9.2f} {ours / eager:7.2f} {upstream_ratio}")


if __name__ == "__main__":
    main()
