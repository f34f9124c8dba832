"""The LLM custom operators (`llama::` namespace) for torch, under upstream
ExecuTorch's module name and schemas.

Importing this module (as upstream's LLM flows and Hugging Face's
optimum-executorch do) defines for torch:

- `llama::update_cache(value, cache, start_pos)`: writes `value`
  [batch, seq, heads, head_dim] into `cache` [batch, max_seq, heads,
  head_dim] at positions start_pos .. start_pos + seq - 1, in place; returns
  a one-element placeholder tensor (the cache is the result).
- `llama::update_cache_with_indices(value, cache, start_pos, indices)`:
  the same, row s of batch b going to position indices[b, s] (ring buffers).
- `llama::custom_sdpa(query, key, value, start_pos, attn_mask, drpout_p,
  is_causal, scale)`: attention of query [batch, seq, heads, head_dim] over
  the caches key/value [batch, max_seq, kv_heads, head_dim] (kv_heads
  dividing heads: grouped-query attention). Without a mask it attends to the
  first start_pos + seq positions, causally from start_pos when `is_causal`
  (query row s sees positions <= start_pos + s); with a float mask
  [seq, max_seq] it attends to every position, the mask added to the
  scores.
- `llama::sdpa_with_kv_cache(...)`: update_cache of key and value at
  start_pos, then custom_sdpa.
- `llama::fast_hadamard_transform(mat)`: the normalized Walsh-Hadamard
  transform of the last dim (a power of two), as SpinQuant rotates with.

and each one's out variant (`.out`), which the compiler turns calls into;
the runtime's kernels are `extension/llm/custom_ops/*.cpp`, declared in
`custom_ops.yaml` beside this file. The CPU implementations here are
the references, computed with torch's own scaled_dot_product_attention; the
fake implementations give shapes to torch.export and check arguments,
raising ValueError that names the operator and the argument.

Importing twice is harmless.
"""

import math
from typing import Optional

import torch
import torch.nn.functional as F

_SCHEMAS = {
    "update_cache": "(Tensor value, Tensor(a!) cache, SymInt start_pos) -> Tensor",
    "update_cache.out": (
        "(Tensor value, Tensor(a!) cache, SymInt start_pos, *, Tensor(b!) out) "
        "-> Tensor(b!)"
    ),
    "update_cache_with_indices": (
        "(Tensor value, Tensor(a!) cache, SymInt start_pos, Tensor indices) -> Tensor"
    ),
    "update_cache_with_indices.out": (
        "(Tensor value, Tensor(a!) cache, SymInt start_pos, Tensor indices, *, "
        "Tensor(b!) out) -> Tensor(b!)"
    ),
    "custom_sdpa": (
        "(Tensor query, Tensor key, Tensor value, SymInt start_pos, "
        "Tensor? attn_mask=None, float drpout_p=0.0, bool is_causal=False, "
        "float? scale=None) -> Tensor"
    ),
    "custom_sdpa.out": (
        "(Tensor query, Tensor key, Tensor value, SymInt start_pos, "
        "Tensor? attn_mask=None, float drpout_p=0.0, bool is_causal=False, "
        "float? scale=None, *, Tensor(a!) out) -> Tensor(a!)"
    ),
    "sdpa_with_kv_cache": (
        "(Tensor query, Tensor key, Tensor value, Tensor(a!) key_cache, "
        "Tensor(b!) value_cache, SymInt start_pos, SymInt seq_len, "
        "Tensor? attn_mask=None, float drpout_p=0.0, bool is_causal=False, "
        "float? scale=None) -> Tensor"
    ),
    "sdpa_with_kv_cache.out": (
        "(Tensor query, Tensor key, Tensor value, Tensor(a!) key_cache, "
        "Tensor(b!) value_cache, SymInt start_pos, SymInt seq_len, "
        "Tensor? attn_mask=None, float drpout_p=0.0, bool is_causal=False, "
        "float? scale=None, *, Tensor(c!) out) -> Tensor(c!)"
    ),
    "fast_hadamard_transform": "(Tensor mat) -> Tensor",
    "fast_hadamard_transform.out": "(Tensor mat, *, Tensor(a!) out) -> Tensor(a!)",
}


def _already_defined() -> bool:
    # Another copy of this module (or upstream's library) defined them.
    try:
        torch.ops.llama.custom_sdpa.default
        return True
    except (AttributeError, RuntimeError):
        return False


_FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


class _Checker:
    """Argument checks shared by the fake and reference implementations;
    each failure names the operator and the argument."""

    def __init__(self, op: str):
        self.op = op

    def fail(self, message: str) -> None:
        raise ValueError(f"llama::{self.op}: {message}")

    def dims(self, name: str, t: torch.Tensor, layout: str) -> None:
        if t.dim() != 4:
            self.fail(f"{name} must be 4-D [{layout}], got shape {tuple(t.shape)}")

    def same_dtype(self, name: str, t: torch.Tensor, ref_name: str, ref: torch.Tensor):
        if t.dtype != ref.dtype:
            self.fail(f"{name} has dtype {t.dtype}, {ref_name} has {ref.dtype}")


def _check_cache_update(
    op: str, value: torch.Tensor, cache: torch.Tensor, start_pos, indices=None
) -> None:
    check = _Checker(op)
    check.dims("value", value, "batch, seq, heads, head_dim")
    check.dims("cache", cache, "batch, max_seq, heads, head_dim")
    check.same_dtype("value", value, "cache", cache)
    for dim, what in ((0, "batch"), (2, "heads"), (3, "head_dim")):
        if value.size(dim) != cache.size(dim):
            check.fail(
                f"value and cache differ in {what} (dim {dim}): "
                f"{value.size(dim)} vs {cache.size(dim)}"
            )
    if indices is not None:
        if indices.dim() != 2 or indices.dtype != torch.int64:
            check.fail(
                f"indices must be a 2-D int64 tensor [batch, seq], got "
                f"{indices.dtype} of shape {tuple(indices.shape)}"
            )
        if tuple(indices.shape) != tuple(value.shape[:2]):
            check.fail(
                f"indices has shape {tuple(indices.shape)}, value's batch and seq "
                f"are {tuple(value.shape[:2])}"
            )
        return
    seq_len = value.size(1)
    torch._check(start_pos >= 0, lambda: f"llama::{op}: start_pos {start_pos} < 0")
    torch._check(
        start_pos + seq_len <= cache.size(1),
        lambda: f"llama::{op}: start_pos {start_pos} + seq {seq_len} exceeds the "
        f"cache's {cache.size(1)} positions",
    )


def _check_sdpa(
    op: str,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attn_mask: Optional[torch.Tensor],
    drpout_p: float,
    is_causal: bool,
) -> None:
    check = _Checker(op)
    check.dims("query", query, "batch, seq, heads, head_dim")
    check.dims("key", key, "batch, max_seq, kv_heads, head_dim")
    check.dims("value", value, "batch, max_seq, kv_heads, head_dim")
    if query.dtype not in _FLOAT_DTYPES:
        check.fail(f"query must be float32, float16 or bfloat16, got {query.dtype}")
    check.same_dtype("key", key, "query", query)
    check.same_dtype("value", value, "query", query)
    if key.shape != value.shape:
        check.fail(f"key {tuple(key.shape)} and value {tuple(value.shape)} differ")
    if key.size(0) != query.size(0) or key.size(3) != query.size(3):
        check.fail(
            f"key {tuple(key.shape)} does not match query {tuple(query.shape)} in "
            "batch or head_dim"
        )
    heads, kv_heads = query.size(2), key.size(2)
    if kv_heads == 0 or heads % kv_heads:
        check.fail(f"query's {heads} heads are not a multiple of key's {kv_heads}")
    if drpout_p != 0.0:
        check.fail(f"drpout_p must be 0 (an inference operator), got {drpout_p}")
    if attn_mask is not None:
        if is_causal:
            check.fail("attn_mask and is_causal cannot both be given")
        if attn_mask.dtype != query.dtype or attn_mask.dim() != 2:
            check.fail(
                f"attn_mask must be a 2-D {query.dtype} tensor [seq, max_seq] of "
                f"additive scores, got {attn_mask.dtype} of shape "
                f"{tuple(attn_mask.shape)}"
            )
        if tuple(attn_mask.shape) != (query.size(1), key.size(1)):
            check.fail(
                f"attn_mask has shape {tuple(attn_mask.shape)}, expected "
                f"{(query.size(1), key.size(1))} (query seq, key max_seq)"
            )


def _check_hadamard(mat: torch.Tensor) -> None:
    check = _Checker("fast_hadamard_transform")
    if mat.dim() == 0:
        check.fail("mat must have at least one dim")
    n = mat.size(-1)
    if n < 1 or n & (n - 1):
        check.fail(f"the last dim must be a power of two, got {n}")
    if mat.dtype not in _FLOAT_DTYPES:
        check.fail(f"mat must be float32, float16 or bfloat16, got {mat.dtype}")


# ---- references (CPU) ------------------------------------------------------


def update_cache_reference(value, cache, start_pos, indices=None) -> None:
    """Writes value into cache in place (rows at start_pos, or at indices)."""
    if indices is None:
        cache[:, start_pos : start_pos + value.size(1)] = value
        return
    for b in range(value.size(0)):
        cache[b, indices[b]] = value[b]


def custom_sdpa_reference(
    query, key, value, start_pos, attn_mask=None, is_causal=False, scale=None
) -> torch.Tensor:
    """torch's scaled_dot_product_attention over the cache positions that
    llama::custom_sdpa attends to (see the module's docstring)."""
    seq_len = query.size(1)
    if attn_mask is None:
        key = key[:, : start_pos + seq_len]
        value = value[:, : start_pos + seq_len]
    q, k, v = (t.transpose(1, 2) for t in (query, key, value))
    reps = q.size(1) // k.size(1)
    if reps > 1:
        k = k.repeat_interleave(reps, dim=1)
        v = v.repeat_interleave(reps, dim=1)
    mask = attn_mask
    if is_causal:
        # Row s is position start_pos + s: it sees positions up to that one.
        mask = torch.ones(seq_len, k.size(2), dtype=torch.bool).tril(start_pos)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)
    return out.transpose(1, 2).contiguous()


def fast_hadamard_transform_reference(mat: torch.Tensor) -> torch.Tensor:
    """mat @ H / sqrt(n), H the n x n Sylvester-Hadamard matrix."""
    n = mat.size(-1)
    x = mat.float().reshape(-1, n)
    h = 1
    while h < n:
        x = x.reshape(-1, n // (2 * h), 2, h)
        x = torch.stack((x[:, :, 0] + x[:, :, 1], x[:, :, 0] - x[:, :, 1]), dim=2)
        h *= 2
    return (x.reshape(mat.shape) / math.sqrt(n)).to(mat.dtype)


def _placeholder(value: torch.Tensor) -> torch.Tensor:
    return torch.zeros((1,), dtype=value.dtype, device=value.device)


# ---- fake (meta) implementations, upstream's names -------------------------


def update_cache_meta(value, cache, start_pos):
    _check_cache_update("update_cache", value, cache, start_pos)
    return torch.empty((1,), dtype=value.dtype, device=value.device)


def update_cache_with_indices_meta(value, cache, start_pos, indices):
    _check_cache_update("update_cache_with_indices", value, cache, start_pos, indices)
    return torch.empty((1,), dtype=value.dtype, device=value.device)


def custom_sdpa(
    query,
    key_cache,
    value_cache,
    start_pos,
    attn_mask=None,
    drpout_p=0.0,
    is_causal=False,
    scale=None,
):
    _check_sdpa(
        "custom_sdpa", query, key_cache, value_cache, attn_mask, drpout_p, is_causal
    )
    return torch.empty(query.shape, dtype=query.dtype, device=query.device)


def sdpa_with_kv_cache_meta(
    query,
    key,
    value,
    key_cache,
    value_cache,
    start_pos,
    seq_len,
    attn_mask=None,
    drpout_p=0.0,
    is_causal=False,
    scale=None,
):
    _check_cache_update("sdpa_with_kv_cache", key, key_cache, start_pos)
    _check_cache_update("sdpa_with_kv_cache", value, value_cache, start_pos)
    _check_sdpa(
        "sdpa_with_kv_cache",
        query,
        key_cache,
        value_cache,
        attn_mask,
        drpout_p,
        is_causal,
    )
    return torch.empty(query.shape, dtype=query.dtype, device=query.device)


def fast_hadamard_transform_meta(mat):
    _check_hadamard(mat)
    return torch.empty_like(mat)


# ---- eager implementations -------------------------------------------------


def _update_cache(value, cache, start_pos):
    update_cache_meta(value, cache, start_pos)
    update_cache_reference(value, cache, start_pos)
    return _placeholder(value)


def _update_cache_with_indices(value, cache, start_pos, indices):
    update_cache_with_indices_meta(value, cache, start_pos, indices)
    if bool(((indices < 0) | (indices >= cache.size(1))).any()):
        raise ValueError(
            f"llama::update_cache_with_indices: indices must be in "
            f"[0, {cache.size(1)}), got {indices.tolist()}"
        )
    update_cache_reference(value, cache, start_pos, indices)
    return _placeholder(value)


def _custom_sdpa(
    query, key, value, start_pos, attn_mask=None, drpout_p=0.0, is_causal=False, scale=None
):
    custom_sdpa(query, key, value, start_pos, attn_mask, drpout_p, is_causal, scale)
    if attn_mask is None and start_pos + query.size(1) > key.size(1):
        raise ValueError(
            f"llama::custom_sdpa: start_pos {start_pos} + seq {query.size(1)} exceeds "
            f"the cache's {key.size(1)} positions"
        )
    return custom_sdpa_reference(query, key, value, start_pos, attn_mask, is_causal, scale)


def _sdpa_with_kv_cache(
    query,
    key,
    value,
    key_cache,
    value_cache,
    start_pos,
    seq_len,
    attn_mask=None,
    drpout_p=0.0,
    is_causal=False,
    scale=None,
):
    sdpa_with_kv_cache_meta(
        query, key, value, key_cache, value_cache, start_pos, seq_len,
        attn_mask, drpout_p, is_causal, scale,
    )
    update_cache_reference(key, key_cache, start_pos)
    update_cache_reference(value, value_cache, start_pos)
    return custom_sdpa_reference(
        query, key_cache, value_cache, start_pos, attn_mask, is_causal, scale
    )


def _fast_hadamard_transform(mat):
    fast_hadamard_transform_meta(mat)
    return fast_hadamard_transform_reference(mat)


def _out_variant(functional):
    """The `.out` overload of `functional`: its result copied into `out`
    (mutated inputs are mutated by `functional` itself)."""

    def out_variant(*args, out, **kwargs):
        result = functional(*args, **kwargs)
        out.resize_(result.shape)
        out.copy_(result)
        return out

    return out_variant


def _fake_out(fake):
    def out_variant(*args, out, **kwargs):
        fake(*args, **kwargs)
        return out

    return out_variant


_IMPLEMENTATIONS = {
    "update_cache": (_update_cache, update_cache_meta),
    "update_cache_with_indices": (
        _update_cache_with_indices,
        update_cache_with_indices_meta,
    ),
    "custom_sdpa": (_custom_sdpa, custom_sdpa),
    "sdpa_with_kv_cache": (_sdpa_with_kv_cache, sdpa_with_kv_cache_meta),
    "fast_hadamard_transform": (_fast_hadamard_transform, fast_hadamard_transform_meta),
}


def _register() -> Optional[torch.library.Library]:
    if _already_defined():
        return None
    lib = torch.library.Library("llama", "FRAGMENT")
    for name, schema in _SCHEMAS.items():
        lib.define(name + schema)
    for name, (eager, fake) in _IMPLEMENTATIONS.items():
        lib.impl(name, eager, "CompositeExplicitAutograd")
        lib.impl(f"{name}.out", _out_variant(eager), "CompositeExplicitAutograd")
        torch.library.register_fake(f"llama::{name}", fake, lib=lib)
        torch.library.register_fake(f"llama::{name}.out", _fake_out(fake), lib=lib)
    return lib


_lib = _register()
