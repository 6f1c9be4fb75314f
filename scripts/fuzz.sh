#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang under ASan + UBSan in build-fuzz (only the
# fuzz targets and the libraries they link) and runs each for FUZZ_SECONDS (default 60), starting
# from its committed seed corpus and regressions. New inputs go to build-fuzz/corpus/NAME, never into
# the repository; a crash, leak, UB report or timeout fails the run and its input is kept in
# build-fuzz/crashes/ (add it to tests/fuzz/regressions/NAME once fixed: tests/fuzz/README.md).
# Prints libFuzzer's final statistics per target (executions, coverage, exec/s).
#   FUZZ_SECONDS=600 scripts/fuzz.sh            # longer
#   FUZZ_TARGETS="replayer st_frontend" scripts/fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-60}"
targets="${FUZZ_TARGETS:-trace_reader replayer st_frontend dap_stream dap_requests control lsp_stream}"
jobs="$(nproc)"
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCANBACK_FUZZ=ON \
  -DSCANBACK_BENCH=OFF -DSCANBACK_WERROR=ON -DCMAKE_UNITY_BUILD=ON "${launcher[@]}" >/dev/null
build=()
for t in $targets; do build+=("fuzz_$t"); done
cmake --build build-fuzz -j"$jobs" --target "${build[@]}"
mkdir -p build-fuzz/crashes
# One target per core at a time: each fuzzer is a single process.
fuzz_one() {
  local t="$1" work="build-fuzz/corpus/$1"
  mkdir -p "$work"
  # Leaks are reported at exit by LeakSanitizer; -timeout catches hangs (a DAP request that never
  # gets its response, a replay that never ends).
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "build-fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2560 -print_final_stats=1 \
    -artifact_prefix="build-fuzz/crashes/$t-" "$work" "tests/fuzz/corpus/$t" "tests/fuzz/regressions/$t" \
    >"build-fuzz/fuzz_$t.log" 2>&1
}
echo "-- fuzzing $targets for ${seconds}s each, $jobs at a time"
declare -A pids
running=0
for t in $targets; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  pids[$t]=$!
  running=$((running + 1))
done
failed=()
for t in $targets; do
  log="build-fuzz/fuzz_$t.log"
  echo "-- fuzz_$t"
  if ! wait "${pids[$t]}"; then
    failed+=("$t")
    tail -n 60 "$log"
  fi
  # The last status line (executions, coverage, features, corpus) and the final statistics.
  grep -E '^#[0-9]+' "$log" | tail -n 1 || true
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' "$log" || true
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz: findings in ${failed[*]} (inputs in build-fuzz/crashes/)" >&2
  exit 1
fi
echo "fuzz: no crash in $targets"
