#!/usr/bin/env bash
# Builds and runs the whole test suite: the normal build, then the same tests under
# AddressSanitizer + UndefinedBehaviorSanitizer, ThreadSanitizer for the threaded code, and the
# fuzz targets for FUZZ_SECONDS each (default 30 here, to keep CI under 45 minutes; 0 skips them;
# scripts/fuzz.sh alone runs 60). Exits non-zero when anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each stage's wall time, printed as it ends and again in a table at the end (CI has 90 minutes and
# should stay under 45: the table says where they go).
started=$(date +%s)
stage_name=""
stage_began=$started
stage_times=()
stage() {  # NAME: ends the stage under way, begins NAME
  local now
  now=$(date +%s)
  if [ -n "$stage_name" ]; then
    echo "-- $stage_name: $((now - stage_began)) s"
    stage_times+=("$(printf '%6d s  %s' $((now - stage_began)) "$stage_name")")
  fi
  stage_name="$1"
  stage_began=$now
  [ -n "$1" ] && echo "== $1"
  return 0
}
summary() {
  stage ""
  echo "== stage times"
  printf '%s\n' "${stage_times[@]}"
  printf '%6d s  total\n' $(($(date +%s) - started))
}
trap 'status=$?; if [ $status -ne 0 ]; then failed="$stage_name"; summary; echo "== FAILED in: $failed"; fi; exit $status' EXIT

stage "setup"
scripts/setup.sh
jobs="$(nproc)"
# CI builds treat warnings as errors (-Wall -Wextra -Wpedantic -Wshadow, CMakeLists.txt), and
# compile a target's files in batches (a unity build: each header parsed once per batch, half the
# compile time of a clean build; docs/architecture.md, house rules).
ci=(-DSCANBACK_WERROR=ON -DCMAKE_UNITY_BUILD=ON)
# ccache, when the machine has it, makes a rerun on the same machine rebuild only what changed.
if command -v ccache >/dev/null; then ci+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi

stage "format and layers"
scripts/check-format.sh
scripts/check-layers.sh

stage "build (RelWithDebInfo)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${ci[@]}" >/dev/null
cmake --build build -j"$jobs"
stage "tests"
(cd build && ctest --output-on-failure -j"$jobs")

stage "build (ASan + UBSan)"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSCANBACK_SANITIZE=ON -DSCANBACK_BENCH=OFF "${ci[@]}" >/dev/null
cmake --build build-asan -j"$jobs"
stage "tests under ASan + UBSan"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j"$jobs")

stage "traces between builds: recorded with -O2, verified with -O0 + ASan, and the reverse"
tests/portability/cross_build_verify.sh build/scanback build-asan/scanback

stage "fault injection: recordings killed and starved, endpoints flooded, crafted traces (tests/fault)"
tests/fault/run.sh build

stage "build (ThreadSanitizer: the recorder's scan and writer threads, replayers on several threads, DAP sessions beside a running target, the runtime host's scan thread beside its control server and its Modbus server, trace diff's two readers, the language server's diagnostics thread, the Modbus devices' I/O threads beside the scan thread, forces set from a DAP session beside a running task)"
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSCANBACK_TSAN=ON -DSCANBACK_BENCH=OFF "${ci[@]}" >/dev/null
cmake --build build-tsan --target recorder_tests replayer_tests dap_tests control_tests net_tests runtime_tests compare_tests lsp_tests io_tests -j"$jobs"
stage "recorder, replayer, DAP, control, net, runtime host, compare, language server and Modbus I/O thread tests under ThreadSanitizer"
(cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -R '^(Recorder\.|Durability\.|Replayer\.|DapSession\.|DapReplay\.|DapLiveHistory\.|DapNonstop\.|DapRunControl\.|DapEstablished\.|Net[A-Za-z]*\.|ControlStream\.|ControlServer\.|ControlLimits\.|Attach\.|LiveEdge\.|NonstopEdge\.|AttachEdge|RuntimeHost\.|RuntimeHostNotify\.|ModbusServer\.|Lsp[A-Za-z]*\.|Diff\.|Rerun\.|ReadAhead\.|Golden/Pairs\.|ModbusDevice\.|Policies/DeviceRestart\.|DapForce\.)' \
  -E '^NonstopEdge\.LineBreakpointsConditionsAndHitCounts' -j"$jobs")
# (That test waits for the live task to record 30,000 cycles of 10 ms whenever the replay is slower
# than the task, as under ThreadSanitizer: 5 minutes. It runs in the other builds.)

export FUZZ_SECONDS="${FUZZ_SECONDS:-30}"
if [ "$FUZZ_SECONDS" != 0 ]; then
  stage "fuzzing (clang, libFuzzer, ASan + UBSan): each target for $FUZZ_SECONDS s"
  scripts/fuzz.sh
fi

stage "VS Code extension: grammar, extension logic, the Scan Timeline in chromium, the .vsix, end to end in code-server"
SCANBACK_BINARY=build/scanback editors/vscode/test/run.sh

trap - EXIT
summary
