"""A broad sweep of operators and module kinds through the whole compiler,
each checked against eager in the reference interpreter and, when the
runtime's Python bindings are built, on the runtime too."""

import pytest
import torch
from program_interpreter import PlanInterpreter
from torch.utils import _pytree as pytree

from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.test.modules import Lambda

F = torch.nn.functional


def randn(*shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape)))


def _cases():
    torch.manual_seed(0)
    attention = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    lstm = torch.nn.LSTM(4, 5, batch_first=True)
    return {
        "embedding": (torch.nn.Embedding(10, 4), (torch.tensor([[1, 2], [3, 9]]),)),
        "index": (
            Lambda(lambda x, i: (x[i], x[:, i[:2] % 3])),
            (randn(5, 3), torch.tensor([0, 4, 2])),
        ),
        "slice_select": (
            Lambda(lambda x: (x[1:, ::2], x[:, 1], x[..., -1])),
            (randn(4, 5, 3),),
        ),
        "expand_squeeze": (
            Lambda(lambda x: (x.unsqueeze(0).expand(3, -1, -1), x.squeeze(1))),
            (randn(4, 1),),
        ),
        "pointwise": (
            Lambda(
                lambda x: (
                    x.pow(2),
                    x.clamp(-0.5, 0.5),
                    x.abs().sqrt(),
                    F.gelu(x),
                    F.silu(x),
                    F.hardtanh(x),
                    F.leaky_relu(x, 0.1),
                    F.elu(x),
                )
            ),
            (randn(3, 4),),
        ),
        "where_masked_fill": (
            Lambda(lambda x: (torch.where(x > 0, x, 0.0), x.masked_fill(x > 0, -1.0))),
            (randn(3, 4),),
        ),
        "creation": (
            Lambda(
                lambda x: (
                    torch.zeros_like(x),
                    torch.ones(2, 3) + x[0, :3],
                    x + torch.arange(4),
                )
            ),
            (randn(3, 4),),
        ),
        "cumsum_topk_argmax": (
            Lambda(
                lambda x: (
                    torch.cumsum(x, 1),
                    torch.topk(x, 2),
                    x.argmax(1),
                    x.max(1),
                    x.amax(0),
                )
            ),
            (randn(3, 4),),
        ),
        "full_reductions": (
            Lambda(lambda x: (x.mean(), x.sum(), x.var(1), x.std(0, keepdim=True))),
            (randn(3, 4),),
        ),
        "conv_transpose": (
            torch.nn.ConvTranspose2d(2, 3, 3, stride=2),
            (randn(1, 2, 4, 4),),
        ),
        "upsample_pad": (
            Lambda(
                lambda x: (
                    F.interpolate(x, scale_factor=2),
                    F.interpolate(x, scale_factor=2, mode="bilinear"),
                    F.pad(x, (1, 2)),
                )
            ),
            (randn(1, 2, 3, 3),),
        ),
        "attention": (Lambda(lambda x: attention(x, x, x)[0]), (randn(2, 3, 8),)),
        "sdpa": (
            Lambda(F.scaled_dot_product_attention),
            (randn(1, 2, 3, 4), randn(1, 2, 4, 4), randn(1, 2, 4, 4)),
        ),
        "conversions": (
            Lambda(
                lambda x: (x.long(), x.to(torch.float64), (x > 0).float(), x.half())
            ),
            (randn(3, 4),),
        ),
        "integer_division": (
            Lambda(lambda a, b: (a // b, a % b, torch.remainder(a, 3))),
            (torch.arange(1, 7), torch.tensor([2, 3, 2, 3, 2, 3])),
        ),
        "comparisons": (
            Lambda(lambda x: (x == 0.5, x != 1, x >= 0, x <= 0, x < 2)),
            (randn(3, 4),),
        ),
        "logical": (
            Lambda(lambda a, b: (a & b, a | b, ~a, a ^ b)),
            (torch.tensor([True, False, True]), torch.tensor([True, True, False])),
        ),
        "stack_chunk_unbind": (
            Lambda(
                lambda x, y: (torch.stack([x, y]), torch.chunk(x, 2, 1), x.unbind(0))
            ),
            (randn(2, 4), randn(2, 4)),
        ),
        "lstm": (Lambda(lambda x: lstm(x)[0]), (randn(2, 3, 4),)),
        "group_norm_adaptive_pool": (
            torch.nn.Sequential(
                torch.nn.Conv1d(2, 4, 3),
                torch.nn.GroupNorm(2, 4),
                torch.nn.AdaptiveAvgPool1d(1),
            ),
            (randn(2, 2, 8),),
        ),
        "baddbmm_einsum": (
            Lambda(
                lambda a, b, c: (
                    torch.baddbmm(c, a, b, beta=0.5, alpha=2),
                    torch.einsum("bij,bjk->bik", a, b),
                )
            ),
            (randn(2, 3, 4), randn(2, 4, 5), randn(2, 3, 5)),
        ),
        "repeat_flip_roll": (
            Lambda(lambda x: (x.repeat(2, 1), x.flip(0), x.roll(1, 0))),
            (randn(3, 4),),
        ),
        "norms": (
            Lambda(lambda x: (torch.norm(x, dim=1), F.normalize(x, dim=1))),
            (randn(3, 4),),
        ),
        "bool_reductions": (
            Lambda(lambda x: ((x > 0).sum(1), (x > 0).any(1), (x > 0).all())),
            (randn(3, 4),),
        ),
        "scalar_input": (Lambda(lambda x, n: x * n), (randn(3), 4)),
    }


CASES = _cases()

try:
    from executorch.extension.pybindings.portable_lib import (
        _load_for_executorch_from_buffer,
    )
except ImportError:
    _load_for_executorch_from_buffer = None


@pytest.mark.parametrize("name", sorted(CASES))
def test_operator_coverage(name):
    module, inputs = CASES[name]
    module.eval()
    with torch.no_grad():
        want = pytree.tree_leaves(module(*inputs))
    ep = torch.export.export(module, inputs)
    manager = to_edge(ep).to_executorch(ExecutorchBackendConfig(kernel_library=None))
    plan = manager.executorch_program.executionPlan[0]
    runs = {"interpreter": PlanInterpreter(plan, manager.constant_data).run(inputs)}
    if _load_for_executorch_from_buffer is not None:
        runs["runtime"] = _load_for_executorch_from_buffer(manager.buffer).forward(
            inputs
        )
    for where, got in runs.items():
        assert len(got) == len(want), where
        for a, b in zip(got, want):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4, msg=where)
