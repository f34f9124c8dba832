#!/usr/bin/env bash
# Installs what this machine lacks and builds everything, idempotently:
#   1. Debian packages (compiler, CMake, flatbuffers, XNNPACK, GoogleTest,
#      Chromium for the HTML report test, the arm-none-eabi cross toolchain
#      and QEMU);
#   2. the Python virtual environment .venv with requirements.txt and this
#      repository installed in editable mode as the `executorch` package;
#   3. one CMake build (runtime, kernels, executor_runner, tests and the
#      Python extension) in build/.
# A second run with nothing missing only re-checks and rebuilds what changed.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${EXECUTORCH_BUILD_DIR:-$repo_root/build}"
venv="$repo_root/.venv"

log() { printf '[setup] %s\n' "$*"; }

install_debian_packages() {
  # chromium: the developer tools' HTML report is checked in a headless
  # browser. The arm-none-eabi toolchain, its C/C++ libraries and QEMU build
  # and run the bare-metal Cortex-M firmware (examples/arm/). clang: the
  # fuzz targets (test/fuzz/run_fuzzers.sh) need libFuzzer. PCRE2,
  # nlohmann-json and SentencePiece: the LLM tokenizers (extension/llm).
  local wanted=(g++ make cmake flatbuffers-compiler libflatbuffers-dev
                libxnnpack-dev libpthreadpool-dev libgtest-dev chromium
                gcc-arm-none-eabi libnewlib-arm-none-eabi
                libstdc++-arm-none-eabi-newlib qemu-system-arm
                clang-14 libclang-rt-14-dev libpcre2-dev nlohmann-json3-dev
                libsentencepiece-dev)
  local missing=()
  for pkg in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" ||
      missing+=("$pkg")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return
  fi
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  log "installing Debian packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

install_python_packages() {
  if [ ! -x "$venv/bin/python" ]; then
    log "creating $venv"
    python3 -m venv "$venv"
  fi
  # Reinstall only when requirements.txt or pyproject.toml changed.
  local stamp="$venv/.requirements.sha256"
  local digest
  digest="$(cat "$repo_root/requirements.txt" "$repo_root/requirements-nodeps.txt" \
    "$repo_root/pyproject.toml" | sha256sum | cut -d' ' -f1)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$digest" ]; then
    return
  fi
  log "installing Python packages into $venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$repo_root/requirements.txt"
  "$venv/bin/pip" install -q --disable-pip-version-check --no-deps \
    -r "$repo_root/requirements-nodeps.txt"
  # Editable: the package imports from this checkout. The C++ build is the
  # one below (build/), so the build backend runs no CMake here.
  "$venv/bin/pip" install -q --disable-pip-version-check --no-deps --no-build-isolation \
    --config-settings=wheel.cmake=false -e "$repo_root"
  echo "$digest" > "$stamp"
}

build() {
  local pybind11_dir
  pybind11_dir="$("$venv/bin/python" -m pybind11 --cmakedir)"
  if [ ! -f "$build_dir/CMakeCache.txt" ]; then
    log "configuring $build_dir"
    cmake -S "$repo_root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release \
      -DPython3_EXECUTABLE="$venv/bin/python" -Dpybind11_DIR="$pybind11_dir" >/dev/null
  fi
  log "building (log: $build_dir/build.log)"
  if ! cmake --build "$build_dir" -j "$(nproc)" >"$build_dir/build.log" 2>&1; then
    tail -n 60 "$build_dir/build.log"
    log "build failed"
    exit 1
  fi
}

install_debian_packages
install_python_packages
build
log "ready: venv $venv, build $build_dir"
