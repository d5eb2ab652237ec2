#!/usr/bin/env python3
"""Writes the conformance scenes for seamless cube filtering
(cube_seamless), sprite coordinates on inputs the vertex shader does not
write (point_sprite_unwritten) and the anisotropic-filtering evidence scene
(aniso_footprint, kept out of conformance: see docs/shaders.md).

    python3 tests/scenes/generate/fidelity.py   # from the repository root

(textureGather on cubes is left to unit tests: the GL 3.3 reference context
has no textureGather.)

References: /work/shared/scenes/reference/render_reference.py on llvmpipe.
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("SCENELIB", "/work/shared/scenes/reference"))
from scenelib import Scene, px_to_ndc, RGBA8  # noqa: E402

CONF = os.path.join(HERE, "..", "conformance")
F4 = "PIPE_FORMAT_R32G32B32A32_FLOAT"


def cube_faces(n, layers, colour):
    """layers x n x n RGBA8 texels, colour(layer, x, y) -> (r, g, b)."""
    a = np.zeros((layers, n, n, 4), dtype=np.uint8)
    for l in range(layers):
        for y in range(n):
            for x in range(n):
                a[l, y, x, :3] = colour(l, x, y)
                a[l, y, x, 3] = 255
    return a


def cube_resource(s, rid, n, levels, cubes, colour):
    target = "PIPE_TEXTURE_CUBE_ARRAY" if cubes > 1 else "PIPE_TEXTURE_CUBE"
    s.op("resource_create", id=rid, target=target, format=RGBA8, width0=n, height0=n,
         array_size=6 * cubes, last_level=levels - 1, bind=["PIPE_BIND_SAMPLER_VIEW"])
    for lv in range(levels):
        m = max(n >> lv, 1)
        data = cube_faces(m, 6 * cubes, lambda l, x, y: colour(lv, l, x, y, m))
        s.op("texture_subdata", resource=rid, level=lv,
             box={"x": 0, "y": 0, "z": 0, "width": m, "height": m, "depth": 6 * cubes},
             **s.data_field(data, "u8", f"{rid}_mip{lv}"))


def panel(s, w, h, rect, centre, e1, e2, layer=0.0):
    """A quad over pixel rectangle `rect` whose direction varies linearly
    from centre - e1 - e2 to centre + e1 + e2."""
    x0, y0, pw, ph = rect
    rows = []
    for v in (-1, 1):
        for u in (-1, 1):
            nx, ny = px_to_ndc(x0 + (u + 1) / 2 * pw, y0 + (v + 1) / 2 * ph, w, h)
            d = np.asarray(centre) + u * np.asarray(e1) + v * np.asarray(e2)
            rows.append([nx, ny, 0.0, 1.0, d[0], d[1], d[2], layer])
    buf = s.buffer(np.asarray(rows))
    s.vertex_buffers([(buf, 32)])
    s.draw("TRIANGLE_STRIP", 0, 4)


def cube_seamless():
    w, h = 256, 128
    s = Scene("seamless_cube_map: cube maps filtered LINEAR across face edges and corners. "
              "Row 0: a 4x4-per-face cube magnified around corners (+,+,+), (-,-,+) and the "
              "+Y/-Z edge with seamless on, then (+,+,+) with it off (hard seams). Row 1: a "
              "16x16 mipmapped cube minified over wide cones with LINEAR_MIPMAP_LINEAR and "
              "LINEAR_MIPMAP_NEAREST, a 2-cube array (cube 1, then cube 0 with directions of length ~4), "
              "all seamless. Texels: R = face, G = column, B = row (mips and cubes: B offset).",
              shader_dir="../shaders")
    s.framebuffer(w, h)
    s.blend()
    s.dsa()
    s.rast()
    s.elements([(0, 0, F4), (0, 16, F4)])
    s.clear((0.1, 0.1, 0.1, 1.0))

    cube_resource(s, "cube4", 4, 1, 1,
                  lambda lv, l, x, y, m: (40 * l + 20, 60 * x + 20, 60 * y + 20))
    cube_resource(s, "cube16", 16, 5, 1,
                  lambda lv, l, x, y, m: (40 * l + 20, (x * 255) // max(m - 1, 1),
                                          (40 * lv + (y * 80) // max(m - 1, 1)) % 256))
    cube_resource(s, "cubes", 4, 1, 2,
                  lambda lv, l, x, y, m: (40 * (l % 6) + 20, 60 * x + 20, 120 * (l // 6) + 30 * y))
    v4 = s.view("cube4")
    v16 = s.view("cube16", last_level=4)
    va = s.view("cubes")

    def views(v0):
        s.op("set_sampler_views", shader="PIPE_SHADER_FRAGMENT", start_slot=0, views=[v0, va])

    lin = dict(min_img_filter="PIPE_TEX_FILTER_LINEAR", mag_img_filter="PIPE_TEX_FILTER_LINEAR",
               min_mip_filter="PIPE_TEX_MIPFILTER_NONE", wrap_s="PIPE_TEX_WRAP_CLAMP_TO_EDGE",
               wrap_t="PIPE_TEX_WRAP_CLAMP_TO_EDGE", wrap_r="PIPE_TEX_WRAP_CLAMP_TO_EDGE")
    seam = s.sampler(**lin, seamless_cube_map=True)
    plain = s.sampler(**lin, seamless_cube_map=False)
    mip_lin = s.sampler(**dict(lin, min_mip_filter="PIPE_TEX_MIPFILTER_LINEAR"), seamless_cube_map=True)
    mip_near = s.sampler(**dict(lin, min_mip_filter="PIPE_TEX_MIPFILTER_NEAREST"), seamless_cube_map=True)

    def bind(smp):
        s.op("bind_sampler_states", shader="PIPE_SHADER_FRAGMENT", start_slot=0, samplers=[smp, smp])

    vs, fs = s.shaders("cube.wgsl")
    views(v4)
    bind(seam)
    panel(s, w, h, (0, 0, 64, 64), (1, 1, 1), (0.45, 0.0, -0.45), (-0.2, 0.4, -0.2))
    panel(s, w, h, (64, 0, 64, 64), (-1, -1, 1), (0.3, -0.3, 0.05), (0.2, 0.25, 0.45))
    panel(s, w, h, (128, 0, 64, 64), (0.13, 1, -1), (0.55, 0.0, 0.0), (0.0, 0.35, 0.35))
    bind(plain)
    panel(s, w, h, (192, 0, 64, 64), (1, 1, 1), (0.45, 0.0, -0.45), (-0.2, 0.4, -0.2))

    views(v16)
    bind(mip_lin)
    panel(s, w, h, (0, 64, 64, 64), (1, -1, -1), (2.2, 0.3, 1.1), (-0.4, 2.0, -1.3))
    bind(mip_near)
    panel(s, w, h, (64, 64, 64, 64), (-1, 0.2, 1), (1.4, 0.0, 1.6), (0.1, 1.9, 0.0))

    bind(seam)
    views(v4)
    fs_a = s.uid("fs")
    s.op("create_fs_state", id=fs_a, language="wgsl", source="../shaders/cube.wgsl", entry_point="fs_array")
    s.op("bind_fs_state", id=fs_a)
    panel(s, w, h, (128, 64, 64, 64), (-1, 1, -1), (0.35, 0.3, 0.0), (0.0, -0.25, 0.4), layer=1.0)
    # unnormalized directions (3x) across the -X/-Z edge and the
    # (-,+,-) corner of cube 0
    panel(s, w, h, (192, 64, 64, 64), (-3, 0.9, -3), (0.9, 0.0, -0.9), (0.0, 1.2, 0.3), layer=0.0)
    s.output("color", surface="rt_surf")
    s.save(CONF, "cube_seamless")


def point_sprite_unwritten():
    w, h = 128, 64
    s = Scene("point sprites whose coordinate input the vertex shader does not write: a GLSL "
              "vertex shader writing only gl_PointSize and a colour (location 0), a fragment "
              "shader reading GENERIC1 as (s, t, 0, 1) with sprite_coord_enable bit 1 (and bit 3, "
              "unread): red = s, green = t, blue = colour + z, alpha = w. Left half "
              "sprite_coord_mode UPPER_LEFT, right half LOWER_LEFT; per-vertex sizes 5 to 30 at "
              "pixel centres and off-centre; a triangle with the same state reads the "
              "undefined input as zeros.",
              shader_dir="../shaders")
    s.framebuffer(w, h)
    s.blend()
    s.dsa()
    s.shaders("pointsize.vert", "sprite_unwritten.wgsl")
    s.elements([(0, 0, F4), (0, 16, F4), (0, 32, F4)])
    s.clear((0.1, 0.1, 0.1, 1.0))
    rows = []
    sizes = [5.0, 8.0, 11.5, 16.0, 23.0, 30.0]
    for i, sz in enumerate(sizes):
        x = 6 + 10 * i + sz / 2 + (0.37 if i % 2 else 0.0)
        y = 14 + (0.5 if i % 3 == 0 else 0.21) + (i % 2) * 24
        nx, ny = px_to_ndc(x, y, w, h)
        rows.append([nx, ny, 0, 1, 0.2, 0.4, 0.25 + 0.1 * i, 1.0, sz, 0, 0, 0])
    left = np.asarray(rows)
    right = left.copy()
    right[:, 0] += 1.0
    for mode, pts in (("PIPE_SPRITE_COORD_UPPER_LEFT", left), ("PIPE_SPRITE_COORD_LOWER_LEFT", right)):
        s.rast(point_quad_rasterization=True, sprite_coord_enable=10, sprite_coord_mode=mode,
               point_size_per_vertex=True, point_size=1.0)
        buf = s.buffer(pts)
        s.vertex_buffers([(buf, 48)])
        s.draw("POINTS", 0, len(pts))
    tri = []
    for x, y in ((100, 44), (126, 62), (98, 62)):
        nx, ny = px_to_ndc(x, y, w, h)
        tri.append([nx, ny, 0, 1, 0.9, 0.9, 0.6, 1.0, 1.0, 0, 0, 0])
    buf = s.buffer(np.asarray(tri))
    s.vertex_buffers([(buf, 48)])
    s.draw("TRIANGLES", 0, 3)
    s.output("color", surface="rt_surf")
    s.save(CONF, "point_sprite_unwritten")


def aniso_footprint():
    """Evidence for docs/shaders.md, not a conformance scene: GL leaves the
    anisotropic footprint to the driver, and llvmpipe, softpipe and
    ferropipe each choose their own."""
    w, h = 288, 96
    s = Scene("anisotropic filtering footprint: a REPEAT-wrapped, mipmapped 64x64 checkerboard "
              "(blue = 40 * level) on a floor at a grazing angle, LINEAR_MIPMAP_LINEAR, "
              "max_anisotropy 1, 4 and 16 from left to right. GL leaves the footprint to the "
              "implementation: drivers differ here by design.", shader_dir="../shaders")
    s.framebuffer(w, h)
    s.blend()
    s.dsa()
    s.rast()
    s.shaders("tex.wgsl")
    s.std_elements()
    s.clear((0.1, 0.1, 0.1, 1.0))
    n, levels = 64, 7
    s.op("resource_create", id="checker", target="PIPE_TEXTURE_2D", format=RGBA8, width0=n,
         height0=n, last_level=levels - 1, bind=["PIPE_BIND_SAMPLER_VIEW"])
    base = np.fromfunction(lambda y, x: ((x // 4 + y // 4) % 2) * 255.0, (n, n))
    img = base
    for lv in range(levels):
        m = img.shape[0]
        data = np.zeros((m, m, 4), dtype=np.uint8)
        data[..., 0] = np.round(img)
        data[..., 1] = np.round(img * 0.8)
        data[..., 2] = 40 * lv
        data[..., 3] = 255
        s.op("texture_subdata", resource="checker", level=lv,
             box={"x": 0, "y": 0, "z": 0, "width": m, "height": m, "depth": 1},
             **s.data_field(data, "u8", f"aniso_mip{lv}"))
        if m > 1:
            img = img.reshape(m // 2, 2, m // 2, 2).mean(axis=(1, 3))
    s.view("checker", bind_slot=0, last_level=levels - 1)
    # near edge at the bottom (w = 1), far edge at w = 8; uv repeats 2 x 16
    far = 8.0
    verts = [[-1, -1, 0, 1, 0, 0, 0, 1], [1, -1, 0, 1, 2, 0, 0, 1],
             [-far, 0.9 * far, 0, far, 0, 16, 0, 1], [far, 0.9 * far, 0, far, 2, 16, 0, 1]]
    buf = s.buffer(np.asarray(verts, dtype=np.float64))
    s.vertex_buffers([(buf, 32)])
    for i, aniso in enumerate((1, 4, 16)):
        s.sampler(bind_slot=0, min_img_filter="PIPE_TEX_FILTER_LINEAR",
                  mag_img_filter="PIPE_TEX_FILTER_LINEAR", min_mip_filter="PIPE_TEX_MIPFILTER_LINEAR",
                  max_anisotropy=aniso)
        s.viewport(96 * i, 0, 96, 96)
        s.draw("TRIANGLE_STRIP", 0, 4)
    s.output("color", surface="rt_surf")
    s.save(os.path.join(HERE, "..", "evidence"), "aniso_footprint")


if __name__ == "__main__":
    which = sys.argv[1:] or ["cube_seamless", "point_sprite_unwritten"]
    for name in which:
        globals()[name]()
