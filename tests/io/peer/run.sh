#!/usr/bin/env bash
# scanback run --io against a real Modbus TCP peer (client.test.js): npm's modbus-serial ServerTCP
# as the remote I/O device, in a process of its own, and a stalled device.
#
#   SCANBACK_BINARY  the scanback executable (default: build/scanback of the repository)
#
# Installs the pinned npm package (npm ci, without serialport, an optional dependency the TCP
# server does not use) when node_modules is missing or package-lock.json changed since the last
# install. Exits non-zero when a test fails.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ -n "${SCANBACK_BINARY:-}" ]; then
  SCANBACK_BINARY="$(realpath -m -- "$SCANBACK_BINARY")"
else
  SCANBACK_BINARY="$(realpath -m -- "$here/../../../build/scanback")"
fi
export SCANBACK_BINARY
cd "$here"
if [ ! -x "$SCANBACK_BINARY" ]; then
  echo "run.sh: no scanback executable at $SCANBACK_BINARY (build it, or set SCANBACK_BINARY)" >&2
  exit 1
fi

stamp=node_modules/.package-lock.sha256
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ ! -d node_modules ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  # ctest may run this from several build trees at once: one install at a time.
  exec 9<package-lock.json
  flock 9
  if [ ! -d node_modules ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "run.sh: installing the peer's packages (npm ci)"
    npm ci --omit=optional --no-audit --no-fund --loglevel=error >/dev/null
    echo "$want" >"$stamp"
  fi
  flock -u 9
fi

exec node --test --test-concurrency=1 client.test.js
