#!/usr/bin/env bash
# Fault injection against the endpoints (issue 27, docs/control.md "Limits"): `scanback dap --port`,
# `scanback dap --socket` and `scanback run --control` on examples/plant, each started with few
# file descriptors (prlimit --nofile) and asked for more connections than those allow, are flooded
# with idle connections well past that limit, and with clients that never read and clients that
# read slowly; then a well-behaved client must still be served (a DAP initialize/launch round trip,
# which opens the program's files; `scanback ctl status`) and the server must still run. (Running
# out of descriptors itself — accept failing with EMFILE, the back-off — is in
# tests/net/server_test.cpp: a server keeps its connections within its descriptors, so a flood
# alone no longer gets it there.) Also the token rules: a tcp:// control endpoint without a token is refused unless
# --allow-no-token (which warns), and a token shorter than 16 bytes is refused by dap, run and ctl.
#
#   tests/fault/endpoints.sh BUILD_DIR
#
# Prints each check; exits non-zero at the first that fails. Needs python3 and prlimit.
set -euo pipefail
build="$(cd "${1:?usage: tests/fault/endpoints.sh BUILD_DIR}" && pwd)"
scanback="$build/scanback"
root="$(cd "$(dirname "$0")/../.." && pwd)"
plant=("$root"/examples/plant/*.st)
work="$(mktemp -d "${TMPDIR:-/tmp}/scanback_endpoints.XXXXXX")"
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
  for f in "$work"/*.err; do [ -e "$f" ] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }; done
  exit 1
}
alive() { kill -0 "$1" 2>/dev/null; }
# Waits until FILE has a line matching REGEX (up to 20 s); prints the first match.
await_line() {
  local file="$1" regex="$2"
  for _ in $(seq 200); do
    if grep -m1 -E "$regex" "$file" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  return 1
}
count() { grep -c -E "$2" "$1" 2>/dev/null || true; }

# The misbehaving clients and the well-behaved DAP one (python3: sockets of both kinds, many at once).
cat > "$work/clients.py" <<'EOF'
import json, socket, sys, threading, time

def connect(where, timeout=1.0):
    if where.startswith('/'):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(where)
    else:
        s = socket.create_connection(('127.0.0.1', int(where)), timeout=timeout)
    return s

def flood(where, n, hold):
    """n idle connections from 50 threads at once, kept open for `hold` seconds; prints how many
    connected (the others gave up after 2 s: the backlog was full)."""
    socks, failed, lock = [], [0], threading.Lock()
    def some(k):
        for _ in range(k):
            try:
                s = connect(where, 2.0)
                with lock:
                    socks.append(s)
            except OSError:
                with lock:
                    failed[0] += 1
    threads = [threading.Thread(target=some, args=(n // 50 + (1 if i < n % 50 else 0),)) for i in range(50)]
    for t in threads: t.start()
    for t in threads: t.join()
    print(f'{len(socks)} connected, {failed[0]} gave up', flush=True)
    time.sleep(hold)

def never_read(where, payload, hold):
    """Connects, sends `payload` over and over (requests), never reads, for `hold` seconds."""
    try:
        s = connect(where)
        s.setblocking(False)
        end = time.time() + hold
        while time.time() < end:
            try:
                s.send(payload)
            except BlockingIOError:
                time.sleep(0.05)
            except OSError:
                return
    except OSError:
        pass

def slow(where, payload, hold):
    """Connects, sends a request now and then, reads one byte every 50 ms."""
    try:
        s = connect(where)
        s.settimeout(5)
        end = time.time() + hold
        while time.time() < end:
            s.send(payload)
            for _ in range(10):
                if not s.recv(1):
                    return
                time.sleep(0.05)
    except OSError:
        pass

def dap_frame(seq, command, arguments):
    body = json.dumps({'seq': seq, 'type': 'request', 'command': command, 'arguments': arguments}).encode()
    return b'Content-Length: %d\r\n\r\n%s' % (len(body), body)

def dap_read(s, buf):
    while b'\r\n\r\n' not in buf[0]:
        chunk = s.recv(65536)
        if not chunk:
            raise EOFError('the server closed the connection')
        buf[0] += chunk
    header, rest = buf[0].split(b'\r\n\r\n', 1)
    length = int([l for l in header.split(b'\r\n') if l.lower().startswith(b'content-length')][0].split(b':')[1])
    while len(rest) < length:
        chunk = s.recv(65536)
        if not chunk:
            raise EOFError('the server closed the connection')
        rest += chunk
    buf[0] = rest[length:]
    return json.loads(rest[:length])

def dap_session(where, token, program):
    """initialize, launch (stopOnEntry), disconnect: each response must succeed."""
    s = connect(where, 20)
    buf = [b'']
    def request(seq, command, arguments):
        s.sendall(dap_frame(seq, command, arguments))
        while True:
            m = dap_read(s, buf)
            if m.get('type') == 'response' and m.get('request_seq') == seq:
                if not m.get('success'):
                    raise RuntimeError(f'{command} failed: {m.get("message")}')
                return m
    request(1, 'initialize', {'adapterID': 'endpoints.sh', 'linesStartAt1': True})
    launch = {'program': program, 'stopOnEntry': True}
    if token:
        launch['authToken'] = token
    request(2, 'launch', launch)
    request(3, 'configurationDone', {})
    request(4, 'threads', {})
    request(5, 'disconnect', {'terminateDebuggee': True})
    print('initialize, launch, configurationDone, threads, disconnect: answered')

mode = sys.argv[1]
if mode == 'flood':
    flood(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
elif mode in ('never-read', 'slow'):
    payload = sys.argv[3].encode().decode('unicode_escape').encode()
    fn = never_read if mode == 'never-read' else slow
    threads = [threading.Thread(target=fn, args=(sys.argv[2], payload, float(sys.argv[5])))
               for _ in range(int(sys.argv[4]))]
    for t in threads: t.start()
    for t in threads: t.join()
elif mode == 'dap':
    dap_session(sys.argv[2], sys.argv[3], json.loads(sys.argv[4]))
EOF
clients() { python3 "$work/clients.py" "$@"; }
dap_request='Content-Length: 61\r\n\r\n{"seq":1,"type":"request","command":"threads","arguments":{}}'
status_request='{"command":"status"}\n'
program_json="$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1:]))' "${plant[@]}")"

head -c 24 /dev/urandom | base64 > "$work/token"
chmod 600 "$work/token"
token="$(head -n1 "$work/token")"
printf 'short-token\n' > "$work/short"
chmod 600 "$work/short"

# ---------------------------------------------------------------- tokens
step "tokens shorter than 16 bytes are refused by dap, run and ctl"
for cmd in "dap --port 0 --auth-token-file $work/short" \
           "run ${plant[*]} --cycles 1 --control unix://$work/t.sock --auth-token-file $work/short" \
           "ctl unix://$work/none.sock --auth-token-file $work/short status"; do
  set +e
  # shellcheck disable=SC2086
  out="$("$scanback" $cmd 2>&1)"
  rc=$?
  set -e
  [ "$rc" = 2 ] || fail "scanback ${cmd%% *} with a short token: exit $rc, not 2 ($out)"
  grep -q "has 11 bytes; a token needs at least 16" <<<"$out" || fail "scanback ${cmd%% *}: no clear message: $out"
  check "scanback ${cmd%% *}: $(grep -o 'the token in .* has 11 bytes; a token needs at least 16' <<<"$out" | head -1)"
done

step "a tcp:// control endpoint needs a token or --allow-no-token"
set +e
out="$("$scanback" run "${plant[@]}" --cycles 1 --control tcp://127.0.0.1:0 2>&1)"
rc=$?
set -e
[ "$rc" = 2 ] && grep -q "every local user can connect to a TCP port" <<<"$out" || fail "tcp without a token: exit $rc: $out"
check "refused without a token (exit 2)"
out="$("$scanback" run "${plant[@]}" --cycles 1 --control tcp://127.0.0.1:0 --allow-no-token 2>&1)"
grep -q "WARNING: the control endpoint tcp://127.0.0.1:[0-9]* has no token" <<<"$out" || fail "no warning: $out"
check "--allow-no-token serves it, with a warning"

# ---------------------------------------------------------------- scanback dap --port
step "scanback dap --port 0 with 32 descriptors: idle flood, never-reading and slow clients"
prlimit --nofile=32 "$scanback" dap --port 0 --auth-token-file "$work/token" --max-connections 64 2> "$work/dap-tcp.err" &
dap_pid=$!
pids+=("$dap_pid")
port="$(await_line "$work/dap-tcp.err" 'serving DAP on 127.0.0.1:[0-9]+' | grep -o '127.0.0.1:[0-9]*' | cut -d: -f2)" ||
  fail "the DAP server did not start"
clients never-read "$port" "$dap_request" 4 25 & pids+=($!)
clients slow "$port" "$dap_request" 4 25 & pids+=($!)
clients flood "$port" 300 25 > "$work/flood-tcp.out" & pids+=($!)
await_line "$work/flood-tcp.out" 'connected' > /dev/null || fail "the flood did not finish connecting"
check "flood: $(cat "$work/flood-tcp.out")"
line="$(grep -m1 -o 'serving at most [0-9]* connections, not 64: the descriptor limit ([0-9]*' "$work/dap-tcp.err")" ||
  fail "the server did not keep its connections within its descriptors"
check "the server keeps its connections within its descriptors: $line"
clients dap "$port" "$token" "$program_json" || fail "a well-behaved DAP client was not served"
check "a DAP initialize/launch round trip is served during the flood"
alive "$dap_pid" || fail "the DAP server ended"
n="$(count "$work/dap-tcp.err" 'cannot accept connections')"
[ "$n" -le 2 ] || fail "the accept failures were said $n times, not once per episode"
check "the server runs; its accept failures were said $n time(s), not once per failure"

step "scanback dap --socket with 32 descriptors: idle flood"
prlimit --nofile=32 "$scanback" dap --socket "$work/dap.sock" 2> "$work/dap-unix.err" &
dapu_pid=$!
pids+=("$dapu_pid")
await_line "$work/dap-unix.err" 'serving DAP on the unix socket' > /dev/null || fail "the DAP server did not start"
clients never-read "$work/dap.sock" "$dap_request" 2 25 & pids+=($!)
clients flood "$work/dap.sock" 300 25 > "$work/flood-unix.out" & pids+=($!)
await_line "$work/flood-unix.out" 'connected' > /dev/null || fail "the flood did not finish connecting"
check "flood: $(cat "$work/flood-unix.out")"
clients dap "$work/dap.sock" "" "$program_json" || fail "a well-behaved DAP client was not served"
check "a DAP initialize/launch round trip is served during the flood"
alive "$dapu_pid" || fail "the DAP server ended"
check "the server runs"

# ---------------------------------------------------------------- scanback run --control
step "scanback run --control unix:// on examples/plant with 40 descriptors: idle flood, never-reading and slow clients"
prlimit --nofile=40 "$scanback" run "${plant[@]}" --realtime --quiet --inputs "$root/examples/plant/stimulus.csv" \
  --control "unix://$work/rt.sock" --max-connections 64 2> "$work/run-unix.err" &
run_pid=$!
pids+=("$run_pid")
await_line "$work/run-unix.err" 'control endpoint unix://' > /dev/null || fail "the runtime did not start"
clients never-read "$work/rt.sock" "$status_request" 4 25 & pids+=($!)
clients slow "$work/rt.sock" "$status_request" 4 25 & pids+=($!)
clients flood "$work/rt.sock" 400 25 > "$work/flood-run.out" & pids+=($!)
await_line "$work/flood-run.out" 'connected' > /dev/null || fail "the flood did not finish connecting"
check "flood: $(cat "$work/flood-run.out")"
line="$(grep -m1 -o 'serving at most [0-9]* connections, not 64: the descriptor limit ([0-9]*' "$work/run-unix.err")" ||
  fail "the runtime did not keep its connections within its descriptors"
check "the runtime keeps its connections within its descriptors: $line"
out="$("$scanback" ctl "unix://$work/rt.sock" status)" || fail "scanback ctl status was not served: $out"
grep -q '^state: running' <<<"$out" || fail "scanback ctl status: $out"
check "scanback ctl status is served during the flood: $(grep '^cycles' <<<"$out")"
alive "$run_pid" || fail "the runtime ended"
n="$(count "$work/run-unix.err" 'cannot accept connections')"
[ "$n" -le 2 ] || fail "the accept failures were said $n times, not once per episode"
check "the runtime runs; its accept failures were said $n time(s)"

step "scanback run --control tcp:// with a token and 40 descriptors: idle flood"
prlimit --nofile=40 "$scanback" run "${plant[@]}" --realtime --quiet --control tcp://127.0.0.1:0 \
  --auth-token-file "$work/token" 2> "$work/run-tcp.err" &
runt_pid=$!
pids+=("$runt_pid")
endpoint="$(await_line "$work/run-tcp.err" 'control endpoint tcp://' | grep -o 'tcp://127.0.0.1:[0-9]*')" ||
  fail "the runtime did not start"
clients flood "${endpoint##*:}" 300 25 > "$work/flood-run-tcp.out" & pids+=($!)
await_line "$work/flood-run-tcp.out" 'connected' > /dev/null || fail "the flood did not finish connecting"
check "flood: $(cat "$work/flood-run-tcp.out")"
out="$("$scanback" ctl "$endpoint" --auth-token-file "$work/token" status)" || fail "scanback ctl status: $out"
grep -q '^state: running' <<<"$out" || fail "scanback ctl status: $out"
check "scanback ctl --auth-token-file status is served during the flood"
alive "$runt_pid" || fail "the runtime ended"
check "the runtime runs"

# ---------------------------------------------------------------- the end
step "every server stops cleanly when asked"
for p in "$dap_pid" "$dapu_pid" "$run_pid" "$runt_pid"; do
  kill -TERM "$p"
  set +e
  wait "$p"
  rc=$?
  set -e
  [ "$rc" = 0 ] || fail "pid $p exited $rc after SIGTERM"
done
check "dap --port, dap --socket and both runtimes exited 0 after SIGTERM"
echo "endpoints: all checks passed"
