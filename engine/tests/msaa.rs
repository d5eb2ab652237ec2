//! 4x multisampling by properties (the llvmpipe comparison is the
//! `msaa_resolve` conformance scene): per-sample coverage at the standard
//! positions, `set_sample_mask`, single-sample rasterization of a
//! multisampled buffer, clears of every sample, and the blit resolve.

use ferropipe_scene::{OutputPixels, ReplayOptions, Scene, replay};
use serde_json::{Value, json};

const SHADER: &str = "
struct VOut { @builtin(position) pos: vec4<f32>, @location(0) color: vec4<f32> };
@vertex fn vs_main(@location(0) pos: vec4<f32>, @location(1) color: vec4<f32>) -> VOut {
    var o: VOut; o.pos = pos; o.color = color; return o;
}
@fragment fn fs_main(in: VOut) -> @location(0) vec4<f32> { return in.color; }
";

/// An 8x8 4x-multisampled target cleared black, one white triangle with
/// window-space corners `tri` drawn with `rast` (and `sample_mask`),
/// resolved into a single-sampled target: its red channel.
fn resolved(tri: [(f32, f32); 3], rast: Value, sample_mask: Option<u32>) -> Vec<u8> {
    let ndc = |(x, y): (f32, f32)| [x / 4.0 - 1.0, y / 4.0 - 1.0];
    let mut data = Vec::new();
    for p in tri {
        let [x, y] = ndc(p);
        data.extend([x, y, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0]);
    }
    let mut calls = vec![
        json!({"op": "resource_create", "id": "ms", "target": "PIPE_TEXTURE_2D",
               "format": "PIPE_FORMAT_R8G8B8A8_UNORM", "width0": 8, "height0": 8,
               "bind": ["PIPE_BIND_RENDER_TARGET"], "nr_samples": 4}),
        json!({"op": "create_surface", "id": "s", "resource": "ms"}),
        json!({"op": "set_framebuffer_state", "width": 8, "height": 8, "cbufs": ["s"]}),
        json!({"op": "set_viewport_states", "start_slot": 0,
               "viewports": [{"scale": [4.0, 4.0, 0.5], "translate": [4.0, 4.0, 0.5]}]}),
        json!({"op": "create_blend_state", "id": "b", "state": {"rt": [{"colormask": 15}]}}),
        json!({"op": "bind_blend_state", "id": "b"}),
        json!({"op": "create_depth_stencil_alpha_state", "id": "d", "state": {}}),
        json!({"op": "bind_depth_stencil_alpha_state", "id": "d"}),
        json!({"op": "create_rasterizer_state", "id": "r", "state": rast}),
        json!({"op": "bind_rasterizer_state", "id": "r"}),
        json!({"op": "create_vs_state", "id": "vs", "language": "wgsl", "code": SHADER,
               "entry_point": "vs_main"}),
        json!({"op": "create_fs_state", "id": "fs", "language": "wgsl", "code": SHADER,
               "entry_point": "fs_main"}),
        json!({"op": "bind_vs_state", "id": "vs"}),
        json!({"op": "bind_fs_state", "id": "fs"}),
        json!({"op": "create_vertex_elements_state", "id": "ve", "elements": [
            {"src_offset": 0, "vertex_buffer_index": 0,
             "src_format": "PIPE_FORMAT_R32G32B32A32_FLOAT"},
            {"src_offset": 16, "vertex_buffer_index": 0,
             "src_format": "PIPE_FORMAT_R32G32B32A32_FLOAT"}]}),
        json!({"op": "bind_vertex_elements_state", "id": "ve"}),
        json!({"op": "clear", "buffers": ["PIPE_CLEAR_COLOR"], "color": [0.0, 0.0, 0.0, 1.0]}),
        json!({"op": "resource_create", "id": "vb", "target": "PIPE_BUFFER", "width0": 96,
               "bind": ["PIPE_BIND_VERTEX_BUFFER"], "data": data}),
        json!({"op": "set_vertex_buffers", "start_slot": 0,
               "buffers": [{"buffer": "vb", "stride": 32, "buffer_offset": 0}]}),
    ];
    if let Some(m) = sample_mask {
        calls.push(json!({"op": "set_sample_mask", "sample_mask": m}));
    }
    calls.extend([
        json!({"op": "draw_vbo", "mode": "PIPE_PRIM_TRIANGLES", "start": 0, "count": 3}),
        json!({"op": "resource_create", "id": "out", "target": "PIPE_TEXTURE_2D",
               "format": "PIPE_FORMAT_R8G8B8A8_UNORM", "width0": 8, "height0": 8,
               "bind": ["PIPE_BIND_RENDER_TARGET"]}),
        json!({"op": "blit",
               "dst": {"resource": "out", "level": 0, "format": "PIPE_FORMAT_R8G8B8A8_UNORM",
                       "box": {"x": 0, "y": 0, "z": 0, "width": 8, "height": 8, "depth": 1}},
               "src": {"resource": "ms", "level": 0, "format": "PIPE_FORMAT_R8G8B8A8_UNORM",
                       "box": {"x": 0, "y": 0, "z": 0, "width": 8, "height": 8, "depth": 1}},
               "mask": ["PIPE_MASK_RGBA"], "filter": "PIPE_TEX_FILTER_NEAREST"}),
    ]);
    let text = json!({"format": "gallium-scene/1", "calls": calls,
                      "outputs": [{"name": "color", "resource": "out"}]})
    .to_string();
    let scene = Scene::parse(&text, std::path::Path::new(".")).unwrap();
    let report = replay(
        &scene,
        &ReplayOptions {
            threads: 2,
            ..Default::default()
        },
    )
    .unwrap();
    match &report.outputs[0].pixels {
        OutputPixels::Color(rgba) => rgba.chunks_exact(4).map(|p| p[0]).collect(),
        other => panic!("{other:?}"),
    }
}

/// Resolve of `k` covered samples out of 4 (u_blitter: average, rounded).
fn share(k: u32) -> u8 {
    (k as f32 / 4.0 * 255.0).round() as u8
}

#[test]
fn samples_are_covered_at_the_standard_positions() {
    // A vertical edge at x = 2.5 (window, half-pixel centres): in pixel
    // column 2 the samples at x offsets 0.375 and 0.125 (left of 0.5)
    // are inside the triangle to the left, 0.875 and 0.625 are not.
    let left_of = |x: f32| [(x, -8.0), (x, 24.0), (-16.0, 4.0)];
    let r = resolved(
        left_of(2.5),
        json!({"multisample": true, "half_pixel_center": true}),
        None,
    );
    for y in 0..8 {
        let row = &r[y * 8..y * 8 + 8];
        assert_eq!(row[..2], [255, 255], "row {y}: {row:?}");
        assert!(row[2].abs_diff(share(2)) <= 1, "row {y}: {row:?}");
        assert_eq!(row[3..], [0; 5], "row {y}: {row:?}");
    }
    // Edge at 2.2: only the sample at 0.125 is left of it.
    let r = resolved(left_of(2.2), json!({"multisample": true}), None);
    assert!(r[2].abs_diff(share(1)) <= 1, "{:?}", &r[..8]);
    // Edge at 2.9: all four (the rightmost sample is at 2.875).
    let r = resolved(left_of(2.9), json!({"multisample": true}), None);
    assert_eq!(r[2], 255, "{:?}", &r[..8]);
}

#[test]
fn sample_mask_and_single_sample_rasterization() {
    let full = [(-8.0, -8.0), (24.0, -8.0), (-8.0, 24.0)];
    // Samples 0 and 2 only: every pixel resolves to half.
    let r = resolved(full, json!({"multisample": true}), Some(0b0101));
    assert!(r.iter().all(|&v| v.abs_diff(share(2)) <= 1), "{r:?}");
    // No sample: nothing drawn.
    let r = resolved(full, json!({"multisample": true}), Some(0b1_0000));
    assert!(r.iter().all(|&v| v == 0), "{r:?}");
    // multisample off on a 4x buffer: coverage at the pixel centre, written
    // to every sample, so the resolve has no partial pixels.
    let r = resolved(
        [(2.5, -8.0), (2.5, 24.0), (-16.0, 4.0)],
        json!({"multisample": false}),
        None,
    );
    assert!(r.iter().all(|&v| v == 0 || v == 255), "{r:?}");
    // (The centre of column 2 lies on the right edge: not covered.)
    assert_eq!(&r[..8], &[255, 255, 0, 0, 0, 0, 0, 0]);
}

/// Whether the pixel square `[x, x + 1] x [y, y + 1]` grown by `d` and the
/// triangle `t` overlap (separating axes: the square's two and the
/// triangle's edge normals).
fn touches(t: &[(f32, f32); 3], x: f32, y: f32, d: f32) -> bool {
    let sq = [
        (x - d, y - d),
        (x + 1.0 + d, y - d),
        (x - d, y + 1.0 + d),
        (x + 1.0 + d, y + 1.0 + d),
    ];
    let mut axes = vec![(1.0, 0.0), (0.0, 1.0)];
    for i in 0..3 {
        let (a, b) = (t[i], t[(i + 1) % 3]);
        axes.push((b.1 - a.1, a.0 - b.0));
    }
    axes.iter().all(|&(nx, ny)| {
        let span = |pts: &mut dyn Iterator<Item = (f32, f32)>| {
            pts.map(|(px, py)| nx * px + ny * py)
                .fold((f32::MAX, f32::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)))
        };
        let (a0, a1) = span(&mut sq.iter().copied());
        let (b0, b1) = span(&mut t.iter().copied());
        a1 >= b0 && b1 >= a0
    })
}

#[test]
fn conservative_rasterization_covers_every_sample_of_touched_pixels() {
    let tri = [(1.3, 0.7), (6.6, 2.2), (2.9, 7.1)];
    for mode in [
        "PIPE_CONSERVATIVE_RASTER_POST_SNAP",
        "PIPE_CONSERVATIVE_RASTER_PRE_SNAP",
    ] {
        let r = resolved(
            tri,
            json!({"multisample": true, "conservative_raster_mode": mode}),
            None,
        );
        for y in 0..8 {
            for x in 0..8 {
                let v = r[y * 8 + x];
                let (fx, fy) = (x as f32, y as f32);
                // All four samples or none.
                assert!(v == 0 || v == 255, "{mode}: pixel {x},{y} = {v}");
                if touches(&tri, fx, fy, 0.0) {
                    assert_eq!(v, 255, "{mode}: touched pixel {x},{y} not fully covered");
                }
                if !touches(&tri, fx, fy, 2.0 / 256.0) {
                    assert_eq!(v, 0, "{mode}: far pixel {x},{y} covered");
                }
            }
        }
    }
}
