#!/usr/bin/env bash
# Prints the flash/RAM tables of examples/arm/README.md: for each board, the
# core-alone image and the image of each example model (exported here with
# our exporter), with logging, then the same without logging (--no-logging).
#
#   bash examples/arm/size_table.sh [--board mps2-an386|mps3-an547] ...
#
# Sizes do not depend on machine load. Each configuration is one firmware
# build (-j2) in build-arm/.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
boards=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --board) boards+=("$2"); shift 2 ;;
    *) echo "usage: size_table.sh [--board NAME]..." >&2; exit 2 ;;
  esac
done
[[ ${#boards[@]} -gt 0 ]] || boards=(mps2-an386 mps3-an547)

models_dir="$repo_root/build-arm/models"
mkdir -p "$models_dir"
for model in mlp cnn; do
  [[ -f "$models_dir/$model.pte" ]] ||
    "$repo_root/.venv/bin/python" -m executorch.examples.portable.scripts.export \
      --model_name "$model" --output_dir "$models_dir" >/dev/null 2>&1
done

for board in "${boards[@]}"; do
  for logging in "" --no-logging; do
    for model in mlp cnn; do
      echo "== $board, $model${logging:+, $logging}"
      bash "$repo_root/examples/arm/run.sh" "$models_dir/$model.pte" \
        --board "$board" --size $logging | grep -v '^output '
    done
  done
done
