#!/usr/bin/env bash
# Builds the libFuzzer targets with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer in a build directory of their own, and runs
# each for a time budget, one after the other. Inputs that crash, trip a
# sanitizer or run longer than 10 s are written to
# test/fuzz/regressions/<target>/ (replayed by ctest from then on) and make
# the script fail.
#
# Usage: test/fuzz/run_fuzzers.sh [--time SECONDS] [--runs N] [--quiet]
#                                 [--build-dir DIR] [--log-dir DIR] [TARGET...]
#   --time     seconds per target (default 60)
#   --runs     stop a target after N executions instead (whichever first)
#   --quiet    no progress bar (there is none when stderr is not a terminal)
#   --log-dir  where fuzz_<target>.log goes (default the build directory)
#   TARGET     program, xnnpack_blob, extended_header, data_loader (default all)
# Long campaigns: run with `nice -n 19` on a quiet machine; see README.md.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
fuzz_dir="$repo_root/test/fuzz"
build_dir="$repo_root/build-fuzz"
log_dir=""
seconds=60
runs=-1
quiet=""
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --time) seconds="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --log-dir) log_dir="$2"; shift 2 ;;
    --quiet) quiet=1; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done

clangxx="$(command -v clang++ || command -v clang++-14 || true)"
if [ -z "$clangxx" ]; then
  echo "[fuzz] clang++ not found (scripts/setup.sh installs clang)" >&2
  exit 1
fi

if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  echo "[fuzz] configuring $build_dir with $clangxx"
  cmake -S "$repo_root" -B "$build_dir" -DCMAKE_CXX_COMPILER="$clangxx" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DEXECUTORCH_SANITIZE=address,undefined,fuzzer-no-link \
    -DCMAKE_CXX_FLAGS="-fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
    -DEXECUTORCH_BUILD_FUZZERS=ON -DEXECUTORCH_BUILD_TESTS=OFF \
    -DEXECUTORCH_BUILD_PYBIND=OFF -DPython3_EXECUTABLE="$repo_root/.venv/bin/python" \
    >/dev/null
fi
if [ ${#targets[@]} -eq 0 ]; then
  targets=(program extended_header data_loader)
  # Only when the build found XNNPACK. grep reads the whole list: an early
  # exit (-q) would break make's pipe, which pipefail reads as a failure.
  if cmake --build "$build_dir" --target help | grep " fuzz_xnnpack_blob$" >/dev/null; then
    targets+=(xnnpack_blob)
  fi
fi
echo "[fuzz] building ${targets[*]} (log: $build_dir/build.log)"
if ! cmake --build "$build_dir" -j2 $(printf -- '--target fuzz_%s ' "${targets[@]}") \
    >"$build_dir/build.log" 2>&1; then
  tail -n 40 "$build_dir/build.log"
  exit 1
fi

# symbolize=0: a report is printed at once, as addresses. Symbolizing it in
# the fuzzer takes seconds (minutes on a loaded machine), and libFuzzer's
# -timeout alarm fires meanwhile: the report became a "timeout" artifact and
# the process hung in the alarm handler. A failing input is replayed below,
# symbolized and without a time limit, for a readable report.
sanitizer_options="detect_leaks=1:allocator_may_return_null=1"
export ASAN_OPTIONS="$sanitizer_options:symbolize=0"
export UBSAN_OPTIONS="print_stacktrace=1:symbolize=0"
# A bar over a target's time budget on a terminal (tqdm's command line, fed
# the seconds elapsed while the fuzzer runs).
show_progress() {
  local pid="$1" label="$2" started=$SECONDS
  if [ -n "$quiet" ] || [ ! -t 2 ] || [ ! -x "$repo_root/.venv/bin/python" ]; then
    return
  fi
  while kill -0 "$pid" 2>/dev/null; do
    echo $((SECONDS - started))
    sleep 2
  done | "$repo_root/.venv/bin/python" -m tqdm --total "$seconds" --update_to \
    --desc "$label" --unit s --leave False >/dev/null
}

status=0
for target in "${targets[@]}"; do
  corpus="$build_dir/corpus/$target"
  mkdir -p "$corpus" "$fuzz_dir/regressions/$target"
  log="${log_dir:-$build_dir}/fuzz_$target.log"
  echo "[fuzz] $target: ${seconds}s (runs $runs), log $log"
  # The working corpus grows in the build directory; the seeds stay as
  # committed. -timeout: an input running over 10 s is a failure.
  "$build_dir/test/fuzz/fuzz_$target" "$corpus" "$fuzz_dir/corpus/$target" \
    -dict="$fuzz_dir/program.dict" -max_total_time="$seconds" \
    -runs="$runs" -timeout=10 -rss_limit_mb=2560 -max_len=65536 \
    -artifact_prefix="$fuzz_dir/regressions/$target/" -print_final_stats=1 \
    >"$log" 2>&1 &
  fuzzer=$!
  show_progress "$fuzzer" "fuzz_$target"
  if wait "$fuzzer"; then
    result=ok
  else
    result=FAILED
    status=1
  fi
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  echo "[fuzz] $target: $result, ${execs:-?} executions"
  if [ "$result" != ok ]; then
    grep -m 20 -E "ERROR|runtime error|SUMMARY|Test unit written" "$log" || tail -n 20 "$log"
    artifact="$(sed -n 's/.*Test unit written to //p' "$log" | tail -1)"
    if [ -n "$artifact" ]; then
      echo "[fuzz] $target: replaying $artifact symbolized (log $log.replay)"
      ASAN_OPTIONS="$sanitizer_options" UBSAN_OPTIONS="print_stacktrace=1" \
        timeout 600 "$build_dir/test/fuzz/fuzz_$target" -timeout=0 \
        "$artifact" >"$log.replay" 2>&1 || true
      grep -m 20 -E "ERROR|runtime error|SUMMARY| in " "$log.replay" || true
    fi
  fi
done
exit $status
