"""Writes the `.pte` files of a fixed set of programs, or compares two such
sets byte for byte: proof that a compiler refactoring changed no output.

    python scripts/pte_bytes.py write /tmp/before      # on the old commit
    python scripts/pte_bytes.py write /tmp/after       # on the new one
    python scripts/pte_bytes.py compare /tmp/before /tmp/after

The programs cover every stage of the pipelines: model-zoo networks,
control flow (cond, map, while_loop, nested), mutable buffers, dynamic
shapes, multiple and constant methods, user passes, an XNNPACK partition,
torchao's weight-only 4-bit linear (fused at to_edge) and a PT2E-quantized
model. Weights and inputs come from fixed seeds, so a run is deterministic.
"""

import argparse
import filecmp
import os
import sys
from typing import Callable, Dict

import torch
from torch._higher_order_ops.map import map as hop_map
from torch.export import Dim, export
from torch.fx.passes.infra.pass_base import PassResult

from executorch.examples.models import get_model
from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.exir import to_edge_transform_and_lower
from executorch.exir.dialects._ops import ops as exir_ops


def _zoo(name: str):
    def build():
        model, inputs = get_model(name)
        return to_edge(export(model, inputs)).to_executorch()

    return build


class _Nested(torch.nn.Module):
    def forward(self, xs, y):
        def row(r, y):
            return torch.cond(
                r.sum() > 0, lambda r, y: r * y, lambda r, y: r - y, (r, y)
            )

        mapped = hop_map(row, xs, y)

        def grow(t):
            return torch.while_loop(
                lambda t: t.abs().sum() < 100, lambda t: (t * 2 + 1,), (t,)
            )

        (out,) = torch.cond(
            mapped.mean() > 0, lambda t: grow(t), lambda t: (t.neg(),), (mapped,)
        )
        return out.view(-1).reshape(4, 3)


def _control_flow():
    inputs = (torch.randn(4, 3), torch.randn(3))
    return to_edge(export(_Nested(), inputs)).to_executorch()


class _Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(2))

    def forward(self, x):
        self.count.add_(1)
        return x.reshape(-1, 2) + self.count


def _mutable_buffer_dynamic_shape():
    program = export(
        _Counter(), (torch.randn(4, 2),), dynamic_shapes=({0: Dim("n", max=16)},)
    )
    return to_edge(program).to_executorch()


def _two_methods_and_user_passes():
    def relu_to_abs(graph_module):
        for node in graph_module.graph.nodes:
            if node.target == exir_ops.edge.aten.relu.default:
                node.target = exir_ops.edge.aten.abs.default
        graph_module.recompile()
        return PassResult(graph_module, True)

    torch.manual_seed(0)
    linear = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    programs = {
        "forward": export(linear, (torch.randn(2, 4),)),
        "double": export(torch.nn.Sequential(linear, linear), (torch.randn(3, 4),)),
    }
    edge = to_edge(programs, constant_methods={"size": 4, "scale": torch.ones(2)})
    return edge.transform([relu_to_abs]).to_executorch(
        ExecutorchBackendConfig(passes=[relu_to_abs], emit_stacktrace=False)
    )


def _xnnpack():
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
        XnnpackPartitioner,
    )

    model, inputs = get_model("cnn")
    return to_edge_transform_and_lower(
        export(model, inputs), partitioner=[XnnpackPartitioner()]
    ).to_executorch()


def _torchao_weight_only():
    from torchao.quantization import IntxWeightOnlyConfig, quantize_
    from torchao.quantization.granularity import PerGroup

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU()).eval()
    quantize_(
        model, IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(32))
    )
    return to_edge(export(model, (torch.randn(2, 64),))).to_executorch()


def _pt2e_static():
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )

    model, inputs = get_model("mlp")
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config())
    prepared = prepare_pt2e(export(model, inputs).module(), quantizer)
    prepared(*inputs)
    converted = convert_pt2e(prepared)
    return to_edge(export(converted, inputs)).to_executorch()


PROGRAMS: Dict[str, Callable] = {
    "mlp": _zoo("mlp"),
    "cnn": _zoo("cnn"),
    "softmax": _zoo("softmax"),
    "mobilenet_v2": _zoo("mobilenet_v2"),
    "transformer_encoder": _zoo("transformer_encoder"),
    "control_flow": _control_flow,
    "mutable_buffer_dynamic_shape": _mutable_buffer_dynamic_shape,
    "two_methods_and_user_passes": _two_methods_and_user_passes,
    "xnnpack": _xnnpack,
    "torchao_weight_only": _torchao_weight_only,
    "pt2e_static": _pt2e_static,
}


def write(directory: str) -> None:
    os.makedirs(directory, exist_ok=True)
    for name, build in PROGRAMS.items():
        build().save(os.path.join(directory, f"{name}.pte"))
        print(f"wrote {name}.pte")


def compare(before: str, after: str) -> int:
    differing = []
    for name in PROGRAMS:
        file = f"{name}.pte"
        same = filecmp.cmp(
            os.path.join(before, file), os.path.join(after, file), shallow=False
        )
        print(f"{'same' if same else 'DIFFERENT'}: {file}")
        if not same:
            differing.append(file)
    print(f"{len(PROGRAMS) - len(differing)} of {len(PROGRAMS)} programs identical")
    return 1 if differing else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("write").add_argument("directory")
    compare_parser = commands.add_parser("compare")
    compare_parser.add_argument("before")
    compare_parser.add_argument("after")
    args = parser.parse_args()
    if args.command == "write":
        write(args.directory)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
