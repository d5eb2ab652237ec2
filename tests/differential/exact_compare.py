#!/usr/bin/env python3
"""Byte-exact comparison of colour outputs: REF_DIR/NAME/*.png against
OUT_DIR/NAME/*.png for every NAME in REF_DIR.

    python3 tests/differential/exact_compare.py REF_DIR OUT_DIR [-v]

Prints one line per differing output (differing bytes and pixels, the
largest difference, the output's format from the reference manifest) and a
summary: variants, bytes compared, bytes and pixels that differ, and the
count per format.  Exit status 0 only when every byte matches.
"""
import collections
import json
import os
import sys

import numpy as np
from PIL import Image


def load(path):
    return np.asarray(Image.open(path).convert("RGBA"), dtype=np.int16)


def main():
    ref_root, out_root = sys.argv[1], sys.argv[2]
    verbose = "-v" in sys.argv[3:]
    variants = compared = bad_bytes = bad_pixels = 0
    missing = []
    per_format = collections.Counter()
    per_format_bad = collections.Counter()
    for name in sorted(os.listdir(ref_root)):
        mpath = os.path.join(ref_root, name, "manifest.json")
        if not os.path.isfile(mpath):
            continue
        variants += 1
        manifest = json.load(open(mpath))
        for o in manifest["outputs"]:
            for fname in o["files"]:
                if not fname.endswith(".png"):
                    continue
                fmt = o.get("format", "?").replace("PIPE_FORMAT_", "")
                ours = os.path.join(out_root, name, fname)
                if not os.path.isfile(ours):
                    missing.append(f"{name}/{fname}")
                    continue
                a, b = load(os.path.join(ref_root, name, fname)), load(ours)
                if a.shape != b.shape:
                    missing.append(f"{name}/{fname} (size)")
                    continue
                d = np.abs(a - b)
                compared += a.size
                per_format[fmt] += a.size
                nb = int((d > 0).sum())
                if nb:
                    npx = int((d.max(axis=2) > 0).sum())
                    bad_bytes += nb
                    bad_pixels += npx
                    per_format_bad[fmt] += nb
                    hist = collections.Counter(d[d > 0].ravel().tolist())
                    print(f"{name}/{fname} [{fmt}]: {nb} bytes, {npx} pixels differ, max {int(d.max())}"
                          + (f" {dict(sorted(hist.items()))}" if verbose else ""))
    for m in missing:
        print(f"{m}: MISSING")
    print("per format (bytes compared / differing): " + ", ".join(
        f"{f} {per_format[f]}/{per_format_bad[f]}" for f in sorted(per_format)))
    print(f"{variants} variants, {compared} bytes compared, {bad_bytes} bytes "
          f"({bad_pixels} pixels) differ, {len(missing)} outputs missing")
    sys.exit(0 if bad_bytes == 0 and not missing else 1)


if __name__ == "__main__":
    main()
