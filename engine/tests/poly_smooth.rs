//! `poly_smooth` by properties (GL 4.6 §14.6.1, polygon antialiasing): no
//! reference renders it (llvmpipe draws such polygons as if the flag were
//! off, which the `smooth_polygon` conformance scene checks with
//! `PolySmooth::Off`), so the image is checked against the geometry: each
//! pixel's alpha is the area of the triangle inside the pixel's square,
//! computed here independently (a Sutherland–Hodgman clip in f64), within
//! 1/64 px², on an RGBA32F target.

mod support;

use ferropipe::*;
use ferropipe::{
    Context, DrawInfo, Format, FramebufferTemplate, PolySmooth, Resource, ResourceTemplate, Screen,
    ScreenConfig, SurfaceTemplate, VertexBuffer,
};
use ferropipe_scene::{OutputPixels, ReplayOptions, Scene, replay};
use serde_json::{Value, json};

/// Target side in pixels.
const W: u32 = 32;
/// The tolerance on coverage, in px².
const TOL: f64 = 1.0 / 64.0;

struct Rig {
    screen: Screen,
    ctx: Context,
    rt: Resource,
    zs: Resource,
}

/// A `W` x `W` RGBA32F target and a Z32_FLOAT depth buffer, the
/// pass-through shaders, a viewport mapping NDC to the whole target.
fn rig(poly: PolySmooth) -> Rig {
    let screen = Screen::new(ScreenConfig {
        threads: 2,
        poly_smooth: Some(poly),
        ..Default::default()
    })
    .unwrap();
    let mut ctx = screen.context_create().unwrap();
    let create = |format, bind| {
        screen
            .resource_create(&ResourceTemplate::texture_2d(format, W, W, bind))
            .unwrap()
    };
    let rt = create(Format::R32G32B32A32_FLOAT, BindFlags::RENDER_TARGET);
    let zs = create(Format::Z32_FLOAT, BindFlags::DEPTH_STENCIL);
    let cbuf = ctx
        .create_surface(&rt, &SurfaceTemplate::new(Format::R32G32B32A32_FLOAT))
        .unwrap();
    let zsbuf = ctx
        .create_surface(&zs, &SurfaceTemplate::new(Format::Z32_FLOAT))
        .unwrap();
    ctx.set_framebuffer_state(&FramebufferTemplate {
        width: W,
        height: W,
        cbufs: vec![Some(cbuf)],
        zsbuf: Some(zsbuf),
        ..Default::default()
    })
    .unwrap();
    let half = [W as f32 / 2.0, W as f32 / 2.0, 0.5];
    ctx.set_viewport_states(
        0,
        &[ViewportState {
            scale: half,
            translate: half,
        }],
    )
    .unwrap();
    support::bind_vec4_pair_elements(&mut ctx);
    support::bind_pass_shaders(&mut ctx);
    Rig {
        screen,
        ctx,
        rt,
        zs,
    }
}

fn smooth(on: bool) -> RasterizerState {
    RasterizerState {
        poly_smooth: on,
        half_pixel_center: true,
        ..Default::default()
    }
}

/// Blending off, or `ONE, ONE` addition of every channel.
fn blend(add: bool) -> BlendState {
    let mut b = BlendState::default();
    b.rt[0] = RtBlendState {
        blend_enable: add,
        rgb_func: BlendFunc::Add,
        rgb_src_factor: BlendFactor::One,
        rgb_dst_factor: BlendFactor::One,
        alpha_func: BlendFunc::Add,
        alpha_src_factor: BlendFactor::One,
        alpha_dst_factor: BlendFactor::One,
        colormask: 0xf,
    };
    b
}

/// Clears colour to 0 and depth to 1, draws `tris` (window-space corners,
/// depth 0.25 in NDC, white opaque) and reads the target back as RGBA
/// floats and the depth buffer.
fn draw(
    r: &mut Rig,
    rast: &RasterizerState,
    blend: &BlendState,
    dsa: &DepthStencilAlphaState,
    tris: &[[f64; 2]],
) -> (Vec<[f32; 4]>, Vec<f32>) {
    let ctx = &mut r.ctx;
    let h = ctx.create_rasterizer_state(rast).unwrap();
    ctx.bind_rasterizer_state(Some(h)).unwrap();
    let b = ctx.create_blend_state(blend).unwrap();
    ctx.bind_blend_state(Some(b)).unwrap();
    let d = ctx.create_depth_stencil_alpha_state(dsa).unwrap();
    ctx.bind_depth_stencil_alpha_state(Some(d)).unwrap();
    ctx.clear(
        ClearFlags::COLOR | ClearFlags::DEPTH,
        &ColorUnion::float([0.0; 4]),
        1.0,
        0,
    )
    .unwrap();
    let half = W as f32 / 2.0;
    let data: Vec<u8> = tris
        .iter()
        .flat_map(|p| {
            [
                p[0] as f32 / half - 1.0,
                p[1] as f32 / half - 1.0,
                0.25,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
            ]
        })
        .flat_map(f32::to_le_bytes)
        .collect();
    let buf = r
        .screen
        .resource_create(&ResourceTemplate::buffer(
            data.len() as u32,
            BindFlags::VERTEX_BUFFER,
        ))
        .unwrap();
    ctx.buffer_subdata(&buf, 0, &data).unwrap();
    ctx.set_vertex_buffers(
        0,
        &[VertexBuffer {
            buffer: Some(&buf),
            stride: 32,
            buffer_offset: 0,
        }],
    )
    .unwrap();
    ctx.draw_vbo(&DrawInfo {
        mode: PrimType::Triangles,
        count: tris.len() as u32,
        ..Default::default()
    })
    .unwrap();
    let floats = |bytes: Vec<u8>| -> Vec<f32> {
        bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    };
    let color = floats(support::read_level0(ctx, &r.rt, W, W));
    let depth = floats(support::read_level0(ctx, &r.zs, W, W));
    (
        color
            .chunks_exact(4)
            .map(|c| [c[0], c[1], c[2], c[3]])
            .collect(),
        depth,
    )
}

/// The area of the convex polygon `poly` inside `[x0, x0 + 1] x [y0, y0 +
/// 1]` grown by `grow` on every side (Sutherland–Hodgman, f64).
fn area_in_pixel(poly: &[[f64; 2]], x0: f64, y0: f64, grow: f64) -> f64 {
    let mut p: Vec<[f64; 2]> = poly.to_vec();
    // (axis, sign, bound): keep sign * v[axis] <= bound.
    let sides = [
        (0, -1.0, -(x0 - grow)),
        (0, 1.0, x0 + 1.0 + grow),
        (1, -1.0, -(y0 - grow)),
        (1, 1.0, y0 + 1.0 + grow),
    ];
    for (axis, sign, bound) in sides {
        let mut q = Vec::new();
        for i in 0..p.len() {
            let (a, b) = (p[i], p[(i + 1) % p.len()]);
            let (da, db) = (sign * a[axis] - bound, sign * b[axis] - bound);
            if da <= 0.0 {
                q.push(a);
            }
            if (da < 0.0) != (db < 0.0) && da != 0.0 && db != 0.0 {
                let t = da / (da - db);
                q.push([a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])]);
            }
        }
        p = q;
        if p.len() < 3 {
            return 0.0;
        }
    }
    let mut twice = 0.0;
    for i in 0..p.len() {
        let (a, b) = (p[i], p[(i + 1) % p.len()]);
        twice += a[0] * b[1] - b[0] * a[1];
    }
    0.5 * twice.abs()
}

/// A small deterministic generator (xorshift64*), uniform in [0, 1).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Random triangles from a fraction of a pixel to most of the target,
/// some reaching past its edges.
fn random_triangles(seed: u64, n: usize) -> Vec<[[f64; 2]; 3]> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|_| {
            let c = [rng.next() * W as f64, rng.next() * W as f64];
            // Log-uniform size, 0.3 to 24 pixels.
            let size = 0.3 * 80f64.powf(rng.next());
            std::array::from_fn(|_| {
                [
                    c[0] + (rng.next() - 0.5) * 2.0 * size,
                    c[1] + (rng.next() - 0.5) * 2.0 * size,
                ]
            })
        })
        .collect()
}

/// Checks one render of `poly` (drawn as the triangles that tile it)
/// against its areas: alpha within [`TOL`], colour untouched (all zero)
/// where the square is nowhere near the polygon (1/128 pixel: snapping to
/// 1/256 moves corners by up to 1/512).
fn check(img: &[[f32; 4]], poly: &[[f64; 2]], what: &str) -> f64 {
    let mut worst = 0.0f64;
    for y in 0..W {
        for x in 0..W {
            let px = img[(y * W + x) as usize];
            let want = area_in_pixel(poly, x as f64, y as f64, 0.0);
            let err = (px[3] as f64 - want).abs();
            worst = worst.max(err);
            assert!(
                err <= TOL,
                "{what}: pixel ({x}, {y}) alpha {} but the polygon covers {want:.5} of it",
                px[3]
            );
            if area_in_pixel(poly, x as f64, y as f64, 1.0 / 128.0) == 0.0 {
                assert_eq!(px, [0.0; 4], "{what}: pixel ({x}, {y}) is not touched");
            }
        }
    }
    worst
}

#[test]
fn coverage_is_the_covered_area() {
    let mut r = rig(PolySmooth::Analytic);
    let mut worst = 0.0f64;
    let mut partial = 0;
    for (i, t) in random_triangles(0x5eed_0017, 48).iter().enumerate() {
        let (img, depth) = draw(
            &mut r,
            &smooth(true),
            &blend(false),
            &DepthStencilAlphaState {
                depth_enabled: true,
                depth_writemask: true,
                depth_func: Func::Less,
                ..Default::default()
            },
            t,
        );
        worst = worst.max(check(&img, t, &format!("triangle {i} {t:?}")));
        // Every fragment produced writes depth (at the pixel centre: the
        // plane is flat here), partly covered ones included.
        for (k, (px, z)) in img.iter().zip(&depth).enumerate() {
            let covered = px[3] > 0.0;
            partial += (covered && px[3] < 1.0) as usize;
            let want = if covered { 0.625 } else { 1.0 };
            assert_eq!(*z, want, "triangle {i}: depth at pixel {k}");
        }
    }
    eprintln!("worst coverage error {worst:.2e} px² over 48 triangles, {partial} partial pixels");
    assert!(partial > 200, "{partial} partly covered pixels");
}

#[test]
fn shared_edges_sum_to_one() {
    let mut r = rig(PolySmooth::Analytic);
    // A quad cut along its diagonal, and a fan of four around an inner
    // point: additive blending sums each pixel's pieces.
    let q = [[2.3, 3.7], [29.6, 5.2], [27.1, 28.8], [4.4, 26.1]];
    let c = [15.37, 16.11];
    let cases: [(Vec<[f64; 2]>, &str); 2] = [
        (vec![q[0], q[1], q[2], q[0], q[2], q[3]], "diagonal"),
        (
            vec![c, q[0], q[1], c, q[1], q[2], c, q[2], q[3], c, q[3], q[0]],
            "fan",
        ),
    ];
    for (tris, what) in cases {
        let (img, _) = draw(
            &mut r,
            &smooth(true),
            &blend(true),
            &DepthStencilAlphaState::default(),
            &tris,
        );
        check(&img, &q, what);
        // Inside the quad, along the cuts: exactly covered.
        let inner = img
            .iter()
            .enumerate()
            .filter(|(k, _)| {
                let (x, y) = ((k % W as usize) as f64, (k / W as usize) as f64);
                area_in_pixel(&q, x, y, 0.0) == 1.0
            })
            .map(|(_, p)| (p[3] - 1.0).abs() as f64)
            .fold(0.0, f64::max);
        assert!(inner <= TOL, "{what}: inner pixels off by {inner}");
    }
}

#[test]
fn off_renders_as_before_and_as_llvmpipe() {
    let tris: Vec<[f64; 2]> = random_triangles(7, 6).into_iter().flatten().collect();
    let dsa = DepthStencilAlphaState::default();
    let mut on = rig(PolySmooth::Analytic);
    let plain = draw(&mut on, &smooth(false), &blend(true), &dsa, &tris).0;
    let analytic = draw(&mut on, &smooth(true), &blend(true), &dsa, &tris).0;
    let mut off = rig(PolySmooth::Off);
    let compat = draw(&mut off, &smooth(true), &blend(true), &dsa, &tris).0;
    assert_eq!(compat, plain, "PolySmooth::Off is the flag cleared");
    assert_ne!(analytic, plain, "poly_smooth changes the image");
    // Rendered twice (the state object is the same copy each time).
    assert_eq!(
        draw(&mut off, &smooth(true), &blend(true), &dsa, &tris).0,
        plain
    );
}

#[test]
fn unfilled_polygons_follow_the_line_and_point_rules() {
    let t = random_triangles(11, 1)[0];
    let dsa = DepthStencilAlphaState::default();
    let mut r = rig(PolySmooth::Analytic);
    for mode in [PolygonMode::Line, PolygonMode::Point] {
        let unfilled = |on| RasterizerState {
            fill_front: mode,
            fill_back: mode,
            ..smooth(on)
        };
        let a = draw(&mut r, &unfilled(false), &blend(false), &dsa, &t).0;
        let b = draw(&mut r, &unfilled(true), &blend(false), &dsa, &t).0;
        assert_eq!(a, b, "{mode:?}");
    }
}

const SHADER: &str = "
struct VOut { @builtin(position) pos: vec4<f32>, @location(0) color: vec4<f32> };
@vertex fn vs_main(@location(0) pos: vec4<f32>, @location(1) color: vec4<f32>) -> VOut {
    var o: VOut; o.pos = pos; o.color = color; return o;
}
@fragment fn fs_main(in: VOut) -> @location(0) vec4<f32> { return in.color; }
";

/// A white triangle blended (`SRC_ALPHA, INV_SRC_ALPHA`) over black on an
/// 8x8 4x-multisampled target with `rast`, resolved: RGBA8 bytes.
fn msaa_resolved(rast: Value) -> Vec<u8> {
    let mut data = Vec::new();
    for (x, y) in [(0.7, 0.4), (7.3, 2.2), (2.9, 7.6)] {
        data.extend([x / 4.0 - 1.0, y / 4.0 - 1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0]);
    }
    let bx = json!({"x": 0, "y": 0, "z": 0, "width": 8, "height": 8, "depth": 1});
    let calls = vec![
        json!({"op": "resource_create", "id": "ms", "target": "PIPE_TEXTURE_2D",
               "format": "PIPE_FORMAT_R8G8B8A8_UNORM", "width0": 8, "height0": 8,
               "bind": ["PIPE_BIND_RENDER_TARGET"], "nr_samples": 4}),
        json!({"op": "create_surface", "id": "s", "resource": "ms"}),
        json!({"op": "set_framebuffer_state", "width": 8, "height": 8, "cbufs": ["s"]}),
        json!({"op": "set_viewport_states", "start_slot": 0,
               "viewports": [{"scale": [4.0, 4.0, 0.5], "translate": [4.0, 4.0, 0.5]}]}),
        json!({"op": "create_blend_state", "id": "b", "state": {"rt": [{"colormask": 15,
               "blend_enable": true,
               "rgb_src_factor": "PIPE_BLENDFACTOR_SRC_ALPHA",
               "rgb_dst_factor": "PIPE_BLENDFACTOR_INV_SRC_ALPHA",
               "alpha_src_factor": "PIPE_BLENDFACTOR_ONE",
               "alpha_dst_factor": "PIPE_BLENDFACTOR_INV_SRC_ALPHA"}]}}),
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
        json!({"op": "draw_vbo", "mode": "PIPE_PRIM_TRIANGLES", "start": 0, "count": 3}),
        json!({"op": "resource_create", "id": "out", "target": "PIPE_TEXTURE_2D",
               "format": "PIPE_FORMAT_R8G8B8A8_UNORM", "width0": 8, "height0": 8,
               "bind": ["PIPE_BIND_RENDER_TARGET"]}),
        json!({"op": "blit",
               "dst": {"resource": "out", "level": 0, "format": "PIPE_FORMAT_R8G8B8A8_UNORM",
                       "box": bx},
               "src": {"resource": "ms", "level": 0, "format": "PIPE_FORMAT_R8G8B8A8_UNORM",
                       "box": bx},
               "mask": ["PIPE_MASK_RGBA"], "filter": "PIPE_TEX_FILTER_NEAREST"}),
    ];
    let text = json!({"format": "gallium-scene/1", "calls": calls,
                      "outputs": [{"name": "color", "resource": "out"}]})
    .to_string();
    let scene = Scene::parse(&text, std::path::Path::new(".")).unwrap();
    let report = replay(
        &scene,
        &ReplayOptions {
            threads: 2,
            poly_smooth: Some(PolySmooth::Analytic),
            ..Default::default()
        },
    )
    .unwrap();
    match &report.outputs[0].pixels {
        OutputPixels::Color(rgba) => rgba.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn multisample_rasterization_ignores_it() {
    let ms = |smooth: bool| msaa_resolved(json!({"multisample": true, "poly_smooth": smooth}));
    assert_eq!(ms(true), ms(false));
    // Single-sample rasterization of the same buffer smooths.
    let ss = |smooth: bool| msaa_resolved(json!({"multisample": false, "poly_smooth": smooth}));
    assert_ne!(ss(true), ss(false));
}
