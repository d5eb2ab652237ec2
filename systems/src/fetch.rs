//! Equivalent of draw's `draw_pt_vsplit.c` + `draw_pt_fetch.c` + the
//! decomposition rules of `draw_decompose_tmp.h`: index lookup with primitive
//! restart, primitive assembly with Mesa's provoking-vertex vertex orders,
//! per-segment vertex deduplication, and vertex-element decoding into SoA
//! lanes.
//!
//! Rules (context.rst "Drawing", FORMAT.md "Vertex fetch"):
//! * the restart index is compared with the raw index, before `index_bias`;
//! * a per-instance element of instance `i` reads element
//!   `start_instance + i / divisor` (the start is added after the division);
//! * every read is bounds-checked: an element, or an index, that lies even
//!   partly outside its buffer reads as zero bytes.  Bad data never crashes.
//!
//! Primitive orders follow draw's decomposition exactly (with
//! `quads_always_flatshade_last`, as llvmpipe reports
//! `PIPE_CAP_QUADS_FOLLOW_PROVOKING_VERTEX_CONVENTION = 0`): quads are split
//! along the 1-3 diagonal and reordered so the provoking vertex is the first
//! (`flatshade_first`) or last vertex of each emitted triangle, which is all
//! setup needs to know.

pub use crate::fetch_plan::{Decode, ElementFetch, FetchPlan};
pub use ferropipe_components::batch::{AssembledPrim, JobPart, Segment};
use ferropipe_components::batch::{EDGE_FLAGS_ALL, PrimKind, RESET_STIPPLE};
use ferropipe_components::draw::DrawInfo;
use ferropipe_components::enums::PrimType;
use ferropipe_components::format::{ChannelType, FormatDesc};
use ferropipe_components::pack;
use ferropipe_components::shader::{LANES, Lanes, ScalarKind, ShaderInfo};
use ferropipe_components::simd::X86V3;
use multiversion::multiversion;

use crate::lanes::resize_lanes;
use std::sync::Arc;

use bevy_ecs::prelude::*;
use ferropipe_components::batch::{Command, RecordedScene, VertexBufferSlots};

use crate::job::{FrontJob, PipelineCounters, PipelineExecutor, SceneExecution, for_each_job_with};
use crate::locks::LockSet;
use crate::sets::PipelineSet;

/// Most distinct vertices one segment holds: 32 lane groups, so one VS call
/// covers a segment and its registers stay in L1/L2 (an interpreter's
/// per-call register file scales with the group count).
pub(crate) const SEGMENT_MAX_VERTS: usize = 256;

// ---------------------------------------------------------------------------
// Topology: primitive decomposition with random access
// ---------------------------------------------------------------------------

/// How a primitive type decomposes into points, lines or triangles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Topology {
    /// The draw's primitive type.
    pub mode: PrimType,
    /// What it decomposes into.
    pub kind: PrimKind,
    /// `flatshade_first`: emitted primitives put their provoking vertex first.
    pub first: bool,
}

impl Topology {
    /// The decomposition of `mode`, with the provoking vertex first when `flatshade_first`.
    pub fn new(mode: PrimType, flatshade_first: bool) -> Self {
        let kind = match mode {
            PrimType::Points => PrimKind::Point,
            PrimType::Lines
            | PrimType::LineLoop
            | PrimType::LineStrip
            | PrimType::LinesAdjacency
            | PrimType::LineStripAdjacency => PrimKind::Line,
            _ => PrimKind::Triangle,
        };
        Topology {
            mode,
            kind,
            first: flatshade_first,
        }
    }

    /// Primitives a run of `n` elements decomposes into (a line loop's
    /// closing line included).
    pub fn prims_in_run(&self, n: u32) -> u32 {
        match self.mode {
            PrimType::Points => n,
            PrimType::Lines => n / 2,
            PrimType::LineStrip => n.saturating_sub(1),
            PrimType::LineLoop => {
                if n >= 2 {
                    n
                } else {
                    0
                }
            }
            PrimType::Triangles => n / 3,
            PrimType::TriangleStrip | PrimType::TriangleFan | PrimType::Polygon => {
                n.saturating_sub(2)
            }
            PrimType::Quads => (n / 4) * 2,
            PrimType::QuadStrip => {
                if n >= 4 {
                    ((n - 2) / 2) * 2
                } else {
                    0
                }
            }
            PrimType::LinesAdjacency => n / 4,
            PrimType::LineStripAdjacency => n.saturating_sub(3),
            PrimType::TrianglesAdjacency => n / 6,
            PrimType::TriangleStripAdjacency => {
                if n >= 6 {
                    (n - 4) / 2
                } else {
                    0
                }
            }
            PrimType::Patches => 0,
        }
    }

    /// Elements (run-relative) of primitive `p` of a run of `n` elements,
    /// the element whose values flat inputs take (the provoking vertex), and
    /// the edge flags.
    #[inline]
    pub fn prim(&self, p: u32, n: u32) -> ([u32; 3], u32, u8) {
        let (v, flags) = self.prim_vertices(p, n);
        let pv = match self.mode {
            // GL quads don't follow the provoking-vertex convention
            // (PIPE_CAP_QUADS_FOLLOW_PROVOKING_VERTEX_CONVENTION = 0): the
            // quad's last vertex, even for a triangle of the 0-2 split
            // that does not contain it.
            PrimType::Quads => 4 * (p / 2) + 3,
            PrimType::QuadStrip => 2 * (p / 2) + 3,
            _ => match self.kind {
                PrimKind::Point => v[0],
                PrimKind::Line => v[if self.first { 0 } else { 1 }],
                PrimKind::Triangle => v[if self.first { 0 } else { 2 }],
            },
        };
        (v, pv, flags)
    }

    /// Vertices and edge flags of primitive `p` (see [`Topology::prim`]).
    #[inline]
    fn prim_vertices(&self, p: u32, n: u32) -> ([u32; 3], u8) {
        let all = EDGE_FLAGS_ALL;
        let last = !self.first;
        // A run's first line restarts the stipple pattern (a loop's closing
        // line continues it).
        let reset_at_start = if p == 0 { RESET_STIPPLE } else { 0 };
        match self.mode {
            PrimType::Points => ([p, 0, 0], 0),
            PrimType::Lines => ([2 * p, 2 * p + 1, 0], RESET_STIPPLE),
            PrimType::LineStrip => ([p, p + 1, 0], reset_at_start),
            PrimType::LineLoop => {
                if p + 1 < n {
                    ([p, p + 1, 0], reset_at_start)
                } else {
                    ([n - 1, 0, 0], reset_at_start)
                }
            }
            PrimType::Triangles => ([3 * p, 3 * p + 1, 3 * p + 2], all),
            PrimType::TriangleStrip => {
                let v = if p & 1 == 0 {
                    [p, p + 1, p + 2]
                } else if last {
                    [p + 1, p, p + 2]
                } else {
                    [p, p + 2, p + 1]
                };
                (v, all)
            }
            PrimType::TriangleFan => {
                if last {
                    ([0, p + 1, p + 2], all)
                } else {
                    ([p + 1, p + 2, 0], all)
                }
            }
            PrimType::Quads => {
                // The diagonal depends on the convention, as Mesa 22.3's GL
                // front end hands quads to llvmpipe: 0-2 with
                // last-vertex provoking, 1-3 with flatshade_first (found by
                // differential testing against the llvmpipe reference
                // tool; smooth colours show the diagonal).  The provoking
                // vertex is the quad's last either way (see `prim`).
                let i = 4 * (p / 2);
                if last {
                    if p & 1 == 0 {
                        ([i, i + 1, i + 2], 0b011)
                    } else {
                        ([i, i + 2, i + 3], 0b110)
                    }
                } else if p & 1 == 0 {
                    ([i, i + 1, i + 3], 0b101)
                } else {
                    ([i + 1, i + 2, i + 3], 0b011)
                }
            }
            PrimType::QuadStrip => {
                let i = 2 * (p / 2);
                let second = p & 1 == 1;
                match (last, second) {
                    (true, false) => ([i + 2, i, i + 3], 0b101),
                    (true, true) => ([i, i + 1, i + 3], 0b011),
                    (false, false) => ([i + 3, i + 2, i], 0b011),
                    (false, true) => ([i + 3, i, i + 1], 0b110),
                }
            }
            PrimType::Polygon => {
                let tris = n.saturating_sub(2);
                let is_first = p == 0;
                let is_last = p + 1 == tris;
                if last {
                    // (p+1, p+2, 0): edge 0 always, edge 1 closes, edge 2 opens.
                    let f =
                        0b001 | if is_last { 0b010 } else { 0 } | if is_first { 0b100 } else { 0 };
                    ([p + 1, p + 2, 0], f)
                } else {
                    // (0, p+1, p+2): edge 1 always, edge 0 opens, edge 2 closes.
                    let f =
                        0b010 | if is_first { 0b001 } else { 0 } | if is_last { 0b100 } else { 0 };
                    ([0, p + 1, p + 2], f)
                }
            }
            PrimType::LinesAdjacency => ([4 * p + 1, 4 * p + 2, 0], RESET_STIPPLE),
            PrimType::LineStripAdjacency => ([p + 1, p + 2, 0], reset_at_start),
            PrimType::TrianglesAdjacency => ([6 * p, 6 * p + 2, 6 * p + 4], all),
            PrimType::TriangleStripAdjacency => {
                let i = 2 * p;
                let v = if p & 1 == 0 {
                    [i, i + 2, i + 4]
                } else if last {
                    [i + 2, i, i + 4]
                } else {
                    [i, i + 4, i + 2]
                };
                (v, all)
            }
            PrimType::Patches => ([0; 3], 0),
        }
    }
}

// ---------------------------------------------------------------------------
// Index buffer access
// ---------------------------------------------------------------------------

/// Reads index `pos` of an index buffer (`offset` bytes in, `size` bytes per
/// index); indices outside the buffer read as 0.
#[inline]
pub(crate) fn read_index(bytes: &[u8], offset: u32, size: u32, pos: u64) -> u32 {
    let at = offset as u64 + pos * size as u64;
    let end = at + size as u64;
    if end > bytes.len() as u64 {
        return 0;
    }
    let at = at as usize;
    // The index's bytes as one array (one bounds check, which the test
    // above makes never fail), not byte by byte: indexing each byte kept
    // a check per byte (~13 instructions of a 4-byte index, textured_mesh).
    match size {
        1 => bytes.get(at).map_or(0, |&b| b as u32),
        2 => bytes
            .get(at..at + 2)
            .and_then(|b| b.try_into().ok())
            .map_or(0, |b| u16::from_le_bytes(b) as u32),
        _ => bytes
            .get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u32::from_le_bytes),
    }
}

/// Splits `count` elements starting at `start` into runs separated by the
/// restart index (compared before the bias).  Returns `(run_start, run_len)`
/// pairs relative to `start`, and the number of restart indices skipped.
pub(crate) fn restart_runs(
    bytes: &[u8],
    offset: u32,
    size: u32,
    start: u32,
    count: u32,
    restart_index: u32,
    out: &mut Vec<(u32, u32)>,
) -> u32 {
    let mut run_start = 0u32;
    let mut restarts = 0u32;
    // Elements past the buffer's end all read index 0: scan only the ones
    // inside it, then treat the tail at once, so a count of 2^32 - 1 over
    // a 12-byte buffer costs three reads, not four billion.
    let inside = (bytes.len() as u64)
        .saturating_sub(offset as u64)
        .checked_div(size as u64)
        .unwrap_or(0)
        .saturating_sub(start as u64)
        .min(count as u64) as u32;
    for e in 0..inside {
        let idx = read_index(bytes, offset, size, start as u64 + e as u64);
        if idx == restart_index {
            if e > run_start {
                out.push((run_start, e - run_start));
            }
            run_start = e + 1;
            restarts += 1;
        }
    }
    if restart_index == 0 && count > inside {
        if inside > run_start {
            out.push((run_start, inside - run_start));
        }
        restarts += count - inside;
        run_start = count;
    }
    if count > run_start {
        out.push((run_start, count - run_start));
    }
    restarts
}

// ---------------------------------------------------------------------------
// Segments: assembled primitives over deduplicated vertices
// ---------------------------------------------------------------------------

/// Open-addressing map from vertex id to local slot, reset in O(1) by a
/// generation stamp.
pub struct VertexDedup {
    keys: Vec<i64>,
    slots: Vec<u16>,
    stamp: Vec<u32>,
    generation: u32,
}

const DEDUP_BITS: u32 = 10;

impl Default for VertexDedup {
    fn default() -> Self {
        let n = 1usize << DEDUP_BITS;
        VertexDedup {
            keys: vec![0; n],
            slots: vec![0; n],
            stamp: vec![0; n],
            generation: 1,
        }
    }
}

impl VertexDedup {
    fn clear(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.generation = 1;
        }
    }

    /// The slot of `vid`, inserting `next` if absent; returns (slot, inserted).
    #[inline]
    fn get_or_insert(&mut self, vid: i64, next: u16) -> (u16, bool) {
        let mask = (1usize << DEDUP_BITS) - 1;
        let mut h =
            ((vid as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - DEDUP_BITS)) as usize;
        loop {
            if self.stamp[h] != self.generation {
                self.stamp[h] = self.generation;
                self.keys[h] = vid;
                self.slots[h] = next;
                return (next, true);
            }
            if self.keys[h] == vid {
                return (self.slots[h], false);
            }
            h = (h + 1) & mask;
        }
    }
}

/// Index-buffer view of a draw (absent for non-indexed draws).
#[derive(Clone, Copy)]
pub struct IndexSource<'a> {
    /// The index buffer's bytes.
    pub bytes: &'a [u8],
    /// Byte offset of index 0.
    pub offset: u32,
    /// Bytes per index: 1, 2 or 4.
    pub size: u32,
}

/// Assembles one job part into segments, appending them to `out` (reusing
/// the segments already there past `*used`).
pub fn assemble_part(
    part: JobPart,
    info: &DrawInfo,
    topo: Topology,
    index: Option<IndexSource<'_>>,
    dedup: &mut VertexDedup,
    out: &mut Vec<Segment>,
    used: &mut usize,
) {
    let n = part.run_len;
    let base_elem = info.start as u64 + part.run_start as u64;
    let verts_per = topo.kind.vertices();
    let mut seg_idx = next_segment(out, used, part, topo.kind);
    dedup.clear();

    let vid_of = |e: u32| -> i64 {
        match index {
            Some(ix) => {
                read_index(ix.bytes, ix.offset, ix.size, base_elem + e as u64) as i64
                    + info.index_bias as i64
            }
            None => (base_elem + e as u64) as i64,
        }
    };

    // Lists without an index buffer never repeat a vertex: each primitive's
    // elements are its own, so the dedup map is skipped (its hashing and
    // probing were ~40 instructions per vertex of tiny_tris_1m).
    let unshared = index.is_none()
        && matches!(
            topo.mode,
            PrimType::Points | PrimType::Lines | PrimType::Triangles
        );
    if unshared {
        // Primitive p's elements are `verts_per * p ..` in order, so a
        // segment's share is one range of vertex ids and one run of
        // primitives: two `extend`s instead of a push per vertex and per
        // primitive (~45 instructions per vertex of tiny_tris_1m).
        let vp = verts_per as u32;
        let (mut p, end) = (part.first_prim, part.first_prim + part.num_prims);
        while p < end {
            let room = (SEGMENT_MAX_VERTS - out[seg_idx].vids.len()) / verts_per;
            if room == 0 {
                seg_idx = next_segment(out, used, part, topo.kind);
                continue;
            }
            let take = (room as u32).min(end - p);
            let seg = &mut out[seg_idx];
            let first = seg.vids.len() as u16;
            seg.vids.extend((vp * p..vp * (p + take)).map(vid_of));
            // In a list every primitive has the same shape: its provoking
            // vertex at the same position and the same edge flags
            // (`Topology::prim_vertices`), so they are read off the run's
            // first primitive, not asked per primitive (the general
            // topology walk per triangle was ~50 of its ~95 instructions
            // here in tiny_tris_1m).
            let (pv_at, edge_flags) = list_shape(topo, p, n);
            let pv_at = pv_at as u16;
            seg.prims.extend((0..take).map(|i| {
                let at = first + (i * vp) as u16;
                let mut v = [0u16; 3];
                for (k, v) in v.iter_mut().enumerate().take(verts_per) {
                    *v = at + k as u16;
                }
                AssembledPrim {
                    v,
                    provoking: at + pv_at,
                    edge_flags,
                }
            }));
            p += take;
        }
    }
    // An indexed triangle list, the common mesh: every primitive's
    // elements are `3p .. 3p + 3` with the provoking vertex at the same
    // position and all edge flags (`Topology::prim_vertices`), so the
    // shape is read off the first primitive, and the indices are read and
    // looked up in one loop without a call per vertex (the general loop
    // below asked the topology per triangle and called the lookup and the
    // index read per vertex: ~86 instructions a vertex index of
    // textured_mesh, callgrind, 2026-12-07).  The same vertex ids, dedup
    // lookups and segment breaks in the same order: the same segments.
    let indexed_list = match index {
        Some(ix) if !unshared && topo.mode == PrimType::Triangles => Some(ix),
        _ => None,
    };
    if let Some(ix) = indexed_list {
        let (pv_at, edge_flags) = list_shape(topo, part.first_prim, n);
        let bias = info.index_bias as i64;
        for p in part.first_prim..part.first_prim + part.num_prims {
            if out[seg_idx].vids.len() + verts_per + 1 > SEGMENT_MAX_VERTS {
                seg_idx = next_segment(out, used, part, topo.kind);
                dedup.clear();
            }
            let seg = &mut out[seg_idx];
            let first = base_elem + 3 * p as u64;
            let mut local = [0u16; 3];
            for (k, slot) in local.iter_mut().enumerate() {
                let vid = read_index(ix.bytes, ix.offset, ix.size, first + k as u64) as i64 + bias;
                *slot = local_slot(seg, dedup, vid);
            }
            seg.prims.push(AssembledPrim {
                v: local,
                provoking: local[pv_at],
                edge_flags,
            });
        }
    }
    let shared = if unshared || indexed_list.is_some() {
        0..0
    } else {
        part.first_prim..part.first_prim + part.num_prims
    };
    for p in shared {
        let (elems, pv_elem, edge_flags) = topo.prim(p, n);
        // Make room: a primitive adds at most `verts_per` vertices (plus a
        // provoking vertex outside the primitive, for quads).
        if out[seg_idx].vids.len() + verts_per + 1 > SEGMENT_MAX_VERTS {
            seg_idx = next_segment(out, used, part, topo.kind);
            dedup.clear();
        }
        let seg = &mut out[seg_idx];
        let mut slot_of = |e: u32| local_slot(seg, dedup, vid_of(e));
        let mut local = [0u16; 3];
        let mut provoking = None;
        for k in 0..verts_per {
            local[k] = slot_of(elems[k]);
            if elems[k] == pv_elem {
                provoking = Some(local[k]);
            }
        }
        // The provoking vertex is one of the primitive's own but for quads
        // (the quad's last vertex): look it up only then.
        let provoking = provoking.unwrap_or_else(|| slot_of(pv_elem));
        seg.prims.push(AssembledPrim {
            v: local,
            provoking,
            edge_flags,
        });
    }
    // Drop a trailing empty segment (a part with no primitives).
    if out[seg_idx].prims.is_empty() {
        *used -= 1;
    }
}

/// The position of a list's provoking vertex in each primitive and its
/// edge flags, read off primitive `p` of a run of `n` elements: in a
/// list every primitive has the same shape (`Topology::prim_vertices`).
#[inline]
fn list_shape(topo: Topology, p: u32, n: u32) -> (usize, u8) {
    let (elems, pv_elem, edge_flags) = topo.prim(p, n);
    let verts_per = topo.kind.vertices();
    let pv_at = (0..verts_per)
        .rev()
        .find(|&k| elems[k] == pv_elem)
        .unwrap_or(0);
    (pv_at, edge_flags)
}

/// The local slot of vertex `vid` in `seg`, appending it to the segment's
/// vertices the first time `dedup` sees it.
#[inline(always)]
fn local_slot(seg: &mut Segment, dedup: &mut VertexDedup, vid: i64) -> u16 {
    let next = seg.vids.len() as u16;
    let (slot, inserted) = dedup.get_or_insert(vid, next);
    if inserted {
        seg.vids.push(vid);
    }
    slot
}

fn next_segment(out: &mut Vec<Segment>, used: &mut usize, part: JobPart, kind: PrimKind) -> usize {
    if *used == out.len() {
        out.push(Segment::default());
    }
    let i = *used;
    out[i].reset(part, kind);
    *used += 1;
    i
}

// ---------------------------------------------------------------------------
// Vertex element decoding (the per-element plan is fetch_plan.rs)
// ---------------------------------------------------------------------------

/// The "missing component" values: (0, 0, 0, 1) as float or integer bits.
#[inline]
fn default_bits(integer: bool) -> [u32; 4] {
    [0, 0, 0, if integer { 1 } else { 1.0f32.to_bits() }]
}

/// Decodes one element of format `d` from `bytes` into four 32-bit values:
/// floats (normalised, scaled, half, small floats) as f32 bits, pure
/// integers as their (sign-extended) integer bits; absent channels read 0,
/// alpha 1 (`pack.rs` does the per-format work).
pub(crate) fn decode_generic(d: &FormatDesc, bytes: &[u8]) -> [u32; 4] {
    match d.channel_type {
        ChannelType::Uint => pack::unpack_rgba_u32(d.format, bytes),
        ChannelType::Sint => pack::unpack_rgba_i32(d.format, bytes).map(|v| v as u32),
        _ => pack::unpack_rgba_f32(d.format, bytes).map(f32::to_bits),
    }
}

/// [`Decode::Unorm16`]: `n` little-endian unorm16 channels, missing ones
/// (0, 0, 0, 1).  The division (not a reciprocal multiply) is what the
/// generic codec computes, so both paths give the same bits.
#[inline]
fn decode_unorm16(bytes: &[u8], n: u8) -> [f32; 4] {
    let ch = |c: usize| match bytes.get(2 * c..2 * c + 2) {
        Some(b) if c < n as usize => u16::from_le_bytes([b[0], b[1]]) as f32 / 65535.0,
        _ if c == 3 => 1.0,
        _ => 0.0,
    };
    [ch(0), ch(1), ch(2), ch(3)]
}

/// A vertex buffer as fetch sees it.
#[derive(Clone, Copy, Default)]
pub struct BufferView<'a> {
    /// The vertex buffer's bytes.
    pub bytes: &'a [u8],
    /// Bytes between vertices (0: every vertex reads the same element).
    pub stride: u32,
    /// Byte offset of vertex 0.
    pub offset: u32,
}

/// Fills `seg.batch`'s inputs, `vertex_id` and `instance_id` from the
/// vertex buffers.  `buffers[i]` is vertex buffer slot `i`.
#[multiversion(
    targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"),
    attrs(allow(dead_code))
)]
pub fn fetch_segment(
    seg: &mut Segment,
    info: &DrawInfo,
    plan: &[ElementFetch],
    vs: &ShaderInfo,
    buffers: &[BufferView<'_>],
) {
    // SAFETY: the expression is true only in the x86-64-v3 clone (run
    // where the CPU has those features) or in a build that requires them.
    let v3 = unsafe {
        X86V3::in_clone(multiversion::target::target_cfg_f!(all(
            target_feature = "avx2",
            target_feature = "fma"
        )))
    };
    let count = seg.vids.len();
    let groups = count.div_ceil(LANES).max(1);
    let batch = &mut seg.batch;
    batch.count = count;
    batch.groups = groups;
    resize_lanes(&mut batch.inputs, plan.len() * 4 * groups);
    resize_lanes(&mut batch.vertex_id, groups);
    resize_lanes(&mut batch.instance_id, groups);

    let instance_id = info.start_instance.wrapping_add(seg.part.instance);
    let inst_bits = f32::from_bits(instance_id);
    batch
        .instance_id
        .iter_mut()
        .for_each(|l| *l = Lanes::splat(inst_bits));
    {
        let vid_flat: &mut [f32] = lanes_as_flat_mut(&mut batch.vertex_id);
        for (i, &v) in seg.vids.iter().enumerate() {
            vid_flat[i] = f32::from_bits(v as i32 as u32);
        }
    }

    for (slot, el) in plan.iter().enumerate() {
        let integer = vs
            .inputs
            .get(slot)
            .is_some_and(|s| matches!(s.kind, ScalarKind::Sint | ScalarKind::Uint))
            || el.format.desc().is_integer();
        let rows = &mut batch.inputs[slot * 4 * groups..(slot + 1) * 4 * groups];
        let Some(bslot) = el.buffer else {
            fill_default(rows, groups, integer);
            continue;
        };
        let vb = buffers.get(bslot as usize).copied().unwrap_or_default();
        let per_instance = el.instance_divisor != 0;
        let inst_elem = if per_instance {
            info.start_instance as u64 + (seg.part.instance / el.instance_divisor) as u64
        } else {
            0
        };
        // Address of vertex `v`: offset + src_offset + stride * index, with
        // `index` the vertex id (or the instance element).
        let addr = |vid: i64| -> Option<usize> {
            let index = if per_instance { inst_elem as i64 } else { vid };
            if index < 0 {
                return None;
            }
            let a = vb.offset as u64 + el.src_offset as u64 + vb.stride as u64 * index as u64;
            let end = a.checked_add(el.bytes as u64)?;
            if end > vb.bytes.len() as u64 {
                None
            } else {
                Some(a as usize)
            }
        };
        let flat = lanes_as_flat_mut(rows);
        let row_len = groups * LANES;
        let n_bytes = el.bytes as usize;
        let vids = &seg.vids[..count];
        // The gathered path: per-vertex elements whose bytes are whole
        // words (the address is linear in the vertex id).
        let words_of = |w: WordDecode| {
            (!per_instance && n_bytes == 4 * w.words()).then_some((
                w,
                vb.offset as u64 + el.src_offset as u64,
                vb.stride as u64,
            ))
        };
        let src = ElementRows {
            flat,
            row_len,
            vids,
            addr,
            bytes: vb.bytes,
            n_bytes,
            el,
        };
        match el.decode {
            Decode::F32(n) => {
                let n = (n as usize).min(4);
                let defaults = default_bits(false).map(f32::from_bits);
                let words = words_of(WordDecode::F32(n as u8));
                decode_rows(v3, src, words, |px| {
                    let mut v = defaults;
                    for (c, d) in v.iter_mut().enumerate().take(n) {
                        if let Some(b) = px.get(4 * c..4 * c + 4) {
                            *d = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                        }
                    }
                    v
                });
            }
            Decode::Unorm8(n) => {
                let n = (n as usize).min(4);
                const K: f32 = 1.0 / 255.0;
                let words = (n == 4).then_some(WordDecode::Unorm8x4).and_then(words_of);
                decode_rows(v3, src, words, |px| {
                    // RGBA8 colours, the common case, without the loop.
                    if let (4, &[r, g, b, a, ..]) = (n, px) {
                        return [r as f32 * K, g as f32 * K, b as f32 * K, a as f32 * K];
                    }
                    let mut v = [0.0, 0.0, 0.0, 1.0];
                    for (d, &b) in v.iter_mut().zip(px).take(n) {
                        *d = b as f32 * K;
                    }
                    v
                });
            }
            Decode::Unorm16(n) => {
                let words = (n == 2).then_some(WordDecode::Unorm16x2).and_then(words_of);
                decode_rows(v3, src, words, |px| {
                    // Two-channel positions and texture coordinates first.
                    if let (2, &[x0, x1, y0, y1, ..]) = (n, px) {
                        let ch = |lo, hi| u16::from_le_bytes([lo, hi]) as f32 / 65535.0;
                        return [ch(x0, x1), ch(y0, y1), 0.0, 1.0];
                    }
                    decode_unorm16(px, n)
                });
            }
            Decode::Generic(d) => {
                decode_rows(v3, src, None, |px| {
                    decode_generic(d, px).map(f32::from_bits)
                });
            }
        }
        // Padding lanes repeat vertex 0 so shaders never see garbage.
        if count > 0 {
            for c in 0..4 {
                let first = flat[c * row_len];
                flat[c * row_len + count..(c + 1) * row_len].fill(first);
            }
        }
    }
}

/// One vertex element's source (the vertex ids, where each one's bytes are
/// and the buffer) and destination (four component rows of `row_len`
/// floats in `flat`), for [`decode_rows`].
struct ElementRows<'a, A> {
    flat: &'a mut [f32],
    row_len: usize,
    vids: &'a [i64],
    addr: A,
    bytes: &'a [u8],
    n_bytes: usize,
    el: &'a ElementFetch,
}

/// Decodes element `el` of each of `vids` (`addr` gives its byte offset,
/// `None` when out of range) with `decode` into the four component rows of
/// `flat` (`row_len` floats each).  An out-of-range element reads as the
/// decode of all-zero bytes.
///
/// The rows are split and cut to the vertex count up front so the four
/// stores per vertex carry no bounds checks, and the decode is a closure
/// over one element's bytes so each format's loop is its own tight loop:
/// the indexed `flat[c * row_len + i]` form cost ~50 instructions per
/// element of tiny_tris_1m's RGBA8 colours.  With `words` (formats read
/// as whole 4-byte words; `(decode, base, stride)` of the address
/// `base + stride * vid`), runs of 8 in-range vertices go through
/// [`gather_prefix`] first.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn decode_rows(
    v3: Option<X86V3>,
    src: ElementRows<'_, impl Fn(i64) -> Option<usize>>,
    words: Option<(WordDecode, u64, u64)>,
    decode: impl Fn(&[u8]) -> [f32; 4],
) {
    let ElementRows {
        flat,
        row_len,
        vids,
        addr,
        bytes,
        n_bytes,
        el,
    } = src;
    // The out-of-range value, decoded only if a vertex needs it (a generic
    // decode is ~275 instructions: many_draws fetched it for each of its
    // 10,000 in-range segments a frame).
    let mut oob: Option<[f32; 4]> = None;
    let oob_value = || {
        let d = el.format.desc();
        decode_generic(d, &[0u8; 16][..(d.block_bytes as usize).min(16)]).map(f32::from_bits)
    };
    let count = vids.len().min(row_len);
    let (r0, rest) = flat.split_at_mut(row_len);
    let (r1, rest) = rest.split_at_mut(row_len);
    let (r2, r3) = rest.split_at_mut(row_len);
    let (r0, r1, r2) = (&mut r0[..count], &mut r1[..count], &mut r2[..count]);
    let n3 = count.min(r3.len());
    let r3 = &mut r3[..n3];
    let start = match words {
        Some(w) if n3 == count => gather_prefix(v3, &mut [r0, r1, r2, r3], vids, w, bytes, n_bytes),
        _ => 0,
    };
    for (i, &vid) in vids[..count].iter().enumerate().skip(start) {
        let v = match addr(vid).and_then(|a| bytes.get(a..a + n_bytes)) {
            Some(px) => decode(px),
            None => *oob.get_or_insert_with(oob_value),
        };
        r0[i] = v[0];
        r1[i] = v[1];
        r2[i] = v[2];
        if let Some(w) = r3.get_mut(i) {
            *w = v[3];
        }
    }
}

/// Formats [`gather_prefix`] decodes: read as whole little-endian 4-byte
/// words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WordDecode {
    /// `n` f32 components (one word each); the rest (0, 0, 0, 1).
    F32(u8),
    /// R8G8B8A8_UNORM: one word.
    Unorm8x4,
    /// R16G16_UNORM: one word; (x, y, 0, 1).
    Unorm16x2,
}

impl WordDecode {
    fn words(self) -> usize {
        match self {
            WordDecode::F32(n) => n as usize,
            WordDecode::Unorm8x4 | WordDecode::Unorm16x2 => 1,
        }
    }
}

/// Decodes vertices `vids` 8 at a time with one AVX2 gather per word into
/// the four component rows, while all 8 are in range; returns how many
/// vertices it decoded (a multiple of 8; the scalar loop does the rest).
/// Bit for bit the scalar decoders of `fetch_segment`: the same integer
/// to float conversions followed by the same multiply (`* (1 / 255)`) or
/// division (`/ 65535`).  The scalar loop decoded and scattered one
/// element at a time: ~50 instructions per element of tiny_tris_1m.
/// `words` is the decode, the first element's byte offset and the stride.
#[inline]
fn gather_prefix(
    v3: Option<X86V3>,
    rows: &mut [&mut [f32]; 4],
    vids: &[i64],
    words: (WordDecode, u64, u64),
    bytes: &[u8],
    n_bytes: usize,
) -> usize {
    #[cfg(target_arch = "x86_64")]
    if v3.is_some() {
        // SAFETY: an `X86V3` token exists only on a CPU with AVX2 and FMA.
        return unsafe { gather_prefix_avx2(rows, vids, words, bytes, n_bytes) };
    }
    // without AVX2 every vertex takes the scalar loop
    let _ = (v3, rows, vids, words, bytes, n_bytes);
    0
}

/// [`gather_prefix`] with AVX2.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn gather_prefix_avx2(
    rows: &mut [&mut [f32]; 4],
    vids: &[i64],
    (w, base, stride): (WordDecode, u64, u64),
    bytes: &[u8],
    n_bytes: usize,
) -> usize {
    use core::arch::x86_64::*;
    let count = vids
        .len()
        .min(rows.iter().map(|r| r.len()).min().unwrap_or(0));
    let mut done = 0;
    for chunk in vids[..count].chunks_exact(LANES) {
        // In range when the smallest id is not negative and the largest
        // element ends inside the buffer (the address grows with the id),
        // and byte offsets fit the gather's i32 lanes.
        // A loop, not `fold`: its closure stayed a call per id in the
        // baseline build.
        let (mut lo, mut hi) = (i64::MAX, i64::MIN);
        for &v in chunk {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        let end = (hi as u64)
            .checked_mul(stride)
            .and_then(|a| a.checked_add(base))
            .and_then(|a| a.checked_add(n_bytes as u64));
        if lo < 0 || !end.is_some_and(|e| e <= bytes.len() as u64 && e <= i32::MAX as u64) {
            break;
        }
        // Every offset `base + stride * vid` is at most `end - n_bytes`
        // (< 2^31), so the i32 arithmetic below is exact.  Intrinsics, not
        // `wide` and no closures: in a baseline build both stay SSE (two
        // halves per register, closures without this function's features,
        // each gather a call), which made this loop 70 % slower there on
        // tiny_tris_1m.
        let ids = _mm256_setr_epi32(
            chunk[0] as i32,
            chunk[1] as i32,
            chunk[2] as i32,
            chunk[3] as i32,
            chunk[4] as i32,
            chunk[5] as i32,
            chunk[6] as i32,
            chunk[7] as i32,
        );
        let addr = _mm256_add_epi32(
            _mm256_set1_epi32(base as i32),
            _mm256_mullo_epi32(_mm256_set1_epi32(stride as i32), ids),
        );
        let v: [__m256; 4] = match w {
            WordDecode::F32(n) => {
                let mut v = [_mm256_setzero_ps(); 4];
                for (c, vc) in v.iter_mut().enumerate() {
                    *vc = if c < n as usize {
                        // SAFETY: c < n_bytes / 4, and the bounds above.
                        _mm256_castsi256_ps(unsafe { gather_word(bytes, addr, c) })
                    } else {
                        _mm256_set1_ps(f32::from_bits(default_bits(false)[c]))
                    };
                }
                v
            }
            WordDecode::Unorm8x4 => {
                // SAFETY: word 0 lies inside every element (the bounds above).
                let x = unsafe { gather_word(bytes, addr, 0) };
                [
                    // SAFETY (each): AVX2, the function's contract.
                    unsafe { unorm8(x) },
                    unsafe { unorm8(_mm256_srli_epi32::<8>(x)) },
                    unsafe { unorm8(_mm256_srli_epi32::<16>(x)) },
                    unsafe { unorm8(_mm256_srli_epi32::<24>(x)) },
                ]
            }
            WordDecode::Unorm16x2 => {
                // SAFETY: as above.
                let x = unsafe { gather_word(bytes, addr, 0) };
                let half = _mm256_set1_epi32(0xffff);
                let d = _mm256_set1_ps(65535.0);
                [
                    _mm256_div_ps(_mm256_cvtepi32_ps(_mm256_and_si256(x, half)), d),
                    _mm256_div_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32::<16>(x)), d),
                    _mm256_setzero_ps(),
                    _mm256_set1_ps(1.0),
                ]
            }
        };
        for (row, lanes) in rows.iter_mut().zip(v) {
            let to = &mut row[done..done + LANES];
            // SAFETY: `to` is LANES = 8 writable floats.
            unsafe { _mm256_storeu_ps(to.as_mut_ptr(), lanes) };
        }
        done += LANES;
    }
    done
}

/// The low byte of each lane as a unorm value (`v & 255`, over 255).
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn unorm8(v: core::arch::x86_64::__m256i) -> core::arch::x86_64::__m256 {
    use core::arch::x86_64::*;
    // SAFETY: the caller's contract.
    unsafe {
        let b = _mm256_and_si256(v, _mm256_set1_epi32(0xff));
        _mm256_mul_ps(_mm256_cvtepi32_ps(b), _mm256_set1_ps(1.0 / 255.0))
    }
}

/// Word `k` of the element at each lane's byte offset `addr`.
///
/// # Safety
/// The CPU has AVX2, and every lane's 4 bytes at `addr + 4k` lie inside
/// `bytes`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn gather_word(
    bytes: &[u8],
    addr: core::arch::x86_64::__m256i,
    k: usize,
) -> core::arch::x86_64::__m256i {
    use core::arch::x86_64::{_mm256_add_epi32, _mm256_i32gather_epi32, _mm256_set1_epi32};
    // SAFETY: the caller's contract; the gather has no alignment
    // requirement.
    unsafe {
        let a = _mm256_add_epi32(addr, _mm256_set1_epi32(4 * k as i32));
        _mm256_i32gather_epi32::<1>(bytes.as_ptr().cast::<i32>(), a)
    }
}

fn fill_default(rows: &mut [Lanes], groups: usize, integer: bool) {
    let d = default_bits(integer);
    for c in 0..4 {
        rows[c * groups..(c + 1) * groups]
            .iter_mut()
            .for_each(|l| *l = Lanes::splat(f32::from_bits(d[c])));
    }
}

/// A lane buffer as a flat float slice (`LANES` floats per register).
#[inline]
pub(crate) fn lanes_as_flat_mut(v: &mut [Lanes]) -> &mut [f32] {
    bytemuck::cast_slice_mut(v)
}

// ---------------------------------------------------------------------------
// The system
// ---------------------------------------------------------------------------

/// The `Fetch` system: assembles the planned wave's primitives and fetches
/// their vertex attributes into SoA lanes, in parallel over jobs (the
/// wave was planned by `scene::plan_wave` just before).
pub(crate) fn fetch_vertices(
    pool: Res<PipelineExecutor>,
    scene: Res<RecordedScene>,
    mut exec: ResMut<SceneExecution>,
    counters: Res<PipelineCounters>,
    mut dedups: Local<Vec<VertexDedup>>,
) {
    ferropipe_profiling::scope!("fetch_vertices");
    let _time = counters.0.time_stage(PipelineSet::Fetch.stage());
    let exec = &mut *exec;
    let resources = std::mem::take(&mut exec.vertex_resources);
    {
        let locks = LockSet::acquire(resources.iter().map(|r| (r, false)));
        let states = &exec.states;
        let scene = &*scene;
        let locks = &locks;
        let work = |job: &mut FrontJob, dedup: &mut VertexDedup| {
            ferropipe_profiling::scope!("fetch_job");
            let FrontJob {
                parts,
                segments,
                used,
                ..
            } = job;
            // The vertex-buffer views, rebuilt only when a part's block
            // binds another array (not per part: one draw per part is
            // many_draws' 10,000 collects).
            let mut buffers: Vec<BufferView<'_>> = Vec::new();
            let mut buffers_of: Option<*const VertexBufferSlots> = None;
            for part in parts.iter() {
                let Command::Draw { info, .. } = &scene.commands[part.command as usize] else {
                    continue;
                };
                let ds = &states[part.state as usize];
                let topo = Topology::new(info.mode, ds.setup.flatshade_first);
                let ib = &ds.block.index_buffer;
                let index = if info.indexed {
                    Some(IndexSource {
                        bytes: ib.buffer.as_deref().map_or(&[][..], |r| locks.bytes(r)),
                        offset: ib.offset,
                        size: ib.index_size,
                    })
                } else {
                    None
                };
                let first_new = *used;
                assemble_part(*part, info, topo, index, dedup, segments, used);
                let vbs = &ds.block.vertex_buffers;
                if buffers_of != Some(Arc::as_ptr(vbs)) {
                    buffers_of = Some(Arc::as_ptr(vbs));
                    buffers.clear();
                    buffers.extend(vbs.iter().map(|vb| BufferView {
                        bytes: vb.buffer.as_deref().map_or(&[][..], |r| locks.bytes(r)),
                        stride: vb.stride,
                        offset: vb.buffer_offset,
                    }));
                }
                for seg in &mut segments[first_new..*used] {
                    fetch_segment(seg, info, &ds.fetch.elements, &ds.shade.vs_info, &buffers);
                }
            }
        };
        for_each_job_with(&pool.0, &mut exec.wave, &mut dedups, &work);
    }
    exec.vertex_resources = resources;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fetch_plan::classify_decode;
    use ferropipe_components::format::Format;

    #[test]
    fn strip_and_fan_orders_follow_draw() {
        let last = Topology::new(PrimType::TriangleStrip, false);
        assert_eq!(last.prim(0, 5).0, [0, 1, 2]);
        assert_eq!(last.prim(1, 5).0, [2, 1, 3]);
        let first = Topology::new(PrimType::TriangleStrip, true);
        assert_eq!(first.prim(1, 5).0, [1, 3, 2]);
        let fan_first = Topology::new(PrimType::TriangleFan, true);
        assert_eq!(
            fan_first.prim(0, 5).0,
            [1, 2, 0],
            "provoking = second vertex"
        );
        let quads_first = Topology::new(PrimType::Quads, true);
        assert_eq!(quads_first.prim(0, 4).0, [0, 1, 3], "split along 1-3");
        assert_eq!(quads_first.prim(0, 4).1, 3, "quads always provoke last");
        assert_eq!(quads_first.prim(1, 4).0, [1, 2, 3]);
        let quads_last = Topology::new(PrimType::Quads, false);
        assert_eq!(quads_last.prim(0, 4).0, [0, 1, 2], "split along 0-2");
        assert_eq!(quads_last.prim(0, 4).1, 3);
        assert_eq!(quads_last.prim(1, 4).0, [0, 2, 3]);
        let poly_last = Topology::new(PrimType::Polygon, false);
        assert_eq!(poly_last.prim(1, 5).0, [2, 3, 0]);
        assert_eq!(poly_last.prim(1, 5).1, 0, "polygon provokes first");
        assert_eq!(poly_last.prims_in_run(5), 3);
        let lp = Topology::new(PrimType::LineLoop, false);
        assert_eq!(lp.prims_in_run(4), 4);
        assert_eq!(lp.prim(3, 4).0[..2], [3, 0]);
        let tsa = Topology::new(PrimType::TriangleStripAdjacency, false);
        assert_eq!(tsa.prims_in_run(8), 2);
        assert_eq!(tsa.prim(1, 8).0, [4, 2, 6]);
    }

    /// Indexed triangle lists (their own loop in `assemble_part`): every
    /// primitive's local vertices name its three indices plus the bias,
    /// the provoking vertex is the first or the last, each segment holds
    /// its vertices once and at most `SEGMENT_MAX_VERTS` of them, and the
    /// primitives come in order, for every index size, a part starting
    /// mid-run, and indices past the buffer (read as 0).
    #[test]
    fn indexed_triangle_lists_assemble_their_indices() {
        let mut seed = 12345u32;
        let mut rnd = move |m: u32| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed % m
        };
        for size in [1u32, 2, 4] {
            for first in [false, true] {
                let n_idx = 1200u32;
                let idx: Vec<u32> = (0..n_idx)
                    .map(|_| rnd(if size == 1 { 200 } else { 600 }))
                    .collect();
                let mut bytes: Vec<u8> = idx
                    .iter()
                    .flat_map(|&v| v.to_le_bytes()[..size as usize].to_vec())
                    .collect();
                // the last 30 indices lie past the buffer
                bytes.truncate(bytes.len() - 30 * size as usize);
                let info = DrawInfo {
                    mode: PrimType::Triangles,
                    start: 3,
                    count: n_idx - 3,
                    indexed: true,
                    index_bias: -7,
                    ..DrawInfo::default()
                };
                let part = JobPart {
                    run_len: n_idx - 3,
                    first_prim: 5,
                    num_prims: 390,
                    ..JobPart::default()
                };
                let topo = Topology::new(PrimType::Triangles, first);
                let ix = IndexSource {
                    bytes: &bytes,
                    offset: 0,
                    size,
                };
                let (mut dedup, mut out, mut used) = (VertexDedup::default(), Vec::new(), 0);
                assemble_part(part, &info, topo, Some(ix), &mut dedup, &mut out, &mut used);
                let mut p = part.first_prim;
                for seg in &out[..used] {
                    assert!(seg.vids.len() <= SEGMENT_MAX_VERTS);
                    let mut seen = seg.vids.clone();
                    seen.sort_unstable();
                    seen.dedup();
                    assert_eq!(seen.len(), seg.vids.len(), "a vertex twice in a segment");
                    for ap in &seg.prims {
                        for k in 0..3 {
                            let e = (info.start + 3 * p + k as u32) as usize;
                            let want = if e < n_idx as usize - 30 {
                                idx[e] as i64
                            } else {
                                0
                            } - 7;
                            assert_eq!(seg.vids[ap.v[k] as usize], want, "prim {p} vertex {k}");
                        }
                        assert_eq!(ap.provoking, ap.v[if first { 0 } else { 2 }]);
                        assert_eq!(ap.edge_flags, EDGE_FLAGS_ALL);
                        p += 1;
                    }
                }
                assert_eq!(p, part.first_prim + part.num_prims);
                // (8-bit indices name at most 256 vertices: one segment)
                assert!(size == 1 || used > 1, "the part spans several segments");
            }
        }
    }

    #[test]
    fn restart_splits_runs_before_bias() {
        let idx: Vec<u8> = [0u16, 1, 2, 0xffff, 3, 4, 5, 0xffff]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let mut runs = Vec::new();
        let n = restart_runs(&idx, 0, 2, 0, 8, 0xffff, &mut runs);
        assert_eq!(runs, vec![(0, 3), (4, 3)]);
        assert_eq!(n, 2);
        // Out-of-bounds indices read as zero, never panic.
        assert_eq!(read_index(&idx, 0, 4, 1000), 0);
        assert_eq!(read_index(&idx, u32::MAX, 4, u64::MAX / 8), 0);
    }

    /// The tail past the buffer is handled at once, exactly as reading
    /// each of its zero indices would, and a huge count stays cheap.
    #[test]
    fn restart_runs_past_the_buffer_match_the_element_walk() {
        let idx: Vec<u8> = [0u16, 1, 0, 2, 3]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        for (offset, start, count, restart) in [
            (0, 0, 9, 0),
            (0, 0, 9, 3),
            (2, 1, 7, 0),
            (0, 4, 3, 0),
            (0, 9, 4, 0),
            (0, 9, 4, 1),
            (12, 0, 3, 0),
            (1, 0, 6, 0),
        ] {
            let mut walk = Vec::new();
            let mut restarts = 0;
            let mut run_start = 0;
            for e in 0..count {
                if read_index(&idx, offset, 2, start as u64 + e as u64) == restart {
                    if e > run_start {
                        walk.push((run_start, e - run_start));
                    }
                    run_start = e + 1;
                    restarts += 1;
                }
            }
            if count > run_start {
                walk.push((run_start, count - run_start));
            }
            let mut runs = Vec::new();
            let n = restart_runs(&idx, offset, 2, start, count, restart, &mut runs);
            assert_eq!(
                (runs, n),
                (walk, restarts),
                "{offset} {start} {count} {restart}"
            );
        }
        let mut runs = Vec::new();
        let t = std::time::Instant::now();
        assert_eq!(
            restart_runs(&idx, 0, 2, 0, u32::MAX, 0, &mut runs),
            u32::MAX - 3
        );
        assert_eq!(runs, vec![(1, 1), (3, 2)]);
        assert!(t.elapsed().as_secs() < 1);
    }

    #[test]
    fn unorm16_decode_matches_the_generic_codec() {
        let mut next = crate::tests::xorshift32(0x2545_f491);
        for f in [
            Format::R16_UNORM,
            Format::R16G16_UNORM,
            Format::R16G16B16_UNORM,
            Format::R16G16B16A16_UNORM,
        ] {
            let d = f.desc();
            let Decode::Unorm16(n) = classify_decode(d) else {
                panic!("{f} is not on the unorm16 path");
            };
            for i in 0..5000u32 {
                let x = next();
                let mut bytes = [0u8; 8];
                bytes[..4].copy_from_slice(&x.to_le_bytes());
                bytes[4..].copy_from_slice(&(x ^ i).to_le_bytes());
                let bytes = &bytes[..d.block_bytes as usize];
                let generic = decode_generic(d, bytes).map(f32::from_bits);
                assert_eq!(decode_unorm16(bytes, n), generic, "{f} {bytes:?}");
            }
        }
    }

    #[test]
    fn generic_decode_matches_formats() {
        let d = Format::R16G16_UNORM.desc();
        let v = decode_generic(d, &[0xff, 0xff, 0, 0x80]);
        assert_eq!(f32::from_bits(v[0]), 1.0);
        assert!((f32::from_bits(v[1]) - 32768.0 / 65535.0).abs() < 1e-7);
        assert_eq!(f32::from_bits(v[3]), 1.0);
        let d = Format::R8G8B8A8_SNORM.desc();
        let v = decode_generic(d, &[0x80, 0x7f, 0, 0xff]);
        assert_eq!(f32::from_bits(v[0]), -1.0);
        assert_eq!(f32::from_bits(v[1]), 1.0);
        let d = Format::R16G16B16A16_SINT.desc();
        let v = decode_generic(d, &[0xff, 0xff, 2, 0, 0, 0, 0, 0]);
        assert_eq!(v[0] as i32, -1);
        assert_eq!(v[1], 2);
        let d = Format::R10G10B10A2_UNORM.desc();
        let v = decode_generic(d, &[0xff, 0x03, 0, 0xc0]);
        assert_eq!(f32::from_bits(v[0]), 1.0);
        assert_eq!(f32::from_bits(v[3]), 1.0);
        let d = Format::R32G32B32_UINT.desc();
        assert_eq!(decode_generic(d, &[0; 12])[3], 1, "integer 1 fills alpha");
    }

    #[test]
    fn gathered_words_match_the_generic_codec() {
        // Random buffer bytes; ids in runs of 8 that are in range, then a
        // run that reaches past the end (the gather stops there).
        let mut next = crate::tests::xorshift32(0x9e37_79b9);
        // Finite floats only: a NaN's payload is not what is compared here.
        let bytes: Vec<u8> = (0..4096)
            .flat_map(|_| ((next() % 2000) as f32 - 1000.0).to_le_bytes())
            .collect();
        let stride = 20u64;
        let base = 6u64;
        for (w, f) in [
            (WordDecode::Unorm8x4, Format::R8G8B8A8_UNORM),
            (WordDecode::Unorm16x2, Format::R16G16_UNORM),
            (WordDecode::F32(3), Format::R32G32B32_FLOAT),
            (WordDecode::F32(2), Format::R32G32_FLOAT),
        ] {
            let d = f.desc();
            let n_bytes = d.block_bytes as usize;
            let last = (bytes.len() as u64 - base - n_bytes as u64) / stride;
            let mut vids: Vec<i64> = (0..32)
                .map(|_| (next() as u64 % (last + 1)) as i64)
                .collect();
            vids.extend((0..8).map(|k| last as i64 - 3 + k));
            let mut rows = vec![vec![f32::NAN; vids.len()]; 4];
            let [r0, r1, r2, r3] = &mut rows[..] else {
                unreachable!()
            };
            let done = gather_prefix(
                X86V3::detect(),
                &mut [&mut r0[..], &mut r1[..], &mut r2[..], &mut r3[..]],
                &vids,
                (w, base, stride),
                &bytes,
                n_bytes,
            );
            if X86V3::detect().is_some() {
                assert_eq!(done, 32, "{f}: the in-range runs, not the last");
            }
            for (i, &vid) in vids[..done].iter().enumerate() {
                let a = (base + stride * vid as u64) as usize;
                let px = &bytes[a..a + n_bytes];
                // fetch_segment's RGBA8 case multiplies by 1/255 (the
                // generic codec divides); the others are the codec's.
                let want = if w == WordDecode::Unorm8x4 {
                    std::array::from_fn(|c| px[c] as f32 * (1.0 / 255.0))
                } else {
                    decode_generic(d, px).map(f32::from_bits)
                };
                let got = [rows[0][i], rows[1][i], rows[2][i], rows[3][i]];
                assert_eq!(
                    got.map(f32::to_bits),
                    want.map(f32::to_bits),
                    "{f} vertex {vid}"
                );
            }
        }
    }
}
