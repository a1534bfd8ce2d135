#!/usr/bin/env bash
# The project's column limit (.clang-format: 100) in code that is not a test: every line of the
# C++ sources under src/ and include/, tests and their helpers left out, fits 100 characters
# (characters, not bytes: a diagram of box-drawing characters counts as drawn). Prints each line
# over it as FILE:LINE: LENGTH and fails. Fix with clang-format on those lines:
#   clang-format -i --lines=N:N FILE
# Usage: scripts/check-line-length.sh [SOURCE_DIR]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
python3 - <<'PY'
import pathlib, sys
over = []
for root in ("src", "include"):
    for p in sorted(pathlib.Path(root).rglob("*")):
        if p.suffix not in (".cc", ".h") or not p.is_file():
            continue
        name = p.name
        if name.endswith("_test.cc") or "test_util" in name or "fixture" in name or name.startswith("fake_"):
            continue
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            if len(line) > 100:
                over.append(f"{p}:{n}: {len(line)} characters")
for o in over:
    print(o)
if over:
    print(f"{len(over)} line(s) over 100 characters (.clang-format ColumnLimit)", file=sys.stderr)
    sys.exit(1)
print("every line of src/ and include/ (tests left out) fits 100 characters")
PY
