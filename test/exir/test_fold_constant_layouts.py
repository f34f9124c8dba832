"""fold_constant_layouts: layout operators on constants (a linear's
transposed weight) are computed at `to_executorch`, bit-identically, unless
that would store a constant twice or the constant is a mutated buffer; the
input program is not modified."""

import torch
from program_interpreter import PlanInterpreter

from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.exir.dialects._ops import ops as exir_ops
from executorch.exir.passes.fold_constant_layouts import fold_constant_layouts

PERMUTE = exir_ops.edge.aten.permute_copy.default


def edge_of(module, *inputs):
    return to_edge(torch.export.export(module, inputs))


def operators(manager):
    plan = manager.executorch_program.executionPlan[0]
    return [plan.operators[i.instrArgs.opIndex].name for i in plan.chains[0].instructions]


def run(manager, *inputs):
    plan = manager.executorch_program.executionPlan[0]
    return PlanInterpreter(plan, manager.constant_data).run(inputs)


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 4, bias=False)

    def forward(self, x):
        return self.fc2(self.fc1(x).relu())


def test_linear_weights_are_transposed_once_at_export():
    torch.manual_seed(0)
    model, x = Mlp().eval(), torch.randn(3, 8)
    edge = edge_of(model, x)
    program = edge.exported_program()
    assert sum(n.target == PERMUTE for n in program.graph.nodes) == 2
    folded = fold_constant_layouts(program)
    assert not any(n.target == PERMUTE for n in folded.graph.nodes)
    # The transposed copies replace the weights, which nothing reads now.
    assert "fc1.weight" not in folded.state_dict and "fc2.weight" not in folded.state_dict
    transposed = [t for t in folded.constants.values() if t.shape == (8, 16)]
    assert len(transposed) == 1 and transposed[0].is_contiguous()
    assert torch.equal(transposed[0], model.fc1.weight.detach().t())
    # The input program is unchanged.
    assert sum(n.target == PERMUTE for n in program.graph.nodes) == 2
    assert "fc1.weight" in program.state_dict
    manager = edge.to_executorch()
    assert "aten::permute_copy" not in operators(manager)
    torch.testing.assert_close(run(manager, x)[0], model(x), rtol=1.3e-6, atol=1e-5)


def test_weights_stored_in_ptd_files_keep_their_names_and_layout():
    edge = edge_of(Mlp().eval(), torch.randn(3, 8))
    manager = edge.to_executorch(ExecutorchBackendConfig(external_constants=True))
    assert operators(manager).count("aten::permute_copy") == 2


def test_fold_constants_false_keeps_the_edge_programs_calls():
    torch.manual_seed(0)
    model, x = Mlp().eval(), torch.randn(3, 8)
    manager = edge_of(model, x).to_executorch(ExecutorchBackendConfig(fold_constants=False))
    assert operators(manager).count("aten::permute_copy") == 2
    torch.testing.assert_close(run(manager, x)[0], model(x), rtol=1.3e-6, atol=1e-5)


def test_chains_of_layout_operators_fold():
    weight = torch.randn(6, 4)

    class Chain(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("w", weight)

        def forward(self, x):
            return x @ self.w.t().reshape(2, 12).t().reshape(4, 6)

    x = torch.randn(3, 4)
    manager = edge_of(Chain(), x).to_executorch()
    names = operators(manager)
    assert "aten::permute_copy" not in names and "aten::view_copy" not in names
    assert torch.equal(run(manager, x)[0], Chain()(x))


def test_a_constant_read_elsewhere_is_not_stored_twice():
    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = torch.nn.Embedding(1000, 64)

        def forward(self, ids):
            hidden = self.embedding(ids)
            return hidden @ self.embedding.weight.t()

    ids = torch.tensor([[1, 5, 7]])
    edge = edge_of(Tied(), ids)
    program = edge.exported_program()
    assert fold_constant_layouts(program) is program
    manager = edge.to_executorch()
    assert "aten::permute_copy" in operators(manager)
    assert len(manager.buffer) < 1000 * 64 * 4 * 1.5


def test_mutated_buffers_are_not_folded():
    class Counter(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("state", torch.zeros(2, 3))

        def forward(self, x):
            self.state.add_(1)
            return x @ self.state.t()

    edge = edge_of(Counter(), torch.randn(4, 3))
    program = edge.exported_program()
    assert fold_constant_layouts(program) is program
    assert "aten::permute_copy" in operators(edge.to_executorch())


def test_a_returned_layout_of_a_constant_stays():
    class Returns(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("w", torch.randn(2, 3))

        def forward(self, x):
            return x + 1, self.w.t()

    program = edge_of(Returns(), torch.randn(2)).exported_program()
    assert fold_constant_layouts(program) is program
