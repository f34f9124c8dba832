#!/usr/bin/env bash
# Installs upstream ExecuTorch (the reference for interop tests and
# benchmarks) into its own virtual environment, .venv-upstream. It has the
# same import name as this project, so it never goes into .venv. Prints the
# path of its Python on success; idempotent.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$repo_root/.venv-upstream"
upstream_version="1.5.1"

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" >&2
fi
if ! "$venv/bin/python" -c "import executorch.exir" >/dev/null 2>&1; then
  echo "[setup] installing upstream executorch==$upstream_version into $venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check \
    torch==2.13.0 "executorch==$upstream_version" >&2
fi
echo "$venv/bin/python"
