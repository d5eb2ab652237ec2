//! Equivalent of draw's `draw_pt_so_emit.c` (with `draw_so_emit_tmp.h` and
//! `draw_decompose_tmp.h`): stream output (transform feedback).  After the
//! vertex shader and before clipping, every assembled primitive of a draw
//! that captures is written, vertex by vertex, as packed dwords into the
//! bound stream-output targets.
//!
//! Rules (context.rst "Stream output targets", llvmpipe's draw module):
//! * what is written is the vertex shader's outputs as the rasterizer will
//!   see them before clipping (clip-space position, colours after
//!   `clamp_vertex_color`, as llvmpipe's VS clamps before `so_emit`);
//! * strips, fans, loops, quads and polygons are decomposed into points,
//!   lines or triangles in draw's order for stream output
//!   (`last_vertex_last = !flatshade_first`, `quads_flatshade_last =
//!   false`): the same order the pipeline assembles, except quads and, with
//!   `flatshade_first`, quad strips, which `quad_order` rearranges;
//! * output `o` of vertex `i` of a primitive goes to buffer
//!   `o.output_buffer` at `filled + i * stride * 4 + o.dst_offset * 4`;
//!   `filled` (the target's internal offset) then grows by `stride * 4`
//!   per vertex for every buffer the primitive wrote;
//! * a primitive is written only if every byte it writes lies inside its
//!   targets' ranges (and every buffer it writes is bound); otherwise
//!   nothing of it is written, the target's filled size stays, and the
//!   primitive counts as needed but not written (an overflow).  Later,
//!   smaller primitives may still fit, as in llvmpipe;
//! * nothing is ever written outside `[buffer_offset, buffer_offset +
//!   buffer_size)` of a target, nor outside its buffer's storage.
//!
//! The stage runs once per wave of front-end jobs, after Shade, walking the
//! wave's jobs, segments and primitives in submission order on one thread:
//! the bytes written and the filled sizes are therefore identical for any
//! thread count, and a primitive's place in a buffer depends only on the
//! primitives submitted before it.  It costs nothing when no draw of the
//! scene captures.

use std::sync::Arc;

use bevy_ecs::prelude::*;
use ferropipe_components::batch::{Command, DrawCounters, PrimKind, RecordedScene, VertexBatch};
use ferropipe_components::draw::StreamOutputBinding;
use ferropipe_components::enums::PrimType;
use ferropipe_components::resource::{PipeResource, ResourceRef, StorageWrite};
use ferropipe_components::shader::LANES;
use ferropipe_components::state::MAX_SO_BUFFERS;

use crate::fetch::Topology;
use crate::job::SceneExecution;
use ferropipe_components::batch::{JobPart, Segment};

/// The stage's state between waves: the first triangle of a quad whose
/// second triangle has not been seen yet (a quad's two triangles may end
/// up in different segments or jobs).
#[derive(Resource, Default)]
pub(crate) struct StreamOutCarry {
    /// Command, instance, run start and primitive number of the carried
    /// triangle.
    pending: Option<[u32; 4]>,
    /// Its three vertex records.
    records: Vec<u32>,
}

/// The write-locked buffers of a wave's targets, in resource-id order
/// (the order every system locks in, so contexts sharing buffers cannot
/// deadlock).
pub struct TargetBuffers<'a> {
    held: Vec<(*const PipeResource, StorageWrite<'a>)>,
}

impl<'a> TargetBuffers<'a> {
    /// Write-locks every buffer in `buffers` (duplicates locked once).
    pub fn lock(buffers: impl IntoIterator<Item = &'a ResourceRef>) -> Self {
        let mut list: Vec<&'a ResourceRef> = buffers.into_iter().collect();
        list.sort_by_key(|r| (r.id, Arc::as_ptr(r) as usize));
        list.dedup_by(|a, b| Arc::ptr_eq(a, b));
        let held = list
            .into_iter()
            .map(|r| (Arc::as_ptr(r), r.storage.write()))
            .collect();
        TargetBuffers { held }
    }

    fn bytes_mut(&mut self, r: &PipeResource) -> Option<&mut [u8]> {
        let key = r as *const PipeResource;
        self.held
            .iter_mut()
            .find(|(p, _)| *p == key)
            .map(|(_, g)| &mut **g)
    }
}

/// Dwords one vertex contributes (the sum of the outputs' component
/// counts): the length of a vertex record.
pub(crate) fn record_len(so: &StreamOutputBinding) -> usize {
    so.info
        .output
        .iter()
        .map(|o| o.num_components.min(4) as usize)
        .sum()
}

/// Appends the record of local vertex `v` of `batch` to `out`: for each
/// stream-output entry in order, its components' bits.  An output slot the
/// batch does not have reads as zeros.
pub(crate) fn gather_record(
    so: &StreamOutputBinding,
    batch: &VertexBatch,
    v: usize,
    out: &mut Vec<u32>,
) {
    let (g, lane) = (v / LANES, v % LANES);
    for o in &so.info.output {
        let first = o.start_component.min(4) as usize;
        let last = (first + o.num_components as usize).min(4);
        for c in first..last {
            let at = (o.register_index as usize * 4 + c) * batch.groups + g;
            let bits = batch
                .outputs
                .get(at)
                .map_or(0, |l| l.as_array()[lane].to_bits());
            out.push(bits);
        }
    }
}

/// Writes one primitive of `records.len()` vertices (each a
/// `record_len`-dword record) to the targets of `so`, if it fits;
/// returns whether it was written (`so_emit_prim`).
pub fn emit_primitive(
    so: &StreamOutputBinding,
    records: &[&[u32]],
    buffers: &mut TargetBuffers<'_>,
) -> bool {
    let info = &*so.info;
    let mut filled = [0u64; MAX_SO_BUFFERS];
    for (b, t) in so.targets.iter().enumerate() {
        filled[b] = t.as_ref().map_or(0, |t| t.filled() as u64);
    }
    // Room first: every byte of every vertex, or nothing.
    for i in 0..records.len() as u64 {
        for o in &info.output {
            let b = o.output_buffer as usize;
            let Some(t) = so.targets.get(b).and_then(|t| t.as_ref()) else {
                // A missing buffer is an overflow (draw_pt_so_emit.c).
                return false;
            };
            let stride = info.stride[b] as u64 * 4;
            let end = filled[b]
                + i * stride
                + o.dst_offset as u64 * 4
                + o.num_components.min(4) as u64 * 4;
            if end > t.buffer_size as u64 {
                return false;
            }
        }
    }
    let mut written = [false; MAX_SO_BUFFERS];
    for rec in records {
        let mut k = 0;
        for o in &info.output {
            let b = o.output_buffer as usize;
            let n = (o.num_components.min(4) as usize).min(rec.len().saturating_sub(k));
            let src = &rec[k..k + n];
            k += n;
            let Some(t) = so.targets.get(b).and_then(|t| t.as_ref()) else {
                continue;
            };
            written[b] = true;
            let Some(bytes) = buffers.bytes_mut(&t.buffer) else {
                continue;
            };
            let at = t.buffer_offset as u64 + filled[b] + o.dst_offset as u64 * 4;
            for (j, d) in src.iter().enumerate() {
                let pos = at + j as u64 * 4;
                // The range was checked above and validated against the
                // buffer at creation; clamp anyway (robust access).
                if let Some(dst) = usize::try_from(pos)
                    .ok()
                    .and_then(|p| bytes.get_mut(p..p.checked_add(4)?))
                {
                    dst.copy_from_slice(&d.to_le_bytes());
                }
            }
        }
        for b in 0..MAX_SO_BUFFERS {
            if written[b] {
                filled[b] += info.stride[b] as u64 * 4;
            }
        }
    }
    for (b, t) in so.targets.iter().enumerate() {
        if let Some(t) = t
            && written[b]
        {
            t.set_filled(filled[b].min(u32::MAX as u64) as u32);
        }
    }
    true
}

/// Stream-output triangles of one quad from the two triangles the
/// pipeline assembled for it (`a` = its even primitive, `b` the odd one),
/// as `[triangle][vertex]` picks: 0..3 index `a`'s vertices, 3..6 `b`'s.
///
/// The pipeline splits quads as Mesa's GL front end hands them to
/// llvmpipe (fetch.rs); stream output follows draw's
/// `draw_decompose_tmp.h` with `quads_flatshade_last = false`:
/// * quads, last-vertex convention: `(0,1,3), (1,2,3)` from the pipeline's
///   `a = (0,1,2)`, `b = (0,2,3)`;
/// * quads, `flatshade_first`: `(0,1,2), (0,2,3)` from `a = (0,1,3)`,
///   `b = (1,2,3)`;
/// * quad strips with `flatshade_first`: `(i,i+3,i+2), (i,i+1,i+3)` from
///   `a = (i+3,i+2,i)`, `b = (i+3,i,i+1)`;
/// * quad strips, last-vertex convention: as assembled.
pub(crate) fn quad_order(mode: PrimType, flatshade_first: bool) -> [[usize; 3]; 2] {
    match (mode, flatshade_first) {
        (PrimType::Quads, false) => [[0, 1, 5], [1, 2, 5]],
        (PrimType::Quads, true) => [[0, 1, 4], [0, 4, 2]],
        (PrimType::QuadStrip, true) => [[2, 0, 1], [4, 5, 3]],
        _ => [[0, 1, 2], [3, 4, 5]],
    }
}

/// Whether stream output must see a quad's two triangles together.
fn pairs_quads(mode: PrimType, flatshade_first: bool) -> bool {
    quad_order(mode, flatshade_first) != [[0, 1, 2], [3, 4, 5]]
}

/// Writes the primitives of one shaded segment (`first_prim` = the run's
/// primitive number of its first primitive) and counts them.
fn emit_segment(
    seg: &Segment,
    so: &StreamOutputBinding,
    topo: Topology,
    first_prim: u32,
    carry: &mut StreamOutCarry,
    buffers: &mut TargetBuffers<'_>,
    counts: &mut DrawCounters,
) {
    let nv = seg.kind.vertices();
    let rl = record_len(so);
    let mut rec: Vec<u32> = Vec::with_capacity(rl * 3);
    let mut emit = |recs: &[&[u32]], counts: &mut DrawCounters| {
        counts.so_primitives_needed += 1;
        if emit_primitive(so, recs, buffers) {
            counts.so_primitives_written += 1;
        }
    };
    let (mode, flatshade_first) = (topo.mode, topo.first);
    let paired = seg.kind == PrimKind::Triangle && pairs_quads(mode, flatshade_first);
    for (k, prim) in seg.prims.iter().enumerate() {
        rec.clear();
        for &v in &prim.v[..nv] {
            gather_record(so, &seg.batch, v as usize, &mut rec);
        }
        if !paired {
            let recs: [&[u32]; 3] =
                std::array::from_fn(|i| rec.get(i * rl..(i + 1) * rl).unwrap_or(&[]));
            emit(&recs[..nv], counts);
            continue;
        }
        let p = first_prim + k as u32;
        let part = &seg.part;
        let key = |p: u32| [part.command, part.instance, part.run_start, p];
        if p.is_multiple_of(2) {
            carry.pending = Some(key(p));
            carry.records.clear();
            carry.records.extend_from_slice(&rec);
            continue;
        }
        let both: Vec<u32> = match carry.pending.take() {
            Some(k) if k == key(p - 1) => carry.records.iter().chain(rec.iter()).copied().collect(),
            // Cannot happen (a quad's triangles are assembled in order);
            // never write a half quad from stale data.
            _ => continue,
        };
        let vert = |i: usize| &both[i * rl..(i + 1) * rl];
        for tri in quad_order(mode, flatshade_first) {
            emit(&[vert(tri[0]), vert(tri[1]), vert(tri[2])], counts);
        }
    }
}

/// Stream output over the current wave (the `StreamOut` set): for every
/// segment of a capturing draw, in submission order, writes its
/// primitives to the targets and counts them per command
/// (`so_primitives_written` / `so_primitives_needed`).
pub(crate) fn emit_stream_output(
    scene: Res<RecordedScene>,
    mut exec: ResMut<SceneExecution>,
    mut carry: ResMut<StreamOutCarry>,
    counters: Res<crate::job::PipelineCounters>,
) {
    let _time = counters
        .0
        .time_stage(crate::sets::PipelineSet::StreamOut.stage());
    let exec = &mut *exec;
    if !exec.captures {
        return;
    }
    ferropipe_profiling::scope!("emit_stream_output");
    let bindings: Vec<&Arc<StreamOutputBinding>> = exec
        .states
        .iter()
        .filter_map(|s| s.block.stream_output.as_ref())
        .collect();
    let mut buffers = TargetBuffers::lock(
        bindings
            .iter()
            .flat_map(|b| b.targets.iter().flatten().map(|t| &t.buffer)),
    );
    // Primitive number (within its run) of the next segment of a part.
    let mut next: Option<(JobPart, u32)> = None;
    for job in &exec.wave {
        for seg in &job.segments[..job.used] {
            let first_prim = match next {
                Some((part, p)) if part == seg.part => p,
                _ => seg.part.first_prim,
            };
            next = Some((seg.part, first_prim + seg.prims.len() as u32));
            let Some(ds) = exec.states.get(seg.part.state as usize) else {
                continue;
            };
            let Some(so) = &ds.block.stream_output else {
                continue;
            };
            let Some(Command::Draw { info, .. }) = scene.commands.get(seg.part.command as usize)
            else {
                continue;
            };
            let Some(counts) = exec.counters.get_mut(seg.part.command as usize) else {
                continue;
            };
            emit_segment(
                seg,
                so,
                Topology::new(info.mode, ds.setup.flatshade_first),
                first_prim,
                &mut carry,
                &mut buffers,
                counts,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::resource;
    use ferropipe_components::draw::StreamOutputTarget;
    use ferropipe_components::enums::BindFlags;
    use ferropipe_components::resource::ResourceTemplate;
    use ferropipe_components::state::{StreamOutput, StreamOutputInfo};

    fn buffer(bytes: u32) -> ResourceRef {
        resource(
            ResourceTemplate::buffer(bytes, BindFlags::STREAM_OUTPUT),
            &vec![0xee; bytes as usize],
        )
    }

    /// Two outputs: 2 dwords to buffer 0 (stride 2), 1 dword to buffer 1
    /// at dword 1 of a stride-3 record.
    fn binding(b0: &ResourceRef, size0: u32, b1: &ResourceRef) -> StreamOutputBinding {
        let info = StreamOutputInfo {
            stride: [2, 3, 0, 0],
            output: vec![
                StreamOutput {
                    register_index: 1,
                    num_components: 2,
                    ..Default::default()
                },
                StreamOutput {
                    register_index: 0,
                    start_component: 3,
                    num_components: 1,
                    output_buffer: 1,
                    dst_offset: 1,
                    ..Default::default()
                },
            ],
        };
        StreamOutputBinding {
            info: Arc::new(info),
            targets: [
                Some(Arc::new(StreamOutputTarget::new(b0.clone(), 4, size0))),
                Some(Arc::new(StreamOutputTarget::new(b1.clone(), 0, 64))),
                None,
                None,
            ],
        }
    }

    fn words(r: &ResourceRef) -> Vec<u32> {
        r.storage
            .read()
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    #[test]
    fn primitives_are_written_whole_or_not_at_all() {
        let (b0, b1) = (buffer(32), buffer(64));
        // Room in buffer 0 for 3 records of 8 bytes (24 of the 28 bytes
        // after the 4-byte offset).
        let so = binding(&b0, 24, &b1);
        assert_eq!(record_len(&so), 3);
        let v = |x: u32| [x, x + 1, x + 2];
        let (a, b, c, d) = (v(10), v(20), v(30), v(40));
        {
            let mut bufs = TargetBuffers::lock([&b0, &b1]);
            assert!(emit_primitive(&so, &[&a, &b], &mut bufs));
            // A second line needs 16 more bytes: only 8 are left.
            assert!(!emit_primitive(&so, &[&c, &d], &mut bufs));
            // A point still fits.
            assert!(emit_primitive(&so, &[&c], &mut bufs));
            assert!(!emit_primitive(&so, &[&d], &mut bufs));
        }
        let t = |i: usize| so.targets[i].as_ref().unwrap().filled();
        assert_eq!((t(0), t(1)), (24, 36));
        let e = 0xeeee_eeee;
        assert_eq!(words(&b0), [e, 10, 11, 20, 21, 30, 31, e]);
        assert_eq!(
            &words(&b1)[..10],
            [e, 12, e, e, 22, e, e, 32, e, e],
            "dst_offset 1 in records of stride 3"
        );
    }

    #[test]
    fn a_missing_buffer_is_an_overflow() {
        let (b0, b1) = (buffer(32), buffer(64));
        let mut so = binding(&b0, 24, &b1);
        so.targets[1] = None;
        let mut bufs = TargetBuffers::lock([&b0]);
        assert!(!emit_primitive(&so, &[&[1, 2, 3]], &mut bufs));
        drop(bufs);
        assert_eq!(so.targets[0].as_ref().unwrap().filled(), 0);
        assert!(words(&b0).iter().all(|&w| w == 0xeeee_eeee));
    }

    #[test]
    fn quad_orders_match_draw_decompose() {
        // The triangles fetch.rs assembles for one quad (elements 0..4),
        // rearranged, must be draw_decompose_tmp.h's stream-output order.
        for (mode, first, want) in [
            (PrimType::Quads, false, [[0, 1, 3], [1, 2, 3]]),
            (PrimType::Quads, true, [[0, 1, 2], [0, 2, 3]]),
            (PrimType::QuadStrip, true, [[0, 3, 2], [0, 1, 3]]),
            (PrimType::QuadStrip, false, [[2, 0, 3], [0, 1, 3]]),
        ] {
            let t = Topology::new(mode, first);
            let (a, _, _) = t.prim(0, 4);
            let (b, _, _) = t.prim(1, 4);
            let both = [a[0], a[1], a[2], b[0], b[1], b[2]];
            let got = quad_order(mode, first).map(|tri| tri.map(|i| both[i]));
            assert_eq!(got, want, "{mode:?} flatshade_first={first}");
        }
    }
}
