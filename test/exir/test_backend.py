"""Delegation: partitions tagged by a partitioner are lowered by their
backend's preprocess, called through executorch_call_delegate, and emitted
as DelegateCall instructions with the blob in the program."""

import operator

import pytest
import torch
from program_interpreter import PlanInterpreter

from executorch.exir import to_edge, to_edge_transform_and_lower
from executorch.exir._serialize import deserialize_pte_binary
from executorch.exir._serialize._flatbuffer import DataLocation, InstructionArguments
from executorch.exir.backend import (
    BackendDetails,
    CompileSpec,
    DelegationSpec,
    PartitionResult,
    Partitioner,
    PreprocessResult,
    to_backend,
)
from executorch.exir.backend.backend_api import PartitionError
from executorch.exir.dialects._ops import ops as exir_ops
from executorch.exir.lowered_backend_module import (
    LoweredBackendModule,
    executorch_call_delegate,
)

UNARY = {
    "aten::relu": torch.relu,
    "aten::tanh": torch.tanh,
    "aten::sigmoid": torch.sigmoid,
}


class UnaryChainBackend(BackendDetails):
    """A test backend for chains of unary operators: the blob is their
    names, comma separated."""

    @staticmethod
    def preprocess(edge_program, compile_specs):
        names = [
            n.target.name() for n in edge_program.graph.nodes if n.op == "call_function"
        ]
        assert all(name in UNARY for name in names), names
        return PreprocessResult(",".join(names).encode())


def run_unary_chain(blob: bytes, tensors):
    """The runtime stand-in of UnaryChainBackend: one input, one output."""
    x, out = tensors
    for name in blob.decode().split(","):
        x = UNARY[name](x)
    out.copy_(x)


class OpsPartitioner(Partitioner):
    """Tags nodes calling the given operators, one tag per maximal run of
    consecutive such nodes."""

    def __init__(self, ops, backend_id="UnaryChainBackend", specs=()):
        self.ops = ops
        self.delegation = DelegationSpec(backend_id, list(specs))

    def partition(self, ep):
        tags, current = {}, None
        for node in ep.graph.nodes:
            if node.op == "call_function" and node.target in self.ops:
                if current is None:
                    current = f"tag{len(tags)}"
                    tags[current] = self.delegation
                node.meta["delegation_tag"] = current
            elif node.op == "call_function":
                current = None
        return PartitionResult(ep, tags)


UNARY_OPS = [
    exir_ops.edge.aten.relu.default,
    exir_ops.edge.aten.tanh.default,
    exir_ops.edge.aten.sigmoid.default,
]


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = torch.nn.Linear(4, 6)
        self.second = torch.nn.Linear(6, 2)

    def forward(self, x):
        h = torch.tanh(torch.relu(self.first(x)))
        return torch.sigmoid(self.second(h)) * 2


def lowered(specs=()):
    torch.manual_seed(0)
    model = Model().eval()
    x = torch.randn(3, 4)
    edge = to_edge(torch.export.export(model, (x,)))
    return model, x, edge.to_backend(OpsPartitioner(UNARY_OPS, specs=specs))


def calls(gm, target):
    return [n for n in gm.graph.nodes if n.target is target]


def test_each_partition_becomes_a_delegate_call():
    model, x, edge = lowered()
    gm = edge.exported_program().graph_module
    delegate_calls = calls(gm, executorch_call_delegate)
    assert len(delegate_calls) == 2
    for call in delegate_calls:
        module = getattr(gm, call.args[0].target)
        assert isinstance(module, LoweredBackendModule)
        assert module.backend_id == "UnaryChainBackend"
        assert [u.target for u in call.users] == [operator.getitem]
    blobs = [getattr(gm, c.args[0].target).processed_bytes for c in delegate_calls]
    assert blobs == [b"aten::relu,aten::tanh", b"aten::sigmoid"]
    names = [n.target.name() for n in gm.graph.nodes if hasattr(n.target, "name")]
    assert "aten::relu" not in names and "aten::addmm" in names
    # Eagerly, delegates compute what they replaced.
    torch.testing.assert_close(edge.exported_program().module()(x), model(x))


def test_emitted_delegate_calls_run_and_match_eager():
    model, x, edge = lowered(specs=[CompileSpec("mode", b"\x01\x02")])
    manager = edge.to_executorch()
    program = manager.executorch_program
    (plan,) = program.executionPlan
    kinds = [i.instrArgsType for i in plan.chains[0].instructions]
    assert kinds.count(InstructionArguments.DelegateCall) == 2
    assert [d.id for d in plan.delegates] == ["UnaryChainBackend"] * 2
    for delegate in plan.delegates:
        assert delegate.processed.location == DataLocation.INLINE
        assert [(c.key, bytes(c.value)) for c in delegate.compileSpecs] == [
            ("mode", b"\x01\x02")
        ]
    blobs = [bytes(b.data) for b in program.backendDelegateData]
    assert blobs == [b"aten::relu,aten::tanh", b"aten::sigmoid"]
    interpreter = PlanInterpreter(
        plan,
        manager.constant_data,
        blobs,
        {"UnaryChainBackend": run_unary_chain},
    )
    torch.testing.assert_close(interpreter.run((x,))[0], model(x))


def test_serialized_delegate_blobs_move_to_segments():
    _, _, edge = lowered()
    parsed = deserialize_pte_binary(edge.to_executorch().buffer)
    delegates = parsed.program.executionPlan[0].delegates
    assert all(d.processed.location == DataLocation.SEGMENT for d in delegates)
    assert {parsed.segments[d.processed.index] for d in delegates} == {
        b"aten::relu,aten::tanh",
        b"aten::sigmoid",
    }


class LinearPartitioner(Partitioner):
    def partition(self, ep):
        for node in ep.graph.nodes:
            if node.target in (
                exir_ops.edge.aten.addmm.default,
                exir_ops.edge.aten.permute_copy.default,
                exir_ops.edge.aten.linear.default,
            ):
                node.meta["delegation_tag"] = "linear"
        return PartitionResult(ep, {"linear": DelegationSpec("RecordingBackend")})

    def ops_to_not_decompose(self, ep):
        return [torch.ops.aten.linear.default], None


class RecordingBackend(BackendDetails):
    """Records the programs it is given."""

    programs = []

    @staticmethod
    def preprocess(edge_program, compile_specs):
        RecordingBackend.programs.append(edge_program)
        return PreprocessResult(b"recorded")


def test_parameters_used_only_inside_move_into_the_delegate():
    RecordingBackend.programs.clear()
    linear = torch.nn.Linear(3, 2)
    edge = to_edge(torch.export.export(linear, (torch.randn(1, 3),)))
    lowered_ep = edge.to_backend(LinearPartitioner()).exported_program()
    assert lowered_ep.state_dict == {}
    assert [s.kind.name for s in lowered_ep.graph_signature.input_specs] == [
        "USER_INPUT"
    ]
    (sub,) = RecordingBackend.programs
    kinds = [s.kind.name for s in sub.graph_signature.input_specs]
    assert kinds == ["PARAMETER", "PARAMETER", "USER_INPUT"]
    torch.testing.assert_close(sub.state_dict["weight"], linear.weight)


def test_shared_parameters_are_passed_as_delegate_inputs():
    RecordingBackend.programs.clear()

    class Shared(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(3, 3))

        def forward(self, x):
            return torch.nn.functional.linear(x, self.w) + self.w.sum()

    edge = to_edge(torch.export.export(Shared(), (torch.randn(2, 3),)))
    lowered_ep = edge.to_backend(LinearPartitioner()).exported_program()
    assert "w" in lowered_ep.state_dict
    (sub,) = RecordingBackend.programs
    assert all(s.kind.name == "USER_INPUT" for s in sub.graph_signature.input_specs)


def test_to_edge_transform_and_lower_keeps_ops_the_partitioner_wants():
    RecordingBackend.programs.clear()
    linear = torch.nn.Linear(3, 2)
    edge = to_edge_transform_and_lower(
        torch.export.export(linear, (torch.randn(1, 3),)),
        partitioner=[LinearPartitioner()],
    )
    (sub,) = RecordingBackend.programs
    names = [n.target.name() for n in sub.graph.nodes if n.op == "call_function"]
    assert names == ["aten::linear"]
    assert calls(edge.exported_program().graph_module, executorch_call_delegate)


def test_whole_program_lowering_returns_a_lowered_module():
    ep = to_edge(
        torch.export.export(torch.nn.ReLU(), (torch.randn(2),))
    ).exported_program()
    module = to_backend("UnaryChainBackend", ep, [CompileSpec("k", b"v")])
    assert isinstance(module, LoweredBackendModule)
    assert module.processed_bytes == b"aten::relu"
    assert module.compile_specs == [CompileSpec("k", b"v")]
    assert module.original_module is ep


def test_unknown_backend_is_named():
    ep = to_edge(torch.export.export(torch.nn.ReLU(), (torch.randn(2),)))
    with pytest.raises(NotImplementedError, match="NoSuchBackend"):
        ep.to_backend(OpsPartitioner(UNARY_OPS, backend_id="NoSuchBackend"))


def test_non_convex_partition_is_rejected():
    class Skip(torch.nn.Module):
        def forward(self, x):
            a = torch.relu(x)
            b = a + 1  # outside the partition, between a and c
            return torch.tanh(a * b)

    class TagAllUnary(OpsPartitioner):
        def partition(self, ep):
            for node in ep.graph.nodes:
                if node.target in self.ops:
                    node.meta["delegation_tag"] = "one"
            return PartitionResult(ep, {"one": self.delegation})

    ops = UNARY_OPS + [exir_ops.edge.aten.mul.Tensor]
    edge = to_edge(torch.export.export(Skip(), (torch.randn(2),)))
    with pytest.raises(PartitionError, match="not convex"):
        edge.to_backend(TagAllUnary(ops))


class FirstLinearOnly(LinearPartitioner):
    """Wants linear kept whole, but takes only the first one."""

    def partition(self, ep):
        first = next(
            n for n in ep.graph.nodes if n.target is exir_ops.edge.aten.linear.default
        )
        first.meta["delegation_tag"] = "linear"
        return PartitionResult(ep, {"linear": DelegationSpec("RecordingBackend")})


def test_kept_ops_left_undelegated_are_decomposed_afterwards():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2)).eval()
    x = torch.randn(2, 3)
    edge = to_edge_transform_and_lower(
        torch.export.export(model, (x,)), partitioner=[FirstLinearOnly()]
    )
    gm = edge.exported_program().graph_module
    names = [n.target.name() for n in gm.graph.nodes if hasattr(n.target, "name")]
    assert "aten::linear" not in names
    assert "aten::addmm" in names and len(calls(gm, executorch_call_delegate)) == 1
    torch.testing.assert_close(edge.exported_program().module()(x), model(x))


def test_partitioners_per_method():
    RecordingBackend.programs.clear()
    x = torch.randn(1, 3)
    linear = torch.nn.Linear(3, 3)
    programs = {
        "forward": torch.export.export(linear, (x,)),
        "other": torch.export.export(linear, (x,)),
    }
    edge = to_edge_transform_and_lower(
        programs, partitioner={"other": [LinearPartitioner()]}
    )
    assert len(RecordingBackend.programs) == 1
    assert calls(edge.exported_program("other").graph_module, executorch_call_delegate)
    forward = edge.exported_program("forward").graph_module
    assert not calls(forward, executorch_call_delegate)
    names = [n.target.name() for n in forward.graph.nodes if hasattr(n.target, "name")]
    assert "aten::linear" not in names and "aten::addmm" in names
