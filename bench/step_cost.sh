#!/usr/bin/env bash
# bench/step_cost.sh — a training step's cost in instructions, modelled L1 data-cache misses and
# mispredicted branches, ltorch against plain C++ over the same libtorch, counted by callgrind
# (the same under any machine load: docs/PERFORMANCE.md, issue #39, "The step's cost counted").
# Where bench/mlp_phases.sh times a step, this counts it: a front end that adds few instructions
# but scatters its data shows up in the D1 column, not in Ir.
#
# Run:   bash bench/step_cost.sh [WORKLOADS...]     (default: tiny mlp; also cnn — slow)
#        PHASES=1 bash bench/step_cost.sh tiny      (also the step by phase: each phase's C entry
#                                                   point, inclusive, and the rest)
# Needs: valgrind (Debian's package), build/ltorch and build/bench_mlp_phases_cpp (built here).
# Both run pinned to one CPU (one intra-op thread) with bench/run.lua's malloc thresholds; both
# run bench/mlp_phases.{lua,cpp}'s step in its `count` mode: warm-up steps first, then N steps
# counted (ltorch: inside a qsort callback, --toggle-collect=qsort; C++: counted_steps()).
# The cache model is this machine's Xeon: 48 KiB 12-way L1d, 2 MiB 16-way last level.
# Columns, per step: Ir instructions; D1 misses (L1 data, read + write); LL misses (the last level
# modelled, 2 MiB: this core's L2); Bm mispredicted branches (conditional + indirect).
set -euo pipefail
cd "$(dirname "$0")/.."
workloads=("$@")
[ ${#workloads[@]} -gt 0 ] || workloads=(tiny mlp)
command -v valgrind >/dev/null || { echo "step_cost: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
[ -x build/bench_mlp_phases_cpp ] && [ build/bench_mlp_phases_cpp -nt bench/mlp_phases.cpp ] ||
  cmake --build build --target bench_mlp_phases_cpp >/dev/null
export GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=268435456
SIM=(--cache-sim=yes --D1=49152,12,64 --LL=2097152,16,64 --branch-sim=yes)
cpu=${CPU:-1}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Prints "Ir D1 LL Bm" per step from a callgrind output file's totals.
per_step() {
  awk -v n="$2" '/^events:/ { for (i = 2; i <= NF; i++) col[$i] = i - 1 }
    /^totals:|^summary:/ { split($0, v, " ");
      ir = v[col["Ir"] + 1]; d1 = v[col["D1mr"] + 1] + v[col["D1mw"] + 1];
      ll = v[col["DLmr"] + 1] + v[col["DLmw"] + 1] + v[col["ILmr"] + 1];
      bm = v[col["Bcm"] + 1] + v[col["Bim"] + 1];
      printf "%.0f %.0f %.0f %.0f\n", ir / n, d1 / n, ll / n, bm / n; exit }' "$1"
}

# "Ir D1" per step, inclusive, of the first function whose annotate line matches the awk regex $3.
inclusive() {
  callgrind_annotate --inclusive=yes --threshold=100 --auto=no --show=Ir,D1mr,D1mw "$1" 2>/dev/null |
    awk -v n="$2" -v pat="$3" '/^ *[0-9,]+ / && $0 ~ pat {
      s = $0; k = 0
      while (k < 3 && match(s, /^ *[0-9,]+( \([ 0-9.]+%\))? /)) {
        t = substr(s, 1, RLENGTH); s = substr(s, RLENGTH + 1); split(t, a, " ")
        x = a[1]; gsub(",", "", x); v[++k] = x
      }
      printf "%.0f %.0f\n", v[1] / n, (v[2] + v[3]) / n; found = 1; exit }
      END { if (!found) print "0 0" }'
}

# The step by phase: each phase's C entry point, inclusive, in both programs; the rest (forward,
# zero_grad, and ltorch's Lua front end and collector) is the step's total minus those.
phases() {
  local w=$1 n=$2 lir=$3 ld1=$4 cir=$5 cd1=$6 rl_ir rl_d1 rc_ir rc_d1
  rl_ir=$lir rl_d1=$ld1 rc_ir=$cir rc_d1=$cd1
  printf '\n%s, per step, inclusive (Ir, then D1 misses)\n\n' "$w"
  printf '| phase (ltorch entry / C++ entry) | ltorch Ir | C++ Ir | ltorch D1 | C++ D1 |\n'
  printf '|---|---:|---:|---:|---:|\n'
  while IFS='|' read -r name lpat cpat; do
    read -r a b < <(inclusive "$out/lt.$w" "$n" "$lpat")
    read -r c d < <(inclusive "$out/cpp.$w" "$n" "$cpat")
    printf '| %s | %s | %s | %s | %s |\n' "$name" "$a" "$c" "$b" "$d"
    rl_ir=$((rl_ir - a)) rl_d1=$((rl_d1 - b)) rc_ir=$((rc_ir - c)) rc_d1=$((rc_d1 - d))
  done <<'PHASES'
optimizer step (lt_optim_adam_foreach / AdamW::step)|lt_optim_adam_foreach \[|AdamW::step\(
backward (lt_autograd_backward_start / autograd::backward)|lt_autograd_backward_start \[|torch::autograd::backward\(
loss (lt_cross_entropy / cross_entropy_loss)|lt_cross_entropy \[|_ops::cross_entropy_loss::call\(
PHASES
  printf '| the rest: forward, zero_grad, (ltorch) Lua and its collector | %s | %s | %s | %s |\n' \
    "$rl_ir" "$rc_ir" "$rl_d1" "$rc_d1"
  echo
}

printf '| workload | steps | ltorch Ir | C++ Ir | ltorch/C++ Ir | ltorch D1 | C++ D1 | ltorch/C++ D1 |'
printf ' ltorch LL | C++ LL | ltorch Bm | C++ Bm |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for w in "${workloads[@]}"; do
  case $w in tiny) n=1000 ;; mlp) n=100 ;; cnn) n=5 ;; *) echo "WORKLOAD: tiny, mlp or cnn, not $w" >&2; exit 2 ;; esac
  taskset -c "$cpu" valgrind --tool=callgrind "${SIM[@]}" --toggle-collect=qsort \
    --callgrind-out-file="$out/lt.$w" build/ltorch bench/mlp_phases.lua "$n" "$w" count >"$out/lt.$w.log" 2>&1 ||
    { cat "$out/lt.$w.log" >&2; exit 1; }
  taskset -c "$cpu" valgrind --tool=callgrind "${SIM[@]}" --toggle-collect='counted_steps*' \
    --callgrind-out-file="$out/cpp.$w" build/bench_mlp_phases_cpp "$n" "$w" count >"$out/cpp.$w.log" 2>&1 ||
    { cat "$out/cpp.$w.log" >&2; exit 1; }
  read -r lir ld1 lll lbm < <(per_step "$out/lt.$w" "$n")
  read -r cir cd1 cll cbm < <(per_step "$out/cpp.$w" "$n")
  printf '| %s | %s | %s | %s | %.3f | %s | %s | %.2f | %s | %s | %s | %s |\n' "$w" "$n" "$lir" "$cir" \
    "$(echo "$lir / $cir" | bc -l)" "$ld1" "$cd1" "$(echo "$ld1 / $cd1" | bc -l)" "$lll" "$cll" "$lbm" "$cbm"
  if [ "${PHASES:-0}" = 1 ]; then phases "$w" "$n" "$lir" "$ld1" "$cir" "$cd1"; fi
done
