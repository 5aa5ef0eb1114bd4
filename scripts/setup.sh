#!/usr/bin/env bash
# scripts/setup.sh — prepare a fresh Debian 12 machine to build and test ltorch.
#
# What it does (idempotent; a rerun on a ready machine only rebuilds incrementally):
#   1. installs the Debian packages below, running `apt-get update` only when one of them
#      is missing (as root, or through sudo when not root);
#   2. installs the engine: PyPI's torch 2.11.0 (its Linux x86_64 wheel is the CUDA 13.0 build,
#      with cuDNN, NCCL and the CUDA libraries as pip packages; it runs on the CPU without a GPU)
#      and torchvision 0.26.0, pinned, into a virtual environment keyed by those versions and the
#      Python tag under the user's cache directory ($LTORCH_VENV, default
#      ~/.cache/ltorch/venv-torch2.11.0-tv0.26.0-cp311; about 4.5 GB, downloaded once per machine,
#      so a second clone and CI on a fresh clone reuse it), and links it as .venv in the clone.
#      CMake builds against that libtorch; its Python is the reference of every parity spec
#      and benchmark (the same libtorch, so the same results);
#   3. checks that the Fashion-MNIST files are present;
#   4. configures and builds: cmake -S . -B build -DCMAKE_BUILD_TYPE=Release, then
#      cmake --build build -j2 (through ccache when it is installed). With the CUDA toolkit
#      (nvcc on PATH, $CUDA_HOME or /usr/local/cuda) the NCCL backend is built too; without it
#      the build still succeeds and CUDA kernels still run (cmake/find_libtorch.cmake).
#
# Packages: the toolchain (build-essential cmake pkg-config ccache), Python's venv module, Gloo's
# headers (the wheel ships c10d's but not Gloo's), LuaJIT 2.1 headers, busted/cjson/luacheck for
# specs and lint, readline for the REPL, zlib (dataset .gz files), OpenBLAS (Debian-side BLAS),
# the Fashion-MNIST dataset; libstb-dev (image decoding in runtime/image.c), python3-pil
# (bench/data_pipeline.py), tmux (spec/repl/terminal_spec.lua drives the REPL in a terminal),
# GNU time (the benchmarks' start-up CPU time), clang with libclang-rt-14-dev (libFuzzer and the
# sanitizers' runtimes: spec/checkpoint/hostile_spec.lua, scripts/sanitize.sh) and valgrind.
# scripts/fetch_datasets.sh adds the other datasets.
#
# Use: bash scripts/setup.sh          (from anywhere; works on the repo containing it)
#      BUILD_TYPE=Debug bash scripts/setup.sh
#      JOBS=8 bash scripts/setup.sh
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config ccache
  python3 python3-venv libgloo-dev libluajit2-5.1-dev
  lua-busted lua-cjson lua-check
  libreadline-dev zlib1g-dev libopenblas0-openmp
  dataset-fashion-mnist
  clang libclang-rt-14-dev
  libstb-dev python3-pil tmux time
  luajit2 valgrind
)
TORCH_VERSION=2.11.0
TORCHVISION_VERSION=0.26.0
FASHION_MNIST_DIR=/usr/share/datasets/fashion-mnist
BUILD_TYPE=${BUILD_TYPE:-Release}
JOBS=${JOBS:-2}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

say() { echo "setup: $*"; }
die() { echo "setup: error: $*" >&2; exit 1; }

# Root runs apt directly; anyone else needs sudo.
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || die "not root and sudo is not installed; run as root"
  SUDO=(sudo)
fi

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

install_packages() {
  local missing=() p
  for p in "${PACKAGES[@]}"; do
    installed "$p" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    say "all ${#PACKAGES[@]} Debian packages already installed"
    return
  fi
  say "installing: ${missing[*]}"
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q \
    || die "apt-get update failed"
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    --no-install-recommends "${missing[@]}" \
    || die "apt-get install failed for: ${missing[*]}"
}

# The engine's venv. Its stamp file is written last, so an interrupted download never leaves a
# half-installed venv that looks ready: without the stamp it is made again from scratch.
install_engine() {
  local tag cache venv stamp
  tag=$(/usr/bin/python3 -c 'import sys; print("cp%d%d" % sys.version_info[:2])') \
    || die "/usr/bin/python3 does not run (Debian package python3)"
  cache=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/ltorch
  venv=${LTORCH_VENV:-$cache/venv-torch$TORCH_VERSION-tv$TORCHVISION_VERSION-$tag}
  stamp="$venv/.ltorch-complete"
  if [ -f "$stamp" ]; then
    say "torch $TORCH_VERSION and torchvision $TORCHVISION_VERSION already in $venv"
  else
    say "installing torch==$TORCH_VERSION torchvision==$TORCHVISION_VERSION from PyPI into $venv (about 4.5 GB, once)"
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    /usr/bin/python3 -m venv "$venv" || die "python3 -m venv failed (Debian package python3-venv)"
    "$venv/bin/python" -m pip install --no-input --no-cache-dir --progress-bar off \
      "torch==$TORCH_VERSION" "torchvision==$TORCHVISION_VERSION" \
      || die "pip install torch==$TORCH_VERSION torchvision==$TORCHVISION_VERSION failed (PyPI reachable?)"
    touch "$stamp"
  fi
  "$venv/bin/python" -c 'import torch, torchvision, sys; sys.exit(torch.__version__.split("+")[0] != sys.argv[1])' \
    "$TORCH_VERSION" || die "$venv does not hold torch $TORCH_VERSION; remove it and rerun"
  ln -sfn "$venv" "$ROOT/.venv"
  say ".venv -> $venv"
}

check_runtime_deps() {
  local f
  for f in train-images-idx3-ubyte train-labels-idx1-ubyte \
           t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
    [ -f "$FASHION_MNIST_DIR/$f.gz" ] \
      || die "$FASHION_MNIST_DIR/$f.gz missing (Debian package dataset-fashion-mnist)"
  done
  say "Fashion-MNIST present in $FASHION_MNIST_DIR"
}

build() {
  [ -f CMakeLists.txt ] || die "no CMakeLists.txt in $ROOT; nothing to build"
  local launcher=()
  if command -v ccache >/dev/null 2>&1; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  say "configuring (CMAKE_BUILD_TYPE=$BUILD_TYPE${launcher:+, ccache})"
  cmake -S . -B build -DCMAKE_BUILD_TYPE="$BUILD_TYPE" "${launcher[@]}" \
    || die "cmake configure failed"
  say "building with -j$JOBS"
  cmake --build build -j"$JOBS" || die "build failed"
  say "built $ROOT/build"
}

install_packages
install_engine
check_runtime_deps
# torch.utils.data's real datasets (fortunes, sklearn tables): see scripts/fetch_datasets.sh
bash "$ROOT/scripts/fetch_datasets.sh" || die "fetching datasets failed"
# the language-model corpora of the transformer and LoRA recipes (apt-get download); their
# specs show as pending when these are missing, so a failure here is a warning, not fatal
bash "$ROOT/recipes/fetch_lm_data.sh" || say "warning: recipes/fetch_lm_data.sh failed; the transformer and LoRA recipe specs will be skipped"
build
