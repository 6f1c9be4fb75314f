#!/usr/bin/env bash
# Installs code-server 4.100.3 (the real VS Code workbench, Node extension host) into
# build/code-server for the extension's end-to-end test, with the steps its npm package needs
# on this machine (its own postinstall would download things and fails here):
#   1. npm ci --ignore-scripts of the pinned package-lock (code-server/ beside this script);
#   2. in lib/vscode, npm install --omit=dev --ignore-scripts (pinned by its npm-shrinkwrap.json);
#   3. Debian ripgrep's rg as node_modules/@vscode/ripgrep/bin/rg;
#   4. node-gyp rebuild in each native module (kerberos needs Debian libkrb5-dev);
#   5. the node_modules.asar and bin symlinks that its postinstall.sh makes;
#   6. at the top level, npm rebuild argon2.
# Prints the path of code-server's entry script. Exit codes: 0 ready, 3 the packages cannot be
# installed (the npm registry cannot be reached, or there is no Node 20), 1 anything else.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
dest="${CODE_SERVER_DIR:-$root/build/code-server}"
entry="$dest/node_modules/code-server/out/node/entry.js"
npm_quiet=(--no-audit --no-fund --loglevel=error --cache "$root/build/npm-cache")

stamp="$dest/.ready"
want="$(cat "$here/code-server/package-lock.json" "$0" | sha256sum | cut -d' ' -f1)"
if [ -f "$entry" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  echo "$entry"
  exit 0
fi

if [ "$(node -p 'process.versions.node.split(".")[0]')" != 20 ]; then
  echo "setup-code-server: code-server 4.100.3 needs Node 20, this is $(node --version)" >&2
  exit 3
fi
for tool in rg make g++; do
  command -v "$tool" >/dev/null || { echo "setup-code-server: $tool is missing (scripts/setup.sh installs it)" >&2; exit 1; }
done
node_gyp="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
[ -f "$node_gyp" ] || { echo "setup-code-server: npm's node-gyp is missing ($node_gyp)" >&2; exit 1; }

rm -rf "$dest"
mkdir -p "$dest"
cp "$here/code-server/package.json" "$here/code-server/package-lock.json" "$dest/"
log="$dest/install.log"
cd "$dest"
if ! npm ci --ignore-scripts "${npm_quiet[@]}" >"$log" 2>&1; then
  echo "setup-code-server: the code-server packages cannot be installed (npm ci failed):" >&2
  tail -5 "$log" >&2
  exit 3
fi
vscode="$dest/node_modules/code-server/lib/vscode"
cd "$vscode"
if ! npm install --omit=dev --ignore-scripts "${npm_quiet[@]}" >>"$log" 2>&1; then
  echo "setup-code-server: code-server's VS Code packages cannot be installed (npm install failed):" >&2
  tail -5 "$log" >&2
  exit 3
fi
mkdir -p node_modules/@vscode/ripgrep/bin
cp "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg

# Native modules for Linux (the windows-* ones build nothing here and are skipped).
while IFS= read -r gyp; do
  module="$(dirname "$gyp")"
  case "$module" in */windows-*) continue ;; esac
  if ! (cd "$module" && node "$node_gyp" rebuild --nodedir="${npm_config_nodedir:-/usr}" -j "$(nproc)" >>"$log" 2>&1); then
    echo "setup-code-server: building the native module $module failed (see $log)" >&2
    exit 1
  fi
done < <(find node_modules -name binding.gyp -not -path '*/node_modules/*/node_modules/*' | sort)

ln -sfn node_modules node_modules.asar
ln -sfn code-linux.sh bin/remote-cli/code-server
ln -sfn browser-linux.sh bin/helpers/browser.sh

cd "$dest"
if ! npm rebuild argon2 "${npm_quiet[@]}" >>"$log" 2>&1; then
  echo "setup-code-server: npm rebuild argon2 failed (see $log)" >&2
  exit 1
fi
# code-server writes a default config under XDG_CONFIG_HOME: keep it inside the install.
HOME="$dest/home" XDG_CONFIG_HOME="$dest/home/config" XDG_DATA_HOME="$dest/home/data" node "$entry" --version >/dev/null
echo "$want" >"$stamp"
echo "$entry"
