"""torch.cond, map and torch.while_loop exported, run by the C++ runtime
(portable_lib) and compared with eager through the staged harness
(executorch.backends.test.harness) at its "pointwise" precision; integer
results are exact."""

import pytest
import torch
from torch._higher_order_ops.map import map as hop_map
from torch.export import Dim

from executorch.backends.test.harness import Tester
from executorch.exir import control_flow, to_edge
from executorch.exir._serialize._flatbuffer import InstructionArguments
from executorch.exir.passes.lower_control_flow_pass import ControlFlowError

portable_lib = pytest.importorskip("executorch.extension.pybindings.portable_lib")


def _lower(model, args, dynamic_shapes=None):
    """The harness after to_executorch and serialization."""
    return Tester(model, args, dynamic_shapes=dynamic_shapes).serialize()


def _check(tester, inputs):
    for args in inputs:
        tester.run_method_and_compare_outputs(args)


def _program(tester):
    """The emitted program (executorch_program) of the harness's program."""
    return tester.get_artifact("to_executorch").executorch_program


def _instruction_kinds(manager):
    plan = manager.executorch_program.executionPlan[0]
    return [i.instrArgsType for i in plan.chains[0].instructions]


class SignDependent(torch.nn.Module):
    """The branch depends on the data; x is also used after the cond, so
    the branches must not overwrite it."""

    def forward(self, x, y):
        def positive(x, y):
            return (x.sin() * y + 1,)

        def negative(x, y):
            return ((x - y).cos(),)

        (out,) = torch.cond(x.sum() > 0, positive, negative, (x, y))
        return out + x


def test_cond_takes_the_branch_the_data_selects():
    model = SignDependent()
    x, y = torch.rand(2, 3) + 0.1, torch.randn(2, 3)
    tester = _lower(model, (x, y))
    kinds = _instruction_kinds(tester.get_artifact("to_executorch"))
    # One conditional jump to the false branch, one past it.
    assert kinds.count(InstructionArguments.JumpFalseCall) == 2
    _check(tester, [(x, y), (-x, y), (x, -y), (-3 * x, y)])


def test_cond_with_a_dynamic_batch():
    model = SignDependent()
    batch = Dim("batch", min=1, max=6)
    tester = _lower(
        model,
        (torch.randn(4, 3), torch.randn(4, 3)),
        dynamic_shapes={"x": {0: batch}, "y": {0: batch}},
    )
    inputs = []
    for n in (1, 6, 3):
        x = torch.rand(n, 3)
        inputs += [(x, torch.randn(n, 3)), (-x, torch.randn(n, 3))]
    _check(tester, inputs)


class MultiOutputBranch(torch.nn.Module):
    """A branch whose result is one output of a multi-output kernel is
    copied into the shared result; the other writes into it directly."""

    def forward(self, x):
        return torch.cond(
            x.amax() > 1, lambda x: (x.sort()[0],), lambda x: (x * 2,), (x,)
        )


def test_cond_branch_result_copied_into_the_shared_output():
    model = MultiOutputBranch()
    tester = _lower(model, (torch.randn(5),))
    names = [o.name for o in _program(tester).executionPlan[0].operators]
    assert names.count("aten::clone") == 1
    _check(tester, [(torch.randn(5) * 4,), (torch.rand(5),)])


class RowWise(torch.nn.Module):
    def forward(self, xs, w):
        return hop_map(lambda row, w: (row @ w).relu() + row.sum(), xs, w)


def test_map_runs_a_loop_over_the_rows():
    model = RowWise()
    w = torch.randn(3, 3)
    tester = _lower(model, (torch.randn(4, 3), w))
    names = [o.name for o in _program(tester).executionPlan[0].operators]
    assert "executorch_prim::et_copy_index" in names
    _check(tester, [(torch.randn(4, 3), w), (torch.randn(4, 3), -w)])


def test_map_over_a_dynamic_number_of_rows():
    model = RowWise()
    tester = _lower(
        model,
        (torch.randn(4, 3), torch.randn(3, 3)),
        dynamic_shapes={"xs": {0: Dim("rows", min=1, max=8)}, "w": None},
    )
    # Fewer rows after more: the result shrinks back.
    w = torch.randn(3, 3)
    _check(tester, [(torch.randn(n, 3), w) for n in (8, 2, 1, 5)])


class Collatz(torch.nn.Module):
    """Iterates until a data-dependent condition holds; the count and the
    value are carried."""

    def forward(self, n, x):
        def cond(steps, value, x):
            return value.sum() > 1

        def body(steps, value, x):
            halved = value // 2
            odd = value % 2
            return steps + 1, torch.where(odd == 1, 3 * value + 1, halved), x

        return torch.while_loop(
            lambda s, v: cond(s, v, None),
            lambda s, v: body(s, v, None)[:2],
            (torch.zeros(1, dtype=torch.int64), n),
        )


def test_while_loop_runs_a_data_dependent_number_of_times():
    model = Collatz()
    tester = _lower(model, (torch.tensor([6]), torch.zeros(1)))
    inputs = [(torch.tensor([v]), torch.zeros(1)) for v in (6, 1, 27, 2)]
    module = portable_lib._load_for_executorch_from_buffer(tester.get_artifact())
    for n, x in inputs:
        steps, value = module.forward((n, x))
        want_steps, want_value = model(n, x)
        assert steps.item() == want_steps.item() and value.item() == 1
        assert want_value.item() == 1


class LoopWithAHoistedValue(torch.nn.Module):
    """`scale` is computed before the loop and read by every iteration,
    which makes temporaries of its own: it must outlive the loop."""

    def forward(self, x, limit):
        scale = x.abs() + 0.5

        def body(i, acc):
            return i + 1, (acc * 0.5 + scale).tanh() + (scale * scale).sum()

        return torch.while_loop(
            lambda i, acc: (i < limit).all(), body, (torch.zeros(1), x)
        )


def test_while_loop_keeps_values_from_before_it_alive():
    model = LoopWithAHoistedValue()
    tester = _lower(model, (torch.randn(8), torch.tensor([4.0])))
    _check(
        tester,
        [(torch.randn(8), torch.tensor([float(k)])) for k in (4, 1, 7, 0)],
    )


class Swap(torch.nn.Module):
    """The body returns carried values at each other's positions."""

    def forward(self, a, b):
        return torch.while_loop(
            lambda a, b: a.sum() < 20, lambda a, b: (b + 1, a.clone()), (a, b)
        )


def test_while_loop_body_swapping_carried_values():
    model = Swap()
    tester = _lower(model, (torch.zeros(3), torch.ones(3)))
    _check(
        tester,
        [(torch.zeros(3), torch.ones(3)), (torch.ones(3), -torch.ones(3))],
    )


class Nested(torch.nn.Module):
    """A cond inside a map body, and a while_loop inside a cond branch."""

    def forward(self, xs, y):
        def row(r, y):
            return torch.cond(
                r.sum() > 0, lambda r, y: r * y, lambda r, y: r - y, (r, y)
            )

        mapped = hop_map(row, xs, y)

        def grow(t):
            return torch.while_loop(
                lambda t: t.abs().sum() < 100, lambda t: (t * 2 + 1,), (t,)
            )

        (out,) = torch.cond(
            mapped.mean() > 0, lambda t: grow(t), lambda t: (t.neg(),), (mapped,)
        )
        return out


def test_nested_control_flow():
    model = Nested()
    tester = _lower(model, (torch.randn(4, 3), torch.randn(3)))
    inputs = [(torch.randn(4, 3), torch.randn(3)) for _ in range(4)]
    inputs += [(torch.rand(4, 3), torch.rand(3)), (-torch.rand(4, 3), torch.rand(3))]
    _check(tester, inputs)


def test_lowered_graph_has_no_higher_order_operators_left():
    tester = _lower(Nested(), (torch.randn(4, 3), torch.randn(3)))
    gm = tester.get_artifact("to_executorch").exported_program().graph_module
    targets = {n.target for n in gm.graph.nodes if n.op == "call_function"}
    assert control_flow.jump_false in targets and control_flow.label in targets
    assert not any(isinstance(t, torch._ops.HigherOrderOperator) for t in targets)
    assert not [n for n in gm.graph.nodes if n.op == "get_attr"]


class SizePredicate(torch.nn.Module):
    """The predicate is computed from a dynamic size by prim ops."""

    def forward(self, x):
        return torch.cond(
            x.shape[0] > 4,
            lambda x: (x.sum(0, keepdim=True) * 2,),
            lambda x: (x.amax(0, keepdim=True),),
            (x,),
        )


def test_cond_on_a_dynamic_size():
    model = SizePredicate()
    tester = _lower(model, (torch.randn(6, 3),), {"x": {0: Dim("n", min=1, max=10)}})
    names = [o.name for o in _program(tester).executionPlan[0].operators]
    assert "executorch_prim::gt" in names
    _check(tester, [(torch.randn(n, 3),) for n in (1, 4, 5, 10)])


class DynamicCarry(torch.nn.Module):
    def forward(self, x):
        return torch.while_loop(
            lambda i, x: (i < 3).all(),
            lambda i, x: (i + 1, x.tanh() * 2),
            (torch.zeros(1), x),
        )


def test_while_loop_carrying_a_dynamic_tensor():
    model = DynamicCarry()
    tester = _lower(model, (torch.randn(6, 3),), {"x": {0: Dim("n", min=1, max=10)}})
    listing = tester.get_artifact("to_executorch").dump_program()
    assert "if not " in listing and "goto" in listing
    _check(tester, [(torch.randn(n, 3),) for n in (1, 10, 3)])


class IntCounter(torch.nn.Module):
    def forward(self, x):
        return torch.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (0, x))


def test_non_tensor_carried_value_is_rejected_with_its_source_line():
    ep = torch.export.export(IntCounter(), (torch.randn(3),))
    edge = to_edge(ep)
    with pytest.raises(ControlFlowError) as error:
        edge.to_executorch()
    message = str(error.value)
    assert "while_loop" in message and "carried value must be a tensor" in message
    assert "test_control_flow.py" in message and "torch.while_loop(" in message
