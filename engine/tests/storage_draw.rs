//! Shader buffers in vertex and fragment shaders through the public
//! `Context` API (context.rst "Shader buffers": every stage has its own
//! slots): a vertex shader that reads per-vertex offsets from a shader
//! buffer and a fragment shader that counts fragments per 8x8 cell with
//! atomics, takes a ticket per fragment and stores one word per pixel,
//! all checked against a CPU computation of the covered pixels; discarded
//! and helper lanes write nothing; a fragment shader with side effects
//! runs before the depth test unless it forces early fragment tests; the
//! results do not depend on the thread count.

mod support;

use ferropipe::*;
use ferropipe::{
    Context, DrawInfo, Format, Resource, ResourceTemplate, Screen, ScreenConfig, ShaderBuffer,
    ShaderCode, ShaderState, VertexBuffer,
};

const W: u32 = 32;
const H: u32 = 32;
/// What the per-pixel buffer holds where no fragment wrote.
const UNWRITTEN: u32 = 0xffff_ffff;

const VS: &str = "
@group(3) @binding(0) var<storage, read> offsets: array<vec4<f32>>;
struct VOut { @builtin(position) pos: vec4<f32>, @location(0) c: vec4<f32> }
@vertex
fn vs_main(@location(0) p: vec4<f32>, @location(1) c: vec4<f32>,
           @builtin(vertex_index) vi: u32) -> VOut {
    return VOut(p + offsets[vi], c);
}";

/// Counts per 8x8 cell, a ticket per fragment, the pixel's own word; lanes
/// in column 3 of every 4 discard first; the derivative makes helper lanes
/// run (they must not write).
const FS: &str = "
@group(3) @binding(0) var<storage, read_write> counts: array<atomic<u32>>;
@group(3) @binding(1) var<storage, read_write> pixels: array<u32>;
@group(3) @binding(2) var<storage, read_write> tickets: array<u32>;
@group(3) @binding(3) var<storage, read_write> next: atomic<u32>;
@fragment
fn fs_main(@builtin(position) pos: vec4<f32>, @location(0) c: vec4<f32>) -> @location(0) vec4<f32> {
    let d = dpdx(pos.x);
    let x = u32(pos.x);
    let y = u32(pos.y);
    if (x & 3u) == 3u {
        discard;
    }
    atomicAdd(&counts[x / 8u + 4u * (y / 8u)], 1u);
    pixels[y * 32u + x] = 1000u + x + 100u * y;
    tickets[y * 32u + x] = atomicAdd(&next, 1u);
    return c * d;
}";

/// Counts fragments; `EARLY` forces early fragment tests.
const FS_COUNT: &str = "
@group(3) @binding(0) var<storage, read_write> counts: array<atomic<u32>>;
EARLY
@fragment
fn fs_main(@builtin(position) pos: vec4<f32>, @location(0) c: vec4<f32>) -> @location(0) vec4<f32> {
    atomicAdd(&counts[0], 1u);
    return c;
}";

/// Two quads (NDC squares of side 0.5, six vertices each) at z = 0.5; the
/// VS moves quad `q` by `OFFSETS[q]`.
const QUADS: [[f32; 2]; 2] = [[-0.75, -0.75], [0.0, 0.0]];
/// Per-quad offsets in NDC (whole pixels: 1/16 NDC = 1 pixel).
const OFFSETS: [[f32; 2]; 2] = [[0.125, 0.0625], [0.25, -0.1875]];

fn vertices() -> Vec<f32> {
    let mut v = Vec::new();
    for [x0, y0] in QUADS {
        let (x1, y1) = (x0 + 0.5, y0 + 0.5);
        for [x, y] in [[x0, y0], [x1, y0], [x0, y1], [x1, y0], [x1, y1], [x0, y1]] {
            v.extend_from_slice(&[x, y, 0.5, 1.0, 0.25, 0.5, 0.75, 1.0]);
        }
    }
    v
}

fn offsets() -> Vec<f32> {
    (0..12)
        .flat_map(|i| {
            let [dx, dy] = OFFSETS[i / 6];
            [dx, dy, 0.0, 0.0]
        })
        .collect()
}

/// The pixels the moved quads cover: NDC `v` is window `16 v + 16` (the
/// viewport), edges on pixel boundaries, so pixel centres inside.
fn covered() -> Vec<(u32, u32)> {
    let mut px = Vec::new();
    for (q, [x0, y0]) in QUADS.iter().enumerate() {
        let [dx, dy] = OFFSETS[q];
        let wx = ((x0 + dx) * 16.0 + 16.0) as u32;
        let wy = ((y0 + dy) * 16.0 + 16.0) as u32;
        for y in wy..wy + 8 {
            for x in wx..wx + 8 {
                px.push((x, y));
            }
        }
    }
    px
}

struct Fixture {
    screen: Screen,
    ctx: Context,
    rt: Resource,
}

fn fixture(threads: usize, depth: Option<Format>) -> (Fixture, Option<Resource>) {
    let screen = Screen::new(ScreenConfig {
        threads,
        ..Default::default()
    })
    .unwrap();
    let mut ctx = screen.context_create().unwrap();
    let (rt, zs) = support::bind_rgba8_target(&screen, &mut ctx, W, H, depth);
    let r = ctx
        .create_rasterizer_state(&RasterizerState::default())
        .unwrap();
    ctx.bind_rasterizer_state(Some(r)).unwrap();
    let mut blend = BlendState::default();
    blend.rt[0].colormask = 0xf;
    support::bind_blend_and_default_dsa(&mut ctx, &blend);
    support::bind_vec4_pair_elements(&mut ctx);
    let mut f = Fixture { screen, ctx, rt };
    let bytes: Vec<u8> = vertices().iter().flat_map(|v| v.to_le_bytes()).collect();
    let vb = f.buffer(&bytes, BindFlags::VERTEX_BUFFER);
    f.ctx
        .set_vertex_buffers(
            0,
            &[VertexBuffer {
                buffer: Some(&vb),
                stride: 32,
                buffer_offset: 0,
            }],
        )
        .unwrap();
    let offs: Vec<u8> = offsets().iter().flat_map(|v| v.to_le_bytes()).collect();
    let ob = f.buffer(&offs, BindFlags::SHADER_BUFFER);
    f.bind(ShaderType::Vertex, 0, &[&ob]);
    let vs = f.shader(VS, "vs_main", true);
    let vs = f.ctx.create_vs_state(&vs).unwrap();
    f.ctx.bind_vs_state(Some(vs)).unwrap();
    let flags = if zs.is_some() {
        ClearFlags::COLOR | ClearFlags::DEPTH
    } else {
        ClearFlags::COLOR
    };
    f.ctx
        .clear(flags, &ColorUnion::float([0.0; 4]), 0.0, 0)
        .unwrap();
    (f, zs)
}

impl Fixture {
    fn buffer(&mut self, bytes: &[u8], bind: BindFlags) -> Resource {
        let r = self
            .screen
            .resource_create(&ResourceTemplate::buffer(bytes.len() as u32, bind))
            .unwrap();
        self.ctx.buffer_subdata(&r, 0, bytes).unwrap();
        r
    }

    fn words_buffer(&mut self, n: usize, value: u32) -> Resource {
        let bytes: Vec<u8> = (0..n).flat_map(|_| value.to_le_bytes()).collect();
        self.buffer(&bytes, BindFlags::SHADER_BUFFER)
    }

    fn bind(&mut self, stage: ShaderType, start: u32, bufs: &[&Resource]) {
        let views: Vec<Option<ShaderBuffer>> = bufs
            .iter()
            .map(|b| {
                Some(ShaderBuffer {
                    buffer: b,
                    offset: 0,
                    size: b.template().width0,
                })
            })
            .collect();
        self.ctx
            .set_shader_buffers(stage, start, &views, !0)
            .unwrap();
    }

    fn shader(&self, code: &str, entry: &str, _vertex: bool) -> ShaderState {
        ShaderState {
            code: ShaderCode::Wgsl {
                code: code.into(),
                entry_point: entry.into(),
            },
            semantics: Vec::new(),
            stream_output: Default::default(),
        }
    }

    fn bind_fs(&mut self, code: &str) {
        let fs = self.shader(code, "fs_main", false);
        let fs = self.ctx.create_fs_state(&fs).unwrap();
        self.ctx.bind_fs_state(Some(fs)).unwrap();
    }

    fn draw(&mut self) -> ferropipe::Result<()> {
        self.ctx.draw_vbo(&DrawInfo {
            mode: PrimType::Triangles,
            start: 0,
            count: 12,
            indexed: false,
            index_bias: 0,
            min_index: 0,
            max_index: !0,
            start_instance: 0,
            instance_count: 1,
            primitive_restart: false,
            restart_index: 0,
        })
    }

    fn words(&mut self, r: &Resource) -> Vec<u32> {
        let n = r.template().width0 as i32;
        let t = self
            .ctx
            .transfer_map(r, 0, TransferFlags::READ, &PipeBox::new_1d(0, n))
            .unwrap();
        let v = t
            .data()
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        self.ctx.transfer_unmap(t).unwrap();
        v
    }

    fn image(&mut self) -> Vec<u8> {
        let rt = self.rt.clone();
        support::read_level0(&mut self.ctx, &rt, W, H)
    }
}

/// (counts, pixels, tickets, colour image) of the main scene.
fn storage_scene(threads: usize) -> (Vec<u32>, Vec<u32>, Vec<u32>, Vec<u8>) {
    let (mut f, _) = fixture(threads, None);
    let counts = f.words_buffer(16, 0);
    let pixels = f.words_buffer((W * H) as usize, UNWRITTEN);
    let tickets = f.words_buffer((W * H) as usize, UNWRITTEN);
    let next = f.words_buffer(1, 0);
    f.bind(
        ShaderType::Fragment,
        0,
        &[&counts, &pixels, &tickets, &next],
    );
    f.bind_fs(FS);
    f.draw().unwrap();
    f.ctx.memory_barrier(BarrierFlags::MAPPED_BUFFER).unwrap();
    let out = (
        f.words(&counts),
        f.words(&pixels),
        f.words(&tickets),
        f.image(),
    );
    assert_eq!(f.words(&next), vec![out.0.iter().sum::<u32>()]);
    out
}

#[test]
fn vertex_reads_and_fragment_writes_match_the_cpu() {
    let (counts, pixels, tickets, image) = storage_scene(2);
    let covered = covered();
    // the vertex shader moved the quads: exactly the moved pixels are lit
    for y in 0..H {
        for x in 0..W {
            let lit = image[((y * W + x) * 4) as usize] != 0;
            assert_eq!(
                lit,
                covered.contains(&(x, y)) && x & 3 != 3,
                "pixel ({x}, {y})"
            );
        }
    }
    // only live fragments (covered, not discarded) write; helper lanes
    // around the quads' edges and discarded lanes do not
    let writers: Vec<(u32, u32)> = covered
        .iter()
        .copied()
        .filter(|(x, _)| x & 3 != 3)
        .collect();
    let mut want_counts = vec![0u32; 16];
    let mut want_pixels = vec![UNWRITTEN; (W * H) as usize];
    for &(x, y) in &writers {
        want_counts[(x / 8 + 4 * (y / 8)) as usize] += 1;
        want_pixels[(y * W + x) as usize] = 1000 + x + 100 * y;
    }
    assert_eq!(counts, want_counts);
    assert_eq!(pixels, want_pixels);
    // every live fragment got its own ticket: atomics return per-lane
    // values, 0..n in some order
    let mut got: Vec<u32> = writers
        .iter()
        .map(|&(x, y)| tickets[(y * W + x) as usize])
        .collect();
    got.sort_unstable();
    assert_eq!(got, (0..writers.len() as u32).collect::<Vec<_>>());
    let untouched = tickets.iter().filter(|&&t| t == UNWRITTEN).count();
    assert_eq!(untouched, (W * H) as usize - writers.len());
}

/// Counts and per-pixel stores are the same at any thread count (the
/// ticket order is not: fragments of different tiles take them in any
/// order, which GL allows).
#[test]
fn fragment_side_effects_do_not_depend_on_thread_count() {
    let one = storage_scene(1);
    for threads in [4, 8] {
        let other = storage_scene(threads);
        assert_eq!(one.0, other.0, "counts, {threads} threads");
        assert_eq!(one.1, other.1, "pixels, {threads} threads");
        assert_eq!(one.3, other.3, "image, {threads} threads");
    }
}

/// Every fragment fails a LESS test against depth 0: a fragment shader
/// with side effects still runs for each covered fragment (late depth),
/// unless it forces early fragment tests, which then run first and kill
/// them all.  The colour buffer is untouched either way.
#[test]
fn side_effects_defer_the_depth_test_unless_early_tests_are_forced() {
    for (early, want) in [(false, covered().len() as u32), (true, 0)] {
        let (mut f, _zs) = fixture(2, Some(Format::Z32_FLOAT));
        let dsa = f
            .ctx
            .create_depth_stencil_alpha_state(&DepthStencilAlphaState {
                depth_enabled: true,
                depth_writemask: true,
                depth_func: Func::Less,
                ..Default::default()
            })
            .unwrap();
        f.ctx.bind_depth_stencil_alpha_state(Some(dsa)).unwrap();
        let counts = f.words_buffer(1, 0);
        f.bind(ShaderType::Fragment, 0, &[&counts]);
        let attr = if early {
            "@early_depth_test(force)"
        } else {
            ""
        };
        let code = FS_COUNT.replace("EARLY\n@fragment", &format!("@fragment {attr}"));
        f.bind_fs(&code);
        f.draw().unwrap();
        f.ctx.memory_barrier(BarrierFlags::MAPPED_BUFFER).unwrap();
        assert_eq!(f.words(&counts), vec![want], "early tests forced: {early}");
        assert!(f.image().iter().all(|&b| b == 0), "early: {early}");
    }
}

/// A shader buffer slot the fragment shader uses must be bound at the
/// draw (a typed error naming it); recorded draws keep the buffers they
/// were recorded with.
#[test]
fn unbound_slots_are_draw_errors_and_draws_keep_their_bindings() {
    let (mut f, _) = fixture(2, None);
    let counts = f.words_buffer(1, 0);
    f.bind_fs(&FS_COUNT.replace("EARLY", ""));
    let e = f.draw().unwrap_err();
    assert!(e.to_string().contains("@group(3) @binding(0)"), "{e}");
    f.bind(ShaderType::Fragment, 0, &[&counts]);
    f.draw().unwrap();
    // rebinding after the (recorded, not yet run) draw does not move its
    // writes to the new buffer
    let other = f.words_buffer(1, 0);
    f.bind(ShaderType::Fragment, 0, &[&other]);
    f.ctx.memory_barrier(BarrierFlags::MAPPED_BUFFER).unwrap();
    assert_eq!(f.words(&counts), vec![covered().len() as u32]);
    assert_eq!(f.words(&other), vec![0]);
}

/// A fragment shader that runs atomics on a slot bound without its
/// `writable_bitmask` bit fails its draw (`StorageError::NotWritable` naming the
/// member, the slot and the stage) and writes nothing; the vertex
/// shader's read-only slot needs no bit.
#[test]
fn writes_to_slots_bound_read_only_are_draw_errors() {
    let (mut f, _) = fixture(2, None);
    let offs: Vec<u8> = offsets().iter().flat_map(|v| v.to_le_bytes()).collect();
    let ob = f.buffer(&offs, BindFlags::SHADER_BUFFER);
    let counts = f.words_buffer(1, 0);
    fn whole(b: &Resource) -> Option<ShaderBuffer<'_>> {
        Some(ShaderBuffer {
            buffer: b,
            offset: 0,
            size: b.template().width0,
        })
    }
    f.ctx
        .set_shader_buffers(ShaderType::Vertex, 0, &[whole(&ob)], 0)
        .unwrap();
    f.bind_fs(&FS_COUNT.replace("EARLY", ""));
    f.ctx
        .set_shader_buffers(ShaderType::Fragment, 0, &[whole(&counts)], 0)
        .unwrap();
    let e = f.draw().unwrap_err();
    assert_eq!(
        e,
        ferropipe::Error::Storage(ferropipe::StorageError::NotWritable {
            call: "draw_vbo",
            stage: "fragment",
            slot: 0,
        })
    );
    let msg = e.to_string();
    assert!(msg.contains("slot 0") && msg.contains("fragment"), "{msg}");
    f.ctx
        .set_shader_buffers(ShaderType::Fragment, 0, &[whole(&counts)], 1)
        .unwrap();
    f.draw().unwrap();
    f.ctx.memory_barrier(BarrierFlags::MAPPED_BUFFER).unwrap();
    assert_eq!(f.words(&counts), vec![covered().len() as u32]);
}
