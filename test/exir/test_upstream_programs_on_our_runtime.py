"""Programs exported by upstream ExecuTorch run on our runtime.

torch.export runs here; the ExportedPrograms go, saved with
torch.export.save, to upstream's `to_edge(...).to_executorch()` in its own
environment (one process for all of them), and each resulting .pte runs on
our runtime (portable_lib) and is compared with eager. Covers the models of
test_pipeline_against_eager, dtypes, 0-dim and empty tensors, mutable
buffers, nested outputs, several methods and constant methods, dynamic
shapes, control flow, upstream's ExecutorchBackendConfig variants, and an
XNNPACK-delegated program (the blob in a segment and inline).

Needs upstream ExecuTorch (the `upstream_python` fixture); skipped without
it. Upstream cannot export torch.while_loop (its emitter has no while
instruction), so it is not here.
"""

import copy
import json
import subprocess
import textwrap
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import pytest
import torch
from test_pipeline_against_eager import CASES, randn
from torch._higher_order_ops.map import map as hop_map
from torch.export import Dim

from executorch.exir._serialize._flatbuffer import DataLocation, Program, ProgramT
from executorch.extension.pybindings.portable_lib import (
    _load_for_executorch_from_buffer,
)
from executorch.test.modules import CondLinear, Lambda

# Run by upstream's Python. stdin: JSON {job name: {"methods": {method:
# .pt2 path}, "constant_methods": path of a torch.save'd {name: value},
# "config": ExecutorchBackendConfig
# keywords, "memory_planning": MemoryPlanningPass keywords (the algorithm by
# name), "xnnpack": bool}};
# argv[1]: the output directory, which gets <job>.pte, or <job>.err with the
# reason upstream refused it.
_UPSTREAM_EXPORT = textwrap.dedent("""
    import json, sys, traceback
    import torch
    from executorch.exir import (
        ExecutorchBackendConfig, to_edge, to_edge_transform_and_lower,
    )
    from executorch.exir import memory_planning
    from executorch.exir.memory_planning import MemoryPlanningAlgorithmSuite
    from executorch.exir.passes import MemoryPlanningPass

    out = sys.argv[1]
    for name, job in json.load(sys.stdin).items():
        try:
            programs = {m: torch.export.load(p) for m, p in job["methods"].items()}
            constants = job.get("constant_methods")
            constants = constants and torch.load(constants)
            if job.get("xnnpack"):
                from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
                    XnnpackPartitioner,
                )
                edge = to_edge_transform_and_lower(
                    programs, partitioner=[XnnpackPartitioner()],
                    constant_methods=constants,
                )
            else:
                edge = to_edge(programs, constant_methods=constants)
            planning = job.get("memory_planning", {})
            if "memory_planning_algo" in planning:
                algo = getattr(memory_planning, planning["memory_planning_algo"])
                planning["memory_planning_algo"] = MemoryPlanningAlgorithmSuite([algo])
            config = ExecutorchBackendConfig(
                memory_planning_pass=MemoryPlanningPass(**planning),
                **job.get("config", {}),
            )
            buffer = edge.to_executorch(config).buffer
            with open(f"{out}/{name}.pte", "wb") as f:
                f.write(buffer)
        except Exception:
            with open(f"{out}/{name}.err", "w") as f:
                f.write(traceback.format_exc())
    """)


@dataclass
class Case:
    """A model, its example inputs and the input tuples to run, in order, on
    one loaded program (the state of mutable buffers carries over)."""

    model: torch.nn.Module
    inputs: tuple
    runs: Optional[List[tuple]] = None
    dynamic_shapes: Any = None
    # More methods exported beside `forward`: {name: (model, inputs)}.
    methods: Dict[str, Any] = field(default_factory=dict)
    constant_methods: Optional[Dict[str, Any]] = None
    config: Dict[str, Any] = field(default_factory=dict)
    memory_planning: Dict[str, Any] = field(default_factory=dict)
    # Float tolerance; 1e-4 where conv/matmul accumulate in another order.
    tol: float = 1e-5


class Counter(torch.nn.Module):
    """Mutable buffers of two dtypes, updated in place on each call."""

    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros((), dtype=torch.int64))
        self.register_buffer("total", torch.zeros(3))

    def forward(self, x):
        self.count.add_(1)
        self.total.add_(x)
        return self.count * 1, self.total * 2


class RingWrite(torch.nn.Module):
    """A cache written through index_put_ (a KV-cache style update)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(4, 3))

    def forward(self, pos, x):
        self.cache.index_put_((pos,), x)
        return self.cache + 0


class DynamicMlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(6, 4)

    def forward(self, x, y):
        h = torch.relu(self.fc(x))
        return h * h.sum(-1, keepdim=True), torch.cat([y, y * 2], 0).reshape(-1)


class MapMatmul(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(randn(3, 3, seed=5))

    def forward(self, xs):
        return hop_map(lambda row, w: row @ w + 1, xs, self.weight)


class Encoder(torch.nn.Module):
    """A pre-norm transformer block with embedding and causal attention."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(20, 16)
        self.layer = torch.nn.TransformerEncoderLayer(
            16, 2, 32, dropout=0.0, batch_first=True, norm_first=True
        )
        self.head = torch.nn.Linear(16, 5)

    def forward(self, tokens):
        h = self.embed(tokens)
        q = h.view(h.shape[0], h.shape[1], 2, 8).transpose(1, 2)
        attn = torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
        return self.head(self.layer(h + attn.transpose(1, 2).reshape(h.shape)))


class ConvZoo(torch.nn.Module):
    """Convolutions, norms, pooling, resampling and padding."""

    def __init__(self):
        super().__init__()
        self.conv1d = torch.nn.Conv1d(3, 4, 3, dilation=2)
        self.deconv = torch.nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1)
        self.group_norm = torch.nn.GroupNorm(2, 4)
        with torch.no_grad():
            self.group_norm.weight.uniform_(0.5, 1.5)

    def forward(self, x):
        y = self.group_norm(self.deconv(x))
        return (
            self.conv1d(x.flatten(2)),
            torch.nn.functional.adaptive_avg_pool2d(y, 1),
            torch.nn.functional.interpolate(x, scale_factor=2, mode="nearest"),
            torch.nn.functional.interpolate(
                x, size=(7, 5), mode="bilinear", align_corners=False
            ),
            torch.nn.functional.pad(x, (1, 2, 0, 1), mode="constant", value=0.5),
            torch.nn.functional.max_pool2d(x, 3, stride=2, padding=1),
        )


class SymbolicShapes(torch.nn.Module):
    """Shape arithmetic on a dynamic size (sym_size and prim ops), arange of
    a symbolic length and a reshape through it."""

    def forward(self, x):
        n = x.shape[0]
        steps = torch.arange(n * 2, dtype=torch.float32)
        return x.reshape(n * 3, 2) + 1, steps * x.sum(), x.new_ones(n // 2 + 1)


class ShapeArithmetic(torch.nn.Module):
    """A dynamic size as a float factor, an allocation size and an int
    output."""

    def forward(self, x):
        n = x.shape[0]
        return x * (n / 2), x.new_zeros(n * 2 - 1), n * 2


class DynamicConv(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 3, 3, padding=1)

    def forward(self, x):
        return torch.nn.functional.max_pool2d(self.conv(x).relu(), 2)


class NestedCond(torch.nn.Module):
    """A cond inside a branch of another, on float and int predicates."""

    def forward(self, x, n):
        def inner(x, n):
            return torch.cond(
                n.sum() > 2, lambda x: (x.cos(),), lambda x: (x.sin(),), (x,)
            )

        return torch.cond(
            x.sum() > 0, inner, lambda x, n: (x * n.float().sum(),), (x, n)
        )


def _op_cases():
    """Many operators, one small model per family."""
    x, y = randn(3, 4), randn(3, 4, seed=1)
    functional = torch.nn.functional
    return {
        "ops_unary": Case(
            Lambda(
                lambda x: (
                    x.exp(),
                    x.abs().log(),
                    x.abs().sqrt(),
                    x.abs().add(0.1).rsqrt(),
                    x.sigmoid(),
                    x.tanh(),
                    x.sin() + x.cos(),
                    x.neg().ceil() + x.floor() + x.round(),
                    x.sign(),
                    x.reciprocal(),
                    x.erf(),
                    x.clamp(-0.5, 0.5),
                    x.pow(2) + x.abs().pow(0.5),
                    torch.trunc(x * 3),
                )
            ),
            (x,),
        ),
        "ops_activations": Case(
            Lambda(
                lambda x: (
                    functional.gelu(x),
                    functional.gelu(x, approximate="tanh"),
                    functional.silu(x),
                    functional.hardswish(x),
                    functional.hardsigmoid(x),
                    functional.leaky_relu(x, 0.1),
                    functional.elu(x),
                    functional.softplus(x),
                    functional.hardtanh(x, -0.3, 0.3),
                    functional.glu(x),
                    functional.relu6(x * 5),
                )
            ),
            (x,),
        ),
        "ops_binary": Case(
            Lambda(
                lambda x, y: (
                    torch.maximum(x, y),
                    torch.minimum(x, y),
                    torch.remainder(x, 0.7),
                    torch.fmod(x, 0.7),
                    torch.atan2(x, y),
                    x.pow(y.abs()),
                    torch.floor_divide(x, 0.3),
                    torch.eq(x, y) | torch.ne(x, x),
                    x >= 0.1,
                    torch.lerp(x, y, 0.3),
                )
            ),
            (x, y),
        ),
        "ops_reductions": Case(
            Lambda(
                lambda x: (
                    x.amax(1),
                    x.amin(0, keepdim=True),
                    x.argmin(1),
                    x.var(1),
                    x.std(0, unbiased=False),
                    x.prod(1),
                    x.cumsum(1),
                    (x > 0).any(1),
                    (x > -3).all(),
                    torch.logsumexp(x, 1),
                    x.sort(1)[0],
                    x.sort(0, descending=True)[1],
                )
            ),
            (x,),
        ),
        "ops_indexing": Case(
            Lambda(
                lambda x, i: (
                    x.index_select(1, i),
                    x.gather(1, i.expand(3, 3)),
                    x[:, i],
                    x[1:, ::2],
                    x.masked_fill(x > 0, -1.0),
                    x.scatter(1, i.expand(3, 3)[:, :1], 9.0),
                    torch.slice_scatter(x, torch.zeros(3, 2), 1, 1, 3),
                    torch.select_scatter(x, torch.ones(4), 0, 2),
                    x.diagonal(),
                    x[i[:2]],
                )
            ),
            (x, torch.tensor([2, 0, 3])),
        ),
        "ops_shapes": Case(
            Lambda(
                lambda x, y: (
                    torch.stack([x, y], 1),
                    x.unsqueeze(0).expand(2, 3, 4) * 1,
                    x.repeat(2, 1),
                    x.flip(0),
                    x.roll(1, 1),
                    x.tril(),
                    x.triu(1),
                    torch.unbind(y, 1)[2],
                    x.t().contiguous(),
                    torch.chunk(x, 2, 1)[1] + 0,
                    x.view(2, 6).squeeze(),
                    torch.einsum("ij,kj->ik", x, y),
                    torch.full_like(x, 2.5) + torch.zeros(3, 4),
                    torch.narrow(x, 1, 1, 2) * 1,
                    torch.pixel_shuffle(x.reshape(1, 4, 3, 1), 2),
                )
            ),
            (x, y),
            tol=1e-4,
        ),
        "ops_float16": Case(
            Lambda(
                lambda a, b: (a * b + 1, a.sum(0), (a - b).relu(), a.to(torch.float32))
            ),
            (x.half(), y.half()),
        ),
        "ops_bfloat16": Case(
            Lambda(lambda a, b: (a * b + 1, a.amax(0), torch.softmax(a.float(), 1))),
            (x.bfloat16(), y.bfloat16()),
        ),
        "ops_float64": Case(
            Lambda(lambda a, b: (a @ b.t(), (a / b).exp(), a.mean())),
            (x.double(), y.double()),
        ),
        "ops_small_ints": Case(
            Lambda(
                lambda u, i8, i16: (
                    u + 3,
                    u.to(torch.int32) * 7,
                    i8 * 2,
                    i16 // 3,
                    i8.abs(),
                    torch.bitwise_and(u, 6),
                    torch.bitwise_xor(i16, 5) | torch.bitwise_not(i16),
                    u.max(),
                )
            ),
            (
                torch.tensor([0, 5, 200, 255], dtype=torch.uint8),
                torch.tensor([-128, -3, 4, 127], dtype=torch.int8),
                torch.tensor([-300, 7, 9000, 2], dtype=torch.int16),
            ),
        ),
        "encoder": Case(
            Encoder(), (torch.tensor([[1, 4, 7, 19], [0, 2, 2, 3]]),), tol=1e-4
        ),
        "conv_zoo": Case(ConvZoo(), (randn(1, 3, 5, 4),), tol=1e-4),
        "symbolic_shapes": Case(
            SymbolicShapes(),
            (randn(4, 6),),
            runs=[(randn(n, 6, seed=n),) for n in (2, 9, 16, 5)],
            dynamic_shapes=({0: Dim("n", min=2, max=16)},),
        ),
        "norms_without_affine": Case(
            Lambda(
                lambda x: (
                    functional.layer_norm(x, (4,)),
                    functional.group_norm(x.reshape(1, 4, 3), 2),
                    functional.batch_norm(x, torch.zeros(4), torch.ones(4)),
                )
            ),
            (x,),
        ),
        "nonzero": Case(Lambda(lambda x: (torch.nonzero(x > 0), x.abs().sum())), (x,)),
        "shape_arithmetic": Case(
            ShapeArithmetic(),
            (randn(6, 2),),
            runs=[(randn(n, 2, seed=n),) for n in (2, 12, 7)],
            dynamic_shapes=({0: Dim("n", min=2, max=12)},),
        ),
        "dynamic_conv": Case(
            DynamicConv(),
            (randn(2, 2, 6, 6),),
            runs=[(randn(b, 2, h, h, seed=h),) for b, h in ((1, 4), (3, 16), (2, 9))],
            dynamic_shapes=(
                {
                    0: Dim("b", min=1, max=3),
                    2: Dim("h", min=4, max=16),
                    3: Dim("w", min=4, max=16),
                },
            ),
            tol=1e-4,
        ),
        "nested_cond": Case(
            NestedCond(),
            (x, torch.tensor([1, 2])),
            runs=[
                (x, torch.tensor([1, 2])),
                (x.abs(), torch.tensor([1, 2])),
                (x.abs(), torch.tensor([1, 0])),
            ],
        ),
        "transposed_operands": Case(
            Lambda(
                lambda a, b, c: (
                    a.t() * 2,
                    torch.exp(a.t()) + a.t(),
                    c.permute(2, 0, 1) + 1,
                    c.transpose(0, 1).sum(0),
                    a.t() @ b,
                    torch.addmm(b[0], a.t(), b),
                    a[:1].expand(3, 4) * a,
                )
            ),
            (x, randn(3, 5, seed=2), randn(2, 3, 4, seed=3)),
            tol=1e-4,
        ),
        # Upstream keeps the input's channels-last dim order through the
        # convolutions, norm and pools. Our softmax, cat, upsample, group and
        # layer norm kernels still require the default dim order.
        "channels_last_cnn": Case(
            torch.nn.Sequential(
                torch.nn.Conv2d(3, 4, 3),
                torch.nn.BatchNorm2d(4),
                torch.nn.ReLU(),
                torch.nn.Conv2d(4, 4, 3, groups=4, padding=1),
                torch.nn.ConvTranspose2d(4, 2, 2, stride=2),
                torch.nn.MaxPool2d(3, 2, 1, ceil_mode=True),
                torch.nn.AvgPool2d(2),
                torch.nn.AdaptiveAvgPool2d(1),
            ),
            (randn(2, 3, 8, 8).to(memory_format=torch.channels_last),),
            tol=1e-4,
        ),
        "stacktrace": Case(
            Lambda(lambda x: x.relu() * 2), (x,), config=dict(emit_stacktrace=True)
        ),
        "item_and_scalar_tensor": Case(
            Lambda(lambda x, k: x * k.item() + torch.scalar_tensor(2.0)),
            (x, torch.tensor(3)),
        ),
    }


def _extra_cases():
    torch.manual_seed(0)
    ints = torch.tensor([[5, -3, 0], [7, 2, -8]])
    x3 = randn(3)
    batch, length = Dim("batch", min=1, max=8), Dim("length", min=2, max=10)
    return {
        "int_bool_int32": Case(
            Lambda(
                lambda i, b, j: (
                    i * 3 - j,
                    torch.where(b, i, -i),
                    b.logical_not() | (i > 0),
                    j // 3,
                    i.argmax(1),
                    (i.to(torch.int32) + j).sum(),
                )
            ),
            (
                ints,
                ints % 2 == 0,
                torch.tensor([4, -1, 9], dtype=torch.int32),
            ),
        ),
        "zero_dim": Case(
            Lambda(lambda x, s: (x * s, x.sum(), s + 1, x.max())),
            (randn(2, 3), torch.tensor(1.5)),
        ),
        "empty": Case(
            Lambda(lambda e, x: (torch.cat([e, x]), e.sum(0), e * 2, x[:0] + 1)),
            (torch.zeros(0, 3), randn(2, 3)),
        ),
        "mutable_buffers": Case(
            Counter(), (x3,), runs=[(x3,), (randn(3, seed=7),), (x3,)]
        ),
        "mutable_buffers_named": Case(
            Counter(),
            (x3,),
            runs=[(x3,), (x3,)],
            config=dict(emit_mutable_buffer_names=True),
        ),
        "index_put_cache": Case(
            RingWrite(),
            (torch.tensor([1]), randn(1, 3)),
            runs=[(torch.tensor([1]), randn(1, 3)), (torch.tensor([3]), randn(1, 3))],
        ),
        "index_put_cache_reinplaced": Case(
            RingWrite(),
            (torch.tensor([1]), randn(1, 3)),
            runs=[(torch.tensor([2]), randn(1, 3)), (torch.tensor([0]), randn(1, 3))],
            config=dict(run_reinplace_pass=True),
        ),
        "nested_outputs": Case(
            Lambda(lambda x: (x + 1, (x * 2, (x - 1, x.sum(0))), [x.t()])),
            (randn(2, 3),),
        ),
        "methods_and_constants": Case(
            Lambda(lambda x: x * 2),
            (x3,),
            methods={"negate": (Lambda(lambda x, y: (-x, x - y)), (x3, x3 * 2))},
            constant_methods={
                "get_size": 3,
                "get_scale": 0.5,
                "is_ready": True,
                "table": torch.arange(3.0),
                "ids": [4, 5, 6],
            },
        ),
        "dynamic_shapes": Case(
            DynamicMlp(),
            (randn(3, 6), randn(4, 2)),
            runs=[
                (randn(n, 6, seed=n), randn(m, 2, seed=m))
                for n, m in ((1, 2), (8, 10), (5, 7), (2, 3))
            ],
            dynamic_shapes=({0: batch}, {0: length}),
            tol=1e-4,
        ),
        "cond": Case(
            CondLinear(),
            (x3.reshape(1, 3),),
            runs=[(x3.reshape(1, 3),), (-x3.reshape(1, 3),)],
        ),
        "map": Case(MapMatmul(), (randn(4, 3),), tol=1e-4),
        "unplanned_inputs_outputs": Case(
            *CASES["mlp"],
            memory_planning=dict(alloc_graph_input=False, alloc_graph_output=False),
            tol=1e-4,
        ),
        "aligned_segments": Case(
            *CASES["buffers"],
            config=dict(segment_alignment=4096, constant_tensor_alignment=64),
            tol=1e-4,
        ),
        "naive_planner": Case(
            *CASES["cnn"],
            memory_planning=dict(memory_planning_algo="naive"),
            tol=1e-4,
        ),
    }


# Cases of test_pipeline_against_eager whose conv/matmul accumulate in
# another order than eager's.
_MATMUL_CASES = {"linear", "mlp", "cnn", "matmul_bmm", "buffers"}


class Flattened(torch.nn.Module):
    """Returns the leaves of `model`'s outputs as a tuple: torch.export.save
    cannot write output specs with torch.return_types (topk, max)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, *args):
        return tuple(torch.utils._pytree.tree_leaves(self.model(*args)))


ALL_CASES = {
    **{
        f"pipeline_{name}": Case(
            Flattened(model) if name == "topk_max" else model,
            inputs,
            tol=1e-4 if name in _MATMUL_CASES else 1e-5,
        )
        for name, (model, inputs) in CASES.items()
    },
    **_extra_cases(),
    **_op_cases(),
}

# Delegated to upstream's XNNPACK backend, with the blob in a segment and
# inline.
XNNPACK_JOBS = {
    "xnnpack_segment": dict(extract_delegate_segments=True),
    "xnnpack_inline": dict(extract_delegate_segments=False),
}


def _save_ep(path, model, inputs, dynamic_shapes=None):
    ep = torch.export.export(model.eval(), inputs, dynamic_shapes=dynamic_shapes)
    torch.export.save(ep, path)
    return str(path)


@pytest.fixture(scope="module")
def upstream_ptes(upstream_python, tmp_path_factory):
    """{job name: .pte bytes, or the text of upstream's error}."""
    directory = tmp_path_factory.mktemp("upstream_programs")
    jobs = {}
    for name, case in ALL_CASES.items():
        methods = {
            "forward": _save_ep(
                directory / f"{name}.pt2",
                copy.deepcopy(case.model),
                case.inputs,
                case.dynamic_shapes,
            )
        }
        for method, (model, inputs) in case.methods.items():
            methods[method] = _save_ep(
                directory / f"{name}.{method}.pt2", model, inputs
            )
        constants = None
        if case.constant_methods:
            constants = str(directory / f"{name}.constants.pt")
            torch.save(case.constant_methods, constants)
        jobs[name] = dict(
            methods=methods,
            constant_methods=constants,
            config=case.config,
            memory_planning=case.memory_planning,
        )
    cnn = _save_ep(directory / "xnnpack.pt2", *CASES["cnn"])
    for name, config in XNNPACK_JOBS.items():
        jobs[name] = dict(methods={"forward": cnn}, config=config, xnnpack=True)
    # Weights in a .ptd file beside the program.
    jobs["external_constants"] = dict(
        methods={"forward": _save_ep(directory / "linear.pt2", *CASES["linear"])},
        config=dict(external_constants=True),
    )
    subprocess.run(
        [upstream_python, "-c", _UPSTREAM_EXPORT, str(directory)],
        input=json.dumps(jobs),
        text=True,
        check=True,
        capture_output=True,
        cwd="/",
        timeout=600,
    )
    results = {}
    for name in jobs:
        pte, err = directory / f"{name}.pte", directory / f"{name}.err"
        results[name] = pte.read_bytes() if pte.exists() else err.read_text()
    return results


def _assert_close(got, want, tol):
    """Integers, bools and non-tensor outputs exactly; float32/64 to `tol`;
    16-bit floats with torch's defaults for their dtype; NaN where eager has
    NaN."""
    assert len(got) == len(want)
    for a, b in zip(got, want):
        if not isinstance(b, torch.Tensor):
            assert a == b
            continue
        if not b.is_floating_point():
            kwargs = dict(rtol=0, atol=0)
        elif b.dtype in (torch.float32, torch.float64):
            kwargs = dict(rtol=tol, atol=tol)
        else:
            kwargs = {}
        torch.testing.assert_close(a, b, equal_nan=True, **kwargs)


def _leaves(outputs):
    return torch.utils._pytree.tree_leaves(outputs)


def _program(upstream_ptes, name):
    pte = upstream_ptes[name]
    assert isinstance(pte, bytes), f"upstream could not export {name}:\n{pte}"
    return _load_for_executorch_from_buffer(pte)


@pytest.mark.parametrize("name", sorted(ALL_CASES))
def test_upstream_program_matches_eager(upstream_ptes, name):
    case = ALL_CASES[name]
    module = _program(upstream_ptes, name)
    # A fresh copy, so stateful models start where the exported one did.
    model = copy.deepcopy(case.model).eval()
    for inputs in case.runs or [case.inputs]:
        with torch.no_grad():
            want = _leaves(model(*inputs))
        _assert_close(module.forward(inputs), want, case.tol)
    for method, (other, inputs) in case.methods.items():
        with torch.no_grad():
            want = _leaves(other(*inputs))
        _assert_close(module.run_method(method, inputs), want, case.tol)
    for method, value in (case.constant_methods or {}).items():
        got = module.run_method(method, ())
        if isinstance(value, torch.Tensor):
            torch.testing.assert_close(got, [value], rtol=0, atol=0)
        else:
            assert got == (value if isinstance(value, list) else [value])


@pytest.mark.parametrize("name", sorted(XNNPACK_JOBS))
def test_upstream_xnnpack_program_matches_eager(upstream_ptes, name):
    """Upstream's XNNPACK blobs (header, schema, weights in named data) run on
    our XnnpackBackend, with the blob in a segment and inline."""
    model, inputs = CASES["cnn"]
    with torch.no_grad():
        want = _leaves(copy.deepcopy(model).eval()(*inputs))
    got = _program(upstream_ptes, name).forward(inputs)
    _assert_close(got, want, 1e-4)


def _layout(pte):
    """(header magic, constant offsets, segments, delegate data locations,
    named data entries) of a .pte."""
    program = ProgramT.InitFromObj(Program.GetRootAs(pte, 0))
    delegates = program.executionPlan[0].delegates or []
    return (
        pte[8:12],
        len(program.constantSegment.offsets),
        len(program.segments or []),
        [d.processed.location for d in delegates],
        len(program.namedData or []),
    )


def test_upstream_programs_use_extended_header_and_segments(upstream_ptes):
    """The cases above exercise upstream's eh00 header and constant segment;
    its XNNPACK programs keep the delegate in a segment or inline, and the
    weights as named data in segments of their own."""
    header, constants, segments, _, _ = _layout(upstream_ptes["pipeline_buffers"])
    assert (header, segments) == (b"eh00", 1) and constants > 1
    assert _layout(upstream_ptes["aligned_segments"])[:3] == (b"eh00", constants, 1)
    for name, location in (
        ("xnnpack_segment", DataLocation.SEGMENT),
        ("xnnpack_inline", DataLocation.INLINE),
    ):
        _, _, segments, locations, named = _layout(upstream_ptes[name])
        assert locations == [location] and named > 0
        assert segments == 1 + named + (location == DataLocation.SEGMENT)


def test_upstream_program_with_external_constants_needs_its_ptd(upstream_ptes):
    """Upstream's external_constants=True keeps the weights in a .ptd file;
    loaded without it, the error names the missing tensor. (With the file,
    test/runtime_py/test_external_data.py runs upstream's programs.)"""
    module = _program(upstream_ptes, "external_constants")
    with pytest.raises(
        RuntimeError, match="NotFound.*'weight' is stored outside the .pte"
    ):
        module.forward(CASES["linear"][1])
