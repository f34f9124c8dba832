"""Cross-runs XNNPACK-delegated programs between this SDK and upstream
ExecuTorch: each model is exported with both sides' XnnpackPartitioner, and
each side's program runs on the other side's runtime; outputs are compared
with eager PyTorch.

    python -m executorch.backends.xnnpack.scripts.cross_run \
        --upstream-python /path/to/upstream/venv/bin/python \
        [--image-size 64] [model ...]

Upstream ExecuTorch lives in its own environment (`--upstream-python`, or
EXECUTORCH_UPSTREAM_PYTHON); it gets the exported programs as
`torch.export.save` files and runs in one subprocess, exporting while we
do. Without model names every model in MODELS runs;
test/backends/test_xnnpack_upstream_interop.py runs them all, the ImageNet
models at 64x64.
"""

import argparse
import dataclasses
import functools
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
    # What runs as eager (for a quantized model: the converted model, the
    # quantized reference).
    model: torch.nn.Module
    # Export inputs, then further inputs to run (other sizes for dynamic
    # shapes).
    inputs: List[tuple]
    dynamic_shapes: Optional[tuple] = None


def _example(name: str, image_size: Optional[int] = None) -> Case:
    model, inputs = get_model(name)
    if image_size and inputs[0].shape[-1] == 224:
        # The ImageNet models take any size >= 32; a small one runs cheaply.
        torch.manual_seed(0)
        inputs = (torch.randn(1, 3, image_size, image_size),)
    return Case(model, [inputs])


def _static_int8(name: str, image_size: Optional[int]) -> Case:
    """The example model `name` statically quantized to int8 (per-channel
    weights) by our XNNPACKQuantizer, calibrated on two random inputs."""
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        get_symmetric_quantization_config,
        XNNPACKQuantizer,
    )

    case = _example(name, image_size)
    quantizer = XNNPACKQuantizer().set_global(
        get_symmetric_quantization_config(is_per_channel=True)
    )
    prepared = prepare_pt2e(
        torch.export.export(case.model, case.inputs[0]).module(), quantizer
    )
    generator = torch.Generator().manual_seed(1)
    for _ in range(2):
        prepared(torch.randn(case.inputs[0][0].shape, generator=generator))
    return Case(convert_pt2e(prepared), case.inputs)


def _dynamic_mlp() -> Case:
    torch.manual_seed(0)
    batch = torch.export.Dim("batch", min=1, max=8)
    sizes = (8, 3, 1)
    return Case(
        _DynamicMlp().eval(),
        [(torch.randn(n, 16),) for n in sizes],
        dynamic_shapes=({0: batch},),
    )


_EXAMPLES = [
    "cnn",
    "mobilenet_v2",
    "mobilenet_v3_small",
    "resnet18",
    "transformer_encoder",
]
# name -> Case factory, given the image size (None: the model's own).
MODELS: Dict[str, Callable[[Optional[int]], Case]] = {
    **{name: functools.partial(_example, name) for name in _EXAMPLES},
    "dynamic_mlp": lambda image_size: _dynamic_mlp(),
    "mobilenet_v2_int8": functools.partial(_static_int8, "mobilenet_v2"),
}

# Runs in upstream's environment. argv: a directory, then model names. For
# each name with a <name>.pt2: exports it with upstream's XnnpackPartitioner
# into <name>.upstream.pte. Then, once a line arrives on stdin (our programs are
# written; upstream's slow export overlaps ours), runs <name>.ours.pte on
# upstream's runtime with each input tuple of <name>.in, saving the outputs
# (or the error text) to <name>.ours_on_upstream.out.
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
        if not os.path.exists(path + ".pt2"):
            continue
        ep = torch.export.load(path + ".pt2")
        manager = to_edge_transform_and_lower(
            ep, partitioner=[XnnpackPartitioner()]
        ).to_executorch()
        with open(path + ".upstream.pte", "wb") as f:
            f.write(manager.buffer)
    sys.stdin.readline()
    for name in sys.argv[2:]:
        path = os.path.join(directory, name)
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
    ours_on_upstream: object
    # None when upstream did not export the model.
    upstream_pte: Optional[bytes]
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
    names: Sequence[str],
    upstream_python: str,
    directory: str,
    image_size: Optional[int] = None,
    upstream_exports: Optional[Sequence[str]] = None,
) -> Dict[str, CrossRun]:
    """Cross-runs the models `names` (keys of MODELS), image models at
    `image_size` x `image_size` when given, with files in `directory`.
    Upstream exports the models `upstream_exports` (default: all; its
    export of an ImageNet model takes 10-20 s of CPU)."""
    cases = {name: MODELS[name](image_size) for name in names}
    if upstream_exports is None:
        upstream_exports = names
    exported = {}
    for name, case in cases.items():
        path = os.path.join(directory, name)
        exported[name] = torch.export.export(
            case.model, case.inputs[0], dynamic_shapes=case.dynamic_shapes
        )
        if name in upstream_exports:
            torch.export.save(exported[name], path + ".pt2")
        torch.save(case.inputs, path + ".in")
    upstream = subprocess.Popen(
        [upstream_python, "-c", _UPSTREAM_SCRIPT, directory, *names],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        ours = {}
        for name, ep in exported.items():
            ours[name] = export_ours(ep)
            with open(os.path.join(directory, name) + ".ours.pte", "wb") as f:
                f.write(ours[name])
        _, stderr = upstream.communicate("\n", timeout=1800)
    finally:
        if upstream.poll() is None:
            upstream.kill()
            upstream.wait()
    if upstream.returncode != 0:
        raise RuntimeError(f"upstream ExecuTorch failed:\n{stderr[-4000:]}")
    runs = {}
    for name, case in cases.items():
        path = os.path.join(directory, name)
        upstream_pte = None
        if name in upstream_exports:
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
            upstream_on_ours=(
                None if upstream_pte is None else run_on_ours(upstream_pte, case.inputs)
            ),
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
    parser.add_argument(
        "--image-size",
        type=int,
        help="run the ImageNet models at this size instead of 224x224",
    )
    args = parser.parse_args(argv)
    if not args.upstream_python:
        parser.error("--upstream-python (or EXECUTORCH_UPSTREAM_PYTHON) is needed")
    with tempfile.TemporaryDirectory() as directory:
        runs = cross_run(
            args.models, args.upstream_python, directory, args.image_size
        )
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
