"""The default (non-delegated) path on the optimized kernels, against eager.

Programs exported with plain ``to_edge`` run through the Python bindings,
which register the optimized kernels first and the portable ones for every
other operator (kernels/optimized/README.md). The models hit each optimized
kernel's fast path: linear layers (addmm/mm with a transposed weight),
attention (bmm, softmax, layer norm, GELU; scaled_dot_product_attention's
scaling and safe-softmax masks), convolutions (GEMM, grouped,
depthwise, strided, and Winograd: a ResNet basic block and the example
ResNet-18 at 64x64), elementwise ops with broadcasting, at sizes that are
not multiples of any vector width, with 1 and 2 threads of the process-wide
pool. Tolerances: float32 rtol=1e-4, atol=1e-4 (the GEMM sums in another
order; Winograd's error is ~1e-5 of the largest output, well inside it:
kernels/optimized/README.md). The kernel-by-kernel comparison with the
portable kernels is the optimized_kernels_test GoogleTest suite.
"""

import os

import pytest
import torch

from executorch.examples.models import get_model
from executorch.test.modules import ResNetBlock

to_edge = pytest.importorskip("executorch.exir").to_edge
portable_lib = pytest.importorskip("executorch.extension.pybindings.portable_lib")

TOLERANCE = dict(rtol=1e-4, atol=1e-4)


class Attention(torch.nn.Module):
    """A pre-norm transformer block (the shape of a ViT/BERT layer)."""

    def __init__(self, dim=36, heads=3):
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.norm2 = torch.nn.LayerNorm(dim)
        self.fc1 = torch.nn.Linear(dim, 4 * dim + 3)
        self.fc2 = torch.nn.Linear(4 * dim + 3, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)

        def split(z):
            return z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2)

        q, k, v = split(q), split(k), split(v)
        scores = (q @ k.transpose(-1, -2)) / (d // self.heads) ** 0.5
        attended = torch.softmax(scores, dim=-1) @ v
        x = x + self.proj(attended.transpose(1, 2).reshape(b, t, d))
        hidden = torch.nn.functional.gelu(self.fc1(self.norm2(x)))
        return x + self.fc2(hidden), torch.log_softmax(scores, dim=1)


class ScaledDotProduct(torch.nn.Module):
    """scaled_dot_product_attention, whose export scales by a Scalar and
    runs a safe softmax (eq.Scalar, logical_not, any, where): a query whose
    keys are all masked gets zeros, not NaN."""

    def forward(self, q, k, v, mask):
        attend = torch.nn.functional.scaled_dot_product_attention
        return attend(q, k, v, attn_mask=mask), attend(q, k, v) / 3


def _sdpa_inputs():
    mask = torch.rand(2, 1, 7, 9) > 0.3
    mask[:, :, 2] = False  # query 2 sees no key
    keys, values = torch.randn(2, 3, 9, 8), torch.randn(2, 3, 9, 8)
    return torch.randn(2, 3, 7, 8), keys, values, mask


class ConvNet(torch.nn.Module):
    """MobileNet-style blocks: full, depthwise, grouped and 1-d convs,
    inference batch norm."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 10, 3, stride=2, padding=1)
        self.norm = torch.nn.BatchNorm2d(10).eval()
        with torch.no_grad():
            self.norm.running_mean.uniform_(-1, 1)
            self.norm.running_var.uniform_(0.5, 2)
            self.norm.weight.uniform_(0.5, 2)
            self.norm.bias.uniform_(-1, 1)
        self.depthwise = torch.nn.Conv2d(10, 10, 3, padding=1, groups=10)
        self.pointwise = torch.nn.Conv2d(10, 17, 1)
        self.grouped = torch.nn.Conv2d(17 + 1, 12, 3, padding=2, dilation=2, groups=2)
        self.conv1d = torch.nn.Conv1d(12, 5, 3)

    def forward(self, x):
        x = torch.nn.functional.hardtanh(self.norm(self.stem(x)), 0.0, 6.0)
        x = torch.relu(self.depthwise(x))
        x = self.pointwise(x)
        x = torch.cat([x, x.mean(dim=1, keepdim=True)], dim=1)
        x = torch.nn.functional.silu(self.grouped(x))
        y = self.conv1d(x.flatten(2)[:, :, :40])
        return torch.sigmoid(x) * torch.tanh(x), y


class Elementwise(torch.nn.Module):
    def forward(self, a, b, c):
        x = (a + 2 * b) * c - a / (c.abs() + 1)
        return torch.maximum(x, b), torch.minimum(x, -b), torch.exp(-x.abs()).sqrt()


def _run(module, inputs):
    with torch.no_grad():
        expected = module(*inputs)
    program = to_edge(torch.export.export(module, inputs)).to_executorch()
    actual = portable_lib._load_for_executorch_from_buffer(program.buffer).forward(
        inputs
    )
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        torch.testing.assert_close(got, want, **TOLERANCE)


CASES = {
    "attention": (Attention, lambda: (torch.randn(2, 19, 36),)),
    "sdpa": (ScaledDotProduct, _sdpa_inputs),
    "convnet": (ConvNet, lambda: (torch.randn(2, 3, 23, 21),)),
    "resnet_block": (ResNetBlock, lambda: (torch.randn(2, 24, 15, 13),)),
    "resnet18": (
        lambda: get_model("resnet18")[0],
        lambda: (torch.randn(1, 3, 64, 64),),
    ),
    "elementwise": (
        Elementwise,
        lambda: (torch.randn(4, 1, 37), torch.randn(3, 37), torch.randn(4, 3, 1)),
    ),
    "mlp": (
        lambda: torch.nn.Sequential(
            torch.nn.Linear(67, 130), torch.nn.ReLU(), torch.nn.Linear(130, 9)
        ),
        lambda: (torch.randn(5, 67),),
    ),
}


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request):
    reset = getattr(portable_lib, "_unsafe_reset_threadpool", None)
    if reset is None:
        pytest.skip("built without the thread pool")
    reset(request.param)
    assert portable_lib._threadpool_get_thread_count() == request.param
    yield request.param
    reset(0)


@pytest.mark.parametrize("name", sorted(CASES))
def test_default_path_matches_eager(name, threads):
    torch.manual_seed(0)
    make_module, make_inputs = CASES[name]
    _run(make_module().eval(), make_inputs())


def test_threadpool_reset_and_default():
    reset = getattr(portable_lib, "_unsafe_reset_threadpool", None)
    if reset is None:
        pytest.skip("built without the thread pool")
    reset(3)
    assert portable_lib._threadpool_get_thread_count() == 3
    reset(0)
    assert portable_lib._threadpool_get_thread_count() >= 1


def _library_in_subprocess(value):
    import subprocess
    import sys

    env = dict(os.environ)
    env.pop("EXECUTORCH_KERNELS", None)
    if value is not None:
        env["EXECUTORCH_KERNELS"] = value
    code = (
        "from executorch.extension.pybindings import portable_lib as p; "
        "print(p._get_kernel_library())"
    )
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True
    )


def test_optimized_kernels_are_the_default_and_portable_can_be_chosen():
    assert portable_lib._get_kernel_library() in ("optimized", "portable")
    assert _library_in_subprocess(None).stdout.strip() == "optimized"
    assert _library_in_subprocess("portable").stdout.strip() == "portable"
    bad = _library_in_subprocess("fast")
    assert bad.returncode != 0
    assert "EXECUTORCH_KERNELS is 'fast'" in bad.stderr


_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE_DIR = os.path.join(_ROOT, "kernels", "optimized", "test", "fixtures")


def write_program_fixtures() -> None:
    """Writes the programs kernels/optimized/test/optimized_program_test.cpp
    runs through Program and Method on the registered optimized kernels:
    `name`.pte (plain to_edge), `name`_input.bin and eager's outputs,
    flattened one after the other, in `name`_expected.bin (float32), for
    the attention and convnet cases.
    Rerun after a change to the .pte format:
    `python test/ops/test_optimized_kernels.py`."""
    for name in ("attention", "convnet"):
        torch.manual_seed(0)
        make_module, make_inputs = CASES[name]
        module = make_module().eval()
        (x,) = make_inputs()
        program = to_edge(torch.export.export(module, (x,))).to_executorch()
        with open(os.path.join(FIXTURE_DIR, f"{name}.pte"), "wb") as f:
            f.write(program.buffer)
        x.numpy().tofile(os.path.join(FIXTURE_DIR, f"{name}_input.bin"))
        with torch.no_grad():
            outputs = module(x)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        expected = torch.cat([o.flatten() for o in outputs])
        expected.numpy().tofile(os.path.join(FIXTURE_DIR, f"{name}_expected.bin"))


if __name__ == "__main__":
    write_program_fixtures()
