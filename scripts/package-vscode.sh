#!/usr/bin/env bash
# Builds the VS Code extension (editors/vscode) into build/vscode/scanback-<version>.vsix: a
# linux-x64 package that carries the scanback binary, so installing it is all a Linux user needs.
#
#   scripts/package-vscode.sh                 builds a release scanback (-O2, as CI tests it) in
#                                             build-vscode/, the third-party libraries linked
#                                             statically (it runs on a Debian 12 x86-64 machine
#                                             without the -dev packages)
#   scripts/package-vscode.sh --binary PATH   packages that binary instead (CI reuses build/scanback;
#                                             the copy is stripped; its shared libraries are listed)
#   --out DIR                                 where the .vsix goes (default build/vscode)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
binary=""
out="$root/build/vscode"
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary="$(realpath -- "${2:?--binary needs a path}")"; shift 2 ;;
    --out) out="$(realpath -m -- "${2:?--out needs a directory}")"; shift 2 ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "package-vscode.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
ext="$root/editors/vscode"

# One version: CMake's project(VERSION) is the product's, the extension's must match it.
version="$(sed -n 's/^project(scanback VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")"
ext_version="$(node -p "require('$ext/package.json').version")"
if [ "$version" != "$ext_version" ]; then
  echo "package-vscode.sh: editors/vscode/package.json has version $ext_version, CMakeLists.txt $version: make them equal" >&2
  exit 1
fi

# Libraries every x86-64 Debian 12 has (glibc); anything else must be linked in.
system_libs='^(linux-vdso\.so|libc\.so|libm\.so|ld-linux-x86-64\.so|libpthread\.so|libdl\.so|librt\.so)'
foreign_libs() { ldd "$1" | awk '{n = split($1, p, "/"); print p[n]}' | grep -Ev "$system_libs" || true; }

if [ -z "$binary" ]; then
  "$root/scripts/setup.sh"
  libdir=/usr/lib/x86_64-linux-gnu
  build="$root/build-vscode"
  mkdir -p "$build/static-libs"
  # zstd and xxhash are linked by name (-lzstd): a directory with only their archives, searched
  # first, makes the linker take those. fmt has no archive in Debian: it is compiled in header-only,
  # and --as-needed drops the then unused libfmt.so.
  ln -sf "$libdir/libzstd.a" "$build/static-libs/libzstd.a"
  ln -sf "$libdir/libxxhash.a" "$build/static-libs/libxxhash.a"
  launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCANBACK_BENCH=OFF "${launcher[@]}" \
    -DCapnProto_capnp_IMPORTED_LOCATION="$libdir/libcapnp.a" -DCapnProto_kj_IMPORTED_LOCATION="$libdir/libkj.a" \
    -DCMAKE_CXX_FLAGS="-DFMT_HEADER_ONLY=1" \
    -DCMAKE_EXE_LINKER_FLAGS="-static-libstdc++ -static-libgcc -Wl,--as-needed -L$build/static-libs" >/dev/null
  cmake --build "$build" --target scanback -j"$(nproc)"
  binary="$build/scanback"
  foreign="$(foreign_libs "$binary")"
  if [ -n "$foreign" ]; then
    echo "package-vscode.sh: $binary still needs shared libraries a user's machine may not have:" >&2
    echo "$foreign" >&2
    exit 1
  fi
else
  foreign="$(foreign_libs "$binary")"
  if [ -n "$foreign" ]; then
    echo "package-vscode.sh: note: $binary needs these shared libraries besides glibc (fine where it was" \
      "built; a package for users is built without --binary):" $foreign >&2
  fi
fi

cd "$ext"
export npm_config_cache="${npm_config_cache:-$root/build/npm-cache}"  # nothing cached outside the checkout
stamp=node_modules/.package-lock.sha256
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ ! -d node_modules ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
  echo "$want" >"$stamp"
fi
node_modules/.bin/tsc --noEmit -p .
rm -rf dist bin
node esbuild.mjs --production
mkdir -p bin
cp "$binary" bin/scanback
strip --strip-unneeded bin/scanback
chmod 755 bin/scanback

mkdir -p "$out"
vsix="$out/scanback-$version.vsix"
node_modules/.bin/vsce package --target linux-x64 --no-dependencies --skip-license --allow-missing-repository \
  --out "$vsix" >/dev/null
rm -rf bin
echo "$vsix ($(du -h "$vsix" | cut -f1))"
