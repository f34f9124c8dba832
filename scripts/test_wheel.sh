#!/usr/bin/env bash
# Builds the wheel (`pip wheel .`), installs it into a fresh virtual
# environment outside the checkout, and checks it from another directory as
# a user would (scripts/wheel_check.py): export, executorch.runtime, the
# pybindings, the shipped executor_runner, and examples/app built against the
# wheel's CMake package.
#
# Usage: scripts/test_wheel.sh [--reuse-build DIR] [-C<setting>=<value> ...]
#   --reuse-build DIR  build in an existing CMake build directory (the one
#                      scripts/setup.sh made) so only the install step runs;
#                      without it the wheel is built from scratch.
#   -C...              passed to the build backend, e.g.
#                      -Ccmake.define.EXECUTORCH_BUILD_XNNPACK=OFF
# Prints elapsed seconds per step; exits non-zero on the first failure.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dev_python="$repo_root/.venv/bin/python"
reuse_build=""
backend_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --reuse-build) reuse_build="$(cd "$2" && pwd)"; shift 2 ;;
    # pip's long spelling: older pips (23.0) lack the -C abbreviation.
    -C*) backend_args+=("--config-settings=${1#-C}"); shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "test_wheel.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

start=$SECONDS
log() { printf '[wheel %4ds] %s\n' "$((SECONDS - start))" "$*"; }

work="$(mktemp -d "${TMPDIR:-/tmp}/executorch-wheel.XXXXXX")"
trap 'rm -rf "$work"' EXIT

if [ -n "$reuse_build" ]; then
  # The developer environment has the build backend; the build directory's
  # generator and cached options stay as they are (tests included), so
  # nothing recompiles.
  log "building the wheel in $reuse_build"
  cached() { sed -n "s/^$1:[A-Z]*=//p" "$reuse_build/CMakeCache.txt"; }
  CMAKE_GENERATOR="$(cached CMAKE_GENERATOR)" \
  "$dev_python" -m pip wheel -q --disable-pip-version-check --no-deps \
    --no-build-isolation -w "$work/dist" "--config-settings=build-dir=$reuse_build" \
    "--config-settings=cmake.define.CMAKE_MAKE_PROGRAM=$(cached CMAKE_MAKE_PROGRAM)" \
    --config-settings=cmake.define.EXECUTORCH_BUILD_TESTS=ON \
    ${backend_args[@]+"${backend_args[@]}"} "$repo_root"
else
  log "building the wheel from scratch"
  python3 -m pip wheel -q --disable-pip-version-check --no-deps -w "$work/dist" \
    ${backend_args[@]+"${backend_args[@]}"} "$repo_root"
fi
wheel="$(ls "$work"/dist/executorch-*.whl)"
log "built $(basename "$wheel") ($(du -h "$wheel" | cut -f1))"

python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check "$wheel"
log "installed into a fresh environment"

prefix="$("$work/venv/bin/python" -c \
  'import executorch, os; print(os.path.dirname(executorch.__file__))')"
mkdir -p "$work/run"
cmake -S "$repo_root/examples/app" -B "$work/app" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/app" -j "$(nproc)" >/dev/null
log "built examples/app against $prefix"

cd "$work/run"
PATH="$work/venv/bin:$PATH" "$work/venv/bin/python" \
  "$repo_root/scripts/wheel_check.py" "$repo_root" "$work/app/executorch_app"
log "done"
