"""Cross-runs XNNPACK-delegated programs between this SDK and upstream
ExecuTorch: each model is exported with both sides' XnnpackPartitioner, and
each side's program runs on the other side's runtime; outputs are compared
with eager PyTorch.

    python -m executorch.backends.xnnpack.scripts.cross_run \
        --upstream-python /path/to/upstream/venv/bin/python [model ...]

Upstream ExecuTorch lives in its own environment (`--upstream-python`, or
EXECUTORCH_UPSTREAM_PYTHON); it gets the exported programs as
`torch.export.save` files and runs in one subprocess. Without model names
every model in MODELS runs. test/backends/test_xnnpack_upstream_interop.py
runs a few of them.
"""

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
import textwrap
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import torch

from executorch.examples.models import get_model


class _DynamicMlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8)
        )

    def forward(self, x):
        return torch.tanh(self.net(x))


@dataclasses.dataclass
class Case:
    model: torch.nn.Module
    # Export inputs, then further inputs to run (other sizes for dynamic
    # shapes).
    inputs: List[tuple]
    dynamic_shapes: Optional[tuple] = None


def _example(name: str) -> Case:
    model, inputs = get_model(name)
    return Case(model, [inputs])


def _dynamic_mlp() -> Case:
    torch.manual_seed(0)
    batch = torch.export.Dim("batch", min=1, max=8)
    sizes = (8, 3, 1)
    return Case(
        _DynamicMlp().eval(),
        [(torch.randn(n, 16),) for n in sizes],
        dynamic_shapes=({0: batch},),
    )


MODELS: Dict[str, Callable[[], Case]] = {
    "cnn": lambda: _example("cnn"),
    "mobilenet_v2": lambda: _example("mobilenet_v2"),
    "mobilenet_v3_small": lambda: _example("mobilenet_v3_small"),
    "resnet18": lambda: _example("resnet18"),
    "transformer_encoder": lambda: _example("transformer_encoder"),
    "dynamic_mlp": _dynamic_mlp,
}

# Runs in upstream's environment. argv: a directory, then model names. For
# each name: exports <name>.pt2 with upstream's XnnpackPartitioner into
# <name>.upstream.pte, and runs <name>.ours.pte on upstream's runtime with
# each input tuple of <name>.in, saving the outputs (or the error text) to
# <name>.ours_on_upstream.out.
_UPSTREAM_SCRIPT = textwrap.dedent("""
    import os, sys, torch
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
        XnnpackPartitioner,
    )
    from executorch.exir import to_edge_transform_and_lower
    from executorch.extension.pybindings.portable_lib import _load_for_executorch
    directory = sys.argv[1]
    for name in sys.argv[2:]:
        path = os.path.join(directory, name)
        ep = torch.export.load(path + ".pt2")
        manager = to_edge_transform_and_lower(
            ep, partitioner=[XnnpackPartitioner()]
        ).to_executorch()
        with open(path + ".upstream.pte", "wb") as f:
            f.write(manager.buffer)
        try:
            module = _load_for_executorch(path + ".ours.pte")
            result = [
                list(module.run_method("forward", tuple(inputs)))
                for inputs in torch.load(path + ".in")
            ]
        except Exception as error:
            result = repr(error)
        torch.save(result, path + ".ours_on_upstream.out")
    """)


@dataclasses.dataclass
class CrossRun:
    """One model's programs and outputs. Outputs are one list per input
    tuple, or the error text when the program failed to load or run."""

    expected: List[List[torch.Tensor]]
    ours_pte: bytes
    upstream_pte: bytes
    ours_on_upstream: object
    upstream_on_ours: object


def export_ours(ep: torch.export.ExportedProgram) -> bytes:
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
        XnnpackPartitioner,
    )
    from executorch.exir import to_edge_transform_and_lower

    lowered = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])
    return lowered.to_executorch().buffer


def run_on_ours(pte: bytes, inputs: Sequence[tuple]):
    from executorch.extension.pybindings.portable_lib import (
        _load_for_executorch_from_buffer,
    )

    try:
        module = _load_for_executorch_from_buffer(pte)
        return [list(module.run_method("forward", tuple(x))) for x in inputs]
    except Exception as error:  # reported, not raised: the caller compares
        return repr(error)


def cross_run(
    names: Sequence[str], upstream_python: str, directory: str
) -> Dict[str, CrossRun]:
    cases = {name: MODELS[name]() for name in names}
    ours = {}
    for name, case in cases.items():
        path = os.path.join(directory, name)
        ep = torch.export.export(
            case.model, case.inputs[0], dynamic_shapes=case.dynamic_shapes
        )
        torch.export.save(ep, path + ".pt2")
        torch.save(case.inputs, path + ".in")
        ours[name] = export_ours(ep)
        with open(path + ".ours.pte", "wb") as f:
            f.write(ours[name])
    result = subprocess.run(
        [upstream_python, "-c", _UPSTREAM_SCRIPT, directory, *names],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if result.returncode != 0:
        raise RuntimeError(f"upstream ExecuTorch failed:\n{result.stderr[-4000:]}")
    runs = {}
    for name, case in cases.items():
        path = os.path.join(directory, name)
        with open(path + ".upstream.pte", "rb") as f:
            upstream_pte = f.read()
        with torch.no_grad():
            expected = [
                torch.utils._pytree.tree_leaves(case.model(*x)) for x in case.inputs
            ]
        runs[name] = CrossRun(
            expected=expected,
            ours_pte=ours[name],
            upstream_pte=upstream_pte,
            ours_on_upstream=torch.load(path + ".ours_on_upstream.out"),
            upstream_on_ours=run_on_ours(upstream_pte, case.inputs),
        )
    return runs


def max_error(got, expected) -> float:
    """The largest absolute difference over all outputs; raises with the
    error text when `got` is one."""
    if isinstance(got, str):
        raise RuntimeError(got)
    return max(
        (g - e).abs().max().item()
        for got_outputs, want in zip(got, expected)
        for g, e in zip(got_outputs, want)
    )


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", default=sorted(MODELS))
    parser.add_argument(
        "--upstream-python", default=os.environ.get("EXECUTORCH_UPSTREAM_PYTHON")
    )
    args = parser.parse_args(argv)
    if not args.upstream_python:
        parser.error("--upstream-python (or EXECUTORCH_UPSTREAM_PYTHON) is needed")
    with tempfile.TemporaryDirectory() as directory:
        runs = cross_run(args.models, args.upstream_python, directory)
    failed = False
    header = ("model", "ours->upstream", "upstream->ours", "size ratio")
    print(f"{header[0]:<22}{header[1]:>16}{header[2]:>16}{header[3]:>12}")
    for name, run in runs.items():
        cells = []
        for got in (run.ours_on_upstream, run.upstream_on_ours):
            try:
                cells.append(f"{max_error(got, run.expected):16.2e}")
            except RuntimeError as error:
                failed = True
                cells.append(f"{'FAILED':>16}")
                print(f"{name}: {error}", file=sys.stderr)
        ratio = len(run.ours_pte) / len(run.upstream_pte)
        print(f"{name:<22}{cells[0]}{cells[1]}{ratio:12.3f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
