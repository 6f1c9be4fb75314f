#!/usr/bin/env bash
# The layer check (docs/architecture.md, "Layers"): no product source includes a layer above its
# own. The layers, lowest first, as the table lists them; a folder includes its own layer and those
# before it. Tests, benchmarks and fuzz targets may include anything; product code never includes
# them. Exits 1 and names each include that runs up, with its file:line.
#
#   scripts/check-layers.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# layer name: its folders (a file belongs to the layer of the longest folder that holds it).
layers=(
  "base: vm/base vm/source"
  "language: vm/syntax vm/sema vm/compiler vm/bytecode"
  "execution: vm/exec vm/runtime"
  "debugger expressions: vm/debug"
  "trace format: traces"
  "recording: recorder"
  "replay: replayer"
  "network: net"
  "control: control"
  "compare: compare"
  "debug adapter: dap"
  "language server: lsp"
  "runtime host: runtime runtime/io"
  "unit tests: testrunner"
  "command: cli"
)

python3 - "${layers[@]}" <<'PY'
import os, re, sys

layers = []  # (rank, name, [folders])
for rank, spec in enumerate(sys.argv[1:]):
    name, folders = spec.split(":", 1)
    layers.append((rank, name.strip(), folders.split()))
folder_rank = {f: (rank, name) for rank, name, folders in layers for f in folders}
test_roots = ("tests/", "bench/")

def layer_of(path):
    best = None
    for folder, value in folder_rank.items():
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(best[0]):
                best = (folder, value)
    return best[1] if best else None

include = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
problems = []
checked = 0
for rank, name, folders in layers:
    for folder in folders:
        for root, _, files in os.walk(folder):
            for f in sorted(files):
                if not f.endswith((".h", ".cpp", ".hpp", ".cc")):
                    continue
                path = os.path.join(root, f)
                own = layer_of(path)
                if own is None:
                    continue
                checked += 1
                with open(path, encoding="utf-8", errors="replace") as text:
                    for number, line in enumerate(text, 1):
                        m = include.match(line)
                        if not m:
                            continue
                        target = m.group(1)
                        if target.startswith(test_roots):
                            problems.append(f"{path}:{number}: product code includes {target} (tests and benchmarks are not product code)")
                            continue
                        other = layer_of(target)
                        if other is None:
                            continue  # generated (the Cap'n Proto header) or a path relative to the file
                        if other[0] > own[0]:
                            problems.append(f"{path}:{number}: the {own[1]} layer ({path.split('/')[0]}) includes {target}, "
                                            f"of the {other[1]} layer above it")
for p in problems:
    print(p)
if problems:
    print(f"check-layers: {len(problems)} include(s) run up the layer table (docs/architecture.md, Layers)")
    sys.exit(1)
print(f"check-layers: {checked} files include only their own layer and those below it")
PY
