#!/usr/bin/env bash
# Installs what is missing, builds scanback and runs the bundled plant example for 500 cycles,
# printing its final state (JSON, stdout) and cycle statistics (stderr).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
cmake --build build --target scanback -j"$(nproc)" >&2  # progress on stderr: stdout is the JSON state
./build/scanback run examples/plant/*.st --cycles 500 --inputs examples/plant/stimulus.csv --print-state
