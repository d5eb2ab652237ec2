//! The validation layer (`ScreenConfig::validate`, `FERROPIPE_DEBUG=validate`,
//! engine/src/context/lint.rs): one `log` warning per draw that can
//! produce nothing or reads something unbound, naming the draw and the
//! cause; none for a correct draw; none at all when off.

mod support;

use std::cell::RefCell;
use std::sync::Arc;

use ferropipe::*;
use ferropipe::{
    Context, DrawInfo, Format, Resource, ResourceTemplate, Screen, ScreenConfig, VertexBuffer,
};

thread_local! {
    /// Warnings logged on this thread (tests run on threads of their own,
    /// and draws log on the calling thread).
    static WARNINGS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.level() <= log::Level::Warn
    }
    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            WARNINGS.with(|w| w.borrow_mut().push(r.args().to_string()));
        }
    }
    fn flush(&self) {}
}

fn take_warnings() -> Vec<String> {
    static LOGGER: Capture = Capture;
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(log::LevelFilter::Warn);
    }
    WARNINGS.with(|w| std::mem::take(&mut *w.borrow_mut()))
}

const W: u32 = 16;
const H: u32 = 16;

/// A context with everything a correct draw of the pass-through shaders
/// needs: target, viewport, unmasked blend, rasterizer, vertices.
fn correct(validate: bool) -> (Screen, Context, Resource) {
    let screen = Screen::new(ScreenConfig {
        threads: 1,
        validate,
        ..Default::default()
    })
    .unwrap();
    let mut ctx = screen.context_create().unwrap();
    support::bind_rgba8_target(&screen, &mut ctx, W, H, None);
    let mut blend = BlendState::default();
    blend.rt[0].colormask = 0xf;
    support::bind_blend_and_default_dsa(&mut ctx, &blend);
    let r = ctx
        .create_rasterizer_state(&RasterizerState::default())
        .unwrap();
    ctx.bind_rasterizer_state(Some(r)).unwrap();
    support::bind_vec4_pair_elements(&mut ctx);
    support::bind_pass_shaders(&mut ctx);
    let vb = screen
        .resource_create(&ResourceTemplate::buffer(96, BindFlags::VERTEX_BUFFER))
        .unwrap();
    let data: Vec<u8> = [[-1.0f32, -1.0], [1.0, -1.0], [-1.0, 1.0]]
        .iter()
        .flat_map(|p| [p[0], p[1], 0.5, 1.0, 1.0, 1.0, 1.0, 1.0])
        .flat_map(f32::to_le_bytes)
        .collect();
    ctx.buffer_subdata(&vb, 0, &data).unwrap();
    ctx.set_vertex_buffers(
        0,
        &[VertexBuffer {
            buffer: Some(&vb),
            stride: 32,
            buffer_offset: 0,
        }],
    )
    .unwrap();
    (screen, ctx, vb)
}

fn draw(ctx: &mut Context) {
    ctx.draw_vbo(&DrawInfo {
        mode: PrimType::Triangles,
        count: 3,
        ..Default::default()
    })
    .unwrap();
}

/// A fragment shader that samples sampler view 0 with sampler 0 (it
/// writes white; only its interface matters here).
struct SamplingFs(ShaderInfo);

impl FragmentShader for SamplingFs {
    fn info(&self) -> &ShaderInfo {
        &self.0
    }
    fn run(&self, _: &ShaderResources<'_>, io: &mut FragmentIo<'_>) {
        for o in io.outputs.iter_mut() {
            *o = Lanes::splat(1.0);
        }
    }
}

#[test]
fn a_correct_draw_warns_nothing() {
    take_warnings();
    let (_s, mut ctx, _vb) = correct(true);
    draw(&mut ctx);
    draw(&mut ctx);
    ctx.flush().unwrap();
    assert_eq!(take_warnings(), Vec::<String>::new());
}

#[test]
fn each_silent_mistake_gets_one_warning_naming_draw_and_cause() {
    take_warnings();
    // 1. BlendState::default(): colour mask 0.
    let (_s, mut ctx, _vb) = correct(true);
    draw(&mut ctx); // draw 0: fine
    support::bind_blend_and_default_dsa(&mut ctx, &BlendState::default());
    draw(&mut ctx); // draw 1
    let w = take_warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("draw 1:") && w[0].contains("colormask 0"),
        "{w:?}"
    );

    // 2. No viewport set: a new context's viewport is all zeros.
    let (_s, mut ctx, _vb) = correct(true);
    ctx.set_viewport_states(0, &[ViewportState::default()])
        .unwrap();
    draw(&mut ctx); // draw 0
    let w = take_warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("draw 0:") && w[0].contains("viewport 0 is empty"),
        "{w:?}"
    );

    // 3. A sampler view the fragment shader reads is unbound.
    let (_s, mut ctx, _vb) = correct(true);
    let mut info = ShaderInfo::new(ShaderType::Fragment)
        .with_input(IoSlot::new(Semantic::Generic(0), 0))
        .with_output(IoSlot::new(Semantic::Color(0), 0));
    info.sampler_views_used = 1;
    info.samplers_used = 1;
    let fs = ctx
        .create_fs_state_native(Arc::new(SamplingFs(info)))
        .unwrap();
    ctx.bind_fs_state(Some(fs)).unwrap();
    let sampler = ctx.create_sampler_state(&SamplerState::default()).unwrap();
    ctx.bind_sampler_states(ShaderType::Fragment, 0, &[Some(sampler)])
        .unwrap();
    draw(&mut ctx); // draw 0
    draw(&mut ctx); // draw 1
    let w = take_warnings();
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].contains("draw 0:") && w[1].contains("draw 1:"),
        "{w:?}"
    );
    assert!(
        w.iter().all(
            |w| w.contains("fragment shader reads sampler view 0, which is unbound")
                && !w.contains(';')
        ),
        "{w:?}"
    );

    // Bound, the same draw is quiet.
    let tex = _s
        .resource_create(&ResourceTemplate::texture_2d(
            Format::R8G8B8A8_UNORM,
            4,
            4,
            BindFlags::SAMPLER_VIEW,
        ))
        .unwrap();
    let view = ctx
        .create_sampler_view(
            &tex,
            &ferropipe::SamplerViewDesc::of_resource(tex.template()),
        )
        .unwrap();
    ctx.set_sampler_views(ShaderType::Fragment, 0, &[Some(view)])
        .unwrap();
    draw(&mut ctx);
    assert_eq!(take_warnings(), Vec::<String>::new());
}

#[test]
fn other_causes_are_named_too() {
    take_warnings();
    let (s, mut ctx, _vb) = correct(true);
    // Both faces culled.
    let r = ctx
        .create_rasterizer_state(&RasterizerState {
            cull_face: Face::FrontAndBack,
            ..Default::default()
        })
        .unwrap();
    ctx.bind_rasterizer_state(Some(r)).unwrap();
    draw(&mut ctx);
    // Points are not culled: quiet.
    ctx.draw_vbo(&DrawInfo {
        mode: PrimType::Points,
        count: 3,
        ..Default::default()
    })
    .unwrap();
    let w = take_warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("draw 0:") && w[0].contains("FRONT_AND_BACK"),
        "{w:?}"
    );

    // An empty scissor with the scissor test on, and a draw past the
    // vertex buffer's end (6 vertices of 32 bytes from a 96-byte buffer).
    let (_s2, mut ctx, _vb) = correct(true);
    let r = ctx
        .create_rasterizer_state(&RasterizerState {
            scissor: true,
            ..Default::default()
        })
        .unwrap();
    ctx.bind_rasterizer_state(Some(r)).unwrap();
    ctx.set_scissor_states(0, &[ScissorState::default()])
        .unwrap();
    ctx.draw_vbo(&DrawInfo {
        mode: PrimType::Triangles,
        count: 6,
        ..Default::default()
    })
    .unwrap();
    let w = take_warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("scissor 0 is empty") && w[0].contains("which holds 96"),
        "{w:?}"
    );

    // With an occlusion query active a colour-masked draw is a visibility
    // test, not a mistake.
    let (_s3, mut ctx, _vb) = correct(true);
    support::bind_blend_and_default_dsa(&mut ctx, &BlendState::default());
    let q = ctx.create_query(QueryType::OcclusionCounter, 0).unwrap();
    ctx.begin_query(q).unwrap();
    draw(&mut ctx);
    ctx.end_query(q).unwrap();
    assert_eq!(take_warnings(), Vec::<String>::new());
    drop(s);
}

#[test]
fn off_it_says_nothing() {
    take_warnings();
    let (_s, mut ctx, _vb) = correct(false);
    support::bind_blend_and_default_dsa(&mut ctx, &BlendState::default());
    ctx.set_viewport_states(0, &[ViewportState::default()])
        .unwrap();
    draw(&mut ctx);
    assert_eq!(take_warnings(), Vec::<String>::new());
}

/// Precision: the conformance scenes (llvmpipe renders each to its
/// reference) replay without a warning, except the draws of the three
/// scenes that test exactly these rules on purpose — a draw with colour
/// mask 0, draws culling both faces, a draw with an empty scissor —
/// where the warning is the point.
#[test]
fn conformance_scenes_warn_nothing() {
    take_warnings();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/scenes/conformance");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    assert!(paths.len() > 50, "{}", paths.len());
    let screen = Screen::new(ScreenConfig {
        threads: 2,
        validate: true,
        ..Default::default()
    })
    .unwrap();
    let mut noisy = Vec::new();
    for p in &paths {
        let scene = ferropipe_scene::Scene::load(p).unwrap();
        let mut r = ferropipe_scene::Replayer::on_screen(&screen).unwrap();
        let _ = r.run(&scene, 0..scene.calls.len(), true);
        for w in take_warnings() {
            noisy.push(format!("{}: {w}", p.display()));
        }
    }
    let expected = [
        "colormask.json: ferropipe validate: draw 0: every colour write is masked",
        "cull_face.json: ferropipe validate: draw 3: cull_face is FRONT_AND_BACK",
        "cull_face.json: ferropipe validate: draw 7: cull_face is FRONT_AND_BACK",
        "scissor.json: ferropipe validate: draw 4: the scissor test is on and scissor 0 is empty",
    ];
    let unexpected: Vec<_> = noisy
        .iter()
        .filter(|w| !expected.iter().any(|e| w.contains(e)))
        .collect();
    assert!(
        unexpected.is_empty() && noisy.len() == expected.len(),
        "{}",
        noisy.join("\n")
    );
}
