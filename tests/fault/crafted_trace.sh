#!/usr/bin/env bash
# Crafted traces against the image limit (issue 27; docs/language.md, "Limits"): every command
# that opens a trace ends with a clear error naming the trace and exit code 2 — never a crash, and
# never an allocation of what the trace claims. Each command runs under an address-space limit
# far below what obeying the trace would need.
#
#   tests/fault/crafted_trace.sh BUILD_DIR      (needs BUILD_DIR/scanback and BUILD_DIR/craft_trace)
set -u
build=${1:?usage: crafted_trace.sh BUILD_DIR}
scanback=$build/scanback
craft=$build/craft_trace
for tool in "$scanback" "$craft"; do
  [[ -x $tool ]] || { echo "crafted_trace: $tool is missing (build the scanback and craft_trace targets)"; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# scanback starts in about 40 MB of address space; the smallest of the crafted images is 200 MB.
limit=$((160 * 1024 * 1024))
limiter=(prlimit --as=$limit)
if ! prlimit --as=$limit "$scanback" --version >/dev/null 2>&1; then
  # A sanitizer build reserves terabytes of address space: it cannot run under the limit.
  echo "note: $scanback does not start under an address-space limit (a sanitizer build): the checks run without one"
  limiter=()
fi
failures=0

# expect NAME TRACE MESSAGE COMMAND...: exit 2, MESSAGE and the trace's path on stderr.
expect() {
  local name=$1 trace=$2 message=$3
  shift 3
  local err=$work/stderr rc
  "${limiter[@]}" "$@" >/dev/null 2>"$err"
  rc=$?
  if [[ $rc -eq 2 ]] && grep -qF -- "$message" "$err" && grep -qF -- "$trace" "$err"; then
    echo "ok    $name: exit 2, '$message'"
  else
    echo "FAIL  $name: exit $rc (expected 2 and '$message' naming $trace); stderr:"
    sed 's/^/      /' "$err"
    failures=$((failures + 1))
  fi
}

for kind in huge-sources sources-beyond-header image-beyond-limit image-mismatch; do
  "$craft" "$kind" "$work/$kind.trace" || { echo "FAIL  cannot craft $kind"; exit 1; }
done

# The header's claim is refused when the trace is opened, by every command.
t=$work/image-beyond-limit.trace
m="the header claims an image of 4294967295 bytes; scanback's limit is 268435456 bytes (256 MiB)"
expect "trace info, header beyond the limit" "$t" "$m" "$scanback" trace info "$t"
expect "trace dump, header beyond the limit" "$t" "$m" "$scanback" trace dump "$t"
expect "trace verify, header beyond the limit" "$t" "$m" "$scanback" trace verify "$t"
expect "trace export, header beyond the limit" "$t" "$m" "$scanback" trace export "$t" --csv "$work/out.csv"
expect "replay, header beyond the limit" "$t" "$m" "$scanback" replay "$t" --to 0

# Sources beyond the limit (4 GiB of variables) or beyond what the header recorded: they do not
# compile, and nothing of their size is allocated.
t=$work/huge-sources.trace
m="ARRAY[0..268435455] OF BYTE"
expect "replay, 4 GiB of variables" "$t" "the image would need 268435464 bytes with global 'g0'" \
  "$scanback" replay "$t" --to 0
expect "trace verify, 4 GiB of variables" "$t" "does not compile" "$scanback" trace verify "$t"
expect "trace export, 4 GiB of variables" "$t" "does not compile" "$scanback" trace export "$t" --csv "$work/out.csv"
expect "trace why, 4 GiB of variables" "$t" "does not compile" "$scanback" trace why "$t" Main.x --at 0
expect "trace hits, 4 GiB of variables" "$t" "does not compile" "$scanback" trace hits "$t" main.st:20
t=$work/sources-beyond-header.trace
m="the image would need 200000008 bytes with program instance 'Main'; the trace recorded an image of 72 bytes"
expect "replay, sources beyond the header" "$t" "$m" "$scanback" replay "$t" --to 0
expect "trace verify, sources beyond the header" "$t" "$m" "$scanback" trace verify "$t"
expect "trace export, sources beyond the header" "$t" "$m" "$scanback" trace export "$t" --vcd "$work/out.vcd"

# A header that names another image size than its program compiles to.
t=$work/image-mismatch.trace
m="the program compiles differently from the recording"
expect "replay, image size mismatch" "$t" "$m" "$scanback" replay "$t" --to 0
expect "trace verify, image size mismatch" "$t" "$m" "$scanback" trace verify "$t"
expect "trace export, image size mismatch" "$t" "$m" "$scanback" trace export "$t" --csv "$work/out.csv"
expect "trace hits, image size mismatch" "$t" "$m" "$scanback" trace hits "$t" main.st:5

# trace info and dump read a trace without compiling its program: on these they show what the
# trace says, and exit 0 (the header's claims are within the limit).
for kind in huge-sources sources-beyond-header image-mismatch; do
  for cmd in info dump; do
    if "${limiter[@]}" "$scanback" trace $cmd "$work/$kind.trace" >/dev/null 2>"$work/stderr"; then
      echo "ok    trace $cmd, $kind: shown without compiling"
    else
      echo "FAIL  trace $cmd, $kind: exit $?"; sed 's/^/      /' "$work/stderr"
      failures=$((failures + 1))
    fi
  done
done

if [[ $failures -gt 0 ]]; then
  echo "crafted_trace: $failures check(s) failed"
  exit 1
fi
echo "crafted_trace: all checks passed"
