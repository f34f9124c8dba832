"""The LLM custom operators for torch (executorch.extension.llm.custom_ops):
eager results against torch's scaled_dot_product_attention and plain
indexing, argument errors, and export through exir (out variants, the
caches mutated in place)."""

import math

import pytest
import torch
import torch.nn.functional as F

from executorch.extension.llm.custom_ops import custom_ops  # noqa: F401

llama = torch.ops.llama


def _attention(q, k, v, mask=None):
    """Eager attention in [batch, heads, seq, dim] with k/v heads repeated."""
    reps = q.size(2) // k.size(2)
    k, v = (t.transpose(1, 2).repeat_interleave(reps, dim=1) for t in (k, v))
    return F.scaled_dot_product_attention(q.transpose(1, 2), k, v, attn_mask=mask).transpose(1, 2)


def _causal_mask(seq_len, kv_len, start_pos):
    return torch.ones(seq_len, kv_len, dtype=torch.bool).tril(start_pos)


# (batch, seq_len, heads, kv_heads, head_dim, max_seq, start_pos)
SHAPES = [
    (1, 1, 4, 4, 8, 16, 0),  # first decode step
    (1, 1, 4, 2, 8, 16, 9),  # decode, GQA
    (2, 5, 6, 2, 16, 32, 0),  # prefill, batch 2, GQA 3:1
    (1, 4, 8, 1, 32, 20, 7),  # chunked prefill after 7 tokens, MQA
]


@pytest.mark.parametrize("shape", SHAPES)
def test_custom_sdpa_causal_matches_eager(shape):
    b, s, h, hkv, d, max_seq, start = shape
    torch.manual_seed(0)
    q = torch.randn(b, s, h, d)
    kc, vc = torch.randn(b, max_seq, hkv, d), torch.randn(b, max_seq, hkv, d)
    out = llama.custom_sdpa(q, kc, vc, start, None, 0.0, True, None)
    kv = start + s
    expected = _attention(q, kc[:, :kv], vc[:, :kv], _causal_mask(s, kv, start))
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)


def test_custom_sdpa_not_causal_attends_to_filled_positions():
    torch.manual_seed(1)
    q = torch.randn(1, 3, 4, 8)
    kc, vc = torch.randn(1, 12, 2, 8), torch.randn(1, 12, 2, 8)
    out = llama.custom_sdpa(q, kc, vc, 4, None, 0.0, False, 0.3)
    reps = 2
    k, v = (t[:, :7].transpose(1, 2).repeat_interleave(reps, 1) for t in (kc, vc))
    expected = F.scaled_dot_product_attention(q.transpose(1, 2), k, v, scale=0.3)
    torch.testing.assert_close(out, expected.transpose(1, 2), atol=1e-5, rtol=1e-5)


def test_custom_sdpa_with_mask_attends_to_whole_cache():
    torch.manual_seed(2)
    q = torch.randn(1, 2, 4, 8)
    kc, vc = torch.randn(1, 10, 4, 8), torch.randn(1, 10, 4, 8)
    mask = torch.randn(2, 10)
    out = llama.custom_sdpa(q, kc, vc, 3, mask, 0.0, False, None)
    torch.testing.assert_close(out, _attention(q, kc, vc, mask), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("dtype,tol", [(torch.float16, 2e-3), (torch.bfloat16, 2e-2)])
def test_custom_sdpa_reduced_precision(dtype, tol):
    torch.manual_seed(3)
    q = torch.randn(1, 3, 4, 16, dtype=dtype)
    kc, vc = torch.randn(1, 8, 4, 16, dtype=dtype), torch.randn(1, 8, 4, 16, dtype=dtype)
    out = llama.custom_sdpa(q, kc, vc, 0, None, 0.0, True, None)
    assert out.dtype == dtype
    expected = _attention(q.float(), kc[:, :3].float(), vc[:, :3].float(), _causal_mask(3, 3, 0))
    torch.testing.assert_close(out.float(), expected, atol=tol, rtol=tol)


def test_update_cache_writes_rows_at_start_pos():
    cache = torch.zeros(2, 8, 3, 4)
    value = torch.randn(2, 3, 3, 4)
    result = llama.update_cache(value, cache, 5)
    assert result.shape == (1,)
    expected = torch.zeros(2, 8, 3, 4)
    expected[:, 5:8] = value
    assert torch.equal(cache, expected)


def test_update_cache_with_indices():
    cache = torch.zeros(1, 6, 2, 4)
    value = torch.randn(1, 3, 2, 4)
    llama.update_cache_with_indices(value, cache, 0, torch.tensor([[4, 0, 2]]))
    for row, pos in enumerate([4, 0, 2]):
        assert torch.equal(cache[0, pos], value[0, row])
    assert torch.equal(cache[0, [1, 3, 5]], torch.zeros(3, 2, 4))


def test_sdpa_with_kv_cache_updates_then_attends():
    torch.manual_seed(4)
    kc, vc = torch.zeros(1, 16, 2, 8), torch.zeros(1, 16, 2, 8)
    k_all, v_all = torch.randn(1, 6, 2, 8), torch.randn(1, 6, 2, 8)
    # Prefill 4 tokens, then decode 2, as a runner does.
    for start, s in ((0, 4), (4, 1), (5, 1)):
        q = torch.randn(1, s, 4, 8)
        k, v = k_all[:, start : start + s], v_all[:, start : start + s]
        out = llama.sdpa_with_kv_cache(q, k, v, kc, vc, start, s, None, 0.0, True, None)
        kv = start + s
        expected = _attention(q, k_all[:, :kv], v_all[:, :kv], _causal_mask(s, kv, start))
        torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
    assert torch.equal(kc[:, :6], k_all) and torch.equal(vc[:, :6], v_all)


def test_fast_hadamard_transform_is_normalized_hadamard():
    x = torch.randn(3, 5, 16)
    h = torch.tensor([[1.0]])
    while h.size(0) < 16:
        h = torch.cat([torch.cat([h, h], 1), torch.cat([h, -h], 1)], 0)
    out = llama.fast_hadamard_transform(x)
    torch.testing.assert_close(out, x @ h / math.sqrt(16), atol=1e-5, rtol=1e-5)
    # Orthonormal: applying it twice gives the input back.
    torch.testing.assert_close(llama.fast_hadamard_transform(out), x, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: llama.custom_sdpa(torch.randn(1, 2, 4), torch.randn(1, 8, 4, 4),
                                   torch.randn(1, 8, 4, 4), 0), "query must be 4-D"),
        (lambda: llama.custom_sdpa(torch.randn(1, 2, 3, 4), torch.randn(1, 8, 2, 4),
                                   torch.randn(1, 8, 2, 4), 0), "not a multiple"),
        (lambda: llama.custom_sdpa(torch.randn(1, 2, 4, 4), torch.randn(1, 8, 4, 4),
                                   torch.randn(1, 8, 4, 4), 7), "exceeds"),
        (lambda: llama.custom_sdpa(torch.randn(1, 2, 4, 4), torch.randn(1, 8, 4, 4),
                                   torch.randn(1, 8, 4, 4), 0, torch.zeros(2, 8),
                                   0.0, True), "cannot both"),
        (lambda: llama.custom_sdpa(torch.randn(1, 2, 4, 4), torch.randn(1, 8, 4, 4),
                                   torch.randn(1, 8, 4, 4), 0, torch.zeros(2, 5)),
         "attn_mask has shape"),
        (lambda: llama.update_cache(torch.randn(1, 3, 2, 4), torch.zeros(1, 8, 2, 4), 6),
         "exceeds"),
        (lambda: llama.update_cache(torch.randn(1, 3, 2, 4), torch.zeros(1, 8, 3, 4), 0),
         "heads"),
        (lambda: llama.fast_hadamard_transform(torch.randn(2, 12)), "power of two"),
    ],
)
def test_bad_arguments_name_the_problem(call, message):
    with pytest.raises((ValueError, RuntimeError), match=message):
        call()


class _CachedAttention(torch.nn.Module):
    """One attention step over a KV cache held in buffers, written with
    update_cache and read by custom_sdpa (what the cache transforms emit)."""

    def __init__(self, max_seq=16, kv_heads=2, head_dim=8):
        super().__init__()
        shape = (1, max_seq, kv_heads, head_dim)
        self.register_buffer("k_cache", torch.zeros(shape))
        self.register_buffer("v_cache", torch.zeros(shape))

    def forward(self, q, k, v, input_pos):
        start = input_pos[0].item()
        llama.update_cache(k, self.k_cache, start)
        llama.update_cache(v, self.v_cache, start)
        return llama.custom_sdpa(q, self.k_cache, self.v_cache, start, None, 0.0, True, None)


def test_export_uses_out_variants_and_mutates_caches_in_place():
    from executorch.exir import to_edge
    from executorch.exir.capture._config import ExecutorchBackendConfig

    q, k, v = torch.randn(1, 3, 4, 8), torch.randn(1, 3, 2, 8), torch.randn(1, 3, 2, 8)
    exported = torch.export.export(_CachedAttention(), (q, k, v, torch.tensor([0])))
    program = to_edge(exported).to_executorch(ExecutorchBackendConfig(kernel_library=None))
    targets = [
        str(n.target) for n in program.exported_program().graph.nodes if n.op == "call_function"
    ]
    assert sum("llama::update_cache.out" in t for t in targets) == 2
    assert any("llama::custom_sdpa.out" in t for t in targets)
    # The caches are written by update_cache itself: no copy back per call.
    assert not any("copy_" in t or "auto_functionalized" in t for t in targets)


def _export_cached_attention(model, max_seq_len=8):
    from executorch.exir import to_edge

    seq = torch.export.Dim("seq", min=1, max=max_seq_len)
    q, k, v = torch.randn(1, 3, 4, 8), torch.randn(1, 3, 2, 8), torch.randn(1, 3, 2, 8)
    exported = torch.export.export(
        model,
        (q, k, v, torch.tensor([0])),
        dynamic_shapes=({1: seq}, {1: seq}, {1: seq}, None),
    )
    return to_edge(exported).to_executorch()


def test_runtime_matches_eager_over_prefill_and_decode():
    """The runtime's kernels (registered by the Python extension) keep the
    cache in the program's buffers across calls, as eager keeps it in the
    module's: a prefill of 5 rows, then decode steps of 1."""
    from executorch.extension.pybindings.portable_lib import (
        _load_for_executorch_from_buffer,
    )

    torch.manual_seed(5)
    module = _load_for_executorch_from_buffer(
        _export_cached_attention(_CachedAttention()).buffer
    )
    eager = _CachedAttention()
    for start, s in [(0, 5), (5, 1), (6, 1), (7, 1)]:
        args = (torch.randn(1, s, 4, 8), torch.randn(1, s, 2, 8),
                torch.randn(1, s, 2, 8), torch.tensor([start]))
        torch.testing.assert_close(
            module.forward(list(args))[0], eager(*args), atol=1e-5, rtol=1e-5
        )


def test_sdpa_benchmark_smoke(capsys):
    """benchmarks/sdpa_benchmark.py runs (one round of one shape; it checks
    its outputs against eager before timing)."""
    import importlib.util
    import os

    path = os.path.join(
        os.path.dirname(__file__), "..", "..", "benchmarks", "sdpa_benchmark.py"
    )
    spec = importlib.util.spec_from_file_location("sdpa_benchmark", path)
    benchmark = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(benchmark)
    benchmark.main(["--rounds", "1", "--only", "decode_512"])
    assert "decode_512" in capsys.readouterr().out


_UPSTREAM_MODEL = """
import sys, torch
from executorch.extension.llm.custom_ops import custom_ops  # noqa: F401

class CachedAttention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("k_cache", torch.zeros(1, 16, 2, 8))
        self.register_buffer("v_cache", torch.zeros(1, 16, 2, 8))

    def forward(self, q, k, v, input_pos):
        start = input_pos[0].item()
        torch.ops.llama.update_cache(k, self.k_cache, start)
        torch.ops.llama.update_cache(v, self.v_cache, start)
        return torch.ops.llama.custom_sdpa(
            q, self.k_cache, self.v_cache, start, None, 0.0, True, None)
"""

_UPSTREAM_EXPORT = _UPSTREAM_MODEL + """
from executorch.exir import to_edge
example = (torch.randn(1, 1, 4, 8), torch.randn(1, 1, 2, 8), torch.randn(1, 1, 2, 8),
           torch.tensor([0]))
to_edge(torch.export.export(CachedAttention(), example)).to_executorch().save(sys.argv[1])
"""

_UPSTREAM_RUN = """
import sys, torch
from executorch.extension.llm.custom_ops import custom_ops  # noqa: F401
from executorch.extension.pybindings.portable_lib import _load_for_executorch
module = _load_for_executorch(sys.argv[1])
steps = torch.load(sys.argv[2])
torch.save([module.forward(list(args))[0] for args in steps], sys.argv[3])
"""


def _decode_steps():
    g = torch.Generator().manual_seed(6)
    return [
        (torch.randn(1, 1, 4, 8, generator=g), torch.randn(1, 1, 2, 8, generator=g),
         torch.randn(1, 1, 2, 8, generator=g), torch.tensor([pos]))
        for pos in range(5)
    ]


def test_upstream_programs_with_custom_ops_run_here_and_ours_there(upstream_python, tmp_path):
    """The operators' names and schemas are upstream's: a program upstream
    exports with update_cache/custom_sdpa runs on our runtime, ours runs on
    upstream's, both decoding as eager."""
    import subprocess

    from executorch.exir import to_edge
    from executorch.extension.pybindings.portable_lib import _load_for_executorch

    theirs, ours = tmp_path / "upstream.pte", tmp_path / "ours.pte"
    subprocess.run([upstream_python, "-c", _UPSTREAM_EXPORT, str(theirs)], check=True, cwd="/")
    steps = _decode_steps()
    exported = torch.export.export(_CachedAttention(), steps[0])
    to_edge(exported).to_executorch().save(str(ours))
    torch.save(steps, tmp_path / "steps.pt")
    subprocess.run(
        [upstream_python, "-c", _UPSTREAM_RUN, str(ours), str(tmp_path / "steps.pt"),
         str(tmp_path / "outs.pt")],
        check=True, cwd="/",
    )
    on_upstream = torch.load(tmp_path / "outs.pt")
    here = _load_for_executorch(str(theirs))
    eager = _CachedAttention()
    for step, args in enumerate(steps):
        expected = eager(*args)
        torch.testing.assert_close(on_upstream[step], expected, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(here.forward(list(args))[0], expected, atol=1e-5, rtol=1e-5)
