#!/usr/bin/env bash
# fuzz/run.sh — build the libFuzzer harness (clang) and run it for a bounded time over the
# checked-in corpus (fuzz/corpus), printing libFuzzer's stats and a final line
#   fuzz: N executions, 0 crashes in S s
# Exit status non-zero on a crash (the crashing input is left in build/fuzz/).
# Use: bash fuzz/run.sh [seconds=30]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SECS=${1:-30}
OUT="$ROOT/build/fuzz"
mkdir -p "$OUT/corpus"
CC=${FUZZ_CC:-clang}
command -v "$CC" >/dev/null || { echo "fuzz: $CC not found (Debian package clang)"; exit 2; }
if [ ! -x "$OUT/fuzz_parsers" ] || [ "$ROOT/fuzz/fuzz_parsers.c" -nt "$OUT/fuzz_parsers" ]; then
  # shellcheck disable=SC2046
  "$CC" -O1 -g -fsanitize=fuzzer,address "$ROOT/fuzz/fuzz_parsers.c" -o "$OUT/fuzz_parsers" \
    $(pkg-config --cflags --libs luajit)
fi
cd "$OUT"
LOG=$(mktemp "$OUT/fuzz.XXXXXX.log")  # one log per run: concurrent runs must not mix
set +e
LTORCH_LUA="$ROOT/lua" ASAN_OPTIONS=detect_leaks=0 "$OUT/fuzz_parsers" -max_total_time="$SECS" \
  -rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=10 -print_final_stats=1 \
  "$OUT/corpus" "$ROOT/fuzz/corpus" >"$LOG" 2>&1
rc=$?
set -e
grep -a -E "^(stat::|Done |INFO: (Loaded|seed))" "$LOG" || true
execs=$(grep -a -E '^stat::number_of_executed_units' "$LOG" | awk '{print $2}' | tail -n 1)
if [ $rc -ne 0 ]; then
  echo "fuzz: ${execs:-?} executions, CRASH (exit $rc); see $LOG"
  exit 1
fi
echo "fuzz: ${execs:-0} executions, 0 crashes in $SECS s"
