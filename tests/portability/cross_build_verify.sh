#!/usr/bin/env bash
# Portability of traces between builds: each program is recorded by one scanback binary and
# verified (every cycle's digest and every keyframe, byte for byte) by the other, both ways.
# CI passes the default build (-O2) and the ASan + UBSan build (-O0), so this also covers
# "recorded with -O0, verified with -O2" and the reverse (docs/architecture.md, determinism).
#   usage: tests/portability/cross_build_verify.sh SCANBACK_A SCANBACK_B
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -eq 2 ] || { echo "usage: $0 SCANBACK_A SCANBACK_B" >&2; exit 2; }
a="$1" b="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

record() {  # binary name args...
  local bin="$1" name="$2"; shift 2
  "$bin" run "$@" --keyframe-every 250 --record "$work/$name.trace" --quiet
}
verify() {  # binary name
  local bin="$1" name="$2" out
  if ! out="$("$bin" trace verify "$work/$name.trace" 2>&1)"; then
    echo "FAIL: $name recorded by one build does not verify with $bin" >&2
    echo "$out" >&2
    return 1
  fi
  echo "  $name: $(grep '^result' <<<"$out")"
}

failed=0
for pair in "$a $b" "$b $a"; do
  set -- $pair
  echo "recorded by $1, verified by $2"
  record "$1" plant examples/plant/*.st --cycles 3000 --inputs examples/plant/stimulus.csv
  record "$1" natives tests/portability/every_native_fb.st --cycles 3000
  verify "$2" plant || failed=1
  verify "$2" natives || failed=1
done
exit $failed
