#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh), then runs every test: the C++
# GoogleTest suites through ctest and the Python suites through pytest.
# Extra arguments go to pytest (e.g. `scripts/test.sh -k linear`).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${EXECUTORCH_BUILD_DIR:-$repo_root/build}"
export EXECUTORCH_BUILD_DIR="$build_dir"

bash "$repo_root/scripts/setup.sh"

# Interop tests run against upstream ExecuTorch in its own environment; they
# skip (with the reason) when it cannot be installed.
if [ -z "${EXECUTORCH_UPSTREAM_PYTHON:-}" ]; then
  if upstream_python="$(bash "$repo_root/scripts/setup_upstream.sh")"; then
    export EXECUTORCH_UPSTREAM_PYTHON="$upstream_python"
  else
    echo "[test] upstream executorch unavailable: interop tests will skip"
  fi
fi

# Hugging Face's optimum-executorch in a directory of its own (it pins its
# own transformers); its test skips when it cannot be installed.
if [ -z "${EXECUTORCH_OPTIMUM_SITE:-}" ]; then
  if optimum_site="$(bash "$repo_root/scripts/setup_optimum.sh")"; then
    export EXECUTORCH_OPTIMUM_SITE="$optimum_site"
  else
    echo "[test] optimum-executorch unavailable: its test will skip"
  fi
fi

echo "== C++ tests (ctest)"
ctest --test-dir "$build_dir" -j "$(nproc)" --output-on-failure

echo "== Python tests (pytest)"
cd "$repo_root"
"$repo_root/.venv/bin/python" -m pytest -q "$@"
