#!/usr/bin/env bash
# Differential sweep: mutated conformance scenes rendered by llvmpipe (the
# reference tool) and by ferropipe, compared by compare.py's rule.
#   bash tests/differential/run.sh [OUT_DIR]
# Needs the reference tool working (../shared/scenes/README.md) and a
# release replay (cargo build --release -p demo --bin replay).
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${1:-out/differential}"
ref_tool=../shared/scenes/reference/render_reference.py
compare=../shared/scenes/reference/compare.py
python3 tests/differential/mutate.py "$out/scenes" || exit 1
: > "$out/results.txt"
for f in "$out"/scenes/*.json; do
    n=$(basename "$f" .json)
    rm -rf "$out/ref/$n" "$out/ours/$n"
    if ! timeout 120 python3 "$ref_tool" "$f" --out "$out/ref/$n" > "$out/ref.log" 2>&1; then
        echo "$n REFERENCE-UNAVAILABLE $(tail -n 1 "$out/ref.log" | cut -c1-160)" >> "$out/results.txt"
        continue
    fi
    if ! target/release/replay "$f" --out "$out/ours/$n" --threads 2 --quiet > "$out/ours.log" 2>&1; then
        echo "$n FERROPIPE-ERROR $(tail -n 1 "$out/ours.log" | cut -c1-160)" >> "$out/results.txt"
        continue
    fi
    echo "$n $(python3 "$compare" "$out/ref/$n" "$out/ours/$n" 2>&1 | tail -n 1)" >> "$out/results.txt"
done
echo "$(grep -c ' 0 failed' "$out/results.txt") of $(wc -l < "$out/results.txt") variants match; the rest:"
grep -v ' 0 failed' "$out/results.txt"
