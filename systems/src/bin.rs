//! Equivalent of llvmpipe's `lp_setup_bin_triangle` (`lp_setup_tri.c`) and
//! `lp_scene.c`'s bins: each set-up primitive is appended to the command
//! list of every 64x64 tile it touches, with the edges that still need
//! per-pixel evaluation in that tile.
//!
//! Binning is per front-end job (each worker bins its own job), into a
//! compressed-by-tile list ([`JobBins`]); the back end walks a tile's entries
//! job by job, in job order, so the result is independent of how many
//! workers binned.
//!
//! Whole-tile classification: an entry whose edges all accept the whole tile
//! and whose bounding box covers the tile is `FULL_TILE`; with opaque state
//! it is also `OPAQUE`, and the back end starts the tile at the last opaque
//! entry (what makes `fill_overdraw` cheap: earlier layers are never shaded).

use ferropipe_components::batch::{
    BinEntry, ClearValue, JobBins, MAX_EDGES, Plane, SetupPrim, SetupPrims, TILE_ORDER, bin_flags,
};
use ferropipe_components::enums::ClearFlags;
use ferropipe_components::simd::X86V3;
use multiversion::multiversion;

use crate::derived::DerivedState;
use crate::lanes::{self, PREFETCH_DISTANCE, Rect, TileGrid, prefetch_planes};
use bevy_ecs::prelude::*;
use ferropipe_profiling::{Counter, Counts};

use crate::job::{
    FrontJob, PipelineCounters, PipelineExecutor, SceneExecution, binned_size, for_each_job_with,
};
use crate::merge::DepthFormat;
use crate::sets::PipelineSet;

/// Edge classification over the pixels of `r`: `None` if the edge rejects
/// every pixel, else whether it accepts all of them.
#[inline]
pub(crate) fn classify_edge(p: &SetupPrim, e: usize, r: &Rect) -> Option<bool> {
    let (a, b) = (p.a[e] as i64, p.b[e] as i64);
    let v = p.c[e] + a * r.x0 as i64 + b * r.y0 as i64;
    let (sx, sy) = ((r.x1 - r.x0 - 1) as i64, (r.y1 - r.y0 - 1) as i64);
    let max = v + a.max(0) * sx + b.max(0) * sy;
    if max <= 0 {
        return None;
    }
    let min = v + a.min(0) * sx + b.min(0) * sy;
    Some(min > 0)
}

/// Every edge of `p` classified over the pixels of `r` at once: `None`
/// if one of them rejects every pixel, else the mask of the edges that
/// accept only some ([`classify_edge`] for each edge, the same 64-bit
/// sums).
///
/// Why in lanes: one edge at a time was ~25 instructions of 64-bit
/// multiplies, sign masks and spills per edge, plus ~35 to combine them,
/// ~110 of the ~220 a bin entry cost in tiny_tris_1m (callgrind,
/// 2026-12-06), where nearly every triangle has one entry.  With AVX2 the
/// record's four edges are four 64-bit lanes: `vpmuldq` makes each
/// 32 x 32-bit product exactly, as the scalar `i64` multiply does.
#[inline(always)]
fn classify_edges(v3: Option<X86V3>, p: &SetupPrim, n_edges: usize, r: &Rect) -> Option<u8> {
    #[cfg(target_arch = "x86_64")]
    if let Some(v3) = v3 {
        let live = (1u8 << n_edges) - 1;
        let (accepts, some) = v3_classify(v3, p, r);
        if some & live != live {
            return None;
        }
        return Some(!accepts & live);
    }
    let _ = v3;
    let mut edge_mask = 0u8;
    for e in 0..n_edges {
        match classify_edge(p, e, r) {
            None => return None,
            Some(true) => {}
            Some(false) => edge_mask |= 1 << e,
        }
    }
    Some(edge_mask)
}

/// [`classify_edges`]' four edges in AVX2 lanes: bit `e` of the first
/// mask says edge `e` accepts every pixel of `r` (its least value is
/// positive), of the second that it accepts some (its greatest is).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn v3_classify(v3: X86V3, p: &SetupPrim, r: &Rect) -> (u8, u8) {
    use core::arch::x86_64::*;
    // The steps sign-extended to 64 bits, and the values at the corner.
    let (a, b, v) = lanes::v3_lanes::record_edges_at(v3, p, r.x0, r.y0);
    // SAFETY: the token proves AVX2.
    unsafe {
        let zero = _mm256_setzero_si256();
        let sx = _mm256_set1_epi64x((r.x1 - r.x0 - 1) as i64);
        let sy = _mm256_set1_epi64x((r.y1 - r.y0 - 1) as i64);
        // (max(a, 0) and min(a, 0) as selects on a's sign: AVX2 has no
        // 64-bit min/max)
        let (an, bn) = (_mm256_cmpgt_epi64(zero, a), _mm256_cmpgt_epi64(zero, b));
        let (a_lo, b_lo) = (_mm256_and_si256(an, a), _mm256_and_si256(bn, b));
        let (a_hi, b_hi) = (_mm256_andnot_si256(an, a), _mm256_andnot_si256(bn, b));
        let max = _mm256_add_epi64(
            v,
            _mm256_add_epi64(_mm256_mul_epi32(a_hi, sx), _mm256_mul_epi32(b_hi, sy)),
        );
        let min = _mm256_add_epi64(
            v,
            _mm256_add_epi64(_mm256_mul_epi32(a_lo, sx), _mm256_mul_epi32(b_lo, sy)),
        );
        let bits = |m: __m256i| _mm256_movemask_pd(_mm256_castsi256_pd(m)) as u8;
        (
            bits(_mm256_cmpgt_epi64(min, zero)),
            bits(_mm256_cmpgt_epi64(max, zero)),
        )
    }
}

/// Reusable scratch of the binner.
#[derive(Default)]
pub struct BinScratch {
    pending: Vec<(u32, BinEntry)>,
    /// Per tile, the next free entry of [`compress`]'s scatter.
    cursor: Vec<u32>,
    /// Per record of the job, its index after [`order_prims_by_tile`].
    remap: Vec<u32>,
    /// Per tile, one past the last record binned into it (`bin_prims`'
    /// count of the walk's jumps).
    next: Vec<u32>,
    /// Reordered records and planes, swapped with the job's.
    prims: Vec<SetupPrim>,
    planes: Vec<Plane>,
}

/// Bins `prims` (one job's) into `out`.  `counted[command]` tells whether
/// a command's samples are counted (an entry that may not be skipped; a
/// command past the slice is not).
///
/// Returns the walk's *jumps*: over all tiles, how many times a tile's
/// next entry is not the record right after its previous one, i.e. the
/// runs of adjacent records the tile pass reads in submission order
/// (`walks_in_order`).
#[multiversion(
    targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"),
    attrs(allow(dead_code))
)]
pub fn bin_prims(
    prims: &SetupPrims,
    states: &[DerivedState],
    grid: &TileGrid,
    counted: &[bool],
    scratch: &mut BinScratch,
    out: &mut JobBins,
) -> usize {
    // SAFETY: the expression is true only in the x86-64-v3 clone (run
    // where the CPU has those features) or in a build that requires them.
    let v3 = unsafe {
        X86V3::in_clone(multiversion::target::target_cfg_f!(all(
            target_feature = "avx2",
            target_feature = "fma"
        )))
    };
    scratch.pending.clear();
    scratch.next.clear();
    scratch.next.resize(grid.tiles(), u32::MAX);
    let mut jumps = 0usize;
    let (cols, rows) = (grid.cols as i32, grid.rows as i32);
    for (pi, p) in prims.prims.iter().enumerate() {
        let ds = &states[p.state as usize];
        let tx0 = (p.x0 >> TILE_ORDER).max(0);
        let ty0 = (p.y0 >> TILE_ORDER).max(0);
        let tx1 = ((p.x1 - 1) >> TILE_ORDER).min(cols - 1);
        let ty1 = ((p.y1 - 1) >> TILE_ORDER).min(rows - 1);
        let n_edges = (p.num_edges as usize).min(MAX_EDGES);
        // Entries whose fragment shader has side effects must run even
        // under a later opaque entry: they are never skipped, as counted
        // ones.
        let is_counted = counted.get(p.command as usize).copied().unwrap_or(false);
        let counted_flag = if is_counted || ds.link.fs_info.writes_memory {
            bin_flags::COUNTED
        } else {
            0
        };
        let bbox = Rect {
            x0: p.x0,
            y0: p.y0,
            x1: p.x1,
            y1: p.y1,
        };
        for ty in ty0..=ty1 {
            'tiles: for tx in tx0..=tx1 {
                // The tile's pixels inside the framebuffer: at the right and
                // bottom edges a tile is partial, and an edge beyond them
                // must not stop it from being fully covered.  (From the
                // column and row: `TileGrid::tile_rect` divides by the
                // column count.  That and the `counted` callback this
                // slice replaced were ~10 instructions a primitive.)
                let tile_rect = grid.tile_rect_at(tx as u32, ty as u32);
                let Some(edge_mask) = classify_edges(v3, p, n_edges, &tile_rect) else {
                    continue 'tiles;
                };
                let mut flags = counted_flag;
                // A multisampled record's `c` is the union of its samples':
                // never a whole-tile entry (raster tests every sample).
                if edge_mask == 0 && bbox.contains(&tile_rect) && p.ms == 0 {
                    flags |= bin_flags::FULL_TILE;
                    if ds.tiles.opaque && counted_flag == 0 {
                        flags |= bin_flags::OPAQUE;
                    }
                }
                let t = (ty * cols + tx) as usize;
                if let Some(next) = scratch.next.get_mut(t) {
                    jumps += (*next != pi as u32) as usize;
                    *next = pi as u32 + 1;
                }
                scratch.pending.push((
                    t as u32,
                    BinEntry {
                        prim: pi as u32,
                        edge_mask,
                        _pad: 0,
                        flags,
                    },
                ));
            }
        }
    }
    compress(grid, &scratch.pending, &mut scratch.cursor, out);
    jumps
}

/// Whether a job with `entries` bin entries and `jumps` jumps
/// ([`bin_prims`]) keeps its records in submission order: when its
/// tiles' records already lie in runs of 1.5 records or more on average,
/// the tile pass reads each run as contiguous memory, and
/// [`order_prims_by_tile`] would only copy every record and plane once
/// more (~150 bytes a triangle).
///
/// Meshes drawn in order have runs of two or more (entries per jump:
/// textured_mesh's grid rows 16.9, pbr_barrels' barrels 2.1, many_draws'
/// quads 4.0), scattered triangles runs of one (tiny_tris_1m 1.002,
/// small_tris_100k 1.002): 1.5 lies between them.  The reorder off for
/// every job, paired runs at one thread against it on for every job:
/// textured_mesh 0.955x, pbr_barrels 0.980x, many_draws 0.963x,
/// blend_overdraw 1.014x (one job of 8 entries per jump), small_tris_100k
/// 1.052x, tiny_tris_1m 1.194x.  The choice is the job's own, so the same
/// for any thread count, and changes no image: raster order is the
/// entries' order either way.
fn walks_in_order(entries: usize, jumps: usize) -> bool {
    2 * entries >= 3 * jumps
}

/// Reorders a job's set-up records and their planes into the order the
/// tile pass reads them: tile by tile, each tile in submission order, a
/// record placed where its first tile reads it.  Bin entries are renumbered
/// to match; raster order is unchanged.
///
/// Why: the tile pass walks a tile's entries across all jobs, so with
/// records in submission order it touches one record here and one there all
/// over the scene's arrays (tiny_tris_1m: ~4 records per job per tile, from
/// a 200 MB spread) and stalls on cache and TLB misses (a quarter of that
/// scene's back end).  In tile order each job's records for a tile are
/// contiguous.  A job is 2048 records (~400 KB with planes), so the
/// permutation runs in L2 on the parallel front end.  Jobs whose records
/// already come in runs per tile skip it ([`walks_in_order`]).
#[multiversion(
    targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"),
    attrs(allow(dead_code))
)]
pub(crate) fn order_prims_by_tile(
    prims: &mut SetupPrims,
    states: &[DerivedState],
    bins: &mut JobBins,
    scratch: &mut BinScratch,
) {
    let n = prims.prims.len();
    if n < 2 {
        return;
    }
    scratch.remap.clear();
    scratch.remap.resize(n, u32::MAX);
    scratch.prims.clear();
    scratch.planes.clear();
    // Every record and plane is copied at most once: no growth in the loop.
    scratch.prims.reserve(n);
    scratch.planes.reserve(prims.planes.len());
    for k in 0..bins.entries.len() {
        prefetch_record(prims, &bins.entries, k);
        let e = &mut bins.entries[k];
        let old = e.prim as usize;
        let Some(r) = scratch.remap.get_mut(old) else {
            continue;
        };
        if *r == u32::MAX {
            *r = scratch.prims.len() as u32;
            let mut p = prims.prims[old];
            let np = states
                .get(p.state as usize)
                .map_or(0, |ds| ds.link.planes_per_prim);
            let start = (p.planes as usize).min(prims.planes.len());
            let end = (start + np).min(prims.planes.len());
            p.planes = scratch.planes.len() as u32;
            // Four planes at a time, then the rest one by one: a slice
            // copy of the record's length was a `memcpy` call per record
            // of ~6 planes, costing more than the copy, and the element
            // loop with its capacity test per push ~70 instructions a
            // record more than this (tiny_tris_1m, callgrind).
            let (quads, rest) = prims.planes[start..end].as_chunks::<4>();
            for q in quads {
                scratch.planes.extend_from_slice(q);
            }
            for &pl in rest {
                scratch.planes.push(pl);
            }
            scratch.prims.push(p);
        }
        e.prim = *r;
    }
    // Records no tile reads (outside the framebuffer) are dropped.
    std::mem::swap(&mut prims.prims, &mut scratch.prims);
    std::mem::swap(&mut prims.planes, &mut scratch.planes);
}

/// Prefetches the record entry `k + PREFETCH_DISTANCE` will copy, and the
/// planes of the one half as far ahead.  The entries visit the job's
/// records in tile order, i.e. scattered over the ~400 KB the job's setup
/// wrote, which has left L2 by then: the copy stalled on nearly every
/// record (~60 % of [`order_prims_by_tile`] in tiny_tris_1m).
#[inline]
fn prefetch_record(prims: &SetupPrims, entries: &[BinEntry], k: usize) {
    let record = |i: usize| prims.prims.get(entries.get(i)?.prim as usize);
    if let Some(p) = record(k + PREFETCH_DISTANCE) {
        lanes::prefetch_record(p);
    }
    if let Some(p) = record(k + PREFETCH_DISTANCE / 2) {
        prefetch_planes(prims, p);
    }
}

/// Bins a whole-framebuffer clear: one entry per tile.  `opaque` when the
/// clear writes every attachment of the framebuffer.
pub(crate) fn bin_clear(
    grid: &TileGrid,
    buffers: ClearFlags,
    value: ClearValue,
    opaque: bool,
    out: &mut JobBins,
) {
    out.clears.clear();
    out.clears.push(value);
    out.clear_buffers = buffers;
    let flags =
        bin_flags::CLEAR | bin_flags::FULL_TILE | if opaque { bin_flags::OPAQUE } else { 0 };
    let n = grid.tiles();
    out.tile_start.clear();
    out.tile_start.extend(0..=n as u32);
    out.entries.clear();
    out.entries.resize(
        n,
        BinEntry {
            prim: 0,
            edge_mask: 0,
            _pad: 0,
            flags,
        },
    );
}

/// Counting sort of `(tile, entry)` pairs into the CSR layout, stable so
/// each tile keeps submission order.
fn compress(
    grid: &TileGrid,
    pending: &[(u32, BinEntry)],
    cursor: &mut Vec<u32>,
    out: &mut JobBins,
) {
    let n = grid.tiles();
    out.tile_start.clear();
    out.tile_start.resize(n + 1, 0);
    for &(t, _) in pending {
        out.tile_start[t as usize + 1] += 1;
    }
    for i in 0..n {
        out.tile_start[i + 1] += out.tile_start[i];
    }
    out.entries.clear();
    out.entries.resize(pending.len(), BinEntry::default());
    // Scatter with a running cursor per tile (reuse the start array shifted).
    cursor.clear();
    cursor.extend_from_slice(&out.tile_start[..n]);
    for &(t, e) in pending {
        let c = &mut cursor[t as usize];
        out.entries[*c as usize] = e;
        *c += 1;
    }
    out.clears.clear();
}

// ---------------------------------------------------------------------------
// The system
// ---------------------------------------------------------------------------

/// The `Bin` system: sorts each job's primitives into tiles, then hands the jobs to the
/// back end in submission order, adding up the wave's front-end counters
/// in job order.
pub(crate) fn bin_primitives(
    pool: Res<PipelineExecutor>,
    mut exec: ResMut<SceneExecution>,
    counters: Res<PipelineCounters>,
    mut scratch: Local<Vec<BinScratch>>,
) {
    ferropipe_profiling::scope!("bin_primitives");
    let _time = counters.0.time_stage(PipelineSet::Bin.stage());
    let exec = &mut *exec;
    let states = &exec.states;
    let grid = exec.grid;
    let counted = &exec.counted;
    let opaque_clear = |buffers: ClearFlags| -> bool {
        // A clear replaces everything only if it writes every attachment.
        let fb = states
            .first()
            .map(|s| s.block.framebuffer.clone())
            .unwrap_or_default();
        let colors_ok =
            fb.cbufs.iter().enumerate().all(|(i, c)| {
                c.is_none() || buffers.bits() & (ClearFlags::COLOR0.bits() << i) != 0
            });
        let zs_ok = fb.zsbuf.as_ref().is_none_or(|z| {
            let f = DepthFormat::classify(z.desc.format);
            let need_d = f.is_some_and(|f| f.has_depth());
            let need_s = f.is_some_and(|f| f.has_stencil());
            (!need_d || buffers.contains(ClearFlags::DEPTH))
                && (!need_s || buffers.contains(ClearFlags::STENCIL))
        });
        colors_ok && zs_ok
    };
    let work = |job: &mut FrontJob, bin_scratch: &mut BinScratch| {
        ferropipe_profiling::scope!("bin_job");
        if let Some((buffers, value)) = job.clear {
            job.out.prims.clear();
            bin_clear(
                &grid,
                buffers,
                value,
                opaque_clear(buffers),
                &mut job.out.bins,
            );
            return;
        }
        let out = &mut job.out;
        let jumps = bin_prims(
            &out.prims,
            states,
            &grid,
            counted,
            bin_scratch,
            &mut out.bins,
        );
        if !walks_in_order(out.bins.entries.len(), jumps) {
            order_prims_by_tile(&mut out.prims, states, &mut out.bins, bin_scratch);
        }
    };
    for_each_job_with(&pool.0, &mut exec.wave, &mut scratch, &work);
    // Hand over in order.
    let mut wave = Counts::new();
    for mut job in exec.wave.drain(..) {
        for (cmd, c) in job.counters.drain(..) {
            wave.add(Counter::VerticesShaded, c.vs_invocations);
            wave.add(Counter::PrimitivesIn, c.c_invocations);
            wave.add(Counter::PrimitivesAfterClip, c.c_primitives);
            if let Some(d) = exec.counters.get_mut(cmd as usize) {
                d.accumulate(&c);
            }
        }
        wave.add(Counter::PrimitivesAfterCull, job.kept);
        wave.add(Counter::BinsEmitted, job.out.bins.entries.len() as u64);
        let mut binned = exec.spare_binned.pop().unwrap_or_default();
        std::mem::swap(&mut binned, &mut job.out);
        exec.binned_bytes += binned_size(&binned);
        exec.binned.push(binned);
        exec.spare_jobs.push(job);
    }
    counters.0.commit(&wave);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::Setup;
    use std::sync::Arc;

    /// Edgeless records over the given pixel boxes (each covers its box).
    fn prims(boxes: &[(i32, i32, i32, i32)]) -> SetupPrims {
        let mut out = SetupPrims::default();
        for &(x0, y0, x1, y1) in boxes {
            out.prims.push(SetupPrim {
                kind: ferropipe_components::batch::PrimKind::Triangle,
                x0,
                y0,
                x1,
                y1,
                ..Default::default()
            });
        }
        out
    }

    /// The walk's jumps: a tile's entry that does not follow its previous
    /// entry's record, each tile's first included; and the choice they
    /// make between submission order and tile order.
    #[test]
    fn jumps_count_the_runs_of_each_tile() {
        let s = Setup::new(256, 128, None);
        let states = [DerivedState::new(Arc::new(s.block))];
        let grid = TileGrid::new(256, 128);
        let (a, b) = ((0, 0, 8, 8), (70, 0, 78, 8)); // tiles 0 and 1
        let both = (60, 0, 70, 8); // tiles 0 and 1
        let mut scratch = BinScratch::default();
        let mut bins = JobBins::default();
        let mut jumps = |boxes: &[(i32, i32, i32, i32)]| {
            bin_prims(&prims(boxes), &states, &grid, &[], &mut scratch, &mut bins)
        };
        // A mesh in order: one run per tile.
        assert_eq!(jumps(&[a, a, a, b, b, b]), 2);
        // A record in two tiles continues the run of each.
        assert_eq!(jumps(&[a, a, both, b, b]), 2);
        // Scattered: every entry starts a run.
        assert_eq!(jumps(&[a, b, a, b, a, b]), 6);
        assert_eq!(jumps(&[]), 0);
        assert!(walks_in_order(6, 2));
        assert!(walks_in_order(3, 2));
        assert!(!walks_in_order(6, 6));
        assert!(!walks_in_order(5, 4));
    }

    /// The lanes classify every edge as [`classify_edge`] does: random
    /// records over the steps and offsets a 2^14-pixel guard band gives
    /// (steps up to 2^23, `c` up to 2^46), on whole and partial tiles and
    /// single pixels, with edges whose least or greatest value over the
    /// rectangle is exactly -1, 0 or 1 (the strict comparisons), zero
    /// steps, and 0 to 4 edges.
    #[test]
    fn lane_classification_is_the_scalar_one() {
        let Some(v3) = X86V3::detect() else {
            return;
        };
        let mut r = crate::tests::xorshift32(0x2545_f491);
        let mut next = move || (r() as u64) << 32 | r() as u64;
        let grid = TileGrid::new(1920, 1080);
        let (mut partial, mut rejected, mut accepted) = (0, 0, 0);
        for k in 0..20_000 {
            let r = match k % 3 {
                0 => grid.tile_rect(next() as usize % grid.tiles()),
                1 => {
                    let (x, y) = ((next() % 16384) as i32, (next() % 16384) as i32);
                    Rect {
                        x0: x,
                        y0: y,
                        x1: x + 1,
                        y1: y + 1,
                    }
                }
                _ => {
                    let (x, y) = ((next() % 16384) as i32, (next() % 16384) as i32);
                    let (w, h) = (1 + (next() % 64) as i32, 1 + (next() % 64) as i32);
                    Rect {
                        x0: x,
                        y0: y,
                        x1: x + w,
                        y1: y + h,
                    }
                }
            };
            let mut p = SetupPrim {
                num_edges: (k % 5) as u8,
                ..Default::default()
            };
            for e in 0..MAX_EDGES {
                let step = |n: u64| match n % 5 {
                    0 => 0,
                    1 => (n >> 8) as i32 % 256,
                    _ => (n >> 8) as i32 % (1 << 23),
                };
                (p.a[e], p.b[e]) = (step(next()), step(next()));
                let (a, b) = (p.a[e] as i64, p.b[e] as i64);
                let (sx, sy) = ((r.x1 - r.x0 - 1) as i64, (r.y1 - r.y0 - 1) as i64);
                let at = a * r.x0 as i64 + b * r.y0 as i64;
                // `c` placing the rectangle's greatest or least value on
                // -1, 0 or 1, or anywhere
                let n = next();
                let near = (n % 3) as i64 - 1;
                p.c[e] = match (n >> 2) % 3 {
                    0 => near - at - a.max(0) * sx - b.max(0) * sy,
                    1 => near - at - a.min(0) * sx - b.min(0) * sy,
                    _ => (n as i64 >> 17) - at,
                };
            }
            let scalar = classify_edges(None, &p, p.num_edges as usize, &r);
            let lanes = classify_edges(Some(v3), &p, p.num_edges as usize, &r);
            assert_eq!(lanes, scalar, "record {k}: {p:?} over {r:?}");
            match scalar {
                None => rejected += 1,
                Some(0) => accepted += 1,
                Some(_) => partial += 1,
            }
        }
        // every outcome is exercised
        assert!(rejected > 1000 && accepted > 1000 && partial > 1000);
    }

    #[test]
    fn grid_covers_partial_tiles() {
        let g = TileGrid::new(1920, 1080);
        assert_eq!((g.cols, g.rows), (30, 17));
        let last = g.tile_rect(g.tiles() - 1);
        assert_eq!(
            last,
            Rect {
                x0: 1856,
                y0: 1024,
                x1: 1920,
                y1: 1080
            }
        );
    }
}
