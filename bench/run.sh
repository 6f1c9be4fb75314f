#!/usr/bin/env bash
# bench/run.sh - build scan_bench in Release (once) and run it, then print a compact summary:
# "program, scanback ns/cycle, Lua ns/cycle, ratio".
#
#   bench/run.sh                                  every benchmark
#   bench/run.sh --benchmark_filter=plant         extra arguments go to scan_bench
#   SCANBACK_BUILD_DIR=/tmp/rel bench/run.sh      another build directory (default: build-release/)
#   JOBS=4 bench/run.sh                           parallel build jobs (default: 2)
#
# Needs libbenchmark-dev; lua5.4 for the Lua comparison (without it the Lua columns stay empty).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SCANBACK_BUILD_DIR:-$root/build-release}"
jobs="${JOBS:-2}"

configured_type=""
if [[ -f "$build/CMakeCache.txt" ]]; then
  configured_type="$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")"
fi
if [[ "$configured_type" != "Release" ]]; then
  generator=()
  if [[ ! -f "$build/CMakeCache.txt" ]] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DSCANBACK_BENCH=ON >/dev/null
fi
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! cmake --build "$build" --target scan_bench -j "$jobs" >"$log" 2>&1; then
  cat "$log" >&2
  echo "run.sh: building scan_bench in $build failed" >&2
  exit 1
fi

if ! command -v "${SCANBACK_LUA:-lua5.4}" >/dev/null; then
  echo "run.sh: lua5.4 not found: no Lua comparison (apt-get install lua5.4)" >&2
fi

"$build/bench/scan_bench" --benchmark_counters_tabular=true \
  --benchmark_out="$build/bench/scan_bench.json" --benchmark_out_format=json --summary "$@"
