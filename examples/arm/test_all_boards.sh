#!/usr/bin/env bash
# The Cortex-M firmware tests on every board (the normal suite builds only
# the first; each board costs one build of the core and kernels).
#
#   bash examples/arm/test_all_boards.sh [pytest arguments]
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo_root"
EXECUTORCH_ARM_ALL_BOARDS=1 exec .venv/bin/python -m pytest -q \
  test/arm/test_cortex_m.py "$@"
