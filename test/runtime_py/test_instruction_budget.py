"""The opt-in instruction budget on every Python and command-line surface:
a program whose while_loop never ends (its condition stays true) is stopped
with an error naming the instruction, instead of hanging the caller.
(The C++ Method and Module have their own gtests.)"""

import subprocess

import pytest
import torch

from executorch.exir import to_edge
from executorch.extension.pybindings.portable_lib import (
    _load_for_executorch_from_buffer,
    MAX_INSTRUCTIONS_FOR_UNTRUSTED_PROGRAMS,
)
from executorch.runtime import Runtime

from .test_executor_runner import runner  # noqa: F401 (fixture)

# The runtime's log line (and so the exception message) when it stops.
STOPPED = r"instruction budget of {} exhausted before chain 0 instruction \d+"


class EndlessLoop(torch.nn.Module):
    """Counts up from x while the count is >= 0: forever."""

    def forward(self, x):
        return torch.while_loop(lambda i: (i >= 0).all(), lambda i: (i + 1,), (x,))


class CountTo(torch.nn.Module):
    """Counts up from x to 10: a loop that ends."""

    def forward(self, x):
        return torch.while_loop(lambda i: (i < 10).all(), lambda i: (i + 1,), (x,))


def _pte(model):
    exported = torch.export.export(model, (torch.zeros(1),))
    return to_edge(exported).to_executorch().buffer


@pytest.fixture(scope="module")
def endless():
    return _pte(EndlessLoop())


@pytest.fixture(scope="module")
def count_to_ten():
    return _pte(CountTo())


def test_untrusted_budget_is_the_runtimes_constant():
    assert MAX_INSTRUCTIONS_FOR_UNTRUSTED_PROGRAMS == 1_000_000


def test_portable_lib_keyword_stops_the_loop(endless, count_to_ten):
    module = _load_for_executorch_from_buffer(endless, max_instructions=500)
    for _ in range(2):  # the method stays usable after a stopped run
        with pytest.raises(RuntimeError, match=STOPPED.format(500)) as error:
            module.forward((torch.zeros(1),))
        assert "InvalidState" in str(error.value)
    # A loop that ends runs within the budget and gives eager's result.
    module = _load_for_executorch_from_buffer(
        count_to_ten, max_instructions=MAX_INSTRUCTIONS_FOR_UNTRUSTED_PROGRAMS
    )
    (out,) = module.forward((torch.zeros(1),))
    assert torch.equal(out, CountTo()(torch.zeros(1))[0])


def test_portable_lib_method_budget_can_change(count_to_ten):
    module = _load_for_executorch_from_buffer(count_to_ten)
    method = module._method("forward")
    assert method.max_instructions() == 0
    method.set_max_instructions(5)
    with pytest.raises(RuntimeError, match=STOPPED.format(5)):
        method.call((torch.zeros(1),))
    method.set_max_instructions(0)
    (out,) = method.call((torch.zeros(1),))
    assert out.item() == 10


def test_runtime_keyword_and_method_budget(endless):
    program = Runtime.get().load_program(endless, max_instructions=300)
    method = program.load_method("forward")
    with pytest.raises(RuntimeError, match=STOPPED.format(300)):
        method.execute([torch.zeros(1)])
    method.set_max_instructions(40)
    with pytest.raises(RuntimeError, match=STOPPED.format(40)):
        method.execute([torch.zeros(1)])


def test_executor_runner_flag(runner, endless, tmp_path):  # noqa: F811
    model = tmp_path / "endless.pte"
    model.write_bytes(endless)
    result = subprocess.run(
        [runner, "--model_path", model, "--max_instructions", "1000"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert "failed: InvalidState" in result.stderr
    assert "instruction budget of 1000 exhausted" in result.stderr + result.stdout
    for bad in ("-1", "x", "99999999999999999999999"):
        result = subprocess.run(
            [runner, "--model_path", model, f"--max_instructions={bad}"],
            capture_output=True,
            text=True,
        )
        assert result.returncode == 2  # a bad command line
        assert "--max_instructions must be a non-negative integer" in result.stderr
