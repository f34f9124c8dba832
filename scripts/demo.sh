#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh), exports a real model to a .pte with
# our compiler, runs it with executor_runner, and prints PyTorch eager's
# output for the same input next to it.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${EXECUTORCH_BUILD_DIR:-$repo_root/build}"
model="${1:-cnn}"
out_dir="$build_dir/demo"
python="$repo_root/.venv/bin/python"

bash "$repo_root/scripts/setup.sh"
mkdir -p "$out_dir"

echo "== Exporting model '$model'"
"$python" -m executorch.examples.portable.scripts.export --model_name "$model" --output_dir "$out_dir"

echo "== Running $out_dir/$model.pte with executor_runner (inputs: all ones)"
"$build_dir/examples/executor_runner/executor_runner" \
  --model_path "$out_dir/$model.pte" --num_executions 3 --print_output

echo "== PyTorch eager on the same inputs (all ones)"
"$python" - "$model" <<'PY'
import sys

import torch

from executorch.examples.models import get_model

model, example_inputs = get_model(sys.argv[1])
ones = tuple(torch.ones_like(t) for t in example_inputs)
with torch.no_grad():
    outputs = model(*ones)
if not isinstance(outputs, (tuple, list)):
    outputs = (outputs,)
torch.set_printoptions(precision=6, sci_mode=False)
for i, out in enumerate(outputs):
    print(f"Output {i}: sizes={list(out.shape)} dtype={out.dtype}")
    print(out.flatten())
PY
