#!/usr/bin/env bash
# Regenerates the seed corpora in tests/fuzz/corpus/ (small, committed): run it when the trace
# format or the ST dialect changes, with a scanback built from the same commit.
#   tests/fuzz/make_seeds.sh build/scanback
set -euo pipefail
cd "$(dirname "$0")/../.."
scanback="$(realpath "${1:?usage: make_seeds.sh SCANBACK}")"
corpus=tests/fuzz/corpus
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# ---- ST front end: small golden and codegen programs (valid, faulting, and compile errors).
rm -f "$corpus"/st_frontend/*
for f in fb_ton fb_ctud fb_tp if_elsif while_repeat subrange_basic alias_type const_array_bound fault_in_fb \
         fault_div_zero_int std_conv_wrap_int cerr_syntax_recovery cerr_type_mismatch bit_access string_utf8 \
         tasks_implicit for_int_min cerr_interval_too_long; do
  cp "tests/golden/$f.st" "$corpus/st_frontend/$f.st"
done
for f in case_jtab fb_call method_call ref_deref strings tasks_config subrange_enum; do
  cp "tests/codegen/$f.st" "$corpus/st_frontend/codegen_$f.st"
done

# ---- traces: recorded with a small statement budget (the replayer target skips larger budgets).
record() {  # NAME CYCLES KEYFRAME_EVERY FILES...
  local name=$1 cycles=$2 every=$3
  shift 3
  "$scanback" run --quiet --statement-budget 5000 --cycles "$cycles" --keyframe-every "$every" \
    --record "$tmp/$name.trace" "$@" >/dev/null 2>&1 || true  # a faulting program exits 3
}
record counter 20 5 tests/golden/program_basic.st
record timers 30 10 tests/golden/fb_ton.st
record fault 10 4 tests/golden/fault_div_zero_int.st
record tasks 24 8 tests/golden/tasks_implicit.st
record fbs 16 4 tests/golden/fault_in_fb.st
"$scanback" run --quiet --statement-budget 5000 --cycles 12 --keyframe-every 4 --no-statements \
  --record "$tmp/nopaths.trace" tests/golden/fb_ctud.st >/dev/null 2>&1 || true
rm -f "$corpus"/trace_reader/* "$corpus"/replayer/*
for t in "$tmp"/*.trace; do
  name=$(basename "$t" .trace)
  size=$(stat -c %s "$t")
  cp "$t" "$corpus/trace_reader/$name"
  cp "$t" "$corpus/replayer/$name"
  head -c $((size * 2 / 3)) "$t" >"$corpus/trace_reader/$name-cut"  # cut off, as by a crash
done
head -c $(($(stat -c %s "$tmp/counter.trace") * 2 / 3)) "$tmp/counter.trace" >"$corpus/replayer/counter-cut"
# A block cut out of the middle (and the index with it): damage.
python3 - "$tmp/counter.trace" "$corpus/trace_reader/counter-missing-chunk" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
out, off, n = bytearray(data[:8]), 8, 0
while off + 48 <= len(data) and struct.unpack_from('<I', data, off)[0] == 0x4B425342:
    kind, stored = data[off + 4], struct.unpack_from('<I', data, off + 8)[0]
    if n != 2 and kind != 6:
        out += data[off:off + 48 + stored]
    off, n = off + 48 + stored, n + 1
open(sys.argv[2], 'wb').write(out)
PY
cp "$corpus/trace_reader/counter-missing-chunk" "$corpus/replayer/counter-missing-chunk"

# ---- DAP byte streams: framed requests, one stream per file.
python3 - "$corpus/dap_stream" <<'PY'
import json, os, sys
out = sys.argv[1]
for f in os.listdir(out):
    os.remove(os.path.join(out, f))
def frame(obj):
    body = json.dumps(obj).encode() if not isinstance(obj, (bytes, str)) else (obj.encode() if isinstance(obj, str) else obj)
    return b'Content-Length: %d\r\n\r\n' % len(body) + body
def req(seq, command, args=None):
    m = {"seq": seq, "type": "request", "command": command}
    if args is not None:
        m["arguments"] = args
    return m
streams = {
  "initialize": [req(1, "initialize", {"adapterID": "x", "linesStartAt1": True})],
  "session": [req(1, "initialize", {"adapterID": "x"}), req(2, "threads"), req(3, "stackTrace", {"threadId": 1}),
              req(4, "scopes", {"frameId": 1.5}), req(5, "evaluate", {"expression": "n + 1", "frameId": 1}),
              req(6, "setBreakpoints", {"source": {"path": "a.st"}, "breakpoints": [{"line": 3, "condition": "n > 1"}]}),
              req(7, "launch", {"program": "main.st", "authToken": "guess"}), req(8, "disconnect")],
  "bad-arguments": [req(1, "initialize", [1, 2]), req(2, "initialize", {"adapterID": 7}),
                    req(3, "variables", {"variablesReference": "1"}), req(4, "next", {"threadId": 1e300})],
  "responses-and-events": [{"seq": 1, "type": "response", "request_seq": 1, "success": True, "command": "x"},
                           {"seq": 2, "type": "event", "event": "output"}, req(3, "frobnicate")],
}
for name, messages in streams.items():
    open(os.path.join(out, name), 'wb').write(b''.join(frame(m) for m in messages))
open(os.path.join(out, "malformed-framing"), 'wb').write(
    b'Content-Length: 12\r\n\r\nnot json!!!!' + b'Content-Type: x\r\n\r\n' + b'Content-Length: 99999999999\r\n\r\n' +
    b'content-length:  5 \n\n{"a":' + frame(req(9, "threads")) + b'Content-Length: 3\r\n\r\n{}' +
    b'\r\n\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}')
open(os.path.join(out, "short-body"), 'wb').write(b'Content-Length: 40\r\n\r\n{"seq":1}Content-Length: 2\r\n\r\n{}')
PY

# ---- DAP request sequences: bytes that pick commands and arguments (fuzz_dap_requests.cpp).
python3 - "$corpus/dap_requests" <<'PY'
import os, random, sys
out = sys.argv[1]
for f in os.listdir(out):
    os.remove(os.path.join(out, f))
random.seed(18)
for record in (0, 1):
    # every command once, in order
    open(os.path.join(out, "each-command-%d" % record), 'wb').write(
        bytes([record, 1] + sum(([c] + [random.randrange(256) for _ in range(6)] for c in range(26)), [])))
for i in range(6):
    open(os.path.join(out, "random-%d" % i), 'wb').write(bytes(random.randrange(256) for _ in range(40)))
# stop on entry, step, look, step back, continue to the end
open(os.path.join(out, "step-look-back"), 'wb').write(bytes([1, 1, 4, 1, 1, 1, 1, 0, 2, 0, 3, 0, 0, 0, 9, 1, 11, 0, 0, 7, 1]))
PY
# ---- control protocol: request lines after a first byte that picks debugging (bit 0) and a token (bit 1).
rm -f "$corpus"/control/*
printf '\x01{"command":"status"}\n' >"$corpus/control/status"
printf '\x03{"command":"status","token":"t"}\n{"command":"stream","fromCycle":0}\n' >"$corpus/control/token_stream"
printf '\x01{"command":"snapshot","path":"/tmp/x.trace"}\n{"command":"snapshot","path":"rel"}\n{"command":"stop"}\n' \
  >"$corpus/control/snapshot_stop"
printf '\x00{"command":"stream","fromCycle":1.5}\n[1]\nnot json\n{"command":7}\n' >"$corpus/control/malformed"
printf '\x02{"command":"status","token":"wrong"}\n{"command":"status"}\n' >"$corpus/control/wrong_token"

ls -l "$corpus"/*/ | awk '{s+=$5} END {print "corpus bytes:", s}'
