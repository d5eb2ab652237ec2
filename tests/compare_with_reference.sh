#!/usr/bin/env bash
# Replays every conformance scene with the release `replay` binary and runs
# the reference tool's own compare.py on the outputs (needs python3 with
# numpy and pillow; skips cleanly without them).  The Rust harness
# (tests/conformance.rs) applies the same rule in-process; this script is
# the cross-check against the original.
#
#   tests/compare_with_reference.sh [OUT_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/conformance}
compare=../shared/scenes/reference/compare.py
if ! python3 -c 'import numpy, PIL' 2>/dev/null || [ ! -f "$compare" ]; then
    echo "skipping: needs python3 with numpy and pillow, and $compare" >&2
    exit 0
fi
mkdir -p "$out"
cargo build --release -q --bin replay || exit 1
pass=0; fail=0
for scene in tests/scenes/conformance/*.json; do
    name=$(basename "$scene" .json)
    target/release/replay "$scene" --out "$out/$name" --quiet >/dev/null 2>"$out.$name.err"
    code=$?
    if [ $code -ge 2 ]; then
        echo "$name: replay exit $code: $(tail -1 "$out.$name.err")"
        fail=$((fail + 1)); rm -f "$out.$name.err"; continue
    fi
    rm -f "$out.$name.err"
    ref="tests/scenes/conformance/ref/$name"
    if python3 "$compare" "$ref" "$out/$name" >"$out/$name/compare.txt"; then
        pass=$((pass + 1)); echo "$name: PASS"
    else
        fail=$((fail + 1)); echo "$name: FAIL ($(tail -1 "$out/$name/compare.txt"))"
    fi
done
echo "$pass passed, $fail failed"
