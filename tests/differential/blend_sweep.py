#!/usr/bin/env python3
"""Generated blend scenes for a byte-exact comparison with llvmpipe (see
README.md, "Exact 8-bit blending").

    python3 tests/differential/blend_sweep.py OUT_DIR [--count N] [--seed S] [--size W]

Each scene clears one or two colour buffers to random colours, then stacks
2-8 draws of large overlapping triangles (so most pixels are blended 2-8
times), each draw with its own random blend state: every blend factor
(constant colour/alpha, SRC_ALPHA_SATURATE, dual-source SRC1_* in scenes
whose shader has a second source), every blend function, separate RGB and
alpha equations, colour masks, independent blend per render target, a
random blend colour (sometimes outside [0, 1]) and flat random vertex
colours (sometimes outside [0, 1]; `--smooth F` makes a fraction F of the
draws smooth-shaded).  Vertices lie on a 1/16-pixel grid inside the
viewport, so coverage is exact and every difference is the colour path's.  Targets: RGBA8, BGRA8, RGBX8,
BGRX8, their sRGB forms and B5G6R5.  Shaders are inline WGSL, so a scene
is one self-contained file.

Scenes are deterministic in (seed, index); names say what varies:
`blend_<index>_<format>[_mrt|_dual]`.
"""
import argparse
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "shared", "scenes", "reference"))
sys.path.insert(0, "/work/shared/scenes/reference")
import scenelib  # noqa: E402

FACTORS = ["ONE", "SRC_COLOR", "SRC_ALPHA", "DST_ALPHA", "DST_COLOR", "SRC_ALPHA_SATURATE",
           "CONST_COLOR", "CONST_ALPHA", "ZERO", "INV_SRC_COLOR", "INV_SRC_ALPHA",
           "INV_DST_ALPHA", "INV_DST_COLOR", "INV_CONST_COLOR", "INV_CONST_ALPHA"]
SRC1_FACTORS = ["SRC1_COLOR", "SRC1_ALPHA", "INV_SRC1_COLOR", "INV_SRC1_ALPHA"]
FUNCS = ["ADD", "SUBTRACT", "REVERSE_SUBTRACT", "MIN", "MAX"]
# (format, weight); weights favour the 8-bit fast path.
FORMATS = [("R8G8B8A8_UNORM", 8), ("B8G8R8A8_UNORM", 4), ("R8G8B8X8_UNORM", 2),
           ("B8G8R8X8_UNORM", 2), ("R8G8B8A8_SRGB", 2), ("B8G8R8A8_SRGB", 1),
           ("B5G6R5_UNORM", 1), ("R10G10B10A2_UNORM", 1)]

SHADER = """
enable dual_source_blending;
struct VOut {
    @builtin(position) pos: vec4<f32>,
    @location(0) %(interp)s c0: vec4<f32>,
    @location(1) %(interp)s c1: vec4<f32>,
};
struct FOut {
%(outs)s
};
@vertex
fn vs_main(@location(0) pos: vec4<f32>, @location(1) c0: vec4<f32>, @location(2) c1: vec4<f32>) -> VOut {
    var o: VOut;
    o.pos = pos;
    o.c0 = c0;
    o.c1 = c1;
    return o;
}
@fragment
fn fs_main(in: VOut) -> FOut {
    var o: FOut;
    o.a = in.c0;
    o.b = in.c1;
    return o;
}
"""
OUTS = {
    "single": "    @location(0) a: vec4<f32>,\n    @location(1) b: vec4<f32>,",
    "mrt": "    @location(0) a: vec4<f32>,\n    @location(1) b: vec4<f32>,",
    "dual": "    @location(0) @blend_src(0) a: vec4<f32>,\n    @location(0) @blend_src(1) b: vec4<f32>,",
}


def colour(rng, wide):
    """A random colour channel: often an exact k/255, sometimes outside [0, 1]."""
    r = rng.random()
    if wide and r < 0.1:
        return rng.choice([-0.25, -1e-3, 1.0 + 1e-3, 1.3, rng.uniform(-0.5, 1.5)])
    if r < 0.4:
        return rng.randrange(256) / 255.0
    if r < 0.5:
        return rng.choice([0.0, 1.0, 0.5, 128 / 255.0, 127 / 255.0])
    return rng.random()


def rt_state(rng, dual):
    pool = FACTORS + (SRC1_FACTORS if dual else [])

    def f():
        return "PIPE_BLENDFACTOR_" + rng.choice(pool)
    st = {"colormask": 15 if rng.random() < 0.75 else rng.randrange(16)}
    if rng.random() < 0.93:
        rgb_func = rng.choice(FUNCS)
        # Separate alpha equations half of the time.
        sep = rng.random() < 0.5
        st.update({
            "blend_enable": True,
            "rgb_func": "PIPE_BLEND_" + rgb_func,
            "rgb_src_factor": f(), "rgb_dst_factor": f(),
        })
        if sep:
            st.update({"alpha_func": "PIPE_BLEND_" + rng.choice(FUNCS),
                       "alpha_src_factor": f(), "alpha_dst_factor": f()})
        else:
            st.update({"alpha_func": st["rgb_func"],
                       "alpha_src_factor": st["rgb_src_factor"].replace("SRC_ALPHA_SATURATE", "ONE"),
                       "alpha_dst_factor": st["rgb_dst_factor"].replace("SRC_ALPHA_SATURATE", "ONE")})
    return st


def make_scene(index, seed, size, smooth=0.0, formats=FORMATS):
    rng = random.Random(seed * 100003 + index)
    fmt = rng.choices([f for f, _ in formats], [w for _, w in formats])[0]
    r = rng.random()
    kind = "mrt" if r < 0.2 else "dual" if r < 0.35 else "single"
    fmts = [fmt]
    if kind == "mrt":
        fmts.append(rng.choices([f for f, _ in formats], [w for _, w in formats])[0])
    name = f"blend_{index:03d}_{fmt.lower()}" + ("" if kind == "single" else "_" + kind)
    s = scenelib.Scene(f"blend sweep {index} (seed {seed}): {kind}, targets {', '.join(fmts)}; "
                       "stacked draws with random blend states, blend colours and vertex colours")
    w = h = size
    cbufs = []
    for i, f in enumerate(fmts):
        rt = s.texture(w, h, "PIPE_FORMAT_" + f, rid=f"rt{i}",
                       bind=("PIPE_BIND_RENDER_TARGET", "PIPE_BIND_SAMPLER_VIEW"))
        cbufs.append(s.surface(rt))
    s.set_fb(w, h, cbufs)
    s.viewport(0, 0, w, h)
    s.dsa()
    s.elements([(0, 0, "PIPE_FORMAT_R32G32B32A32_FLOAT"), (0, 16, "PIPE_FORMAT_R32G32B32A32_FLOAT"),
                (0, 32, "PIPE_FORMAT_R32G32B32A32_FLOAT")])
    shaders = {}
    for interp in ("flat", "smooth"):
        code = SHADER % {"interp": "@interpolate(flat)" if interp == "flat" else "",
                         "outs": OUTS[kind]}
        vs, fs = s.uid("vs"), s.uid("fs")
        s.op("create_vs_state", id=vs, language="wgsl", code=code, entry_point="vs_main")
        s.op("create_fs_state", id=fs, language="wgsl", code=code, entry_point="fs_main")
        shaders[interp] = (vs, fs)
    s.rast(half_pixel_center=True)
    # Random clear colours (exactly representable or not).
    s.clear([colour(rng, False) for _ in range(4)])
    ndraws = rng.randint(2, 8)
    bound = None
    for _ in range(ndraws):
        interp = "smooth" if rng.random() < smooth else "flat"
        if bound != interp:
            vs, fs = shaders[interp]
            s.op("bind_vs_state", id=vs)
            s.op("bind_fs_state", id=fs)
            bound = interp
        if kind == "mrt" and rng.random() < 0.8:
            s.blend(rts=[rt_state(rng, False), rt_state(rng, False)], independent_blend_enable=True)
        else:
            s.blend(rts=[rt_state(rng, kind == "dual")])
        s.op("set_blend_color", color=scenelib.f32list(
            [colour(rng, True) for _ in range(4)]))
        ntris = rng.randint(1, 3)
        verts = []
        wide = rng.random() < 0.3
        for _ in range(ntris):
            for _ in range(3):
                # Inside the viewport on a 1/16-pixel grid: no clipping, and
                # edges through pixel centres are decided by the fill rule
                # on exact values, so coverage is the same in both.
                x, y = (rng.randint(0, 16 * w) / (8.0 * w) - 1.0 for _ in range(2))
                verts.append([x, y, 0.0, 1.0] + [colour(rng, wide) for _ in range(8)])
        buf = s.buffer(verts)
        s.vertex_buffers([(buf, 48)])
        s.draw("TRIANGLES", 0, 3 * ntris)
    for i, c in enumerate(cbufs):
        s.output(f"color{i}" if len(cbufs) > 1 else "color", surface=c)
    return name, s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--formats", default="",
                    help="comma-separated target formats to draw from (default: all, weighted)")
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--smooth", type=float, default=0.0,
                    help="fraction of draws with smooth colours (interpolation rounding "
                         "differs from llvmpipe's by an ulp, so these are not byte-exact)")
    a = ap.parse_args()
    formats = FORMATS
    if a.formats:
        known = dict(FORMATS)
        names = [f.strip().upper().removeprefix("PIPE_FORMAT_") for f in a.formats.split(",")]
        unknown = [f for f in names if f not in known]
        if unknown:
            ap.error(f"unknown format(s) {unknown}; known: {sorted(known)}")
        formats = [(f, known[f]) for f in names]
    os.makedirs(a.out, exist_ok=True)
    for i in range(a.first, a.first + a.count):
        name, s = make_scene(i, a.seed, a.size, a.smooth, formats)
        s.save(a.out, name)
    print(f"{a.count} blend scenes in {a.out}")


if __name__ == "__main__":
    main()
