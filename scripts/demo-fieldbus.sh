#!/usr/bin/env bash
# The bottling line as a closed loop over Modbus TCP (README, "Connect it to a machine"): two
# processes on this machine, as on a real one.
#
#   the machine     scanback run examples/plant/simulator/*.st --realtime --io-serve 0
#                   (simulator/plant_sim.st: the conveyor, the bottles, the tank, an operator),
#                   a Modbus TCP server on a free port of 127.0.0.1;
#   the controller  scanback run examples/plant/*.st --realtime --io plant-io.toml --record ...
#                   (plant-io.toml with that port), which polls it every 10 ms, recorded.
#
# After SECONDS it shows `ctl status` (the device's health), stops both, shows `trace info`, and
# verifies and replays the recording with no network (in a network namespace of its own when
# `unshare -rn` is allowed): what the fieldbus delivered is in the trace.
#
#   scripts/demo-fieldbus.sh [--seconds N] [--out DIR] [--check]
#
#   --seconds N  how long the controller is recorded (default 10)
#   --out DIR    where the recording and the logs go (default: a new directory under /tmp, kept)
#   --check      also assert (ctest FieldbusDemo): the recording verifies exactly, the device
#                answered requests, an output travelled to the machine and back as an input (the
#                conveyor command came back as its contactor's feedback), the level came in, and
#                the replay ends in the state the run ended in; the directory is removed after
#   SCANBACK_BINARY  the scanback executable (default: build/scanback of the repository)
#
# Both runtimes are stopped when the script ends, however it ends (Ctrl-C too).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
scanback="${SCANBACK_BINARY:-$repo/build/scanback}"
seconds=10
out=""
check=0
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="${2:?--seconds needs a number}"; shift 2 ;;
    --out) out="${2:?--out needs a directory}"; shift 2 ;;
    --check) check=1; shift ;;
    -h | --help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "demo-fieldbus.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$seconds" =~ ^[0-9]+$ && "$seconds" -gt 0 ]] || { echo "demo-fieldbus.sh: --seconds: '$seconds' is not a whole number of seconds > 0" >&2; exit 2; }
[ -x "$scanback" ] || { echo "demo-fieldbus.sh: no scanback executable at $scanback (build it, or set SCANBACK_BINARY)" >&2; exit 2; }
if [ -z "$out" ]; then out="$(mktemp -d "${TMPDIR:-/tmp}/scanback_fieldbus.XXXXXX")"; else mkdir -p "$out"; fi
out="$(cd "$out" && pwd)"

pids=()
cleanup() {
  local rc=$?
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "$check" = 1 ] && [ "$rc" = 0 ]; then rm -rf "$out"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say() { echo "== $*"; }
fail() {
  echo "demo-fieldbus.sh: FAIL: $*" >&2
  for f in machine.err line.err; do
    [ -s "$out/$f" ] && { echo "--- $f" >&2; tail -n 15 "$out/$f" >&2; }
  done
  exit 1
}
# Waits until FILE has a line matching REGEX (up to 30 s) and prints it.
await_line() {
  for _ in $(seq 300); do
    if grep -m1 -E "$2" "$1" 2>/dev/null; then return 0; fi
    kill -0 "$3" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

say "the machine: scanback run examples/plant/simulator/*.st --realtime --io-serve 0"
"$scanback" run "$repo"/examples/plant/simulator/*.st --realtime --quiet --io-serve 0 \
  --control "unix://$out/machine.sock" --print-state >"$out/machine.json" 2>"$out/machine.err" &
machine=$!
pids+=("$machine")
line="$(await_line "$out/machine.err" 'modbus server tcp://127\.0\.0\.1:[0-9]+' "$machine")" ||
  fail "the machine's runtime said no 'modbus server' line"
port="$(sed -E 's|.*tcp://127\.0\.0\.1:([0-9]+).*|\1|' <<<"$line")"
echo "$line"

# examples/plant/plant-io.toml, with the port the machine got.
sed -E "s|^endpoint = \"tcp://127\.0\.0\.1:[0-9]+\"|endpoint = \"tcp://127.0.0.1:$port\"|" \
  "$repo/examples/plant/plant-io.toml" >"$out/plant-io.toml"
grep -q "tcp://127.0.0.1:$port\"" "$out/plant-io.toml" || fail "no endpoint line to set in examples/plant/plant-io.toml"

say "the controller: scanback run examples/plant/*.st --realtime --io plant-io.toml --record $out/plant.trace"
# hmi-ack.csv is the operator's acknowledge button: until the first poll the E-stop chain reads
# open, and the controller latches that alarm, as a PLC does at power-up.
"$scanback" run "$repo"/examples/plant/*.st --realtime --quiet --io "$out/plant-io.toml" \
  --inputs "$repo/examples/plant/hmi-ack.csv" --record "$out/plant.trace" \
  --control "unix://$out/line.sock" --print-state >"$out/line.json" 2>"$out/line.err" &
line_pid=$!
pids+=("$line_pid")
ctl() { "$scanback" ctl "unix://$out/line.sock" "$@"; }
for _ in $(seq 300); do
  ctl status >/dev/null 2>&1 && break
  kill -0 "$line_pid" 2>/dev/null || fail "the controller ended"
  sleep 0.1
done
ctl status >/dev/null || fail "the controller's control endpoint does not answer"

say "recording for $seconds s"
sleep "$seconds"  # the demo's length: the time the plant runs, not a wait for something to happen
kill -0 "$line_pid" 2>/dev/null || fail "the controller ended"

say "scanback ctl unix://$out/line.sock status"
ctl status | tee "$out/status.txt"
ctl status --json >"$out/status.json"

say "stopping the controller, then the machine"
ctl stop >/dev/null
wait "$line_pid" || fail "the controller exited with $?"
"$scanback" ctl "unix://$out/machine.sock" stop >/dev/null
wait "$machine" || fail "the machine's runtime exited with $?"
pids=()

nonet=()
if unshare -rn true 2>/dev/null; then
  nonet=(unshare -rn)
  where="in a network namespace with no network"
else
  where="(unshare -rn is not allowed here: with the network, which it does not use)"
fi
say "scanback trace info $out/plant.trace"
"${nonet[@]}" "$scanback" trace info "$out/plant.trace" | tee "$out/info.txt"
say "scanback trace verify $out/plant.trace, $where"
"${nonet[@]}" "$scanback" trace verify "$out/plant.trace" | tee "$out/verify.txt" || fail "trace verify failed"
say "scanback replay $out/plant.trace --to end --print-state, $where"
"${nonet[@]}" "$scanback" replay "$out/plant.trace" --to end --print-state >"$out/replay.json" ||
  fail "the replay failed"
python3 - "$out/line.json" "$out/replay.json" <<'EOF'
import json, sys
run, replay = (json.load(open(p)) for p in sys.argv[1:3])
line = replay["Line"]
print(f"replayed to the end: Line.state {line['state']}, {replay['gStations'][0]['count']} bottles filled, "
      f"{replay['gBottlesOut']} out, tank level {replay['gTank']['level']:.1f} %"
      f" ({'the run ended in the same state' if run == replay else 'NOT the state the run ended in'})")
EOF

if [ "$check" = 1 ]; then
  say "checks"
  grep -q "faithful" "$out/verify.txt" || fail "trace verify did not say 'faithful': $(cat "$out/verify.txt")"
  echo "  ok: trace verify: faithful"
  grep -q "plant (tcp://127.0.0.1:$port" "$out/info.txt" || fail "trace info does not list the device 'plant'"
  echo "  ok: trace info lists the device"
  python3 - "$out/status.json" "$out/line.json" "$out/replay.json" "$out/machine.json" <<'EOF' || fail "see above"
import json, sys
status, run, replay, machine = (json.load(open(p)) for p in sys.argv[1:5])
io = [d for d in status.get("io", []) if d["device"] == "plant"]
assert io, f"ctl status --json has no device 'plant': {status.get('io')}"
assert io[0]["requests"] > 0, f"the device answered no request: {io[0]}"
assert io[0]["state"] == "ok", f"the device is not ok: {io[0]}"
print(f"  ok: ctl status: device plant {io[0]['state']}, {io[0]['requests']} requests")
assert run == replay, "the replay's end state differs from the run's"
print("  ok: the replay ends in the state the run ended in")
line = run["Line"]
# The conveyor command (%QX0.0, coil 0) reached the machine, whose contactor answered on discrete
# input 6, the controller's %IX0.6: an output there and back as an input.
assert machine["PlantSim"]["conveyor"] is True, f"the machine never saw the conveyor command: {machine['PlantSim']}"
assert line["motorFb"] is True and line["motor"]["running"] is True, f"no feedback came back: {line}"
print("  ok: the conveyor command went to the machine (coil 0) and came back as its feedback (discrete input 6)")
assert run["Tank"]["levelRaw"] > 0, "the tank level never came in (input register 2)"
print(f"  ok: the tank level came in: Tank.levelRaw = {run['Tank']['levelRaw']}")
EOF
  echo "demo-fieldbus.sh: every check passed"
else
  echo "The recording and the logs are in $out"
fi
