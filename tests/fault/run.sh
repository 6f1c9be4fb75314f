#!/usr/bin/env bash
# The fault-injection suite (issue 27): every tests/fault/*.sh but this one, against BUILD_DIR's
# scanback. Each script says what it checks; this exits 1 when any of them failed.
#   tests/fault/run.sh BUILD_DIR
set -uo pipefail
build="${1:?usage: tests/fault/run.sh BUILD_DIR}"
here="$(cd "$(dirname "$0")" && pwd)"
failed=()
for script in "$here"/*.sh; do
  # ctest runs these in every build (CMakeLists.txt: CraftedTraces, FaultEndpoints): not twice.
  case "$(basename "$script")" in run.sh | crafted_trace.sh | endpoints.sh) continue ;; esac
  name="$(basename "$script" .sh)"
  echo "-- $name"
  begun=$(date +%s)
  if ! "$script" "$build"; then failed+=("$name"); fi
  echo "-- $name: $(($(date +%s) - begun)) s"
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "fault injection: failures in ${failed[*]}" >&2
  exit 1
fi
echo "fault injection: every script passed"
