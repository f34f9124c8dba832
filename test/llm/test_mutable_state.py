"""Mutable buffers (state) through export and our runtime: a buffer starts at
its eager value (stored once in the program's mutable data segment), keeps
what each call leaves, can be reset, and can be shared by two methods (a
prefill and a decode method sharing a KV cache); a program whose stored
state does not fit its tensor is refused at load with a message saying so.
"""

import copy

import pytest
import torch

from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.exir._serialize._program import (
    deserialize_pte_binary,
    serialize_pte_binary,
)
from executorch.exir.passes import MemoryPlanningPass

portable_lib = pytest.importorskip("executorch.extension.pybindings.portable_lib")


class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.tensor([5, 50], dtype=torch.int64))
        self.register_buffer("scale", torch.tensor([1.5, -2.0, 0.25, 3.0]))

    def forward(self, step):
        self.count.add_(step)
        self.scale.mul_(2.0)
        return self.count * 10, self.scale + 0


def export_counter():
    example = (torch.tensor([1]),)
    return to_edge(torch.export.export(Counter(), example)).to_executorch()


def eager_sequence(steps):
    model = Counter()
    return [[t.clone() for t in model(torch.tensor([s]))] for s in steps]


def test_counter_starts_at_its_eager_value_and_persists():
    program = export_counter()
    module = portable_lib._load_for_executorch_from_buffer(program.buffer)
    steps = [1, 2, 3]
    got = [module.forward([torch.tensor([s])]) for s in steps]
    for (count, scale), (want_count, want_scale) in zip(got, eager_sequence(steps)):
        assert torch.equal(count, want_count)
        assert torch.equal(scale, want_scale)


def test_reset_puts_the_initial_values_back():
    program = export_counter()
    module = portable_lib._load_for_executorch_from_buffer(program.buffer)
    first = [module.forward([torch.tensor([s])]) for s in (1, 2)]
    module.reset_mutable_buffers()
    again = [module.forward([torch.tensor([s])]) for s in (1, 2)]
    for a, b in zip(first, again):
        assert all(torch.equal(x, y) for x, y in zip(a, b))


def test_state_is_stored_once_in_the_mutable_segment():
    pte = deserialize_pte_binary(export_counter().buffer)
    (state,) = pte.program.mutableDataSegments
    blob = pte.segments[state.segmentIndex]
    # Entry 0 is the reserved empty one; then the two buffers' bytes.
    assert len(state.offsets) == 3
    values = {bytes(blob[o : o + 16]) for o in state.offsets[1:]}
    assert Counter().count.numpy().tobytes() in values
    assert Counter().scale.numpy().tobytes() in values


def test_programs_without_state_have_no_mutable_segment():
    model = torch.nn.Linear(3, 2)
    program = to_edge(torch.export.export(model, (torch.ones(1, 3),))).to_executorch()
    pte = deserialize_pte_binary(program.buffer)
    assert not pte.program.mutableDataSegments
    assert len(pte.segments) == 1  # the constant segment only


def _with_state_tensor(buffer: bytes, dtype_code: int, edit) -> bytes:
    """The .pte `buffer` rebuilt with `edit` applied to the state tensor of
    scalar type `dtype_code`; the stored state is unchanged."""
    pte = deserialize_pte_binary(buffer)
    program = copy.deepcopy(pte.program)
    tensor = next(
        v.val
        for v in program.executionPlan[0].values
        if getattr(v.val, "allocationInfo", None) is not None
        and v.val.dataBufferIdx > 0
        and v.val.scalarType == dtype_code
    )
    edit(tensor)
    (state,) = program.mutableDataSegments
    blob = pte.segments[state.segmentIndex]
    ends = list(state.offsets[1:]) + [len(blob)]
    mutable = [b""] + [blob[a:b] for a, b in zip(state.offsets, ends)][1:]
    program.mutableDataSegments = []
    return serialize_pte_binary(program, pte.constant_data, mutable_data=mutable)


LONG, FLOAT, DOUBLE = 4, 6, 7


@pytest.mark.parametrize(
    "dtype_code,edit",
    [
        # `scale` is the last entry: checked against the segment's end.
        (FLOAT, lambda t: setattr(t, "scalarType", DOUBLE)),
        # `count` comes first: checked against where the next entry starts.
        (LONG, lambda t: setattr(t, "sizes", [4])),
    ],
    ids=["dtype", "size"],
)
def test_state_that_does_not_fit_is_refused_at_load(dtype_code, edit):
    buffer = export_counter().buffer
    # Rebuilt unchanged, the program loads and runs from its stored state.
    intact = _with_state_tensor(buffer, dtype_code, lambda t: None)
    module = portable_lib._load_for_executorch_from_buffer(intact)
    assert torch.equal(module.forward([torch.tensor([1])])[0], torch.tensor([60, 510]))
    bad = portable_lib._load_for_executorch_from_buffer(
        _with_state_tensor(buffer, dtype_code, edit)
    )
    with pytest.raises(RuntimeError, match="initial state of a mutable tensor"):
        bad.forward([torch.tensor([1])])


class TinyCache(torch.nn.Module):
    """Two entry points over one cache: `prefill` writes two rows, `decode`
    one, at the given positions; both read the whole cache."""

    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.full((6, 2), 0.5))

    def prefill(self, rows, positions):
        self.cache.index_copy_(0, positions, rows)
        return self.cache.sum(0)

    def decode(self, row, position):
        self.cache.index_copy_(0, position, row)
        return self.cache.sum(0)


def _entry_point(model, name, example):
    """`model.<name>` exported as a method (the model is shared)."""

    class Entry(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, *args):
            return getattr(self.model, name)(*args)

    return torch.export.export(Entry(), example)


def test_two_methods_share_a_state_buffer():
    model = TinyCache()
    programs = {
        "prefill": _entry_point(model, "prefill", (torch.ones(2, 2), torch.tensor([0, 1]))),
        "decode": _entry_point(model, "decode", (torch.ones(1, 2), torch.tensor([3]))),
    }
    planning = MemoryPlanningPass(share_mutable_buffers=True)
    program = to_edge(programs).to_executorch(
        ExecutorchBackendConfig(memory_planning_pass=planning)
    )
    module = portable_lib._load_for_executorch_from_buffer(
        program.buffer, share_memory_arenas=True
    )
    eager = TinyCache()
    calls = [
        ("prefill", (torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([0, 1]))),
        ("decode", (torch.tensor([[5.0, 6.0]]), torch.tensor([2]))),
        ("decode", (torch.tensor([[7.0, 8.0]]), torch.tensor([3]))),
        ("prefill", (torch.tensor([[9.0, 10.0], [11.0, 12.0]]), torch.tensor([4, 5]))),
    ]
    for name, args in calls:
        (got,) = module.run_method(name, list(args))
        assert torch.equal(got, getattr(eager, name)(*args)), name
    # Without sharing, each method keeps a cache of its own.
    separate = portable_lib._load_for_executorch_from_buffer(program.buffer)
    separate.run_method("prefill", [torch.ones(2, 2), torch.tensor([0, 1])])
    (got,) = separate.run_method("decode", [torch.zeros(1, 2), torch.tensor([5])])
    assert torch.equal(got, torch.full((2,), 0.5 * 5))
