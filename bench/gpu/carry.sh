#!/usr/bin/env bash
# bench/gpu/carry.sh — gathers, on this Debian 12 machine, what bench/gpu/check.sh needs on a GPU
# machine that has PyTorch but nothing else of ours and no network: the Debian packages of
# LuaJIT (library and headers), the stb image headers, pkg-config, busted and its Lua modules,
# lua-cjson, and the data of the two recipes it runs there (Fashion-MNIST, the fortunes in six
# languages), as .deb files under .gpu_carry/debs (git-ignored; about 35 MB).
#
# check.sh unpacks them into a private prefix (never into /) and points the build, the host and
# busted at it. They are Debian 12 builds: plain C/Lua against glibc 2.36, so they run on any
# newer glibc (the GPU image is Ubuntu-like with Python 3.12).
#
# Use:  bash bench/gpu/carry.sh            (apt-get update first if the lists are missing)
# Then, with the device tool: run `bash bench/gpu/check.sh` with carry [".gpu_carry"].
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DEST="$ROOT/.gpu_carry/debs"
PACKAGES=(
  libluajit2-5.1-2 libluajit2-5.1-dev   # the host links LuaJIT (the same variant setup.sh installs)
  libstb-dev                            # runtime/image.c's stb headers (CMake requires them)
  pkgconf pkgconf-bin libpkgconf3       # CMake finds LuaJIT through pkg-config
  lua-busted lua-cliargs lua-dkjson lua-filesystem lua-luassert lua-mediator lua-penlight
  lua-say lua-system lua-term lua-cjson # busted and what it loads
  dataset-fashion-mnist                 # the main recipe's data (LTORCH_FASHION_MNIST_DIR there)
  fortunes fortunes-de fortunes-es fortunes-it fortunes-pl fortunes-br   # the transformer recipe's
)

rm -rf "$DEST"
mkdir -p "$DEST"
cd "$DEST"
# apt-get download writes into the current directory; as root it warns that _apt cannot write
# here, which is harmless.
apt-get download "${PACKAGES[@]}" 2>&1 | grep -v "^W: Download is performed unsandboxed" || true
count=$(ls -1 "$DEST"/*.deb 2>/dev/null | wc -l)
[ "$count" -eq "${#PACKAGES[@]}" ] || { echo "carry: got $count of ${#PACKAGES[@]} packages in $DEST" >&2; exit 1; }
echo "carry: ${count} packages in $DEST ($(du -sh "$DEST" | cut -f1))"
