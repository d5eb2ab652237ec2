#!/usr/bin/env python3
"""Times ferropipe and (when installed) Mesa llvmpipe on the perf scenes in one run.

    python3 benches/perf_vs_llvmpipe.py [--scenes DIR] [--threads 1,2] [--runs 5] [--rounds 3] [--markdown]

For every scene in ../shared/scenes/perf (or --scenes) and every thread count,
runs `target/release/replay SCENE --out TMP --threads T --time N` and, if the
reference tool works on this machine, `LP_NUM_THREADS=T render_reference.py
SCENE --out TMP --time N`, then prints one table: medians in ms, the ratio
llvmpipe/ferropipe (> 1 means ferropipe is faster) and ferropipe's peak RSS.
Both tools measure the same thing: the calls after `timing_begin`, replayed N
times after one full run, median of the N (FORMAT.md "Timing").

A missing llvmpipe (no python3 module, no Mesa, no naga) is reported once and
the table shows ferropipe alone.  Build first: `cargo build --release -p demo`.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_ferropipe(replay, scene, threads, runs, out):
    cmd = [str(replay), str(scene), "--out", str(out), "--threads", str(threads), "--time", str(runs)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return None, f"exit {proc.returncode}: {proc.stderr.strip()[-200:]}", None
    timing = json.loads((out / "timing.json").read_text())
    # The replayer records its own peak resident set (VmHWM) in timing.json.
    return timing["median_ms"], None, timing.get("peak_rss_kib")


def run_llvmpipe(ref_tool, scene, threads, runs, out):
    env = dict(os.environ, LP_NUM_THREADS=str(threads))
    cmd = [sys.executable, str(ref_tool), str(scene), "--out", str(out), "--time", str(runs)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        return None, f"exit {proc.returncode}: {proc.stderr.strip()[-200:]}"
    timing = json.loads((out / "timing.json").read_text())
    return timing["median_ms"], None


def llvmpipe_available(ref_tool):
    try:
        import numpy  # noqa: F401
        import OpenGL  # noqa: F401
        import PIL  # noqa: F401
    except ImportError as e:
        return f"python module missing ({e.name})"
    if not ref_tool.exists():
        return f"{ref_tool} not found"
    if not (shutil.which("naga") or (Path.home() / ".cargo/bin/naga").exists()):
        return "naga CLI not installed (cargo install naga-cli)"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenes", default=str(ROOT.parent / "shared/scenes/perf"))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="alternate ferropipe and llvmpipe this many times per scene and thread count; "
        "report each tool's median over the rounds (the host's speed drifts by tens of "
        "percent over minutes, so only interleaved runs compare fairly)",
    )
    ap.add_argument("--replay", default=str(ROOT / "target/release/replay"))
    ap.add_argument("--no-llvmpipe", action="store_true", help="time ferropipe only")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = ap.parse_args()

    scenes_dir = Path(args.scenes)
    scenes = sorted(p for p in scenes_dir.glob("*.json") if p.name != "llvmpipe_timings.json")
    if not scenes:
        sys.exit(f"no scenes in {scenes_dir}")
    replay = Path(args.replay)
    if not replay.exists():
        sys.exit(f"{replay} not found: run `cargo build --release -p demo` first")
    ref_tool = scenes_dir.parent / "reference/render_reference.py"
    why_not = "disabled by --no-llvmpipe" if args.no_llvmpipe else llvmpipe_available(ref_tool)
    if why_not:
        print(f"llvmpipe: not timed ({why_not})", file=sys.stderr)
    threads = [int(t) for t in args.threads.split(",")]

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for scene in scenes:
            for t in threads:
                print(f"timing {scene.stem} threads={t} ...", file=sys.stderr)
                fps, lps, fp_err, lp_err, peak = [], [], None, why_not, None
                for _ in range(max(1, args.rounds)):
                    fp, err, pk = run_ferropipe(replay, scene, t, args.runs, tmp / f"fp_{scene.stem}_{t}")
                    fp_err = fp_err or err
                    peak = max(peak or 0, pk or 0) or None
                    if fp is not None:
                        fps.append(fp)
                    if not why_not:
                        lp, lp_err = run_llvmpipe(ref_tool, scene, t, args.runs, tmp / f"lp_{scene.stem}_{t}")
                        if lp is not None:
                            lps.append(lp)
                fp = statistics.median(fps) if fps else None
                lp = statistics.median(lps) if lps else None
                rows.append((scene.stem, t, fp, fp_err, lp, lp_err if lp is None else None, peak))

    def fmt(v):
        return f"{v:.2f}" if v is not None else "-"

    header = ["scene", "threads", "ferropipe ms", "llvmpipe ms", "speed-up", "peak RSS MiB", "note"]
    lines = []
    for name, t, fp, fp_err, lp, lp_err, peak in rows:
        ratio = f"{lp / fp:.2f}x" if fp and lp else "-"
        rss = f"{peak / 1024:.0f}" if peak else "-"
        note = fp_err or (lp_err if lp_err and lp_err != why_not else "") or ""
        lines.append([name, str(t), fmt(fp), fmt(lp), ratio, rss, note])
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for line in lines:
            print("| " + " | ".join(line) + " |")
    else:
        widths = [max(len(h), *(len(l[i]) for l in lines)) for i, h in enumerate(header)]
        print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
        for line in lines:
            print("  ".join(c.ljust(w) for c, w in zip(line, widths)))
    failed = any(fp is None for _, _, fp, *_ in rows)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
