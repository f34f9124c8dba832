#!/usr/bin/env bash
# Builds the shared-Program thread test (extension/module/
# shared_program_thread_test.cpp) and the thread pool's tests
# (extension/threadpool) and what they link with ThreadSanitizer, in a build
# directory of its own, and runs them. Any data race fails the run.
# Usage: scripts/tsan_test.sh [build dir, default build-tsan]
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${1:-$repo_root/build-tsan}"

cmake -S "$repo_root" -B "$build_dir" -DEXECUTORCH_SANITIZE=thread \
  -DEXECUTORCH_BUILD_PYBIND=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build_dir" --target extension_module_thread_test \
  extension_threadpool_test -j2
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
"$build_dir/extension/module/extension_module_thread_test"
# ThreadSanitizer cannot follow a child that starts threads after a
# multi-threaded fork (it stops it), so the fork tests run without it.
"$build_dir/extension/threadpool/extension_threadpool_test" \
  --gtest_filter='-*Fork*'
