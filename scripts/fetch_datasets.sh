#!/usr/bin/env bash
# scripts/fetch_datasets.sh — fetch the real datasets torch.utils.data's loaders and specs use.
#
# What (idempotent: anything already present is left alone; versions pinned):
#   - Debian packages installed (apt-get): dataset-fashion-mnist, fortunes, fortunes-de,
#     fortunes-es, fortunes-it (plain text under /usr/share/games/fortunes);
#   - python3-sklearn_1.2.1+dfsg-1 (iris, wine, breast_cancer, digits tables): NOT installed
#     (it pulls 17 dependencies) but `apt-get download` + `dpkg-deb -x` into
#     $CACHE/sklearn, where torch.data.datasets.sklearn looks.
# CACHE is $LTORCH_DATA_CACHE, default ~/.cache/ltorch/datasets.
#
# Use: bash scripts/fetch_datasets.sh          (root, or a user with sudo for apt-get install)
#      LTORCH_DATA_CACHE=/data/cache bash scripts/fetch_datasets.sh
set -euo pipefail

CACHE=${LTORCH_DATA_CACHE:-${HOME:-/tmp}/.cache/ltorch/datasets}
SKLEARN_VERSION=1.2.1+dfsg-1
APT_PACKAGES=(dataset-fashion-mnist fortunes fortunes-de fortunes-es fortunes-it)

say() { echo "fetch_datasets: $*"; }
die() { echo "fetch_datasets: error: $*" >&2; exit 1; }

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || die "not root and sudo is not installed; run as root"
  SUDO=(sudo)
fi

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'; }

missing=()
for p in "${APT_PACKAGES[@]}"; do installed "$p" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing: ${missing[*]}"
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q || die "apt-get update failed"
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${missing[@]}" || die "apt-get install failed for: ${missing[*]}"
else
  say "Debian dataset packages already installed"
fi

SK_DIR="$CACHE/sklearn"
SK_DATA="$SK_DIR/usr/lib/python3/dist-packages/sklearn/datasets/data"
if [ -f "$SK_DATA/iris.csv" ]; then
  say "sklearn tables already in $SK_DATA"
else
  mkdir -p "$SK_DIR"
  tmp=$(mktemp -d)
  ( cd "$tmp" && apt-get download "python3-sklearn=$SKLEARN_VERSION" >/dev/null 2>&1 ) \
    || ( "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null \
         && cd "$tmp" && apt-get download "python3-sklearn=$SKLEARN_VERSION" ) \
    || die "apt-get download python3-sklearn=$SKLEARN_VERSION failed"
  dpkg-deb -x "$tmp"/python3-sklearn_*.deb "$SK_DIR" || die "dpkg-deb -x failed"
  # keep only the data tables (the package is ~30 MB of Python)
  find "$SK_DIR/usr/lib/python3/dist-packages/sklearn" -mindepth 1 -maxdepth 1 ! -name datasets -exec rm -rf {} +
  rm -rf "$tmp"
  [ -f "$SK_DATA/iris.csv" ] || die "iris.csv missing after unpacking python3-sklearn"
  say "sklearn tables unpacked into $SK_DATA"
fi
