#!/usr/bin/env bash
# bench/gpu/check.sh — the one prepared run for a CUDA machine: builds ltorch against the
# libtorch inside that machine's PyTorch (2.x with CUDA), binds the op table to that libtorch's
# schema, runs the GPU specs and the dispatch-schema spec, then benchmarks workloads 2-4 (MLP,
# CNN, transformer training steps) on the GPU beside PyTorch.
#
# What it needs there: python3 with torch (CUDA build), cmake, a C/C++ compiler, nvcc/CUDA
# headers (TorchConfig looks for them); everything of ours that the machine lacks comes from
# .gpu_carry/debs (bench/gpu/carry.sh makes it here), unpacked into a private prefix, never into /.
#
# What it does, each step logged with a time stamp (a failing step is reported and the script
# goes on where the later steps still make sense; the exit status is 1 if any step failed):
#   1. unpack the carried .debs into $PREFIX; point pkg-config, the loader, Lua's paths and the
#      recipes' data folders at it
#   2. report the machine: GPU, driver, PyTorch, CUDA
#   3. configure + build into $WORK/build (a copy of this tree in $WORK, so nothing here changes):
#      -DCMAKE_PREFIX_PATH=torch.utils.cmake_prefix_path, NCCL headers from pip's nvidia package
#      when present; if that build fails, once more without NCCL
#   4. compare that PyTorch's version with the op table's (both torch 2.11 when all is as planned)
#   5. specs: spec/gpu (CUDA), spec/torch/dispatch_schema_spec.lua (the table against that
#      libtorch), parity against that machine's python3 -> $OUT/specs.log
#   6. recipes: train_classifier.lua --device cuda (the main job), train_transformer.lua
#      --device cuda --amp (bfloat16 autocast) -> $OUT/recipes.log
#   6b. recipes/ddp_train.lua on one GPU under the launcher: NCCL and c10d's Reducer -> $OUT/ddp.log
#   6c. memory soak: 2,000 MLP steps, memory_allocated flat and GC cycles per step -> $OUT/bench.log
#   6d. an MLP training step captured as a CUDA graph and replayed, against eager (ltorch and
#       PyTorch) -> $OUT/bench.log
#   7. bench: build/ltorch bench/run.lua --device cuda (workloads 2-4 beside PyTorch eager on the
#      same GPU; steps/s, tokens/s and the transformer's MFU) -> $OUT/gpu_bench.md
# Each stage runs under its own `timeout`, cut to what remains of an 8-minute budget
# (CHECK_BUDGET_S, default 470 s).
# $OUT ends with 8 files (the device tool returns at most 8).
#
# Use (with the device tool, from the repo root; carry [".gpu_carry"]):
#     bash bench/gpu/carry.sh      (here, once: fills .gpu_carry/debs)
#     bash bench/gpu/check.sh      (there)
# Locally (a CPU machine) it runs steps 1-5 against the .venv's libtorch (PYTHON=.venv/bin/python),
# the GPU specs pending and steps 6-7 skipped: the dry run that checks the script itself.
# Time: about 2 min here (2 cores, ccache warm); there, the build ~1-2 min on 16 cores, the
# recipes and ddp_train ~2.5 min, the bench ~3 min (3 reps x 3 workloads x 2 sides, each process paying CUDA
# start): under 8 minutes.
# Environment: OUT (where logs and the table go; default $WORK/out), PYTHON (default python3),
# JOBS (default nproc), BENCH_REPS (default 3), BENCH_SCALE (default 1), CHECK_BUDGET_S (470).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
WORK=${WORK:-/tmp/ltorch-gpu}
PREFIX=$WORK/prefix
OUT=${OUT:-$WORK/out}
PYTHON=${PYTHON:-python3}
JOBS=${JOBS:-$(nproc)}
REPS=${BENCH_REPS:-3}
SCALE=${BENCH_SCALE:-1}
mkdir -p "$WORK" "$OUT"
exec > >(tee -a "$OUT/check.log") 2>&1

failed=0
T0=$(date +%s)
DEADLINE=$((T0 + ${CHECK_BUDGET_S:-470}))   # the whole run stays under 8 minutes
# left N: N seconds, or what remains of the budget if less (at least 1): each stage's `timeout`.
left() { local r=$((DEADLINE - $(date +%s))); [ "$r" -lt 1 ] && r=1; [ "$r" -lt "$1" ] && echo "$r" || echo "$1"; }
step() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
bad() { echo "!! $*"; failed=1; }

# 1. carried packages ---------------------------------------------------------------------------
step "1 carried packages"
rm -rf "$PREFIX"
mkdir -p "$PREFIX"
if ls "$ROOT"/.gpu_carry/debs/*.deb >/dev/null 2>&1; then
  for deb in "$ROOT"/.gpu_carry/debs/*.deb; do
    if command -v dpkg-deb >/dev/null 2>&1; then
      dpkg-deb -x "$deb" "$PREFIX" || bad "cannot unpack $deb"
    else
      # No dpkg: a .deb is an ar archive holding data.tar.*; Python's tarfile reads xz and gz.
      "$PYTHON" - "$deb" "$PREFIX" <<'PY' || bad "cannot unpack $deb"
import io, sys, tarfile
blob = open(sys.argv[1], "rb").read()
pos = 8
while pos < len(blob):
    name, size = blob[pos:pos + 16].decode().strip().rstrip("/"), int(blob[pos + 48:pos + 58])
    if name.startswith("data.tar"):
        tarfile.open(fileobj=io.BytesIO(blob[pos + 60:pos + 60 + size])).extractall(sys.argv[2])
    pos += 60 + size + (size & 1)
PY
    fi
  done
  MULTIARCH=x86_64-linux-gnu
  LIBDIR=$PREFIX/usr/lib/$MULTIARCH
  # The .pc files name /usr; point them at the prefix.
  sed -i "s|^prefix=/usr|prefix=$PREFIX/usr|" "$LIBDIR"/pkgconfig/*.pc
  export PKG_CONFIG_PATH=$LIBDIR/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  export LD_LIBRARY_PATH=$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  command -v pkg-config >/dev/null 2>&1 || export PATH=$PATH:$PREFIX/usr/bin
  export LUA_PATH="$PREFIX/usr/share/lua/5.1/?.lua;$PREFIX/usr/share/lua/5.1/?/init.lua;;"
  export LUA_CPATH="$LIBDIR/lua/5.1/?.so;;"
  BUSTED=$PREFIX/usr/bin/busted
  [ -d "$PREFIX/usr/share/datasets/fashion-mnist" ] && export LTORCH_FASHION_MNIST_DIR=$PREFIX/usr/share/datasets/fashion-mnist
  [ -d "$PREFIX/usr/share/games/fortunes" ] && export LTORCH_FORTUNES_DIR=$PREFIX/usr/share/games/fortunes
  STB_ARG=(-DSTB_INCLUDE_DIR="$PREFIX/usr/include")
  echo "unpacked $(ls "$ROOT"/.gpu_carry/debs/*.deb | wc -l) packages into $PREFIX"
else
  echo "no .gpu_carry/debs: using this machine's LuaJIT, stb, pkg-config and busted"
  BUSTED=/usr/bin/busted
  STB_ARG=()
fi

# TorchConfig finds CUDA through nvcc.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=$PATH:/usr/local/cuda/bin; fi

# 2. the machine --------------------------------------------------------------------------------
step "2 machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo "nvidia-smi: none"
"$PYTHON" - <<'PY' || bad "$PYTHON cannot import torch"
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available(),
      "devices", torch.cuda.device_count())
PY
TORCH_CMAKE=$("$PYTHON" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)' 2>/dev/null)
[ -d "$TORCH_CMAKE/Torch" ] || TORCH_CMAKE=""   # no PyTorch there: CMake says what to install
NCCL_DIR=$("$PYTHON" - 2>/dev/null <<'PY'
import glob, os, site
for base in site.getsitepackages():
    for h in sorted(glob.glob(os.path.join(base, "nvidia", "**", "include", "nccl.h"), recursive=True)):
        print(os.path.dirname(h)); raise SystemExit
PY
)
echo "torch cmake prefix: ${TORCH_CMAKE:-<default>}; nccl.h: ${NCCL_DIR:-none}"

# 3. build --------------------------------------------------------------------------------------
step "3 build"
SRC=$WORK/src
rm -rf "$SRC"
mkdir -p "$SRC"
(cd "$ROOT" && tar --exclude=./build --exclude='./build-*' --exclude=./.git --exclude=./.gpu_carry -cf - .) \
  | tar -xf - -C "$SRC"
BUILD=$SRC/build
configure() {
  local gen=()
  command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
  rm -rf "$BUILD"
  timeout "$(left 120)" cmake -S "$SRC" -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
    ${TORCH_CMAKE:+-DCMAKE_PREFIX_PATH="$TORCH_CMAKE"} "${STB_ARG[@]}" "$@" > "$OUT/cmake.log" 2>&1 \
    && timeout "$(left 240)" cmake --build "$BUILD" -j "$JOBS" > "$OUT/build.log" 2>&1
}
# Tries, each stopping at its first error: with NCCL; without; without and as C++20.
show_errors() { grep -E -m 30 "error|Error" "$OUT/cmake.log" "$OUT/build.log"; }
built=0
if [ -n "$NCCL_DIR" ]; then
  if configure -DNCCL_INCLUDE_DIR="$NCCL_DIR"; then built=1; else bad "the build with NCCL failed:"; show_errors; fi
fi
if [ "$built" -ne 1 ]; then
  if configure -DNCCL_INCLUDE_DIR=NCCL_INCLUDE_DIR-NOTFOUND; then built=1
  else
    bad "the C++17 build failed:"; show_errors
    configure -DNCCL_INCLUDE_DIR=NCCL_INCLUDE_DIR-NOTFOUND -DCMAKE_CXX_STANDARD=20 && built=1
  fi
fi
grep -E "ltorch:|CUDA|Torch" "$OUT/cmake.log" | head -20
if [ "$built" -ne 1 ]; then
  bad "build failed"
  show_errors
  echo "gpu-check: build failed after $(( $(date +%s) - T0 )) s"
  exit 1
fi
LTORCH=$BUILD/ltorch
"$LTORCH" -e 'local t = require "torch"; print("ltorch on libtorch " .. t.libtorch_version .. ", cuda " ..
  tostring(t.cuda.is_available()) .. ", devices " .. t.cuda.device_count())' || bad "ltorch does not start"

# 4. the engine ---------------------------------------------------------------------------------
# ltorch's op table is generated from torch 2.11's schema (lua/torch/_gen/ops.lua); the machine's
# PyTorch must be that release, or the dispatch-schema spec in step 5 says where they differ.
step "4 engine version"
VERSION=$("$PYTHON" -c 'import torch; print(torch.__version__)' 2>/dev/null)
TABLE=$("$LTORCH" -e 'io.write(require("torch._gen.ops").version)' 2>/dev/null)
echo "PyTorch here: $VERSION; ltorch's op table: $TABLE"
[ "${VERSION%%+*}" = "${TABLE%%+*}" ] || echo "note: versions differ; step 5's dispatch-schema spec checks the table against this libtorch"

# 5. specs --------------------------------------------------------------------------------------
step "5 specs"
(cd "$SRC" && LTORCH=$LTORCH BUSTED=$BUSTED LTORCH_PYTHON=$(command -v "$PYTHON") timeout "$(left 150)" bash scripts/test.sh \
  spec/gpu spec/torch/dispatch_schema_spec.lua spec/torch/random_spec.lua spec/torch/pin_memory_spec.lua \
  spec/autograd/checkpoint_spec.lua) \
  > "$OUT/specs.log" 2>&1 || bad "specs failed"
grep -E -A12 "^(FAILURE|ERROR)" "$OUT/specs.log" | head -80
tail -n 1 "$OUT/specs.log"

HAS_CUDA=0
"$LTORCH" -e 'os.exit(require("torch").cuda.is_available() and 0 or 1)' && HAS_CUDA=1

# 6. recipes on the GPU -------------------------------------------------------------------------
# The main job (MLP on Fashion-MNIST, the README's first command) with --device cuda, and the
# transformer recipe with bfloat16 autocast; each prints its test figures and time.
step "6 recipes on cuda"
if [ "$HAS_CUDA" -eq 1 ]; then
  TIMEFORMAT="wall %R s"
  { time (cd "$SRC" && timeout "$(left 150)" "$LTORCH" recipes/train_classifier.lua --device cuda \
    --out "$WORK/runs/classifier") ; } > "$OUT/recipes.log" 2>&1 || bad "train_classifier --device cuda failed"
  { time (cd "$SRC" && timeout "$(left 150)" "$LTORCH" recipes/train_transformer.lua --device cuda --amp \
    --out "$WORK/runs/transformer") ; } >> "$OUT/recipes.log" 2>&1 || bad "train_transformer --device cuda --amp failed"
  grep -E "test accuracy|accuracy|wall|error" "$OUT/recipes.log" | tail -20
else
  echo "no CUDA device: recipes skipped"
fi

# 6b. DDP on NCCL ------------------------------------------------------------------------------
# recipes/ddp_train.lua under the launcher with one rank on the GPU: the process group uses NCCL
# when this build has it, and c10d's Reducer all-reduces CUDA buckets during loss:backward().
step "6b ddp_train on cuda (NCCL, world size 1)"
if [ "$HAS_CUDA" -eq 1 ]; then
  (cd "$SRC" && timeout "$(left 150)" "$LTORCH" tools/run.lua --nproc-per-node 1 recipes/ddp_train.lua --device cuda --ci \
    --out "$WORK/runs/ddp") > "$OUT/ddp.log" 2>&1 || bad "ddp_train --device cuda failed"
  grep -E "world_size|result|rror" "$OUT/ddp.log" | tail -8
else
  echo "no CUDA device: ddp_train skipped"
fi

# 6c. memory over a long loop --------------------------------------------------------------------
# 2,000 MLP steps on the device: torch.cuda.memory_allocated sampled every 200 steps must stay flat,
# and the Lua collector's cycles per step are reported (bench/gpu/memory_soak.lua). On the CPU
# (the dry run) the same loop on the CPU allocator's live bytes.
step "6c memory soak"
SOAK_DEVICE=cpu
[ "$HAS_CUDA" -eq 1 ] && SOAK_DEVICE=cuda
(cd "$SRC" && timeout "$(left 60)" "$LTORCH" bench/gpu/memory_soak.lua --device "$SOAK_DEVICE" --steps 2000 --every 200) \
  > "$OUT/bench.log" 2>&1 || bad "memory soak failed (memory grew, or the loop failed)"
grep -E "^memory_soak" "$OUT/bench.log" | tail -1

# 6d. a training step as a CUDA graph ------------------------------------------------------------
# bench/gpu/graph_step.lua: a launch-bound MLP step (SGD with momentum) eager and replayed as one
# captured CUDA graph, steps/s of each (graphed parameters checked against eager), beside PyTorch
# eager on the same step in this machine's python. The dry run: the eager step on the CPU and
# CUDAGraph()'s error.
step "6d CUDA-graph training step"
GRAPH_STEPS=20
[ "$HAS_CUDA" -eq 1 ] && GRAPH_STEPS=500
(cd "$SRC" && timeout "$(left 60)" "$LTORCH" bench/gpu/graph_step.lua --steps "$GRAPH_STEPS") \
  >> "$OUT/bench.log" 2>&1 || bad "CUDA-graph step failed"
if [ "$HAS_CUDA" -eq 1 ]; then
  timeout "$(left 60)" "$PYTHON" - "$GRAPH_STEPS" >> "$OUT/bench.log" 2>&1 <<'PY' || bad "PyTorch eager step failed"
import sys, time, torch
import torch.nn as nn, torch.nn.functional as F
n = int(sys.argv[1]); torch.manual_seed(0)
m = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)).cuda()
opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
x, y = torch.randn(32, 64, device="cuda"), torch.randn(32, 10, device="cuda")
def step():
    opt.zero_grad(set_to_none=False); F.mse_loss(m(x), y).backward(); opt.step()
for _ in range(10): step()
torch.cuda.synchronize(); t0 = time.perf_counter()
for _ in range(n): step()
torch.cuda.synchronize()
print("graph_step: PyTorch eager %d steps on cuda: %.1f steps/s" % (n, n / (time.perf_counter() - t0)))
PY
fi
grep -E "^graph_step" "$OUT/bench.log" | tail -4

# 7. bench --------------------------------------------------------------------------------------
step "7 bench"
if [ "$HAS_CUDA" -eq 1 ]; then
  (cd "$SRC" && LTORCH_BIN=$LTORCH BENCH_PYTHON=$(command -v "$PYTHON") BENCH_NO_CPP_BUILD=1 \
    timeout "$(left 200)" "$LTORCH" bench/run.lua --device cuda --reps "$REPS" --scale "$SCALE" --out "$OUT/gpu_bench.md") \
    >> "$OUT/bench.log" 2>&1 || bad "bench failed"
  cat "$OUT/gpu_bench.md" 2>/dev/null || tail -n 40 "$OUT/bench.log"
else
  echo "no CUDA device: bench skipped"
fi

step "done"
echo "gpu-check: $([ "$failed" -eq 0 ] && echo ok || echo FAILED) after $(( $(date +%s) - T0 )) s; logs in $OUT"
exit "$failed"
