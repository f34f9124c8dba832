"""End-to-end: nn.Module -> torch.export -> exir -> .pte -> our C++ runtime.

Every case goes through the staged harness (executorch.backends.test.harness:
export, to_edge, to_executorch, serialize, run on our runtime through the
Python bindings) and is compared with PyTorch eager on the same inputs using
the harness's tolerance table: "pointwise" precision by default,
"accumulating" for convolutions and matrix products, whose summation order
differs from eager's; integer and bool dtypes are compared exactly.
"""

import pytest
import torch

from executorch.backends.test.harness import Tester
from executorch.backends.test.harness.tester import ACCUMULATING, POINTWISE
from executorch.exir import to_edge
from executorch.extension.pybindings.portable_lib import (
    _load_for_executorch_from_buffer,
)
from executorch.test.modules import Lambda


def export_to_pte(module, inputs, constant_methods=None):
    """Returns the .pte bytes of `module` exported with example `inputs`."""
    tester = Tester(module, inputs).export()
    return tester.to_edge(constant_methods=constant_methods).serialize().get_artifact()


def check_against_eager(module, inputs, precision=POINTWISE):
    """Exports `module`, runs it on our runtime and compares with eager."""
    Tester(module, inputs).run_method_and_compare_outputs(precision=precision)


def randn(*shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape)))


def test_add_broadcasting_with_alpha():
    check_against_eager(
        Lambda(lambda x, y: torch.add(x, y, alpha=2.5)), (randn(2, 3, 4), randn(3, 1))
    )


def test_max_and_min_of_all_elements():
    check_against_eager(Lambda(lambda x: (x.max(), x.min())), (randn(3, 4),))


def test_adaptive_max_pool2d_with_uneven_windows():
    fn = lambda x: torch.nn.functional.adaptive_max_pool2d(x, (3, 4), True)
    check_against_eager(Lambda(fn), (randn(2, 3, 7, 9),))


def test_sub_mul_div():
    fn = lambda x, y: (x - y, x * y, x / y, torch.sub(x, y, alpha=3))
    check_against_eager(Lambda(fn), (randn(4, 5), randn(5).abs() + 0.5))


def test_scalar_arithmetic():
    check_against_eager(Lambda(lambda x: (x * 2.5 + 1) / 4 - 0.5), (randn(3, 3),))


def test_linear():
    torch.manual_seed(0)
    check_against_eager(torch.nn.Linear(8, 5), (randn(3, 8),), ACCUMULATING)


def test_mlp_with_relu():
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(
        torch.nn.Linear(16, 32),
        torch.nn.ReLU(),
        torch.nn.Linear(32, 32),
        torch.nn.ReLU(),
        torch.nn.Linear(32, 4),
    )
    check_against_eager(mlp, (randn(5, 16),), ACCUMULATING)


class SmallCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, stride=2, groups=2)
        self.pool = torch.nn.MaxPool2d(2)
        self.avg = torch.nn.AvgPool2d(2)
        self.fc = torch.nn.Linear(8 * 1 * 1, 10)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = self.pool(x)
        x = self.conv2(x)
        x = self.avg(x)
        return self.fc(torch.flatten(x, 1))


def test_small_cnn():
    torch.manual_seed(0)
    cnn = SmallCnn()
    # Non-trivial batch norm statistics so that the folding is exercised.
    cnn.bn1.running_mean.uniform_(-0.5, 0.5)
    cnn.bn1.running_var.uniform_(0.5, 2.0)
    check_against_eager(cnn, (randn(2, 3, 12, 12),), ACCUMULATING)


def test_softmax_and_log_softmax():
    fn = lambda x: (torch.softmax(x, dim=-1), torch.log_softmax(x, dim=1))
    check_against_eager(Lambda(fn), (randn(3, 7, 5) * 4,))


def test_layer_norm():
    torch.manual_seed(0)
    norm = torch.nn.LayerNorm(6)
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.uniform_(-0.5, 0.5)
    check_against_eager(norm, (randn(2, 4, 6) * 3,))


def test_matmul_and_bmm():
    fn = lambda a, b, c: (torch.matmul(a, b), torch.bmm(c, c.transpose(1, 2)))
    check_against_eager(
        Lambda(fn), (randn(4, 6), randn(6, 3), randn(2, 3, 5)), ACCUMULATING
    )


def test_cat_split_view_permute_transpose():
    def fn(x, y):
        joined = torch.cat([x, y], dim=1)
        first, second = torch.split(joined, [2, 4], dim=1)
        return (
            first.reshape(-1),
            second.permute(2, 0, 1),
            torch.transpose(joined, 0, 2).contiguous().view(4, -1),
        )

    check_against_eager(Lambda(fn), (randn(3, 2, 4), randn(3, 4, 4)))


def test_sum_and_mean_over_dims():
    fn = lambda x: (
        x.sum(dim=1),
        x.sum(dim=(0, 2), keepdim=True),
        x.mean(dim=-1),
        x.mean(dim=(1, 2), keepdim=True),
    )
    check_against_eager(Lambda(fn), (randn(3, 4, 5),))


class MagnitudeSpectrogram(torch.nn.Module):
    """An audio front end: a Hann-windowed STFT's power spectrum."""

    def forward(self, waveform):
        window = torch.hann_window(100)
        spec = torch.stft(
            waveform, n_fft=100, hop_length=25, window=window, return_complex=True
        )
        return spec.abs().pow(2)


def test_spectrogram_runs_fft_on_complex_tensors():
    # n_fft 100 is not a power of two; each bin sums 100 products.
    check_against_eager(MagnitudeSpectrogram(), (randn(2, 800),), ACCUMULATING)


def test_fft_round_trip_with_complex_program_outputs():
    fn = lambda x: (torch.fft.rfft(x), torch.fft.irfft(torch.fft.rfft(x), n=30))
    check_against_eager(Lambda(fn), (randn(3, 30),))
    # Complex inputs too: irfft2 of a half spectrum.
    spectrum = torch.randn(
        4, 5, dtype=torch.complex64, generator=torch.Generator().manual_seed(4)
    )
    check_against_eager(Lambda(lambda z: torch.fft.irfft2(z, s=(4, 8))), (spectrum,))


def test_integer_dtypes():
    fn = lambda a, b: (a + b, a * b, a - 2 * b, (a + b).sum(dim=0))
    a = torch.arange(-6, 6, dtype=torch.int64).reshape(3, 4)
    b = torch.arange(4, dtype=torch.int64)
    check_against_eager(Lambda(fn), (a, b))
    check_against_eager(Lambda(fn), (a.to(torch.int32), b.to(torch.int32)))


def test_bool_dtype():
    fn = lambda x, y: (x > y, torch.logical_and(x > 0, y > 0), torch.where(x > y, x, y))
    check_against_eager(Lambda(fn), (randn(4, 4), randn(4, 4)))


def test_mixed_dtype_promotion():
    fn = lambda i, f: (i + f, i * 2)
    check_against_eager(
        Lambda(fn), (torch.arange(6, dtype=torch.int64).reshape(2, 3), randn(2, 3))
    )


def test_two_methods_in_one_program():
    x = randn(2, 3)
    programs = {
        "forward": torch.export.export(Lambda(lambda x: x + 1), (x,)),
        "double": torch.export.export(Lambda(lambda x: x * 2), (x,)),
    }
    pte = to_edge(programs).to_executorch().buffer
    module = _load_for_executorch_from_buffer(pte)
    torch.testing.assert_close(module.run_method("forward", (x,))[0], x + 1)
    torch.testing.assert_close(module.run_method("double", (x,))[0], x * 2)
    assert set(module.method_names()) == {"forward", "double"}


def test_constant_methods():
    x = randn(2, 2)
    pte = export_to_pte(
        Lambda(lambda x: x.relu()),
        (x,),
        constant_methods={"get_max_len": 128, "get_scale": 0.25, "is_ready": True},
    )
    module = _load_for_executorch_from_buffer(pte)
    assert module.run_method("get_max_len", ())[0] == 128
    assert module.run_method("get_scale", ())[0] == pytest.approx(0.25)
    assert module.run_method("is_ready", ())[0] is True
    torch.testing.assert_close(module.forward((x,))[0], x.relu())


class WithBuffersAndParameters(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(randn(4, 4))
        self.register_buffer("offset", torch.linspace(-1, 1, 4))
        self.register_buffer("scale", torch.full((4,), 0.5), persistent=False)

    def forward(self, x):
        return (x @ self.weight + self.offset) * self.scale


def test_module_with_buffers_and_parameters():
    check_against_eager(WithBuffersAndParameters(), (randn(3, 4),), ACCUMULATING)


def test_program_runs_repeatedly_with_new_inputs():
    module = _load_for_executorch_from_buffer(
        export_to_pte(Lambda(lambda x: torch.tanh(x) * 3), (randn(5),))
    )
    for seed in range(3):
        x = torch.randn(5, generator=torch.Generator().manual_seed(seed))
        torch.testing.assert_close(module.forward((x,))[0], torch.tanh(x) * 3)
