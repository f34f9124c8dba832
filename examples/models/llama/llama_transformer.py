"""A Llama-architecture decoder (Meta's layout and parameter names, so that
upstream's checkpoints load): token embedding, pre-norm blocks of RMSNorm,
rotary attention with grouped key/value heads and SwiGLU feed-forward, a
final RMSNorm and the output head.

With `use_kv_cache`, forward(tokens [1, n], input_pos [1]) attends over a
static KV cache held in buffers (k_cache/v_cache [1, kv_heads, context,
head_dim]), which the exported program keeps as mutable state in planned
memory: prefill with n > 1 tokens from position input_pos[0], decode with
n = 1. Without it, forward(tokens [1, n]) attends over the tokens given.
Either returns the logits of the last position [1, vocab] (all positions,
[1, n, vocab], with `generate_full_logits`).

`use_sdpa_with_kv_cache_op` swaps the caches for upstream's custom ones
(llama::update_cache writes only the new rows) and attends with
llama::custom_sdpa.
"""

from typing import Optional, Tuple

import torch
from torch import nn
from torch.nn import functional as F

from executorch.examples.models.llama.model_args import ModelArgs


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x * x rather than x.pow(2): the same values (eager squares either
        # way), and a multiplication kernel is much cheaper than a general
        # power.
        x32 = x.float()
        normed = x32 * torch.rsqrt((x32 * x32).mean(-1, keepdim=True) + self.eps)
        return normed.type_as(x) * self.weight


def rope_tables(head_dim: int, positions: int, theta: float):
    """cos and sin [positions, head_dim / 2] of each position's rotation
    angle for each pair of dimensions."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2).float() / head_dim))
    angles = torch.outer(torch.arange(positions).float(), inv_freq)
    return angles.cos(), angles.sin()


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotates each pair (x[2i], x[2i+1]) of x [b, s, heads, head_dim] by the
    angles of its position (cos, sin [s, head_dim / 2]): Meta's interleaved
    layout."""
    pairs = x.float().reshape(*x.shape[:-1], -1, 2)
    real, imag = pairs[..., 0], pairs[..., 1]
    cos, sin = cos[None, :, None, :], sin[None, :, None, :]
    rotated = torch.stack([real * cos - imag * sin, real * sin + imag * cos], dim=-1)
    return rotated.flatten(-2).type_as(x)


class KVCache(nn.Module):
    """Keys and values of every position seen so far, [batch, kv_heads,
    max_context, head_dim], written at the positions of each call."""

    def __init__(self, batch: int, context: int, kv_heads: int, head_dim: int):
        super().__init__()
        shape = (batch, kv_heads, context, head_dim)
        self.register_buffer("k_cache", torch.zeros(shape))
        self.register_buffer("v_cache", torch.zeros(shape))

    def update(
        self, input_pos: torch.Tensor, k_val: torch.Tensor, v_val: torch.Tensor
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """Writes k_val, v_val [batch, kv_heads, seq, head_dim] from position
        input_pos[0]; returns the whole caches."""
        positions = input_pos[:1] + torch.arange(k_val.shape[2])
        self.k_cache.index_copy_(2, positions, k_val)
        self.v_cache.index_copy_(2, positions, v_val)
        return self.k_cache, self.v_cache


class Attention(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.args = args
        self.n_heads, self.n_kv_heads, self.head_dim = (
            args.n_heads,
            args.n_kv_heads,
            args.head_dim,
        )
        self.wq = nn.Linear(args.dim, args.n_heads * args.head_dim, bias=False)
        self.wk = nn.Linear(args.dim, args.n_kv_heads * args.head_dim, bias=False)
        self.wv = nn.Linear(args.dim, args.n_kv_heads * args.head_dim, bias=False)
        self.wo = nn.Linear(args.n_heads * args.head_dim, args.dim, bias=False)
        if args.use_kv_cache:
            self.kv_cache = KVCache(
                args.max_batch_size, args.max_context_len, args.n_kv_heads, args.head_dim
            )

    def forward(self, x, cos, sin, input_pos: Optional[torch.Tensor]):
        b, s, _ = x.shape
        q = self.wq(x).view(b, s, self.n_heads, self.head_dim)
        k = self.wk(x).view(b, s, self.n_kv_heads, self.head_dim)
        v = self.wv(x).view(b, s, self.n_kv_heads, self.head_dim)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        if input_pos is None:
            out = self._attend(q, k, v, torch.arange(s))
        else:
            k, v = self.kv_cache.update(input_pos, k, v)
            if self.args.use_sdpa_with_kv_cache_op:
                out = torch.ops.llama.custom_sdpa(
                    q.transpose(1, 2),
                    k.transpose(1, 2),
                    v.transpose(1, 2),
                    input_pos[0].item(),
                    None,
                    0.0,
                    True,
                ).transpose(1, 2)
            else:
                out = self._attend(q, k, v, input_pos[:1] + torch.arange(s))
        return self.wo(out.transpose(1, 2).reshape(b, s, -1))

    def _attend(self, q, k, v, positions):
        """Causal attention of q [b, heads, s, d] at `positions` over keys and
        values [b, kv_heads, n, d] at positions 0..n-1."""
        reps = self.n_heads // self.n_kv_heads
        if reps > 1:
            k = k.repeat_interleave(reps, dim=1)
            v = v.repeat_interleave(reps, dim=1)
        visible = torch.arange(k.shape[2])[None, :] <= positions[:, None]
        scores = (q @ k.transpose(-2, -1)) * (self.head_dim**-0.5)
        scores = scores.masked_fill(~visible, float("-inf"))
        return F.softmax(scores.float(), dim=-1).type_as(q) @ v


class FeedForward(nn.Module):
    def __init__(self, dim: int, hidden_dim: int):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.attention = Attention(args)
        self.feed_forward = FeedForward(args.dim, args.hidden_dim)
        self.attention_norm = RMSNorm(args.dim, args.norm_eps)
        self.ffn_norm = RMSNorm(args.dim, args.norm_eps)

    def forward(self, x, cos, sin, input_pos):
        h = x + self.attention(self.attention_norm(x), cos, sin, input_pos)
        return h + self.feed_forward(self.ffn_norm(h))


class Transformer(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.args = args
        self.tok_embeddings = nn.Embedding(args.vocab_size, args.dim)
        self.layers = nn.ModuleList(TransformerBlock(args) for _ in range(args.n_layers))
        self.norm = RMSNorm(args.dim, args.norm_eps)
        self.output = nn.Linear(args.dim, args.vocab_size, bias=False)
        positions = max(args.max_context_len, args.max_seq_len)
        cos, sin = rope_tables(args.head_dim, positions, args.rope_freq_base)
        self.register_buffer("freqs_cos", cos, persistent=False)
        self.register_buffer("freqs_sin", sin, persistent=False)
        if args.use_sdpa_with_kv_cache_op:
            if not args.use_kv_cache:
                raise ValueError("use_sdpa_with_kv_cache_op needs use_kv_cache")
            from executorch.examples.models.llama.source_transformation.custom_kv_cache import (
                replace_kv_cache_with_custom_kv_cache,
            )

            replace_kv_cache_with_custom_kv_cache(self)

    def forward(
        self, tokens: torch.Tensor, input_pos: Optional[torch.Tensor] = None
    ) -> torch.Tensor:
        seq = tokens.shape[1]
        positions = torch.arange(seq)
        if input_pos is not None:
            positions = positions + input_pos[:1]
        cos = self.freqs_cos.index_select(0, positions)
        sin = self.freqs_sin.index_select(0, positions)
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h, cos, sin, input_pos)
        if not self.args.generate_full_logits:
            h = h[:, -1, :]
        return self.output(self.norm(h))
