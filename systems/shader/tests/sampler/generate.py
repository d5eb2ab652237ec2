#!/usr/bin/env python3
"""Sampler oracle scenes: a full-screen quad whose fragment shader derives
texture coordinates from @builtin(position) alone, so llvmpipe and
ferropipe's shader executor sample at bit-identical coordinates and the
comparison isolates the sampler (LOD selection, wrap, filtering, formats).

    python3 generate.py            # writes *.json here
    python3 ../../../../../shared/scenes/reference/render_reference.py lod.json --out ref/lod

tests/sampler.rs reads the scenes themselves (textures, views, samplers,
shader), so nothing is duplicated there.

The references were rendered with one fix to render_reference.py's
upload_texture: it hands PyOpenGL a uint8 numpy array for every format,
and PyOpenGL converts arrays element-wise to the GL type, so 16- and
32-bit texels (RGBA16F, RGBA32F, RGBA16, RGB10A2, RGB565 ...) arrive
mangled.  Passing the raw bytes (`bytes(data)`) for non-GL_UNSIGNED_BYTE
types fixes it.  The stored public tex_formats reference has the same
problem in its RGBA16F and RGBA32F cells.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../../../../../shared/scenes/reference"))
from scenelib import Scene, f32list  # noqa: E402

PALETTE = [(230, 40, 40), (40, 200, 60), (50, 80, 230), (230, 200, 30), (40, 210, 210), (200, 60, 200),
           (250, 140, 30), (240, 240, 240)]


def texel(kind, level, x, y, z=0):
    """RGBA8 texel of the test textures (see tests/sampler.rs)."""
    if kind == "levels":
        r, g, b = PALETTE[level % 8]
        d = 24 if (x + y) % 2 == 0 else -24
        return [min(255, max(0, r + d)), min(255, max(0, g + d)), min(255, max(0, b + d)), 255]
    if kind == "noise":
        return [(37 * level + 11 * x + 3 * y + 29 * z) % 256, (91 * level + 5 * x + 17 * y + 13 * z) % 256,
                (53 * level + 7 * x * y + 3 * z) % 256, (200 + 13 * x + 7 * y) % 256]
    raise ValueError(kind)


def level_data(kind, w, h, level, depth=1):
    out = []
    for z in range(depth):
        for y in range(h):
            for x in range(w):
                out.extend(texel(kind, level, x, y, z))
    return out


def quad(s):
    """A full-screen quad with only a position element."""
    buf = s.buffer([-1, -1, 0, 1, 1, -1, 0, 1, -1, 1, 0, 1, 1, -1, 0, 1, 1, 1, 0, 1, -1, 1, 0, 1])
    s.vertex_buffers([(buf, 16)])
    s.elements([(0, 0, "PIPE_FORMAT_R32G32B32A32_FLOAT")])


def common(s, w, h, fs_code):
    s.framebuffer(w, h)
    s.blend()
    s.dsa()
    s.rast()
    vs = "@vertex fn vs_main(@location(0) p: vec4<f32>) -> @builtin(position) vec4<f32> { return p; }"
    s.op("create_vs_state", id="vs", language="wgsl", code=vs, entry_point="vs_main")
    s.op("create_fs_state", id="fs", language="wgsl", code=fs_code, entry_point="fs_main")
    s.op("bind_vs_state", id="vs")
    s.op("bind_fs_state", id="fs")
    s.clear((0, 0, 0, 1))
    quad(s)


def mip_texture(s, kind, size, levels, rid):
    s.texture(size, size, rid=rid, last_level=levels - 1)
    for l in range(levels):
        w = max(1, size >> l)
        s.op("texture_subdata", resource=rid, level=l, box={"x": 0, "y": 0, "z": 0, "width": w, "height": w, "depth": 1},
             data=level_data(kind, w, w, l), type="u8")


# ---------------------------------------------------------------------------
# LOD selection: 8 regions of 64x128, each its own view + sampler pair

LOD_SAMPLERS = [
    dict(min_img_filter="PIPE_TEX_FILTER_LINEAR", mag_img_filter="PIPE_TEX_FILTER_LINEAR", min_mip_filter="PIPE_TEX_MIPFILTER_NEAREST"),
    dict(min_img_filter="PIPE_TEX_FILTER_LINEAR", mag_img_filter="PIPE_TEX_FILTER_LINEAR", min_mip_filter="PIPE_TEX_MIPFILTER_LINEAR"),
    dict(min_img_filter="PIPE_TEX_FILTER_NEAREST", mag_img_filter="PIPE_TEX_FILTER_NEAREST", min_mip_filter="PIPE_TEX_MIPFILTER_LINEAR"),
    dict(min_img_filter="PIPE_TEX_FILTER_LINEAR", mag_img_filter="PIPE_TEX_FILTER_LINEAR", min_mip_filter="PIPE_TEX_MIPFILTER_LINEAR", lod_bias=0.75),
    dict(min_img_filter="PIPE_TEX_FILTER_LINEAR", mag_img_filter="PIPE_TEX_FILTER_LINEAR", min_mip_filter="PIPE_TEX_MIPFILTER_LINEAR", min_lod=1.5, max_lod=4.25),
    dict(min_img_filter="PIPE_TEX_FILTER_NEAREST", mag_img_filter="PIPE_TEX_FILTER_NEAREST", min_mip_filter="PIPE_TEX_MIPFILTER_NEAREST", max_lod=3.0),
    dict(min_img_filter="PIPE_TEX_FILTER_LINEAR", mag_img_filter="PIPE_TEX_FILTER_NEAREST", min_mip_filter="PIPE_TEX_MIPFILTER_NONE"),
    dict(min_img_filter="PIPE_TEX_FILTER_LINEAR", mag_img_filter="PIPE_TEX_FILTER_LINEAR", min_mip_filter="PIPE_TEX_MIPFILTER_LINEAR"),
]
LOD_VIEWS = [{}, {}, {}, {}, {}, {}, {}, {"first_level": 1, "last_level": 4}]

LOD_FS = """
@group(1) @binding(0) var t0: texture_2d<f32>;
@group(1) @binding(1) var t1: texture_2d<f32>;
@group(1) @binding(2) var t2: texture_2d<f32>;
@group(1) @binding(3) var t3: texture_2d<f32>;
@group(1) @binding(4) var t4: texture_2d<f32>;
@group(1) @binding(5) var t5: texture_2d<f32>;
@group(1) @binding(6) var t6: texture_2d<f32>;
@group(1) @binding(7) var t7: texture_2d<f32>;
@group(2) @binding(0) var s0: sampler;
@group(2) @binding(1) var s1: sampler;
@group(2) @binding(2) var s2: sampler;
@group(2) @binding(3) var s3: sampler;
@group(2) @binding(4) var s4: sampler;
@group(2) @binding(5) var s5: sampler;
@group(2) @binding(6) var s6: sampler;
@group(2) @binding(7) var s7: sampler;

@fragment
fn fs_main(@builtin(position) fc: vec4<f32>) -> @location(0) vec4<f32> {
    let region = i32(fc.x) / 64 + (i32(fc.y) / 128) * 4;
    let lx = fc.x - floor(fc.x / 64.0) * 64.0;
    let ly = fc.y - floor(fc.y / 128.0) * 128.0;
    // a perspective floor: the footprint shrinks with ly (LOD about 4 at the
    // top down to magnification at the bottom); a small shear gives unequal
    // x/y footprints
    let depth = 0.15 + ly / 180.0;
    let uv = vec2<f32>(0.5 + (lx - 32.0) * 0.03 / depth + 0.07 * ly / 128.0, 0.5 / depth + 0.013 * lx / 64.0);
    // sample everything in uniform control flow, pick afterwards
    let c0 = textureSample(t0, s0, uv);
    let c1 = textureSample(t1, s1, uv);
    let c2 = textureSample(t2, s2, uv);
    let c3 = textureSample(t3, s3, uv);
    let c4 = textureSample(t4, s4, uv);
    let c5 = textureSample(t5, s5, uv);
    let c6 = textureSample(t6, s6, uv);
    let c7 = textureSample(t7, s7, uv);
    var c = c0;
    switch (region) {
        case 1: { c = c1; }
        case 2: { c = c2; }
        case 3: { c = c3; }
        case 4: { c = c4; }
        case 5: { c = c5; }
        case 6: { c = c6; }
        case 7: { c = c7; }
        default: {}
    }
    return vec4<f32>(c.rgb, 1.0);
}
"""


def lod_scene():
    s = Scene("sampler oracle: LOD selection, brilinear, lod_bias, min/max_lod, view level ranges, min/mag switch")
    common(s, 256, 256, LOD_FS)
    mip_texture(s, "levels", 64, 7, "levels")
    views = [s.view("levels", **v) for v in LOD_VIEWS]
    s.op("set_sampler_views", shader="PIPE_SHADER_FRAGMENT", start_slot=0, views=views)
    smps = [s.sampler(**st) for st in LOD_SAMPLERS]
    s.op("bind_sampler_states", shader="PIPE_SHADER_FRAGMENT", start_slot=0, samplers=smps)
    s.draw("TRIANGLES", 0, 6)
    s.output("color", surface="rt_surf")
    return s


# ---------------------------------------------------------------------------
# wrap modes: 8 columns (modes) x 4 rows (nearest/linear x POT 4x4 / NPOT 5x3)

WRAPS = ["REPEAT", "CLAMP_TO_EDGE", "CLAMP_TO_BORDER", "MIRROR_REPEAT", "CLAMP", "MIRROR_CLAMP_TO_EDGE",
         "MIRROR_CLAMP", "MIRROR_CLAMP_TO_BORDER"]

WRAP_FS_HEAD = "".join(f"@group(1) @binding({i}) var t{i}: texture_2d<f32>;\n@group(2) @binding({i}) var s{i}: sampler;\n"
                       for i in range(16))

WRAP_FS = WRAP_FS_HEAD + """
@fragment
fn fs_main(@builtin(position) fc: vec4<f32>) -> @location(0) vec4<f32> {
    let col = i32(fc.x) / 32;
    let row = i32(fc.y) / 32;
    let lx = fc.x - floor(fc.x / 32.0) * 32.0;
    let ly = fc.y - floor(fc.y / 32.0) * 32.0;
    // -1.3 .. 2.3 across a 32-pixel cell, never on a texel edge of a 4- or 5-texel texture
    let uv = vec2<f32>(lx / 32.0 * 3.6 - 1.3 + 0.0123, ly / 32.0 * 3.6 - 1.3 + 0.0171);
    var c: array<vec4<f32>, 16>;
    c[0] = textureSampleLevel(t0, s0, uv, 0.0);
    c[1] = textureSampleLevel(t1, s1, uv, 0.0);
    c[2] = textureSampleLevel(t2, s2, uv, 0.0);
    c[3] = textureSampleLevel(t3, s3, uv, 0.0);
    c[4] = textureSampleLevel(t4, s4, uv, 0.0);
    c[5] = textureSampleLevel(t5, s5, uv, 0.0);
    c[6] = textureSampleLevel(t6, s6, uv, 0.0);
    c[7] = textureSampleLevel(t7, s7, uv, 0.0);
    c[8] = textureSampleLevel(t8, s8, uv, 0.0);
    c[9] = textureSampleLevel(t9, s9, uv, 0.0);
    c[10] = textureSampleLevel(t10, s10, uv, 0.0);
    c[11] = textureSampleLevel(t11, s11, uv, 0.0);
    c[12] = textureSampleLevel(t12, s12, uv, 0.0);
    c[13] = textureSampleLevel(t13, s13, uv, 0.0);
    c[14] = textureSampleLevel(t14, s14, uv, 0.0);
    c[15] = textureSampleLevel(t15, s15, uv, 0.0);
    // cells: column = wrap mode, row = (linear, npot) combination, the 16
    // bindings cover (mode, linear) for one texture; rows 0-1 use POT, 2-3 NPOT
    // via the second draw
    let idx = col + 8 * (row % 2);
    return vec4<f32>(c[idx].rgb, 1.0);
}
"""


def wrap_scene():
    s = Scene("sampler oracle: every wrap mode, nearest and linear, POT 4x4 and NPOT 5x3 textures, border colour")
    common(s, 256, 128, WRAP_FS)
    s.texture(4, 4, rid="pot", data=level_data("noise", 4, 4, 0), dtype="u8")
    s.texture(5, 3, rid="npot", data=level_data("noise", 5, 3, 0), dtype="u8")
    smps = []
    for linear in (False, True):
        f = "PIPE_TEX_FILTER_LINEAR" if linear else "PIPE_TEX_FILTER_NEAREST"
        for w in WRAPS:
            smps.append(s.sampler(wrap_s=f"PIPE_TEX_WRAP_{w}", wrap_t=f"PIPE_TEX_WRAP_{w}", min_img_filter=f,
                                  mag_img_filter=f, min_mip_filter="PIPE_TEX_MIPFILTER_NONE",
                                  border_color=f32list([1.0, 0.0, 1.0, 1.0])))
    s.op("bind_sampler_states", shader="PIPE_SHADER_FRAGMENT", start_slot=0, samplers=smps)
    # top half: POT
    views = [s.view("pot") for _ in range(16)]
    s.op("set_sampler_views", shader="PIPE_SHADER_FRAGMENT", start_slot=0, views=views)
    s.op("set_scissor_states", start_slot=0, scissors=[{"minx": 0, "miny": 0, "maxx": 256, "maxy": 64}])
    s.rast(scissor=True)
    s.draw("TRIANGLES", 0, 6)
    views = [s.view("npot") for _ in range(16)]
    s.op("set_sampler_views", shader="PIPE_SHADER_FRAGMENT", start_slot=0, views=views)
    s.op("set_scissor_states", start_slot=0, scissors=[{"minx": 0, "miny": 64, "maxx": 256, "maxy": 128}])
    s.draw("TRIANGLES", 0, 6)
    s.output("color", surface="rt_surf")
    return s


# ---------------------------------------------------------------------------
# texture built-ins: 16 cells of 64x64

OPS_FS = """
@group(1) @binding(0) var ta0: texture_2d<f32>;
@group(1) @binding(1) var ta1: texture_2d<f32>;
@group(1) @binding(2) var ta2: texture_2d<f32>;
@group(1) @binding(3) var tb: texture_2d<f32>;
@group(1) @binding(4) var tbl: texture_2d<f32>;
@group(2) @binding(0) var s0: sampler;
@group(2) @binding(1) var s1: sampler;
@group(2) @binding(2) var s2: sampler;
@group(2) @binding(3) var s3: sampler;

@fragment
fn fs_main(@builtin(position) fc: vec4<f32>) -> @location(0) vec4<f32> {
    let cell = i32(fc.x) / 64 + (i32(fc.y) / 64) * 4;
    let p = fc.xy - floor(fc.xy / 64.0) * 64.0;          // 0.5 .. 63.5 inside the cell
    let uv = p / 64.0 * vec2<f32>(1.7, 1.3) + vec2<f32>(0.013, 0.021);
    let persp = vec2<f32>(0.5 + (p.x - 32.0) * 0.02 / (0.2 + p.y / 100.0), 0.4 / (0.2 + p.y / 100.0));
    let lod = p.x / 64.0 * 7.3 - 0.4 + p.y / 640.0;        // per pixel, -0.4 .. 7
    let bias = (p.y - 32.0) / 12.0;                         // -2.6 .. 2.6
    let g = exp2(p.x / 10.0 - 3.0) / 64.0;
    // every lookup in uniform control flow, selected afterwards
    let r0 = textureSampleLevel(ta0, s0, uv, lod);
    let r1 = textureSampleLevel(ta1, s1, uv, lod);
    let r2 = textureSampleBias(ta0, s0, persp, bias);
    let r3 = textureSampleBias(ta2, s2, persp, bias);
    let r4 = textureSampleGrad(ta0, s0, uv, vec2<f32>(g, 0.3 * g), vec2<f32>(-0.2 * g, g * (p.y / 32.0)));
    let r5 = textureSampleGrad(ta1, s1, uv, vec2<f32>(g * 0.5, 0.0), vec2<f32>(0.0, g * 2.0));
    let r6 = textureSample(ta2, s2, persp);
    let lc = vec2<i32>(p * 0.4) - vec2<i32>(3, 2);          // some out of range
    let ll = i32(p.y) / 12 - 1;                             // -1 .. 4, some out of range
    let r7 = textureLoad(tbl, lc, ll);
    let r8 = textureSampleLevel(tb, s3, uv * 1.9 - 0.4, 1.4);
    let r9 = textureLoad(tbl, vec2<i32>(p * 0.23), 0);
    let r10 = textureSampleLevel(ta2, s2, uv, lod);
    let r11 = textureSampleGrad(ta2, s2, persp, vec2<f32>(g, 0.0), vec2<f32>(g * 0.5, g * 0.7));
    let r12 = textureSample(tb, s3, uv * 5.3 - 1.7);
    // the level is uniform per 4x2 block: llvmpipe answers one level per SIMD vector
    let dims = vec2<f32>(textureDimensions(ta0, min(i32(p.x) / 8, 6)));
    let r13 = vec4<f32>(dims / 64.0, f32(textureNumLevels(ta2)) / 8.0, f32(textureNumLevels(tb)) / 8.0);
    let r14 = textureSample(tb, s3, persp * 0.3);
    let r15 = textureSampleLevel(tb, s3, uv * 3.0, p.y / 16.0);
    var c: array<vec4<f32>, 16> = array<vec4<f32>, 16>(r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11, r12, r13, r14, r15);
    return vec4<f32>(c[cell].rgb, 1.0);
}
"""


def ops_scene():
    s = Scene("sampler oracle: per-lane explicit LOD, bias (with and without clamps), gradients, textureLoad with "
              "out-of-range coordinates and levels, queries (the reference cannot sample depth textures or gather)")
    common(s, 256, 256, OPS_FS)
    mip_texture(s, "levels", 64, 7, "levels")
    mip_texture(s, "noise", 16, 5, "noise")
    views = [s.view("levels"), s.view("levels"), s.view("levels", first_level=1, last_level=5), s.view("noise"),
             s.view("noise")]
    s.op("set_sampler_views", shader="PIPE_SHADER_FRAGMENT", start_slot=0, views=views)
    lin = dict(min_img_filter="PIPE_TEX_FILTER_LINEAR", mag_img_filter="PIPE_TEX_FILTER_LINEAR")
    near = dict(min_img_filter="PIPE_TEX_FILTER_NEAREST", mag_img_filter="PIPE_TEX_FILTER_NEAREST")
    smps = [
        s.sampler(min_mip_filter="PIPE_TEX_MIPFILTER_LINEAR", **lin),
        s.sampler(min_mip_filter="PIPE_TEX_MIPFILTER_NEAREST", **near),
        s.sampler(min_mip_filter="PIPE_TEX_MIPFILTER_LINEAR", min_lod=0.5, max_lod=3.5, lod_bias=-0.25, **lin),
        s.sampler(min_mip_filter="PIPE_TEX_MIPFILTER_NEAREST", **lin),
    ]
    s.op("bind_sampler_states", shader="PIPE_SHADER_FRAGMENT", start_slot=0, samplers=smps)
    s.draw("TRIANGLES", 0, 6)
    s.output("color", surface="rt_surf")
    return s


# ---------------------------------------------------------------------------
# targets: 1D, 1D array, 2D array, 3D, cube (8 cells of 64x64)

TARGETS_FS = """
@group(1) @binding(0) var t1d: texture_1d<f32>;
@group(1) @binding(1) var t2a_near: texture_2d_array<f32>;
@group(1) @binding(2) var t2a: texture_2d_array<f32>;
@group(1) @binding(3) var t3d: texture_3d<f32>;
@group(1) @binding(4) var tcube: texture_cube<f32>;
@group(1) @binding(5) var t2a_load: texture_2d_array<f32>;
@group(1) @binding(6) var t3d_load: texture_3d<f32>;
@group(1) @binding(7) var tcube_mip: texture_cube<f32>;
@group(2) @binding(0) var s0: sampler;
@group(2) @binding(1) var s1: sampler;
@group(2) @binding(2) var s2: sampler;
@group(2) @binding(3) var s3: sampler;
@group(2) @binding(4) var s4: sampler;
@group(2) @binding(7) var s7: sampler;

@fragment
fn fs_main(@builtin(position) fc: vec4<f32>) -> @location(0) vec4<f32> {
    let cell = i32(fc.x) / 64 + (i32(fc.y) / 64) * 4;
    let p = fc.xy - floor(fc.xy / 64.0) * 64.0;
    let uv = p / 64.0 * 1.4 - 0.2 + vec2<f32>(0.011, 0.017);
    let layer = i32(p.y) / 12 - 1;                       // -1 .. 4: clamped to the view
    let dir = vec3<f32>(p.x - 32.0 + 0.3, p.y - 32.0 + 0.7, 20.0 - (p.x + p.y) * 0.4);
    let r0 = textureSample(t1d, s0, uv.x);
    let r1 = textureSample(t2a_near, s1, uv * 2.0, layer + 1);
    let r2 = textureSample(t2a, s2, uv, layer);
    let r3 = textureSample(t3d, s3, vec3<f32>(uv, p.y / 64.0 * 1.3 - 0.1));
    let r4 = textureSample(tcube, s4, dir);
    let r5 = textureLoad(t2a_load, vec2<i32>(p / 4.0), layer, 0);
    let r6 = textureLoad(t3d_load, vec3<i32>(i32(p.x) / 4, i32(p.y) / 8, i32(p.x + p.y) / 16), 0);
    let r7 = textureSampleLevel(tcube_mip, s7, dir.zxy, 0.0);
    var c: array<vec4<f32>, 8> = array<vec4<f32>, 8>(r0, r1, r2, r3, r4, r5, r6, r7);
    return vec4<f32>(c[cell].rgb, 1.0);
}
"""


def layered(s, rid, target, w, h, layers, **kw):
    c = {"id": rid, "target": target, "format": "PIPE_FORMAT_R8G8B8A8_UNORM", "width0": w, "height0": h,
         "bind": ["PIPE_BIND_SAMPLER_VIEW"]}
    if target == "PIPE_TEXTURE_3D":
        c["depth0"] = layers
    else:
        c["array_size"] = layers
    c.update(kw)
    s.op("resource_create", **c)
    if target == "PIPE_TEXTURE_1D_ARRAY":
        s.op("texture_subdata", resource=rid, level=0, box={"x": 0, "y": 0, "z": 0, "width": w, "height": 1, "depth": layers},
             data=[c for z in range(layers) for x in range(w) for c in texel("noise", 0, x, 0, z)], type="u8")
    else:
        s.op("texture_subdata", resource=rid, level=0, box={"x": 0, "y": 0, "z": 0, "width": w, "height": h, "depth": layers},
             data=[c for z in range(layers) for y in range(h) for x in range(w) for c in texel("noise", 0, x, y, z)], type="u8")


def targets_scene():
    s = Scene("sampler oracle: 1D, 2D array (layer clamping, view layer ranges), 3D (trilinear), cube "
              "(face selection), textureLoad of arrays and 3D")
    common(s, 256, 128, TARGETS_FS)
    s.op("resource_create", id="t1d", target="PIPE_TEXTURE_1D", format="PIPE_FORMAT_R8G8B8A8_UNORM", width0=16,
         bind=["PIPE_BIND_SAMPLER_VIEW"], data=[c for x in range(16) for c in texel("noise", 0, x, 0)], type="u8")
    layered(s, "t2a", "PIPE_TEXTURE_2D_ARRAY", 8, 8, 5)
    layered(s, "t3d", "PIPE_TEXTURE_3D", 8, 8, 4)
    layered(s, "tcube", "PIPE_TEXTURE_CUBE", 4, 4, 6)
    lin = dict(min_img_filter="PIPE_TEX_FILTER_LINEAR", mag_img_filter="PIPE_TEX_FILTER_LINEAR",
               min_mip_filter="PIPE_TEX_MIPFILTER_NONE")
    views = [s.view("t1d"), s.view("t2a"), s.view("t2a", first_layer=1, last_layer=3), s.view("t3d"),
             s.view("tcube"), s.view("t2a"), s.view("t3d"), s.view("tcube")]
    s.op("set_sampler_views", shader="PIPE_SHADER_FRAGMENT", start_slot=0, views=views)
    near = dict(min_img_filter="PIPE_TEX_FILTER_NEAREST", mag_img_filter="PIPE_TEX_FILTER_NEAREST",
                min_mip_filter="PIPE_TEX_MIPFILTER_NONE")
    smps = [s.sampler(**lin), s.sampler(wrap_s="PIPE_TEX_WRAP_MIRROR_REPEAT", **near), s.sampler(wrap_s="PIPE_TEX_WRAP_CLAMP_TO_EDGE", **lin),
            s.sampler(wrap_r="PIPE_TEX_WRAP_MIRROR_REPEAT", **lin), s.sampler(**lin),
            None, None,
            s.sampler(min_img_filter="PIPE_TEX_FILTER_NEAREST", mag_img_filter="PIPE_TEX_FILTER_NEAREST",
                      min_mip_filter="PIPE_TEX_MIPFILTER_NONE")]
    s.op("bind_sampler_states", shader="PIPE_SHADER_FRAGMENT", start_slot=0, samplers=smps)
    s.draw("TRIANGLES", 0, 6)
    s.output("color", surface="rt_surf")
    return s


# ---------------------------------------------------------------------------
# formats, swizzles and format casts (8 columns x 2 rows of 32x32)

FORMATS = [
    # (resource format, view format, swizzle, texel bytes of the 2x2 texture)
    ("PIPE_FORMAT_R8G8B8A8_UNORM", None, ("Z", "Y", "X", "W")),
    ("PIPE_FORMAT_R8G8B8A8_UNORM", None, ("X", "0", "1", "W")),
    ("PIPE_FORMAT_R8G8B8A8_UNORM", "PIPE_FORMAT_R8G8B8A8_SRGB", None),
    ("PIPE_FORMAT_B8G8R8A8_UNORM", None, None),
    ("PIPE_FORMAT_R8_UNORM", None, ("X", "X", "X", "1")),
    ("PIPE_FORMAT_R8G8_UNORM", None, None),
    ("PIPE_FORMAT_R8G8B8A8_SNORM", None, None),
    ("PIPE_FORMAT_R16G16B16A16_UNORM", None, None),
    ("PIPE_FORMAT_R10G10B10A2_UNORM", None, None),
    ("PIPE_FORMAT_B5G6R5_UNORM", None, None),
    ("PIPE_FORMAT_R16G16B16A16_FLOAT", None, None),
    ("PIPE_FORMAT_R32G32B32A32_FLOAT", None, None),
    ("PIPE_FORMAT_R32G32_FLOAT", None, ("X", "Y", "0", "1")),
    ("PIPE_FORMAT_R16G16_FLOAT", None, ("Y", "X", "1", "1")),
    ("PIPE_FORMAT_R8G8B8X8_UNORM", None, None),
    ("PIPE_FORMAT_R8_UNORM", None, None),
]

def fmt_data(fmt, w, h):
    """Deterministic texels as (values, scene data type): multi-byte formats
    are given in their GL element type (the reference uploads the array as
    that type)."""
    import numpy as np
    n = w * h
    if "R16G16B16A16_UNORM" in fmt:
        return [(i * 9973 + 1234) % 65536 for i in range(n * 4)], "u16"
    if "R10G10B10A2" in fmt:
        return [((i * 331) % 1024) | (((i * 577 + 100) % 1024) << 10) | (((i * 89 + 900) % 1024) << 20) | ((i % 4) << 30)
                for i in range(n)], "u32"
    if "B5G6R5" in fmt:
        return [((i * 7 + 3) % 32) | (((i * 23 + 11) % 64) << 5) | (((i * 13 + 29) % 32) << 11) for i in range(n)], "u16"
    if "FLOAT" in fmt:
        comps = 4 if "R16G16B16A16" in fmt or "R32G32B32A32" in fmt else 2
        vals = [((i * 37) % 23) / 8.0 - 0.7 for i in range(n * comps)]
        if "R16" in fmt:
            return [int(v) for v in np.asarray(vals, dtype=np.float16).view(np.uint16)], "u16"
        return vals, "f32"
    bpp = 1 if "R8_" in fmt else 2 if "R8G8_" in fmt else 4
    return [(i * 73 + 41) % 256 for i in range(n * bpp)], "u8"


FORMATS_FS = "".join(f"@group(1) @binding({i}) var t{i}: texture_2d<f32>;\n@group(2) @binding({i}) var s{i}: sampler;\n"
                     for i in range(16)) + """
@fragment
fn fs_main(@builtin(position) fc: vec4<f32>) -> @location(0) vec4<f32> {
    let cell = i32(fc.x) / 32 + (i32(fc.y) / 32) * 8;
    let p = fc.xy - floor(fc.xy / 32.0) * 32.0;
    let uv = p / 32.0 * 1.5 - 0.25 + vec2<f32>(0.013, 0.007);
    var c: array<vec4<f32>, 16>;
""" + "".join(f"    c[{i}] = textureSampleLevel(t{i}, s{i}, uv, 0.0);\n" for i in range(16)) + """
    let r = c[cell];
    // show alpha too: blend towards white by alpha in the lower half of each cell
    return vec4<f32>(select(r.rgb, vec3<f32>(r.a), p.y >= 24.0), 1.0);
}
"""


def formats_scene():
    s = Scene("sampler oracle: formats (8-bit, snorm, 16-bit, packed, half and float), swizzles incl. 0/1, "
              "an sRGB view of a UNORM resource, border colour on a one-channel format")
    common(s, 256, 64, FORMATS_FS)
    views, smps = [], []
    for i, (fmt, vfmt, swz) in enumerate(FORMATS):
        rid = f"f{i}"
        vals, dtype = fmt_data(fmt, 2, 2)
        c = {"id": rid, "target": "PIPE_TEXTURE_2D", "format": fmt, "width0": 2, "height0": 2,
             "bind": ["PIPE_BIND_SAMPLER_VIEW"], "data": vals}
        if dtype != "f32":
            c["type"] = dtype
        s.op("resource_create", **c)
        kw = {}
        if vfmt:
            kw["format"] = vfmt
        if swz:
            kw.update({f"swizzle_{ch}": f"PIPE_SWIZZLE_{v}" for ch, v in zip("rgba", swz)})
        views.append(s.view(rid, **kw))
        wrap = "PIPE_TEX_WRAP_CLAMP_TO_BORDER" if i in (4, 15) else "PIPE_TEX_WRAP_REPEAT"
        filt = "PIPE_TEX_FILTER_LINEAR" if i % 2 == 0 else "PIPE_TEX_FILTER_NEAREST"
        smps.append(s.sampler(wrap_s=wrap, wrap_t=wrap, min_img_filter=filt, mag_img_filter=filt,
                              min_mip_filter="PIPE_TEX_MIPFILTER_NONE",
                              border_color=f32list([0.25, 0.5, 0.75, 0.6])))
    s.op("set_sampler_views", shader="PIPE_SHADER_FRAGMENT", start_slot=0, views=views)
    s.op("bind_sampler_states", shader="PIPE_SHADER_FRAGMENT", start_slot=0, samplers=smps)
    s.draw("TRIANGLES", 0, 6)
    s.output("color", surface="rt_surf")
    return s


SCENES = {"lod": lod_scene, "wrap": wrap_scene, "ops": ops_scene, "targets": targets_scene, "formats": formats_scene}

if __name__ == "__main__":
    for name, f in SCENES.items():
        print(f().save(HERE, name))
