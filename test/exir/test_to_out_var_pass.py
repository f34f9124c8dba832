"""Out-variant conversion on Edge graphs."""

import operator

import pytest
import torch

from executorch.exir import EdgeCompileConfig, memory, to_edge
from executorch.exir.dialects._ops import ops as exir_ops
from executorch.exir.passes import ToOutVarPass
from executorch.exir.passes.to_out_var_pass import OutVariantError


def converted(fn, *inputs):
    class M(torch.nn.Module):
        def forward(self, *args):
            return fn(*args)

    ep = to_edge(torch.export.export(M(), inputs)).exported_program()
    gm = ep.graph_module
    result = ToOutVarPass()(gm)
    assert result.modified
    return gm


def calls(gm):
    return [n for n in gm.graph.nodes if n.op == "call_function"]


def test_single_output_writes_into_an_alloc():
    gm = converted(lambda x, y: x + y, torch.randn(2, 3), torch.randn(3))
    alloc, add = calls(gm)
    assert alloc.target is memory.alloc
    assert alloc.args == (((2, 3), torch.float32),)
    assert add.target is exir_ops.edge.aten.add.out
    assert add.kwargs["out"] is alloc
    assert add.kwargs["alpha"] == 1


def test_scalar_overload_gets_its_own_out_variant():
    gm = converted(lambda x: x * 2.5, torch.randn(3))
    assert calls(gm)[-1].target is exir_ops.edge.aten.mul.Scalar_out


def test_multiple_outputs_get_one_alloc_each():
    gm = converted(
        lambda x: torch.nn.functional.max_pool2d(x, 2, return_indices=True),
        torch.randn(1, 2, 4, 4),
    )
    pool = next(n for n in calls(gm) if "max_pool" in str(n.target))
    assert pool.target is exir_ops.edge.aten.max_pool2d_with_indices.out
    out, indices = pool.kwargs["out"], pool.kwargs["indices"]
    assert out.target is memory.alloc and indices.target is memory.alloc
    assert indices.args[0] == ((1, 2, 2, 2), torch.int64)
    getitems = [n for n in calls(gm) if n.target is operator.getitem]
    assert {g.args[0] for g in getitems} == {pool}


def test_tensor_list_out_is_one_alloc_indexed_by_users():
    gm = converted(lambda x: torch.split(x, [1, 3], dim=1), torch.randn(2, 4))
    split = next(n for n in calls(gm) if "split" in str(n.target))
    assert split.target is exir_ops.edge.aten.split_with_sizes_copy.out
    alloc = split.kwargs["out"]
    assert alloc.args[0] == [((2, 1), torch.float32), ((2, 3), torch.float32)]
    assert not split.users
    getitems = [n for n in calls(gm) if n.target is operator.getitem]
    assert [g.args for g in getitems] == [(alloc, 0), (alloc, 1)]


def test_arguments_the_out_variant_lacks_are_dropped():
    gm = converted(lambda x: x.to(torch.int32), torch.randn(3))
    copy = calls(gm)[-1]
    assert copy.target is exir_ops.edge.dim_order_ops._to_dim_order_copy.out
    assert "dtype" not in copy.kwargs
    assert copy.kwargs["out"].args[0] == ((3,), torch.int32)


def test_converted_graph_still_computes_the_same():
    x = torch.randn(2, 5)
    gm = converted(lambda x: (torch.softmax(x, 1) * 3, torch.split(x, 2, 1)), x)
    got = gm(x)
    torch.testing.assert_close(got[0], torch.softmax(x, 1) * 3)
    for a, b in zip(got[1:], torch.split(x, 2, 1)):
        torch.testing.assert_close(a, b)


def test_operator_without_out_variant_names_node_and_source():
    lib = torch.library.Library("exir_test_outvar", "DEF")
    lib.define("twice(Tensor x) -> Tensor")
    lib.impl("twice", lambda x: x * 2, "CompositeExplicitAutograd")
    op = torch.ops.exir_test_outvar.twice.default

    class M(torch.nn.Module):
        def forward(self, x):
            return torch.ops.exir_test_outvar.twice(x)

    edge = to_edge(
        torch.export.export(M(), (torch.randn(2),)),
        compile_config=EdgeCompileConfig(_core_aten_ops_exception_list=[op]),
    )
    with pytest.raises(OutVariantError) as error:
        edge.to_executorch()
    message = str(error.value)
    assert "exir_test_outvar::twice" in message
    assert "node 'twice'" in message.lower()
    assert "torch.ops.exir_test_outvar.twice(x)" in message
