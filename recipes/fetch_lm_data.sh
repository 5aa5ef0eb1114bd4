#!/usr/bin/env bash
# recipes/fetch_lm_data.sh — fetch the corpora recipes/lora_finetune.lua uses, pinned:
#   - Debian bible-kjv-text (the King James Bible in the `bible` reader's compressed format)
#     and bible-kjv (that reader): apt-get download + dpkg-deb -x, NOT installed; the reader
#     dumps every verse in order (bible -f Gen1:1-Rev22:21: one "Ge1:1 text" line a verse),
#     the references are cut -> $CACHE/bible-kjv/kjv.txt, 31,102 lines, one verse a line,
#     plain ASCII (so UTF-8), 4.1 MB, checked against its SHA-256
#   - Debian golang-github-golang-leveldb-dev (apt-get download + dpkg-deb -x, NOT installed:
#     it would pull in Go) -> $CACHE/hamlet/hamlet-act-1.txt
# and the Debian packages fortunes-pl fortunes-br that recipes/train_transformer.lua needs
# beside those scripts/fetch_datasets.sh installs. CACHE is $LTORCH_DATA_CACHE, default
# ~/.cache/ltorch/datasets. Idempotent: a corpus already in CACHE is kept.
# Use: bash recipes/fetch_lm_data.sh          (root, or a user with sudo for apt-get install)
set -euo pipefail
CACHE=${LTORCH_DATA_CACHE:-${HOME:-/tmp}/.cache/ltorch/datasets}
BIBLE=(bible-kjv=4.38 bible-kjv-text=4.38)
KJV_SHA256=b5c4940bcfeee072c0935b5200d0f9d88a00a0199cb0961d16133458fcdfae5d
KJV_VERSES=31102
LEVELDB=golang-github-golang-leveldb-dev=0.0~git20161231.0.3435554-3
say() { echo "fetch_lm_data: $*"; }
die() { echo "fetch_lm_data: error: $*" >&2; exit 1; }
SUDO=(); [ "$(id -u)" -ne 0 ] && SUDO=(sudo)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

if [ -s "$CACHE/bible-kjv/kjv.txt" ]; then say "King James Bible already in $CACHE/bible-kjv"
else
  ( cd "$tmp" && apt-get download "${BIBLE[@]}" >/dev/null ) \
    || die "apt-get download ${BIBLE[*]} failed (Debian packages bible-kjv and bible-kjv-text)"
  for deb in "$tmp"/bible-kjv_*.deb "$tmp"/bible-kjv-text_*.deb; do
    dpkg-deb -x "$deb" "$tmp/x" || die "dpkg-deb -x $(basename "$deb") failed"
  done
  # -f: no pretty-printing, one verse a line; -p: only the extracted data, never ./bible.data.
  ( cd "$tmp" && "$tmp/x/usr/bin/bible" -f -p "$tmp/x/usr/lib" Gen1:1-Rev22:21 </dev/null ) \
    | sed 's/^[^ ]* //' >"$tmp/kjv.txt" \
    || die "the bible reader from ${BIBLE[0]} failed to dump the text of ${BIBLE[1]}"
  n=$(wc -l <"$tmp/kjv.txt")
  [ "$n" -eq "$KJV_VERSES" ] || die "the Bible dumped from ${BIBLE[1]} has $n verses, expected $KJV_VERSES"
  echo "$KJV_SHA256  $tmp/kjv.txt" | sha256sum -c --quiet - \
    || die "the Bible dumped from ${BIBLE[1]} does not match its pinned SHA-256"
  mkdir -p "$CACHE/bible-kjv"
  mv "$tmp/kjv.txt" "$CACHE/bible-kjv/kjv.txt"
  say "King James Bible -> $CACHE/bible-kjv/kjv.txt"
fi
if [ -f "$CACHE/hamlet/hamlet-act-1.txt" ]; then say "Hamlet act I already in $CACHE/hamlet"
else
  mkdir -p "$CACHE/hamlet"
  ( cd "$tmp" && apt-get download "$LEVELDB" >/dev/null ) || die "apt-get download $LEVELDB failed"
  dpkg-deb -x "$tmp"/golang-github-golang-leveldb-dev_*.deb "$tmp/x" || die "dpkg-deb -x failed"
  cp "$tmp/x/usr/share/gocode/src/github.com/golang/leveldb/testdata/hamlet-act-1.txt" "$CACHE/hamlet/"
fi
missing=()
for p in fortunes-pl fortunes-br; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" \
    || die "apt-get install ${missing[*]} failed"
fi
say "done"
