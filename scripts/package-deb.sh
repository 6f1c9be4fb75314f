#!/usr/bin/env bash
# Builds the Debian package of scanback with CPack: a Release build of the command, then
# scanback_VERSION_amd64.deb (the binary in /usr/bin, the systemd unit scanback-runtime@.service in
# /lib/systemd/system, the bundled example and its service configuration, the documentation; its
# dependencies from dpkg-shlibdeps). Prints the package's path and contents.
#
#   scripts/package-deb.sh [OUT_DIR]      # OUT_DIR: where the .deb goes (default: build-release)
#
# SCANBACK_PACKAGE_BUILD (default build-release) is the build directory, SCANBACK_PACKAGE_TYPE (default
# Release) its build type. Install it with `sudo apt install ./scanback_*.deb` (README, "As a
# service").
set -euo pipefail
cd "$(dirname "$0")/.."
build="${SCANBACK_PACKAGE_BUILD:-build-release}"
out="${1:-$build}"
scripts/setup.sh
options=(-DCMAKE_BUILD_TYPE="${SCANBACK_PACKAGE_TYPE:-Release}" -DSCANBACK_BENCH=OFF
  # cpack installs what is built already: only the command, not the tests.
  -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON)
if command -v ccache >/dev/null; then options+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$build" -G Ninja "${options[@]}" >/dev/null
cmake --build "$build" --target scanback -j"$(nproc)"
(cd "$build" && cpack -G DEB -B "$(cd "$OLDPWD" && mkdir -p "$out" && cd "$out" && pwd)" >/dev/null)
deb="$(ls -t "$out"/scanback_*_*.deb | head -1)"
rm -rf "$out/_CPack_Packages"
echo "$deb"
dpkg-deb --field "$deb"
dpkg-deb --contents "$deb"
