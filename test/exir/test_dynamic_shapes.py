"""Programs with dynamic (bounded) shapes: tensors are planned at their upper
bounds and marked DYNAMIC_BOUND, sizes are computed at run time by prim ops."""

import pytest
import torch
from program_interpreter import PlanInterpreter
from torch.export import Dim

from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.exir._serialize._flatbuffer import KernelTypes, TensorShapeDynamism


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, x):
        y = self.linear(x).relu()
        return y.reshape(x.shape[0] * 3), y.sum(0)


def export(max_batch=8):
    torch.manual_seed(0)
    model = Model().eval()
    ep = torch.export.export(
        model,
        (torch.randn(5, 4),),
        dynamic_shapes={"x": {0: Dim("batch", min=1, max=max_batch)}},
    )
    return model, to_edge(ep).to_executorch()


def test_dynamic_tensors_are_planned_at_their_upper_bound():
    _, manager = export(max_batch=8)
    plan = manager.executorch_program.executionPlan[0]
    x = plan.values[plan.inputs[0]].val
    assert list(x.sizes) == [8, 4]
    assert x.shapeDynamism == TensorShapeDynamism.DYNAMIC_BOUND
    flat = plan.values[plan.outputs[0]].val
    assert list(flat.sizes) == [24]
    assert flat.shapeDynamism == TensorShapeDynamism.DYNAMIC_BOUND
    total = plan.values[plan.outputs[1]].val
    assert total.shapeDynamism == TensorShapeDynamism.STATIC


def test_sizes_are_computed_by_prim_ops():
    _, manager = export()
    plan = manager.executorch_program.executionPlan[0]
    names = [(o.name, o.overload) for o in plan.operators]
    assert ("aten::sym_size", "int") in names
    assert ("executorch_prim::mul", "Scalar") in names
    calls = [i.instrArgs for i in plan.chains[0].instructions]
    sym_size = next(
        c for c in calls if plan.operators[c.opIndex].name == "aten::sym_size"
    )
    tensor, dim, result = sym_size.args
    assert tensor == plan.inputs[0]
    assert plan.values[dim].val.intVal == 0
    assert plan.values[result].valType == KernelTypes.Int
    mul = next(
        c for c in calls if plan.operators[c.opIndex].name == "executorch_prim::mul"
    )
    assert mul.args[0] == result
    view = next(c for c in calls if plan.operators[c.opIndex].name == "aten::view_copy")
    # The view's size list holds the prim op's result value itself.
    assert list(plan.values[view.args[1]].val.items) == [mul.args[2]]


def test_runs_at_every_batch_size_up_to_the_bound():
    model, manager = export()
    plan = manager.executorch_program.executionPlan[0]
    interpreter = PlanInterpreter(plan, manager.constant_data)
    for batch in (1, 5, 8):
        x = torch.randn(batch, 4)
        got = interpreter.run((x,))
        with torch.no_grad():
            want = model(x)
        for a, b in zip(got, want):
            torch.testing.assert_close(a, b)


def test_runs_on_the_runtime_at_every_batch_size():
    portable_lib = pytest.importorskip("executorch.extension.pybindings.portable_lib")
    model, manager = export()
    module = portable_lib._load_for_executorch_from_buffer(manager.buffer)
    for batch in (8, 2, 5):
        x = torch.randn(batch, 4)
        with torch.no_grad():
            want = model(x)
        for a, b in zip(module.forward((x,)), want):
            torch.testing.assert_close(a, b)


class ScaleBy(torch.nn.Module):
    def forward(self, x, n):
        return x * n + n


def test_dynamic_int_input_is_an_int_value_used_as_scalar():
    ep = torch.export.export(
        ScaleBy(), (torch.randn(3), 4), dynamic_shapes=(None, Dim.DYNAMIC)
    )
    manager = to_edge(ep).to_executorch()
    plan = manager.executorch_program.executionPlan[0]
    n = plan.inputs[1]
    assert plan.values[n].valType == KernelTypes.Int
    names = [(o.name, o.overload) for o in plan.operators]
    assert names == [("aten::mul", "Scalar_out"), ("aten::add", "Scalar_out")]
    calls = [i.instrArgs for i in plan.chains[0].instructions]
    assert calls[0].args[1] == n and calls[1].args[1] == n
    interpreter = PlanInterpreter(plan, manager.constant_data)
    x = torch.randn(3)
    for value in (7, -2):
        torch.testing.assert_close(interpreter.run((x, value))[0], x * value + value)


def test_memory_summary_reports_each_buffer_at_the_upper_bounds(capsys):
    _, small = export(max_batch=8)
    _, large = export(max_batch=16)
    for manager, batch in ((small, 8), (large, 16)):
        report = manager.memory_report()
        plan = manager.executorch_program.executionPlan[0]
        assert report.buffer_sizes == list(plan.nonConstBufferSizes)
        dynamic = {name: (shape, size) for name, shape, size in report.dynamic_tensors}
        assert dynamic["x"] == ([batch, 4], batch * 4 * 4)
        summary = manager.memory_summary()
        assert f"method 'forward': {sum(report.buffer_sizes)} bytes planned" in summary
        assert f"buffer 1: {report.buffer_sizes[1]} bytes" in summary
        assert f"x: [{batch}, 4] {batch * 16} bytes" in summary
    assert sum(large.memory_report().buffer_sizes) > sum(
        small.memory_report().buffer_sizes
    )
    # The config option prints the same summary when the program is built.
    ep = torch.export.export(
        Model().eval(),
        (torch.randn(5, 4),),
        dynamic_shapes={"x": {0: Dim("batch", min=1, max=8)}},
    )
    manager = to_edge(ep).to_executorch(
        ExecutorchBackendConfig(print_memory_summary=True)
    )
    assert manager.memory_summary() in capsys.readouterr().out


def test_upstream_dynamic_shape_config_runs_unchanged():
    # How upstream's export scripts configure dynamic programs: the
    # constraint-based pass, an explicit out-variant pass, per-method
    # memory planning. Planned at the bounds, run at every size.
    from executorch.exir.dynamic_shape import DynamicMemoryPlanningMode
    from executorch.exir.passes import (
        ConstraintBasedSymShapeEvalPass,
        MemoryPlanningPass,
        ToOutVarPass,
    )

    portable_lib = pytest.importorskip("executorch.extension.pybindings.portable_lib")
    torch.manual_seed(0)
    model = Model().eval()
    ep = torch.export.export(
        model, (torch.randn(5, 4),), dynamic_shapes={"x": {0: Dim("batch", max=8)}}
    )
    config = ExecutorchBackendConfig(
        memory_planning_pass={"forward": MemoryPlanningPass(alloc_graph_input=True)},
        to_out_var_pass=ToOutVarPass(ignore_to_out_var_failure=False),
        sym_shape_eval_pass={"forward": ConstraintBasedSymShapeEvalPass()},
        dynamic_memory_planning_mode=DynamicMemoryPlanningMode.UPPER_BOUND,
    )
    manager = to_edge(ep).to_executorch(config)
    plan = manager.executorch_program.executionPlan[0]
    assert list(plan.values[plan.inputs[0]].val.sizes) == [8, 4]
    module = portable_lib._load_for_executorch_from_buffer(manager.buffer)
    for batch in (1, 8):
        x = torch.randn(batch, 4)
        with torch.no_grad():
            want = model(x)
        for a, b in zip(module.forward((x,)), want):
            torch.testing.assert_close(a, b)


def test_planning_options_this_sdk_cannot_honour_are_refused():
    from executorch.exir.dynamic_shape import DynamicMemoryPlanningMode
    from executorch.exir.passes import HintBasedSymShapeEvalPass, ToOutVarPass

    with pytest.raises(NotImplementedError, match="UPPER_BOUND"):
        ExecutorchBackendConfig(
            dynamic_memory_planning_mode=DynamicMemoryPlanningMode.SYMBOLIC
        )
    with pytest.raises(TypeError, match="sym_shape_eval_pass for forward"):
        ExecutorchBackendConfig(sym_shape_eval_pass={"forward": object()})
    with pytest.raises(NotImplementedError, match="ignore_to_out_var_failure"):
        ToOutVarPass(ignore_to_out_var_failure=True)
    with pytest.warns(UserWarning, match="upper bounds"):
        hint = HintBasedSymShapeEvalPass()
    ExecutorchBackendConfig(sym_shape_eval_pass=hint)
    edge = to_edge(torch.export.export(Model(), (torch.randn(2, 4),)))
    with pytest.raises(KeyError, match="no entry for method 'forward'"):
        edge.to_executorch(
            ExecutorchBackendConfig(memory_planning_pass={"other": None})
        )
