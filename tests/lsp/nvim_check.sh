#!/usr/bin/env bash
# A language client no one here wrote: Neovim's built-in one (`nvim --headless`), started on a copy
# of examples/plant with an error put into programs.st, must get that error as a diagnostic and jump
# to a definition in another file (nvim_check.lua). Exits non-zero on any mismatch.
#   tests/lsp/nvim_check.sh path/to/scanback
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
scanback="$(realpath "$1")"
copy="$(mktemp -d)"
trap 'rm -rf "$copy"' EXIT
cp "$here/../../examples/plant/"*.st "$copy/"
# The error: a missing ';' after `hornLatch := FALSE`.
sed -i '0,/hornLatch := FALSE;/s//hornLatch := FALSE/' "$copy/programs.st"
grep -q 'hornLatch := FALSE$' "$copy/programs.st"
# -u: this config only (nothing of the user's); -i NONE: no shada; a timeout ends a hang.
SCANBACK_BINARY="$scanback" PLANT_COPY="$copy" XDG_STATE_HOME="$copy/.state" XDG_CACHE_HOME="$copy/.cache" \
  timeout 60 nvim --headless --clean -i NONE -u NONE -c "luafile $here/nvim_check.lua"
