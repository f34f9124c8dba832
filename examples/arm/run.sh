#!/usr/bin/env bash
# Builds the Cortex-M firmware for .pte programs (only the kernels and
# dtypes they use), runs it under QEMU and passes on its exit code.
#
#   bash examples/arm/run.sh MODEL.pte [MODEL2.pte ...]
#        [--board mps2-an386|mps3-an547] [--inputs FILE ...] [--size]
#        [--ops-from PTE] [--planned-arena BYTES] [--core] [--no-logging]
#        [--timeout SECONDS] [--build-dir DIR]
#
#   --board          mps2-an386 (Cortex-M4F, default) or mps3-an547 (M55)
#   --inputs FILE    raw little-endian bytes of every tensor input, in input
#                    order (default: all ones); once per model, in order
#   --size           also print the flash/RAM table of the core-alone image
#                    and of this model's image (size_report.py)
#   --ops-from PTE   select the kernels from PTE (repeatable) instead of
#                    the models (to run a damaged model with a working
#                    selection)
#   --planned-arena  bytes of the planned-memory arena (default: what the
#                    program plans)
#   --no-logging     compile the runtime's log messages out (smallest
#                    image; errors are then reported by code only)
#   --core           run the core-alone image (no kernels): it loads the
#                    program and reports the first operator it lacks
#
# The firmware runs the models in order and prints "model M: NAME", then
# "output N: DTYPE [sizes] values..." and the cycle counts, on standard output and any error on standard error. Exit codes: 0
# ok, 1 a runtime call failed, 2 abort, 3 a CPU fault, 4 heap use, 124 the
# timeout; anything else is a build failure.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
usage() { sed -n '2,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 2; }

models=() inputs=() ops_from=() board="mps2-an386" size=0 planned=0
timeout_s=120 build_dir="" image=arm_executor_runner optimize_size=OFF
while [[ $# -gt 0 ]]; do
  case "$1" in
    --board) board="$2"; shift 2 ;;
    --inputs) inputs+=("$(realpath "$2")"); shift 2 ;;
    --size) size=1; shift ;;
    --ops-from) ops_from+=("$(realpath "$2")"); shift 2 ;;
    --planned-arena) planned="$2"; shift 2 ;;
    --core) image=arm_core_runner; shift ;;
    --no-logging) optimize_size=ON; shift ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "run.sh: unknown option $1" >&2; usage ;;
    *) [[ -f "$1" ]] || { echo "run.sh: no file $1" >&2; exit 2; }
       models+=("$(realpath "$1")"); shift ;;
  esac
done
[[ ${#models[@]} -gt 0 ]] || { echo "run.sh: give a .pte" >&2; usage; }
# CMake lists are ;-separated.
join() { local IFS=";"; echo "$*"; }
case "$board" in
  mps2-an386|mps3-an547) ;;
  *) echo "run.sh: unknown board '$board' (mps2-an386 or mps3-an547)" >&2; exit 2 ;;
esac
for tool in arm-none-eabi-g++ qemu-system-arm cmake; do
  command -v "$tool" >/dev/null ||
    { echo "run.sh: $tool is missing; bash scripts/setup.sh installs it" >&2; exit 127; }
done

python="$repo_root/.venv/bin/python"
[[ -x "$python" ]] || python="$(command -v python3)"
build_dir="${build_dir:-$repo_root/build-arm/arm-$board}"
log="$build_dir.log"
mkdir -p "$(dirname "$build_dir")"

selection=("${models[@]}")
[[ ${#ops_from[@]} -eq 0 ]] || selection=("${ops_from[@]}")
# Programs that call quantized operators (their names are strings in the
# .pte) get the quantized kernel library too.
quantized=OFF
if grep -qaE "quantized_decomposed::|et_quantized::" "${selection[@]}"; then
  quantized=ON
fi

# One build directory per board: new models regenerate the embedded
# programs and the kernel registration; kernels recompile only when the
# selected dtypes change.
if ! { cmake --preset "arm-$board" -S "$repo_root" -B "$build_dir" \
         -DPython3_EXECUTABLE="$python" \
         -DEXECUTORCH_ARM_MODEL="$(join "${models[@]}")" \
         -DEXECUTORCH_SELECT_OPS_MODEL="$(join "${selection[@]}")" \
         -DEXECUTORCH_ARM_INPUTS="$(join "${inputs[@]}")" \
         -DEXECUTORCH_ARM_PLANNED_ARENA_SIZE="$planned" \
         -DEXECUTORCH_OPTIMIZE_SIZE="$optimize_size" \
         -DEXECUTORCH_ARM_QUANTIZED="$quantized" &&
       cmake --build "$build_dir" -j2 --target arm_executor_runner arm_core_runner; } \
       >"$log" 2>&1; then
  grep -E "error|Error" "$log" | head -20 >&2 || true
  echo "run.sh: the firmware build failed; the full log is $log" >&2
  exit 5
fi

images="$build_dir/examples/arm"
if [[ "$size" == 1 ]]; then
  "$python" "$repo_root/examples/arm/size_report.py" --board "$board" \
    "$images/arm_core_runner.elf" "$images/arm_executor_runner.elf"
fi

# -icount shift=5: every instruction takes 32 ns of virtual time (about one
# core clock), so SysTick's cycle counts are deterministic.
status=0
timeout "$timeout_s" qemu-system-arm -M "$board" -nographic -monitor none \
  -serial null -semihosting-config enable=on,target=native -icount shift=5 \
  -kernel "$images/$image.elf" || status=$?
if [[ "$status" == 124 ]]; then
  echo "run.sh: the firmware did not finish within $timeout_s s" >&2
fi
exit "$status"
