"""XnnpackPartitioner and the XnnpackBackend preprocess through exir's
delegation: partial delegation around an unsupported op, separate
partitions, the partition report, and the delegated programs run by the
runtime (test_xnnpack_runtime.py has more)."""

import os

import pytest
import torch

from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
    XnnpackPartitioner,
)
from executorch.exir import to_edge_transform_and_lower
from executorch.exir._serialize._flatbuffer import InstructionArguments

_ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def run_program(manager, inputs):
    """The program's outputs on our runtime (pybindings, XnnpackBackend
    registered)."""
    from executorch.extension.pybindings.portable_lib import (
        _load_for_executorch_from_buffer,
    )

    return _load_for_executorch_from_buffer(manager.buffer).forward(list(inputs))


def lower(model, inputs, partitioner=None):
    partitioner = partitioner or XnnpackPartitioner()
    ep = torch.export.export(model.eval(), inputs)
    edge = to_edge_transform_and_lower(ep, partitioner=[partitioner])
    return edge, partitioner


def delegate_calls(manager):
    (plan,) = manager.executorch_program.executionPlan
    return plan, [
        i
        for i in plan.chains[0].instructions
        if i.instrArgsType == InstructionArguments.DelegateCall
    ]


class Split(torch.nn.Module):
    """conv -> relu | cumsum (not lowerable) | linear -> tanh: two XNNPACK
    partitions around a portable op."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.linear = torch.nn.Linear(8, 5)

    def forward(self, x):
        y = torch.relu(self.conv(x)).flatten(2)  # [N, 4, 64]
        y = torch.cumsum(y, -1)[..., :8]
        return torch.tanh(self.linear(y))


def test_partial_delegation_around_an_unsupported_op():
    model, x = Split(), torch.randn(2, 3, 8, 8)
    edge, partitioner = lower(model, (x,))
    manager = edge.to_executorch()
    plan, calls = delegate_calls(manager)
    assert len(calls) == 2
    assert {d.id for d in plan.delegates} == {"XnnpackBackend"}
    report = partitioner.report()
    assert "2 delegated partition(s)" in report
    assert "cumsum" in report and "no XNNPACK lowering" in report
    # No convolution or linear is left outside the delegates.
    operators = {op.name for op in plan.operators}
    assert not operators & {"aten::convolution", "aten::addmm", "aten::linear"}


def test_delegated_program_matches_eager():
    model, x = Split(), torch.randn(2, 3, 8, 8)
    edge, _ = lower(model, (x,))
    manager = edge.to_executorch()
    with torch.no_grad():
        want = model(x)
    torch.testing.assert_close(
        run_program(manager, (x,))[0], want, rtol=1e-4, atol=1e-4
    )


class DeepChain(torch.nn.Module):
    """More layers than Python's recursion limit allows a walk per node:
    EfficientNet's ~800-node export once failed to partition this way."""

    def forward(self, x):
        for _ in range(600):
            x = x + 0.5
        return x


def test_a_graph_deeper_than_the_recursion_limit_is_delegated():
    model, x = DeepChain(), torch.randn(4)
    edge, partitioner = lower(model, (x,))
    manager = edge.to_executorch()
    _, calls = delegate_calls(manager)
    assert len(calls) == 1
    torch.testing.assert_close(run_program(manager, (x,))[0], model(x))


class SharedWeight(torch.nn.Module):
    """The convolution weight is also read by ops XNNPACK cannot run, so it
    cannot move into a delegate: the convolution (which needs its weight
    constant) stays on portable kernels."""

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(4, 3, 1, 1))

    def forward(self, x):
        y = torch.nn.functional.conv2d(torch.relu(x), self.weight)
        return y, torch.where(x.sum() > 0, self.weight, 0.0)


def test_weight_shared_with_portable_ops_is_not_delegated():
    model, x = SharedWeight(), torch.randn(1, 3, 4, 4)
    edge, partitioner = lower(model, (x,))
    assert "shared with nodes outside" in partitioner.report()
    manager = edge.to_executorch()
    plan, calls = delegate_calls(manager)
    assert len(calls) == 1  # the relu
    with torch.no_grad():
        want = model(x)
    for got, expected in zip(run_program(manager, (x,)), want):
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)


class CausalScores(torch.nn.Module):
    """A bool mask from `full` (a constant the partitioner could fold in
    with the float ops around it) feeding a portable triu."""

    def forward(self, x):
        t = x.shape[-1]
        future = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        return (x * 2).masked_fill(future, float("-inf")).softmax(-1)


def test_non_float_constants_read_outside_stay_portable():
    model, x = CausalScores(), torch.randn(2, 5, 5)
    edge, partitioner = lower(model, (x,))
    assert "is not a float32 tensor" in partitioner.report()
    manager = edge.to_executorch()
    (got,) = run_program(manager, (x,))
    torch.testing.assert_close(got, model(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("bounded", [True, False])
def test_dynamic_shapes_are_delegated_when_bounded(bounded):
    """Nodes with symbolic sizes go to XNNPACK when the export bounds them
    (test_xnnpack_dynamic.py runs such programs); an unbounded size stays on
    portable kernels, with the reason."""
    batch = torch.export.Dim("batch", min=1, max=8 if bounded else None)
    ep = torch.export.export(
        torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU()).eval(),
        (torch.randn(2, 4),),
        dynamic_shapes=({0: batch},),
    )
    partitioner = XnnpackPartitioner()
    edge = to_edge_transform_and_lower(ep, partitioner=[partitioner])
    delegated = [
        n
        for n in edge.exported_program().graph.nodes
        if n.target == torch.ops.higher_order.executorch_call_delegate
    ]
    if bounded:
        assert len(delegated) == 1 and "left on portable" not in partitioner.report()
    else:
        assert not delegated
        assert "without an upper bound" in partitioner.report()


@pytest.mark.parametrize("name", ["mobilenet", "resnet", "encoder"])
def test_models_delegate_whole_and_match_eager(name):
    """Small MobileNet-, ResNet- and transformer-style models become one
    delegate call with no portable operator left."""
    from test_xnnpack_lowering import small_cnn

    if name == "encoder":
        model = torch.nn.TransformerEncoder(
            torch.nn.TransformerEncoderLayer(32, 4, 64, batch_first=True, dropout=0.0),
            2,
            enable_nested_tensor=False,
        )
        x = torch.randn(2, 10, 32)
    else:
        model, x = small_cnn(name), torch.randn(2, 3, 32, 32)
    edge, partitioner = lower(model, (x,))
    manager = edge.to_executorch()
    plan, calls = delegate_calls(manager)
    assert len(calls) == 1, partitioner.report()
    assert not plan.operators, partitioner.report()
    with torch.no_grad():
        want = model(x)
    torch.testing.assert_close(
        run_program(manager, (x,))[0], want, rtol=1e-4, atol=1e-4
    )


class SelfAttention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = torch.nn.MultiheadAttention(32, 4)

    def forward(self, x):
        return self.attention(x, x, x, need_weights=False)[0]


def test_attention_permute_chains_are_one_transpose():
    """nn.MultiheadAttention's export permutes its heads' output, clones it
    and permutes it twice more: preprocess folds the three into one
    transpose (8 in the blob without the fold, 6 with it)."""
    from executorch.backends.xnnpack.serialization.xnnpack_graph_schema import (
        XNodeUnion,
    )
    from executorch.backends.xnnpack.serialization.xnnpack_graph_serialize import (
        deserialize_xnnpack_blob,
    )

    model, x = SelfAttention(), torch.randn(10, 1, 32)
    edge, partitioner = lower(model, (x,))
    blob = edge.exported_program().graph_module.lowered_module_0.processed_bytes
    kinds = [n.xnodeUnionType for n in deserialize_xnnpack_blob(blob).graph.xnodes]
    assert kinds.count(XNodeUnion.XNNStaticTranspose) == 6
    manager = edge.to_executorch()
    assert len(delegate_calls(manager)[1]) == 1, partitioner.report()
    with torch.no_grad():
        want = model(x)
    torch.testing.assert_close(
        run_program(manager, (x,))[0], want, rtol=1e-4, atol=1e-4
    )


def test_num_threads_becomes_a_compile_spec():
    edge, _ = lower(
        torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU()),
        (torch.randn(2, 4),),
        XnnpackPartitioner(num_threads=2),
    )
    plan, calls = delegate_calls(edge.to_executorch())
    assert len(calls) == 1
    (delegate,) = plan.delegates
    assert [(c.key, bytes(c.value)) for c in delegate.compileSpecs] == [
        ("num_threads", (2).to_bytes(4, "little"))
    ]


def test_kept_ops_lower_whole():
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3), torch.nn.Hardswish(), torch.nn.PReLU(4)
    )
    edge, partitioner = lower(model, (torch.randn(1, 3, 6, 6),))
    plan, calls = delegate_calls(edge.to_executorch())
    assert len(calls) == 1 and not plan.operators
    assert "left on portable kernels" not in partitioner.report()


PTE_FIXTURE_DIR = os.path.join(_ROOT, "backends", "xnnpack", "test", "fixtures")


def _write_fixture(name: str, model: torch.nn.Module, x: torch.Tensor) -> None:
    """`name`.pte (the model lowered whole), `name`_input.bin (x) and
    `name`_expected.bin (eager's output), float32 little-endian."""
    edge, _ = lower(model, (x,))
    with open(os.path.join(PTE_FIXTURE_DIR, f"{name}.pte"), "wb") as f:
        f.write(edge.to_executorch().buffer)
    x.numpy().tofile(os.path.join(PTE_FIXTURE_DIR, f"{name}_input.bin"))
    with torch.no_grad():
        model(x).numpy().tofile(os.path.join(PTE_FIXTURE_DIR, f"{name}_expected.bin"))


def write_pte_fixture() -> None:
    """Writes the .pte files the C++ test xnnpack_pte_test.cpp loads
    through Program and Method, each with an input and eager's output: a
    small classifier delegated whole, and a pre-norm transformer encoder
    layer (the host steps: layer norm, safe softmax, batch matmul,
    transposes, slices, GELU). Rerun after a change to the .pte or blob
    format: `python test/backends/test_xnnpack_partitioner.py`."""
    torch.manual_seed(0)
    classifier = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(4, 5),
    ).eval()
    _write_fixture("conv_classifier", classifier, torch.randn(1, 3, 8, 8))
    encoder = torch.nn.TransformerEncoderLayer(
        32, 2, 64, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
    ).eval()
    _write_fixture("encoder_layer", encoder, torch.randn(1, 9, 32))


if __name__ == "__main__":
    write_pte_fixture()
