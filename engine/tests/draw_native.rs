//! Drawing through the public `Context` API with Rust-native shaders:
//! recording, flushing, readback, queries, conditional rendering, state
//! snapshots, validation errors, and thread-count determinism.

mod support;

use ferropipe::*;
use ferropipe::{
    Context, DrawInfo, Format, IndexBuffer, Resource, ResourceTemplate, Screen, ScreenConfig,
    VertexBuffer,
};

struct Scene {
    screen: Screen,
    ctx: Context,
    rt: Resource,
    zs: Resource,
}

const W: u32 = 64;
const H: u32 = 48;

fn scene(threads: usize) -> Scene {
    let screen = Screen::new(ScreenConfig {
        threads,
        ..Default::default()
    })
    .unwrap();
    let mut ctx = screen.context_create().unwrap();
    let (rt, zs) =
        support::bind_rgba8_target(&screen, &mut ctx, W, H, Some(Format::Z24_UNORM_S8_UINT));
    let zs = zs.expect("depth buffer");
    let mut blend = BlendState::default();
    blend.rt[0].colormask = 0xf;
    let b = ctx.create_blend_state(&blend).unwrap();
    ctx.bind_blend_state(Some(b)).unwrap();
    let d = ctx
        .create_depth_stencil_alpha_state(&DepthStencilAlphaState {
            depth_enabled: true,
            depth_writemask: true,
            depth_func: Func::Less,
            ..Default::default()
        })
        .unwrap();
    ctx.bind_depth_stencil_alpha_state(Some(d)).unwrap();
    let r = ctx
        .create_rasterizer_state(&RasterizerState::default())
        .unwrap();
    ctx.bind_rasterizer_state(Some(r)).unwrap();
    support::bind_vec4_pair_elements(&mut ctx);
    support::bind_pass_shaders(&mut ctx);
    Scene {
        screen,
        ctx,
        rt,
        zs,
    }
}

impl Scene {
    /// Binds a vertex buffer of (x, y, z) NDC positions with colours.
    fn vertices(&mut self, v: &[([f32; 3], [f32; 4])]) {
        let data: Vec<u8> = v
            .iter()
            .flat_map(|(p, c)| {
                [p[0], p[1], p[2], 1.0, c[0], c[1], c[2], c[3]]
                    .into_iter()
                    .flat_map(f32::to_le_bytes)
            })
            .collect();
        let buf = self
            .screen
            .resource_create(&ResourceTemplate::buffer(
                data.len() as u32,
                BindFlags::VERTEX_BUFFER,
            ))
            .unwrap();
        self.ctx.buffer_subdata(&buf, 0, &data).unwrap();
        self.ctx
            .set_vertex_buffers(
                0,
                &[VertexBuffer {
                    buffer: Some(&buf),
                    stride: 32,
                    buffer_offset: 0,
                }],
            )
            .unwrap();
    }

    fn draw(&mut self, mode: PrimType, count: u32) {
        self.ctx
            .draw_vbo(&DrawInfo {
                mode,
                count,
                ..Default::default()
            })
            .unwrap();
    }

    fn clear(&mut self) {
        self.clear_to([0.0, 0.0, 0.0, 1.0]);
    }

    /// Clears colour to `color`, depth to 1 and stencil to 0.
    fn clear_to(&mut self, color: [f32; 4]) {
        self.ctx
            .clear(
                ClearFlags::COLOR | ClearFlags::DEPTHSTENCIL,
                &ColorUnion::float(color),
                1.0,
                0,
            )
            .unwrap();
    }

    fn read(&mut self, res: &Resource) -> Vec<u8> {
        support::read_level0(&mut self.ctx, res, W, H)
    }

    fn pixel(&mut self, x: u32, y: u32) -> [u8; 4] {
        let rt = self.rt.clone();
        let p = self.read(&rt);
        let o = ((y * W + x) * 4) as usize;
        [p[o], p[o + 1], p[o + 2], p[o + 3]]
    }
}

const RED: [f32; 4] = [1.0, 0.0, 0.0, 1.0];
const GREEN: [f32; 4] = [0.0, 1.0, 0.0, 1.0];

/// A quad covering the NDC rectangle at depth z, as two triangles.
fn quad(x0: f32, y0: f32, x1: f32, y1: f32, z: f32, c: [f32; 4]) -> Vec<([f32; 3], [f32; 4])> {
    vec![
        ([x0, y0, z], c),
        ([x1, y0, z], c),
        ([x0, y1, z], c),
        ([x1, y0, z], c),
        ([x1, y1, z], c),
        ([x0, y1, z], c),
    ]
}

#[test]
fn draws_are_recorded_and_run_at_readback() {
    let mut s = scene(1);
    s.clear();
    s.vertices(&quad(-1.0, -1.0, 0.0, 0.0, 0.0, RED));
    s.draw(PrimType::Triangles, 6);
    // Readback flushes: the quad covers the top-left quarter.
    assert_eq!(s.pixel(5, 5), [255, 0, 0, 255]);
    assert_eq!(s.pixel(40, 30), [0, 0, 0, 255]);
}

#[test]
fn depth_test_and_occlusion_query_count_samples() {
    let mut s = scene(2);
    s.clear();
    let mut v = quad(-1.0, -1.0, 1.0, 1.0, 0.0, RED);
    v.extend(quad(-1.0, -1.0, 0.0, 0.0, 0.5, GREEN)); // behind the red quad
    v.extend(quad(0.0, 0.0, 1.0, 1.0, -0.5, GREEN)); // in front
    s.vertices(&v);
    let q = s.ctx.create_query(QueryType::OcclusionCounter, 0).unwrap();
    let p = s
        .ctx
        .create_query(QueryType::OcclusionPredicate, 0)
        .unwrap();
    s.ctx.begin_query(q).unwrap();
    s.draw(PrimType::Triangles, 6);
    s.ctx.begin_query(p).unwrap(); // nested
    s.ctx
        .draw_vbo(&DrawInfo {
            mode: PrimType::Triangles,
            start: 6,
            count: 6,
            ..Default::default()
        })
        .unwrap();
    s.ctx.end_query(p).unwrap();
    s.ctx
        .draw_vbo(&DrawInfo {
            mode: PrimType::Triangles,
            start: 12,
            count: 6,
            ..Default::default()
        })
        .unwrap();
    s.ctx.end_query(q).unwrap();
    use ferropipe::QueryResult;
    // Full quad + nothing (hidden) + a quarter in front.
    let quarter = (W / 2 * H / 2) as u64;
    assert_eq!(
        s.ctx.get_query_result(q, true).unwrap(),
        Some(QueryResult::U64(4 * quarter + quarter))
    );
    assert_eq!(
        s.ctx.get_query_result(p, true).unwrap(),
        Some(QueryResult::Bool(false))
    );
    assert_eq!(s.pixel(5, 5), [255, 0, 0, 255]);
    assert_eq!(s.pixel(50, 40), [0, 255, 0, 255]);

    // Conditional rendering on the (false) predicate: skipped when the
    // condition equals the result.
    s.ctx
        .render_condition(Some(p), false, RenderCondMode::Wait)
        .unwrap();
    s.vertices(&quad(-1.0, -1.0, 1.0, 1.0, -0.9, GREEN));
    s.draw(PrimType::Triangles, 6);
    assert_eq!(s.pixel(5, 5), [255, 0, 0, 255], "draw was skipped");
    s.ctx
        .render_condition(Some(p), true, RenderCondMode::Wait)
        .unwrap();
    s.draw(PrimType::Triangles, 6);
    assert_eq!(s.pixel(5, 5), [0, 255, 0, 255], "draw ran");
}

#[test]
fn recorded_draws_keep_their_state_snapshot() {
    let mut s = scene(1);
    s.clear();
    s.vertices(&quad(-1.0, -1.0, 1.0, 1.0, 0.0, RED));
    s.draw(PrimType::Triangles, 6);
    // Rebinding and deleting after recording must not affect the draw.
    let mut blend = BlendState::default();
    blend.rt[0].colormask = 0;
    let b = s.ctx.create_blend_state(&blend).unwrap();
    s.ctx.bind_blend_state(Some(b)).unwrap();
    s.ctx.delete_blend_state(b).unwrap();
    s.ctx
        .set_vertex_buffers(0, &[VertexBuffer::default()])
        .unwrap();
    assert_eq!(s.pixel(20, 20), [255, 0, 0, 255]);
}

#[test]
fn invalid_and_unsupported_draws_are_typed_errors() {
    let mut s = scene(1);
    let e = s
        .ctx
        .draw_vbo(&DrawInfo {
            mode: PrimType::Patches,
            count: 3,
            ..Default::default()
        })
        .unwrap_err();
    assert!(e.is_unsupported(), "{e}");
    s.ctx.bind_vs_state(None).unwrap();
    let e = s
        .ctx
        .draw_vbo(&DrawInfo {
            mode: PrimType::Triangles,
            count: 3,
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(
        e,
        ferropipe::Error::Draw(ferropipe::DrawError::NotBound { what: "vs" })
    );
    assert_eq!(e.to_string(), "draw_vbo: vs: nothing bound");
    // Indexed without an index buffer.
    let e = s
        .ctx
        .draw_vbo(&DrawInfo {
            mode: PrimType::Triangles,
            count: 3,
            indexed: true,
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(
        e,
        ferropipe::Error::Draw(ferropipe::DrawError::NoIndexBuffer)
    );
}

#[test]
fn one_and_two_threads_give_identical_bytes() {
    let run = |threads| {
        let mut s = scene(threads);
        s.clear();
        let mut v = Vec::new();
        let mut seed = 7u32;
        let mut rnd = || {
            seed = seed.wrapping_mul(1664525).wrapping_add(1013904223);
            (seed >> 8) as f32 / (1 << 24) as f32 * 2.4 - 1.2
        };
        for _ in 0..300 {
            let c = [rnd().abs(), rnd().abs(), rnd().abs(), 1.0];
            for _ in 0..3 {
                v.push(([rnd(), rnd(), rnd() * 0.8], c));
            }
        }
        s.vertices(&v);
        s.draw(PrimType::Triangles, 900);
        let rt = s.rt.clone();
        let zs = s.zs.clone();
        let mut out = s.read(&rt);
        out.extend(s.read(&zs));
        out
    };
    assert_eq!(run(1), run(2));
}

/// Robust buffer access (ARB_robust_buffer_access_behavior's spirit,
/// issue 8): attributes read past a vertex buffer's end are zeros, indices
/// past an index buffer's end are zeros, an underestimated max_index
/// renders like the truth, and a resource whose handle the host destroyed
/// while it is bound stays alive until unbound (reference semantics).
#[test]
fn out_of_range_reads_are_zeros_and_never_crash() {
    let mut s = scene(2);
    // Positions for 3 vertices in VB 0; one colour in VB 1 (16 bytes).
    let pos: Vec<u8> = [
        [-1.0f32, -1.0, 0.5, 1.0],
        [3.0, -1.0, 0.5, 1.0],
        [-1.0, 3.0, 0.5, 1.0],
    ]
    .iter()
    .flatten()
    .flat_map(|f| f.to_le_bytes())
    .collect();
    let col: Vec<u8> = [1.0f32, 1.0, 1.0, 1.0]
        .iter()
        .flat_map(|f| f.to_le_bytes())
        .collect();
    let mk = |s: &mut Scene, data: &[u8]| {
        let b = s
            .screen
            .resource_create(&ResourceTemplate::buffer(
                data.len() as u32,
                BindFlags::VERTEX_BUFFER,
            ))
            .unwrap();
        s.ctx.buffer_subdata(&b, 0, data).unwrap();
        b
    };
    let vb0 = mk(&mut s, &pos);
    let vb1 = mk(&mut s, &col);
    let el = |vb, off| VertexElement {
        src_offset: off,
        vertex_buffer_index: vb,
        src_format: Format::R32G32B32A32_FLOAT,
        instance_divisor: 0,
    };
    let ve = s
        .ctx
        .create_vertex_elements_state(&[el(0, 0), el(1, 0)])
        .unwrap();
    s.ctx.bind_vertex_elements_state(Some(ve)).unwrap();
    let vbs = |stride1, offset1| {
        [
            VertexBuffer {
                buffer: Some(&vb0),
                stride: 16,
                buffer_offset: 0,
            },
            VertexBuffer {
                buffer: Some(&vb1),
                stride: stride1,
                buffer_offset: offset1,
            },
        ]
    };
    // VB 1 bound 16 bytes in: every vertex's colour is past its end.
    s.ctx.set_vertex_buffers(0, &vbs(16, 16)).unwrap();
    s.clear_to(RED);
    s.draw(PrimType::Triangles, 3);
    assert_eq!(
        s.pixel(10, 10),
        [0, 0, 0, 0],
        "out-of-range colour is zeros"
    );
    // Stride 0 makes every vertex read the one in-range colour.
    s.ctx.set_vertex_buffers(0, &vbs(0, 0)).unwrap();
    s.clear_to(RED);
    s.draw(PrimType::Triangles, 3);
    assert_eq!(s.pixel(10, 10), [255, 255, 255, 255]);

    // Indices: 3 in the buffer, a draw of 6 reads 3 past its end (zeros:
    // a degenerate triangle at vertex 0, which draws nothing).
    let ib = s
        .screen
        .resource_create(&ResourceTemplate::buffer(6, BindFlags::INDEX_BUFFER))
        .unwrap();
    let idx: Vec<u8> = [0u16, 1, 2].iter().flat_map(|i| i.to_le_bytes()).collect();
    s.ctx.buffer_subdata(&ib, 0, &idx).unwrap();
    s.ctx
        .set_index_buffer(Some(IndexBuffer {
            buffer: &ib,
            index_size: 2,
            offset: 0,
        }))
        .unwrap();
    let indexed = |s: &mut Scene, count, max_index, start| {
        s.clear_to(RED);
        s.ctx
            .draw_vbo(&DrawInfo {
                mode: PrimType::Triangles,
                count,
                start,
                indexed: true,
                min_index: 0,
                max_index,
                ..Default::default()
            })
            .unwrap();
        let rt = s.rt.clone();
        s.read(&rt)
    };
    let truth = indexed(&mut s, 3, 2, 0);
    assert_eq!(&truth[..4], &[255, 255, 255, 255]);
    assert_eq!(indexed(&mut s, 6, 2, 0), truth, "indices past the end");
    assert_eq!(indexed(&mut s, 3, 0, 0), truth, "max_index underestimated");
    // A start far past the end: every index is out of range, nothing drawn.
    let none = indexed(&mut s, 3, 2, u32::MAX - 2);
    assert!(none.chunks_exact(4).all(|p| p == [255, 0, 0, 255]));

    // The host destroys the vertex buffers' handles while they are bound:
    // the bindings keep them alive and the draw still renders.
    s.screen.resource_destroy(vb0);
    s.screen.resource_destroy(vb1);
    assert_eq!(indexed(&mut s, 3, 2, 0), truth, "destroyed while bound");
}

/// The pipeline counters as driver queries (screen.rst
/// `get_driver_query_info`): a full-screen quad shades every pixel once,
/// in one whole-tile primitive; a query object sees only what ran between
/// its begin and end; the context's totals are in the process's.
#[test]
fn driver_queries_report_the_pipeline_counters() {
    let mut s = scene(2);
    let n = s.screen.get_driver_query_count();
    let query = |name: &str| {
        (0..n)
            .map(|i| s.screen.get_driver_query_info(i).unwrap())
            .find(|q| q.name == name)
            .unwrap_or_else(|| panic!("no driver query {name}"))
            .query_type
    };
    let (shaded, tiles, full, prims_in) = (
        query("fragments-shaded"),
        query("tiles-touched"),
        query("tiles-fully-covered"),
        query("primitives-in"),
    );
    s.clear();
    s.ctx.flush().unwrap();
    let q = s.ctx.create_driver_query(shaded).unwrap();
    assert!(s.ctx.create_driver_query(n + 256).is_err());
    assert!(s.ctx.end_driver_query(q).is_err(), "end before begin");
    let before_shaded = s.ctx.get_driver_query_value(shaded).unwrap();
    let before_tiles = s.ctx.get_driver_query_value(tiles).unwrap();
    let before_full = s.ctx.get_driver_query_value(full).unwrap();
    s.ctx.begin_driver_query(q).unwrap();
    s.vertices(&quad(-1.0, -1.0, 1.0, 1.0, 0.5, RED));
    s.draw(PrimType::Triangles, 6);
    assert!(s.ctx.get_driver_query_result(q).is_err(), "still active");
    s.ctx.end_driver_query(q).unwrap();
    assert_eq!(
        s.ctx.get_driver_query_result(q).unwrap(),
        Some((W * H) as u64)
    );
    let ctx_value = |s: &Scene, t: u32| s.ctx.get_driver_query_value(t).unwrap();
    assert_eq!(ctx_value(&s, shaded) - before_shaded, (W * H) as u64);
    // 64 x 48: one tile, covered whole by the merged quad.
    assert_eq!(ctx_value(&s, tiles) - before_tiles, 1);
    assert_eq!(ctx_value(&s, full) - before_full, 1);
    assert!(ctx_value(&s, prims_in) >= 2);
    // The process-wide totals include this context's.
    assert!(s.screen.get_driver_query_value(shaded).unwrap() >= ctx_value(&s, shaded));
    // Nothing ran since: a second query reads zero.
    s.ctx.begin_driver_query(q).unwrap();
    s.ctx.end_driver_query(q).unwrap();
    assert_eq!(s.ctx.get_driver_query_result(q).unwrap(), Some(0));
    s.ctx.destroy_driver_query(q).unwrap();
}
