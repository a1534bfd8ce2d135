#!/usr/bin/env bash
# How long each stage of `make test` takes on a fresh clone (docs/build-time.md):
#
#   scripts/build-times.sh [--keep] [REV]
#
# Clones REV (default: HEAD) of this repository into a new directory, runs the stages of
# `make test` one after another there, as CI runs them, and prints one table row of each stage's
# minutes and the total. Run it on an otherwise idle machine: the figures are wall-clock time.
# --keep keeps the clone (its path is printed); without it the clone is removed at the end.
set -euo pipefail

keep=0
if [[ "${1:-}" == "--keep" ]]; then keep=1; shift; fi
rev="${1:-HEAD}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
dir="$(mktemp -d /tmp/pinpoint-build-times.XXXXXX)"
chmod 755 "$dir"  # as a clone's parent usually is: tests run programs as other users from it
if [[ $keep -eq 0 ]]; then trap 'rm -rf "$dir"' EXIT; fi

git clone -q "$repo" "$dir/src"
git -C "$dir/src" checkout -q "$rev"
commit="$(git -C "$dir/src" rev-parse --short HEAD)"
cd "$dir/src"

# The stages of `make test`, in its order (Makefile).
stages=("deps:test-deps" "build:build-tests" "tests:unit" "sanitizer build:asan-build"
        "sanitizer tests:asan-tests" "fuzz smoke:run-fuzzers FUZZ_BUILD=build-asan")
header="| commit | cores |"
row="| $commit | $(nproc) |"
total=0
for stage in "${stages[@]}"; do
  name="${stage%%:*}"
  target="${stage#*:}"
  start=$(date +%s)
  # shellcheck disable=SC2086  # the target may carry a variable
  if ! make --no-print-directory $target > "$dir/$name.log" 2>&1; then
    tail -40 "$dir/$name.log" >&2
    echo "build-times: stage '$name' (make $target) failed; its log: $dir/$name.log" >&2
    trap - EXIT
    exit 1
  fi
  seconds=$(( $(date +%s) - start ))
  total=$(( total + seconds ))
  header+=" $name |"
  row+=" $(awk -v s="$seconds" 'BEGIN { printf "%.1f", s / 60 }') |"
  echo "build-times: $name: ${seconds} s" >&2
done
header+=" total (min) |"
row+=" $(awk -v s="$total" 'BEGIN { printf "%.1f", s / 60 }') |"
echo "$header"
echo "$row"
if [[ $keep -eq 1 ]]; then echo "build-times: the clone is kept in $dir/src" >&2; fi
