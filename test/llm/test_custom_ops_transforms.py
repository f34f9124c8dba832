"""The module and graph rewrites around the LLM custom operators:
replace_kv_cache_with_custom_kv_cache (custom_kv_cache.py) keeps a model's
outputs over prefill and decode, in eager and through our runtime;
RemoveRedundantTransposes (export_passes.py) removes transpose pairs that
cancel and keeps the outputs; the ring-buffer cache attends to its window."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from executorch.examples.models.llama.source_transformation.custom_kv_cache import (
    CustomKVCache,
    CustomRingKVCache,
    replace_kv_cache_with_custom_kv_cache,
)
from executorch.extension.llm.export.export_passes import RemoveRedundantTransposes

BATCH, HEADS, KV_HEADS, HEAD_DIM, MAX_SEQ, DIM = 1, 4, 2, 8, 16, 32


class KVCache(nn.Module):
    """A plain cache as the Llama model keeps one: [batch, heads, max_seq,
    head_dim] buffers written by indexing."""

    def __init__(self):
        super().__init__()
        shape = (BATCH, KV_HEADS, MAX_SEQ, HEAD_DIM)
        self.register_buffer("k_cache", torch.zeros(shape))
        self.register_buffer("v_cache", torch.zeros(shape))

    def update(self, input_pos, k_val, v_val):
        self.k_cache[:, :, input_pos] = k_val
        self.v_cache[:, :, input_pos] = v_val
        return self.k_cache, self.v_cache


class Attention(nn.Module):
    """Projections, the cache, and causal attention from input_pos[0] (the
    custom operator reads [batch, seq, heads, head_dim])."""

    def __init__(self):
        super().__init__()
        self.wq = nn.Linear(DIM, HEADS * HEAD_DIM, bias=False)
        self.wk = nn.Linear(DIM, KV_HEADS * HEAD_DIM, bias=False)
        self.wv = nn.Linear(DIM, KV_HEADS * HEAD_DIM, bias=False)
        self.wo = nn.Linear(HEADS * HEAD_DIM, DIM, bias=False)
        self.kv_cache = KVCache()

    def forward(self, x, input_pos):
        b, s, _ = x.shape
        q = self.wq(x).view(b, s, HEADS, HEAD_DIM).transpose(1, 2)
        k = self.wk(x).view(b, s, KV_HEADS, HEAD_DIM).transpose(1, 2)
        v = self.wv(x).view(b, s, KV_HEADS, HEAD_DIM).transpose(1, 2)
        k, v = self.kv_cache.update(input_pos, k, v)
        start = input_pos[0].item()
        out = torch.ops.llama.custom_sdpa(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), start, None, 0.0, True
        )
        return self.wo(out.reshape(b, s, -1))


class TinyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Attention(), Attention()])

    def forward(self, x, input_pos):
        for layer in self.layers:
            x = x + layer(x, input_pos)
        return x


STEPS = [(0, 5), (5, 1), (6, 1), (7, 3)]


def _inputs(seed=0):
    g = torch.Generator().manual_seed(seed)
    return [
        (torch.randn(BATCH, s, DIM, generator=g), torch.arange(start, start + s))
        for start, s in STEPS
    ]


def _models():
    torch.manual_seed(0)
    plain = TinyModel().eval()
    custom = TinyModel().eval()
    custom.load_state_dict(plain.state_dict())
    replace_kv_cache_with_custom_kv_cache(custom)
    return plain, custom


def test_replacement_swaps_every_cache_and_keeps_outputs():
    plain, custom = _models()
    caches = [m for m in custom.modules() if isinstance(m, CustomKVCache)]
    assert len(caches) == 2 and not any(isinstance(m, KVCache) for m in custom.modules())
    assert caches[0].k_cache.shape == (BATCH, MAX_SEQ, KV_HEADS, HEAD_DIM)
    with torch.no_grad():
        for x, pos in _inputs():
            torch.testing.assert_close(custom(x, pos), plain(x, pos), atol=1e-5, rtol=1e-5)


def _export(model, example):
    seq = torch.export.Dim("seq", min=1, max=8)
    return torch.export.export(model, example, dynamic_shapes=({1: seq}, {0: seq}))


def _transposes(graph_module):
    return sum(
        n.op == "call_function" and n.target == torch.ops.aten.transpose.int
        for n in graph_module.graph.nodes
    )


def test_remove_redundant_transposes_then_runtime_matches_eager():
    from executorch.exir import to_edge
    from executorch.extension.pybindings.portable_lib import (
        _load_for_executorch_from_buffer,
    )

    plain, custom = _models()
    inputs = _inputs(1)
    exported = _export(custom, inputs[0])
    gm = exported.module()
    before = _transposes(gm)
    result = RemoveRedundantTransposes()(gm)
    assert result.modified
    # Per layer, q, k and v go [b, s, h, d] -> [b, h, s, d] -> back into the
    # cache or custom_sdpa, and k, v the other way out of the cache: five
    # pairs that all cancel.
    assert before == 2 * 5 * 2 and _transposes(result.graph_module) == 0
    updates = [n for n in result.graph_module.graph.nodes if "update_cache" in str(n.target)]
    assert len(updates) == 4, "the cache writes (results unused) must survive"
    reexported = _export(result.graph_module, inputs[0])
    module = _load_for_executorch_from_buffer(to_edge(reexported).to_executorch().buffer)
    with torch.no_grad():
        for x, pos in inputs:
            torch.testing.assert_close(
                module.forward([x, pos])[0], plain(x, pos), atol=1e-4, rtol=1e-4
            )


class _Permutes(nn.Module):
    def __init__(self, first, second):
        super().__init__()
        self.first, self.second = first, second

    def forward(self, x):
        return x.permute(self.first).permute(self.second) + 1


@pytest.mark.parametrize(
    "first,second,removed",
    [
        ([0, 2, 3, 1], [0, 3, 1, 2], True),  # inverse of each other
        ([0, 2, 3, 1], [0, 2, 3, 1], False),  # the same twice: not identity
        ([1, 0, 2, 3], [1, 0, 2, 3], True),
    ],
)
def test_permute_pairs(first, second, removed):
    x = torch.randn(2, 3, 4, 5)
    gm = torch.export.export(_Permutes(first, second), (x,)).module()
    result = RemoveRedundantTransposes()(gm)
    assert result.modified == removed
    torch.testing.assert_close(result.graph_module(x), _Permutes(first, second)(x))


def test_transpose_pairs_with_negative_dims():
    class M(nn.Module):
        def forward(self, x):
            return x.transpose(1, -2).transpose(2, 1) * 2, x.transpose(0, 1).transpose(1, 2)

    x = torch.randn(2, 3, 4, 5)
    gm = torch.export.export(M(), (x,)).module()
    result = RemoveRedundantTransposes()(gm)
    assert result.modified and _transposes(result.graph_module) == 2
    for got, want in zip(result.graph_module(x), M()(x)):
        assert torch.equal(got, want)


def test_ring_cache_attends_to_its_window():
    """Decoding past the window: each step sees exactly the last `window`
    positions, as eager attention with a sliding-window mask does."""
    window, heads, dim = 4, 2, 8
    cache = CustomRingKVCache(1, window, heads, dim)
    assert cache.k_cache.shape == (1, 2 * window, heads, dim)
    torch.manual_seed(2)
    keys, values = torch.randn(1, heads, 11, dim), torch.randn(1, heads, 11, dim)
    q_all = torch.randn(1, heads, 11, dim)
    for start, s in [(0, 3), (3, 1), (4, 2), (6, 1), (7, 1), (8, 3)]:
        pos = torch.arange(start, start + s)
        k, v = cache.update(pos, keys[:, :, start : start + s], values[:, :, start : start + s])
        mask = cache.create_causal_mask_for_ring_buffer(start, s)
        q = q_all[:, :, start : start + s]
        out = torch.ops.llama.custom_sdpa(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), start, mask, 0.0, False
        )
        rows = torch.arange(start, start + s).view(-1, 1)
        cols = torch.arange(start + s).view(1, -1)
        window_mask = (cols <= rows) & (cols > rows - window)
        expected = F.scaled_dot_product_attention(
            q, keys[:, :, : start + s], values[:, :, : start + s], attn_mask=window_mask
        )
        torch.testing.assert_close(out, expected.transpose(1, 2), atol=1e-5, rtol=1e-5)


def test_xnnpack_delegated_linears_around_custom_ops_match_eager():
    """The linears go to XNNPACK, update_cache and custom_sdpa stay on the
    runtime's kernels, writing the caches between delegate calls: token-by-
    token decoding matches eager."""
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower
    from executorch.extension.pybindings.portable_lib import (
        _load_for_executorch_from_buffer,
    )

    plain, custom = _models()
    example = (torch.randn(BATCH, 1, DIM), torch.tensor([0]))
    program = to_edge_transform_and_lower(
        torch.export.export(custom, example), partitioner=[XnnpackPartitioner()]
    ).to_executorch()
    targets = [str(n.target) for n in program.exported_program().graph.nodes]
    assert any("executorch_call_delegate" in t for t in targets)
    assert any("llama::custom_sdpa.out" in t for t in targets)
    module = _load_for_executorch_from_buffer(program.buffer)
    g = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for pos in range(6):
            x = torch.randn(BATCH, 1, DIM, generator=g)
            torch.testing.assert_close(
                module.forward([x, torch.tensor([pos])])[0],
                plain(x, torch.tensor([pos])),
                atol=1e-5,
                rtol=1e-5,
            )
