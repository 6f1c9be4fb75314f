#!/usr/bin/env bash
# The Modbus TCP server mode against a Modbus master no one here wrote: Debian's mbpoll (issue 29,
# docs/fieldbus-server.md). A `scanback run --io-serve 0` of a small program that copies a holding
# register and a coil to outputs is written to and read by mbpoll processes:
#   - a register and a coil mbpoll writes reach the program's inputs, and mbpoll reads the outputs
#     the program computed from them (input register, discrete input) and %MW from 10000;
#   - addresses outside the map are answered with an exception (mbpoll says "Illegal data address");
#   - with --io-max-connections 2, two polling mbpolls are served and a third connection is closed,
#     said on stderr; `ctl status --json` counts the clients and the errors;
#   - the run's recording verifies, and replays to the state the run ended with, with no network
#     (in a network namespace of its own when `unshare -rn` is allowed).
#
#   tests/runtime/mbpoll.sh BUILD_DIR
#
# Prints each check; exits non-zero at the first that fails. Needs mbpoll and python3.
set -euo pipefail
build="$(cd "${1:?usage: tests/runtime/mbpoll.sh BUILD_DIR}" && pwd)"
scanback="$build/scanback"
work="$(mktemp -d "${TMPDIR:-/tmp}/scanback_mbpoll.XXXXXX")"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

step() { echo "== $*"; }
check() { echo "  ok: $*"; }
fail() {
  echo "  FAIL: $*" >&2
  [ -e "$work/run.err" ] && { echo "--- scanback run's stderr" >&2; tail -n 20 "$work/run.err" >&2; }
  exit 1
}
# Waits until FILE has a line matching REGEX (up to 20 s); prints the first match.
await_line() {
  for _ in $(seq 200); do
    if grep -m1 -E "$2" "$1" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  return 1
}

cat > "$work/echo.st" <<'EOF'
PROGRAM Echo
VAR
  wordIn AT %IW1 : WORD;
  bitIn AT %IX0.2 : BOOL;
  wordOut AT %QW0 : WORD;
  bitOut AT %QX2.0 : BOOL;
  cycles AT %MW0 : WORD;
END_VAR
wordOut := wordIn + 1;
bitOut := bitIn;
cycles := cycles + 1;
END_PROGRAM

CONFIGURATION Cfg
  TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);
  PROGRAM Main WITH Fast : Echo;
END_CONFIGURATION
EOF

step "scanback run --io-serve 0 --io-max-connections 2, recorded"
"$scanback" run "$work/echo.st" --realtime --io-serve 0 --io-max-connections 2 --record "$work/echo.trace" \
  --control "unix://$work/ctl.sock" --print-state --quiet >"$work/run.json" 2>"$work/run.err" &
run_pid=$!
pids+=("$run_pid")
line="$(await_line "$work/run.err" 'modbus server tcp://127\.0\.0\.1:[0-9]+')" || fail "no 'modbus server' line on stderr"
port="$(sed -E 's|.*tcp://127\.0\.0\.1:([0-9]+).*|\1|' <<<"$line")"
[ "$port" -gt 0 ] || fail "no port in: $line"
check "listening on port $port: $line"

# mbpoll, PDU addressing (-0), once (-1), on the runtime's port; its output on stdout.
mb() { mbpoll -m tcp -p "$port" -0 -1 -o 5 "$@" 2>&1; }
# The value mbpoll read at reference REF: "[REF]: 	VALUE".
value_at() { sed -nE "s/^\[$1\]:[[:space:]]+(-?[0-9]+).*/\1/p" | head -1; }

step "mbpoll writes holding register 1 (%IW1) and coil 2 (%IX0.2)"
mb -t 4 -r 1 127.0.0.1 41 | grep -q "Written 1 references" || fail "mbpoll could not write holding register 1"
mb -t 0 -r 2 127.0.0.1 1 | grep -q "Written 1 references" || fail "mbpoll could not write coil 2"
check "both written"

step "mbpoll reads what the program made of them"
got=""
for _ in $(seq 100); do
  got="$(mb -t 3 -r 0 127.0.0.1 | value_at 0)"
  [ "$got" = 42 ] && break
  sleep 0.1
done
[ "$got" = 42 ] || fail "input register 0 (%QW0) is '$got', expected 42 (the program's %IW1 + 1)"
check "input register 0 (%QW0) = 42"
bit="$(mb -t 1 -r 16 127.0.0.1 | value_at 16)"
[ "$bit" = 1 ] || fail "discrete input 16 (%QX2.0) is '$bit', expected 1 (the coil written)"
check "discrete input 16 (%QX2.0) = 1"
back="$(mb -t 4 -r 1 127.0.0.1 | value_at 1)"
[ "$back" = 41 ] || fail "holding register 1 reads '$back', expected 41"
check "holding register 1 reads back 41"
first="$(mb -t 3 -r 10000 127.0.0.1 | value_at 10000)"
[ -n "$first" ] || fail "input register 10000 (%MW0) could not be read"
for _ in $(seq 100); do
  later="$(mb -t 3 -r 10000 127.0.0.1 | value_at 10000)"
  [ "$later" != "$first" ] && break
  sleep 0.1
done
[ "$later" != "$first" ] || fail "input register 10000 (%MW0, the cycle count) does not change: $first"
check "input register 10000 (%MW0) counts the cycles: $first, then $later"

step "addresses outside the map: exceptions"
for args in "-t 3 -r 5" "-t 3 -r 9999 -c 2" "-t 1 -r 100" "-t 4 -r 3" "-t 0 -r 40"; do
  # shellcheck disable=SC2086
  out="$(mb $args 127.0.0.1 || true)"
  grep -qi "illegal data address" <<<"$out" || fail "mbpoll $args: no 'Illegal data address' exception: $out"
  check "mbpoll $args: Illegal data address"
done
kill -0 "$run_pid" || fail "scanback run ended"

step "the connection limit: two polling mbpolls are served, a third connection is closed"
for i in 1 2; do
  stdbuf -oL mbpoll -m tcp -p "$port" -0 -t 3 -r 0 -l 100 127.0.0.1 >"$work/poller$i.out" 2>&1 &
  pids+=($!)
done
status() { "$scanback" ctl "unix://$work/ctl.sock" status --json; }
io_field() { python3 -c "import json,sys; print(json.load(sys.stdin)['io'][0]['$1'])"; }
for _ in $(seq 200); do
  [ "$(status | io_field clients)" = 2 ] && break
  sleep 0.1
done
[ "$(status | io_field clients)" = 2 ] || fail "ctl status does not count 2 clients: $(status)"
check "ctl status: 2 clients"
out="$(mb -t 3 -r 0 127.0.0.1 || true)"
value_at 0 <<<"$out" | grep -q . && fail "a third connection was served: $out"
await_line "$work/run.err" "2 clients are connected already \(--io-max-connections 2\)" >/dev/null ||
  fail "no line on stderr says a connection was closed at the limit"
check "a third connection is closed, and said"
for i in 1 2; do
  await_line "$work/poller$i.out" "^\[0\]:[[:space:]]+42" >/dev/null || fail "polling mbpoll $i read nothing"
done
check "both polling mbpolls read input register 0 = 42"
errors="$(status | io_field failures)"
[ "$errors" -ge 5 ] || fail "ctl status counts $errors errors, expected at least the 5 exceptions"
check "ctl status: $errors errors (the exceptions), $(status | io_field requests) requests"

step "the recording verifies and replays to the run's end state, with no network"
"$scanback" ctl "unix://$work/ctl.sock" stop >/dev/null
wait "$run_pid" || fail "scanback run exited with $?"
nonet=()
if unshare -rn true 2>/dev/null; then nonet=(unshare -rn); else echo "  (unshare -rn is not allowed here: replaying with the network there)"; fi
"${nonet[@]}" "$scanback" trace verify "$work/echo.trace" >"$work/verify.out" || fail "trace verify: $(cat "$work/verify.out")"
grep -q "faithful" "$work/verify.out" || fail "trace verify: $(cat "$work/verify.out")"
check "trace verify: faithful"
"${nonet[@]}" "$scanback" replay "$work/echo.trace" --to end --print-state >"$work/replay.json"
python3 - "$work/run.json" "$work/replay.json" <<'EOF' || fail "the replay's end state differs from the run's"
import json, sys
run, replay = (json.load(open(p)) for p in sys.argv[1:3])
assert run == replay, (run, replay)
assert run["Main"]["wordIn"] == 41 and run["Main"]["wordOut"] == 42 and run["Main"]["bitIn"] is True, run
EOF
check "replay --to end --print-state equals the run's --print-state (wordIn 41 among them)"
echo "mbpoll: every check passed"
