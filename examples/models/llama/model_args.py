"""ModelArgs: the hyperparameters of a Llama-architecture model, as
upstream's `params.json` spells them (dim, n_layers, n_heads, n_kv_heads,
vocab_size, multiple_of, ffn_dim_multiplier, norm_eps, rope_theta, ...),
plus the export options the model is built with (KV cache, custom SDPA,
dynamic shapes, sequence and context lengths)."""

import dataclasses
import json
from dataclasses import dataclass
from typing import Optional


@dataclass
class ModelArgs:
    dim: int = 4096
    n_layers: int = 1
    n_heads: int = 32
    # Key/value heads (grouped-query attention); None: n_heads.
    n_kv_heads: Optional[int] = None
    vocab_size: int = 512
    # The SwiGLU width; None: 2/3 of 4 * dim, scaled by ffn_dim_multiplier
    # and rounded up to a multiple of multiple_of (Meta's rule).
    hidden_dim: Optional[int] = None
    head_dim: Optional[int] = None
    multiple_of: int = 256
    ffn_dim_multiplier: Optional[float] = None
    norm_eps: float = 1e-5
    max_batch_size: int = 1
    # Longest single forward call, and positions the KV cache holds.
    max_seq_len: int = 2048
    max_context_len: int = 2048
    rope_theta: Optional[float] = None
    rope_freq_base: float = 10000.0
    use_kv_cache: bool = False
    # Write the cache and attend with llama::update_cache/custom_sdpa.
    use_sdpa_with_kv_cache_op: bool = False
    enable_dynamic_shape: bool = False
    # Logits of every position (else only the last one's).
    generate_full_logits: bool = False

    def __post_init__(self):
        if self.n_kv_heads is None:
            self.n_kv_heads = self.n_heads
        if self.head_dim is None:
            self.head_dim = self.dim // self.n_heads
        if self.rope_theta is not None:
            self.rope_freq_base = self.rope_theta
        if self.hidden_dim is None:
            hidden = int(2 * (4 * self.dim) / 3)
            if self.ffn_dim_multiplier is not None:
                hidden = int(self.ffn_dim_multiplier * hidden)
            self.hidden_dim = -(-hidden // self.multiple_of) * self.multiple_of
        if self.n_heads % self.n_kv_heads:
            raise ValueError(
                f"n_heads ({self.n_heads}) must be a multiple of n_kv_heads "
                f"({self.n_kv_heads})"
            )

    @classmethod
    def from_params_json(cls, path: str, **overrides) -> "ModelArgs":
        """The args in upstream's params.json at `path` (keys this model does
        not use are ignored), with `overrides` on top."""
        with open(path) as f:
            params = json.load(f)
        known = {f.name for f in dataclasses.fields(cls)}
        args = {k: v for k, v in params.items() if k in known}
        args.update(overrides)
        return cls(**args)
