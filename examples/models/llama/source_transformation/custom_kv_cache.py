"""KV caches written with the `llama::update_cache` custom operators,
under upstream ExecuTorch's names (Hugging Face's optimum-executorch builds
its caches from `CustomKVCache` and `CustomRingKVCache`).

A plain KV cache keeps keys and values as [batch, heads, max_context,
head_dim] buffers and writes them with index_put, which the compiler turns
into a copy of the whole cache per call. These keep them as [batch,
max_context, heads, head_dim], the layout of the custom operators, and
write only the new rows in place with `llama::update_cache`. `update` takes
and returns [batch, heads, seq, head_dim] like the plain cache; the
transposes it adds on the way in and out cancel against the ones around
`llama::custom_sdpa` (`RemoveRedundantTransposes` removes them after
export).

`replace_kv_cache_with_custom_kv_cache(model)` swaps every KV-cache module
of a model for its custom counterpart, in place. A KV-cache module is one
that holds `k_cache` and `v_cache` buffers [batch, heads, max_context,
head_dim] and has an `update(input_pos, k_val, v_val)` method, as the
Llama model's `KVCache` does; one that also has a `window_size` (a sliding
window ring buffer, `RingKVCache`) becomes a `CustomRingKVCache`.
"""

import logging
from typing import Optional, Tuple

import torch
from torch import nn

# Defines llama::update_cache and llama::update_cache_with_indices.
from executorch.extension.llm.custom_ops import custom_ops  # noqa: F401


class CustomKVCache(nn.Module):
    """A KV cache of [batch, max_context, heads, head_dim] buffers written
    with llama::update_cache."""

    def __init__(
        self,
        max_batch_size: int,
        max_context_length: int,
        n_heads: int,
        head_dim: int,
        dtype=torch.float32,
    ):
        super().__init__()
        self.max_batch_size = max_batch_size
        self.max_context_length = max_context_length
        self.n_heads = n_heads
        self.head_dim = head_dim
        shape = (max_batch_size, max_context_length, n_heads, head_dim)
        self.register_buffer("k_cache", torch.zeros(shape, dtype=dtype))
        self.register_buffer("v_cache", torch.zeros(shape, dtype=dtype))

    def update(
        self,
        input_pos: torch.Tensor,
        k_val: torch.Tensor,
        v_val: torch.Tensor,
        indices: Optional[torch.Tensor] = None,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """Writes k_val, v_val [batch, heads, seq, head_dim] at position
        input_pos[0] (or, with `indices` [batch, seq], at those positions);
        returns the whole caches as [batch, heads, max_context, head_dim]."""
        k_val = k_val.transpose(1, 2)
        v_val = v_val.transpose(1, 2)
        start_pos = input_pos[0].item()
        if indices is None:
            torch.ops.llama.update_cache(k_val, self.k_cache, start_pos)
            torch.ops.llama.update_cache(v_val, self.v_cache, start_pos)
        else:
            torch.ops.llama.update_cache_with_indices(k_val, self.k_cache, start_pos, indices)
            torch.ops.llama.update_cache_with_indices(v_val, self.v_cache, start_pos, indices)
        return self.k_cache.transpose(1, 2), self.v_cache.transpose(1, 2)


class CachePositionsManager(nn.Module):
    """Which sequence position each slot of a ring buffer holds (-1: none
    yet), and where the next rows go."""

    def __init__(self, max_context_length: int):
        super().__init__()
        self.max_context_length = max_context_length
        self.register_buffer(
            "cache_positions", torch.zeros(max_context_length, dtype=torch.long)
        )

    def calculate_positions_and_update_indices(
        self, input_pos: torch.Tensor, seq_len: int
    ) -> torch.Tensor:
        """The slots of positions input_pos[0] .. + seq_len - 1 (wrapping
        around), recorded as holding them. Slots not yet reached by the
        sequence are marked empty, so a restart from position 0 forgets the
        previous sequence."""
        start_pos = input_pos[0].item()
        torch._check(start_pos >= 0)
        positions = torch.arange(seq_len, dtype=torch.long) + start_pos
        slots = positions % self.max_context_length
        reached = torch.arange(self.max_context_length, dtype=torch.long) < start_pos
        kept = torch.where(reached, self.cache_positions, torch.full_like(self.cache_positions, -1))
        self.cache_positions.copy_(kept)
        self.cache_positions.index_copy_(0, slots, positions)
        return slots


def _create_causal_mask_for_ring_buffer(
    cache_positions: torch.Tensor, window_size: int, start_pos, seq_len: int
) -> torch.Tensor:
    """Additive mask [seq_len, slots]: query row s (position start_pos + s)
    sees the slots holding positions in (its position - window_size, its
    position]."""
    query_positions = start_pos + torch.arange(seq_len, dtype=torch.long).view(-1, 1)
    delta = query_positions - cache_positions
    visible = (cache_positions >= 0) & (delta >= 0) & (delta < window_size)
    return torch.where(visible, 0.0, float("-inf"))


class CustomRingKVCache(CustomKVCache):
    """A sliding-window KV cache: a ring buffer of 2 * window positions (so
    a prefill of up to `window` rows never overwrites rows that earlier
    queries of the same call still see), written with
    llama::update_cache_with_indices; attention needs the mask of
    `create_causal_mask_for_ring_buffer`."""

    def __init__(
        self,
        max_batch_size: int,
        max_context_length: int,
        n_heads: int,
        head_dim: int,
        dtype=torch.float32,
    ):
        super().__init__(max_batch_size, max_context_length * 2, n_heads, head_dim, dtype)
        self.cache_positions_manager = CachePositionsManager(self.max_context_length)
        self.is_ring_buffer = True
        self.window_size = max_context_length

    def create_causal_mask_for_ring_buffer(self, start_pos, seq_len: int) -> torch.Tensor:
        return _create_causal_mask_for_ring_buffer(
            self.cache_positions_manager.cache_positions, self.window_size, start_pos, seq_len
        )

    def update(self, input_pos, k_val, v_val):
        seq_len = k_val.size(2)
        if seq_len > self.k_cache.size(1):
            raise ValueError(
                f"CustomRingKVCache.update: {seq_len} rows do not fit the ring "
                f"buffer's {self.k_cache.size(1)} slots"
            )
        slots = self.cache_positions_manager.calculate_positions_and_update_indices(
            input_pos, seq_len
        )
        return super().update(input_pos, k_val, v_val, slots.unsqueeze(0))

    @classmethod
    def from_custom_kv_cache(cls, kv_cache: nn.Module, sliding_window_size: int):
        """A ring cache of `sliding_window_size` shaped like `kv_cache` (a
        CustomKVCache, or a plain [batch, heads, max_context, head_dim] one)."""
        batch, second, third, head_dim = kv_cache.k_cache.shape
        heads = third if isinstance(kv_cache, CustomKVCache) else second
        return cls(batch, sliding_window_size, heads, head_dim, dtype=kv_cache.k_cache.dtype)


def _is_plain_kv_cache(module: nn.Module) -> bool:
    if isinstance(module, CustomKVCache):
        return False
    buffers = dict(module.named_buffers(recurse=False))
    k, v = buffers.get("k_cache"), buffers.get("v_cache")
    return (
        k is not None
        and v is not None
        and k.dim() == 4
        and k.shape == v.shape
        and callable(getattr(module, "update", None))
    )


def _custom_counterpart(cache: nn.Module) -> nn.Module:
    batch, heads, max_context, head_dim = cache.k_cache.shape
    window = getattr(cache, "window_size", None)
    if window is not None:
        return CustomRingKVCache(batch, window, heads, head_dim, dtype=cache.k_cache.dtype)
    return CustomKVCache(batch, max_context, heads, head_dim, dtype=cache.k_cache.dtype)


def _enable_attention_mask(parent: nn.Module) -> None:
    # An attention module whose SDPA can take an explicit mask must use one
    # with a ring buffer (the mask says which slots each row sees).
    sdpa = getattr(parent, "SDPA", None)
    if sdpa is not None and hasattr(sdpa, "use_attention_mask"):
        sdpa.use_attention_mask = True


def _replace_kv_cache_with_custom_kv_cache(module: nn.Module) -> nn.Module:
    for name, child in module.named_children():
        if _is_plain_kv_cache(child):
            replacement = _custom_counterpart(child)
            setattr(module, name, replacement)
            if isinstance(replacement, CustomRingKVCache):
                _enable_attention_mask(module)
        else:
            _replace_kv_cache_with_custom_kv_cache(child)
    return module


def replace_kv_cache_with_custom_kv_cache(module: nn.Module) -> nn.Module:
    """Replaces each KV-cache module of `module` (see the module docstring)
    by a CustomKVCache (CustomRingKVCache for sliding-window ones) of the
    same size and dtype, in place; returns `module`. The new caches start
    empty."""
    logging.info("Replacing KVCache with CustomKVCache (in place)")
    return _replace_kv_cache_with_custom_kv_cache(module)
