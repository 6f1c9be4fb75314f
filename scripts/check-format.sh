#!/usr/bin/env bash
# Fails when a C++ file differs from what clang-format (.clang-format) makes of it, and lists them.
# Fix with: clang-format -i $(git ls-files '*.cpp' '*.h')
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "check-format: clang-format is missing (scripts/setup.sh installs it)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.cpp' '*.h')
drift=()
for f in "${files[@]}"; do
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then drift+=("$f"); fi
done
if [ ${#drift[@]} -ne 0 ]; then
  echo "check-format: ${#drift[@]} file(s) differ from clang-format's layout:" >&2
  printf '  %s\n' "${drift[@]}" >&2
  echo "fix with: clang-format -i \$(git ls-files '*.cpp' '*.h')" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files follow .clang-format"
