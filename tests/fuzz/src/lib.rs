//! The fuzz harnesses, as a library so the targets stay one line and a
//! crash input can be replayed from a debugger or a test.
//!
//! The rule both enforce (issue 8): invalid input returns a typed error,
//! valid input renders, and nothing panics, hangs, reads out of bounds or
//! grows memory without bound.  A panic anywhere is a libFuzzer crash.
//!
//! Work bounds that belong to the harness, not to ferropipe: a screen whose
//! resources may total 64 MiB (so "allocate 4 GiB" is a typed error, not a
//! slow test case), and a bound on draw work (a billion-vertex draw, or a
//! million 255-pixel points, is valid input that simply takes long;
//! libFuzzer would report it as a timeout, which tells nothing).  The
//! first API run found exactly that: 36956 vertices × 14 instances of
//! screen-covering wide points and lines, 2.4 G fragments, 134 s.

use std::path::Path;

use arbitrary::{Arbitrary, Unstructured};
use ferropipe::*;
use ferropipe::{
    Context, DrawInfo, Format, FramebufferTemplate, IndexBuffer, Resource, ResourceTemplate,
    SamplerViewDesc, Screen, ScreenConfig, ShaderBackend, ShaderCode, ShaderState, SurfaceTemplate,
    VertexBuffer,
};
use ferropipe_scene::{Call, Replayer, Scene};

/// Resources a fuzzed screen may hold in total.
pub const MAX_RESOURCE_BYTES: usize = 64 << 20;
/// Vertices × instances an API input may draw in all (its framebuffer is
/// 48x32, so at most ~50 M fragments).
pub const MAX_DRAW_WORK: u64 = 1 << 15;
/// Vertices × instances × the largest texture's pixels a scene input may
/// draw (an upper bound on its fragments when every primitive covers the
/// largest render target).
pub const MAX_SCENE_WORK: u64 = 1 << 27;
/// Compute invocations (grid × block, summed over launches) a scene input
/// may run: `launch_grid` of 65535^3 workgroups is valid input that only
/// takes long (the draw bound's reasoning), and the compute seeds make it
/// a few mutations away.
pub const MAX_SCENE_INVOCATIONS: u64 = 1 << 22;

/// A screen for one input.  The scene target compiles its shaders with
/// Cranelift (0.6 ms a shader, p50) and the API target with the default
/// JIT (LLVM where the host has it, ~5 ms): the scene target replays
/// whole shader files per input, and on LLVM it ran 159 inputs a second
/// instead of ~550, while both code generators still get fuzzed.
fn screen(shader_backend: ShaderBackend) -> Screen {
    Screen::new(ScreenConfig {
        threads: 1,
        max_resource_bytes: Some(MAX_RESOURCE_BYTES),
        shader_backend: Some(shader_backend),
        ..Default::default()
    })
    .expect("screen")
}

/// Target 1: bytes → scene → replay.
pub fn run_scene(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The project's scene directory: the seeds name `shaders/…` and
    // `conformance/…` files there; nothing outside it can be read.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("scenes");
    let Ok(scene) = Scene::parse_confined(text, &dir) else {
        return;
    };
    let mut area = 1u64;
    let mut vertices = 0u64;
    let mut invocations = 0u64;
    for c in &scene.calls {
        match c {
            Call::ResourceCreate { templ, .. } => {
                area = area.max(u64::from(templ.width0) * u64::from(templ.height0.max(1)));
            }
            Call::DrawVbo(d) => {
                vertices += u64::from(d.count) * u64::from(d.instance_count.max(1));
            }
            Call::LaunchGrid(g) => {
                let n = g
                    .grid
                    .iter()
                    .chain(&g.block)
                    .fold(1u64, |n, &x| n.saturating_mul(u64::from(x)));
                invocations = invocations.saturating_add(n);
            }
            _ => {}
        }
    }
    if vertices.saturating_mul(area) > MAX_SCENE_WORK || invocations > MAX_SCENE_INVOCATIONS {
        return;
    }
    // Each input gets a fresh screen: state never leaks between inputs.
    let screen = screen(ShaderBackend::Cranelift);
    let Ok(mut r) = Replayer::on_screen(&screen) else {
        return;
    };
    if r.run(&scene, 0..scene.calls.len(), true).is_ok() {
        let _ = r.read_outputs(&scene);
    }
}

// ---------------------------------------------------------------------------
// Target 2: the API.

/// Picks `ALL[i % len]`.
fn pick<T: Copy>(all: &[T], i: u8) -> T {
    all[i as usize % all.len()]
}

/// A rasterizer state from arbitrary bits and floats (NaN and infinities
/// included: `arbitrary` makes f32 from any bit pattern).
#[derive(Arbitrary, Debug)]
pub struct Raster {
    flags: u32,
    cull: u8,
    fill_front: u8,
    fill_back: u8,
    offset_units: f32,
    offset_scale: f32,
    offset_clamp: f32,
    line_width: f32,
    point_size: f32,
    stipple_pattern: u16,
    stipple_factor: u8,
    sprite_coord_enable: u8,
    clip_plane_enable: u8,
}

#[derive(Arbitrary, Debug)]
pub struct Draw {
    mode: u8,
    start: u32,
    count: u16,
    indexed: bool,
    index_bias: i32,
    min_index: u32,
    max_index: u32,
    start_instance: u32,
    instance_count: u8,
    restart: bool,
    restart_index: u32,
}

#[derive(Arbitrary, Debug)]
pub struct BoxArgs {
    level: u8,
    x: i32,
    y: i32,
    z: i32,
    w: i32,
    h: i32,
    d: i32,
}

impl BoxArgs {
    fn pipe_box(&self) -> PipeBox {
        PipeBox::new_3d(self.x, self.y, self.z, self.w, self.h, self.d)
    }
}

/// One context call.
#[derive(Arbitrary, Debug)]
pub enum Op {
    Rasterizer(Raster),
    Blend {
        enable: bool,
        func: u8,
        src: u8,
        dst: u8,
        colormask: u8,
        logicop: Option<u8>,
        alpha_to_coverage: bool,
    },
    DepthStencilAlpha {
        depth: bool,
        write: bool,
        func: u8,
        stencil: bool,
        ops: [u8; 3],
        masks: [u8; 2],
        alpha: bool,
        alpha_ref: f32,
        bounds: Option<(f32, f32)>,
    },
    Viewport {
        slot: u8,
        scale: [f32; 3],
        translate: [f32; 3],
    },
    Scissor {
        slot: u8,
        rect: [u32; 4],
    },
    ClipPlanes([[f32; 4]; 2]),
    PolygonStipple([u32; 32]),
    SampleMask(u32),
    BlendColor([f32; 4]),
    StencilRef([u8; 2]),
    VertexElements(Vec<(u16, u8, u8, u8)>),
    VertexBuffer {
        slot: u8,
        stride: u16,
        offset: u32,
        unbind: bool,
    },
    IndexBuffer {
        size: u8,
        offset: u32,
        unbind: bool,
    },
    BufferData {
        index: bool,
        offset: u32,
        bytes: Vec<u8>,
    },
    ConstantData {
        offset: u32,
        values: Vec<f32>,
    },
    TextureData {
        at: BoxArgs,
        stride: u16,
        bytes: Vec<u8>,
    },
    TransferRoundTrip {
        at: BoxArgs,
        write: bool,
        texture: bool,
    },
    CopyRegion {
        dst_level: u8,
        dst: [u32; 3],
        src: BoxArgs,
    },
    Sampler {
        wraps: [u8; 3],
        filters: [u8; 3],
        lod: [f32; 3],
        border: [f32; 4],
        aniso: u8,
        compare: Option<u8>,
    },
    SamplerView {
        first_level: u8,
        last_level: u8,
        swizzle: [u8; 4],
    },
    Clear {
        flags: u8,
        color: [f32; 4],
        depth: f64,
        stencil: u32,
    },
    ClearRenderTarget {
        color: [f32; 4],
        rect: [u32; 4],
    },
    Draw(Draw),
    Query {
        kind: u8,
        index: u8,
    },
    Condition {
        invert: bool,
        mode: u8,
        off: bool,
    },
    Flush,
    /// A vertex shader with arbitrary `pipe_stream_output_info` (entries
    /// `(register, start, count, buffer, dst_offset)`), bound if valid.
    StreamOutputShader {
        outputs: Vec<(u8, u8, u8, u8, u8)>,
        strides: [u8; 4],
        /// Take the entries as they come (mostly invalid) instead of
        /// folding them into range (mostly valid, so draws capture).
        raw: bool,
    },
    /// Targets over arbitrary ranges of the stream-output buffers, bound
    /// with arbitrary offsets (`u32::MAX` appends).
    StreamOutputTargets {
        targets: Vec<(bool, u32, u32)>,
        offsets: Vec<u32>,
        /// As for `StreamOutputShader`.
        raw: bool,
    },
    /// A draw counted from a bound target (`count_from_stream_output`).
    DrawAuto {
        mode: u8,
        start: u16,
        target: u8,
    },
}

const W: u32 = 48;
const H: u32 = 32;

const VS: &str = r#"
struct Out { @builtin(position) pos: vec4<f32>, @location(0) uv: vec2<f32>, @location(1) c: vec4<f32> };
struct U { m: mat4x4<f32>, k: vec4<f32> };
@group(0) @binding(0) var<uniform> u: U;
@vertex fn main(@location(0) p: vec4<f32>, @location(1) a: vec4<f32>) -> Out {
    var o: Out;
    o.pos = u.m * p + u.k * a.w;
    o.uv = a.xy;
    o.c = a;
    return o;
}
"#;

const FS: &str = r#"
@group(1) @binding(0) var t: texture_2d<f32>;
@group(2) @binding(0) var s: sampler;
@fragment fn main(@location(0) uv: vec2<f32>, @location(1) c: vec4<f32>) -> @location(0) vec4<f32> {
    if (c.z > 0.9) { discard; }
    return textureSample(t, s, uv) * c;
}
"#;

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

/// The context every API input starts from: a 48x32 RGBA8 + Z24S8
/// framebuffer, a vertex buffer, an index buffer, a constant buffer, a
/// mipmapped texture, compiled shaders bound.
struct Harness {
    screen: Screen,
    ctx: Context,
    vbuf: Resource,
    ibuf: Resource,
    cbuf: Resource,
    texture: Resource,
    rt: Resource,
    queries: Vec<ferropipe::QueryHandle>,
    /// The compiled vertex shader, for stream-output variants of it.
    vs: ferropipe::VertexShaderRef,
    /// Stream-output buffers (the second also a vertex buffer).
    so_buffers: [Resource; 2],
    so_targets: Vec<ferropipe::StreamOutputTargetHandle>,
}

fn harness() -> Option<Harness> {
    let screen = screen(ShaderBackend::Jit);
    let mut ctx = screen.context_create().ok()?;
    let tex2d = |f, w, h, b| ResourceTemplate::texture_2d(f, w, h, b);
    let rt = screen
        .resource_create(&tex2d(
            Format::R8G8B8A8_UNORM,
            W,
            H,
            BindFlags::RENDER_TARGET,
        ))
        .ok()?;
    let zs = screen
        .resource_create(&tex2d(
            Format::Z24_UNORM_S8_UINT,
            W,
            H,
            BindFlags::DEPTH_STENCIL,
        ))
        .ok()?;
    let mut ttempl = tex2d(Format::R8G8B8A8_UNORM, 16, 16, BindFlags::SAMPLER_VIEW);
    ttempl.last_level = 4;
    let texture = screen.resource_create(&ttempl).ok()?;
    let vbuf = screen
        .resource_create(&ResourceTemplate::buffer(1024, BindFlags::VERTEX_BUFFER))
        .ok()?;
    let ibuf = screen
        .resource_create(&ResourceTemplate::buffer(256, BindFlags::INDEX_BUFFER))
        .ok()?;
    let cbuf = screen
        .resource_create(&ResourceTemplate::buffer(256, BindFlags::CONSTANT_BUFFER))
        .ok()?;
    let rs = ctx
        .create_surface(&rt, &SurfaceTemplate::new(Format::R8G8B8A8_UNORM))
        .ok()?;
    let zss = ctx
        .create_surface(&zs, &SurfaceTemplate::new(Format::Z24_UNORM_S8_UINT))
        .ok()?;
    ctx.set_framebuffer_state(&FramebufferTemplate {
        width: W,
        height: H,
        cbufs: vec![Some(rs)],
        zsbuf: Some(zss),
        ..Default::default()
    })
    .ok()?;
    // Identity matrix in the constants so default draws land on screen.
    let mut consts = vec![0f32; 64];
    for i in 0..4 {
        consts[i * 5] = 1.0;
    }
    let bytes: Vec<u8> = consts.iter().flat_map(|f| f.to_le_bytes()).collect();
    ctx.buffer_subdata(&cbuf, 0, &bytes).ok()?;
    ctx.set_constant_buffer(
        ShaderType::Vertex,
        0,
        Some(ferropipe::ConstantBuffer::Buffer {
            resource: &cbuf,
            offset: 0,
            size: 256,
        }),
    )
    .ok()?;
    let vs = ctx.create_vs_state(&wgsl(VS)).ok()?;
    let fs = ctx.create_fs_state(&wgsl(FS)).ok()?;
    ctx.bind_vs_state(Some(vs)).ok()?;
    let vs_program = ctx
        .world()
        .get::<ferropipe_components::cso::VertexShaderCso>(vs.entity())?
        .shader
        .clone();
    let so_bind = BindFlags::STREAM_OUTPUT | BindFlags::VERTEX_BUFFER;
    let so_buffers = [
        screen
            .resource_create(&ResourceTemplate::buffer(512, BindFlags::STREAM_OUTPUT))
            .ok()?,
        screen
            .resource_create(&ResourceTemplate::buffer(1024, so_bind))
            .ok()?,
    ];
    ctx.bind_fs_state(Some(fs)).ok()?;
    let view = ctx
        .create_sampler_view(&texture, &SamplerViewDesc::of_resource(texture.template()))
        .ok()?;
    ctx.set_sampler_views(ShaderType::Fragment, 0, &[Some(view)])
        .ok()?;
    // Default state, so a draw op renders (and captures) without six ops
    // before it; ops replace any of it.
    let rast = ctx
        .create_rasterizer_state(&RasterizerState::default())
        .ok()?;
    ctx.bind_rasterizer_state(Some(rast)).ok()?;
    let mut blend = BlendState::default();
    blend.rt[0].colormask = 0xf;
    let blend = ctx.create_blend_state(&blend).ok()?;
    ctx.bind_blend_state(Some(blend)).ok()?;
    let dsa = ctx
        .create_depth_stencil_alpha_state(&DepthStencilAlphaState::default())
        .ok()?;
    ctx.bind_depth_stencil_alpha_state(Some(dsa)).ok()?;
    let el = |src_offset| VertexElement {
        src_offset,
        vertex_buffer_index: 0,
        src_format: Format::R32G32B32A32_FLOAT,
        instance_divisor: 0,
    };
    let ve = ctx.create_vertex_elements_state(&[el(0), el(16)]).ok()?;
    ctx.bind_vertex_elements_state(Some(ve)).ok()?;
    let vb = VertexBuffer {
        buffer: Some(&vbuf),
        stride: 32,
        buffer_offset: 0,
    };
    ctx.set_vertex_buffers(0, &[vb]).ok()?;
    Some(Harness {
        screen,
        ctx,
        vbuf,
        ibuf,
        cbuf,
        texture,
        rt,
        queries: Vec::new(),
        vs: vs_program,
        so_buffers,
        so_targets: Vec::new(),
    })
}

impl Harness {
    /// Applies one op.  Errors are the expected answer to bad arguments
    /// and are ignored; only panics (libFuzzer crashes) matter.
    fn apply(&mut self, op: Op) {
        let ctx = &mut self.ctx;
        match op {
            Op::Rasterizer(r) => {
                let f = |bit: u32| r.flags & (1 << bit) != 0;
                let state = RasterizerState {
                    flatshade: f(0),
                    flatshade_first: f(1),
                    light_twoside: f(2),
                    clamp_vertex_color: f(3),
                    clamp_fragment_color: f(4),
                    front_ccw: f(5),
                    cull_face: pick(Face::ALL, r.cull),
                    fill_front: pick(PolygonMode::ALL, r.fill_front),
                    fill_back: pick(PolygonMode::ALL, r.fill_back),
                    poly_stipple_enable: f(6),
                    poly_smooth: f(7),
                    offset_point: f(8),
                    offset_line: f(9),
                    offset_tri: f(10),
                    offset_units: r.offset_units,
                    offset_units_unscaled: f(11),
                    offset_scale: r.offset_scale,
                    offset_clamp: r.offset_clamp,
                    line_width: r.line_width,
                    line_smooth: f(12),
                    line_stipple_enable: f(13),
                    line_stipple_pattern: r.stipple_pattern,
                    line_stipple_factor: r.stipple_factor,
                    line_last_pixel: f(14),
                    line_rectangular: f(15),
                    sprite_coord_enable: r.sprite_coord_enable as u32,
                    point_quad_rasterization: f(16),
                    point_tri_clip: f(17),
                    point_smooth: f(18),
                    point_size_per_vertex: f(19),
                    point_size: r.point_size,
                    scissor: f(20),
                    multisample: f(21),
                    half_pixel_center: f(22),
                    bottom_edge_rule: f(23),
                    rasterizer_discard: f(24),
                    clip_halfz: f(25),
                    depth_clip_near: !f(26),
                    depth_clip_far: !f(27),
                    depth_clamp: f(28),
                    clip_plane_enable: r.clip_plane_enable,
                    ..Default::default()
                };
                if let Ok(h) = ctx.create_rasterizer_state(&state) {
                    let _ = ctx.bind_rasterizer_state(Some(h));
                }
            }
            Op::Blend {
                enable,
                func,
                src,
                dst,
                colormask,
                logicop,
                alpha_to_coverage,
            } => {
                let mut b = BlendState {
                    logicop_enable: logicop.is_some(),
                    logicop_func: pick(LogicOp::ALL, logicop.unwrap_or(0)),
                    alpha_to_coverage,
                    ..Default::default()
                };
                b.rt[0] = RtBlendState {
                    blend_enable: enable,
                    rgb_func: pick(BlendFunc::ALL, func),
                    rgb_src_factor: pick(BlendFactor::ALL, src),
                    rgb_dst_factor: pick(BlendFactor::ALL, dst),
                    alpha_func: pick(BlendFunc::ALL, func >> 4),
                    alpha_src_factor: pick(BlendFactor::ALL, src >> 3),
                    alpha_dst_factor: pick(BlendFactor::ALL, dst >> 3),
                    colormask,
                };
                if let Ok(h) = ctx.create_blend_state(&b) {
                    let _ = ctx.bind_blend_state(Some(h));
                }
            }
            Op::DepthStencilAlpha {
                depth,
                write,
                func,
                stencil,
                ops,
                masks,
                alpha,
                alpha_ref,
                bounds,
            } => {
                let st = StencilState {
                    enabled: stencil,
                    func: pick(Func::ALL, func >> 3),
                    fail_op: pick(StencilOp::ALL, ops[0]),
                    zpass_op: pick(StencilOp::ALL, ops[1]),
                    zfail_op: pick(StencilOp::ALL, ops[2]),
                    valuemask: masks[0],
                    writemask: masks[1],
                };
                let d = DepthStencilAlphaState {
                    depth_enabled: depth,
                    depth_writemask: write,
                    depth_func: pick(Func::ALL, func),
                    depth_bounds_test: bounds.is_some(),
                    depth_bounds_min: bounds.map_or(0.0, |b| b.0),
                    depth_bounds_max: bounds.map_or(1.0, |b| b.1),
                    stencil: [st, st],
                    alpha_enabled: alpha,
                    alpha_func: pick(Func::ALL, func >> 5),
                    alpha_ref_value: alpha_ref,
                };
                if let Ok(h) = ctx.create_depth_stencil_alpha_state(&d) {
                    let _ = ctx.bind_depth_stencil_alpha_state(Some(h));
                }
            }
            Op::Viewport {
                slot,
                scale,
                translate,
            } => {
                let _ = ctx.set_viewport_states(
                    u32::from(slot % 20),
                    &[ViewportState { scale, translate }],
                );
            }
            Op::Scissor { slot, rect } => {
                let _ = ctx.set_scissor_states(
                    u32::from(slot % 20),
                    &[ScissorState {
                        minx: rect[0],
                        miny: rect[1],
                        maxx: rect[2],
                        maxy: rect[3],
                    }],
                );
            }
            Op::ClipPlanes(p) => {
                let mut ucp = [[0.0; 4]; MAX_CLIP_PLANES];
                ucp[0] = p[0];
                ucp[1] = p[1];
                let _ = ctx.set_clip_state(&ClipState { ucp });
            }
            Op::PolygonStipple(stipple) => {
                let _ = ctx.set_polygon_stipple(&PolyStipple { stipple });
            }
            Op::SampleMask(m) => {
                let _ = ctx.set_sample_mask(m);
            }
            Op::BlendColor(color) => {
                let _ = ctx.set_blend_color(&BlendColor { color });
            }
            Op::StencilRef(r) => {
                let _ = ctx.set_stencil_ref(StencilRef { ref_value: r });
            }
            Op::VertexElements(els) => {
                let formats = Format::ALL;
                let els: Vec<VertexElement> = els
                    .iter()
                    .take(40)
                    .map(|&(off, fmt, vb, div)| VertexElement {
                        src_offset: u32::from(off),
                        vertex_buffer_index: u32::from(vb % 4),
                        src_format: formats[fmt as usize % formats.len()],
                        instance_divisor: u32::from(div % 4),
                    })
                    .collect();
                if let Ok(h) = ctx.create_vertex_elements_state(&els) {
                    let _ = ctx.bind_vertex_elements_state(Some(h));
                }
            }
            Op::VertexBuffer {
                slot,
                stride,
                offset,
                unbind,
            } => {
                let _ = ctx.set_vertex_buffers(
                    u32::from(slot % 4),
                    &[VertexBuffer {
                        buffer: (!unbind).then_some(&self.vbuf),
                        stride: u32::from(stride),
                        buffer_offset: offset,
                    }],
                );
            }
            Op::IndexBuffer {
                size,
                offset,
                unbind,
            } => {
                let ib = (!unbind).then_some(IndexBuffer {
                    buffer: &self.ibuf,
                    index_size: u32::from(size % 5),
                    offset,
                });
                let _ = ctx.set_index_buffer(ib);
            }
            Op::BufferData {
                index,
                offset,
                bytes,
            } => {
                let b = if index { &self.ibuf } else { &self.vbuf };
                let _ = ctx.buffer_subdata(b, offset, &bytes);
            }
            Op::ConstantData { offset, values } => {
                let bytes: Vec<u8> = values.iter().flat_map(|f| f.to_le_bytes()).collect();
                let _ = ctx.buffer_subdata(&self.cbuf, offset, &bytes);
            }
            Op::TextureData { at, stride, bytes } => {
                let _ = ctx.texture_subdata(
                    &self.texture,
                    u32::from(at.level),
                    &at.pipe_box(),
                    &bytes,
                    usize::from(stride),
                    0,
                );
            }
            Op::TransferRoundTrip { at, write, texture } => {
                let r = if texture { &self.texture } else { &self.vbuf };
                let flags = if write {
                    TransferFlags::WRITE
                } else {
                    TransferFlags::READ
                };
                if let Ok(mut t) = ctx.transfer_map(r, u32::from(at.level), flags, &at.pipe_box()) {
                    if write {
                        t.data_mut().iter_mut().for_each(|b| *b = b.wrapping_add(1));
                    }
                    let _ = ctx.transfer_unmap(t);
                }
            }
            Op::CopyRegion {
                dst_level,
                dst,
                src,
            } => {
                let _ = ctx.resource_copy_region(
                    &self.texture,
                    u32::from(dst_level),
                    dst[0],
                    dst[1],
                    dst[2],
                    &self.texture,
                    u32::from(src.level),
                    &src.pipe_box(),
                );
            }
            Op::Sampler {
                wraps,
                filters,
                lod,
                border,
                aniso,
                compare,
            } => {
                let s = SamplerState {
                    wrap_s: pick(TexWrap::ALL, wraps[0]),
                    wrap_t: pick(TexWrap::ALL, wraps[1]),
                    wrap_r: pick(TexWrap::ALL, wraps[2]),
                    min_img_filter: pick(TexFilter::ALL, filters[0]),
                    mag_img_filter: pick(TexFilter::ALL, filters[1]),
                    min_mip_filter: pick(TexMipFilter::ALL, filters[2]),
                    compare_mode: if compare.is_some() {
                        TexCompareMode::RToTexture
                    } else {
                        TexCompareMode::None
                    },
                    compare_func: pick(Func::ALL, compare.unwrap_or(0)),
                    lod_bias: lod[0],
                    min_lod: lod[1],
                    max_lod: lod[2],
                    border_color: border,
                    max_anisotropy: u32::from(aniso),
                    ..Default::default()
                };
                if let Ok(h) = ctx.create_sampler_state(&s) {
                    let _ = ctx.bind_sampler_states(ShaderType::Fragment, 0, &[Some(h)]);
                }
            }
            Op::SamplerView {
                first_level,
                last_level,
                swizzle,
            } => {
                let mut desc = SamplerViewDesc::of_resource(self.texture.template());
                desc.first_level = u32::from(first_level % 8);
                desc.last_level = u32::from(last_level % 8);
                desc.swizzle = swizzle.map(|s| pick(Swizzle::ALL, s));
                if let Ok(v) = ctx.create_sampler_view(&self.texture, &desc) {
                    let _ = ctx.set_sampler_views(ShaderType::Fragment, 0, &[Some(v)]);
                }
            }
            Op::Clear {
                flags,
                color,
                depth,
                stencil,
            } => {
                let _ = ctx.clear(
                    ClearFlags::from_bits_truncate(u32::from(flags)),
                    &ColorUnion::float(color),
                    depth,
                    stencil,
                );
            }
            Op::ClearRenderTarget { color, rect } => {
                if let Ok(s) =
                    ctx.create_surface(&self.rt, &SurfaceTemplate::new(Format::R8G8B8A8_UNORM))
                {
                    let _ = ctx.clear_render_target(
                        s,
                        &ColorUnion::float(color),
                        rect[0],
                        rect[1],
                        rect[2],
                        rect[3],
                        false,
                    );
                }
            }
            Op::Draw(d) => {
                let info = DrawInfo {
                    mode: pick(PrimType::ALL, d.mode),
                    start: d.start,
                    count: u32::from(d.count),
                    indexed: d.indexed,
                    index_bias: d.index_bias,
                    min_index: d.min_index,
                    max_index: d.max_index,
                    start_instance: d.start_instance,
                    instance_count: u32::from(d.instance_count % 16),
                    primitive_restart: d.restart,
                    restart_index: d.restart_index,
                };
                let _ = ctx.draw_vbo(&info);
            }
            Op::Query { kind, index } => {
                if let Some(&q) = self.queries.get(usize::from(index)) {
                    let _ = ctx.end_query(q);
                    let _ = ctx.get_query_result(q, kind & 1 != 0);
                    if kind & 2 != 0 {
                        let _ = ctx.destroy_query(q);
                        self.queries.remove(usize::from(index));
                    }
                } else if self.queries.len() < 16 {
                    if let Ok(q) =
                        ctx.create_query(pick(QueryType::ALL, kind), u32::from(index % 4))
                    {
                        let _ = ctx.begin_query(q);
                        self.queries.push(q);
                    }
                }
            }
            Op::Condition { invert, mode, off } => {
                let q = if off {
                    None
                } else {
                    self.queries.first().copied()
                };
                let _ = ctx.render_condition(q, invert, pick(RenderCondMode::ALL, mode));
            }
            Op::Flush => {
                let _ = ctx.flush();
            }
            Op::StreamOutputShader {
                outputs,
                strides,
                raw,
            } => {
                let mut stride = strides.map(u32::from);
                let output = outputs
                    .iter()
                    .map(|&(r, s, n, b, d)| {
                        if raw {
                            return StreamOutput {
                                register_index: u32::from(r % 8),
                                start_component: u32::from(s % 6),
                                num_components: u32::from(n % 6),
                                output_buffer: u32::from(b % 6),
                                dst_offset: u32::from(d),
                                stream: u32::from(b / 128),
                            };
                        }
                        // In range: one of the VS's 3 outputs, a buffer
                        // below 4, the stride grown to hold the record
                        // (entries may still overlap: a typed error).
                        let start = u32::from(s % 4);
                        let n = 1 + u32::from(n) % (4 - start);
                        let (b, d) = (usize::from(b % 4), u32::from(d % 8));
                        stride[b] = stride[b].clamp(d + n, 32);
                        StreamOutput {
                            register_index: u32::from(r % 3),
                            start_component: start,
                            num_components: n,
                            output_buffer: b as u32,
                            dst_offset: d,
                            stream: 0,
                        }
                    })
                    .collect();
                let info = StreamOutputInfo { stride, output };
                if let Ok(vs) =
                    ctx.create_vs_state_native_with_stream_output(self.vs.clone(), &info)
                {
                    let _ = ctx.bind_vs_state(Some(vs));
                }
            }
            Op::StreamOutputTargets {
                targets,
                mut offsets,
                raw,
            } => {
                let mut bound = Vec::new();
                for (second, offset, size) in targets.into_iter().take(if raw { 6 } else { 4 }) {
                    let buf = &self.so_buffers[usize::from(second)];
                    let (offset, size) = if raw {
                        (offset % 2048, size % 2048)
                    } else {
                        // Inside the buffer, dword aligned, disjoint from
                        // the other targets only by chance.
                        let len = buf.template().width0;
                        let offset = (offset % len) & !3;
                        (offset, size % (len - offset + 1))
                    };
                    if let Ok(t) = ctx.create_stream_output_target(buf, offset, size) {
                        self.so_targets.push(t);
                        bound.push(Some(t));
                    } else {
                        bound.push(self.so_targets.first().copied());
                    }
                }
                if !raw {
                    offsets.resize(bound.len(), u32::MAX);
                    for o in &mut offsets {
                        if *o != u32::MAX {
                            *o = (*o % 256) & !3;
                        }
                    }
                }
                let _ = ctx.set_stream_output_targets(&bound, &offsets);
            }
            Op::DrawAuto {
                mode,
                start,
                target,
            } => {
                if let Some(&t) = self.so_targets.get(usize::from(target)) {
                    let info = DrawInfo {
                        mode: pick(PrimType::ALL, mode),
                        start: u32::from(start),
                        ..Default::default()
                    };
                    let auto = ferropipe::DrawIndirectInfo {
                        count_from_stream_output: Some(t),
                    };
                    let _ = ctx.draw_vbo_indirect(&info, &auto);
                }
            }
        }
    }
}

/// Target 2: bytes → up to 64 arbitrary ops on a fresh harness, then a
/// flush and a readback.
pub fn run_api(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Some(mut h) = harness() else {
        // The fixed setup must always work; failing here is a bug.
        panic!("harness setup failed");
    };
    let trace = std::env::var_os("FERROPIPE_FUZZ_TRACE").is_some();
    let mut work = 0u64;
    for _ in 0..64 {
        let Ok(op) = Op::arbitrary(&mut u) else {
            break;
        };
        let op_work = match &op {
            Op::Draw(d) => u64::from(d.count) * u64::from(d.instance_count % 16).max(1),
            // At most 2 KiB of targets over a 1-byte stride.
            Op::DrawAuto { .. } => 2048,
            _ => 0,
        };
        work += op_work;
        if work > MAX_DRAW_WORK {
            break;
        }
        if trace {
            eprintln!("{op:?}");
            let t = std::time::Instant::now();
            h.apply(op);
            let _ = h.ctx.flush();
            eprintln!("  {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
            continue;
        }
        h.apply(op);
    }
    if trace {
        eprintln!("flush");
    }
    let _ = h.ctx.flush();
    if let Ok(t) = h.ctx.transfer_map(
        &h.rt,
        0,
        TransferFlags::READ,
        &PipeBox::new_2d(0, 0, W as i32, H as i32),
    ) {
        assert_eq!(t.data().len(), (W * H * 4) as usize);
        let _ = h.ctx.transfer_unmap(t);
    }
    let _ = &h.screen;
}
