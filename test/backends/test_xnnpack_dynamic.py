"""Models exported with dynamic dimensions (torch.export.Dim), delegated to
XNNPACK with XnnpackPartitioner and run by our runtime at sizes across their
bounds: the smallest, the largest, in between and back to an earlier size,
each compared with eager. The dynamic nodes must be delegated (one delegate
call, no portable operator). Above a bound the call fails with an error
naming the input, dim, bound and size, and later calls still work; and
executor_runner runs a delegated dynamic program at --input_shapes.

Tolerances (fp32): rtol = atol = 1e-4, as for the static delegated models:
XNNPACK sums convolutions and matrix products in another order than ATen
and approximates softmax and GELU's erf with polynomials."""

import math
import os
import re
import subprocess
import sys

import pytest
import torch
from torch.export import Dim

from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
    XnnpackPartitioner,
)
from executorch.exir import to_edge_transform_and_lower
from executorch.test.modules import MLP
from executorch.test.sizes import compare_at_sizes

sys.path.insert(0, os.path.dirname(__file__))
from test_xnnpack_runtime import (  # noqa: E402
    _runtime_has_xnnpack,
    delegate_calls_and_operators,
)

pytestmark = pytest.mark.skipif(
    not _runtime_has_xnnpack(),
    reason="the Python extension is built without the XNNPACK backend",
)

TOL = dict(rtol=1e-4, atol=1e-4)


def lower(model, example, dynamic_shapes):
    """(ExecutorchProgramManager, partitioner) of `model` exported with
    `dynamic_shapes` and delegated to XNNPACK."""
    partitioner = XnnpackPartitioner()
    ep = torch.export.export(model.eval(), example, dynamic_shapes=dynamic_shapes)
    edge = to_edge_transform_and_lower(ep, partitioner=[partitioner])
    return edge.to_executorch(), partitioner


def load(manager):
    from executorch.extension.pybindings.portable_lib import (
        _load_for_executorch_from_buffer,
    )

    return _load_for_executorch_from_buffer(manager.buffer)


def check_at_sizes(model, example, dynamic_shapes, make_inputs, sizes):
    """Lowers `model`, checks that all of it is one delegate call, and
    compares it with eager at each of `sizes` (in order, on one loaded
    program, so the delegate rebuilds for each new size)."""
    torch.manual_seed(0)
    manager, partitioner = lower(model, example, dynamic_shapes)
    assert "dynamic" not in partitioner.report(), partitioner.report()
    assert delegate_calls_and_operators(manager) == (1, []), partitioner.report()
    module = load(manager)
    compare_at_sizes(module, model, make_inputs, sizes, TOL)
    return module


def test_mlp_with_dynamic_batch():
    check_at_sizes(
        MLP(),
        (torch.randn(4, 16),),
        {"x": {0: Dim("batch", min=1, max=32)}},
        lambda n: (torch.randn(n, 16),),
        [1, 32, 7, 7, 1],
    )


class CNN(torch.nn.Module):
    """Convolutions, batch norm, pooling and a linear head after global
    average pooling and a flatten."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.head = torch.nn.Linear(16, 5)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv1(x)))
        y = torch.nn.functional.max_pool2d(y, 2)
        y = torch.relu(self.conv2(y))
        features = torch.nn.functional.adaptive_avg_pool2d(y, 1).flatten(1)
        return self.head(features), y


def test_cnn_with_dynamic_height_and_width():
    torch.manual_seed(0)
    model = CNN().eval()
    # Running statistics that are not the identity.
    model.bn.running_mean.uniform_(-0.5, 0.5)
    model.bn.running_var.uniform_(0.5, 2.0)
    # H and W are multiples of 4 so the pooling and the stride stay exact.
    h, w = Dim("h4", min=2, max=16), Dim("w4", min=2, max=16)
    check_at_sizes(
        model,
        (torch.randn(2, 3, 32, 24),),
        {"x": {2: 4 * h, 3: 4 * w}},
        lambda hw: (torch.randn(2, 3, *hw),),
        [(8, 8), (64, 64), (20, 44), (64, 8), (8, 8)],
    )


class Block(torch.nn.Module):
    """A pre-norm transformer block (multi-head self-attention, then a GELU
    MLP) over a dynamic sequence length, returning the sequence, its first
    token and its last."""

    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.LayerNorm(dim)
        self.q = torch.nn.Linear(dim, dim)
        self.k = torch.nn.Linear(dim, dim)
        self.v = torch.nn.Linear(dim, dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.norm2 = torch.nn.LayerNorm(dim)
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(dim, 2 * dim),
            torch.nn.GELU(),
            torch.nn.Linear(2 * dim, dim),
        )

    def forward(self, x):
        batch, seq, dim = x.shape
        h = self.norm1(x)

        def split(t):
            return t.reshape(batch, seq, self.heads, dim // self.heads).transpose(1, 2)

        q, k, v = split(self.q(h)), split(self.k(h)), split(self.v(h))
        scores = q @ k.transpose(-2, -1) / math.sqrt(dim // self.heads)
        attended = (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, seq, dim)
        x = x + self.proj(attended)
        x = x + self.mlp(self.norm2(x))
        return x, x[:, 0], x[:, -1]


def test_transformer_block_with_dynamic_sequence_length():
    check_at_sizes(
        Block(),
        (torch.randn(2, 8, 32),),
        {"x": {1: Dim("seq", min=2, max=32)}},
        lambda seq: (torch.randn(2, seq, 32),),
        [2, 32, 9, 9, 2],
    )


def test_sizes_above_the_bound_fail_clearly_and_later_calls_work():
    torch.manual_seed(0)
    model = MLP().eval()
    manager, _ = lower(
        model, (torch.randn(4, 16),), {"x": {0: Dim("batch", min=1, max=32)}}
    )
    module = load(manager)
    x = torch.randn(32, 16)
    with torch.no_grad():
        want = model(x)
    torch.testing.assert_close(module.forward([x])[0], want, **TOL)
    with pytest.raises(
        RuntimeError, match="input 0: size 33 at dim 0 is above its upper bound 32"
    ):
        module.forward([torch.randn(33, 16)])
    # The failed call wrote nothing: the same size and a smaller one still
    # give eager's results.
    torch.testing.assert_close(module.forward([x])[0], want, **TOL)
    with torch.no_grad():
        torch.testing.assert_close(module.forward([x[:5]])[0], model(x[:5]), **TOL)


def test_partitioner_names_what_it_cannot_make_dynamic():
    """A slice whose end follows another input's size cannot be recomputed
    from the slice's own input: it stays on portable kernels with a reason,
    and the program still matches eager."""

    class SliceByOther(torch.nn.Module):
        def forward(self, x, y):
            return torch.relu(x[:, : y.shape[0]]) * 2

    model = SliceByOther()
    manager, partitioner = lower(
        model,
        (torch.randn(3, 16), torch.randn(4)),
        {"x": None, "y": {0: Dim("n", min=2, max=12)}},
    )
    assert "slice bounds that follow a dynamic size" in partitioner.report()
    module = load(manager)
    for n in (2, 12, 5):
        x, y = torch.randn(3, 16), torch.randn(n)
        torch.testing.assert_close(module.forward([x, y])[0], model(x, y), **TOL)


def test_masked_attention_over_a_dynamic_key_length():
    """scaled_dot_product_attention with a mask exports a `_safe_softmax`
    over the keys; with their count dynamic its row sum (a fully connected
    layer of fixed width in the blob) cannot follow it: it stays outside,
    with the reason, and every length matches eager (it once failed at run
    time inside the delegate)."""

    class MaskedAttention(torch.nn.Module):
        def forward(self, q, k, mask):
            return torch.nn.functional.scaled_dot_product_attention(
                q, k, k, attn_mask=mask
            )

    def inputs(n):
        mask = torch.rand(1, 1, 3, n) > 0.3
        return torch.randn(1, 2, 3, 8), torch.randn(1, 2, n, 8), mask

    keys = Dim("keys", min=2, max=16)
    model = MaskedAttention()
    manager, partitioner = lower(
        model, inputs(6), {"q": None, "k": {2: keys}, "mask": {3: keys}}
    )
    assert "safe softmax over a dynamic dim" in partitioner.report()
    module = load(manager)
    for n in (6, 2, 16, 9):
        x = inputs(n)
        torch.testing.assert_close(module.forward(list(x))[0], model(*x), **TOL)


def test_sizes_of_integer_inputs_stay_outside():
    """A size measured on token ids (int64, which cannot be a delegate
    input), as language models measure their prompt: it stays outside with
    a reason, the float work around it is delegated, and the program
    matches eager at every length."""

    class TokensPlusPositions(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = torch.nn.Embedding(10, 8)
            self.linear = torch.nn.Linear(8, 8)

        def forward(self, tokens):
            positions = torch.arange(tokens.shape[1]).float().unsqueeze(-1)
            return self.linear(self.embedding(tokens)) + positions

    model = TokensPlusPositions().eval()
    manager, partitioner = lower(
        model, (torch.randint(0, 10, (1, 5)),), {"tokens": {1: Dim("s", min=1, max=16)}}
    )
    assert "measures a tensor that is not float32" in partitioner.report()
    assert delegate_calls_and_operators(manager)[0] >= 1
    module = load(manager)
    for n in (1, 16, 7):
        tokens = torch.randint(0, 10, (1, n))
        torch.testing.assert_close(module.forward([tokens])[0], model(tokens), **TOL)


def test_views_sized_by_token_ids_join_the_partition():
    """Hugging Face sizes each view of the hidden states by the token ids'
    length (an int64 tensor, which cannot be a delegate input). The
    partitioner measures a float input of the view instead, so the views
    and the linears between them are one partition, not one per linear."""

    class HiddenStateViews(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = torch.nn.Embedding(10, 8)
            self.first = torch.nn.Linear(8, 8)
            self.second = torch.nn.Linear(8, 8)

        def forward(self, tokens):
            n = tokens.shape[1]
            x = self.first(self.embedding(tokens).view(n, 8)).view(1, n, 8)
            return self.second(torch.relu(x).view(n, 8)).view(1, n, 8)

    model = HiddenStateViews().eval()
    manager, partitioner = lower(
        model, (torch.randint(0, 10, (1, 5)),), {"tokens": {1: Dim("s", min=1, max=16)}}
    )
    assert "reads a size computed outside" not in partitioner.report()
    assert delegate_calls_and_operators(manager) == (1, ["aten::embedding"])
    module = load(manager)
    for n in (1, 16, 7):
        tokens = torch.randint(0, 10, (1, n))
        torch.testing.assert_close(module.forward([tokens])[0], model(tokens), **TOL)


_OUTPUT = re.compile(r"^Output (\d+): tensor Float\[([\d, ]*)\] = \[(.*)\]$", re.M)


def test_executor_runner_runs_a_delegated_dynamic_program(build_dir, tmp_path):
    runner = os.path.join(build_dir, "examples", "executor_runner", "executor_runner")
    if not os.path.exists(runner):
        pytest.skip(f"{runner} is not built")
    torch.manual_seed(0)
    model = MLP().eval()
    manager, _ = lower(
        model, (torch.randn(4, 16),), {"x": {0: Dim("batch", min=1, max=32)}}
    )
    assert delegate_calls_and_operators(manager) == (1, [])
    model_path = tmp_path / "mlp.pte"
    model_path.write_bytes(manager.buffer)
    for batch in (3, 32, 1):
        x = torch.randn(batch, 16)
        input_path = tmp_path / f"x{batch}.bin"
        input_path.write_bytes(x.numpy().tobytes())
        result = subprocess.run(
            [runner, "--model_path", str(model_path), "--inputs", str(input_path)]
            + ["--input_shapes", f"{batch},16", "--print_output"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        ((_, sizes, values),) = _OUTPUT.findall(result.stdout)
        assert [int(s) for s in sizes.split(",")] == [batch, 4]
        got = torch.tensor([float(v) for v in values.split(",")]).reshape(batch, 4)
        with torch.no_grad():
            torch.testing.assert_close(got, model(x), **TOL)
    over = subprocess.run(
        [runner, "--model_path", str(model_path), "--input_shapes", "33,16"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert over.returncode != 0
    assert "input 0: size 33 at dim 0 is above its upper bound 32" in over.stderr


def test_partitioning_leaves_the_callers_edge_program_as_it_was():
    # The block's sizes are read by several views, which the partitioner
    # copies per reader: in its own copy of the program, not the caller's.
    from executorch.exir import to_edge
    from executorch.exir.backend.partitioner import DELEGATION_TAG

    ep = torch.export.export(
        Block().eval(),
        (torch.randn(2, 8, 32),),
        dynamic_shapes={"x": {1: Dim("seq", min=2, max=32)}},
    )
    edge = to_edge(ep)
    graph = edge.exported_program().graph

    def nodes():
        return [
            (n.name, str(n.target), n.meta.get(DELEGATION_TAG)) for n in graph.nodes
        ]

    before = nodes()
    lowered = edge.to_backend(XnnpackPartitioner())
    assert nodes() == before
    calls, _ = delegate_calls_and_operators(lowered.to_executorch())
    assert calls == 1
