//! End-to-end pipeline tests with Rust-native shaders: record commands into a
//! world, run the schedules, read the render targets back.  Image
//! conformance against llvmpipe lives in the engine's `tests/`.

use std::sync::Arc;

use bevy_ecs::world::World;
use ferropipe_components::batch::*;
use ferropipe_components::draw::{
    DrawInfo, FramebufferState, IndexBufferBinding, VertexBufferBinding,
};
use ferropipe_components::enums::*;
use ferropipe_components::format::Format;
use ferropipe_components::resource::{
    PipeResource, ResourceLayout, ResourceRef, ResourceStorage, ResourceTemplate,
};
use ferropipe_components::shader::*;
use ferropipe_components::state::*;
use ferropipe_components::view::{Surface, SurfaceDesc, SurfaceRef};

use crate::pool::PoolExecutor;

/// Copies vertex element i to output i+1 and element 0 to the position.
pub struct PassVs {
    info: ShaderInfo,
}

impl PassVs {
    /// `n` attributes; output 0 is the position (= input 0), outputs 1.. are
    /// `semantics`.
    pub fn new(semantics: &[Semantic]) -> Arc<Self> {
        let mut info = ShaderInfo {
            stage: ShaderType::Vertex,
            ..Default::default()
        };
        info.inputs.push(IoSlot::new(Semantic::Generic(0), 0));
        info.outputs.push(IoSlot::new(Semantic::Position, 0));
        for (i, s) in semantics.iter().enumerate() {
            info.inputs
                .push(IoSlot::new(Semantic::Generic(i as u8 + 1), i as u32 + 1));
            info.outputs.push(IoSlot::new(*s, i as u32));
        }
        Arc::new(PassVs { info })
    }
}

impl VertexShader for PassVs {
    fn info(&self) -> &ShaderInfo {
        &self.info
    }
    fn run(&self, _r: &ShaderResources<'_>, io: &mut VertexIo<'_>) {
        let n = self.info.outputs.len() * 4 * io.groups;
        io.outputs[..n].copy_from_slice(&io.inputs[..n]);
    }
}

/// Writes input 0 to colour output 0.
pub struct PassFs {
    info: ShaderInfo,
}

impl PassFs {
    pub fn new(input: Semantic, interp: Interpolation) -> Arc<Self> {
        Arc::new(PassFs {
            info: Self::interface(input, interp),
        })
    }

    /// One input, interpolated as given, written to colour 0: the
    /// interface of this shader and of the tests' variations on it.
    pub fn interface(input: Semantic, interp: Interpolation) -> ShaderInfo {
        let mut info = ShaderInfo {
            stage: ShaderType::Fragment,
            ..Default::default()
        };
        let mut slot = IoSlot::new(input, 0);
        slot.interpolation = interp;
        info.inputs.push(slot);
        info.outputs.push(IoSlot::new(Semantic::Color(0), 0));
        info
    }
}

impl FragmentShader for PassFs {
    fn info(&self) -> &ShaderInfo {
        &self.info
    }
    fn run(&self, _r: &ShaderResources<'_>, io: &mut FragmentIo<'_>) {
        let n = 4 * io.groups;
        io.outputs[..n].copy_from_slice(&io.inputs[..n]);
    }
}

pub fn resource(templ: ResourceTemplate, data: &[u8]) -> ResourceRef {
    let layout = ResourceLayout::new(&templ).unwrap();
    let storage = ResourceStorage::new_zeroed(layout.size).unwrap();
    {
        let mut w = storage.write();
        let n = data.len().min(w.len());
        w[..n].copy_from_slice(&data[..n]);
    }
    Arc::new(PipeResource {
        id: 0,
        templ,
        layout,
        storage,
    })
}

/// Marsaglia's xorshift32 (shifts 13, 17, 5) from `seed` (not 0): the
/// tests' random inputs, the same on every run.
pub fn xorshift32(mut seed: u32) -> impl FnMut() -> u32 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    }
}

pub fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|f| f.to_le_bytes()).collect()
}

pub fn surface(format: Format, w: u32, h: u32) -> SurfaceRef {
    let r = resource(
        ResourceTemplate::texture_2d(format, w, h, BindFlags::RENDER_TARGET),
        &[],
    );
    Arc::new(Surface {
        desc: SurfaceDesc {
            format,
            level: 0,
            first_layer: 0,
            last_layer: 0,
            width: w,
            height: h,
        },
        resource: r,
    })
}

/// A state block drawing `vertices` (position + colour vec4s interleaved).
pub struct Setup {
    pub fb: Arc<FramebufferState>,
    pub block: StateBlock,
}

impl Setup {
    pub fn new(w: u32, h: u32, zs: Option<Format>) -> Setup {
        let fb = Arc::new(FramebufferState {
            width: w,
            height: h,
            layers: 0,
            samples: 0,
            cbufs: vec![Some(surface(Format::R8G8B8A8_UNORM, w, h))],
            zsbuf: zs.map(|f| surface(f, w, h)),
        });
        let mut viewports = [ViewportState::default(); MAX_VIEWPORTS];
        viewports[0] = ViewportState {
            scale: [w as f32 / 2.0, h as f32 / 2.0, 0.5],
            translate: [w as f32 / 2.0, h as f32 / 2.0, 0.5],
        };
        let mut blend = BlendState::default();
        blend.rt[0].colormask = 0xf;
        let velems: Arc<[VertexElement]> = Arc::from(vec![
            VertexElement {
                src_offset: 0,
                vertex_buffer_index: 0,
                src_format: Format::R32G32B32A32_FLOAT,
                instance_divisor: 0,
            },
            VertexElement {
                src_offset: 16,
                vertex_buffer_index: 0,
                src_format: Format::R32G32B32A32_FLOAT,
                instance_divisor: 0,
            },
        ]);
        let block = StateBlock {
            pipeline: Arc::new(PipelineState {
                rasterizer: Arc::new(RasterizerState::default()),
                dsa: Arc::new(DepthStencilAlphaState::default()),
                blend: Arc::new(blend),
                velems,
                vs: PassVs::new(&[Semantic::Generic(0)]),
                fs: PassFs::new(Semantic::Generic(0), Interpolation::Perspective),
                framebuffer: fb.clone(),
                vertex_buffers: Arc::new(std::array::from_fn(|_| VertexBufferBinding::default())),
                index_buffer: IndexBufferBinding::default(),
                blend_color: BlendColor::default(),
                stencil_ref: StencilRef::default(),
                sample_mask: !0,
                min_samples: 1,
                clip: ClipState::default(),
                poly_stipple: PolyStipple::default(),
                viewports: Arc::new(viewports),
                scissors: Arc::new([ScissorState::default(); MAX_VIEWPORTS]),
            }),
            vs_resources: StageResources::default(),
            fs_resources: StageResources::default(),
            stream_output: None,
        };
        Setup { fb, block }
    }

    pub fn with_vertices(mut self, v: &[f32]) -> Self {
        let r = resource(
            ResourceTemplate::buffer((v.len() * 4) as u32, BindFlags::VERTEX_BUFFER),
            &f32_bytes(v),
        );
        let mut vbs: VertexBufferSlots = std::array::from_fn(|_| VertexBufferBinding::default());
        vbs[0] = VertexBufferBinding {
            buffer: Some(r),
            stride: 32,
            buffer_offset: 0,
        };
        self.block.vertex_buffers = Arc::new(vbs);
        self
    }
}

/// A world with the pipeline installed.
pub fn world(threads: usize) -> World {
    let mut w = World::new();
    crate::configure_pipeline(&mut w, Arc::new(PoolExecutor::new(threads).unwrap()));
    w
}

/// Records `commands` (each with its own state block) and runs the scene.
pub fn run(
    world: &mut World,
    fb: &Arc<FramebufferState>,
    cmds: Vec<(Option<StateBlock>, Command)>,
) {
    {
        let mut scene = world.resource_mut::<RecordedScene>();
        scene.clear();
        scene.framebuffer = Some(fb.clone());
        for (block, cmd) in cmds {
            let cmd = match (block, cmd) {
                (Some(b), Command::Draw { info, .. }) => {
                    scene.states.push(Arc::new(b));
                    Command::Draw {
                        state: scene.states.len() as u32 - 1,
                        info,
                    }
                }
                (_, c) => c,
            };
            scene.commands.push(cmd);
        }
    }
    let n = world.resource::<RecordedScene>().commands.len();
    crate::execute_scene(world, &vec![false; n]).expect("no work budget is set");
}

/// Runs `cmds` against `fb` on a fresh pipeline with `threads` workers
/// and returns the colour buffer's bytes.
pub fn render(
    fb: &Arc<FramebufferState>,
    threads: usize,
    cmds: Vec<(Option<StateBlock>, Command)>,
) -> Vec<u8> {
    let mut w = world(threads);
    run(&mut w, fb, cmds);
    pixels(fb.cbufs[0].as_ref().unwrap())
}

pub fn draw(mode: PrimType, start: u32, count: u32) -> Command {
    Command::Draw {
        state: 0,
        info: DrawInfo {
            mode,
            start,
            count,
            ..Default::default()
        },
    }
}

pub fn clear(color: [f32; 4]) -> Command {
    Command::Clear {
        buffers: ClearFlags::COLOR | ClearFlags::DEPTHSTENCIL,
        value: ClearValue {
            color,
            depth: 1.0,
            stencil: 0,
        },
    }
}

pub fn pixels(s: &SurfaceRef) -> Vec<u8> {
    s.resource.storage.read().to_vec()
}

pub fn rgba_at(fb: &FramebufferState, x: u32, y: u32) -> [u8; 4] {
    let s = fb.cbufs[0].as_ref().unwrap();
    let p = pixels(s);
    let o = ((y * fb.width + x) * 4) as usize;
    [p[o], p[o + 1], p[o + 2], p[o + 3]]
}

/// Pixel (x, y) in NDC for a `w`x`h` viewport covering the framebuffer.
pub fn ndc(x: f32, y: f32, w: u32, h: u32) -> (f32, f32) {
    (x / w as f32 * 2.0 - 1.0, y / h as f32 * 2.0 - 1.0)
}

/// Vertex data: positions in pixels, colour per vertex.
pub fn verts(pts: &[(f32, f32, f32, [f32; 4])], w: u32, h: u32) -> Vec<f32> {
    let mut v = Vec::new();
    for &(x, y, z, c) in pts {
        let (nx, ny) = ndc(x, y, w, h);
        v.extend_from_slice(&[nx, ny, z, 1.0]);
        v.extend_from_slice(&c);
    }
    v
}

mod cases {
    use super::*;

    const RED: [f32; 4] = [1.0, 0.0, 0.0, 1.0];
    const BLACK: [f32; 4] = [0.0, 0.0, 0.0, 1.0];

    #[test]
    fn one_triangle_covers_its_pixels() {
        let (w, h) = (64, 64);
        let s = Setup::new(w, h, None).with_vertices(&verts(
            &[
                (8.0, 8.0, 0.0, RED),
                (56.0, 8.0, 0.0, RED),
                (8.0, 56.0, 0.0, RED),
            ],
            w,
            h,
        ));
        let mut world = world(1);
        let fb = s.fb.clone();
        run(
            &mut world,
            &fb,
            vec![
                (None, clear(BLACK)),
                (Some(s.block), draw(PrimType::Triangles, 0, 3)),
            ],
        );
        assert_eq!(rgba_at(&fb, 10, 10), [255, 0, 0, 255]);
        assert_eq!(rgba_at(&fb, 60, 60), [0, 0, 0, 255]);
        assert_eq!(
            rgba_at(&fb, 8, 8),
            [255, 0, 0, 255],
            "top-left corner owned"
        );
        assert_eq!(
            rgba_at(&fb, 56, 8),
            [0, 0, 0, 255],
            "right corner not owned"
        );
        // Count: a right isosceles triangle of 48 px legs with the hypotenuse
        // through sample centres covers 48*49/2 - 48 = 1128 samples.
        let p = pixels(fb.cbufs[0].as_ref().unwrap());
        let red = p.chunks(4).filter(|c| c[0] == 255).count();
        assert_eq!(red, 48 * 47 / 2);
    }

    /// Additive blending of 1/255 per triangle: any pixel hit twice (or
    /// missed) shows up in the count.
    fn additive(mut s: Setup) -> Setup {
        let mut blend = BlendState::default();
        blend.rt[0] = RtBlendState {
            blend_enable: true,
            rgb_func: BlendFunc::Add,
            rgb_src_factor: BlendFactor::One,
            rgb_dst_factor: BlendFactor::One,
            alpha_func: BlendFunc::Add,
            alpha_src_factor: BlendFactor::One,
            alpha_dst_factor: BlendFactor::One,
            colormask: 0xf,
        };
        s.block.blend = Arc::new(blend);
        s
    }

    #[test]
    fn fan_and_mesh_hit_every_pixel_once() {
        let (w, h) = (96, 80);
        let one = [1.0 / 255.0, 1.0 / 255.0, 1.0 / 255.0, 1.0 / 255.0];
        // A fan around a centre on a sample position with awkward rim
        // vertices, covering a convex polygon, and a grid mesh around it.
        let c = (40.5, 40.5);
        let mut pts = Vec::new();
        let n = 23;
        for i in 0..n {
            let a0 = i as f32 / n as f32 * std::f32::consts::TAU;
            let a1 = (i + 1) as f32 / n as f32 * std::f32::consts::TAU;
            pts.push((c.0, c.1, 0.0, one));
            pts.push((c.0 + 30.3 * a0.cos(), c.1 + 29.7 * a0.sin(), 0.0, one));
            pts.push((c.0 + 30.3 * a1.cos(), c.1 + 29.7 * a1.sin(), 0.0, one));
        }
        let s = additive(Setup::new(w, h, None)).with_vertices(&verts(&pts, w, h));
        let fb = s.fb.clone();
        let p = render(
            &fb,
            2,
            vec![
                (None, clear([0.0; 4])),
                (Some(s.block), draw(PrimType::Triangles, 0, 3 * n)),
            ],
        );
        assert!(p.iter().all(|&v| v <= 1), "a pixel was hit twice");
        // Pixels well inside the polygon are all hit.
        for y in 20..61 {
            for x in 20..61 {
                let (dx, dy) = (x as f32 + 0.5 - c.0, y as f32 + 0.5 - c.1);
                if dx * dx + dy * dy < 25.0 * 25.0 {
                    assert_eq!(rgba_at(&fb, x, y)[0], 1, "gap at ({x},{y})");
                }
            }
        }
    }

    fn scene_pixels(threads: usize) -> Vec<u8> {
        scene_pixels_with_budget(threads, None).0
    }

    /// Counts back-end (tile pass) runs.
    #[derive(bevy_ecs::resource::Resource, Default)]
    struct TilePasses(u32);

    fn count_tile_passes(mut n: bevy_ecs::system::ResMut<TilePasses>) {
        n.0 += 1;
    }

    /// The blended scene drawn 16 times over, with the scene bin
    /// budget overridden; returns its bytes and how many tile passes ran.
    fn scene_pixels_with_budget(threads: usize, budget: Option<usize>) -> (Vec<u8>, u32) {
        let (w, h) = (200, 150);
        // Many overlapping random triangles with blending and depth.
        let mut next = super::xorshift32(12345);
        let mut rand = || (next() % 10000) as f32 / 10000.0;
        let mut pts = Vec::new();
        for _ in 0..600 {
            let (cx, cy) = (rand() * 220.0 - 10.0, rand() * 170.0 - 10.0);
            let z = rand();
            for _ in 0..3 {
                pts.push((
                    cx + rand() * 40.0 - 20.0,
                    cy + rand() * 40.0 - 20.0,
                    z * 2.0 - 1.0,
                    [rand(), rand(), rand(), rand()],
                ));
            }
        }
        let mut s = Setup::new(w, h, Some(Format::Z32_FLOAT)).with_vertices(&verts(&pts, w, h));
        s.block.blend = alpha_blend();
        s.block.dsa = Arc::new(DepthStencilAlphaState {
            depth_enabled: true,
            depth_writemask: true,
            depth_func: Func::Lequal,
            ..Default::default()
        });
        let mut world = world(threads);
        if let Some(b) = budget {
            world.insert_resource(crate::scene::SceneBinBudget(b));
        }
        world.init_resource::<TilePasses>();
        world.schedule_scope(crate::BackEnd, |_, sched| {
            use bevy_ecs::schedule::IntoScheduleConfigs;
            sched.add_systems(count_tile_passes.after(crate::sets::PipelineSet::Tiles));
        });
        let fb = s.fb.clone();
        let mut cmds = vec![(None, clear([0.1, 0.2, 0.3, 1.0]))];
        // 64 x 600 triangles, 19 jobs of JOB_PRIMS = 2048 primitives:
        // more than one wave at one and two threads (a wave is
        // WAVE_JOBS_PER_THREAD = 4 jobs a thread).
        for _ in 0..64 {
            cmds.push((Some(s.block.clone()), draw(PrimType::Triangles, 0, 1800)));
        }
        run(&mut world, &fb, cmds);
        let mut out = pixels(fb.cbufs[0].as_ref().unwrap());
        out.extend(pixels(fb.zsbuf.as_ref().unwrap()));
        (out, world.resource::<TilePasses>().0)
    }

    /// Scene memory that reaches the bin budget runs a tile pass mid-scene
    /// and carries on (llvmpipe's scene flush): same bytes, more passes.
    #[test]
    fn bin_budget_flushes_mid_scene_without_changing_bytes() {
        let (normal, passes) = scene_pixels_with_budget(2, None);
        assert_eq!(passes, 1, "one tile pass within the default budget");
        let (tight, tight_passes) = scene_pixels_with_budget(2, Some(1));
        assert!(tight_passes > 1, "a 1-byte budget must flush mid-scene");
        assert!(normal == tight, "mid-scene flushes changed the image");
    }

    #[test]
    fn thread_count_does_not_change_bytes() {
        let a = scene_pixels(1);
        assert_eq!(a, scene_pixels(2));
        assert_eq!(a, scene_pixels(4));
        assert!(
            a.chunks(4).take(200 * 150).any(|c| c != [26, 51, 77, 255]),
            "scene drew something"
        );
    }

    /// Draws `mode` primitives from window-space points with `rast`; the
    /// covered pixels (red) as (x, y).
    /// `SRC_ALPHA, INV_SRC_ALPHA` blending of colour (alpha replaced).
    fn alpha_blend() -> Arc<BlendState> {
        let mut blend = BlendState::default();
        blend.rt[0] = RtBlendState {
            blend_enable: true,
            rgb_func: BlendFunc::Add,
            rgb_src_factor: BlendFactor::SrcAlpha,
            rgb_dst_factor: BlendFactor::InvSrcAlpha,
            alpha_func: BlendFunc::Add,
            alpha_src_factor: BlendFactor::One,
            alpha_dst_factor: BlendFactor::Zero,
            colormask: 0xf,
        };
        Arc::new(blend)
    }

    fn covered_pixels(
        mode: PrimType,
        pts: &[(f32, f32)],
        rast: RasterizerState,
    ) -> Vec<(u32, u32)> {
        let (w, h) = (32, 16);
        let p: Vec<_> = pts.iter().map(|&(x, y)| (x, y, 0.0, RED)).collect();
        let mut s = Setup::new(w, h, None).with_vertices(&verts(&p, w, h));
        s.block.rasterizer = Arc::new(rast);
        let mut world = world(1);
        let fb = s.fb.clone();
        run(
            &mut world,
            &fb,
            vec![
                (None, clear(BLACK)),
                (Some(s.block), draw(mode, 0, pts.len() as u32)),
            ],
        );
        let mut out = Vec::new();
        for y in 0..h {
            for x in 0..w {
                if rgba_at(&fb, x, y)[0] > 0 {
                    out.push((x, y));
                }
            }
        }
        out
    }

    /// `line_last_pixel`: GL omits the pixel whose diamond holds the end
    /// point; with the flag set it is drawn, and nothing else changes.
    #[test]
    fn line_last_pixel_draws_the_end_pixel() {
        for (a, b, last) in [
            // x-major, left to right and right to left
            ((2.5, 4.5), (10.5, 4.5), (10, 4)),
            ((10.5, 6.5), (2.5, 6.5), (2, 6)),
            // ends inside the diamond but off the centre, both sides
            ((2.5, 8.5), (10.3, 8.5), (10, 8)),
            ((2.5, 10.5), (10.7, 10.5), (10, 10)),
            ((12.5, 12.5), (4.6, 12.5), (4, 12)),
            // y-major, both directions
            ((5.5, 1.5), (5.5, 9.5), (5, 9)),
            ((7.5, 12.5), (7.5, 3.5), (7, 3)),
            ((9.5, 1.5), (9.5, 9.3), (9, 9)),
            ((11.5, 12.5), (11.5, 3.7), (11, 3)),
        ] {
            let gl = covered_pixels(PrimType::Lines, &[a, b], RasterizerState::default());
            let d3d = covered_pixels(
                PrimType::Lines,
                &[a, b],
                RasterizerState {
                    line_last_pixel: true,
                    ..Default::default()
                },
            );
            assert_eq!(gl.len(), 8, "{a:?}-{b:?}: {gl:?}");
            assert!(!gl.contains(&last), "{a:?}-{b:?}: GL drew the last pixel");
            let mut expected = gl.clone();
            expected.push(last);
            expected.sort_by_key(|&(x, y)| (y, x));
            assert_eq!(d3d, expected, "{a:?}-{b:?}");
        }
    }

    /// `PIPE_POLYGON_MODE_FILL_RECTANGLE` (NV_fill_rectangle): a triangle
    /// covers its screen-aligned bounding rectangle, by facing, with the
    /// fill rule on the rectangle's edges.
    #[test]
    fn fill_rectangle_covers_the_bounding_box() {
        let rect = |fill_front, fill_back| RasterizerState {
            fill_front,
            fill_back,
            ..Default::default()
        };
        // Window-space triangle and its mirror (the other winding).
        let ccw = [(2.0, 2.0), (10.0, 2.0), (2.0, 8.0)];
        let cw = [(2.0, 2.0), (2.0, 8.0), (10.0, 2.0)];
        let bbox: Vec<(u32, u32)> = (2..8).flat_map(|y| (2..10).map(move |x| (x, y))).collect();
        let both = rect(PolygonMode::FillRectangle, PolygonMode::FillRectangle);
        for tri in [&ccw, &cw] {
            assert_eq!(covered_pixels(PrimType::Triangles, tri, both), bbox);
            let filled = covered_pixels(PrimType::Triangles, tri, RasterizerState::default());
            assert!(filled.len() < bbox.len() * 2 / 3, "{}", filled.len());
        }
        // Only the facing whose mode says so becomes a rectangle.
        let front_only = rect(PolygonMode::FillRectangle, PolygonMode::Fill);
        let a = covered_pixels(PrimType::Triangles, &ccw, front_only);
        let b = covered_pixels(PrimType::Triangles, &cw, front_only);
        assert!(
            a.len() != b.len() && (a == bbox || b == bbox),
            "{} {}",
            a.len(),
            b.len()
        );
        // Pixel centres on the rectangle's left and top edges are in, on
        // its right and bottom edges out (top-left rule): a rectangle from
        // 2.5 to 9.5 covers 2..=8.
        let half = [(2.5, 2.5), (9.5, 2.5), (2.5, 9.5)];
        let px = covered_pixels(PrimType::Triangles, &half, both);
        assert_eq!(px.first(), Some(&(2, 2)));
        assert_eq!(px.last(), Some(&(8, 8)));
        assert_eq!(px.len(), 49);
    }

    /// Whether the square `[x0, x1] x [y0, y1]` and triangle `t` overlap
    /// (touching counts): separating axes are the square's two and the
    /// triangle's three edge normals.
    fn square_touches(t: &[(f64, f64); 3], x0: f64, y0: f64, x1: f64, y1: f64) -> bool {
        let (tx0, tx1) = t
            .iter()
            .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
        let (ty0, ty1) = t
            .iter()
            .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.1), b.max(p.1)));
        if tx1 < x0 || tx0 > x1 || ty1 < y0 || ty0 > y1 {
            return false;
        }
        let corners = [(x0, y0), (x1, y0), (x0, y1), (x1, y1)];
        for i in 0..3 {
            let (a, b) = (t[i], t[(i + 1) % 3]);
            let n = (b.1 - a.1, a.0 - b.0);
            let proj = |p: (f64, f64)| n.0 * p.0 + n.1 * p.1;
            let (smin, smax) = corners.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &c| {
                (lo.min(proj(c)), hi.max(proj(c)))
            });
            let (tmin, tmax) = t.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &c| {
                (lo.min(proj(c)), hi.max(proj(c)))
            });
            if smax < tmin || tmax < smin {
                return false;
            }
        }
        true
    }

    /// Post-snap conservative rasterization, by properties (llvmpipe has no
    /// reference): on random snapped triangles every pixel whose square
    /// the triangle touches is covered, none farther than the dilation
    /// (plus 2/256 px of rounding) is, normal coverage is a subset, and a
    /// zero-area triangle draws nothing.
    #[test]
    fn conservative_raster_covers_every_touched_pixel() {
        let mut r = super::xorshift32(0x1234_5678);
        let mut next = move |lo: f64, hi: f64| {
            let rng = r();
            // On the 1/256 grid, so snapping is exact.
            let v = lo + (rng % 1_000_000) as f64 / 1_000_000.0 * (hi - lo);
            (v * 256.0).round() / 256.0
        };
        for dilate in [0.0f32, 0.75] {
            let rast = |conservative: bool| RasterizerState {
                half_pixel_center: true,
                conservative_raster_mode: if conservative {
                    ConservativeRasterMode::PostSnap
                } else {
                    ConservativeRasterMode::Off
                },
                conservative_raster_dilate: dilate,
                ..Default::default()
            };
            for _ in 0..60 {
                let t: [(f64, f64); 3] =
                    std::array::from_fn(|_| (next(4.0, 28.0), next(3.0, 13.0)));
                let pts = t.map(|(x, y)| (x as f32, y as f32));
                let cons = covered_pixels(PrimType::Triangles, &pts, rast(true));
                let normal = covered_pixels(PrimType::Triangles, &pts, rast(false));
                let area =
                    (t[1].0 - t[0].0) * (t[2].1 - t[0].1) - (t[2].0 - t[0].0) * (t[1].1 - t[0].1);
                if area == 0.0 {
                    assert!(cons.is_empty());
                    continue;
                }
                for p in &normal {
                    assert!(cons.contains(p), "{t:?}: {p:?} covered normally only");
                }
                let r = dilate as f64;
                for py in 0..16u32 {
                    for px in 0..32u32 {
                        let (x, y) = (px as f64, py as f64);
                        let touched = square_touches(&t, x - r, y - r, x + 1.0 + r, y + 1.0 + r);
                        let e = 2.0 / 256.0 + r;
                        let near = square_touches(&t, x - e, y - e, x + 1.0 + e, y + 1.0 + e);
                        let got = cons.contains(&(px, py));
                        assert!(
                            !touched || got,
                            "{t:?} dilate {dilate}: touched pixel {px},{py} missed"
                        );
                        assert!(
                            !got || near,
                            "{t:?} dilate {dilate}: far pixel {px},{py} covered"
                        );
                    }
                }
            }
        }
    }

    /// A xorshift generator of values in `[lo, hi)`, on the 1/256 grid
    /// when `grid` (snapping exact) or anywhere.
    fn rng(seed: u32, grid: bool) -> impl FnMut(f64, f64) -> f64 {
        let mut next = super::xorshift32(seed);
        move |lo: f64, hi: f64| {
            let r = next();
            let v = lo + (r % 1_000_000) as f64 / 1_000_000.0 * (hi - lo);
            if grid { (v * 256.0).round() / 256.0 } else { v }
        }
    }

    /// A random triangle on the 32x16 test target; with `sliver`, its
    /// third vertex within `1 / inv_gap` pixel of the line through the
    /// first two.
    fn random_triangle(
        next: &mut impl FnMut(f64, f64) -> f64,
        sliver: bool,
        inv_gap: f64,
    ) -> [(f64, f64); 3] {
        let mut t: [(f64, f64); 3] = std::array::from_fn(|_| (next(4.0, 28.0), next(3.0, 13.0)));
        if sliver {
            let s = next(0.2, 0.8);
            t[2] = (
                t[0].0 + s * (t[1].0 - t[0].0),
                t[0].1 + s * (t[1].1 - t[0].1) + next(-1.0, 1.0) / inv_gap,
            );
        }
        t
    }

    fn conservative(mode: ConservativeRasterMode, dilate: f32) -> RasterizerState {
        RasterizerState {
            half_pixel_center: true,
            conservative_raster_mode: mode,
            conservative_raster_dilate: dilate,
            ..Default::default()
        }
    }

    /// Checks conservative coverage `got` of the shape `tris` (a union of
    /// triangles, possibly degenerate) on the 32x16 test target: every
    /// pixel whose square, dilated by `r`, touches the shape is covered,
    /// and no pixel is that does not touch it with `e` more dilation.
    fn check_conservative(
        got: &[(u32, u32)],
        tris: &[[(f64, f64); 3]],
        r: f64,
        e: f64,
        what: &str,
    ) {
        for py in 0..16u32 {
            for px in 0..32u32 {
                let (x, y) = (px as f64, py as f64);
                let touches = |d: f64| {
                    tris.iter()
                        .any(|t| square_touches(t, x - d, y - d, x + 1.0 + d, y + 1.0 + d))
                };
                let covered = got.contains(&(px, py));
                assert!(
                    !touches(r) || covered,
                    "{what}: touched pixel {px},{py} missed"
                );
                assert!(
                    !covered || touches(r + e),
                    "{what}: far pixel {px},{py} covered"
                );
            }
        }
    }

    /// Pre-snap conservative rasterization, by properties: on random
    /// triangles anywhere (not on the snapping grid) every pixel the
    /// unsnapped triangle touches is covered, nothing farther than the
    /// dilation plus the snapping error (1/512 px) and rounding is, and
    /// slivers that snap to zero area — which post-snap drops — still
    /// cover what they touch.
    #[test]
    fn pre_snap_conservative_raster_covers_the_unsnapped_triangle() {
        let mut next = rng(0x9e37_79b9, false);
        for dilate in [0.0f32, 0.5] {
            let r = dilate as f64;
            let rast = |m| conservative(m, dilate);
            for i in 0..80 {
                let t = random_triangle(&mut next, i % 4 == 0, 1024.0);
                let pts = t.map(|(x, y)| (x as f32, y as f32));
                let pre = covered_pixels(
                    PrimType::Triangles,
                    &pts,
                    rast(ConservativeRasterMode::PreSnap),
                );
                check_conservative(
                    &pre,
                    &[t],
                    r,
                    4.0 / 256.0,
                    &format!("pre-snap {t:?} dilate {dilate}"),
                );
                // Post-snap never covers more than pre-snap.
                let post = covered_pixels(
                    PrimType::Triangles,
                    &pts,
                    rast(ConservativeRasterMode::PostSnap),
                );
                for p in &post {
                    assert!(pre.contains(p), "{t:?}: {p:?} covered post-snap only");
                }
            }
        }
        // An exactly degenerate triangle: post-snap draws nothing,
        // pre-snap what its segment touches.
        let t = [(5.25, 4.5), (20.75, 11.0), (13.0, 7.75)];
        let pts = t.map(|(x, y)| (x as f32, y as f32));
        let post = covered_pixels(
            PrimType::Triangles,
            &pts,
            conservative(ConservativeRasterMode::PostSnap, 0.0),
        );
        assert!(post.is_empty());
        let pre = covered_pixels(
            PrimType::Triangles,
            &pts,
            conservative(ConservativeRasterMode::PreSnap, 0.0),
        );
        assert!(!pre.is_empty());
        check_conservative(&pre, &[t], 0.0, 4.0 / 256.0, "degenerate");
    }

    /// Post-snap conservative rasterization with a subpixel precision bias:
    /// coverage is with respect to the triangle snapped to the finer grid
    /// (2^-(8+bias) pixel per axis), which also decides degeneracy.
    #[test]
    fn subpixel_precision_bias_snaps_to_a_finer_grid() {
        let mut next = rng(0x51ed_270b, false);
        for (bx, by) in [(2u8, 2u8), (4, 1)] {
            let rast = RasterizerState {
                subpixel_precision_x: bx,
                subpixel_precision_y: by,
                ..conservative(ConservativeRasterMode::PostSnap, 0.0)
            };
            // Window position to the finer grid (snapping happens in the
            // space offset by the half-pixel centre).
            let fine = |v: f64, b: u8| {
                let scale = 256.0 * f64::from(1u32 << b);
                ((v - 0.5) * scale).round_ties_even() / scale + 0.5
            };
            for i in 0..60 {
                let t = random_triangle(&mut next, i % 4 == 0, 512.0);
                let pts = t.map(|(x, y)| (x as f32, y as f32));
                let f = pts.map(|(x, y)| (fine(f64::from(x), bx), fine(f64::from(y), by)));
                let area =
                    (f[1].0 - f[0].0) * (f[2].1 - f[0].1) - (f[2].0 - f[0].0) * (f[1].1 - f[0].1);
                if area.abs() < 1e-6 {
                    // At the grid's resolution: the test's float round
                    // trip could flip the verdict.
                    continue;
                }
                let got = covered_pixels(PrimType::Triangles, &pts, rast);
                check_conservative(
                    &got,
                    &[f],
                    0.0,
                    4.0 / 256.0,
                    &format!("bias {bx},{by} {t:?}"),
                );
            }
            // Exactly degenerate on every grid: nothing.
            let t = [(5.25f32, 4.5f32), (20.75, 11.0), (13.0, 7.75)];
            assert!(covered_pixels(PrimType::Triangles, &t, rast).is_empty());
        }
    }

    /// Conservative points and lines, both modes: a point covers every
    /// pixel its size x size square touches, a line every pixel its
    /// rectangle (the segment widened by `line_width`, not lengthened)
    /// touches, nothing beyond the dilation and rounding; normal coverage
    /// is a subset.
    #[test]
    fn conservative_raster_of_points_and_lines() {
        let mut next = rng(0x2545_f491, false);
        for mode in [
            ConservativeRasterMode::PostSnap,
            ConservativeRasterMode::PreSnap,
        ] {
            for dilate in [0.0f32, 0.25] {
                let r = dilate as f64;
                for i in 0..40 {
                    let size = [1.0, 1.5, 3.0, 4.25][i % 4];
                    let c = (next(5.0, 27.0), next(5.0, 11.0));
                    let rast = RasterizerState {
                        point_size: size as f32,
                        ..conservative(mode, dilate)
                    };
                    let got = covered_pixels(PrimType::Points, &[(c.0 as f32, c.1 as f32)], rast);
                    let h = size / 2.0;
                    let sq = [
                        [(c.0 - h, c.1 - h), (c.0 + h, c.1 - h), (c.0 + h, c.1 + h)],
                        [(c.0 - h, c.1 - h), (c.0 + h, c.1 + h), (c.0 - h, c.1 + h)],
                    ];
                    check_conservative(
                        &got,
                        &sq,
                        r,
                        4.0 / 256.0,
                        &format!("{mode:?} point {c:?} size {size}"),
                    );
                    let normal = covered_pixels(
                        PrimType::Points,
                        &[(c.0 as f32, c.1 as f32)],
                        RasterizerState {
                            point_size: size as f32,
                            point_quad_rasterization: true,
                            ..Default::default()
                        },
                    );
                    for p in &normal {
                        assert!(got.contains(p), "point {c:?}: {p:?} covered normally only");
                    }

                    let width = [1.0, 2.0, 3.5, 1.25][i % 4];
                    let a = (next(3.0, 29.0), next(2.0, 14.0));
                    let b = (next(3.0, 29.0), next(2.0, 14.0));
                    let len = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
                    if len < 0.5 {
                        continue;
                    }
                    let (nx, ny) = (
                        -(b.1 - a.1) / len * width / 2.0,
                        (b.0 - a.0) / len * width / 2.0,
                    );
                    let q = [
                        (a.0 - nx, a.1 - ny),
                        (b.0 - nx, b.1 - ny),
                        (b.0 + nx, b.1 + ny),
                        (a.0 + nx, a.1 + ny),
                    ];
                    let rect = [[q[0], q[1], q[2]], [q[0], q[2], q[3]]];
                    let rast = RasterizerState {
                        line_width: width as f32,
                        ..conservative(mode, dilate)
                    };
                    let pts = [(a.0 as f32, a.1 as f32), (b.0 as f32, b.1 as f32)];
                    let got = covered_pixels(PrimType::Lines, &pts, rast);
                    check_conservative(
                        &got,
                        &rect,
                        r,
                        4.0 / 256.0,
                        &format!("{mode:?} line {a:?}-{b:?} width {width}"),
                    );
                    let normal = covered_pixels(
                        PrimType::Lines,
                        &pts,
                        RasterizerState {
                            line_width: width as f32,
                            line_rectangular: true,
                            ..Default::default()
                        },
                    );
                    for p in &normal {
                        assert!(
                            got.contains(p),
                            "line {a:?}-{b:?}: {p:?} covered normally only"
                        );
                    }
                }
            }
        }
    }

    /// A fragment input whose `sprite_coord_enable` bit is set holds the
    /// sprite coordinate on points even when the vertex shader does not
    /// write that GENERIC (the VS here writes only GENERIC0, the FS reads
    /// GENERIC1): (s, t, 0, 1), t from the top (UPPER_LEFT) or the bottom
    /// (LOWER_LEFT), exactly what a VS that writes the input gets; a
    /// triangle with the same state reads zeros.
    #[test]
    fn sprite_coordinates_replace_inputs_the_vs_does_not_write() {
        let (w, h) = (16, 16);
        let colour = [0.2, 0.4, 0.6, 1.0];
        let image = |mode: SpriteCoordMode, vs_writes: bool, prim: PrimType| {
            let pts: &[(f32, f32, f32, [f32; 4])] = match prim {
                PrimType::Points => &[(8.0, 8.0, 0.0, colour)],
                _ => &[
                    (1.0, 1.0, 0.0, colour),
                    (15.0, 1.0, 0.0, colour),
                    (1.0, 15.0, 0.0, colour),
                ],
            };
            let mut s = Setup::new(w, h, None).with_vertices(&verts(pts, w, h));
            s.block.rasterizer = Arc::new(RasterizerState {
                point_quad_rasterization: true,
                sprite_coord_enable: 0b10,
                sprite_coord_mode: mode,
                point_size: 8.0,
                ..Default::default()
            });
            s.block.vs = if vs_writes {
                PassVs::new(&[Semantic::Generic(1)])
            } else {
                PassVs::new(&[Semantic::Generic(0)])
            };
            s.block.fs = PassFs::new(Semantic::Generic(1), Interpolation::Perspective);
            let n = pts.len() as u32;
            render(&s.fb, 1, vec![(Some(s.block), draw(prim, 0, n))])
        };
        let at = |img: &[u8], x: usize, y: usize| {
            let o = (y * w as usize + x) * 4;
            [img[o], img[o + 1], img[o + 2], img[o + 3]]
        };
        for mode in [SpriteCoordMode::UpperLeft, SpriteCoordMode::LowerLeft] {
            let got = image(mode, false, PrimType::Points);
            // the point covers pixels 4..12 in x and y
            for i in 0..8 {
                let v = ((i as f32 + 0.5) / 8.0 * 255.0).round() as i32;
                let s = at(&got, 4 + i, 6);
                assert!(
                    (s[0] as i32 - v).abs() <= 1,
                    "{mode:?} s at column {i}: {s:?}"
                );
                let t = at(&got, 6, 4 + i);
                let want_t = if mode == SpriteCoordMode::UpperLeft {
                    v
                } else {
                    255 - v
                };
                assert!(
                    (t[1] as i32 - want_t).abs() <= 1,
                    "{mode:?} t at row {i}: {t:?}"
                );
                assert_eq!((s[2], s[3]), (0, 255), "{mode:?}: z = 0, w = 1");
            }
            assert_eq!(at(&got, 3, 8), [0; 4], "{mode:?}: outside the point");
            assert_eq!(
                got,
                image(mode, true, PrimType::Points),
                "{mode:?}: as if written"
            );
            let tri = image(mode, false, PrimType::Triangles);
            assert_eq!(at(&tri, 4, 4), [0; 4], "{mode:?}: triangles read zeros");
        }
    }

    /// Triangles drawn with `line_smooth` / `point_smooth` on keep their
    /// alpha: the smooth-primitive varying of their vertices is neutral
    /// (llvmpipe binds the coverage-scaling shader only for smooth lines
    /// and points), with blending showing any change.
    #[test]
    fn smooth_flags_leave_triangles_alone() {
        let (w, h) = (32, 16);
        let half = [1.0, 0.5, 0.25, 0.5];
        let pts = [
            (2.3, 1.1, 0.0, half),
            (29.6, 4.2, 0.0, half),
            (7.9, 14.8, 0.0, half),
        ];
        let image = |smooth: bool| {
            let mut s = Setup::new(w, h, None).with_vertices(&verts(&pts, w, h));
            s.block.blend = alpha_blend();
            s.block.rasterizer = Arc::new(RasterizerState {
                line_smooth: smooth,
                point_smooth: smooth,
                line_rectangular: smooth,
                ..Default::default()
            });
            let fb = s.fb.clone();
            render(
                &fb,
                1,
                vec![
                    (None, clear([0.1, 0.2, 0.3, 1.0])),
                    (Some(s.block), draw(PrimType::Triangles, 0, 3)),
                ],
            )
        };
        let plain = image(false);
        assert!(plain.chunks(4).any(|p| p[0] > 100), "the triangle is drawn");
        assert_eq!(image(true), plain);
    }

    /// `point_tri_clip`: a wide point whose centre is just outside the
    /// viewport is clipped away by its centre (GL) but draws the part of
    /// its square inside the viewport when clipped as a rectangle (D3D).
    #[test]
    fn point_tri_clip_clips_points_as_rectangles() {
        let rast = |tri_clip| RasterizerState {
            point_size: 8.0,
            point_quad_rasterization: tri_clip,
            point_tri_clip: tri_clip,
            ..Default::default()
        };
        let outside = [(-2.0, 8.0)];
        assert!(covered_pixels(PrimType::Points, &outside, rast(false)).is_empty());
        let d3d = covered_pixels(PrimType::Points, &outside, rast(true));
        // The square spans x in [-6, 2): columns 0 and 1, rows 4..12.
        let expected: Vec<(u32, u32)> = (4..12).flat_map(|y| [(0, y), (1, y)]).collect();
        assert_eq!(d3d, expected);
        // A point inside draws the same either way.
        let inside = [(10.0, 8.0)];
        assert_eq!(
            covered_pixels(PrimType::Points, &inside, rast(false)),
            covered_pixels(PrimType::Points, &inside, rast(true))
        );
    }

    #[test]
    fn hostile_coordinates_neither_hang_nor_panic() {
        let (w, h) = (64, 64);
        let vals = [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            1e30,
            -1e30,
            1e-30,
            0.0,
            -0.0,
            3.4e38,
            1.0,
        ];
        let mut data = Vec::new();
        for (i, &a) in vals.iter().enumerate() {
            for (j, &b) in vals.iter().enumerate() {
                let c = vals[(i + j) % vals.len()];
                // position (a, b, c, w) with w cycling through hostile values
                data.extend_from_slice(&[a, b, c, vals[(i * 3 + j) % vals.len()]]);
                data.extend_from_slice(&RED);
            }
        }
        for mode in [
            PrimType::Triangles,
            PrimType::Lines,
            PrimType::Points,
            PrimType::TriangleStrip,
        ] {
            let s = Setup::new(w, h, Some(Format::Z24_UNORM_S8_UINT)).with_vertices(&data);
            let mut world = world(2);
            let fb = s.fb.clone();
            run(&mut world, &fb, vec![(Some(s.block), draw(mode, 0, 99))]);
        }
    }

    fn clip_scene(pts: &[[f32; 8]], clamp: bool) -> Vec<u8> {
        let (w, h) = (64, 64);
        let data: Vec<f32> = pts.iter().flatten().copied().collect();
        let mut s = Setup::new(w, h, None).with_vertices(&data);
        if clamp {
            s.block.rasterizer = Arc::new(RasterizerState {
                depth_clip_near: false,
                depth_clip_far: false,
                depth_clamp: true,
                ..Default::default()
            });
        }
        let fb = s.fb.clone();
        render(
            &fb,
            1,
            vec![
                (None, clear(BLACK)),
                (
                    Some(s.block),
                    draw(PrimType::Triangles, 0, pts.len() as u32),
                ),
            ],
        )
    }

    #[test]
    fn clipping_w_near_zero_and_behind_the_eye() {
        // One vertex with w slightly positive, one negative: the visible part
        // is clipped at the near plane, nothing explodes, and the pixels near
        // the in-front vertex are drawn.
        let pts = [
            [-0.5, -0.5, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0],
            [0.5, -0.5, 0.0, 1e-7, 1.0, 0.0, 0.0, 1.0],
            [0.0, 0.5, 0.5, -1.0, 1.0, 0.0, 0.0, 1.0],
        ];
        for clamp in [false, true] {
            let p = clip_scene(&pts, clamp);
            // The visible wedge opens upwards from the first vertex's window
            // position (16, 16): between the ray to the left (the edge
            // towards the vertex behind the eye) and the ray up-right.
            let o = ((10 * 64 + 16) * 4) as usize;
            assert_eq!(&p[o..o + 4], &[255, 0, 0, 255], "clamp={clamp}");
            assert!(
                p.chunks(4)
                    .all(|c| c == [255, 0, 0, 255] || c == [0, 0, 0, 255])
            );
        }
    }

    #[test]
    fn clipping_triangle_crossing_near_and_far() {
        // z runs from -3w to +3w across the triangle: only the middle band
        // |z| <= w survives; with depth clamp nothing is clipped.
        let pts = [
            [-0.9, -0.9, -3.0, 1.0, 1.0, 0.0, 0.0, 1.0],
            [0.9, -0.9, 3.0, 1.0, 1.0, 0.0, 0.0, 1.0],
            [0.0, 0.9, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0],
        ];
        let clipped = clip_scene(&pts, false);
        let clamped = clip_scene(&pts, true);
        let count = |p: &[u8]| p.chunks(4).filter(|c| c[0] == 255).count();
        let (a, b) = (count(&clipped), count(&clamped));
        assert!(a > 0 && b > a, "clipped {a}, clamped {b}");
        // Left and right ends of the bottom row are clipped away.
        let row = 6 * 64 * 4;
        assert_eq!(&clipped[row + 4 * 5..row + 4 * 6], &[0, 0, 0, 255]);
        assert_eq!(&clamped[row + 4 * 5..row + 4 * 6], &[255, 0, 0, 255]);
    }

    /// Writes input 0 to colour 0 and a constant to `@builtin(frag_depth)`.
    struct DepthFs {
        info: ShaderInfo,
        depth: f32,
    }

    impl FragmentShader for DepthFs {
        fn info(&self) -> &ShaderInfo {
            &self.info
        }
        fn run(&self, _r: &ShaderResources<'_>, io: &mut FragmentIo<'_>) {
            let n = io.groups;
            io.outputs[..4 * n].copy_from_slice(&io.inputs[..4 * n]);
            io.outputs[4 * n..5 * n].fill(Lanes::splat(self.depth));
        }
    }

    fn depth_at(s: &SurfaceRef, w: u32, x: u32, y: u32) -> f32 {
        let p = pixels(s);
        let o = ((y * w + x) * 4) as usize;
        f32::from_le_bytes([p[o], p[o + 1], p[o + 2], p[o + 3]])
    }

    /// One triangle covering the framebuffer's lower-left half at window
    /// depth `z` (NDC `2z - 1`), into Z32_FLOAT with depth LESS + write.
    fn depth_scene(fs: Option<Arc<DepthFs>>, rast: RasterizerState, z: f32) -> f32 {
        let (w, h) = (32, 32);
        let zn = 2.0 * z - 1.0;
        let mut s = Setup::new(w, h, Some(Format::Z32_FLOAT)).with_vertices(&verts(
            &[
                (0.0, 0.0, zn, RED),
                (32.0, 0.0, zn + 0.25, RED),
                (0.0, 32.0, zn, RED),
            ],
            w,
            h,
        ));
        s.block.dsa = Arc::new(DepthStencilAlphaState {
            depth_enabled: true,
            depth_writemask: true,
            depth_func: Func::Less,
            ..Default::default()
        });
        s.block.rasterizer = Arc::new(rast);
        if let Some(fs) = fs {
            s.block.fs = fs;
        }
        let mut world = world(1);
        let fb = s.fb.clone();
        run(
            &mut world,
            &fb,
            vec![
                (None, clear(BLACK)),
                (Some(s.block), draw(PrimType::Triangles, 0, 3)),
            ],
        );
        depth_at(fb.zsbuf.as_ref().unwrap(), w, 2, 2)
    }

    #[test]
    fn shader_written_depth_replaces_interpolated_depth() {
        let mut info = ShaderInfo {
            stage: ShaderType::Fragment,
            ..Default::default()
        };
        info.inputs.push(IoSlot::new(Semantic::Generic(0), 0));
        info.outputs.push(IoSlot::new(Semantic::Color(0), 0));
        info.outputs
            .push(IoSlot::new(Semantic::Depth, 0).with_components(1));
        let fs = |depth| {
            Arc::new(DepthFs {
                info: info.clone(),
                depth,
            })
        };
        let plain = depth_scene(None, RasterizerState::default(), 0.5);
        assert!((plain - 0.5).abs() < 0.01, "interpolated depth {plain}");
        assert_eq!(
            depth_scene(Some(fs(0.125)), RasterizerState::default(), 0.5),
            0.125
        );
        // Written depth is restricted to [0, 1] like interpolated depth.
        assert_eq!(
            depth_scene(Some(fs(-3.0)), RasterizerState::default(), 0.5),
            0.0
        );
    }

    #[test]
    fn polygon_offset_shifts_depth_and_is_clamped() {
        let base = depth_scene(None, RasterizerState::default(), 0.5);
        let offset = |units: f32, scale: f32, clamp: f32, unscaled: bool| {
            let rast = RasterizerState {
                offset_tri: true,
                offset_units: units,
                offset_scale: scale,
                offset_clamp: clamp,
                offset_units_unscaled: unscaled,
                ..Default::default()
            };
            depth_scene(None, rast, 0.5) - base
        };
        // offset_units_unscaled: units are depth values as they are (D3D9).
        assert!((offset(0.25, 0.0, 0.0, true) - 0.25).abs() < 1e-6);
        // Float depth: units count ulps of the largest |z| (0.5..0.625 has
        // exponent -1: one unit is 2^-24).
        let one_ulp = offset(1000.0, 0.0, 0.0, false);
        assert!(
            (one_ulp - 1000.0 / (1u32 << 24) as f32).abs() < 1e-6,
            "{one_ulp}"
        );
        // Slope: dz/dx = 0.125 window units over 32 px.
        let slope = offset(0.0, 8.0, 0.0, false);
        assert!((slope - 8.0 * 0.125 / 32.0).abs() < 1e-5, "{slope}");
        // Clamps: upper bound for positive clamp, lower for negative.
        assert!((offset(0.0, 8.0, 0.01, false) - 0.01).abs() < 1e-6);
        assert!((offset(0.0, -8.0, -0.01, false) + 0.01).abs() < 1e-6);
        // Pushed past 1: restricted to [0, 1] before the test.
        assert_eq!(offset(0.75, 0.0, 0.0, true) + base, 1.0);
    }

    /// A triangle drawn as `PIPE_POLYGON_MODE_LINE`, clipped by the far
    /// plane (z > w past x = 0) or by user plane `x <= 0`: the red pixels.
    fn unfilled_clip_scene(user_plane: bool) -> Vec<u8> {
        let (w, h) = (64, 64);
        // z runs from -0.5 (left) to 1.5 (right): the far plane cuts at x = 0.
        let pts = [
            [-0.8, -0.8, -0.5, 1.0, 1.0, 0.0, 0.0, 1.0],
            [0.8, -0.8, 1.5, 1.0, 1.0, 0.0, 0.0, 1.0],
            [-0.8, 0.8, -0.5, 1.0, 1.0, 0.0, 0.0, 1.0],
        ];
        let data: Vec<f32> = pts.iter().flatten().copied().collect();
        let mut s = Setup::new(w, h, None).with_vertices(&data);
        s.block.rasterizer = Arc::new(RasterizerState {
            fill_front: PolygonMode::Line,
            fill_back: PolygonMode::Line,
            depth_clip_far: !user_plane,
            clip_plane_enable: user_plane as u8,
            ..Default::default()
        });
        // -x >= 0 keeps the left half.
        s.block.clip.ucp[0] = [-1.0, 0.0, 0.0, 0.0];
        let fb = s.fb.clone();
        render(
            &fb,
            1,
            vec![
                (None, clear(BLACK)),
                (Some(s.block), draw(PrimType::Triangles, 0, 3)),
            ],
        )
    }

    #[test]
    fn unfilled_edges_along_clip_planes() {
        let red_in_column =
            |p: &[u8], x: usize| (0..64).filter(|y| p[(y * 64 + x) * 4] == 255).count();
        // The cut is the vertical line x = 32 between y = 6 and y = 32.
        let far = unfilled_clip_scene(false);
        let user = unfilled_clip_scene(true);
        // Along the view volume's far plane: no edge (draw's rule).
        assert!(red_in_column(&far, 31) <= 2, "far-plane edge drawn");
        // Along a user plane: an edge (NVIDIA's behaviour, as draw).
        assert!(
            red_in_column(&user, 31) + red_in_column(&user, 32) >= 20,
            "user-plane edge missing"
        );
        // The original edges are drawn in both: the left edge x = 6.
        for p in [&far, &user] {
            assert!(red_in_column(p, 6) >= 40);
        }
        // No interior fill, and no fan diagonal: the middle of the clipped
        // part stays black.
        for p in [&far, &user] {
            assert_eq!(p[(20 * 64 + 20) * 4], 0);
        }
    }

    /// A stippled line strip of 4095 one-pixel segments snaking over a
    /// 64x64 target: more than the planner's job size, so a strip split across
    /// jobs would restart the pattern at segment 2048.  Segment i (from a pixel
    /// centre to the next) lights exactly its start pixel when the pattern
    /// is on at counter i.
    #[test]
    fn line_stipple_counter_runs_through_a_long_strip() {
        let (w, h) = (64u32, 64u32);
        let px = |i: u32| {
            let y = i / w;
            let x = if y.is_multiple_of(2) {
                i % w
            } else {
                w - 1 - i % w
            };
            (x, y)
        };
        let pts: Vec<_> = (0..w * h)
            .map(|i| {
                let (x, y) = px(i);
                (x as f32 + 0.5, y as f32 + 0.5, 0.0, RED)
            })
            .collect();
        assert!(pts.len() as u32 - 1 > crate::scene::JOB_PRIMS);
        let mut s = Setup::new(w, h, None).with_vertices(&verts(&pts, w, h));
        let (pattern, factor) = (0x0f3fu16, 3u32);
        s.block.rasterizer = Arc::new(RasterizerState {
            line_stipple_enable: true,
            line_stipple_pattern: pattern,
            line_stipple_factor: factor as u8 - 1,
            ..Default::default()
        });
        for threads in [1, 2] {
            let mut world = world(threads);
            let fb = s.fb.clone();
            run(
                &mut world,
                &fb,
                vec![
                    (None, clear(BLACK)),
                    (Some(s.block.clone()), draw(PrimType::LineStrip, 0, w * h)),
                ],
            );
            for i in 0..w * h - 1 {
                let (x, y) = px(i);
                let on = (pattern >> ((i / factor) & 15)) & 1 != 0;
                let lit = rgba_at(&fb, x, y)[0] == 255;
                assert_eq!(lit, on, "segment {i} at ({x}, {y}), {threads} threads");
            }
        }
    }
}

/// The pipeline counters (`PipelineCounters`, docs/profiling.md): exact
/// counts on scenes whose answers are known, the same for any thread
/// count and any tile-pass split.
mod counters {
    use super::*;
    use ferropipe_profiling::{Counter, CounterGroup, Counts};

    const RED: [f32; 4] = [1.0, 0.0, 0.0, 1.0];
    const BLACK: [f32; 4] = [0.0, 0.0, 0.0, 1.0];

    /// Writes input 0 to colour 0 and kills the lanes whose input x (red)
    /// is below 1/2.
    struct KillFs {
        info: ShaderInfo,
    }

    impl KillFs {
        fn new() -> Arc<Self> {
            let mut info = PassFs::interface(Semantic::Generic(0), Interpolation::Perspective);
            info.uses_discard = true;
            Arc::new(KillFs { info })
        }
    }

    impl FragmentShader for KillFs {
        fn info(&self) -> &ShaderInfo {
            &self.info
        }
        fn run(&self, _r: &ShaderResources<'_>, io: &mut FragmentIo<'_>) {
            let n = 4 * io.groups;
            io.outputs[..n].copy_from_slice(&io.inputs[..n]);
            for g in 0..io.groups {
                let keep = io.inputs[g].simd_ge(Lanes::splat(0.5));
                io.mask[g] &= keep;
            }
        }
    }

    /// Runs `cmds` on a fresh pipeline with `threads` workers (and a bin
    /// budget); returns the flush's counters, times zeroed.
    fn counts(
        fb: &Arc<FramebufferState>,
        threads: usize,
        budget: Option<usize>,
        cmds: Vec<(Option<StateBlock>, Command)>,
    ) -> Counts {
        let mut w = world(threads);
        if let Some(b) = budget {
            w.insert_resource(crate::scene::SceneBinBudget(b));
        }
        let set = w.resource::<crate::PipelineCounters>().0.clone();
        let before = set.snapshot();
        run(&mut w, fb, cmds);
        let mut out = Counts::new();
        for (c, v) in set.snapshot().since(&before).iter() {
            if c.group() != CounterGroup::StageTime {
                out.add(c, v);
            }
        }
        out
    }

    /// Two triangles making a `x0..x1` x `y0..y1` pixel rectangle (pixel
    /// edges on sample-free lines: exactly its pixels are covered).
    fn rect_pts(x0: f32, y0: f32, x1: f32, y1: f32, c: [f32; 4]) -> Vec<(f32, f32, f32, [f32; 4])> {
        vec![
            (x0, y0, 0.0, c),
            (x1, y0, 0.0, c),
            (x0, y1, 0.0, c),
            (x1, y0, 0.0, c),
            (x1, y1, 0.0, c),
            (x0, y1, 0.0, c),
        ]
    }

    fn red_pixels(fb: &FramebufferState) -> u64 {
        pixels(fb.cbufs[0].as_ref().unwrap())
            .chunks(4)
            .filter(|c| c[0] == 255)
            .count() as u64
    }

    #[test]
    fn two_triangles_shade_exactly_their_pixels() {
        let (w, h) = (100, 80);
        // A 37 x 23 rectangle, and a right triangle of 48 px legs whose
        // hypotenuse runs through sample centres (48 * 47 / 2 pixels).
        let mut pts = rect_pts(10.0, 5.0, 47.0, 28.0, RED);
        pts.extend([
            (50.0, 30.0, 0.0, RED),
            (98.0, 30.0, 0.0, RED),
            (50.0, 78.0, 0.0, RED),
        ]);
        let s = Setup::new(w, h, None).with_vertices(&verts(&pts, w, h));
        let fb = s.fb.clone();
        let cmds = || {
            vec![
                (None, clear(BLACK)),
                (Some(s.block.clone()), draw(PrimType::Triangles, 0, 9)),
            ]
        };
        let c = counts(&fb, 1, None, cmds());
        let pixels = 37 * 23 + 48 * 47 / 2;
        assert_eq!(red_pixels(&fb), pixels);
        assert_eq!(c.get(Counter::FragmentsShaded), pixels);
        assert_eq!(c.get(Counter::FragmentsKilled), 0);
        assert_eq!(c.get(Counter::Flushes), 1);
        assert_eq!(c.get(Counter::Draws), 1);
        assert_eq!(c.get(Counter::VerticesShaded), 9);
        assert_eq!(c.get(Counter::PrimitivesIn), 3);
        assert_eq!(c.get(Counter::PrimitivesAfterClip), 3);
        assert_eq!(c.get(Counter::PrimitivesAfterCull), 3);
        // The rectangle lies in tile (0, 0); the triangle's box spans
        // tiles (0..=1, 0..=1), but its hypotenuse (x + y = 128) rejects
        // tile (1, 1).  Neither covers a whole tile.
        assert_eq!(c.get(Counter::TilesTouched), 3);
        assert_eq!(c.get(Counter::TilesFullyCovered), 0);
        // The clear: one entry per tile (2 x 2); the merged rectangle one;
        // the triangle one per tile it touches.
        assert_eq!(c.get(Counter::BinsEmitted), 4 + 1 + 3);
        for threads in [2, 8] {
            assert_eq!(counts(&fb, threads, None, cmds()), c, "{threads} threads");
        }
    }

    #[test]
    fn fully_clipped_draw_touches_no_tiles() {
        let (w, h) = (100, 80);
        // Beyond the far plane (z > w), whatever x and y.
        let pts = [
            (10.0, 10.0, 2.0, RED),
            (60.0, 10.0, 2.0, RED),
            (10.0, 60.0, 2.0, RED),
        ];
        let s = Setup::new(w, h, None).with_vertices(&verts(&pts, w, h));
        let fb = s.fb.clone();
        let c = counts(
            &fb,
            2,
            None,
            vec![(Some(s.block), draw(PrimType::Triangles, 0, 3))],
        );
        assert_eq!(c.get(Counter::Draws), 1);
        assert_eq!(c.get(Counter::PrimitivesIn), 1);
        assert_eq!(c.get(Counter::PrimitivesAfterClip), 0);
        assert_eq!(c.get(Counter::PrimitivesAfterCull), 0);
        assert_eq!(c.get(Counter::BinsEmitted), 0);
        assert_eq!(c.get(Counter::TilesTouched), 0);
        assert_eq!(c.get(Counter::TilesFullyCovered), 0);
        assert_eq!(c.get(Counter::FragmentsShaded), 0);
    }

    #[test]
    fn culling_counts_back_faces_and_zero_area() {
        let (w, h) = (64, 64);
        // One triangle each way round, and one of zero area.
        let pts = [
            (4.0, 4.0, 0.0, RED),
            (30.0, 4.0, 0.0, RED),
            (4.0, 30.0, 0.0, RED),
            (34.0, 34.0, 0.0, RED),
            (34.0, 60.0, 0.0, RED),
            (60.0, 34.0, 0.0, RED),
            (10.0, 40.0, 0.0, RED),
            (20.0, 50.0, 0.0, RED),
            (30.0, 60.0, 0.0, RED),
        ];
        for (cull, kept) in [(Face::None, 2), (Face::Back, 1), (Face::FrontAndBack, 0)] {
            let mut s = Setup::new(w, h, None).with_vertices(&verts(&pts, w, h));
            s.block.rasterizer = Arc::new(RasterizerState {
                cull_face: cull,
                ..Default::default()
            });
            let fb = s.fb.clone();
            let c = counts(
                &fb,
                2,
                None,
                vec![
                    (None, clear(BLACK)),
                    (Some(s.block), draw(PrimType::Triangles, 0, 9)),
                ],
            );
            assert_eq!(c.get(Counter::PrimitivesIn), 3, "{cull:?}");
            assert_eq!(c.get(Counter::PrimitivesAfterClip), 3, "{cull:?}");
            assert_eq!(c.get(Counter::PrimitivesAfterCull), kept, "{cull:?}");
            // 26-px legs with the hypotenuse through sample centres:
            // 26 * 25 / 2 pixels each.
            assert_eq!(c.get(Counter::FragmentsShaded), kept * 26 * 25 / 2);
            assert_eq!(red_pixels(&fb), kept * 26 * 25 / 2, "{cull:?}");
        }
    }

    #[test]
    fn discarded_fragments_are_counted_killed() {
        let (w, h) = (100, 80);
        let mut pts = rect_pts(3.0, 3.0, 40.0, 20.0, RED);
        pts.extend(rect_pts(50.0, 10.0, 61.0, 77.0, [0.0, 1.0, 0.0, 1.0]));
        let mut s = Setup::new(w, h, None).with_vertices(&verts(&pts, w, h));
        s.block.fs = KillFs::new();
        let fb = s.fb.clone();
        let c = counts(
            &fb,
            2,
            None,
            vec![
                (None, clear(BLACK)),
                (Some(s.block), draw(PrimType::Triangles, 0, 12)),
            ],
        );
        assert_eq!(c.get(Counter::FragmentsShaded), 37 * 17 + 11 * 67);
        assert_eq!(c.get(Counter::FragmentsKilled), 11 * 67);
        assert_eq!(red_pixels(&fb), 37 * 17);
    }

    #[test]
    fn full_screen_quad_and_triangle_cover_every_tile() {
        // 4 x 3 tiles, the last column and row partial.
        let (w, h) = (200, 150);
        let quad = rect_pts(0.0, 0.0, w as f32, h as f32, RED);
        let tri = vec![
            (0.0, 0.0, 0.0, RED),
            (2.0 * w as f32 + 8.0, 0.0, 0.0, RED),
            (0.0, 2.0 * h as f32 + 8.0, 0.0, RED),
        ];
        for pts in [quad, tri] {
            let s = Setup::new(w, h, None).with_vertices(&verts(&pts, w, h));
            let fb = s.fb.clone();
            let n = pts.len() as u32;
            let c = counts(
                &fb,
                2,
                None,
                vec![(Some(s.block), draw(PrimType::Triangles, 0, n))],
            );
            assert_eq!(c.get(Counter::TilesTouched), 12, "{n} vertices");
            assert_eq!(c.get(Counter::TilesFullyCovered), 12, "{n} vertices");
            assert_eq!(c.get(Counter::FragmentsShaded), (w * h) as u64);
            assert_eq!(red_pixels(&fb), (w * h) as u64);
        }
    }

    /// Many small triangles (several jobs and waves), then an opaque
    /// full-screen quad, then more triangles: the quad lets a single tile
    /// pass skip what lies under it, so the counts depend on where the
    /// passes are cut.  Cutting at jobs, not waves, keeps them the same
    /// for any thread count.
    #[test]
    fn counts_do_not_depend_on_thread_count_or_pass_cuts() {
        let (w, h) = (200, 150);
        let mut next = super::xorshift32(777);
        let mut rand = || (next() % 10000) as f32 / 10000.0;
        let mut pts = Vec::new();
        for _ in 0..3000 {
            let (cx, cy) = (rand() * 220.0 - 10.0, rand() * 170.0 - 10.0);
            for _ in 0..3 {
                pts.push((cx + rand() * 16.0 - 8.0, cy + rand() * 16.0 - 8.0, 0.0, RED));
            }
        }
        let first = pts.len() as u32;
        pts.extend(rect_pts(0.0, 0.0, w as f32, h as f32, BLACK));
        let s = Setup::new(w, h, None).with_vertices(&verts(&pts, w, h));
        let fb = s.fb.clone();
        let cmds = || {
            let mut v = vec![(None, clear(BLACK))];
            for _ in 0..4 {
                v.push((Some(s.block.clone()), draw(PrimType::Triangles, 0, first)));
            }
            v.push((Some(s.block.clone()), draw(PrimType::Triangles, first, 6)));
            v.push((Some(s.block.clone()), draw(PrimType::Triangles, 0, 300)));
            v
        };
        for budget in [None, Some(1), Some(300_000)] {
            let one = counts(&fb, 1, budget, cmds());
            assert_eq!(one.get(Counter::PrimitivesIn), 4 * 3000 + 2 + 100);
            assert!(one.get(Counter::FragmentsShaded) > 0);
            for threads in [2, 3, 8] {
                assert_eq!(
                    counts(&fb, threads, budget, cmds()),
                    one,
                    "{threads} threads, budget {budget:?}"
                );
            }
        }
    }

    #[test]
    fn every_pipeline_set_has_its_stage_in_order() {
        let stages: Vec<_> = crate::sets::PipelineSet::ALL
            .iter()
            .map(|s| s.stage())
            .collect();
        assert_eq!(stages, ferropipe_profiling::Stage::ALL);
    }

    #[test]
    fn every_stage_time_is_recorded() {
        let (w, h) = (64, 64);
        let s = Setup::new(w, h, None).with_vertices(&verts(
            &rect_pts(1.0, 1.0, 60.0, 60.0, RED),
            w,
            h,
        ));
        let mut world = world(2);
        let set = world.resource::<crate::PipelineCounters>().0.clone();
        let fb = s.fb.clone();
        run(
            &mut world,
            &fb,
            vec![(Some(s.block), draw(PrimType::Triangles, 0, 6))],
        );
        for stage in ferropipe_profiling::Stage::ALL {
            assert!(set.get(stage.time_counter()) > 0, "{stage:?}");
        }
    }
}
