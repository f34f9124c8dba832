"""remove_unused_constants: parameters, buffers and constants no node reads
leave the program (PT2E leaves its fp32 weights behind), mutated buffers
and read constants stay, and the input program is not modified."""

import torch

from executorch.exir import to_edge
from executorch.exir.passes.remove_unused_constants import remove_unused_constants


class Leftovers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.used = torch.nn.Parameter(torch.randn(4))
        self.unused = torch.nn.Parameter(torch.randn(1000))
        self.register_buffer("count", torch.zeros(1))
        self.register_buffer("unused_buffer", torch.ones(500))

    def forward(self, x):
        self.count.add_(1)
        return x * self.used


def test_unread_constants_are_dropped_and_the_input_kept():
    exported = torch.export.export(Leftovers(), (torch.randn(4),))
    before = [s.target for s in exported.graph_signature.input_specs]
    pruned = remove_unused_constants(exported)
    kept = [s.target for s in pruned.graph_signature.input_specs]
    assert kept == ["used", "count", None]
    assert set(pruned.state_dict) == {"used", "count"}
    assert [s.target for s in exported.graph_signature.input_specs] == before
    assert "unused" in exported.state_dict
    x = torch.randn(4)
    torch.testing.assert_close(pruned.module()(x), x * exported.state_dict["used"])


def test_program_size_excludes_unread_weights():
    exported = torch.export.export(Leftovers(), (torch.randn(4),))
    size = len(to_edge(exported).to_executorch().buffer)
    assert size < 1000 * 4  # the 1000 unused floats are not stored
