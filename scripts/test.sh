#!/usr/bin/env bash
# scripts/test.sh — run ltorch's whole spec suite (busted, under the ltorch host).
#
# What it does: runs `build/ltorch /usr/bin/busted` from the repo root over spec/ (config
# in .busted: files ending in _spec.lua; the host sets the Lua search paths). The output
# handler spec/support/summary_output.lua prints each failure with its name, message and
# traceback, then the summary. The LAST line printed is always
#   N passed, N failed[, N skipped]
# and the exit status is non-zero when anything failed or errored, or no test ran.
#
# Use: bash scripts/test.sh                    (after bash scripts/setup.sh)
#      bash scripts/test.sh spec/data          (extra arguments go to busted)
#      LTORCH=luajit bash scripts/test.sh      (another interpreter, for debugging)
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1

LTORCH=${LTORCH:-build/ltorch}
BUSTED=${BUSTED:-/usr/bin/busted}
HANDLER=spec/support/summary_output.lua
SUMMARY_RE='^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$'

# Failing before any test runs still ends with a summary line, for CI.
fail_early() {
  echo "test: error: $*"
  echo "0 passed, 1 failed"
  exit 1
}

if [ "$LTORCH" = build/ltorch ] && [ ! -x build/ltorch ]; then
  fail_early "build/ltorch not found; run: bash scripts/setup.sh"
fi
command -v "$LTORCH" >/dev/null 2>&1 || [ -x "$LTORCH" ] \
  || fail_early "interpreter '$LTORCH' not found"
[ -f "$BUSTED" ] || fail_early "$BUSTED not found (Debian package lua-busted)"

LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT

# Output streams live (stderr folded in) and is kept for the checks below.
"$LTORCH" "$BUSTED" -o "$HANDLER" "$@" 2>&1 | tee "$LOG"
rc=${PIPESTATUS[0]}

summary=$(grep -E "$SUMMARY_RE" "$LOG" | tail -n 1)
if [ -z "$summary" ]; then
  fail_early "busted exited with status $rc without a summary line"
fi
# Something printed after the summary (e.g. at interpreter exit): repeat it last.
last=$(tail -n 1 "$LOG")
[ "$last" = "$summary" ] || echo "$summary"

# busted's own status is failures+errors, which wraps to 0 at 256: trust the counts.
passed=$(echo "$summary" | sed -E 's/^([0-9]+) passed.*/\1/')
failed=$(echo "$summary" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
  # The counts look clean but the interpreter did not (e.g. a crash at exit).
  echo "test: error: $LTORCH exited with status $rc after the summary"
  echo "$passed passed, 1 failed"
  exit 1
fi
if [ "$failed" -gt 0 ] || [ "$passed" -eq 0 ] || [ "$rc" -ne 0 ]; then
  exit 1
fi
exit 0
