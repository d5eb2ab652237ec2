#!/usr/bin/env python3
"""Puts `perf record` samples on the instructions of JIT-compiled code.

perf cannot name or disassemble code that LLVM compiled at run time.  With
`FERROPIPE_JIT_DUMP=DIR` set, ferropipe writes each LLVM-compiled function's
bytes to DIR/PID-ADDRESS-NAME.bin; this script reads the samples' addresses
from perf.data, keeps those inside a dumped function, and prints the
function's disassembly (objdump) with a sample count per instruction.

    mkdir -p /tmp/jit && FERROPIPE_JIT_DUMP=/tmp/jit perf record -F 5000 -o /tmp/p.data \\
        target/release/replay SCENE --out /tmp/o --threads 1 --time 40 --quiet
    python3 benches/jit_annotate.py /tmp/p.data /tmp/jit [--min 1]

Sampled with `cpu-clock` (VMs give no hardware counters), a sample lands on
the instruction waiting to retire, usually just after the one that stalls.
The dump runs past the function to the end of its mapping: instructions
after its `ret` may belong to the next function.
"""
import argparse
import collections
import re
import subprocess
from pathlib import Path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("perf_data")
    ap.add_argument("dump_dir")
    ap.add_argument("--min", type=int, default=0, help="print only instructions with at least this many samples")
    args = ap.parse_args()
    ips = subprocess.run(["perf", "script", "-i", args.perf_data, "-F", "ip"],
                         capture_output=True, text=True, check=True).stdout.split()
    ips = [int(x, 16) for x in ips]
    total = len(ips)
    dumps = []
    for f in sorted(Path(args.dump_dir).glob("*.bin")):
        m = re.match(r"(\d+)-([0-9a-f]+)-(.+)\.bin$", f.name)
        if m:
            dumps.append((int(m.group(2), 16), f.stat().st_size, m.group(3), f))
    # a later function's dump starts inside an earlier one's tail: cut each at the next start
    starts = sorted(d[0] for d in dumps)
    for base, size, name, f in sorted(dumps):
        nxt = [s for s in starts if s > base]
        end = min([base + size] + nxt[:1])
        hits = collections.Counter(ip - base for ip in ips if base <= ip < end)
        n = sum(hits.values())
        if n == 0:
            continue
        print(f"## {name} at {base:#x}: {n} of {total} samples ({100 * n / total:.1f} %)")
        dis = subprocess.run(["objdump", "-D", "-b", "binary", "-mi386:x86-64", "--no-show-raw-insn",
                              f"--stop-address={end - base}", str(f)],
                             capture_output=True, text=True, check=True).stdout
        for line in dis.splitlines():
            m = re.match(r"\s*([0-9a-f]+):\s*(.*)", line)
            if m:
                c = hits.get(int(m.group(1), 16), 0)
                if c >= args.min:
                    print(f"{c:6d}  {m.group(1):>5}: {m.group(2)}")


if __name__ == "__main__":
    main()
