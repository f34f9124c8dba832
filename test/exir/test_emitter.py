"""The emitted program: values, argument order, operators, constants,
planned memory, container metadata, several methods and constant methods."""

import torch
from torch.utils import _pytree as pytree

from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.exir._serialize._flatbuffer import KernelTypes, TensorShapeDynamism
from executorch.exir.emit import ConstantData
from executorch.test.modules import Lambda


def emit(module, inputs, **kwargs):
    manager = to_edge(torch.export.export(module, inputs), **kwargs).to_executorch()
    return manager, manager.executorch_program


def kind(plan, index):
    return plan.values[index].valType


def val(plan, index):
    return plan.values[index].val


def instructions(plan):
    (chain,) = plan.chains
    assert list(chain.inputs) == [] and list(chain.outputs) == []
    return [i.instrArgs for i in chain.instructions]


def operator_names(plan):
    return [(o.name, o.overload) for o in plan.operators]


def test_kernel_call_arguments_are_schema_order_then_out_then_return():
    _, program = emit(Lambda(lambda x, y: x + y), (torch.randn(2, 3), torch.randn(3)))
    assert program.version == 0
    (plan,) = program.executionPlan
    assert plan.name == "forward"
    assert operator_names(plan) == [("aten::add", "out")]
    (call,) = instructions(plan)
    x, y, alpha, out, ret = call.args
    assert [x, y] == list(plan.inputs)
    assert kind(plan, alpha) == KernelTypes.Int and val(plan, alpha).intVal == 1
    assert ret == out and list(plan.outputs) == [out]
    tensor = val(plan, out)
    assert list(tensor.sizes) == [2, 3] and list(tensor.dimOrder) == [0, 1]
    assert tensor.scalarType == 6 and tensor.dataBufferIdx == 0
    assert tensor.shapeDynamism == TensorShapeDynamism.STATIC
    assert tensor.allocationInfo.memoryId == 1


def test_int_lists_refer_to_int_values():
    _, program = emit(Lambda(lambda x: x.permute(2, 0, 1)), (torch.randn(2, 3, 4),))
    (plan,) = program.executionPlan
    assert operator_names(plan) == [("aten::permute_copy", "out")]
    (call,) = instructions(plan)
    dims = call.args[1]
    assert kind(plan, dims) == KernelTypes.IntList
    items = list(val(plan, dims).items)
    assert [val(plan, i).intVal for i in items] == [2, 0, 1]
    assert all(kind(plan, i) == KernelTypes.Int for i in items)


def test_tensor_list_argument_and_tensor_list_out():
    def fn(x, y):
        return torch.split(torch.cat([x, y]), [1, 2])

    _, program = emit(Lambda(fn), (torch.randn(1, 2), torch.randn(2, 2)))
    (plan,) = program.executionPlan
    assert operator_names(plan) == [
        ("aten::cat", "out"),
        ("aten::split_with_sizes_copy", "out"),
    ]
    cat, split = instructions(plan)
    assert list(val(plan, cat.args[0]).items) == list(plan.inputs)
    assert kind(plan, cat.args[1]) == KernelTypes.Int
    # split_with_sizes_copy.out(self, sizes, dim, *, out) -> (): the out
    # TensorList, then the same list again in the return slot.
    self_, sizes, dim, out, ret = split.args
    assert self_ == cat.args[2]
    assert kind(plan, out) == KernelTypes.TensorList
    assert list(val(plan, ret).items) == list(val(plan, out).items)
    assert list(plan.outputs) == list(val(plan, out).items)


def test_tuple_return_adds_a_tensor_list_of_outs():
    _, program = emit(torch.nn.LayerNorm(4), (torch.randn(2, 4),))
    (plan,) = program.executionPlan
    (call,) = instructions(plan)
    assert operator_names(plan) == [("aten::native_layer_norm", "out")]
    # input, normalized_shape, weight, bias, eps, out0, out1, out2, returns
    assert len(call.args) == 9
    assert kind(plan, call.args[4]) == KernelTypes.Double
    assert list(val(plan, call.args[8]).items) == list(call.args[5:8])
    assert list(plan.outputs) == [call.args[5]]


def test_optional_none_and_defaults_are_emitted():
    _, program = emit(torch.nn.Conv2d(2, 2, 3, bias=False), (torch.randn(1, 2, 5, 5),))
    (plan,) = program.executionPlan
    (call,) = instructions(plan)
    assert operator_names(plan) == [("aten::convolution", "out")]
    assert kind(plan, call.args[2]) == KernelTypes.Null  # bias
    assert kind(plan, call.args[6]) == KernelTypes.Bool  # transposed


def test_constants_go_to_the_constant_data_not_planned_memory():
    linear = torch.nn.Linear(3, 2)
    manager, program = emit(linear, (torch.randn(4, 3),))
    (plan,) = program.executionPlan
    data = manager.constant_data
    assert data[0] == b""
    constants = [
        val(plan, i)
        for i in range(len(plan.values))
        if kind(plan, i) == KernelTypes.Tensor and val(plan, i).dataBufferIdx
    ]
    assert len(constants) == 2
    for tensor in constants:
        assert tensor.allocationInfo is None
        assert len(data[tensor.dataBufferIdx]) == 4 * int(
            torch.tensor(list(tensor.sizes)).prod()
        )
    # Stored transposed, as addmm reads it (FoldConstantLayoutsPass).
    weight = linear.weight.detach().t().contiguous()
    assert weight.numpy().tobytes() in data


def test_planned_offsets_are_split_into_low_and_high_words():
    manager, program = emit(Lambda(lambda x: x * x), (torch.randn(8),))
    (plan,) = program.executionPlan
    sizes = list(plan.nonConstBufferSizes)
    assert sizes[0] == 0 and sizes[1] >= 64
    for i in range(len(plan.values)):
        if kind(plan, i) == KernelTypes.Tensor:
            info = val(plan, i).allocationInfo
            assert info.memoryOffsetHigh == 0
            assert info.memoryOffsetLow + 32 <= sizes[1]


def test_container_metadata_is_the_pytree_specs():
    module = Lambda(lambda x, y: (x + y, x - y))
    inputs = (torch.randn(2), torch.randn(2))
    _, program = emit(module, inputs)
    meta = program.executionPlan[0].containerMetaType
    ep = torch.export.export(module, inputs)
    assert meta.encodedInpStr == pytree.treespec_dumps(ep.call_spec.in_spec)
    assert meta.encodedOutStr == pytree.treespec_dumps(ep.call_spec.out_spec)
    in_spec = pytree.treespec_loads(meta.encodedInpStr)
    assert in_spec.num_leaves == 2


def test_several_methods_share_one_constant_segment():
    shared = torch.nn.Linear(3, 3)
    programs = {
        "forward": torch.export.export(shared, (torch.randn(1, 3),)),
        "batched": torch.export.export(shared, (torch.randn(4, 3),)),
    }
    manager = to_edge(programs).to_executorch()
    names = [p.name for p in manager.executorch_program.executionPlan]
    assert sorted(names) == ["batched", "forward"]
    # Weight and bias once, not once per method.
    assert len(manager.constant_data) == 3


def test_constant_methods_are_plans_without_instructions():
    manager, program = emit(
        Lambda(lambda x: x.relu()),
        (torch.randn(2),),
        constant_methods={
            "max_len": 128,
            "scale": 0.25,
            "ready": True,
            "name": "tiny",
            "table": torch.arange(3, dtype=torch.int32),
        },
    )
    plans = {p.name: p for p in program.executionPlan}
    assert set(plans) == {"forward", "max_len", "scale", "ready", "name", "table"}
    expected = {
        "max_len": (KernelTypes.Int, "intVal", 128),
        "scale": (KernelTypes.Double, "doubleVal", 0.25),
        "ready": (KernelTypes.Bool, "boolVal", True),
        "name": (KernelTypes.String, "stringVal", "tiny"),
    }
    for name, (value_kind, field, value) in expected.items():
        plan = plans[name]
        assert list(plan.inputs) == [] and list(plan.outputs) == [0]
        assert instructions(plan) == [] and list(plan.operators) == []
        assert kind(plan, 0) == value_kind and getattr(val(plan, 0), field) == value
        assert list(plan.nonConstBufferSizes) == [0]
    table = val(plans["table"], 0)
    assert table.scalarType == 3 and table.dataBufferIdx > 0
    data = manager.constant_data[table.dataBufferIdx]
    assert data == torch.arange(3, dtype=torch.int32).numpy().tobytes()


def test_constant_data_deduplicates_identical_bytes():
    data = ConstantData()
    first = data.add(torch.ones(4))
    assert data.add(torch.ones(4)) == first
    assert data.add(torch.zeros(4)) != first
    assert data.add(torch.ones(2, 2)) == first
    assert data.buffers[0] == b""


def test_constant_bytes_follow_the_declared_dim_order():
    data = ConstantData()
    x = torch.arange(24, dtype=torch.float32).reshape(1, 2, 3, 4)
    nhwc = data.buffers[data.add(x, [0, 2, 3, 1])]
    assert nhwc == x.permute(0, 2, 3, 1).contiguous().numpy().tobytes()
    # The same values stored with their strides in channels-last: the
    # declared order decides, not the strides.
    strided = x.to(memory_format=torch.channels_last)
    assert data.buffers[data.add(strided)] == x.numpy().tobytes()


class TanhPlusOne(torch.nn.Module):
    # Defined here: the recorded stack trace names this file's forward.
    def forward(self, x):
        return torch.tanh(x) + 1


def test_stack_traces_are_kept_per_instruction():
    manager, program = emit(TanhPlusOne(), (torch.randn(2),))
    sources = manager.instruction_sources("forward")
    assert [s.operator for s in sources] == ["aten::tanh.out", "aten::add.Scalar_out"]
    assert all("test_emitter.py" in s.stack_trace for s in sources)


class Exp(torch.nn.Module):
    def forward(self, x):
        return x.exp()


def test_emit_stacktrace_fills_chain_frames():
    manager = to_edge(torch.export.export(Exp(), (torch.randn(2),))).to_executorch(
        ExecutorchBackendConfig(emit_stacktrace=True)
    )
    (chain,) = manager.executorch_program.executionPlan[0].chains
    (frames,) = chain.stacktrace
    assert any(
        f.filename.endswith("test_emitter.py") and "x.exp()" in f.context
        for f in frames.items
    )


class LinearRelu(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 2)

    def forward(self, x):
        return self.linear(x).relu()


def test_dump_program_lists_instructions_values_and_sources():
    manager = to_edge(
        torch.export.export(LinearRelu(), (torch.randn(4, 3),)),
        constant_methods={"version": 2},
    ).to_executorch()
    text = manager.dump_program()
    assert "method forward: planned buffers [0, " in text
    assert "aten::addmm.out(" in text and "const#" in text and "@1+" in text
    relu = next(line for line in text.splitlines() if "aten::relu.out(" in line)
    assert "float32[4, 2]" in relu
    assert "test_emitter.py" in text and "self.linear(x).relu()" in text
    assert "method version" in text and "outputs: %0: 2" in text
    assert "method version" not in manager.dump_program("forward")
