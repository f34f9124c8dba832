"""Copies of intermediate values that move no bytes (reshapes, clones,
squeezes, one-block selects and slices) alias memory instead of copying."""

import torch
from program_interpreter import PlanInterpreter

from executorch.exir import ExecutorchBackendConfig, memory, to_edge
from executorch.exir.dialects._ops import ops as exir_ops
from executorch.test.modules import Lambda


def planned(fn, *inputs):
    manager = to_edge(torch.export.export(Lambda(fn), inputs)).to_executorch()
    return manager, manager.exported_program().graph_module


def targets(gm):
    return [n.target for n in gm.graph.nodes if n.op == "call_function"]


def kernel_names(manager):
    plan = manager.executorch_program.executionPlan[0]
    return [
        plan.operators[i.instrArgs.opIndex].name
        for i in plan.chains[0].instructions
        if hasattr(i.instrArgs, "opIndex")
    ]


def assert_runs_like_eager(manager, fn, x, **tolerances):
    """The plan, run by the reference interpreter on its planned arena (a
    wrong alias or offset corrupts the results), against fn(x);
    `tolerances` go to assert_close."""
    plan = manager.executorch_program.executionPlan[0]
    got = PlanInterpreter(plan, manager.constant_data).run((x,))
    want = fn(x)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, **tolerances)


def test_reshape_of_an_intermediate_aliases_its_memory():
    fn = lambda x: (x.relu().reshape(6, 2) + 1).sum(0)
    x = torch.randn(3, 4)
    manager, gm = planned(fn, x)
    assert memory.view in targets(gm)
    assert exir_ops.edge.aten.view_copy.out not in targets(gm)
    view = next(n for n in gm.graph.nodes if n.target is memory.view)
    base = view.args[0].meta["spec"]
    spec = view.meta["spec"]
    assert spec.base is base and spec.shape == [6, 2]
    assert (spec.mem_id, spec.mem_offset) == (base.mem_id, base.mem_offset)
    # The base stays live (unshared) while the view is used.
    add = next(u for u in view.users)
    index = list(gm.graph.nodes).index(add)
    assert base.lifetime[1] >= index
    assert "aten::view_copy" not in kernel_names(manager)
    assert_runs_like_eager(manager, fn, x)


def test_views_of_inputs_and_returned_views_keep_their_copy():
    _, gm = planned(
        lambda x: (x.reshape(4, 3) * 2, (x + 1).reshape(12)), torch.randn(3, 4)
    )
    assert memory.view not in targets(gm)
    assert targets(gm).count(exir_ops.edge.aten.view_copy.out) == 2


def test_channels_last_values_are_made_contiguous_before_aliasing():
    x = torch.randn(1, 2, 3, 4).to(memory_format=torch.channels_last)
    fn = lambda x: (x * 2).reshape(24).sum()
    manager, gm = planned(fn, x)
    view = next(n for n in gm.graph.nodes if n.target is memory.view)
    # The reshape's clone into the default dim order: a layout copy.
    assert view.args[0].target is exir_ops.edge.dim_order_ops._clone_dim_order.out
    assert view.args[0].kwargs["dim_order"] == [0, 1, 2, 3]
    assert_runs_like_eager(manager, fn, x)


def test_config_can_keep_the_copies():
    ep = torch.export.export(
        Lambda(lambda x: x.relu().reshape(12) + 1), (torch.randn(3, 4),)
    )
    gm = (
        to_edge(ep)
        .to_executorch(ExecutorchBackendConfig(remove_view_copy=False))
        .exported_program()
        .graph_module
    )
    assert memory.view not in targets(gm)
    assert exir_ops.edge.aten.view_copy.out in targets(gm)


def test_copies_that_keep_every_byte_in_place_alias_their_input():
    def fn(x):
        y = x.relu().unsqueeze(0)  # [1, 3, 4]
        y = y.permute(1, 0, 2)  # [3, 1, 4]: only the size-1 dim moves
        y = y.squeeze(1).clone()  # [3, 4]
        y = y.expand(3, 4)  # the same shape
        return (y.unsqueeze(2).squeeze(-1) + 1).sum(0)

    x = torch.randn(3, 4)
    manager, gm = planned(fn, x)
    names = kernel_names(manager)
    for copy in ("unsqueeze_copy", "permute_copy", "squeeze_copy", "clone", "expand"):
        assert not any(copy in name for name in names), (copy, names)
    views = [n for n in gm.graph.nodes if n.target is memory.view]
    assert len(views) == 7
    relu = next(n for n in gm.graph.nodes if "relu" in str(n.target))
    for view in views:
        assert view.meta["spec"].base is relu.meta["spec"]
        assert view.args[1] == list(view.meta["val"].shape)
    assert_runs_like_eager(manager, fn, x)


def test_copies_that_move_bytes_keep_their_kernel():
    def fn(x):
        y = x.relu()  # [1, 3, 4]
        return (y.permute(0, 2, 1) + 1, y.expand(2, 3, 4) * 2)

    x = torch.randn(1, 3, 4)
    manager, gm = planned(fn, x)
    assert memory.view not in targets(gm)
    names = kernel_names(manager)
    assert any("permute_copy" in name for name in names)
    assert any("expand_copy" in name for name in names)
    assert_runs_like_eager(manager, fn, x)


def test_multihead_attention_runs_without_its_no_op_copies():
    from executorch.extension.pybindings import portable_lib

    torch.manual_seed(0)
    attention = torch.nn.MultiheadAttention(32, 4).eval()
    fn = lambda x: attention(x, x, x, need_weights=False)[0].relu()
    x = torch.randn(10, 1, 32)
    manager, _ = planned(fn, x)
    names = kernel_names(manager)
    for copy in ("unsqueeze_copy", "squeeze_copy", "clone", "expand_copy", "select_copy"):
        assert not any(copy in name for name in names), (copy, names)
    program = portable_lib._load_for_executorch_from_buffer(manager.buffer)
    torch.testing.assert_close(program.forward([x])[0], fn(x), atol=1e-5, rtol=1e-5)


def test_selects_and_slices_of_one_block_alias_it_at_its_offset():
    def fn(x):
        y = x.relu()  # [1, 3, 4, 5]
        q, k, v = y[0, 0], y[0, 1], y[:, 2]  # [4, 5] at 0, 20 and 40 floats
        tail = y[0, 1:3]  # [2, 4, 5] at 20
        last = y.select(1, -1).narrow(1, 2, 2)  # [1, 2, 5] at 40 + 10
        return (q * k + v.squeeze(0)).sum(), tail * 2, last + 1

    x = torch.randn(1, 3, 4, 5)
    manager, gm = planned(fn, x)
    names = kernel_names(manager)
    assert not any("select_copy" in n or "slice_copy" in n for n in names), names
    relu = next(n for n in gm.graph.nodes if "relu" in str(n.target))
    base = relu.meta["spec"]
    offsets = sorted(
        (n.meta["spec"].mem_offset - base.mem_offset) // 4
        for n in gm.graph.nodes
        if n.target is memory.view
        and n.meta["spec"].base is base
        and n.meta["val"].numel() < 60
    )
    # q, k and tail; v, v squeezed and the select's own view; the narrow.
    assert offsets == [0, 20, 20, 40, 40, 40, 50], offsets
    assert_runs_like_eager(manager, fn, x)


def test_selects_and_slices_that_gather_keep_their_kernel():
    def fn(x):
        y = x.relu()  # [4, 3, 4]: a cut along dim 1 takes a piece of each row
        return y[:, 1] + 1, y[:, :, 1:3] * 2, y[::2] - 1

    x = torch.randn(4, 3, 4)
    manager, gm = planned(fn, x)
    names = kernel_names(manager)
    assert names.count("aten::select_copy") == 1
    assert names.count("aten::slice_copy") == 2
    assert_runs_like_eager(manager, fn, x)


def test_a_block_of_a_returned_value_keeps_its_kernel():
    def fn(x):
        y = x.relu()
        return y, y.reshape(2, 3, 4)[1] * 2

    x = torch.randn(6, 4)
    manager, gm = planned(fn, x)
    assert "aten::select_copy" in kernel_names(manager)
    assert_runs_like_eager(manager, fn, x)
