#!/usr/bin/env bash
# Installs ONNX Runtime (the reference of benchmarks/cpu_benchmark.py) into a
# virtual environment of its own, .venv-ort, with the torch and ONNX exporter
# packages it needs to convert models: it is never a dependency of ours.
# Prints the path of its Python on success; idempotent.
#
#   EXECUTORCH_ORT_PYTHON=$(bash scripts/setup_ort.sh) \
#       .venv/bin/python benchmarks/cpu_benchmark.py --quick
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$repo_root/.venv-ort"

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" >&2
fi
if ! "$venv/bin/python" -c "import onnxruntime, onnxscript, torch" >/dev/null 2>&1; then
  echo "[setup] installing onnxruntime into $venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check torch==2.13.0 \
    onnxruntime==1.31.1 onnx==1.23.2 onnxscript==0.7.2 >&2
fi
echo "$venv/bin/python"
