#!/usr/bin/env bash
# Builds everything with AddressSanitizer and UndefinedBehaviorSanitizer in a
# build directory of its own, then runs every C++ test (ctest) and the Python
# suites that drive the runtime (the extension module of this build, loaded
# into a Python with the ASan runtime preloaded; see scripts/sanitize_site).
# Any sanitizer report fails the run: UBSan halts on its first finding, ASan
# on every error it detects.
#
# Usage: scripts/sanitize_test.sh [--build-dir DIR] [--no-python] [PYTEST ARGS...]
#   --build-dir  default build-asan/ next to build/
#   --no-python  only ctest
#   PYTEST ARGS  replace the default Python suites (paths, -k ...)
# It takes long (a full build, then tests a few times slower than usual);
# see README.md ("Sanitizers") for the time it took. Run it niced on a shared
# machine: nice -n 10 scripts/sanitize_test.sh
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="$repo_root/build-asan"
python_tests=1
pytest_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    --no-python) python_tests=0; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) pytest_args+=("$1"); shift ;;
  esac
done
venv="$repo_root/.venv"
# The extension modules of this build go here (not next to the sources, where
# the main build's are), laid out as the package.
ext_root="$build_dir/python/executorch"
log() { printf '[sanitize] %s\n' "$*"; }
start=$SECONDS

if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  log "configuring $build_dir"
  cmake -S "$repo_root" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DEXECUTORCH_SANITIZE=address,undefined \
    -DCMAKE_CXX_FLAGS="-fno-omit-frame-pointer" \
    -DEXECUTORCH_PYTHON_EXTENSION_ROOT="$ext_root" \
    -DPython3_EXECUTABLE="$venv/bin/python" \
    -Dpybind11_DIR="$("$venv/bin/python" -m pybind11 --cmakedir)" >/dev/null
fi
log "building (log: $build_dir/build.log)"
if ! cmake --build "$build_dir" -j2 >"$build_dir/build.log" 2>&1; then
  tail -n 60 "$build_dir/build.log"
  exit 1
fi
log "built in $((SECONDS - start)) s"

# halt_on_error: a UBSan finding is a failure, not a line in a log.
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# allocator_may_return_null: tests check that an impossible allocation
# (new(std::nothrow) of 2^63 bytes) fails cleanly instead of aborting.
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:strict_string_checks=1:check_initialization_order=1"
export EXECUTORCH_BUILD_DIR="$build_dir"
log "ctest"
ctest --test-dir "$build_dir" -j2 --output-on-failure
log "ctest done at $((SECONDS - start)) s"

if [ "$python_tests" = 1 ]; then
  if [ ${#pytest_args[@]} -eq 0 ]; then
    # The suites that load and run programs in this process. Left out:
    # - test_thread_sanitizer.py builds its own ThreadSanitizer tree;
    # - test_installed_app.py builds examples/app, a CMake project of its
    #   own, against `cmake --install` of this build: the installed static
    #   libraries are instrumented and the app is not, so it cannot link
    #   (undefined __asan_*/__ubsan_* symbols). It checks the packaging,
    #   which the sanitizers do not change; the test command runs it.
    pytest_args=(test/runtime_py test/e2e test/dynamic test/backends
                 test/ops/test_kernels_against_eager.py
                 --deselect test/runtime_py/test_thread_sanitizer.py
                 --deselect test/runtime_py/test_installed_app.py -q)
  fi
  # The interpreter is not instrumented, so the ASan runtime has to come
  # first into the process. Python and torch keep memory until exit by
  # design: leak checking stays off there (and in the programs the tests
  # start, which inherit the environment). scripts/sanitize_site is on
  # PYTHONPATH: its sitecustomize makes every interpreter of the run, the
  # tests' own child interpreters too, import this build's extension
  # modules instead of the main build's next to the sources.
  # libstdc++ is preloaded too: ASan's __cxa_throw interceptor looks up the
  # real function when the runtime starts, and an interpreter that loads
  # libstdc++ only later, with the first extension module, would leave it
  # null (ASan aborts on the first C++ exception, "CHECK failed ...
  # real___cxa_throw").
  preload="$(g++ -print-file-name=libasan.so):$(g++ -print-file-name=libstdc++.so)"
  # Reports go to files: pytest captures the stderr of the test that trips
  # one, and it would die with that test's process.
  reports="$build_dir/sanitizer-reports"
  rm -rf "$reports" && mkdir -p "$reports"
  log "pytest ${pytest_args[*]} (sanitizer reports: $reports)"
  cd "$repo_root"
  status=0
  LD_PRELOAD="$preload" \
    ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1:log_path=$reports/asan" \
    UBSAN_OPTIONS="$UBSAN_OPTIONS:log_path=$reports/ubsan" \
    PYTHONPATH="$repo_root/scripts/sanitize_site${PYTHONPATH:+:$PYTHONPATH}" \
    EXECUTORCH_SANITIZE_EXTENSION_ROOT="$ext_root" \
    "$venv/bin/python" -m pytest "${pytest_args[@]}" || status=$?
  if [ -n "$(ls -A "$reports")" ]; then
    head -n 40 "$reports"/*
    log "sanitizer reports in $reports"
    exit 1
  fi
  if [ "$status" != 0 ]; then
    log "pytest failed (exit $status)"
    exit "$status"
  fi
fi
log "clean, $((SECONDS - start)) s in all"
