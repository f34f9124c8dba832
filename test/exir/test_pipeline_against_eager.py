"""The whole pipeline (to_edge -> to_executorch -> emitted program) checked
against eager PyTorch, by running the emitted program in the reference
interpreter (which honours the memory plan byte for byte), through the
staged harness's stages and tolerance table."""

import pytest
import torch
from program_interpreter import PlanInterpreter

from executorch.backends.test.harness import Tester
from executorch.backends.test.harness.tester import ACCUMULATING, POINTWISE, compare
from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.exir.passes import MemoryPlanningPass
from executorch.test.modules import Lambda


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


class SmallCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, stride=2, groups=2)
        self.pool = torch.nn.MaxPool2d(2)
        self.avg = torch.nn.AvgPool2d(2)
        self.fc = torch.nn.Linear(8, 10)
        with torch.no_grad():
            self.bn1.running_mean.uniform_(-0.5, 0.5)
            self.bn1.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = self.conv2(self.pool(x))
        return self.fc(torch.flatten(self.avg(x), 1))


class WithBuffers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(randn(4, 4))
        self.register_buffer("offset", torch.linspace(-1, 1, 4))
        self.register_buffer("scale", torch.full((4,), 0.5), persistent=False)

    def forward(self, x):
        return (x @ self.weight + self.offset) * self.scale


def _split_and_views(x, y):
    joined = torch.cat([x, y], dim=1)
    first, second = torch.split(joined, [2, 4], dim=1)
    return (
        first.reshape(-1),
        second.permute(2, 0, 1),
        torch.transpose(joined, 0, 2).contiguous().view(4, -1),
    )


class _SelfAttention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = torch.nn.MultiheadAttention(16, 2)

    def forward(self, x):
        return self.attention(x, x, x, need_weights=False)[0].relu()


def _cases():
    torch.manual_seed(0)
    ints = torch.arange(-6, 6).reshape(3, 4)
    return {
        "add_alpha": (
            Lambda(lambda x, y: torch.add(x, y, alpha=2.5)),
            (randn(2, 3, 4), randn(3, 1)),
        ),
        "sub_mul_div": (
            Lambda(lambda x, y: (x - y, x * y, x / y, torch.sub(x, y, alpha=3))),
            (randn(4, 5), randn(5).abs() + 0.5),
        ),
        "scalars": (Lambda(lambda x: (x * 2.5 + 1) / 4 - 0.5), (randn(3, 3),)),
        "linear": (torch.nn.Linear(8, 5), (randn(3, 8),)),
        "mlp": (
            torch.nn.Sequential(
                torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)
            ),
            (randn(5, 16),),
        ),
        "cnn": (SmallCnn(), (randn(2, 3, 12, 12),)),
        "softmax": (
            Lambda(lambda x: (torch.softmax(x, -1), torch.log_softmax(x, 1))),
            (randn(3, 7, 5),),
        ),
        "layer_norm": (torch.nn.LayerNorm(6), (randn(2, 4, 6),)),
        # Its export reshapes, squeezes, clones and expands without moving
        # bytes: the copies the planner aliases.
        "multihead_attention": (
            _SelfAttention(),
            (randn(5, 1, 16),),
        ),
        "matmul_bmm": (
            Lambda(lambda a, b, c: (a @ b, torch.bmm(c, c.transpose(1, 2)))),
            (randn(4, 6), randn(6, 3), randn(2, 3, 5)),
        ),
        "split_views": (Lambda(_split_and_views), (randn(3, 2, 4), randn(3, 4, 4))),
        "reductions": (
            Lambda(lambda x: (x.sum(1), x.sum((0, 2), keepdim=True), x.mean(-1))),
            (randn(3, 4, 5),),
        ),
        "integers": (
            Lambda(lambda a, b: (a + b, a * b, a - 2 * b, (a + b).sum(dim=0))),
            (ints, torch.arange(4)),
        ),
        "int32": (
            Lambda(lambda a, b: (a + b, a * b)),
            (ints.to(torch.int32), torch.arange(4, dtype=torch.int32)),
        ),
        "bools": (
            Lambda(
                lambda x, y: (
                    x > y,
                    torch.logical_and(x > 0, y > 0),
                    torch.where(x > y, x, y),
                )
            ),
            (randn(4, 4), randn(4, 4, seed=1)),
        ),
        "mixed_dtypes": (
            Lambda(lambda i, f: (i + f, i * 2, f.to(torch.int32))),
            (torch.arange(6).reshape(2, 3), randn(2, 3) * 4),
        ),
        "buffers": (WithBuffers(), (randn(3, 4),)),
        "number_first_and_norm": (
            Lambda(lambda x: (1 - x, 2 / x, torch.norm(x, dim=1))),
            (randn(3, 4),),
        ),
        "topk_max": (
            Lambda(lambda x: (torch.topk(x, 2), x.max(1))),
            (randn(3, 5),),
        ),
        "channels_last": (
            Lambda(lambda x: x.to(memory_format=torch.channels_last) * 2),
            (randn(1, 3, 4, 5),),
        ),
    }


CASES = _cases()


def run_emitted(manager, inputs, method="forward"):
    plans = {p.name: p for p in manager.executorch_program.executionPlan}
    return PlanInterpreter(plans[method], manager.constant_data).run(inputs)


def check(module, inputs, config=None):
    """The emitted program run by the interpreter against eager, at the
    harness's "accumulating" precision (the cases include convolutions)."""
    tester = Tester(module, inputs).to_executorch(config)
    manager = tester.get_artifact()
    tester.compare_outputs(lambda: run_emitted(manager, inputs), precision=ACCUMULATING)
    return manager


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_eager(name):
    check(*CASES[name])


def test_channels_last_weights_are_emitted_in_their_dim_order():
    # Not a case in CASES, which upstream's runtime also runs
    # (test_upstream_interop): its avg_pool2d takes the default dim order only.
    model = SmallCnn().to(memory_format=torch.channels_last)
    check(model, (randn(2, 3, 12, 12).to(memory_format=torch.channels_last),))


@pytest.mark.parametrize("algo", ["greedy", "naive"])
def test_matches_eager_with_each_planner(algo):
    config = ExecutorchBackendConfig(
        memory_planning_pass=MemoryPlanningPass(memory_planning_algo=algo)
    )
    check(*CASES["cnn"], config=config)


def test_unplanned_inputs_and_outputs_are_supplied_by_the_caller():
    config = ExecutorchBackendConfig(
        memory_planning_pass=MemoryPlanningPass(
            alloc_graph_input=False, alloc_graph_output=False
        )
    )
    manager = check(*CASES["mlp"], config=config)
    plan = manager.executorch_program.executionPlan[0]
    for index in list(plan.inputs) + list(plan.outputs):
        assert plan.values[index].val.allocationInfo is None


def test_repeated_runs_with_new_inputs():
    module = Lambda(lambda x: torch.tanh(x) * 3)
    manager = to_edge(torch.export.export(module, (randn(5),))).to_executorch()
    plan = manager.executorch_program.executionPlan[0]
    interpreter = PlanInterpreter(plan, manager.constant_data)
    for seed in range(3):
        x = randn(5, seed=seed)
        compare(interpreter.run((x,))[0], torch.tanh(x) * 3, POINTWISE, "output 0")
