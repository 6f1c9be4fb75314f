#!/usr/bin/env bash
# Builds and runs the whole test suite: the normal build, then the same tests under
# AddressSanitizer + UndefinedBehaviorSanitizer, ThreadSanitizer for the threaded code, and the
# fuzz targets for FUZZ_SECONDS each (default 60; 0 skips them). Exits non-zero when anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
jobs="$(nproc)"
# CI builds treat warnings as errors (-Wall -Wextra -Wpedantic -Wshadow, CMakeLists.txt), and
# compile a target's files in batches (a unity build: each header parsed once per batch, half the
# compile time of a clean build; docs/architecture.md, house rules).
ci=(-DSCANBACK_WERROR=ON -DCMAKE_UNITY_BUILD=ON)
# ccache, when the machine has it, makes a rerun on the same machine rebuild only what changed.
if command -v ccache >/dev/null; then ci+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi

echo "== format"
scripts/check-format.sh

echo "== build (RelWithDebInfo)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${ci[@]}" >/dev/null
cmake --build build -j"$jobs"
echo "== tests"
(cd build && ctest --output-on-failure -j"$jobs")

echo "== build (ASan + UBSan)"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSCANBACK_SANITIZE=ON -DSCANBACK_BENCH=OFF "${ci[@]}" >/dev/null
cmake --build build-asan -j"$jobs"
echo "== tests under ASan + UBSan"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j"$jobs")

echo "== traces between builds: recorded with -O2, verified with -O0 + ASan, and the reverse"
tests/portability/cross_build_verify.sh build/scanback build-asan/scanback

echo "== build (ThreadSanitizer: the recorder's scan and writer threads, replayers on several threads, DAP sessions beside a running target)"
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSCANBACK_TSAN=ON -DSCANBACK_BENCH=OFF "${ci[@]}" >/dev/null
cmake --build build-tsan --target recorder_tests replayer_tests dap_tests control_tests net_tests -j"$jobs"
echo "== recorder, replayer and DAP thread tests under ThreadSanitizer"
(cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -R '^(Recorder\.|Replayer\.|DapSession\.|DapReplay\.|DapLiveHistory\.|DapNonstop\.|DapRunControl\.|DapEstablished\.|Net[A-Za-z]*\.|ControlStream\.|ControlServer\.|ControlLimits\.|Attach\.)' -j"$jobs")

if [ "${FUZZ_SECONDS:-60}" != 0 ]; then
  echo "== fuzzing (clang, libFuzzer, ASan + UBSan): each target for ${FUZZ_SECONDS:-60} s"
  scripts/fuzz.sh
fi

echo "== VS Code extension: grammar, extension logic, the Scan Timeline in chromium, the .vsix, end to end in code-server"
SCANBACK_BINARY=build/scanback editors/vscode/test/run.sh
