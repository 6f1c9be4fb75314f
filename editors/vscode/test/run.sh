#!/usr/bin/env bash
# The VS Code extension's tests, as scripts/test.sh runs them: type check, TextMate grammar fixtures,
# extension logic against a mock of `vscode`, the Scan Timeline page in headless chromium, the .vsix
# (scripts/package-vscode.sh --binary), and end to end in code-server.
#
#   SCANBACK_BINARY  the scanback executable to package (default: build/scanback)
#
# Installs the pinned npm packages (npm ci) when package-lock.json changed since the last install;
# everything it installs or writes stays in the checkout (node_modules, build/). The end-to-end test
# is skipped, saying so, only when code-server's packages cannot be installed.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/../.." && pwd)"
binary="$(realpath -m -- "${SCANBACK_BINARY:-$root/build/scanback}")"
[ -x "$binary" ] || { echo "editors/vscode/test/run.sh: no scanback executable at $binary (build it, or set SCANBACK_BINARY)" >&2; exit 1; }
export npm_config_cache="$root/build/npm-cache"
cd "$here"

stamp=node_modules/.package-lock.sha256
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ ! -d node_modules ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "-- installing the extension's npm packages (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
  echo "$want" >"$stamp"
fi

echo "-- type check and build"
node_modules/.bin/tsc --noEmit -p .
node esbuild.mjs --tests

echo "-- grammar fixtures"
node_modules/.bin/vscode-tmgrammar-test -c 'test/grammar/*.st'

echo "-- extension logic (node --test, vscode mock)"
node --test test/unit/

echo "-- Scan Timeline page in headless chromium"
node --test test/webview/

echo "-- package"
vsix="$("$root/scripts/package-vscode.sh" --binary "$binary" | tail -1 | cut -d' ' -f1)"

echo "-- end to end in code-server"
set +e
entry="$(test/e2e/setup-code-server.sh)"
status=$?
set -e
if [ $status -eq 3 ]; then
  echo "SKIPPED: the end-to-end test in code-server: its packages cannot be installed (see above)"
  exit 0
elif [ $status -ne 0 ]; then
  exit $status
fi
CODE_SERVER_ENTRY="$entry" SCANBACK_VSIX="$vsix" SCANBACK_BINARY="$binary" node --test test/e2e/
