#!/usr/bin/env bash
# Installs the Debian 12 packages scanback needs to build, test and benchmark.
# Idempotent: prints nothing and installs nothing when everything is already there.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config clang-format
  clang libclang-rt-14-dev  # the libFuzzer targets (scripts/fuzz.sh): clang 14 and its compiler-rt
  libgtest-dev libgmock-dev libbenchmark-dev
  capnproto libcapnp-dev libzstd-dev nlohmann-json3-dev libcli11-dev libfmt-dev libxxhash-dev
  libvalijson-dev
  # runtime/io: Modbus TCP (libmodbus) and the I/O configuration (toml++)
  libmodbus-dev libtomlplusplus-dev
  lua5.4
  # A language client no one here wrote, against `scanback lsp` (tests/lsp/nvim_check.sh).
  neovim
  # libsystemd: sd_notify under systemd; mbpoll, a Modbus master, tests the server mode
  # (tests/runtime/mbpoll.sh).
  libsystemd-dev mbpoll
  # `trace export --vcd` is checked with GTKWave's vcd2fst; the README's screenshot is GTKWave
  # under Xvfb (xvfb-run, xauth).
  gtkwave xvfb xauth
  # The VS Code extension's tests (editors/vscode/test/run.sh): headless chromium for the webview
  # and code-server tests; ripgrep, Kerberos headers and python3 (node-gyp) for code-server's install.
  chromium ripgrep libkrb5-dev python3
)
# node and npm run the end-to-end DAP tests (tests/dap/e2e). Debian's nodejs + npm, unless a node
# with its own npm is there already (NodeSource's nodejs bundles npm and conflicts with Debian's).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "setup: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
