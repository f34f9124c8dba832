"""Exports an example model to a `.pte` file, with the portable kernels or
lowered to the XNNPACK delegate.

    python -m executorch.examples.portable.scripts.export --model_name cnn \
        --output_dir out/
    python -m executorch.examples.portable.scripts.export -m mobilenet_v2 \
        --delegate --output_dir out/      # writes mobilenet_v2_xnnpack_fp32.pte
"""

import argparse
import os

import torch

from executorch.examples.models import MODELS, get_model
from executorch.exir import (
    ExecutorchBackendConfig,
    to_edge,
    to_edge_transform_and_lower,
)
from executorch.extension.progress import ProgressBar


def export_to_pte(
    model_name: str,
    output_dir: str,
    segment_alignment: int,
    xnnpack: bool = False,
    quiet: bool = False,
) -> str:
    """Exports `model_name` and returns the path of the written `.pte`. With
    `xnnpack`, what XnnpackPartitioner accepts is delegated to XNNPACK and
    the partition report is printed. A progress bar names the stage under
    way (on a terminal, unless `quiet`)."""
    with ProgressBar(4, f"export {model_name}", quiet) as bar:
        bar.begin("model")
        model, example_inputs = get_model(model_name)
        bar.begin("torch.export")
        exported = torch.export.export(model, example_inputs)
        bar.step()
        if xnnpack:
            # Imported here so that a portable-only export does not need the
            # backend's Python package.
            from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
                XnnpackPartitioner,
            )

            bar.begin("to_edge_transform_and_lower (XNNPACK)")
            partitioner = XnnpackPartitioner()
            edge = to_edge_transform_and_lower(exported, partitioner=[partitioner])
            bar.write(partitioner.report())
            name = f"{model_name}_xnnpack_fp32.pte"
        else:
            bar.begin("to_edge")
            edge = to_edge(exported)
            name = f"{model_name}.pte"
        bar.step()
        bar.begin("to_executorch")
        program = edge.to_executorch(
            ExecutorchBackendConfig(segment_alignment=segment_alignment)
        )
        bar.step()
        bar.begin("save")
        os.makedirs(output_dir, exist_ok=True)
        path = os.path.join(output_dir, name)
        program.save(path)
        bar.step()
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-m", "--model_name", required=True, choices=sorted(MODELS))
    parser.add_argument("-o", "--output_dir", default=".")
    parser.add_argument(
        "-d",
        "--delegate",
        action="store_true",
        help="lower what XNNPACK supports to the XNNPACK delegate",
    )
    parser.add_argument(
        "--segment_alignment",
        type=int,
        default=128,
        help="alignment of data segments in the file (a power of two)",
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no progress bar"
    )
    args = parser.parse_args(argv)
    path = export_to_pte(
        args.model_name,
        args.output_dir,
        args.segment_alignment,
        args.delegate,
        quiet=args.quiet,
    )
    print(f"Saved {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
