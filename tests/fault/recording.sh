#!/usr/bin/env bash
# Fault injection on recordings (issue 27, docs/architecture.md: traces are self-contained and
# crash-safe): real `scanback run` processes on the bundled plant, in real time, in every recording
# mode, killed with -9 at random moments, ended by SIGHUP/SIGTERM/SIGINT and SIGPIPE, writing to a
# "full disk" (a file size limit, lifted again while it runs), two writers to one path, and SIGUSR1
# sent to a plain run. Each check says what it checks; the script exits 1 when any fails.
#
#   tests/fault/recording.sh BUILD_DIR [ROUNDS]      (ROUNDS of kill -9 per mode, default 2)
set -uo pipefail
build=$(cd "${1:?usage: recording.sh BUILD_DIR [ROUNDS]}" && pwd)
rounds=${2:-2}
scanback="$build/scanback"
cd "$(dirname "$0")/../.."
plant=(examples/plant/config.st examples/plant/fbs.st examples/plant/programs.st examples/plant/types.st)
stimulus=examples/plant/stimulus.csv
work=$(mktemp -d /tmp/scanback-fault-recording.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
failures=0
# The plant's two tasks run 110 cycles per second of virtual time, which --realtime makes wall time.
rate=110
window_ms=1000

pass() { echo "  ok    $*"; }
fail() { echo "  FAIL  $*"; failures=$((failures + 1)); }

# cycles_in TRACE: the number of cycles the trace (or .partial) holds, from `trace info --json`.
cycles_in() {
  "$scanback" trace info "$1" --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["cycles"]["recorded"])' 2>/dev/null || echo -1
}
# verify TRACE: `trace verify` says every cycle in it replays as recorded.
verify() { "$scanback" trace verify "$1" >"$work/verify.txt" 2>&1; }
# wait_for COMMAND...: polls until it succeeds (10 s at most).
wait_for() {
  for _ in $(seq 1 200); do "$@" && return 0; sleep 0.05; done
  return 1
}
ms_now() { date +%s%3N; }

echo "== kill -9 at random moments: what is on disk is at most the flush window (${window_ms} ms) behind"
check_killed() {  # MODE TRACE-TO-READ ARGS...
  local mode=$1 file=$2
  shift 2
  for round in $(seq 1 "$rounds"); do
    rm -f "$work"/t.trace* "$work"/sock
    "$scanback" run "${plant[@]}" --inputs "$stimulus" --realtime --quiet "$@" 2>"$work/err.txt" &
    local pid=$!
    # Wait for the run to be recording, then a random 1.5..4 s more.
    wait_for test -e "$file" || { fail "$mode: no $file ($(cat "$work/err.txt"))"; kill -9 $pid; continue; }
    local start
    start=$(ms_now)
    sleep "$(python3 -c 'import random; print(round(random.uniform(1.5, 4.0), 2))')"
    kill -9 $pid
    local killed
    killed=$(ms_now)
    { wait $pid; } 2>/dev/null
    # Cycles run by then: at least the wall time since the file appeared, at the plant's rate.
    local ran=$(((killed - start) * rate / 1000))
    local held
    held=$(cycles_in "$file")
    local lost=$((ran - held))
    local allowed=$(((window_ms + 300) * rate / 1000))
    if [ "$held" -gt 0 ] && [ "$lost" -le "$allowed" ] && verify "$file"; then
      pass "$mode round $round: $held cycles on disk after kill -9 (>= $ran run since start - $allowed), all replay"
    else
      fail "$mode round $round: $held cycles on disk, $ran run, at most $allowed may be lost: $(tail -2 "$work/verify.txt")"
    fi
  done
}
check_killed "plain --record" "$work/t.trace.partial" --record "$work/t.trace"
check_killed "--record --ring 64MB" "$work/t.trace.partial" --record "$work/t.trace" --ring 64MB
check_killed "--control with --record" "$work/t.trace.partial" --record "$work/t.trace" --control "unix://$work/sock"
check_killed "--control with --record --ring" "$work/t.trace.partial" --record "$work/t.trace" --ring 1MB \
  --control "unix://$work/sock"

# A debug session's history: `scanback dap --socket`, a launch that records, driven by a minimal DAP
# client (python3) that reads everything the adapter sends; the adapter is killed with -9.
cat >"$work/dap_client.py" <<'PY'
import json, socket, sys, threading
sock = socket.socket(socket.AF_UNIX)
sock.connect(sys.argv[1])
def send(seq, command, arguments):
    body = json.dumps({"seq": seq, "type": "request", "command": command, "arguments": arguments}).encode()
    sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
def drain():
    while sock.recv(65536):
        pass
threading.Thread(target=drain, daemon=True).start()
send(1, "initialize", {"adapterID": "scanback", "linesStartAt1": True, "columnsStartAt1": True})
send(2, "launch", {"program": sys.argv[3:], "inputs": sys.argv[2].split("|")[0], "record": sys.argv[2].split("|")[1],
                   "realtime": True, "keepTrace": True})
send(3, "configurationDone", {})
threading.Event().wait(60)
PY
check_session_killed() {
  for round in $(seq 1 "$rounds"); do
    rm -f "$work"/t.trace* "$work"/dap.sock
    "$scanback" dap --socket "$work/dap.sock" 2>"$work/err.txt" &
    local pid=$!
    wait_for test -S "$work/dap.sock" || { fail "debug session: no socket ($(cat "$work/err.txt"))"; kill -9 $pid; continue; }
    python3 "$work/dap_client.py" "$work/dap.sock" "$PWD/$stimulus|$work/t.trace" "${plant[@]/#/$PWD/}" &
    local client=$!
    wait_for test -e "$work/t.trace.partial" || { fail "debug session: no trace ($(cat "$work/err.txt"))"; kill -9 $pid $client; continue; }
    local start
    start=$(ms_now)
    sleep "$(python3 -c 'import random; print(round(random.uniform(1.5, 4.0), 2))')"
    kill -9 $pid
    local killed
    killed=$(ms_now)
    { wait $pid; } 2>/dev/null
    kill $client 2>/dev/null
    { wait $client; } 2>/dev/null
    local ran=$(((killed - start) * rate / 1000))
    local held
    held=$(cycles_in "$work/t.trace.partial")
    local allowed=$(((window_ms + 300) * rate / 1000))
    if [ "$held" -gt 0 ] && [ $((ran - held)) -le "$allowed" ] && verify "$work/t.trace.partial"; then
      pass "debug session (launch with record) round $round: $held cycles on disk after kill -9 of the adapter (>= $ran - $allowed), all replay"
    else
      fail "debug session round $round: $held cycles on disk, $ran run, at most $allowed may be lost: $(tail -2 "$work/verify.txt")"
    fi
  done
}
check_session_killed

echo "== SIGHUP, SIGTERM, SIGINT finish the trace cleanly"
for sig in HUP TERM INT; do
  rm -f "$work"/t.trace*
  "$scanback" run "${plant[@]}" --inputs "$stimulus" --realtime --quiet --record "$work/t.trace" 2>"$work/err.txt" &
  pid=$!
  wait_for test -e "$work/t.trace.partial"
  sleep 1
  kill -s "$sig" $pid
  wait $pid
  rc=$?
  if [ $rc -eq 0 ] && [ -e "$work/t.trace" ] && [ ! -e "$work/t.trace.partial" ] && verify "$work/t.trace" &&
    grep -q "closed normally" <("$scanback" trace info "$work/t.trace"); then
    pass "SIG$sig: exit 0, $(cycles_in "$work/t.trace") cycles in a closed trace that verifies"
  else
    fail "SIG$sig: exit $rc, $(ls "$work") $(cat "$work/err.txt")"
  fi
done

echo "== SIGPIPE: run --print-state | head ends the run, not the recording"
rm -f "$work"/t.trace*
"$scanback" run "${plant[@]}" --inputs "$stimulus" --cycles 3000 --record "$work/t.trace" --print-state 2>"$work/err.txt" |
  head -c 10 >/dev/null
if [ -e "$work/t.trace" ] && [ "$(cycles_in "$work/t.trace")" = 3000 ] && verify "$work/t.trace"; then
  pass "the trace is closed with its 3000 cycles"
else
  fail "SIGPIPE: $(ls "$work") $(cat "$work/err.txt")"
fi

echo "== a full disk: said at once, the task goes on, recording resumes with a gap when space is back"
check_full_disk() {  # MODE ARGS...
  local mode=$1
  shift
  rm -f "$work"/t.trace* "$work"/sock
  "$scanback" run "${plant[@]}" --inputs "$stimulus" --realtime --quiet --record "$work/t.trace" "$@" \
    --control "unix://$work/sock" 2>"$work/err.txt" &
  local pid=$!
  wait_for test -S "$work/sock"
  sleep 1.5
  # The file may not grow past its size now (as if the disk were full).
  prlimit --pid $pid --fsize="$(($(stat -c %s "$work/t.trace.partial") + 200)):"  # (the soft limit only)
  if wait_for grep -q "failed" "$work/err.txt"; then
    pass "$mode: stderr says so: $(grep -m1 failed "$work/err.txt" | cut -c1-150)"
  else
    fail "$mode: nothing on stderr about the failure"
  fi
  local status
  status=$("$scanback" ctl "unix://$work/sock" status 2>&1)
  if grep -q "^recording: failed: .* since cycle [0-9]*" <<<"$status" && grep -q "^state: running" <<<"$status"; then
    pass "$mode: ctl status: $(grep '^recording' <<<"$status" | cut -c1-150)"
  else
    fail "$mode: ctl status: $status"
  fi
  prlimit --pid $pid --fsize=unlimited:
  if wait_for grep -q "works again" "$work/err.txt"; then
    pass "$mode: resumed: $(grep -m1 'works again' "$work/err.txt" | cut -c1-150)"
  else
    fail "$mode: never resumed: $(cat "$work/err.txt")"
  fi
  sleep 1
  kill -TERM $pid
  wait $pid
  if verify "$work/t.trace"; then
    pass "$mode: the finished trace verifies ($(grep -m1 '^gaps' <("$scanback" trace info "$work/t.trace")))"
  else
    fail "$mode: verify: $(tail -3 "$work/verify.txt")"
  fi
}
check_full_disk "plain --record"
check_full_disk "--ring 64MB" --ring 64MB

# The same in a debug session: the Debug Console says it (an output event) and scanback/timeline
# reports the recording failing, then ok with the cycles lost; the session goes on.
cat >"$work/dap_full_disk.py" <<'PY'
import json, os, socket, subprocess, sys, threading, time
path, adapter, inputs, trace = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
program = sys.argv[5:]
sock = socket.socket(socket.AF_UNIX)
sock.connect(path)
messages, lock, seq = [], threading.Lock(), [0]
def send(command, arguments=None):
    with lock:
        seq[0] += 1
        n = seq[0]
    body = json.dumps({"seq": n, "type": "request", "command": command, "arguments": arguments or {}}).encode()
    sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    return n
def receive():
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return
        data += chunk
        while b"\r\n\r\n" in data:
            head, rest = data.split(b"\r\n\r\n", 1)
            size = int(head.split(b":")[1])
            if len(rest) < size:
                break
            with lock:
                messages.append(json.loads(rest[:size]))
            data = rest[size:]
threading.Thread(target=receive, daemon=True).start()
def response(n, timeout=10):
    end = time.time() + timeout
    while time.time() < end:
        with lock:
            for m in messages:
                if m.get("type") == "response" and m.get("request_seq") == n:
                    return m
        time.sleep(0.02)
    sys.exit(f"no response to request {n}")
def outputs():
    with lock:
        return "".join(m["body"]["output"] for m in messages if m.get("event") == "output")
def recording(until, timeout=10):
    end = time.time() + timeout
    while time.time() < end:
        r = response(send("scanback/timeline"))
        rec = r.get("body", {}).get("recording")
        if r.get("success") and rec and until(rec):
            return rec
        time.sleep(0.1)
    sys.exit(f"scanback/timeline never said so: {r}")
send("initialize", {"adapterID": "scanback", "linesStartAt1": True, "columnsStartAt1": True})
response(send("launch", {"program": program, "inputs": inputs, "record": trace, "realtime": True, "keepTrace": True}))
response(send("configurationDone"))
time.sleep(1.5)
print("before:", recording(lambda r: r["state"] == "ok"))
limit = os.path.getsize(trace + ".partial") + 200
subprocess.run(["prlimit", "--pid", adapter, f"--fsize={limit}:"], check=True)
failing = recording(lambda r: r["state"] == "failing")
print("failing:", failing)
if "sinceCycle" not in failing or failing.get("path") != trace or "File too large" not in failing.get("error", ""):
    sys.exit(f"the failure says neither its cycle nor the trace: {failing}")
end = time.time() + 5
while "fails from cycle" not in outputs() and time.time() < end:
    time.sleep(0.05)
if "fails from cycle" not in outputs():
    sys.exit("no output event about the failure: " + outputs())
subprocess.run(["prlimit", "--pid", adapter, "--fsize=unlimited:"], check=True)
ok = recording(lambda r: r["state"] == "ok" and r["lostCycles"] > 0)
print("resumed:", ok)
if "works again" not in outputs():
    time.sleep(1)
    if "works again" not in outputs():
        sys.exit("no output event about the recovery: " + outputs())
response(send("disconnect", {"terminateDebuggee": True}))
print("said:", [line for line in outputs().splitlines() if "recording" in line])
PY
rm -f "$work"/t.trace* "$work"/dap.sock
"$scanback" dap --socket "$work/dap.sock" 2>"$work/err.txt" &
pid=$!
if wait_for test -S "$work/dap.sock" &&
  timeout 60 python3 "$work/dap_full_disk.py" "$work/dap.sock" $pid "$PWD/$stimulus" "$work/t.trace" "${plant[@]/#/$PWD/}" \
    >"$work/dap_full_disk.txt" 2>&1; then
  pass "debug session: an output event and scanback/timeline say the recording fails, then that it works again: $(grep -m1 '^resumed' "$work/dap_full_disk.txt" | cut -c1-150)"
else
  fail "debug session with a full disk: $(cat "$work/dap_full_disk.txt" "$work/err.txt" | tail -5)"
fi
kill $pid 2>/dev/null
{ wait $pid; } 2>/dev/null
if wait_for test -e "$work/t.trace" && verify "$work/t.trace"; then
  pass "debug session: the finished trace verifies ($(grep -m1 '^gaps' <("$scanback" trace info "$work/t.trace")))"
else
  fail "debug session: verify: $(tail -3 "$work/verify.txt")"
fi

echo "== two writers to one path: the second is refused, the first loses nothing"
rm -f "$work"/t.trace*
"$scanback" run "${plant[@]}" --inputs "$stimulus" --realtime --quiet --record "$work/t.trace" 2>"$work/err.txt" &
pid=$!
wait_for test -e "$work/t.trace.partial"
sleep 0.5
"$scanback" run "${plant[@]}" --cycles 10 --quiet --record "$work/t.trace" 2>"$work/err2.txt"
rc=$?
if [ $rc -eq 2 ] && grep -q "another recording is writing to it" "$work/err2.txt"; then
  pass "second run refused: $(cut -c1-150 "$work/err2.txt")"
else
  fail "second run: exit $rc: $(cat "$work/err2.txt")"
fi
"$scanback" run "${plant[@]}" --cycles 10 --quiet --record "$work/t.trace.partial" 2>"$work/err2.txt"
rc=$?
if [ $rc -eq 2 ] && grep -q "recording in progress" "$work/err2.txt"; then
  pass "a recording to the other's .partial refused"
else
  fail "recording to the .partial: exit $rc: $(cat "$work/err2.txt")"
fi
sleep 0.5
kill -INT $pid
wait $pid
if verify "$work/t.trace" && [ "$(cycles_in "$work/t.trace")" -gt 100 ]; then
  pass "the first run's trace is whole: $(cycles_in "$work/t.trace") cycles"
else
  fail "the first run's trace: $(tail -2 "$work/verify.txt")"
fi

echo "== a snapshot never overwrites a live recording"
rm -f "$work"/t.trace* "$work"/o.trace* "$work"/sock
"$scanback" run "${plant[@]}" --inputs "$stimulus" --realtime --quiet --record "$work/o.trace" 2>/dev/null &
other=$!
"$scanback" run "${plant[@]}" --inputs "$stimulus" --realtime --quiet --control "unix://$work/sock" 2>/dev/null &
pid=$!
wait_for test -e "$work/o.trace.partial" && wait_for test -S "$work/sock"
sleep 0.5
before=$(stat -c %i "$work/o.trace.partial")
out=$("$scanback" ctl "unix://$work/sock" snapshot "$work/o.trace.partial" 2>&1)
rc=$?
if [ $rc -ne 0 ] && [ "$(stat -c %i "$work/o.trace.partial")" = "$before" ]; then
  pass "refused: $(cut -c1-150 <<<"$out")"
else
  fail "snapshot onto a live .partial: exit $rc: $out"
fi
kill -INT $pid $other
wait $pid $other
verify "$work/o.trace" && pass "the live recording is intact" || fail "the live recording: $(tail -2 "$work/verify.txt")"

echo "== SIGUSR1 to a plain run says why there is no snapshot and the run goes on"
"$scanback" run "${plant[@]}" --realtime --quiet 2>"$work/err.txt" &
pid=$!
sleep 0.5
kill -USR1 $pid
sleep 0.3
if kill -0 $pid 2>/dev/null && grep -q "SIGUSR1" "$work/err.txt"; then
  pass "still running: $(grep -m1 SIGUSR1 "$work/err.txt" | cut -c1-150)"
else
  fail "SIGUSR1: $(cat "$work/err.txt")"
fi
kill -INT $pid
wait $pid

echo "recording fault injection: $failures failure(s)"
[ $failures -eq 0 ]
