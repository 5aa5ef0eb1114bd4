#!/usr/bin/env bash
# bench/op_cost.sh — per-op cost of the dispatch workloads in instructions and modelled cache
# misses, ltorch against plain C++ over the same libtorch, counted by callgrind (the same under
# any machine load; docs/PERFORMANCE.md, issue #39, "where a small op's time goes").
#
# Run:   bash bench/op_cost.sh [OPS...]        (default: add mul matmul index; also add_free)
#        FUNCS=1 bash bench/op_cost.sh add     (also ltorch's top functions, inclusive, per op)
# Needs: valgrind (Debian's package), build/ltorch and build/bench_workloads_cpp.
# The cache model is this machine's Xeon: 48 KiB 12-way L1d, 2 MiB 16-way last level.
# Columns: Ir instructions, D1 misses (L1 data, read + write), LL misses (last level), per op.
set -euo pipefail
cd "$(dirname "$0")/.."
ops=("$@")
[ ${#ops[@]} -gt 0 ] || ops=(add mul matmul index)
N=20000                        # counted ltorch calls (after 30,000 warm ones)
CPP_SCALE=0.1                  # C++: 20,000 calls + 2,000 warm-up, all counted
CPP_CALLS=22000
CACHE=(--cache-sim=yes --D1=49152,12,64 --LL=2097152,16,64)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
[ -x build/bench_workloads_cpp ] || cmake --build build --target bench_workloads_cpp >/dev/null

# Prints "Ir D1 LL" per call from a callgrind output file's totals.
per_call() {
  awk -v n="$2" '/^events:/ { for (i = 2; i <= NF; i++) col[$i] = i - 1 }
    /^totals:|^summary:/ { split($0, v, " ");
      ir = v[col["Ir"] + 1]; d1 = v[col["D1mr"] + 1] + v[col["D1mw"] + 1];
      ll = v[col["DLmr"] + 1] + v[col["DLmw"] + 1] + v[col["ILmr"] + 1];
      printf "%.0f %.1f %.2f\n", ir / n, d1 / n, ll / n; exit }' "$1"
}

printf '| op | ltorch Ir | C++ Ir | ltorch/C++ Ir | ltorch D1 | C++ D1 | ltorch LL | C++ LL |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|\n'
for op in "${ops[@]}"; do
  valgrind --tool=callgrind "${CACHE[@]}" --toggle-collect=qsort --callgrind-out-file="$out/lt.$op" \
    build/ltorch bench/op_cost.lua "$op" "$N" >/dev/null 2>&1
  read -r lir ld1 lll < <(per_call "$out/lt.$op" "$N")
  cop=$op; [ "$op" = add_free ] && cop=add
  valgrind --tool=callgrind "${CACHE[@]}" --toggle-collect='time_loop*' --callgrind-out-file="$out/cpp.$op" \
    build/bench_workloads_cpp dispatch "$CPP_SCALE" "$cop" >/dev/null 2>&1
  read -r cir cd1 cll < <(per_call "$out/cpp.$op" "$CPP_CALLS")
  printf '| %s | %s | %s | %.3f | %s | %s | %s | %s |\n' "$op" "$lir" "$cir" \
    "$(echo "$lir / $cir" | bc -l)" "$ld1" "$cd1" "$lll" "$cll"
  if [ "${FUNCS:-0}" = 1 ]; then
    echo; echo "ltorch $op: functions by inclusive cost per op: Ir, D1 read misses, D1 write misses"
    callgrind_annotate --inclusive=yes --show=Ir,D1mr,D1mw "$out/lt.$op" 2>/dev/null |
      awk -v n="$N" '/^ *[0-9,]+ / {
        s = $0; line = ""; k = 0
        while (k < 3 && match(s, /^ *[0-9,]+( \([ 0-9.]+%\))? /)) {
          t = substr(s, 1, RLENGTH); s = substr(s, RLENGTH + 1); split(t, a, " ")
          x = a[1]; gsub(",", "", x); line = line sprintf("%8.1f", x / n); k++
        }
        printf "%s  %s\n", line, substr(s, 1, 120) }' |
      grep -v '???:0x\|libc-start\|below main\|msort\|lua_pcall\|lua_cpcall\|ltorch_pcall\|pmain\|???:main ' | head -40
    echo
  fi
done
