#!/usr/bin/env bash
# bench/mlp_phases.sh — the MLP (or CNN, or tiny) training step phase by phase, ltorch against
# PyTorch and plain C++ over the same libtorch (bench/mlp_phases.{lua,py,cpp}): REPS interleaved runs of each,
# pinned to one CPU, with bench/run.lua's malloc thresholds for all three; prints the median of
# each phase in µs of process CPU time per step, and ltorch's ratio to each. docs/PERFORMANCE.md,
# "The MLP step phase by phase", has what it found.
# Run: bash bench/mlp_phases.sh [REPS] [STEPS] [CPU] [WORKLOAD]   (defaults 5, 2000 (cnn: 100; tiny:
# 20000), 1, mlp)
set -euo pipefail
cd "$(dirname "$0")/.."
workload=${4:-mlp}
case $workload in
  mlp) default_steps=2000 ;;
  cnn) default_steps=100 ;;
  tiny) default_steps=20000 ;;
  *) echo "WORKLOAD: mlp, cnn or tiny, not $workload" >&2; exit 2 ;;
esac
reps=${1:-5}; steps=${2:-$default_steps}; cpu=${3:-1}
[ -x build/bench_mlp_phases_cpp ] && [ build/bench_mlp_phases_cpp -nt bench/mlp_phases.cpp ] ||
  cmake --build build --target bench_mlp_phases_cpp >/dev/null
export GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=268435456
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for _ in $(seq "$reps"); do
  taskset -c "$cpu" build/ltorch bench/mlp_phases.lua "$steps" "$workload" 2>/dev/null | grep '^PHASES' >>"$out"
  taskset -c "$cpu" .venv/bin/python bench/mlp_phases.py "$steps" "$workload" | grep '^PHASES' >>"$out"
  taskset -c "$cpu" build/bench_mlp_phases_cpp "$steps" "$workload" | grep '^PHASES' >>"$out"
done
awk -v reps="$reps" '
  function median(impl, col,   n, i, j, v, tmp) {
    n = 0
    for (i = 1; i <= cnt[impl]; i++) v[++n] = val[impl, i, col]
    for (i = 2; i <= n; i++) { tmp = v[i]; for (j = i - 1; j >= 1 && v[j] > tmp; j--) v[j + 1] = v[j]; v[j + 1] = tmp }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  { impl = $2; cnt[impl]++; for (c = 3; c <= 7; c++) val[impl, cnt[impl], c] = $c }
  END {
    split("forward + loss,zero_grad,backward,optimizer step,whole step", names, ",")
    printf "| phase (µs/step, median of %d) | ltorch | PyTorch | C++ | ltorch/PyTorch | ltorch/C++ |\n", reps
    print "|---|---:|---:|---:|---:|---:|"
    for (c = 3; c <= 7; c++) {
      l = median("lua", c); p = median("python", c); k = median("cpp", c)
      printf "| %s | %.1f | %.1f | %.1f | %.2f | %.2f |\n", names[c - 2], l, p, k, l / p, l / k
    }
  }' "$out"
