//! Embedding ferropipe in a host that owns its own ECS, as a game engine
//! would.
//!
//! The host has its own bevy_ecs `World` and `Schedule` (nothing to do with
//! the worlds ferropipe keeps inside its screen and contexts).  Its entities
//! are sprites with a transform and a colour; each frame its schedule runs
//!
//! 1. `animate` — game logic moves the sprites;
//! 2. `render` — records one `draw_vbo` per sprite on a ferropipe context
//!    and flushes;
//! 3. `present` — reads the finished frame *in host-owned memory*: the
//!    colour buffer is the host's own `Vec<u32>`, handed to ferropipe with
//!    `resource_from_user_memory`, so there is no readback copy.
//!
//! Shaders are Rust-native (`VertexShader` / `FragmentShader`): the sprite's
//! 2D transform and colour arrive as user constants, as they would from any
//! engine's material system.
//!
//! **Capturing a frame** (docs/capture.md): with a third argument the host
//! records its last frame into that directory as a `gallium-scene/1` file
//! (`SceneCapture::start` before the frame, `SceneCapture::finish` after
//! it).  A capture names shader *source*, so a host that wants captures
//! creates its shaders from WGSL: here the same sprite program in WGSL
//! ([`SPRITE_WGSL`]); capturing the Rust-native shaders is a typed
//! `CaptureError::NativeShader`.
//!
//! ```sh
//! cargo run --release -p demo --example embed -- 120 out/embed.png
//! cargo run --release -p demo --example embed -- 120 out/embed.png out/embed-capture
//! cargo run --release -p demo --bin replay -- out/embed-capture/capture.json --out out/embed-replay
//! ```

use std::ptr::NonNull;
use std::sync::Arc;

use bevy_ecs::prelude::*;
use ferropipe::{
    BindFlags, BlendState, ClearFlags, ColorUnion, ConstantBuffer, Context, DepthStencilAlphaState,
    DrawInfo, Face, Format, FragmentIo, FragmentShader, FramebufferTemplate, IoSlot, Lanes,
    PrimType, RasterizerState, Resource, ResourceTemplate, Screen, ScreenConfig, Semantic,
    ShaderCode, ShaderInfo, ShaderResources, ShaderState, ShaderType, SurfaceTemplate,
    VertexBuffer, VertexElement, VertexIo, VertexShader, ViewportState,
};
use ferropipe_scene::capture::SceneCapture;

/// The host's frame: RGBA8 pixels in memory the host allocated and owns.
/// `u32` elements keep every pixel 4-byte aligned.
#[derive(Resource)]
struct HostFrame {
    pixels: Vec<u32>,
    width: u32,
    height: u32,
    presented: u64,
    /// What `present` measured on the last frame: pixels that are not the
    /// clear colour.
    covered: usize,
}

/// ferropipe, as the host's renderer.  `Context` is used from one thread
/// at a time, which a `NonSend` resource guarantees.
struct Renderer {
    ctx: Context,
    quad: Resource,
    /// Kept alive: the context renders into it.  Declared after `ctx` so it
    /// drops after the context lets go of it.
    _target: Resource,
}

/// A sprite: position (NDC), rotation (radians), half size, colour.
#[derive(Component)]
struct Sprite {
    pos: [f32; 2],
    angle: f32,
    spin: f32,
    half: f32,
    color: [f32; 4],
}

const CLEAR: [f32; 4] = [0.1, 0.1, 0.12, 1.0];

/// The sprite's vertex shader: `@location(0)` corner in [-1, 1]², constants
/// `vec4(pos.xy, cos, sin)`, `vec4(half, 0, 0, 0)`.
struct SpriteVs(ShaderInfo);

impl VertexShader for SpriteVs {
    fn info(&self) -> &ShaderInfo {
        &self.0
    }

    fn run(&self, res: &ShaderResources<'_>, io: &mut VertexIo<'_>) {
        let c = read_f32s::<8>(res);
        let (px, py, co, si, half) = (c[0], c[1], c[2], c[3], c[4]);
        let n = io.groups;
        for g in 0..n {
            let x = io.inputs[g] * Lanes::splat(half);
            let y = io.inputs[n + g] * Lanes::splat(half);
            let out = &mut *io.outputs;
            out[g] = x * Lanes::splat(co) - y * Lanes::splat(si) + Lanes::splat(px);
            out[n + g] = x * Lanes::splat(si) + y * Lanes::splat(co) + Lanes::splat(py);
            out[2 * n + g] = Lanes::ZERO;
            out[3 * n + g] = Lanes::splat(1.0);
        }
    }
}

/// Flat colour from constants `vec4 color`.
struct SpriteFs(ShaderInfo);

impl FragmentShader for SpriteFs {
    fn info(&self) -> &ShaderInfo {
        &self.0
    }

    fn run(&self, res: &ShaderResources<'_>, io: &mut FragmentIo<'_>) {
        let c = read_f32s::<4>(res);
        let n = io.groups;
        for (comp, &value) in c.iter().enumerate() {
            io.outputs[comp * n..(comp + 1) * n].fill(Lanes::splat(value));
        }
    }
}

fn read_f32s<const N: usize>(res: &ShaderResources<'_>) -> [f32; N] {
    let bytes = res.constants.first().copied().unwrap_or(&[]);
    std::array::from_fn(|i| {
        bytes
            .get(i * 4..i * 4 + 4)
            .map_or(0.0, |b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    })
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|f| f.to_le_bytes()).collect()
}

/// The sprite program in WGSL, for hosts that capture (a capture names
/// shader source): the same constants as [`SpriteVs`] and [`SpriteFs`].
pub const SPRITE_WGSL: &str = r#"
struct Sprite { pos_cos_sin: vec4<f32>, half: vec4<f32> }
@group(0) @binding(0) var<uniform> sprite: Sprite;

@vertex
fn vs_main(@location(0) corner: vec2<f32>) -> @builtin(position) vec4<f32> {
    let p = corner * sprite.half.x;
    let c = sprite.pos_cos_sin;
    return vec4<f32>(p.x * c.z - p.y * c.w + c.x, p.x * c.w + p.y * c.z + c.y, 0.0, 1.0);
}
"#;

/// The sprite's flat colour in WGSL (its own module: the fragment stage's
/// constant buffer 0 is a different buffer from the vertex stage's).
pub const SPRITE_FS_WGSL: &str = r#"
@group(0) @binding(0) var<uniform> color: vec4<f32>;

@fragment
fn fs_main() -> @location(0) vec4<f32> {
    return color;
}
"#;

/// Which shaders the host creates.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Shaders {
    RustNative,
    Wgsl,
}

/// Creates the screen, context, pipeline state and the render target in
/// `frame`'s memory.
fn create_renderer(frame: &mut HostFrame, shaders: Shaders) -> ferropipe::Result<Renderer> {
    let screen = Screen::new(ScreenConfig {
        threads: 2,
        ..Default::default()
    })?;
    let mut ctx = screen.context_create()?;
    let (w, h) = (frame.width, frame.height);
    let templ =
        ResourceTemplate::texture_2d(Format::R8G8B8A8_UNORM, w, h, BindFlags::RENDER_TARGET);
    let len = frame.pixels.len() * 4;
    let ptr = NonNull::new(frame.pixels.as_mut_ptr().cast::<u8>()).expect("non-null Vec");
    // SAFETY: `frame.pixels` is never resized or dropped while the renderer
    // lives (the host keeps `HostFrame` for the whole run and drops the
    // renderer first), and the host reads it only after waiting on the
    // frame's fence (`present` runs after `render`).
    let target = unsafe { screen.resource_from_user_memory(&templ, ptr, len)? };
    let surface = ctx.create_surface(&target, &SurfaceTemplate::new(Format::R8G8B8A8_UNORM))?;
    ctx.set_framebuffer_state(&FramebufferTemplate {
        width: w,
        height: h,
        layers: 1,
        samples: 1,
        cbufs: vec![Some(surface)],
        zsbuf: None,
    })?;
    ctx.set_viewport_states(
        0,
        &[ViewportState {
            scale: [w as f32 / 2.0, -(h as f32) / 2.0, 0.5],
            translate: [w as f32 / 2.0, h as f32 / 2.0, 0.5],
        }],
    )?;
    let raster = ctx.create_rasterizer_state(&RasterizerState {
        cull_face: Face::None,
        ..Default::default()
    })?;
    ctx.bind_rasterizer_state(Some(raster))?;
    let mut blend = BlendState::default();
    blend.rt[0].colormask = 0xf;
    let blend = ctx.create_blend_state(&blend)?;
    ctx.bind_blend_state(Some(blend))?;
    // No depth buffer: sprites draw in submission order.
    let dsa = ctx.create_depth_stencil_alpha_state(&DepthStencilAlphaState::default())?;
    ctx.bind_depth_stencil_alpha_state(Some(dsa))?;

    let (vs, fs) = match shaders {
        Shaders::RustNative => {
            let mut corner = IoSlot::new(Semantic::Generic(0), 0);
            corner.components = 2;
            let vs = ctx.create_vs_state_native(Arc::new(SpriteVs(ShaderInfo {
                stage: ShaderType::Vertex,
                inputs: vec![corner],
                outputs: vec![IoSlot::new(Semantic::Position, 0)],
                const_buffers_used: 1,
                ..Default::default()
            })))?;
            let fs = ctx.create_fs_state_native(Arc::new(SpriteFs(ShaderInfo {
                stage: ShaderType::Fragment,
                outputs: vec![IoSlot::new(Semantic::Color(0), 0)],
                const_buffers_used: 1,
                ..Default::default()
            })))?;
            (vs, fs)
        }
        Shaders::Wgsl => {
            let wgsl = |code: &str, entry: &str| ShaderState {
                code: ShaderCode::Wgsl {
                    code: code.into(),
                    entry_point: entry.into(),
                },
                semantics: Vec::new(),
                stream_output: Default::default(),
            };
            let vs = ctx.create_vs_state(&wgsl(SPRITE_WGSL, "vs_main"))?;
            let fs = ctx.create_fs_state(&wgsl(SPRITE_FS_WGSL, "fs_main"))?;
            (vs, fs)
        }
    };
    ctx.bind_vs_state(Some(vs))?;
    ctx.bind_fs_state(Some(fs))?;
    let elements = ctx.create_vertex_elements_state(&[VertexElement {
        src_offset: 0,
        vertex_buffer_index: 0,
        src_format: Format::R32G32_FLOAT,
        instance_divisor: 0,
    }])?;
    ctx.bind_vertex_elements_state(Some(elements))?;
    // One quad as a triangle strip.
    let corners = f32_bytes(&[-1.0, -1.0, 1.0, -1.0, -1.0, 1.0, 1.0, 1.0]);
    let quad = screen.resource_create(&ResourceTemplate::buffer(
        corners.len() as u32,
        BindFlags::VERTEX_BUFFER,
    ))?;
    ctx.buffer_subdata(&quad, 0, &corners)?;
    Ok(Renderer {
        ctx,
        quad,
        _target: target,
    })
}

/// Game logic: sprites spin and drift around the centre.
fn animate(mut sprites: Query<&mut Sprite>) {
    for mut s in &mut sprites {
        s.angle += s.spin;
        let (x, y) = (s.pos[0], s.pos[1]);
        let (sn, cs) = (s.spin * 0.25).sin_cos();
        s.pos = [x * cs - y * sn, x * sn + y * cs];
    }
}

/// The first error ferropipe returned; the host stops on it.
#[derive(Resource, Default)]
struct RenderError(Option<ferropipe::Error>);

/// Rendering: one draw per sprite, then flush and wait.
fn render(
    mut renderer: NonSendMut<Renderer>,
    sprites: Query<&Sprite>,
    mut error: ResMut<RenderError>,
) {
    let r = &mut *renderer;
    let result = (|| -> ferropipe::Result<()> {
        r.ctx
            .clear(ClearFlags::COLOR0, &ColorUnion::float(CLEAR), 1.0, 0)?;
        r.ctx.set_vertex_buffers(
            0,
            &[VertexBuffer {
                buffer: Some(&r.quad),
                stride: 8,
                buffer_offset: 0,
            }],
        )?;
        for s in &sprites {
            let (sn, cs) = s.angle.sin_cos();
            let vs = f32_bytes(&[s.pos[0], s.pos[1], cs, sn, s.half, 0.0, 0.0, 0.0]);
            r.ctx
                .set_constant_buffer(ShaderType::Vertex, 0, Some(ConstantBuffer::User(&vs)))?;
            let fs = f32_bytes(&s.color);
            r.ctx
                .set_constant_buffer(ShaderType::Fragment, 0, Some(ConstantBuffer::User(&fs)))?;
            r.ctx.draw_vbo(&DrawInfo {
                mode: PrimType::TriangleStrip,
                count: 4,
                ..Default::default()
            })?;
        }
        r.ctx.flush()?.wait();
        Ok(())
    })();
    if let Err(e) = result {
        error.0.get_or_insert(e);
    }
}

/// The host consumes the frame straight from its own memory.
fn present(mut frame: ResMut<HostFrame>) {
    let clear = u32::from_le_bytes(CLEAR.map(|c| (c * 255.0).round() as u8));
    frame.covered = frame.pixels.iter().filter(|&&p| p != clear).count();
    frame.presented += 1;
}

/// Runs the host for `frames` frames at `width` x `height`; returns the
/// host frame (pixels and what `present` measured).  With `capture`, the
/// last frame is also recorded into that directory (`capture.json`).
fn run(
    frames: u32,
    width: u32,
    height: u32,
    capture: Option<&std::path::Path>,
) -> Result<HostFrame, Box<dyn std::error::Error>> {
    let shaders = if capture.is_some() {
        Shaders::Wgsl
    } else {
        Shaders::RustNative
    };
    run_with(frames, width, height, shaders, capture)
}

fn run_with(
    frames: u32,
    width: u32,
    height: u32,
    shaders: Shaders,
    capture: Option<&std::path::Path>,
) -> Result<HostFrame, Box<dyn std::error::Error>> {
    let mut world = World::new();
    let mut frame = HostFrame {
        pixels: vec![0; (width * height) as usize],
        width,
        height,
        presented: 0,
        covered: 0,
    };
    let renderer = create_renderer(&mut frame, shaders)?;
    world.insert_resource(frame);
    world.insert_resource(RenderError::default());
    world.insert_non_send(renderer);
    for i in 0..24 {
        let a = i as f32 * std::f32::consts::TAU / 24.0;
        let r = 0.3 + 0.4 * (i % 3) as f32 / 2.0;
        world.spawn(Sprite {
            pos: [r * a.cos(), r * a.sin()],
            angle: a,
            spin: 0.02 + 0.01 * (i % 5) as f32,
            half: 0.06,
            color: [
                0.5 + 0.5 * a.cos(),
                0.5 + 0.5 * (a + 2.1).cos(),
                0.5 + 0.5 * (a + 4.2).cos(),
                1.0,
            ],
        });
    }
    let mut schedule = Schedule::default();
    schedule.add_systems((animate, render, present).chain());
    for i in 0..frames {
        let capturing = capture.filter(|_| i + 1 == frames);
        if let Some(dir) = capturing {
            // Records from the current state: the calls that recreate the
            // bound state and the resources' contents come first.
            SceneCapture::start(&mut world.non_send_mut::<Renderer>().ctx, dir)?;
        }
        schedule.run(&mut world);
        if world.resource::<RenderError>().0.is_some() {
            break;
        }
        if capturing.is_some() {
            let s = SceneCapture::finish(&mut world.non_send_mut::<Renderer>().ctx)?;
            println!(
                "embed: captured the last frame into {} ({} calls, outputs {:?})",
                s.scene.display(),
                s.calls,
                s.outputs
            );
        }
    }
    // The renderer (and with it every reference to the host memory) goes
    // first; then the host takes its frame back.
    drop(world.remove_non_send::<Renderer>());
    if let Some(e) = world.resource_mut::<RenderError>().0.take() {
        return Err(e.into());
    }
    Ok(world
        .remove_resource::<HostFrame>()
        .expect("inserted above"))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let frames = args.next().and_then(|a| a.parse().ok()).unwrap_or(60);
    let out = args.next();
    let capture = args.next().map(std::path::PathBuf::from);
    let frame = match run(frames, 320, 240, capture.as_deref()) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("embed: {e}");
            let unsupported = e
                .downcast_ref::<ferropipe::Error>()
                .is_some_and(|e| e.is_unsupported());
            std::process::exit(if unsupported { 3 } else { 1 });
        }
    };
    println!(
        "embed: {} frames presented, last frame covers {} of {} pixels",
        frame.presented,
        frame.covered,
        frame.pixels.len()
    );
    if let Some(path) = out {
        if let Err(e) = write_png(&path, &frame) {
            eprintln!("embed: {path}: {e}");
            std::process::exit(4);
        }
        println!("embed: wrote {path}");
    }
}

/// The host frame as an RGBA PNG at `path` (its directory created).
fn write_png(path: &str, frame: &HostFrame) -> Result<(), Box<dyn std::error::Error>> {
    if let Some(dir) = std::path::Path::new(path).parent() {
        std::fs::create_dir_all(dir)?;
    }
    let bytes: Vec<u8> = frame.pixels.iter().flat_map(|p| p.to_le_bytes()).collect();
    let file = std::fs::File::create(path)?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), frame.width, frame.height);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header()?.write_image_data(&bytes)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn host_frames_change_and_show_every_sprite() {
        let a = super::run(1, 160, 120, None).unwrap();
        let b = super::run(10, 160, 120, None).unwrap();
        assert_eq!((a.presented, b.presented), (1, 10));
        // 24 sprites of ~(0.06 * 2)² / 4 of the frame each.
        let expected = 24.0 * (0.06f32 * 160.0) * (0.06 * 120.0) * 4.0 / 4.0;
        for f in [&a, &b] {
            let covered = f.covered as f32;
            assert!(
                (covered - expected).abs() < expected * 0.35,
                "covered {covered}, expected about {expected}"
            );
        }
        assert_ne!(a.pixels, b.pixels, "the sprites moved");
    }

    /// The host captures its last frame; replaying the capture gives the
    /// host's frame byte for byte.  Capturing Rust-native shaders is the
    /// typed error.
    #[test]
    fn a_captured_frame_replays_to_the_host_frame() {
        let dir = std::env::temp_dir().join(format!("embed-capture-{}", std::process::id()));
        let frame = super::run(3, 160, 120, Some(&dir)).unwrap();
        let scene = ferropipe_scene::Scene::load(&dir.join("capture.json")).unwrap();
        let report = ferropipe_scene::replay(&scene, &Default::default()).unwrap();
        let host: Vec<u8> = frame.pixels.iter().flat_map(|p| p.to_le_bytes()).collect();
        match &report.outputs[0].pixels {
            ferropipe_scene::OutputPixels::Color(px) => assert!(*px == host),
            other => panic!("{other:?}"),
        }
        let native = super::run_with(2, 64, 48, super::Shaders::RustNative, Some(&dir));
        let err = native.err().expect("native shaders cannot be captured");
        assert!(
            matches!(
                err.downcast_ref::<ferropipe_scene::capture::CaptureError>(),
                Some(ferropipe_scene::capture::CaptureError::NativeShader { .. })
            ),
            "{err}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
