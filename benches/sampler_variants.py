#!/usr/bin/env python3
"""Writes variants of the postprocess perf scene that take the general sampling path.

    python3 benches/sampler_variants.py OUT_DIR
    python3 benches/perf_vs_llvmpipe.py --scenes OUT_DIR/perf --threads 1 --rounds 3

`postprocess` (../shared/scenes/perf) samples a 1920x1080 RGBA8 image 16
times per pixel with a bilinear CLAMP_TO_EDGE sampler: the unorm8 kernels'
case.  Each variant changes one thing, so the same 33 M lookups a frame go
through the SIMD general path instead (systems/shader/src/texture/soa.rs):

* post_nearest: NEAREST filters (llvmpipe's AoS path, ours: `sample_aos_nearest`)
* post_mirror: MIRROR_REPEAT on both axes
* post_border: CLAMP_TO_BORDER with a border colour
* post_f32 / post_f16: the source as R32G32B32A32_FLOAT / R16G16B16A16_FLOAT
* post_bgra: the source as B8G8R8A8_UNORM (still the unorm8 kernels, swizzled)

OUT_DIR gets `perf/*.json` and links to the shared `shaders/` and `reference/`
folders, which `perf_vs_llvmpipe.py` and `render_reference.py` look for beside
the scenes.  The variants' images pass `compare.py` against llvmpipe.
"""

import copy
import json
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared/scenes"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = Path(sys.argv[1])
    perf = out / "perf"
    perf.mkdir(parents=True, exist_ok=True)
    for name in ("shaders", "reference"):
        link = out / name
        if not link.exists():
            os.symlink(SHARED / name, link)
    src_bin = perf / "postprocess_src.bin"
    if not src_bin.exists():
        os.symlink(SHARED / "perf/postprocess_src.bin", src_bin)
    base = json.loads((SHARED / "perf/postprocess.json").read_text())

    def op(scene, name, **match):
        for o in scene["calls"]:
            if o["op"] == name and all(o.get(k) == v for k, v in match.items()):
                return o
        raise KeyError(name)

    def variant(name, change):
        scene = copy.deepcopy(base)
        change(op(scene, "create_sampler_state")["state"], op(scene, "resource_create", id="src"))
        scene["description"] = f"{name}: " + scene["description"]
        (perf / f"{name}.json").write_text(json.dumps(scene))

    def both(key, value):
        def change(state, _src):
            state[key[0]] = state[key[1]] = value

        return change

    img = np.fromfile(SHARED / "perf/postprocess_src.bin", np.uint8).astype(np.float32) / 255.0
    img.astype("<f4").tofile(perf / "post_f32.bin")
    img.astype("<f2").tofile(perf / "post_f16.bin")

    def source(fmt, data):
        def change(_state, src):
            src["format"] = fmt
            if data:
                src["data"] = {"file": data}

        return change

    def border(state, _src):
        state["wrap_s"] = state["wrap_t"] = "PIPE_TEX_WRAP_CLAMP_TO_BORDER"
        state["border_color"] = [0.2, 0.3, 0.4, 1.0]

    variant("post_nearest", both(("min_img_filter", "mag_img_filter"), "PIPE_TEX_FILTER_NEAREST"))
    variant("post_mirror", both(("wrap_s", "wrap_t"), "PIPE_TEX_WRAP_MIRROR_REPEAT"))
    variant("post_border", border)
    variant("post_f32", source("PIPE_FORMAT_R32G32B32A32_FLOAT", "post_f32.bin"))
    variant("post_f16", source("PIPE_FORMAT_R16G16B16A16_FLOAT", "post_f16.bin"))
    variant("post_bgra", source("PIPE_FORMAT_B8G8R8A8_UNORM", None))
    print(f"wrote {len(list(perf.glob('*.json')))} scenes to {perf}")


if __name__ == "__main__":
    main()
