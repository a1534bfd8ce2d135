#!/usr/bin/env bash
# Every C++ file of the tree is as clang-format leaves it (.clang-format: Google style, 100
# columns): `clang-format --dry-run --Werror` over each tracked .cc and .h file (every file under
# src/ include/ tests/ bench/ fuzz/ integrations/ where the tree is not a git checkout). Prints the
# files it would change and fails. Fix with `clang-format -i FILE`, or the lines you changed alone
# with `git diff -U0 | clang-format-diff -p1 -i`.
# Usage: scripts/check-format.sh [SOURCE_DIR]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
command -v clang-format > /dev/null || { echo "check-format: clang-format is not installed (scripts/install-deps.sh test)" >&2; exit 1; }
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  mapfile -d '' files < <(git ls-files -z '*.cc' '*.h')
else
  mapfile -d '' files < <(find src include tests bench fuzz integrations -name '*.cc' -print0 -o -name '*.h' -print0 2>/dev/null)
fi
bad=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  clang-format --dry-run --Werror "$f" > /dev/null 2>&1 || bad+=("$f")
done
if [ "${#bad[@]}" -gt 0 ]; then
  printf '%s\n' "${bad[@]}"
  echo "${#bad[@]} of ${#files[@]} C++ files are not as clang-format leaves them: clang-format -i FILE" >&2
  exit 1
fi
echo "all ${#files[@]} C++ files are as clang-format leaves them"
