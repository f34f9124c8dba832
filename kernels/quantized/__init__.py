"""The torch side of the quantized kernel library.

Importing this module (as clients of upstream ExecuTorch do:
`import executorch.kernels.quantized`) makes known to torch what the
runtime's quantized library (`quantized.yaml`, `kernels/quantized/cpu/`)
implements:

- the out variants of the `quantized_decomposed` operators torch defines
  (quantize/dequantize per tensor, per channel, per token and per channel
  group, choose_qparams), which the compiler's out-variant pass turns
  functional calls into;
- `embedding_byte`, `embedding_2bit` and `embedding_4bit` (functional,
  `.dtype` and out variants, upstream's schemas): embedding lookup in a
  table of 8-, 4- or 2-bit integers dequantized per row or per group.

The out variants compute with torch's functional reference and copy into
`out`, so a program run by torch (or `test/exir/program_interpreter.py`)
gives the reference results. Importing twice is harmless.
"""

import os
import re
from typing import Callable, List, Optional

import torch
from torch.ao.quantization.fx import _decomposed  # noqa: F401 (defines the ops)

QUANTIZED_YAML = os.path.join(os.path.dirname(os.path.abspath(__file__)), "quantized.yaml")

_NAMESPACE = "quantized_decomposed"
_lib = torch.library.Library(_NAMESPACE, "FRAGMENT")


def _overload(name: str, namespace: str = _NAMESPACE):
    packet_name, _, overload = name.partition(".")
    packet = getattr(getattr(torch.ops, namespace), packet_name)
    return getattr(packet, overload or "default")


def _is_defined(lib: torch.library.Library, name: str) -> bool:
    try:
        _overload(name, lib.ns)
        return True
    except (AttributeError, RuntimeError):
        return False


def _out_names(schema: str) -> List[str]:
    return re.findall(r"Tensor\([a-z]!\) (\w+)", schema.split("->")[0])


def _define_out_variant(lib, schema: str, functional: Callable) -> None:
    """Defines `schema` (an out variant) in `lib`, computing with
    `functional` (called with the schema's other arguments) and copying into
    the out tensors."""
    name = schema.split("(", 1)[0]
    if _is_defined(lib, name):
        return
    lib.define(schema)
    out_names = _out_names(schema)

    def out_variant(*args, **kwargs):
        outs = [kwargs.pop(n) for n in out_names]
        results = functional(*args, **kwargs)
        results = results if isinstance(results, tuple) else (results,)
        for out, result in zip(outs, results):
            out.resize_(result.shape)
            out.copy_(result)
        return outs[0] if len(outs) == 1 else tuple(outs)

    lib.impl(name, out_variant, "CompositeExplicitAutograd")


def _define_functional(lib, schema: str, fn: Callable, fake: Callable) -> None:
    """Defines `schema` computed by `fn`, with `fake` giving the result's
    shape and dtype to tracing (fake tensors)."""
    name = schema.split("(", 1)[0]
    if _is_defined(lib, name):
        return
    lib.define(schema)
    lib.impl(name, fn, "CompositeExplicitAutograd")
    torch.library.register_fake(f"{lib.ns}::{name}", fake, lib=lib)


# ---- out variants of torch's quantized_decomposed operators ----------------

_QPARAMS = "int quant_min, int quant_max, ScalarType dtype"
_TORCH_OUT_VARIANTS = [
    (
        "quantize_per_tensor",
        f"quantize_per_tensor.out(Tensor input, float scale, int zero_point, {_QPARAMS}, "
        "*, Tensor(a!) out) -> Tensor(a!)",
    ),
    (
        "quantize_per_tensor.tensor",
        f"quantize_per_tensor.Tensor_out(Tensor input, Tensor scale, Tensor zero_point, "
        f"{_QPARAMS}, *, Tensor(a!) out) -> Tensor(a!)",
    ),
    (
        "quantize_per_channel",
        "quantize_per_channel.out(Tensor input, Tensor scales, Tensor zero_points, "
        f"int axis, {_QPARAMS}, *, Tensor(a!) out) -> Tensor(a!)",
    ),
    (
        "quantize_per_token",
        "quantize_per_token.out(Tensor input, Tensor scales, Tensor zero_points, "
        f"{_QPARAMS}, *, Tensor(a!) out) -> Tensor(a!)",
    ),
    (
        "quantize_per_channel_group",
        "quantize_per_channel_group.out(Tensor input, Tensor scales, Tensor zero_points, "
        f"{_QPARAMS}, int group_size, *, Tensor(a!) out) -> Tensor(a!)",
    ),
    (
        "dequantize_per_tensor",
        f"dequantize_per_tensor.out(Tensor input, float scale, int zero_point, {_QPARAMS}, "
        "*, ScalarType? out_dtype=None, Tensor(a!) out) -> Tensor(a!)",
    ),
    (
        "dequantize_per_tensor.tensor",
        "dequantize_per_tensor.Tensor_out(Tensor input, Tensor scale, Tensor zero_point, "
        f"{_QPARAMS}, *, ScalarType? out_dtype=None, Tensor(a!) out) -> Tensor(a!)",
    ),
    (
        "dequantize_per_channel",
        "dequantize_per_channel.out(Tensor input, Tensor scales, Tensor? zero_points, "
        f"int axis, {_QPARAMS}, *, ScalarType? out_dtype=None, Tensor(a!) out) -> Tensor(a!)",
    ),
    (
        "dequantize_per_token",
        "dequantize_per_token.out(Tensor input, Tensor scales, Tensor zero_points, "
        f"{_QPARAMS}, ScalarType output_dtype, *, Tensor(a!) out) -> Tensor(a!)",
    ),
    (
        "dequantize_per_channel_group",
        "dequantize_per_channel_group.out(Tensor input, Tensor scales, Tensor? zero_points, "
        f"{_QPARAMS}, int group_size, ScalarType output_dtype, *, Tensor(a!) out) "
        "-> Tensor(a!)",
    ),
    (
        "choose_qparams.tensor",
        "choose_qparams.Tensor_out(Tensor input, int quant_min, int quant_max, float eps, "
        "ScalarType dtype, *, Tensor(a!) scale_out, Tensor(b!) zero_point_out) "
        "-> (Tensor(a!), Tensor(b!))",
    ),
    (
        "choose_qparams_per_token_asymmetric",
        "choose_qparams_per_token_asymmetric.out(Tensor input, ScalarType dtype, *, "
        "Tensor(a!) scale_out, Tensor(b!) zero_point_out) -> (Tensor(a!), Tensor(b!))",
    ),
]

for _functional, _schema in _TORCH_OUT_VARIANTS:
    _define_out_variant(_lib, _schema, _overload(_functional))


# ---- embedding_byte / embedding_2bit / embedding_4bit ----------------------


def unpack_embedding_weight(weight: torch.Tensor, bits: int) -> torch.Tensor:
    """The int8 values of a packed table (upstream's layout): 4-bit, two per
    byte, the even one in the high nibble, stored + 8; 2-bit, four per byte
    from the low bits up, stored + 2; 8-bit, as they are."""
    if bits == 8:
        return weight.view(torch.int8) if weight.dtype == torch.uint8 else weight
    raw = (weight if weight.dtype == torch.uint8 else weight.view(torch.uint8)).to(torch.int16)
    if bits == 4:
        values = torch.stack((raw >> 4, raw & 0xF), dim=-1) - 8
    elif bits == 2:
        values = torch.stack([(raw >> shift) & 0x3 for shift in (0, 2, 4, 6)], -1) - 2
    else:
        raise ValueError(f"embedding tables hold 2-, 4- or 8-bit values, not {bits}")
    return values.reshape(weight.shape[0], -1).to(torch.int8)


def pack_embedding_weight(values: torch.Tensor, bits: int) -> torch.Tensor:
    """The inverse of `unpack_embedding_weight`: int8 values in the
    `bits`-bit range to upstream's packed uint8 layout."""
    if bits == 8:
        return values.to(torch.int8)
    shifted = (values.to(torch.int16) + (8 if bits == 4 else 2)).to(torch.uint8)
    per_byte = 8 // bits
    if values.shape[1] % per_byte:
        raise ValueError(
            f"a {bits}-bit table needs a row width divisible by {per_byte}, "
            f"got {values.shape[1]}"
        )
    groups = shifted.reshape(values.shape[0], -1, per_byte)
    if bits == 4:
        return (groups[..., 0] << 4) | groups[..., 1]
    packed = groups[..., 0]
    for k in range(1, 4):
        packed = packed | (groups[..., k] << (2 * k))
    return packed


def _embedding_reference(
    bits: int,
    weight: torch.Tensor,
    weight_scales: torch.Tensor,
    weight_zero_points: Optional[torch.Tensor],
    indices: torch.Tensor,
    dtype: Optional[torch.dtype] = None,
) -> torch.Tensor:
    values = unpack_embedding_weight(weight, bits)
    scales = weight_scales.reshape(weight_scales.shape[0], -1)
    group_size = values.shape[1] // scales.shape[1]
    grouped = values.reshape(values.shape[0], scales.shape[1], group_size).to(torch.float32)
    if weight_zero_points is not None:
        grouped = grouped - weight_zero_points.reshape(scales.shape).unsqueeze(-1).float()
    table = (grouped * scales.unsqueeze(-1).float()).reshape(values.shape)
    return torch.nn.functional.embedding(indices, table).to(dtype or weight_scales.dtype)


_EMBEDDING_ARGS = (
    "Tensor weight, Tensor weight_scales, Tensor? weight_zero_points, "
    "int weight_quant_min, int weight_quant_max, Tensor indices"
)


def _define_embedding(name: str, bits: int) -> None:
    def functional(weight, scales, zero_points, quant_min, quant_max, indices, *, dtype=None):
        return _embedding_reference(bits, weight, scales, zero_points, indices, dtype)

    def plain(weight, scales, zero_points, quant_min, quant_max, indices):
        return functional(weight, scales, zero_points, quant_min, quant_max, indices)

    def fake(weight, scales, zero_points, quant_min, quant_max, indices, *, dtype=None):
        width = weight.shape[1] * (8 // bits)
        return scales.new_empty((*indices.shape, width), dtype=dtype or scales.dtype)

    _define_functional(_lib, f"{name}({_EMBEDDING_ARGS}) -> Tensor", plain, fake)
    _define_functional(
        _lib,
        f"{name}.dtype({_EMBEDDING_ARGS}, *, ScalarType? dtype=None) -> Tensor",
        functional,
        fake,
    )
    _define_out_variant(
        _lib, f"{name}.out({_EMBEDDING_ARGS}, *, Tensor(a!) out) -> Tensor(a!)", plain
    )
    _define_out_variant(
        _lib,
        f"{name}.dtype_out({_EMBEDDING_ARGS}, *, ScalarType? dtype=None, "
        "Tensor(a!) out) -> Tensor(a!)",
        functional,
    )


for _name, _bits in (("embedding_byte", 8), ("embedding_4bit", 4), ("embedding_2bit", 2)):
    _define_embedding(_name, _bits)


# ---- et_quantized: linear layers on packed 4/8-bit weights -----------------
#
# What exir/passes/fuse_quantized_weights.py turns torchao's and PT2E's
# "dequantize the weight, then linear" patterns into. weight_only_linear's
# `weight` is packed as `pack_embedding_weight` packs a table (4-bit: two values
# per byte), dynamic_int8_linear_panels's in panels (`pack_linear_panels`); scales
# and zero points are [N, K / group_size]. These references compute what the
# unfused graph computes.

_et_lib = torch.library.Library("et_quantized", "FRAGMENT")
_WEIGHT_ARGS = (
    "Tensor input, Tensor weight, Tensor weight_scales, Tensor? weight_zero_points, "
    "int weight_bits, int group_size, Tensor? bias"
)
_DYNAMIC_ARGS = "bool per_token, float eps, int quant_min, int quant_max"


_PANEL = 16  # output features per panel


def _word_values(bits: int) -> int:
    return 8 if bits == 4 else 4


def pack_linear_panels(values: torch.Tensor, bits: int) -> torch.Tensor:
    """int8 values [N, K] in the `bits`-bit range to dynamic_int8_linear_panels's
    panel layout (kernels/quantized/cpu/quantized_linear.h): uint8
    [N, ceil(K / w) * 4] for w values per 4-byte word (4 of 8 bits, 8 of 4
    bits; K padded with zeros). Output features go in panels of 16 (the last
    one holds the rest), a panel word after word, each word of its features
    side by side; 8-bit values stored + 128, 4-bit ones + 8 with byte j of a
    word holding value j in its low nibble and value 4 + j in its high one."""
    if bits not in (4, 8):
        raise ValueError(f"linear weights hold 4- or 8-bit values, not {bits}")
    rows, cols = values.shape
    per_word = _word_values(bits)
    words = -(-cols // per_word)
    padded = torch.zeros(rows, words * per_word, dtype=torch.int16)
    padded[:, :cols] = values.to(torch.int16)
    if bits == 8:
        stored = (padded + 128).to(torch.uint8).reshape(rows, words, 4)
    else:
        nibbles = (padded + 8).reshape(rows, words, 2, 4)
        stored = (nibbles[:, :, 0] | (nibbles[:, :, 1] << 4)).to(torch.uint8)
    panels = [
        stored[first : first + _PANEL].permute(1, 0, 2).reshape(-1)
        for first in range(0, rows, _PANEL)
    ]
    flat = torch.cat(panels) if panels else stored.reshape(-1)
    return flat.reshape(rows, words * 4)


def unpack_linear_panels(weight: torch.Tensor, bits: int, cols: int) -> torch.Tensor:
    """The int8 values [N, cols] of `pack_linear_panels`' layout."""
    rows, words = weight.shape[0], weight.shape[1] // 4
    flat = weight.reshape(-1).view(torch.uint8)
    stored = torch.empty(rows, words, 4, dtype=torch.uint8)
    for first in range(0, rows, _PANEL):
        lanes = min(_PANEL, rows - first)
        block = flat[first * words * 4 : (first + lanes) * words * 4]
        stored[first : first + lanes] = block.reshape(words, lanes, 4).permute(1, 0, 2)
    stored = stored.to(torch.int16)
    if bits == 8:
        values = (stored - 128).reshape(rows, -1)
    else:
        values = torch.stack((stored & 0xF, stored >> 4), dim=2).reshape(rows, -1) - 8
    return values[:, :cols].to(torch.int8)


def _dequantize(values, weight_scales, weight_zero_points, group_size):
    values = values.float()
    rows, cols = values.shape
    grouped = values.reshape(rows, cols // group_size, group_size)
    if weight_zero_points is not None:
        grouped = grouped - weight_zero_points.reshape(rows, -1, 1).float()
    return (grouped * weight_scales.reshape(rows, -1, 1)).reshape(rows, cols)


def dequantize_linear_weight(weight, weight_scales, weight_zero_points, weight_bits, group_size):
    """The fp32 [N, K] weight of a weight_only_linear's packed one."""
    values = unpack_embedding_weight(weight, weight_bits)
    return _dequantize(values, weight_scales, weight_zero_points, group_size)


def _weight_only_linear(input, weight, weight_scales, weight_zero_points, weight_bits, group_size, bias):
    w = dequantize_linear_weight(weight, weight_scales, weight_zero_points, weight_bits, group_size)
    return torch.nn.functional.linear(input, w, bias)


def _dynamic_int8_linear_panels(
    input, weight, weight_scales, weight_zero_points, weight_bits, group_size, bias,
    per_token, eps, quant_min, quant_max,
):
    # Activation parameters as torch's choose_qparams.tensor (per tensor)
    # and torchao's choose_qparams_affine ASYMMETRIC (per token) pick them.
    if per_token:
        lo = input.amin(-1, keepdim=True)
        hi = input.amax(-1, keepdim=True)
    else:
        lo, hi = input.min(), input.max()
    lo, hi = torch.clamp(lo, max=0), torch.clamp(hi, min=0)
    scale = torch.clamp((hi - lo) / float(quant_max - quant_min), min=eps)
    zero_point = torch.clamp(quant_min - torch.round(lo / scale), quant_min, quant_max)
    inverse = 1.0 / scale if per_token else 1.0 / float(scale)
    q = torch.clamp(torch.round(input * inverse) + zero_point, quant_min, quant_max)
    values = unpack_linear_panels(weight, weight_bits, input.shape[-1])
    w = _dequantize(values, weight_scales, weight_zero_points, group_size)
    return torch.nn.functional.linear((q - zero_point) * scale, w, bias)


def _linear_fake(input, weight, weight_scales, *args):
    return input.new_empty((*input.shape[:-1], weight.shape[0]))


_define_functional(
    _et_lib, f"weight_only_linear({_WEIGHT_ARGS}) -> Tensor", _weight_only_linear, _linear_fake
)
_define_out_variant(
    _et_lib,
    f"weight_only_linear.out({_WEIGHT_ARGS}, *, Tensor(a!) out) -> Tensor(a!)",
    _weight_only_linear,
)
_define_functional(
    _et_lib,
    f"dynamic_int8_linear_panels({_WEIGHT_ARGS}, {_DYNAMIC_ARGS}) -> Tensor",
    _dynamic_int8_linear_panels,
    _linear_fake,
)
_define_out_variant(
    _et_lib,
    f"dynamic_int8_linear_panels.out({_WEIGHT_ARGS}, {_DYNAMIC_ARGS}, *, Tensor(a!) out) -> Tensor(a!)",
    _dynamic_int8_linear_panels,
)
