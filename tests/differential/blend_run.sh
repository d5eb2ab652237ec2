#!/usr/bin/env bash
# Exact blend sweep: generated blend scenes (blend_sweep.py) rendered by
# llvmpipe (the reference tool) and by ferropipe, compared byte for byte
# (exact_compare.py: tolerance 0, unlike compare.py's 1/255 rule).
#   bash tests/differential/blend_run.sh [OUT_DIR] [COUNT] [SEED] [SWEEP_ARGS...]
# (SWEEP_ARGS go to blend_sweep.py, e.g. --formats B5G6R5_UNORM)
# Needs the reference tool working (../shared/scenes/README.md) and a
# release replay (cargo build --release -p demo --bin replay); REPLAY and
# REF_TOOL override their paths (a worktree has no ../shared).
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${1:-out/blend_sweep}"
count="${2:-200}"
seed="${3:-1}"
shift $(( $# < 3 ? $# : 3 ))
ref_tool="${REF_TOOL:-../shared/scenes/reference/render_reference.py}"
replay="${REPLAY:-target/release/replay}"
rm -rf "$out/scenes"
python3 tests/differential/blend_sweep.py "$out/scenes" --count "$count" --seed "$seed" "$@" || exit 1
: > "$out/skipped.txt"
for f in "$out"/scenes/*.json; do
    n=$(basename "$f" .json)
    # References are kept between runs while the scene is unchanged.
    if ! cmp -s "$f" "$out/ref/$n/scene.json"; then
        rm -rf "$out/ref/$n"
        if ! timeout 120 python3 "$ref_tool" "$f" --out "$out/ref/$n" > "$out/ref.log" 2>&1; then
            echo "$n REFERENCE-UNAVAILABLE $(tail -n 1 "$out/ref.log" | cut -c1-160)" >> "$out/skipped.txt"
            rm -rf "$out/ref/$n"
            continue
        fi
        cp "$f" "$out/ref/$n/scene.json"
    fi
    rm -rf "$out/ours/$n"
    if ! "$replay" "$f" --out "$out/ours/$n" --threads 2 --quiet > "$out/ours.log" 2>&1; then
        echo "$n FERROPIPE-ERROR $(tail -n 1 "$out/ours.log" | cut -c1-160)" >> "$out/skipped.txt"
    fi
done
cat "$out/skipped.txt"
python3 tests/differential/exact_compare.py "$out/ref" "$out/ours" | tee "$out/results.txt"
