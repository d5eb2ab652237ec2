#!/usr/bin/env python3
"""Writes mutated copies of the conformance scenes for differential testing
against llvmpipe (see README.md).

    python3 tests/differential/mutate.py OUT_DIR

Each mutation flips one piece of state the scene did not vary (rasterizer
flags, render-target format); a scene it does not change is skipped.  Data
and shader paths are made absolute so the copies can live anywhere.
"""
import glob
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "scenes", "conformance")
# Scenes the reference tool cannot render (line_last_pixel has no OpenGL
# equivalent).
SKIP = {"line_last_pixel"}

RAST_DEFAULTS = {"half_pixel_center": True, "front_ccw": False, "flatshade_first": False,
                 "flatshade": False, "cull_face": "PIPE_FACE_NONE", "light_twoside": False,
                 "clamp_fragment_color": False, "line_width": 1.0, "point_size": 1.0,
                 "clip_halfz": False, "offset_tri": False, "offset_units": 0.0,
                 "offset_scale": 0.0, "scissor": False, "depth_clamp": False}


def rast(key, fn):
    def mutate(scene):
        changed = False
        for c in scene["calls"]:
            if c.get("op") == "create_rasterizer_state":
                st = c.setdefault("state", {})
                old = st.get(key, RAST_DEFAULTS[key])
                new = fn(old)
                if new != old:
                    st[key] = new
                    changed = True
        return changed
    return mutate


def scissor(scene):
    """Scissor on, to a rectangle inset a quarter of the framebuffer."""
    fb = next((c for c in scene["calls"] if c.get("op") == "set_framebuffer_state"), None)
    if fb is None or not rast("scissor", lambda v: True)(scene):
        return False
    w, h = fb["width"], fb["height"]
    at = scene["calls"].index(fb) + 1
    scene["calls"].insert(at, {"op": "set_scissor_states", "start_slot": 0, "scissors": [
        {"minx": w // 4, "miny": h // 4, "maxx": w - w // 5, "maxy": h - h // 6}]})
    return True


def retarget(old, new, bind):
    """Every `bind` resource of format `old` becomes `new` (and so do the
    surfaces, views and blits that name `old` for them)."""
    def mutate(scene):
        ids = set()
        for c in scene["calls"]:
            if (c.get("op") == "resource_create" and c.get("format") == old
                    and bind in c.get("bind", [])):
                c["format"] = new
                ids.add(c["id"])
        if not ids:
            return False
        for c in scene["calls"]:
            if c.get("op") in ("create_surface", "create_sampler_view") and c.get("resource") in ids \
                    and c.get("format") == old:
                c["format"] = new
            if c.get("op") == "blit":
                for side in ("src", "dst"):
                    s = c.get(side, {})
                    if s.get("resource") in ids and s.get("format") == old:
                        s["format"] = new
        return True
    return mutate


MUTATIONS = {
    "hpc0": rast("half_pixel_center", lambda v: not v),
    "ccw": rast("front_ccw", lambda v: not v),
    "pvfirst": rast("flatshade_first", lambda v: not v),
    "flat": rast("flatshade", lambda v: True),
    "cullback": rast("cull_face", lambda v: "PIPE_FACE_BACK"),
    "twoside": rast("light_twoside", lambda v: True),
    "clampfrag": rast("clamp_fragment_color", lambda v: True),
    "offset": lambda scene: (rast("offset_tri", lambda v: True)(scene)
                             | rast("offset_units", lambda v: 2.0)(scene)
                             | rast("offset_scale", lambda v: 1.5)(scene)),
    "scissor": lambda scene: scissor(scene),
    "lw3": rast("line_width", lambda v: 3.0),
    "ps5": rast("point_size", lambda v: 5.0),
    "halfz": rast("clip_halfz", lambda v: True),
    "bgra": retarget("PIPE_FORMAT_R8G8B8A8_UNORM", "PIPE_FORMAT_B8G8R8A8_UNORM",
                     "PIPE_BIND_RENDER_TARGET"),
    "rt16f": retarget("PIPE_FORMAT_R8G8B8A8_UNORM", "PIPE_FORMAT_R16G16B16A16_FLOAT",
                      "PIPE_BIND_RENDER_TARGET"),
    "rt32f": retarget("PIPE_FORMAT_R8G8B8A8_UNORM", "PIPE_FORMAT_R32G32B32A32_FLOAT",
                      "PIPE_BIND_RENDER_TARGET"),
    "rt16un": retarget("PIPE_FORMAT_R8G8B8A8_UNORM", "PIPE_FORMAT_R16G16B16A16_UNORM",
                       "PIPE_BIND_RENDER_TARGET"),
    "z32f": retarget("PIPE_FORMAT_Z24_UNORM_S8_UINT", "PIPE_FORMAT_Z32_FLOAT_S8X24_UINT",
                     "PIPE_BIND_DEPTH_STENCIL"),
    "z16": retarget("PIPE_FORMAT_Z32_FLOAT", "PIPE_FORMAT_Z16_UNORM", "PIPE_BIND_DEPTH_STENCIL"),
    "z16s": retarget("PIPE_FORMAT_Z24_UNORM_S8_UINT", "PIPE_FORMAT_Z16_UNORM",
                     "PIPE_BIND_DEPTH_STENCIL"),
}


def absolute_paths(o):
    if isinstance(o, dict):
        for k, v in list(o.items()):
            if k in ("source", "file") and isinstance(v, str) and not os.path.isabs(v):
                o[k] = os.path.normpath(os.path.join(SRC, v))
            else:
                absolute_paths(v)
    elif isinstance(o, list):
        for x in o:
            absolute_paths(x)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "out/differential/scenes"
    only = set(sys.argv[2].split(",")) if len(sys.argv) > 2 else None
    os.makedirs(out, exist_ok=True)
    n = 0
    for path in sorted(glob.glob(os.path.join(SRC, "*.json"))):
        base = os.path.basename(path)[:-5]
        if base in SKIP:
            continue
        for name, mutate in MUTATIONS.items():
            if only and name not in only:
                continue
            scene = json.load(open(path))
            if not mutate(scene):
                continue
            absolute_paths(scene)
            with open(os.path.join(out, f"{base}__{name}.json"), "w") as f:
                json.dump(scene, f)
            n += 1
    print(f"{n} mutated scenes in {out}")


if __name__ == "__main__":
    main()
