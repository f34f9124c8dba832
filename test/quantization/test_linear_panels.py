"""`pack_linear_panels` (dynamic_int8_linear_panels's weight layout, defined in
kernels/quantized/cpu/quantized_linear.h) against the layout's definition
written out here, and `unpack_linear_panels` as its inverse: odd numbers of
output features (a partial last panel), widths that are not whole words,
the ends of each bit width's range. Exact (integers)."""

import pytest
import torch

from executorch.kernels.quantized import pack_linear_panels, unpack_linear_panels


def _stored_value(packed, bits, n, k):
    rows, row_bytes = packed.shape
    per_word = 8 if bits == 4 else 4
    n0 = n - n % 16
    lanes = min(16, rows - n0)
    u, j = divmod(k, per_word)
    byte = packed.reshape(-1)[n0 * row_bytes + u * lanes * 4 + (n - n0) * 4 + j % 4].item()
    if bits == 8:
        return byte - 128
    return ((byte & 0xF) if j < 4 else (byte >> 4)) - 8


@pytest.mark.parametrize("bits", [4, 8])
@pytest.mark.parametrize("rows,cols", [(1, 3), (16, 8), (37, 20), (33, 100), (5, 36)])
def test_panels_follow_the_layout_and_unpack(bits, rows, cols):
    low, high = (-8, 7) if bits == 4 else (-128, 127)
    values = torch.randint(low, high + 1, (rows, cols), generator=torch.Generator().manual_seed(rows))
    values[0, 0], values[-1, -1] = low, high
    values = values.to(torch.int8)
    packed = pack_linear_panels(values, bits)
    per_word = 8 if bits == 4 else 4
    assert packed.dtype == torch.uint8
    assert list(packed.shape) == [rows, -(-cols // per_word) * 4]
    for n in range(rows):
        for k in range(cols):
            assert _stored_value(packed, bits, n, k) == values[n, k].item()
    assert torch.equal(unpack_linear_panels(packed, bits, cols), values)
