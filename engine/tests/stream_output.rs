//! Stream output (transform feedback) through the public `Context` API:
//! captured buffer contents checked dword for dword against records
//! computed here on the CPU (with draw_decompose_tmp.h's primitive orders
//! written out independently of the pipeline), overflow, append across
//! draws, several buffers with different strides, the stream-output
//! queries and render conditions, `rasterizer_discard`, drawing the
//! captured vertices back (`count_from_stream_output`), WGSL and
//! Rust-native shaders, and thread-count independence.

mod support;

use std::sync::Arc;

use ferropipe::*;
use ferropipe::{
    Context, DrawError, DrawIndirectInfo, DrawInfo, Error, Format, QueryResult, Resource,
    ResourceError, ResourceTemplate, SO_APPEND, Screen, ScreenConfig, ShaderCode, ShaderState,
    StreamOutputError, StreamOutputTargetHandle, VertexBuffer,
};

const W: u32 = 32;
const H: u32 = 32;
/// What every captured buffer holds before a test writes it.
const SENTINEL: u32 = 0xabab_abab;

/// The pass-through VS: output 0 the position, output 1 GENERIC 0 (as
/// the WGSL twin compiles to).
fn native_vs() -> Arc<support::PassVs> {
    support::pass_shaders().0
}

const WGSL: &str = "
struct VOut { @builtin(position) pos: vec4<f32>, @location(0) attr: vec4<f32> };
@vertex fn vs_main(@location(0) pos: vec4<f32>, @location(1) attr: vec4<f32>) -> VOut {
    var o: VOut; o.pos = pos; o.attr = attr; return o;
}
";

/// Output slots of the pass-through shaders.
const POS: u32 = 0;
const ATTR: u32 = 1;

/// Vertex `i`: a position inside the viewport (a zigzag, so lists,
/// strips and fans of consecutive vertices have area) and the attribute
/// `(i, i + 1/4, i + 1/2, i + 3/4)`, which names the vertex in a capture.
fn vertex(i: usize) -> [f32; 8] {
    let x = -0.9 + 0.1 * (i % 19) as f32;
    let y = if i.is_multiple_of(2) { -0.8 } else { 0.8 };
    let a = i as f32;
    [x, y, 0.0, 1.0, a, a + 0.25, a + 0.5, a + 0.75]
}

struct Fixture {
    screen: Screen,
    ctx: Context,
    rt: Resource,
}

fn fixture(threads: usize) -> Fixture {
    fixture_with(threads, true)
}

/// A context with everything a draw needs bound except the vertex shader
/// and buffers; with `framebuffer`, a W x H RGBA8 target (else `rt` is
/// an unbound one and nothing is rendered anywhere).
fn fixture_with(threads: usize, framebuffer: bool) -> Fixture {
    let screen = Screen::new(ScreenConfig {
        threads,
        ..Default::default()
    })
    .unwrap();
    let mut ctx = screen.context_create().unwrap();
    let rt = if framebuffer {
        support::bind_rgba8_target(&screen, &mut ctx, W, H, None).0
    } else {
        let t =
            ResourceTemplate::texture_2d(Format::R8G8B8A8_UNORM, W, H, BindFlags::RENDER_TARGET);
        screen.resource_create(&t).unwrap()
    };
    let mut blend = BlendState::default();
    blend.rt[0].colormask = 0xf;
    support::bind_blend_and_default_dsa(&mut ctx, &blend);
    support::bind_vec4_pair_elements(&mut ctx);
    let fs = support::pass_shaders().1;
    let fs = ctx.create_fs_state_native(fs).unwrap();
    ctx.bind_fs_state(Some(fs)).unwrap();
    let mut f = Fixture { screen, ctx, rt };
    f.rasterizer(false, false);
    f
}

impl Fixture {
    fn rasterizer(&mut self, flatshade_first: bool, rasterizer_discard: bool) {
        let r = self
            .ctx
            .create_rasterizer_state(&RasterizerState {
                flatshade_first,
                rasterizer_discard,
                ..Default::default()
            })
            .unwrap();
        self.ctx.bind_rasterizer_state(Some(r)).unwrap();
    }

    /// Binds the native pass-through VS with `so`.
    fn vs(&mut self, so: &StreamOutputInfo) {
        let vs = self
            .ctx
            .create_vs_state_native_with_stream_output(native_vs(), so)
            .unwrap();
        self.ctx.bind_vs_state(Some(vs)).unwrap();
    }

    /// Vertices `0..n` (see [`vertex`]) as vertex buffer 0.
    fn vertices(&mut self, n: usize) {
        let data: Vec<u8> = (0..n).flat_map(vertex).flat_map(f32::to_le_bytes).collect();
        let buf = self.buffer(data.len() as u32, BindFlags::VERTEX_BUFFER);
        self.ctx.buffer_subdata(&buf, 0, &data).unwrap();
        self.bind_vertex_buffer(&buf);
    }

    fn bind_vertex_buffer(&mut self, buf: &Resource) {
        self.ctx
            .set_vertex_buffers(
                0,
                &[VertexBuffer {
                    buffer: Some(buf),
                    stride: 32,
                    buffer_offset: 0,
                }],
            )
            .unwrap();
    }

    /// A buffer of `bytes` filled with [`SENTINEL`].
    fn buffer(&mut self, bytes: u32, bind: BindFlags) -> Resource {
        let buf = self
            .screen
            .resource_create(&ResourceTemplate::buffer(bytes, bind))
            .unwrap();
        let fill: Vec<u8> = (0..bytes / 4)
            .flat_map(|_| SENTINEL.to_le_bytes())
            .collect();
        self.ctx.buffer_subdata(&buf, 0, &fill).unwrap();
        buf
    }

    /// A stream-output buffer of `bytes` and a target over
    /// `offset .. offset + size` of it.
    fn target(
        &mut self,
        bytes: u32,
        offset: u32,
        size: u32,
    ) -> (Resource, StreamOutputTargetHandle) {
        let buf = self.buffer(bytes, BindFlags::STREAM_OUTPUT | BindFlags::VERTEX_BUFFER);
        let t = self
            .ctx
            .create_stream_output_target(&buf, offset, size)
            .unwrap();
        (buf, t)
    }

    fn draw(&mut self, mode: PrimType, start: u32, count: u32) {
        self.ctx
            .draw_vbo(&DrawInfo {
                mode,
                start,
                count,
                ..Default::default()
            })
            .unwrap();
    }

    fn words(&mut self, buf: &Resource) -> Vec<u32> {
        let w = buf.template().width0 as i32;
        let t = self
            .ctx
            .transfer_map(buf, 0, TransferFlags::READ, &PipeBox::new_2d(0, 0, w, 1))
            .unwrap();
        let v = t
            .data()
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        self.ctx.transfer_unmap(t).unwrap();
        v
    }

    fn image(&mut self) -> Vec<u8> {
        let rt = self.rt.clone();
        let t = self
            .ctx
            .transfer_map(
                &rt,
                0,
                TransferFlags::READ,
                &PipeBox::new_2d(0, 0, W as i32, H as i32),
            )
            .unwrap();
        let v = t.data().to_vec();
        self.ctx.transfer_unmap(t).unwrap();
        v
    }

    fn clear(&mut self) {
        self.ctx
            .clear(
                ClearFlags::COLOR,
                &ColorUnion::float([0.0, 0.0, 0.0, 1.0]),
                1.0,
                0,
            )
            .unwrap();
    }

    fn query(&mut self, t: QueryType) -> ferropipe::QueryHandle {
        let q = self.ctx.create_query(t, 0).unwrap();
        self.ctx.begin_query(q).unwrap();
        q
    }

    fn result(&mut self, q: ferropipe::QueryHandle) -> QueryResult {
        self.ctx.end_query(q).unwrap();
        self.ctx.get_query_result(q, true).unwrap().unwrap()
    }
}

/// One output entry.
fn out(register: u32, first: u32, n: u32, buffer: u32, dst: u32) -> StreamOutput {
    StreamOutput {
        register_index: register,
        start_component: first,
        num_components: n,
        output_buffer: buffer,
        dst_offset: dst,
        stream: 0,
    }
}

/// The whole attribute to buffer 0, stride 4.
fn attr_info() -> StreamOutputInfo {
    StreamOutputInfo {
        stride: [4, 0, 0, 0],
        output: vec![out(ATTR, 0, 4, 0, 0)],
    }
}

/// Position and attribute interleaved like the input vertex buffer (8
/// dwords = 32 bytes a vertex), so a capture can be drawn again.
fn interleaved_info() -> StreamOutputInfo {
    StreamOutputInfo {
        stride: [8, 0, 0, 0],
        output: vec![out(POS, 0, 4, 0, 0), out(ATTR, 0, 4, 0, 4)],
    }
}

/// The attribute of vertex `i` as captured dwords.
fn attr_words(i: usize) -> [u32; 4] {
    let v = vertex(i);
    [v[4], v[5], v[6], v[7]].map(f32::to_bits)
}

/// Primitives (as vertex numbers) of `mode` over vertices `0..n`, in
/// draw_decompose_tmp.h's order for stream output
/// (`last_vertex_last = !flatshade_first`, `quads_flatshade_last = false`).
fn decompose(mode: PrimType, n: usize, flatshade_first: bool) -> Vec<Vec<usize>> {
    let last = !flatshade_first;
    let mut p: Vec<Vec<usize>> = Vec::new();
    match mode {
        PrimType::Points => p.extend((0..n).map(|i| vec![i])),
        PrimType::Lines => p.extend((0..n / 2).map(|i| vec![2 * i, 2 * i + 1])),
        PrimType::LineStrip | PrimType::LineLoop if n >= 2 => {
            p.extend((1..n).map(|i| vec![i - 1, i]));
            if mode == PrimType::LineLoop {
                p.push(vec![n - 1, 0]);
            }
        }
        PrimType::Triangles => p.extend((0..n / 3).map(|i| vec![3 * i, 3 * i + 1, 3 * i + 2])),
        PrimType::TriangleStrip => {
            for i in 0..n.saturating_sub(2) {
                p.push(match (i % 2 == 1, last) {
                    (false, _) => vec![i, i + 1, i + 2],
                    (true, true) => vec![i + 1, i, i + 2],
                    (true, false) => vec![i, i + 2, i + 1],
                });
            }
        }
        PrimType::TriangleFan => {
            for i in 0..n.saturating_sub(2) {
                p.push(if last {
                    vec![0, i + 1, i + 2]
                } else {
                    vec![i + 1, i + 2, 0]
                });
            }
        }
        PrimType::Quads => {
            for q in (0..n / 4).map(|q| 4 * q) {
                if last {
                    p.push(vec![q, q + 1, q + 3]);
                    p.push(vec![q + 1, q + 2, q + 3]);
                } else {
                    p.push(vec![q, q + 1, q + 2]);
                    p.push(vec![q, q + 2, q + 3]);
                }
            }
        }
        _ => unreachable!("not used here"),
    }
    p
}

/// What [`attr_info`] captures from `prims`.
fn attr_capture(prims: &[Vec<usize>]) -> Vec<u32> {
    prims
        .iter()
        .flatten()
        .flat_map(|&v| attr_words(v))
        .collect()
}

#[test]
fn strips_fans_loops_and_quads_are_captured_in_draw_order() {
    let modes = [
        (PrimType::Points, 5),
        (PrimType::Lines, 6),
        (PrimType::LineStrip, 5),
        (PrimType::LineLoop, 5),
        (PrimType::Triangles, 9),
        (PrimType::TriangleStrip, 7),
        (PrimType::TriangleFan, 6),
        (PrimType::Quads, 12),
    ];
    for flatshade_first in [false, true] {
        for (mode, n) in modes {
            let mut f = fixture(2);
            f.rasterizer(flatshade_first, false);
            f.vs(&attr_info());
            f.vertices(n);
            let (buf, t) = f.target(1024, 0, 1024);
            f.ctx.set_stream_output_targets(&[Some(t)], &[0]).unwrap();
            let emitted = f.query(QueryType::PrimitivesEmitted);
            f.draw(mode, 0, n as u32);
            let want = attr_capture(&decompose(mode, n, flatshade_first));
            let got = f.words(&buf);
            let what = format!("{mode:?} flatshade_first={flatshade_first}");
            assert_eq!(&got[..want.len()], &want[..], "{what}");
            assert!(got[want.len()..].iter().all(|&w| w == SENTINEL), "{what}");
            assert_eq!(
                f.ctx.stream_output_target_filled(t).unwrap() as usize,
                want.len() * 4,
                "{what}"
            );
            let prims = decompose(mode, n, flatshade_first).len() as u64;
            assert_eq!(f.result(emitted), QueryResult::U64(prims), "{what}");
        }
    }
}

#[test]
fn overflow_writes_whole_primitives_only_and_sets_the_predicates() {
    let mut f = fixture(1);
    f.vs(&attr_info());
    f.vertices(12);
    // Room for two and a half triangles (48 bytes each) from byte 16.
    let (buf, t) = f.target(256, 16, 120);
    f.ctx.set_stream_output_targets(&[Some(t)], &[0]).unwrap();
    let emitted = f.query(QueryType::PrimitivesEmitted);
    let generated = f.query(QueryType::PrimitivesGenerated);
    let stats = f.query(QueryType::SoStatistics);
    let overflow = f.query(QueryType::SoOverflowPredicate);
    let any = f.query(QueryType::SoOverflowAnyPredicate);
    f.draw(PrimType::Triangles, 0, 12);
    assert_eq!(f.result(emitted), QueryResult::U64(2));
    assert_eq!(f.result(generated), QueryResult::U64(4));
    assert_eq!(
        f.result(stats),
        QueryResult::SoStatistics {
            num_primitives_written: 2,
            primitives_storage_needed: 4
        }
    );
    assert_eq!(f.result(overflow), QueryResult::Bool(true));
    assert_eq!(f.result(any), QueryResult::Bool(true));
    let got = f.words(&buf);
    let want = attr_capture(&decompose(PrimType::Triangles, 6, false));
    assert!(got[..4].iter().all(|&w| w == SENTINEL), "before the target");
    assert_eq!(&got[4..4 + want.len()], &want[..]);
    assert!(
        got[4 + want.len()..].iter().all(|&w| w == SENTINEL),
        "the partial triangle and everything past the target untouched"
    );
    assert_eq!(f.ctx.stream_output_target_filled(t).unwrap(), 96);

    // The overflow predicate as a render condition: with condition =
    // true a draw is skipped (the predicate is true), with false it runs.
    f.ctx.set_stream_output_targets(&[], &[]).unwrap();
    f.clear();
    let black = f.image();
    f.ctx
        .render_condition(Some(overflow), true, RenderCondMode::Wait)
        .unwrap();
    f.draw(PrimType::Triangles, 0, 12);
    assert_eq!(f.image(), black, "skipped: the targets overflowed");
    f.ctx
        .render_condition(Some(overflow), false, RenderCondMode::Wait)
        .unwrap();
    f.draw(PrimType::Triangles, 0, 12);
    assert_ne!(f.image(), black, "drawn");
    f.ctx
        .render_condition(None, false, RenderCondMode::Wait)
        .unwrap();

    // A query over draws that fit: no overflow.
    f.ctx.set_stream_output_targets(&[Some(t)], &[0]).unwrap();
    let fits = f.query(QueryType::SoOverflowPredicate);
    f.draw(PrimType::Triangles, 0, 6);
    assert_eq!(f.result(fits), QueryResult::Bool(false));
}

#[test]
fn append_continues_where_the_previous_draw_stopped() {
    let mut f = fixture(2);
    f.vs(&attr_info());
    f.vertices(12);
    let (buf, t) = f.target(1024, 0, 1024);
    f.ctx.set_stream_output_targets(&[Some(t)], &[0]).unwrap();
    f.draw(PrimType::Triangles, 0, 3);
    // Unbind (pause), rebind appending, draw again: no flush in between.
    f.ctx.set_stream_output_targets(&[], &[]).unwrap();
    f.draw(PrimType::Triangles, 3, 3);
    f.ctx
        .set_stream_output_targets(&[Some(t)], &[SO_APPEND])
        .unwrap();
    f.draw(PrimType::Points, 6, 2);
    let mut want: Vec<u32> = (0..3).chain(6..8).flat_map(attr_words).collect();
    let got = f.words(&buf);
    assert_eq!(&got[..want.len()], &want[..]);
    assert_eq!(got[want.len()], SENTINEL);
    assert_eq!(f.ctx.stream_output_target_filled(t).unwrap(), 5 * 16);
    // An explicit offset restarts there.
    f.ctx.set_stream_output_targets(&[Some(t)], &[16]).unwrap();
    f.draw(PrimType::Points, 11, 1);
    want.splice(4..8, attr_words(11));
    assert_eq!(&f.words(&buf)[..want.len()], &want[..]);
    assert_eq!(f.ctx.stream_output_target_filled(t).unwrap(), 32);
}

#[test]
fn outputs_go_to_several_buffers_with_their_own_strides() {
    let mut f = fixture(2);
    // Buffer 0 (stride 2): position xy.  Buffer 1 (stride 5): position w
    // at dword 0, attribute yzw at dwords 1..4, dword 4 a gap.  Buffer 3
    // (stride 1): attribute x.  Buffer 2 unused and unbound.
    let info = StreamOutputInfo {
        stride: [2, 5, 0, 1],
        output: vec![
            out(POS, 0, 2, 0, 0),
            out(ATTR, 1, 3, 1, 1),
            out(POS, 3, 1, 1, 0),
            out(ATTR, 0, 1, 3, 0),
        ],
    };
    f.vs(&info);
    f.vertices(8);
    let (b0, t0) = f.target(256, 0, 256);
    let (b1, t1) = f.target(256, 0, 256);
    let (b3, t3) = f.target(256, 8, 64);
    f.ctx
        .set_stream_output_targets(&[Some(t0), Some(t1), None, Some(t3)], &[0, 0, 0, 0])
        .unwrap();
    f.draw(PrimType::LineStrip, 0, 4);
    let order: Vec<usize> = decompose(PrimType::LineStrip, 4, false).concat();
    let (w0, w1, w3) = (f.words(&b0), f.words(&b1), f.words(&b3));
    for (k, &v) in order.iter().enumerate() {
        let x = vertex(v).map(f32::to_bits);
        assert_eq!(&w0[2 * k..2 * k + 2], &x[0..2], "buffer 0, vertex {k}");
        assert_eq!(
            &w1[5 * k..5 * k + 5],
            &[x[3], x[5], x[6], x[7], SENTINEL],
            "buffer 1, vertex {k}"
        );
        assert_eq!(w3[2 + k], x[4], "buffer 3, vertex {k}");
    }
    assert_eq!(w3[..2], [SENTINEL; 2], "before the target's offset");
    let n = order.len() as u32;
    assert_eq!(f.ctx.stream_output_target_filled(t0).unwrap(), 8 * n);
    assert_eq!(f.ctx.stream_output_target_filled(t1).unwrap(), 20 * n);
    assert_eq!(f.ctx.stream_output_target_filled(t3).unwrap(), 4 * n);
}

#[test]
fn captured_vertices_draw_back_with_count_from_stream_output() {
    let mut f = fixture(2);
    // Capture position and attribute interleaved exactly like the input
    // vertex buffer (stride 8 dwords = 32 bytes), with rasterization off.
    let info = interleaved_info();
    f.vs(&info);
    f.rasterizer(false, true);
    f.clear();
    let black = f.image();
    f.vertices(9);
    let (buf, t) = f.target(4096, 0, 4096);
    f.ctx.set_stream_output_targets(&[Some(t)], &[0]).unwrap();
    let generated = f.query(QueryType::PrimitivesGenerated);
    f.draw(PrimType::TriangleStrip, 0, 9);
    assert_eq!(f.result(generated), QueryResult::U64(7));
    assert_eq!(f.image(), black, "rasterizer_discard: nothing drawn");
    // 7 triangles = 21 vertices of 32 bytes.
    assert_eq!(f.ctx.stream_output_target_filled(t).unwrap(), 21 * 32);

    // The reference image: the strip drawn directly as a triangle list of
    // its decomposed vertices.
    f.ctx.set_stream_output_targets(&[], &[]).unwrap();
    f.rasterizer(false, false);
    let order: Vec<usize> = decompose(PrimType::TriangleStrip, 9, false).concat();
    let list: Vec<u8> = order
        .iter()
        .flat_map(|&v| vertex(v))
        .flat_map(f32::to_le_bytes)
        .collect();
    let lb = f.buffer(list.len() as u32, BindFlags::VERTEX_BUFFER);
    f.ctx.buffer_subdata(&lb, 0, &list).unwrap();
    f.bind_vertex_buffer(&lb);
    f.draw(PrimType::Triangles, 0, order.len() as u32);
    let reference = f.image();
    assert_ne!(reference, black);
    assert_eq!(
        f.words(&buf)[..list.len() / 4],
        list.chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect::<Vec<_>>()[..],
        "the capture is the decomposed strip"
    );

    // Draw the capture back: 21 vertices counted from the target.
    f.clear();
    f.bind_vertex_buffer(&buf);
    let stats = f.query(QueryType::PipelineStatistics);
    f.ctx
        .draw_vbo_indirect(
            &DrawInfo {
                mode: PrimType::Triangles,
                count: 1, // ignored
                ..Default::default()
            },
            &DrawIndirectInfo {
                count_from_stream_output: Some(t),
            },
        )
        .unwrap();
    let QueryResult::PipelineStatistics(s) = f.result(stats) else {
        panic!("statistics")
    };
    assert_eq!((s[0], s[1]), (21, 7), "vertices and primitives drawn");
    assert_eq!(f.image(), reference);
}

#[test]
fn a_draw_reading_a_captured_buffer_sees_the_capture() {
    // Capture and read back as vertices in one recorded scene: the
    // second draw must see what the first wrote.
    let mut f = fixture(4);
    let info = interleaved_info();
    f.vs(&info);
    f.clear();
    f.vertices(6);
    let (buf, t) = f.target(1024, 0, 1024);
    f.ctx.set_stream_output_targets(&[Some(t)], &[0]).unwrap();
    f.rasterizer(false, true);
    f.draw(PrimType::Triangles, 0, 6);
    // Nothing that flushes: the targets stay bound, the next VS has no
    // stream output.
    let plain = f.ctx.create_vs_state_native(native_vs()).unwrap();
    f.ctx.bind_vs_state(Some(plain)).unwrap();
    f.rasterizer(false, false);
    f.bind_vertex_buffer(&buf);
    f.draw(PrimType::Triangles, 0, 6);
    let from_capture = f.image();
    f.ctx.set_stream_output_targets(&[], &[]).unwrap();
    f.clear();
    f.vertices(6);
    f.draw(PrimType::Triangles, 0, 6);
    assert_eq!(from_capture, f.image());
}

#[test]
fn wgsl_and_native_shaders_capture_the_same() {
    let code = ShaderCode::Wgsl {
        code: WGSL.into(),
        entry_point: "vs_main".into(),
    };
    // The compiled interface has the native shader's output slots.
    let compiled =
        ferropipe_shader::compile_vertex(ferropipe_shader::Language::Wgsl, WGSL, "vs_main", &[])
            .unwrap();
    let slots: Vec<Semantic> = compiled.info().outputs.iter().map(|o| o.semantic).collect();
    assert_eq!(slots, [Semantic::Position, Semantic::Generic(0)]);
    let info = StreamOutputInfo {
        stride: [6, 0, 0, 0],
        output: vec![out(ATTR, 2, 2, 0, 0), out(POS, 0, 4, 0, 2)],
    };
    let mut captures = Vec::new();
    for wgsl in [false, true] {
        let mut f = fixture(2);
        if wgsl {
            let vs = f
                .ctx
                .create_vs_state(&ShaderState {
                    code: code.clone(),
                    semantics: vec![],
                    stream_output: info.clone(),
                })
                .unwrap();
            f.ctx.bind_vs_state(Some(vs)).unwrap();
        } else {
            f.vs(&info);
        }
        f.vertices(8);
        let (buf, t) = f.target(512, 0, 512);
        f.ctx.set_stream_output_targets(&[Some(t)], &[0]).unwrap();
        f.draw(PrimType::TriangleFan, 0, 8);
        captures.push(f.words(&buf));
    }
    assert_eq!(captures[0], captures[1]);
    let order = decompose(PrimType::TriangleFan, 8, false).concat();
    let want: Vec<u32> = order
        .iter()
        .flat_map(|&v| {
            let x = vertex(v).map(f32::to_bits);
            [x[6], x[7], x[0], x[1], x[2], x[3]]
        })
        .collect();
    assert_eq!(&captures[0][..want.len()], &want[..]);
}

#[test]
fn captures_are_identical_for_any_thread_count() {
    // Enough quads to span several jobs, segments and (with one thread,
    // four jobs of 2048 primitives a wave) two waves, after an odd number
    // of triangles so a quad's two triangles straddle jobs and waves.
    let quads = 4501;
    let n = 4 * quads;
    let mut want = attr_capture(&decompose(PrimType::Triangles, 3, false));
    want.extend(
        decompose(PrimType::Quads, n, false)
            .iter()
            .flatten()
            .flat_map(|&v| attr_words(v + 3)),
    );
    for threads in [1, 2, 8] {
        let mut f = fixture(threads);
        f.vs(&attr_info());
        f.vertices(n + 3);
        let bytes = want.len() as u32 * 4 + 64;
        let (buf, t) = f.target(bytes, 0, bytes);
        f.ctx.set_stream_output_targets(&[Some(t)], &[0]).unwrap();
        f.rasterizer(false, true);
        let emitted = f.query(QueryType::PrimitivesEmitted);
        f.draw(PrimType::Triangles, 0, 3);
        f.draw(PrimType::Quads, 3, n as u32);
        assert_eq!(
            f.result(emitted),
            QueryResult::U64(1 + 2 * quads as u64),
            "{threads} threads"
        );
        let got = f.words(&buf);
        assert!(got[..want.len()] == want[..], "{threads} threads");
    }
}

#[test]
fn bad_stream_output_state_is_a_typed_error() {
    let mut f = fixture(1);
    let so_error = |r: Result<ferropipe::VsHandle, Error>| match r {
        Err(Error::StreamOutput(e)) => e,
        other => panic!("expected a StreamOutputError, got {other:?}"),
    };
    let with = |output: StreamOutput, stride: u32| StreamOutputInfo {
        stride: [stride, 0, 0, 0],
        output: vec![output],
    };
    type Expect = fn(&StreamOutputError) -> bool;
    let cases: [(StreamOutputInfo, Expect); 8] = [
        // no output slot 2
        (with(out(2, 0, 4, 0, 0), 4), |e| {
            matches!(
                e,
                StreamOutputError::RegisterIndex {
                    output: 0,
                    register_index: 2,
                    ..
                }
            )
        }),
        // components past w
        (with(out(ATTR, 2, 3, 0, 0), 4), |e| {
            matches!(
                e,
                StreamOutputError::Components {
                    start: 2,
                    end: 5,
                    ..
                }
            )
        }),
        // no components
        (with(out(ATTR, 0, 0, 0, 0), 4), |e| {
            matches!(
                e,
                StreamOutputError::Components {
                    start: 0,
                    end: 0,
                    ..
                }
            )
        }),
        // buffer 4
        (with(out(ATTR, 0, 4, 4, 0), 4), |e| {
            matches!(
                e,
                StreamOutputError::OutputBuffer {
                    buffer: 4,
                    limit: 4,
                    ..
                }
            )
        }),
        // past the stride
        (with(out(ATTR, 0, 4, 0, 1), 4), |e| {
            matches!(
                e,
                StreamOutputError::RecordOverflow {
                    end: 5,
                    stride: 4,
                    buffer: 0,
                    ..
                }
            )
        }),
        // stride too large
        (with(out(ATTR, 0, 4, 0, 0), 4096), |e| {
            matches!(
                e,
                StreamOutputError::StrideTooLarge {
                    buffer: 0,
                    stride: 4096,
                    limit: 128,
                    ..
                }
            )
        }),
        (
            StreamOutputInfo {
                stride: [4, 0, 0, 0],
                output: vec![StreamOutput {
                    stream: 1,
                    ..out(ATTR, 0, 4, 0, 0)
                }],
            },
            |e| matches!(e, StreamOutputError::Stream { stream: 1, .. }),
        ),
        (
            StreamOutputInfo {
                stride: [4, 0, 0, 0],
                output: vec![out(ATTR, 0, 2, 0, 0), out(POS, 0, 2, 0, 1)], // overlap
            },
            |e| {
                matches!(
                    e,
                    StreamOutputError::OutputOverlap {
                        output: 1,
                        buffer: 0,
                        ..
                    }
                )
            },
        ),
    ];
    for (bad, expected) in cases {
        let e = so_error(
            f.ctx
                .create_vs_state_native_with_stream_output(native_vs(), &bad),
        );
        assert!(expected(&e), "{bad:?}: {e}");
    }
    // Adjacency with stream output and no geometry shader.
    f.vs(&attr_info());
    f.vertices(8);
    let (_buf, t) = f.target(256, 0, 256);
    f.ctx.set_stream_output_targets(&[Some(t)], &[0]).unwrap();
    let adj = f.ctx.draw_vbo(&DrawInfo {
        mode: PrimType::LinesAdjacency,
        count: 8,
        ..Default::default()
    });
    assert_eq!(
        adj,
        Err(Error::Draw(DrawError::AdjacencyWithStreamOutput {
            mode: PrimType::LinesAdjacency
        }))
    );
    // count_from_stream_output needs a vertex stride and no index buffer.
    f.ctx
        .set_vertex_buffers(
            0,
            &[VertexBuffer {
                buffer: None,
                stride: 0,
                buffer_offset: 0,
            }],
        )
        .unwrap();
    let auto = DrawIndirectInfo {
        count_from_stream_output: Some(t),
    };
    assert!(matches!(
        f.ctx.draw_vbo_indirect(&DrawInfo::default(), &auto),
        Err(Error::Draw(DrawError::ZeroStrideStreamOutputCount))
    ));
    // A texture cannot be a stream output target; a buffer without the
    // binding neither.
    assert!(
        f.screen
            .resource_create(&ResourceTemplate::texture_2d(
                Format::R8G8B8A8_UNORM,
                4,
                4,
                BindFlags::STREAM_OUTPUT,
            ))
            .is_err()
    );
    let vb = f.buffer(64, BindFlags::VERTEX_BUFFER);
    assert!(matches!(
        f.ctx.create_stream_output_target(&vb, 0, 64),
        Err(Error::Resource(ResourceError::MissingBind {
            bind: "PIPE_BIND_STREAM_OUTPUT",
            ..
        }))
    ));
    // The caps say what works.
    assert_eq!(
        f.screen.get_param(ferropipe::Cap::MaxStreamOutputBuffers),
        4
    );
    assert!(f.screen.is_format_supported(
        Format::R32_FLOAT,
        TextureTarget::Buffer,
        0,
        0,
        BindFlags::STREAM_OUTPUT
    ));
}

#[test]
fn capture_needs_no_framebuffer() {
    // Transform feedback alone: no framebuffer, rasterizer discard, and
    // a sample mask that would make a rendering draw a no-op.
    let mut f = fixture_with(2, false);
    f.rasterizer(false, true);
    f.ctx.set_sample_mask(0).unwrap();
    f.vs(&attr_info());
    f.vertices(6);
    let (buf, t) = f.target(256, 0, 256);
    f.ctx.set_stream_output_targets(&[Some(t)], &[0]).unwrap();
    f.draw(PrimType::TriangleStrip, 0, 6);
    let want = attr_capture(&decompose(PrimType::TriangleStrip, 6, false));
    assert_eq!(&f.words(&buf)[..want.len()], &want[..]);
    assert_eq!(f.ctx.stream_output_target_filled(t).unwrap(), 4 * 3 * 16);
}

/// A vertex shader whose loop never ends stops at the interpreter's
/// loop-trip limit, and the flush that ran it fails with a typed error
/// instead of completing normally (here with the draw's capture
/// incomplete).
#[test]
fn a_runaway_vertex_shader_fails_the_flush() {
    let mut f = fixture(1);
    let vs = f
        .ctx
        .create_vs_state(&ShaderState {
            code: ShaderCode::Wgsl {
                code: "struct O { @builtin(position) p: vec4<f32>, @location(0) a: vec4<f32> }
                       @vertex fn vs(@location(0) p: vec4<f32>, @location(1) a: vec4<f32>) -> O {
                           var x = 0.0;
                           loop { x += abs(p.x); if x < -1.0 { break; } }
                           return O(p, a + x);
                       }"
                .into(),
                entry_point: "vs".into(),
            },
            semantics: vec![],
            stream_output: StreamOutputInfo::default(),
        })
        .unwrap();
    f.ctx.bind_vs_state(Some(vs)).unwrap();
    f.vertices(3);
    let e = f
        .ctx
        .draw_vbo(&DrawInfo {
            mode: PrimType::Triangles,
            start: 0,
            count: 3,
            ..Default::default()
        })
        .and_then(|()| f.ctx.flush().map(|_| ()))
        .unwrap_err();
    assert!(
        matches!(
            &e,
            Error::Shader {
                source: ferropipe_shader::ShaderError::LoopLimit { stage: "vertex" },
                ..
            }
        ),
        "{e}"
    );
    // the flag was taken: the next flush has nothing to report
    f.ctx.flush().unwrap();
}
