#!/usr/bin/env bash
# Times each twin in pairs, Lua then scanback, a second apart, ROUNDS times, and prints each twin's
# median ratio and its range. On a shared machine whose speed swings by tens of percent within
# seconds, a ratio of two runs taken side by side, over many pairs, is steadier than one run of
# scan_bench (bench/README.md, issue 17).
#
#   bench/twin_pairs.sh [ROUNDS] [TWIN...]     default: 10 rounds of every twin
#
# Needs lua5.4 and a Release scan_bench (bench/run.sh builds it; SCANBACK_BUILD_DIR picks the
# build directory, default build-release).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-10}"
shift || true
twins=("$@")
[ ${#twins[@]} -gt 0 ] || twins=(loops gcd sieve case_sm pid strings plant sort ring)
bench="${SCANBACK_BUILD_DIR:-build-release}/bench/scan_bench"
[ -x "$bench" ] || { echo "twin_pairs.sh: $bench is not built (run bench/run.sh first)" >&2; exit 2; }
command -v lua5.4 >/dev/null || { echo "twin_pairs.sh: lua5.4 is not installed" >&2; exit 2; }
for twin in "${twins[@]}"; do
  [ -f "bench/programs/$twin.st" ] && [ -f "bench/lua/$twin.lua" ] ||
    { echo "twin_pairs.sh: no twin named $twin (bench/programs/$twin.st and bench/lua/$twin.lua)" >&2; exit 2; }
done

# Cycles for about 0.6 s of Lua time per run.
cycles() {
  case "$1" in
    plant) echo 300000 ;; strings) echo 60000 ;; case_sm) echo 8000 ;; gcd) echo 5000 ;; ring) echo 4000 ;;
    sieve | pid) echo 3000 ;; *) echo 1500 ;;
  esac
}

results="$(mktemp)"
trap 'rm -f "$results"' EXIT
for round in $(seq "$rounds"); do
  for twin in "${twins[@]}"; do
    lua=$(lua5.4 bench/lua/run.lua "$twin" "$(cycles "$twin")" | awk -v t="$twin" '$1 == t { print $2; exit }')
    st=$("$bench" --benchmark_filter="BM_Program/$twin\$" --no-lua --benchmark_min_time=0.5 --benchmark_format=json \
      2>/dev/null | python3 -c "import json, sys; print(json.load(sys.stdin)['benchmarks'][0]['ns_per_cycle'])")
    echo "$twin $st $lua" >>"$results"
  done
  echo "round $round of $rounds done" >&2
done
python3 - "$results" "${twins[@]}" <<'EOF'
import statistics, sys
ratios = {}
for line in open(sys.argv[1]):
    twin, st, lua = line.split()
    ratios.setdefault(twin, []).append(float(st) / float(lua))
print("twin,     median ratio (scanback/Lua),  range over the pairs")
for twin in sys.argv[2:]:
    r = ratios.get(twin, [])
    if r:
        print(f"{twin + ',':<9} {statistics.median(r):>6.3f}  {min(r):.3f}-{max(r):.3f} ({len(r)} pairs)")
EOF
