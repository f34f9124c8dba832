"""A permute of a permute (through clones) becomes one permute, or an alias."""

import torch
from test_replace_view_copy_pass import assert_runs_like_eager, kernel_names, planned

from executorch.exir import memory


def lowered(fn, x):
    """The kernels the program calls and its graph, once its results have
    matched eager exactly (permutes compute nothing)."""
    manager, gm = planned(fn, x)
    assert_runs_like_eager(manager, fn, x, rtol=0, atol=0)
    return kernel_names(manager), gm


def test_a_chain_through_a_clone_is_one_permute():
    fn = lambda x: x.relu().permute(2, 0, 1, 3).clone().permute(0, 3, 1, 2) + 1
    names, gm = lowered(fn, torch.randn(2, 3, 4, 5))
    assert names.count("aten::permute_copy") == 1
    assert "aten::clone" not in names
    permute = next(n for n in gm.graph.nodes if "permute_copy" in str(n.target))
    # [2, 0, 1, 3] then [0, 3, 1, 2]: dims 2, 3, 0, 1 of the input.
    assert permute.args[1] == [2, 3, 0, 1]


def test_a_chain_that_composes_to_the_identity_copies_nothing():
    fn = lambda x: x.relu().permute(2, 0, 1, 3).clone().permute(1, 2, 0, 3) * 2
    names, gm = lowered(fn, torch.randn(1, 3, 6, 4))
    assert not any("permute" in n or "clone" in n for n in names), names
    assert any(n.target is memory.view for n in gm.graph.nodes)


def test_multihead_attentions_three_output_permutes_are_one():
    # What nn.MultiheadAttention's export does to its heads' output.
    fn = lambda x: (
        x.relu().permute(2, 0, 1, 3).clone().permute(1, 2, 0, 3).permute(2, 0, 1, 3)
        * 2
    )
    names, gm = lowered(fn, torch.randn(1, 3, 6, 4))
    assert names.count("aten::permute_copy") == 1
    assert "aten::clone" not in names


def test_an_inner_permute_another_op_reads_is_kept():
    fn = lambda x: (
        lambda t: (t + 1, t.permute(1, 0, 2) * 2)
    )(x.relu().permute(2, 1, 0))
    names, _ = lowered(fn, torch.randn(2, 3, 4))
    assert names.count("aten::permute_copy") == 2


def test_a_chain_on_a_method_input_keeps_one_copy():
    fn = lambda x: x.permute(1, 0).permute(1, 0) + 1
    names, _ = lowered(fn, torch.randn(3, 4))
    assert names.count("aten::permute_copy") == 1
