"""Exports an example model to a `.pte` file with the portable kernels.

    python -m executorch.examples.portable.scripts.export --model_name cnn \
        --output_dir out/
"""

import argparse
import os

import torch

from executorch.examples.models import MODELS, get_model
from executorch.exir import ExecutorchBackendConfig, to_edge


def export_to_pte(model_name: str, output_dir: str, segment_alignment: int) -> str:
    """Exports `model_name` and returns the path of the written `.pte`."""
    model, example_inputs = get_model(model_name)
    exported = torch.export.export(model, example_inputs)
    program = to_edge(exported).to_executorch(
        ExecutorchBackendConfig(segment_alignment=segment_alignment)
    )
    os.makedirs(output_dir, exist_ok=True)
    path = os.path.join(output_dir, f"{model_name}.pte")
    program.save(path)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-m", "--model_name", required=True, choices=sorted(MODELS))
    parser.add_argument("-o", "--output_dir", default=".")
    parser.add_argument(
        "--segment_alignment",
        type=int,
        default=128,
        help="alignment of data segments in the file (a power of two)",
    )
    args = parser.parse_args()
    path = export_to_pte(args.model_name, args.output_dir, args.segment_alignment)
    print(f"Saved {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
