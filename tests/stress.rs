//! screen.rst "Thread safety": different contexts of one screen render in
//! different threads at once, without user locks, and get exactly the
//! images they would get alone.
//!
//! Eight threads share one `Screen` (its worker pool and resource table).
//! Each loops for `FERROPIPE_STRESS_SECS` seconds (default 3):
//! * it replays "its" conformance scene on a *new* context of the shared
//!   screen (so context creation and destruction, resource creation and
//!   destruction and flushes all interleave across threads), and
//! * it draws with resources every thread shares — one vertex buffer, one
//!   index buffer, one texture sampled through a per-context sampler view —
//!   into its own render target with its own rasterizer state,
//!
//! and compares both results with the ones rendered serially before the
//! threads start.  Any difference, panic or error fails the test.

#[path = "../engine/tests/support/mod.rs"]
mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ferropipe::*;
use ferropipe::{
    Context, DrawInfo, Format, IndexBuffer, Resource, ResourceTemplate, SamplerViewDesc, Screen,
    ScreenConfig, ShaderCode, ShaderState, VertexBuffer,
};
use ferropipe_scene::{OutputData, Replayer, Scene};

fn wgsl(code: &str) -> ShaderState {
    ShaderState {
        code: ShaderCode::Wgsl {
            code: code.into(),
            entry_point: "main".into(),
        },
        semantics: vec![],
        stream_output: Default::default(),
    }
}

/// One scene per thread: shaders, textures, blending, depth/stencil,
/// queries, lines and points, blits, so the threads exercise different
/// parts of the pipeline at once.
const SCENES: [&str; 8] = [
    "shader_texture_ops",
    "blend_factors",
    "stencil_ops",
    "occlusion_query",
    "prim_points_lines",
    "blit_copy",
    "fill_rule_mesh",
    "shader_control_flow",
];

const W: u32 = 96;
const H: u32 = 64;

fn scene_path(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/scenes/conformance")
        .join(format!("{name}.json"))
}

/// Replays `scene` on a new context of `screen`: its outputs and query
/// results.
fn replay_on(screen: &Screen, scene: &Scene) -> (Vec<OutputData>, Vec<(String, String)>) {
    let mut r = Replayer::on_screen(screen).expect("context_create");
    r.run(scene, 0..scene.calls.len(), true)
        .unwrap_or_else(|e| panic!("replay: {e}"));
    let outputs = r.read_outputs(scene).expect("read outputs");
    let queries = r
        .query_log
        .iter()
        .map(|(id, v)| (id.clone(), v.to_string()))
        .collect();
    (outputs, queries)
}

/// The resources every thread draws with.
struct Shared {
    vbuf: Resource,
    ibuf: Resource,
    texture: Resource,
    index_count: u32,
}

/// A grid of overlapping triangles with texture coordinates, indexed, and
/// a 16x16 RGBA8 checker texture: uploaded once through a setup context.
fn create_shared(screen: &Screen) -> Shared {
    let mut verts = Vec::new();
    let n = 6;
    for j in 0..=n {
        for i in 0..=n {
            let (u, v) = (i as f32 / n as f32, j as f32 / n as f32);
            // Slightly warped so edges are not axis aligned.
            let x = -0.95 + 1.9 * u + 0.05 * (v * 7.0).sin();
            let y = -0.95 + 1.9 * v + 0.05 * (u * 5.0).cos();
            verts.extend([x, y, 0.5 * u, 1.0, u, v, 0.0, 1.0]);
        }
    }
    let mut idx: Vec<u16> = Vec::new();
    for j in 0..n {
        for i in 0..n {
            let a = (j * (n + 1) + i) as u16;
            let b = a + 1;
            let c = a + (n + 1) as u16;
            let d = c + 1;
            idx.extend([a, b, d, a, d, c]);
        }
    }
    let vbytes: Vec<u8> = verts.iter().flat_map(|f| f.to_le_bytes()).collect();
    let ibytes: Vec<u8> = idx.iter().flat_map(|i| i.to_le_bytes()).collect();
    let vbuf = screen
        .resource_create(&ResourceTemplate::buffer(
            vbytes.len() as u32,
            BindFlags::VERTEX_BUFFER,
        ))
        .unwrap();
    let ibuf = screen
        .resource_create(&ResourceTemplate::buffer(
            ibytes.len() as u32,
            BindFlags::INDEX_BUFFER,
        ))
        .unwrap();
    let texture = screen
        .resource_create(&ResourceTemplate::texture_2d(
            Format::R8G8B8A8_UNORM,
            16,
            16,
            BindFlags::SAMPLER_VIEW,
        ))
        .unwrap();
    let texels: Vec<u8> = (0..16 * 16)
        .flat_map(|i| {
            let (x, y) = (i % 16, i / 16);
            if (x / 4 + y / 4) % 2 == 0 {
                [230, 40 + 10 * x as u8, 30, 255]
            } else {
                [20, 60, 200 - 8 * y as u8, 255]
            }
        })
        .collect();
    let mut setup = screen.context_create().unwrap();
    setup.buffer_subdata(&vbuf, 0, &vbytes).unwrap();
    setup.buffer_subdata(&ibuf, 0, &ibytes).unwrap();
    setup
        .texture_subdata(
            &texture,
            0,
            &PipeBox::new_2d(0, 0, 16, 16),
            &texels,
            16 * 4,
            0,
        )
        .unwrap();
    setup.flush().unwrap();
    Shared {
        vbuf,
        ibuf,
        texture,
        index_count: idx.len() as u32,
    }
}

const VS: &str = r#"
struct Out { @builtin(position) pos: vec4<f32>, @location(0) uv: vec2<f32> };
@vertex fn main(@location(0) p: vec4<f32>, @location(1) uv: vec4<f32>) -> Out {
    return Out(p, uv.xy);
}
"#;

const FS: &str = r#"
@group(1) @binding(0) var t: texture_2d<f32>;
@group(2) @binding(0) var s: sampler;
@fragment fn main(@location(0) uv: vec2<f32>) -> @location(0) vec4<f32> {
    return textureSample(t, s, uv * 2.5) * vec4<f32>(1.0, 1.0, 1.0, 0.75);
}
"#;

/// Draws the shared mesh with thread `k`'s state (cull mode, fill mode,
/// blending, filtering) into a render target of its own; returns its
/// pixels.
fn draw_shared(screen: &Screen, shared: &Shared, k: usize) -> Vec<u8> {
    let mut ctx: Context = screen.context_create().unwrap();
    let (rt, _) = support::bind_rgba8_target(screen, &mut ctx, W, H, None);
    let mut blend = BlendState::default();
    blend.rt[0].colormask = 0xf;
    if k % 2 == 1 {
        blend.rt[0].blend_enable = true;
        blend.rt[0].rgb_src_factor = BlendFactor::SrcAlpha;
        blend.rt[0].rgb_dst_factor = BlendFactor::InvSrcAlpha;
        blend.rt[0].alpha_src_factor = BlendFactor::One;
        blend.rt[0].alpha_dst_factor = BlendFactor::Zero;
    }
    let b = ctx.create_blend_state(&blend).unwrap();
    ctx.bind_blend_state(Some(b)).unwrap();
    let dsa = ctx
        .create_depth_stencil_alpha_state(&DepthStencilAlphaState::default())
        .unwrap();
    ctx.bind_depth_stencil_alpha_state(Some(dsa)).unwrap();
    let fill = [PolygonMode::Fill, PolygonMode::Line, PolygonMode::Point][k % 3];
    let rs = ctx
        .create_rasterizer_state(&RasterizerState {
            cull_face: if k % 4 == 3 { Face::Back } else { Face::None },
            fill_front: fill,
            fill_back: fill,
            half_pixel_center: true,
            bottom_edge_rule: k.is_multiple_of(2),
            ..Default::default()
        })
        .unwrap();
    ctx.bind_rasterizer_state(Some(rs)).unwrap();
    support::bind_vec4_pair_elements(&mut ctx);
    let vs = ctx.create_vs_state(&wgsl(VS)).unwrap();
    let fs = ctx.create_fs_state(&wgsl(FS)).unwrap();
    ctx.bind_vs_state(Some(vs)).unwrap();
    ctx.bind_fs_state(Some(fs)).unwrap();
    let view = ctx
        .create_sampler_view(
            &shared.texture,
            &SamplerViewDesc::of_resource(shared.texture.template()),
        )
        .unwrap();
    ctx.set_sampler_views(ShaderType::Fragment, 0, &[Some(view)])
        .unwrap();
    let filter = if k.is_multiple_of(2) {
        TexFilter::Nearest
    } else {
        TexFilter::Linear
    };
    let sampler = ctx
        .create_sampler_state(&SamplerState {
            wrap_s: TexWrap::Repeat,
            wrap_t: TexWrap::MirrorRepeat,
            min_img_filter: filter,
            mag_img_filter: filter,
            ..Default::default()
        })
        .unwrap();
    ctx.bind_sampler_states(ShaderType::Fragment, 0, &[Some(sampler)])
        .unwrap();
    ctx.set_vertex_buffers(
        0,
        &[VertexBuffer {
            buffer: Some(&shared.vbuf),
            stride: 32,
            buffer_offset: 0,
        }],
    )
    .unwrap();
    ctx.clear(
        ClearFlags::COLOR,
        &ColorUnion::float([0.1 * k as f32, 0.2, 0.3, 1.0]),
        1.0,
        0,
    )
    .unwrap();
    ctx.set_index_buffer(Some(IndexBuffer {
        buffer: &shared.ibuf,
        index_size: 2,
        offset: 0,
    }))
    .unwrap();
    ctx.draw_vbo(&DrawInfo {
        mode: PrimType::Triangles,
        count: shared.index_count,
        indexed: true,
        ..Default::default()
    })
    .unwrap();
    let t = ctx
        .transfer_map(
            &rt,
            0,
            TransferFlags::READ,
            &PipeBox::new_2d(0, 0, W as i32, H as i32),
        )
        .unwrap();
    let pixels = t.data().to_vec();
    ctx.transfer_unmap(t).unwrap();
    screen.resource_destroy(rt);
    pixels
}

#[test]
fn eight_contexts_of_one_screen_render_in_parallel() {
    let screen = Screen::new(ScreenConfig {
        threads: 2,
        ..Default::default()
    })
    .unwrap();
    let shared = Arc::new(create_shared(&screen));
    let scenes: Vec<Arc<Scene>> = SCENES
        .iter()
        .map(|n| Arc::new(Scene::load(&scene_path(n)).unwrap()))
        .collect();
    // Serial references.
    let expected: Vec<_> = (0..SCENES.len())
        .map(|k| {
            (
                replay_on(&screen, &scenes[k]),
                draw_shared(&screen, &shared, k),
            )
        })
        .collect();
    // The shared-resource frames differ per thread (the test would not
    // notice cross-talk between contexts otherwise).
    for k in 1..SCENES.len() {
        assert_ne!(
            expected[k].1, expected[0].1,
            "thread {k}'s state has no effect"
        );
    }
    let expected = Arc::new(expected);
    let secs: f64 = std::env::var("FERROPIPE_STRESS_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3.0);
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let failed = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = (0..SCENES.len())
        .map(|k| {
            let (screen, shared, scenes, expected, failed) = (
                screen.clone(),
                shared.clone(),
                scenes.clone(),
                expected.clone(),
                failed.clone(),
            );
            std::thread::spawn(move || {
                let mut iterations = 0u32;
                // At least two rounds, however slow the machine.
                while iterations < 2
                    || (Instant::now() < deadline && !failed.load(Ordering::Relaxed))
                {
                    let got = replay_on(&screen, &scenes[k]);
                    if got != expected[k].0 {
                        failed.store(true, Ordering::Relaxed);
                        panic!("{}: outputs differ from the serial run", SCENES[k]);
                    }
                    if draw_shared(&screen, &shared, k) != expected[k].1 {
                        failed.store(true, Ordering::Relaxed);
                        panic!("thread {k}: shared-resource frame differs from the serial run");
                    }
                    iterations += 1;
                }
                iterations
            })
        })
        .collect();
    let mut total = 0;
    for (k, h) in handles.into_iter().enumerate() {
        match h.join() {
            Ok(n) => total += n,
            Err(_) => panic!("thread {k} ({}) failed", SCENES[k]),
        }
    }
    eprintln!("stress: {total} scene+frame rounds on 8 contexts in {secs} s");
    // Every thread's resources are gone again: only the shared ones stay.
    let (live, _) = screen.resource_usage();
    assert!(live <= 3 + 1, "resources leaked: {live} live");
}
