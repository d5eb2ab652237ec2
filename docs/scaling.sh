#!/bin/bash
# ferropipe thread scaling on a many-core machine (docs/performance.md,
# "Scaling, 1 -> 16 threads").  It runs from the repository root with a
# stripped release `replay` and the perf scenes in .dev/ (ignored by git):
#   strip -o .dev/replay target/release/replay
#   tar cJf .dev/perf.tar.xz -C ../shared/scenes perf
#   tar cJf .dev/shaders.tar.xz -C ../shared/scenes shaders
# and writes its table to $OUT (default: .dev/out).
OUT=${OUT:-.dev/out}
mkdir -p "$OUT"
set -u
mkdir -p /tmp/s && tar xJf .dev/perf.tar.xz -C /tmp/s && tar xJf .dev/shaders.tar.xz -C /tmp/s
nproc; lscpu | grep -E "Model name|^CPU\(s\)|Thread|Socket|L3"
R=.dev/replay
chmod +x $R
printf "%-16s" scene; for t in 1 2 4 8 16; do printf "%9s" "t=$t"; done; echo
for sc in blend_overdraw fill_overdraw many_draws small_tris_100k tiny_tris_1m textured_mesh pbr_barrels postprocess; do
  printf "%-16s" $sc
  for t in 1 2 4 8 16; do
    o=/tmp/o/$sc-$t; mkdir -p $o
    if $R /tmp/s/perf/$sc.json --out $o --threads $t --time 7 >$o/log 2>&1; then
      ms=$(python3 -c "import json;print('%.1f'%json.load(open('$o/timing.json'))['median_ms'])")
    else ms=ERR; fi
    printf "%9s" $ms
    echo "$sc $t $(cat $o/timing.json 2>/dev/null)" >> $OUT/timings.txt
  done; echo
done | tee $OUT/table.txt
