//! Equivalent of llvmpipe's `lp_rast.c` + `lp_rast_tri.c` (and
//! `lp_rast_tri_tmp.h`): the per-tile job.  It walks a tile's bin in
//! submission order, computes each primitive's coverage of the tile in
//! SIMD, runs early depth/stencil, and feeds covered 4x2 groups to the
//! fragment stage (fragment.rs) and the merge stage (merge.rs) in batches.
//!
//! # Coverage
//! Edges that bin.rs found fully accepted for the tile are skipped.  The
//! remaining (partial) edges are narrowed to `i32` at the tile origin and
//! then, for primitives larger than a 16x16 block, tested per 16x16 block:
//! a block outside any edge is rejected, edges that accept the whole block
//! are dropped for it, so fully covered blocks cost no per-pixel edge work.
//! Each remaining 4x2 group is one `i32x8` add and compare per edge; groups
//! are visited only inside the primitive's bounding box, so a 4-pixel
//! triangle costs one or two groups, not a 16x16 block.
//!
//! # Why raster, fragment and merge run fused per tile
//! Running the three stages as separate passes over a whole wave of tiles
//! would stream every shaded fragment through memory (16 bytes per pixel
//! per layer: 33 MB per full-screen layer at 1080p) and add two barriers
//! per wave.  Instead one tile job runs them back to back on a batch of at
//! most 2048 pixels that stays in L1/L2, which is what llvmpipe's
//! `lp_rast_shade_quads_*` does.  The stages stay separate code with
//! separate data types ([`Coverage`] → [`FragBatch`] → merge); only the
//! scheduling is fused.

pub use crate::tiles_plan::{FragmentVariant, TilesPlan};
use multiversion::multiversion;
use std::sync::Mutex;

use ferropipe_components::batch::{
    BinEntry, BinnedJob, MAX_EDGES, MS_SAMPLES, Plane, PrimKind, SetupPrim, bin_flags,
};
use ferropipe_components::enums::ClearFlags;
use ferropipe_components::shader::{
    FRAG_LANE_X, FRAG_LANE_Y, ILanes, LANES, Lanes, Semantic, ShaderResources,
};

use crate::derived::DerivedState;
use crate::fragment::{
    BatchPrimRef, FragBatch, FragCounts, FragGroup, MAX_BATCH_GROUPS, clamp_depth, fold_batch,
    group_depth, sample_depth, shade_batch,
};
use crate::lanes::{
    PREFETCH_DISTANCE, Rect, TileGrid, add_i_at, mul_i_at, prefetch, prefetch_planes,
    prefetch_record,
};
use crate::merge::{
    DepthTarget, GroupColors, StoreGroup, Targets, alpha_test, clear_color, clear_depth_stencil,
    depth_stencil_test, store_batch, store_batch_from,
};
use ferropipe_components::simd::X86V3;
use std::sync::Arc;

use bevy_ecs::prelude::*;
use ferropipe_components::batch::RecordedScene;
use ferropipe_profiling::{Counter, Counts};

use crate::job::{PipelineCounters, PipelineExecutor, SceneExecution};
use crate::locks::{LockSet, PreparedStage};
use crate::merge::{ColorTarget, DepthFormat, TargetMemory};
use crate::sets::PipelineSet;

/// One covered group produced by [`cover_prim`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Coverage {
    /// Column of the 4x2 group's top-left pixel.
    pub x: i32,
    /// Row of the group's top-left pixel.
    pub y: i32,
    /// Covered lanes (bit l = lane l, `FRAG_LANE_X/Y`).
    pub mask: u8,
}

#[inline]
fn lane_xi() -> ILanes {
    ILanes::new(FRAG_LANE_X.map(|v| v as i32))
}

#[inline]
fn lane_yi() -> ILanes {
    ILanes::new(FRAG_LANE_Y.map(|v| v as i32))
}

/// A partial edge narrowed to `i32` at some origin.
#[derive(Clone, Copy)]
struct LocalEdge {
    a: i32,
    b: i32,
    /// Value at the origin.
    c: i32,
    /// `a * lane_x + b * lane_y`.
    off: ILanes,
}

/// Appends the groups of `p` covering pixels of `rect` (the tile, clipped
/// to the framebuffer) to `out`; `edge_mask` names the edges to evaluate.
///
/// Run-time dispatched, with its own token: the coverage lanes are AVX2 in
/// a baseline build's clone too (small_tris_100k's coverage ran 50 % more
/// instructions there on `wide`'s two SSE halves, with `pminsd` and
/// `pmulld` emulated).  Out of line, as before: inlined into the raster
/// entry, the v3 build ran 4 % more instructions in raster.
#[multiversion(
    targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"),
    attrs(allow(dead_code))
)]
pub fn cover_prim(p: &SetupPrim, edge_mask: u8, tile: &Rect, out: &mut Vec<Coverage>) {
    // SAFETY: the expression is true only in the x86-64-v3 clone (run
    // where the CPU has those features) or in a build that requires them.
    let v3 = unsafe {
        X86V3::in_clone(multiversion::target::target_cfg_f!(all(
            target_feature = "avx2",
            target_feature = "fma"
        )))
    };
    cover_prim_at(v3, p, edge_mask, tile, out)
}

/// [`cover_prim`] at a SIMD level (the tests run both levels).
#[inline(always)]
fn cover_prim_at(
    v3: Option<X86V3>,
    p: &SetupPrim,
    edge_mask: u8,
    tile: &Rect,
    out: &mut Vec<Coverage>,
) {
    out.clear();
    let r = tile.intersect(&Rect {
        x0: p.x0,
        y0: p.y0,
        x1: p.x1,
        y1: p.y1,
    });
    if r.is_empty() {
        return;
    }
    let gx0 = r.x0 & !3;
    let gy0 = r.y0 & !1;
    // Partial edges relative to the tile origin.
    let (ox, oy) = (tile.x0 & !63, tile.y0 & !63);
    let tiny = r.x1 - gx0 <= 12 && r.y1 - gy0 <= 6;
    #[cfg(target_arch = "x86_64")]
    if tiny
        && let Some(t) = v3
        && cover_tiny_avx2(t, p, edge_mask, (ox, oy, gx0, gy0), &r, out)
    {
        return;
    }
    let mut edges = [LocalEdge {
        a: 0,
        b: 0,
        c: 0,
        off: ILanes::ZERO,
    }; MAX_EDGES];
    let mut n = 0;
    for e in 0..(p.num_edges as usize).min(MAX_EDGES) {
        if edge_mask & (1 << e) == 0 {
            continue;
        }
        let (a, b) = (p.a[e], p.b[e]);
        let c = p.c[e] + a as i64 * ox as i64 + b as i64 * oy as i64;
        edges[n] = LocalEdge {
            a,
            b,
            c: c.clamp(i32::MIN as i64 / 2, i32::MAX as i64 / 2) as i32,
            off: add_i_at(
                v3,
                mul_i_at(v3, ILanes::splat(a), lane_xi()),
                mul_i_at(v3, ILanes::splat(b), lane_yi()),
            ),
        };
        n += 1;
    }
    let edges = &edges[..n];
    if n > 0 && tiny {
        let at = (ox, oy, gx0, gy0);
        if r.x1 - gx0 <= 8 && r.y1 - gy0 <= 4 {
            cover_tiny::<2, 2>(v3, edges, at, &r, out);
        } else {
            cover_tiny::<3, 3>(v3, edges, at, &r, out);
        }
        return;
    }
    let small = r.x1 - gx0 <= 16 && r.y1 - gy0 <= 16;
    if n == 0 || small {
        cover_region(edges, (ox, oy, gx0, gy0), &r, out);
        return;
    }
    // 16x16 blocks (tile-aligned) that intersect the region.
    let bx0 = (r.x0 - ox) & !15;
    let by0 = (r.y0 - oy) & !15;
    let mut by = by0;
    while oy + by < r.y1 {
        let mut bx = bx0;
        while ox + bx < r.x1 {
            let mut block_edges = [edges[0]; MAX_EDGES];
            let mut m = 0;
            let mut rejected = false;
            for e in edges {
                let v = e.c + e.a * bx + e.b * by;
                let max = v + e.a.max(0) * 15 + e.b.max(0) * 15;
                if max <= 0 {
                    rejected = true;
                    break;
                }
                let min = v + e.a.min(0) * 15 + e.b.min(0) * 15;
                if min <= 0 {
                    block_edges[m] = *e;
                    m += 1;
                }
            }
            if !rejected {
                let block = r.intersect(&Rect {
                    x0: ox + bx,
                    y0: oy + by,
                    x1: ox + bx + 16,
                    y1: oy + by + 16,
                });
                cover_region(
                    &block_edges[..m],
                    (ox, oy, block.x0 & !3, block.y0 & !1),
                    &block,
                    out,
                );
            }
            bx += 16;
        }
        by += 16;
    }
}

/// Bit `l` set for the lanes whose pixel column within the group is below
/// `k` (`X_BELOW[k]`, k = 0..=4), and likewise for rows (`Y_BELOW`, 0..=2).
const X_BELOW: [u8; 5] = lanes_below(&FRAG_LANE_X);
const Y_BELOW: [u8; 3] = lanes_below(&FRAG_LANE_Y);

const fn lanes_below<const N: usize>(offsets: &[u32; LANES]) -> [u8; N] {
    let mut out = [0u8; N];
    let mut k = 0;
    while k < N {
        let mut l = 0;
        while l < LANES {
            if offsets[l] < k as u32 {
                out[k] |= 1 << l;
            }
            l += 1;
        }
        k += 1;
    }
    out
}

/// Lanes of a group starting at `g` (column or row) whose pixel lies in
/// `[lo, hi)`, given the group's `BELOW` table (`len` pixels per group).
#[inline(always)]
fn span_mask<const N: usize>(below: &[u8; N], g: i32, lo: i32, hi: i32) -> u8 {
    let len = N as i32 - 1;
    let from = (lo - g).clamp(0, len) as usize;
    let to = (hi - g).clamp(0, len) as usize;
    below[to] & !below[from]
}

/// Groups of `region` against `edges`: `at` is `(ox, oy, gx0, gy0)`, the
/// edges' origin and the region's group-aligned start.
///
/// Out of line (as LLVM left it when it was `#[inline]`), so dispatched
/// with its own token.
#[multiversion(
    targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"),
    attrs(allow(dead_code))
)]
fn cover_region(
    edges: &[LocalEdge],
    at: (i32, i32, i32, i32),
    region: &Rect,
    out: &mut Vec<Coverage>,
) {
    // SAFETY: the expression is true only in the x86-64-v3 clone (run
    // where the CPU has those features) or in a build that requires them.
    let v3 = unsafe {
        X86V3::in_clone(multiversion::target::target_cfg_f!(all(
            target_feature = "avx2",
            target_feature = "fma"
        )))
    };
    match edges {
        [] => cover_region_n::<0>(v3, &[], at, region, out),
        [a] => cover_region_n(v3, &[*a], at, region, out),
        [a, b] => cover_region_n(v3, &[*a, *b], at, region, out),
        [a, b, c] => cover_region_n(v3, &[*a, *b, *c], at, region, out),
        [a, b, c, d, ..] => cover_region_n(v3, &[*a, *b, *c, *d], at, region, out),
    }
}

/// [`cover_region`] for `N` edges.  Each edge's lane values start at the
/// first group and step by `4a` per group column and `2b` per group row
/// (integer adds, the same wrapped values as evaluating each group afresh);
/// a lane is inside when the least of its edge values is positive, one
/// compare and one mask extraction per group whatever `N`; the region's
/// bounds come from per-row and per-column lane masks.  Tiny triangles
/// (tiny_tris_1m: ~2 groups each) spent ~590 instructions per triangle in
/// coverage with a multiply-add, compare and extraction per edge and group
/// and a SIMD bounds test per group.
#[inline(always)]
fn cover_region_n<const N: usize>(
    v3: Option<X86V3>,
    edges: &[LocalEdge; N],
    at: (i32, i32, i32, i32),
    region: &Rect,
    out: &mut Vec<Coverage>,
) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = v3 {
        return cover_lanes::<N, Avx2Edges>(t, edges, at, region, out);
    }
    let _ = v3;
    cover_lanes::<N, ILanes>((), edges, at, region, out)
}

/// The lane operations of the coverage walk, at one SIMD level: `wide`'s
/// `ILanes`, or [`Avx2Edges`].  The walk keeps `N` edge registers live
/// and copies them per group row; as `wide` lanes a baseline build holds
/// each as two SSE halves, and those copies alone were 15 M instructions
/// a frame in small_tris_100k's AVX2 clone.
trait EdgeLanes: Copy {
    /// What making a value needs (the [`X86V3`] token for AVX2).
    type Level: Copy;
    fn of(level: Self::Level, v: ILanes) -> Self;
    fn add(self, o: Self) -> Self;
    fn min(self, o: Self) -> Self;
    /// Bit `l` set where lane `l` is above zero.
    fn positive_bits(self) -> u8;
}

impl EdgeLanes for ILanes {
    type Level = ();
    #[inline(always)]
    fn of(_: (), v: ILanes) -> Self {
        v
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self + o
    }
    #[inline(always)]
    fn min(self, o: Self) -> Self {
        ILanes::min(self, o)
    }
    #[inline(always)]
    fn positive_bits(self) -> u8 {
        self.simd_gt(ILanes::ZERO).to_bitmask() as u8
    }
}

/// Edge lanes in an AVX2 register.  Made only by [`EdgeLanes::of`] with an
/// [`X86V3`] token, so every value proves the CPU runs AVX2.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Avx2Edges(core::arch::x86_64::__m256i);

#[cfg(target_arch = "x86_64")]
impl EdgeLanes for Avx2Edges {
    type Level = X86V3;
    #[inline(always)]
    fn of(_: X86V3, v: ILanes) -> Self {
        Avx2Edges(bytemuck::cast(v))
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        // SAFETY: an `Avx2Edges` exists only where a token made one.
        Avx2Edges(unsafe { core::arch::x86_64::_mm256_add_epi32(self.0, o.0) })
    }
    #[inline(always)]
    fn min(self, o: Self) -> Self {
        // SAFETY: as above.
        Avx2Edges(unsafe { core::arch::x86_64::_mm256_min_epi32(self.0, o.0) })
    }
    #[inline(always)]
    fn positive_bits(self) -> u8 {
        use core::arch::x86_64::*;
        // SAFETY: as above.
        unsafe {
            let gt = _mm256_cmpgt_epi32(self.0, _mm256_setzero_si256());
            _mm256_movemask_ps(_mm256_castsi256_ps(gt)) as u8
        }
    }
}

/// [`cover_region_n`] on lanes `L`.
#[inline(always)]
fn cover_lanes<const N: usize, L: EdgeLanes>(
    level: L::Level,
    edges: &[LocalEdge; N],
    (ox, oy, gx0, gy0): (i32, i32, i32, i32),
    region: &Rect,
    out: &mut Vec<Coverage>,
) {
    if N == 0 && cover_full(gx0, gy0, region, out) {
        return;
    }
    let zero = L::of(level, ILanes::ZERO);
    let mut row = [zero; N];
    let mut step_x = [zero; N];
    let mut step_y = [zero; N];
    for (k, e) in edges.iter().enumerate() {
        (row[k], step_x[k], step_y[k]) = edge_lanes(level, e, (ox, oy, gx0, gy0));
    }
    let mut gy = gy0;
    while gy < region.y1 {
        let ymask = span_mask(&Y_BELOW, gy, region.y0, region.y1);
        let mut v = row;
        let mut gx = gx0;
        while gx < region.x1 {
            let mut m = ymask & span_mask(&X_BELOW, gx, region.x0, region.x1);
            if N > 0 && m != 0 {
                let mut least = v[0];
                for vk in &v[1..] {
                    least = least.min(*vk);
                }
                m &= least.positive_bits();
            }
            if m != 0 {
                out.push(Coverage {
                    x: gx,
                    y: gy,
                    mask: m,
                });
            }
            for (vk, s) in v.iter_mut().zip(&step_x) {
                *vk = vk.add(*s);
            }
            gx += 4;
        }
        for (rk, s) in row.iter_mut().zip(&step_y) {
            *rk = rk.add(*s);
        }
        gy += 2;
    }
}

/// An edge's lane values at the first group of a walk from `(gx0, gy0)`
/// (`at` as in [`cover_region`]), and their steps to the next group
/// column (4 pixels) and row (2 pixels), as wrapped `i32` adds.
#[inline(always)]
fn edge_lanes<L: EdgeLanes>(
    level: L::Level,
    e: &LocalEdge,
    (ox, oy, gx0, gy0): (i32, i32, i32, i32),
) -> (L, L, L) {
    let base = e.c + e.a * (gx0 - ox) + e.b * (gy0 - oy);
    (
        L::of(level, ILanes::splat(base)).add(L::of(level, e.off)),
        L::of(level, ILanes::splat(e.a.wrapping_mul(4))),
        L::of(level, ILanes::splat(e.b.wrapping_mul(2))),
    )
}

/// [`cover_region`] for a region of at most `C` x `R` groups (`at` as
/// there), inline in [`cover_prim`]: every group's edge values, least
/// values and masks in registers, loops the constant sizes unroll.
/// tiny_tris_1m's triangles (~2 groups each) are nearly all such regions,
/// and the walk's call, per-edge set-up and group loop cost them ~360
/// instructions a triangle (callgrind).  The same groups, masks and order
/// as [`cover_lanes`]: a group's values are the walk's (the row's value
/// plus the column steps, the same wrapped adds), a group past the
/// region's right or bottom end has an empty span mask as the walk never
/// visits it, and groups are pushed row by row where their mask is not
/// empty.
#[inline(always)]
fn cover_tiny<const C: usize, const R: usize>(
    v3: Option<X86V3>,
    edges: &[LocalEdge],
    at: (i32, i32, i32, i32),
    region: &Rect,
    out: &mut Vec<Coverage>,
) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = v3 {
        return cover_tiny_lanes::<Avx2Edges, C, R>(t, edges, at, region, out);
    }
    let _ = v3;
    cover_tiny_lanes::<ILanes, C, R>((), edges, at, region, out)
}

/// [`cover_tiny`] on lanes `L`; `edges` is not empty.
#[inline(always)]
fn cover_tiny_lanes<L: EdgeLanes, const C: usize, const R: usize>(
    level: L::Level,
    edges: &[LocalEdge],
    (ox, oy, gx0, gy0): (i32, i32, i32, i32),
    region: &Rect,
    out: &mut Vec<Coverage>,
) {
    let zero = L::of(level, ILanes::ZERO);
    // The least edge value of group column `c`, row `r` at `least[r][c]`.
    let mut least = [[zero; C]; R];
    for (i, e) in edges.iter().enumerate() {
        let (mut row, step_x, step_y) = edge_lanes(level, e, (ox, oy, gx0, gy0));
        for least_row in least.iter_mut() {
            let mut v = row;
            for l in least_row.iter_mut() {
                *l = if i == 0 { v } else { l.min(v) };
                v = v.add(step_x);
            }
            row = row.add(step_y);
        }
    }
    push_tiny_block(&least, (gx0, gy0), region, out);
}

/// Appends the covered groups of a [`cover_tiny`] block from each group's
/// least edge value (`least[row][column]`), in row order.
#[inline(always)]
fn push_tiny_block<L: EdgeLanes, const C: usize, const R: usize>(
    least: &[[L; C]; R],
    (gx0, gy0): (i32, i32),
    region: &Rect,
    out: &mut Vec<Coverage>,
) {
    let xm: [u8; C] =
        std::array::from_fn(|c| span_mask(&X_BELOW, gx0 + 4 * c as i32, region.x0, region.x1));
    // Every group is written to the next free slot, and the length only
    // moves past the covered ones: which groups of a 2x2 or 3x3 block a
    // tiny triangle covers is random, and the `if mask != 0 { push }` this
    // replaced was the back end's most mispredicted branch (16 % of
    // tiny_tris_1m's mispredicts in cachegrind's branch model).  One
    // reservation and one length update for the block: a reserve and
    // length update per group ran ~30 instructions a triangle more.
    out.reserve(C * R);
    let start = out.len();
    let spare = out.spare_capacity_mut();
    let mut n = 0;
    for (r, least_row) in least.iter().enumerate() {
        let gy = gy0 + 2 * r as i32;
        let ym = span_mask(&Y_BELOW, gy, region.y0, region.y1);
        for (c, l) in least_row.iter().enumerate() {
            let mask = xm[c] & ym & l.positive_bits();
            if let Some(slot) = spare.get_mut(n) {
                slot.write(Coverage {
                    x: gx0 + 4 * c as i32,
                    y: gy,
                    mask,
                });
                n += (mask != 0) as usize;
            }
        }
    }
    // SAFETY: `n` only counts slots written above (`reserve` left C * R of
    // them, one per group, so none is skipped), and the first `n` spare
    // slots hold the covered groups, in order.
    unsafe { out.set_len(start + n) };
}

/// [`cover_prim_at`]'s inline block (a region of at most 3x3 groups) with
/// the record's edges in AVX2 registers from the start: its four edges'
/// narrowing to the tile origin in 64-bit lanes (`vpmuldq`, the clamp as
/// compares and blends), their values at the block's first group in one
/// 4-lane register, and each edge's group values from those.  Edges
/// `edge_mask` leaves out (or past `num_edges`) hold `i32::MAX` with zero
/// steps, so they never lower a group's least value, which is what
/// skipping them does.  Returns `false`, having pushed nothing, when no
/// edge is left to evaluate ([`cover_full`]'s case).
///
/// Why: tiny_tris_1m's ~4-pixel triangles nearly all take this block,
/// and building the [`LocalEdge`] array edge by edge (a branch on each
/// mask bit, scalar 64-bit multiplies and clamps, each edge's offsets
/// stored and reloaded) was ~480 instructions a call (callgrind).  The
/// same wrapped `i32` arithmetic as [`edge_lanes`] (sums regrouped, which
/// wrapping addition allows), so the same groups and masks as
/// [`cover_tiny_lanes`] (test `tiny_avx2_coverage_is_the_lanes_coverage`).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn cover_tiny_avx2(
    t: X86V3,
    p: &SetupPrim,
    edge_mask: u8,
    (ox, oy, gx0, gy0): (i32, i32, i32, i32),
    region: &Rect,
    out: &mut Vec<Coverage>,
) -> bool {
    use core::arch::x86_64::*;
    let live = edge_mask & ((1u32 << (p.num_edges as usize).min(MAX_EDGES)) - 1) as u8;
    if live == 0 {
        return false;
    }
    // c + a * ox + b * oy, exact in 64 bits, then clamped to
    // [i32::MIN / 2, i32::MAX / 2].
    let (_, _, c) = crate::lanes::v3_lanes::record_edges_at(t, p, ox, oy);
    // SAFETY: the token proves AVX2; the loads read the record's own `a`
    // and `b` arrays (16 bytes each).
    let (base, a, b) = unsafe {
        let a = _mm_loadu_si128(p.a.as_ptr().cast());
        let b = _mm_loadu_si128(p.b.as_ptr().cast());
        let lo = _mm256_set1_epi64x(i32::MIN as i64 / 2);
        let hi = _mm256_set1_epi64x(i32::MAX as i64 / 2);
        let c = _mm256_blendv_epi8(c, lo, _mm256_cmpgt_epi64(lo, c));
        let c = _mm256_blendv_epi8(c, hi, _mm256_cmpgt_epi64(c, hi));
        let c = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
            c,
            _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6),
        ));
        // At the block's first group, wrapping as the walk's sums.
        let base = _mm_add_epi32(
            _mm_add_epi32(c, _mm_mullo_epi32(a, _mm_set1_epi32(gx0 - ox))),
            _mm_mullo_epi32(b, _mm_set1_epi32(gy0 - oy)),
        );
        let bits = _mm_setr_epi32(1, 2, 4, 8);
        let on = _mm_cmpeq_epi32(_mm_and_si128(_mm_set1_epi32(live as i32), bits), bits);
        (
            _mm_blendv_epi8(_mm_set1_epi32(i32::MAX), base, on),
            _mm_and_si128(a, on),
            _mm_and_si128(b, on),
        )
    };
    if region.x1 - gx0 <= 8 && region.y1 - gy0 <= 4 {
        let least = tiny_least::<2, 2>(t, base, a, b);
        push_tiny_block(&least, (gx0, gy0), region, out);
    } else {
        let least = tiny_least::<3, 3>(t, base, a, b);
        push_tiny_block(&least, (gx0, gy0), region, out);
    }
    true
}

/// The least of the four edges' values in every group of a `C` x `R`
/// block, from their values at its first group (`base`) and their steps
/// (`a`, `b`), as [`cover_tiny_lanes`] computes them.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn tiny_least<const C: usize, const R: usize>(
    t: X86V3,
    base: core::arch::x86_64::__m128i,
    a: core::arch::x86_64::__m128i,
    b: core::arch::x86_64::__m128i,
) -> [[Avx2Edges; C]; R] {
    use core::arch::x86_64::*;
    let mut least = [[Avx2Edges::of(t, ILanes::splat(i32::MAX)); C]; R];
    let (lx, ly) = (Avx2Edges::of(t, lane_xi()), Avx2Edges::of(t, lane_yi()));
    for e in 0..MAX_EDGES as i32 {
        // SAFETY: the token proves AVX2 (`Avx2Edges` values exist only
        // where one did).
        let (v, sx, sy) = unsafe {
            let pick = |v: __m128i| {
                _mm256_permutevar8x32_epi32(_mm256_castsi128_si256(v), _mm256_set1_epi32(e))
            };
            let (ae, be) = (pick(a), pick(b));
            let off = _mm256_add_epi32(_mm256_mullo_epi32(ae, lx.0), _mm256_mullo_epi32(be, ly.0));
            (
                _mm256_add_epi32(pick(base), off),
                Avx2Edges(_mm256_slli_epi32::<2>(ae)),
                Avx2Edges(_mm256_slli_epi32::<1>(be)),
            )
        };
        let mut row = Avx2Edges(v);
        for least_row in least.iter_mut() {
            let mut v = row;
            for l in least_row.iter_mut() {
                *l = l.min(v);
                v = v.add(sx);
            }
            row = row.add(sy);
        }
    }
    least
}

/// [`cover_lanes`] without edges (a tile or 16x16 block wholly inside the
/// primitive): every lane inside `region` is covered, and only the first
/// and last group column and row can be partial, so each group row is one
/// exact-size `extend` with the masks known up front.  The same groups in
/// the same order as the general walk, which spent ~33 instructions per
/// group on blend_overdraw's full-screen quads (callgrind).
/// Returns `false`, having pushed nothing, where an end column is empty
/// (`gx0` more than a group left of `region.x0`; the callers pass it
/// rounded down to a group, so never): the general walk skips those.
#[inline(always)]
fn cover_full(gx0: i32, gy0: i32, region: &Rect, out: &mut Vec<Coverage>) -> bool {
    if region.x1 <= gx0 || region.y1 <= gy0 {
        return true;
    }
    let last_gx = gx0 + ((region.x1 - gx0 - 1) & !3);
    let cols = ((last_gx - gx0) / 4 + 1) as usize;
    // With both end columns non-empty (the interior ones are whole) and a
    // non-empty row mask, every group has a covered lane, as the walk
    // finds.
    let first = span_mask(&X_BELOW, gx0, region.x0, region.x1);
    let last = span_mask(&X_BELOW, last_gx, region.x0, region.x1);
    if first == 0 || last == 0 {
        return false;
    }
    let mut gy = gy0;
    while gy < region.y1 {
        let ym = span_mask(&Y_BELOW, gy, region.y0, region.y1);
        if ym != 0 {
            out.extend((0..cols).map(|i| {
                let xm = if i == 0 {
                    first
                } else if i == cols - 1 {
                    last
                } else {
                    0xff
                };
                Coverage {
                    x: gx0 + 4 * i as i32,
                    y: gy,
                    mask: xm & ym,
                }
            }));
        }
        gy += 2;
    }
    true
}

/// Per-tile counts attributed to commands, in order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TileCount {
    /// The command counted.
    pub command: u32,
    /// Fragment shader invocations (16 per covered 4x4 block, llvmpipe's count).
    pub ps_invocations: u64,
    /// Samples that passed depth, stencil and alpha.
    pub samples_passed: u64,
}

/// Appends counts for `command`, merging with the previous entry.
#[inline]
fn count(stats: &mut Vec<TileCount>, command: u32, ps: u64, samples: u64) {
    if let Some(last) = stats.last_mut()
        && last.command == command
    {
        last.ps_invocations += ps;
        last.samples_passed += samples;
        return;
    }
    stats.push(TileCount {
        command,
        ps_invocations: ps,
        samples_passed: samples,
    });
}

/// Everything tile jobs share (read-only).
pub struct TileContext<'a> {
    /// The scene's tiles.
    pub grid: TileGrid,
    /// The binned jobs, in submission order.
    pub jobs: &'a [BinnedJob],
    /// Derived state per state block.
    pub states: &'a [DerivedState],
    /// The render targets.
    pub targets: &'a Targets,
    /// Fragment-shader resources, one per run of state blocks with the
    /// same fragment bindings.
    pub fs_resources: &'a [ShaderResources<'a>],
    /// Per state block, its entry of `fs_resources` (a `u32` per block,
    /// not a copy of the resources: many_draws has 10,000 blocks).
    pub fs_resources_of: &'a [u32],
    /// Per command, whether an active query counts its fragment-shader
    /// invocations and passed samples (`SceneExecution::counted`); a
    /// command past the slice is not counted.
    pub counted: &'a [bool],
    /// Per state block, the first block of its *batch run*: the
    /// consecutive blocks with the very same derived shape and fragment
    /// resources, whose primitives one batch may mix (see
    /// [`batch_runs`]).
    pub batch_run_of: &'a [u32],
}

/// Fills `out` with each block's batch run (`TileContext::batch_run_of`):
/// consecutive blocks whose shapes are the same `Arc` and whose fragment
/// resources are the same entry shade and merge alike, because
/// everything the tile stage reads per batch comes from those two, and
/// what differs per primitive (planes, command, facing) is read per
/// primitive.  many_draws' 10,000 blocks differ in a vertex constant
/// buffer only: one run, so a tile's 20-odd 112-pixel quads fill
/// 512-pixel batches instead of one batch (one shader call, one store
/// pass) each.
pub fn batch_runs(states: &[DerivedState], fs_resources_of: &[u32], out: &mut Vec<u32>) {
    out.clear();
    for (i, ds) in states.iter().enumerate() {
        let run = match i.checked_sub(1) {
            Some(p)
                if Arc::ptr_eq(ds.shape(), states[p].shape())
                    && fs_resources_of.get(i) == fs_resources_of.get(p) =>
            {
                out[p]
            }
            _ => i as u32,
        };
        out.push(run);
    }
}

/// Reusable per-job scratch.
#[derive(Default)]
pub struct TileScratch {
    /// Covered groups of the primitive being rasterized.
    pub coverage: Vec<Coverage>,
    /// The batch being filled for shading.
    pub batch: FragBatch,
    /// The tile's bin entries across jobs: `(job, entry)`.
    pub walk: Vec<(u32, BinEntry)>,
}

/// A pool of scratch buffers shared by tile jobs (reused across scenes).
#[derive(Default)]
pub(crate) struct ScratchPool(Mutex<Vec<TileScratch>>);

impl ScratchPool {
    pub fn take(&self) -> TileScratch {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
            .unwrap_or_default()
    }

    pub fn give(&self, s: TileScratch) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(s);
    }
}

/// What one tile job reports to the pipeline counters
/// (`PipelineCounters`; scene.rs sums them in tile order).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TileTotals {
    /// The tile's bins held at least one primitive entry.
    pub touched: bool,
    /// One of them was a whole-tile entry (`bin_flags::FULL_TILE`).
    pub fully_covered: bool,
    /// Fragments shaded and killed in the tile.
    pub frags: FragCounts,
}

/// Renders tile `t`: walks its bin from the last opaque entry on.
#[multiversion(
    targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"),
    attrs(allow(dead_code))
)]
pub fn rasterize_tile(
    ctx: &TileContext<'_>,
    t: usize,
    scratch: &mut TileScratch,
    stats: &mut Vec<TileCount>,
) -> TileTotals {
    let rect = ctx.grid.tile_rect(t);
    if rect.is_empty() {
        return TileTotals::default();
    }
    // The tile's entries across all jobs, in submission order, starting at
    // the last opaque entry not preceded by a counted one: nothing before it
    // can show (and nothing before it needs counting).
    let TileScratch {
        coverage,
        batch,
        walk,
    } = scratch;
    walk.clear();
    let mut counted_seen = false;
    // Counters, from every entry (before the opaque skip, so a flush split
    // into several tile passes counts the same): primitive entries and
    // their flags; a job is all clears or all primitives.
    let (mut prim_entries, mut prim_flags) = (0usize, 0u16);
    for (j, job) in ctx.jobs.iter().enumerate() {
        prefetch_tile_entries(ctx.jobs, j, t);
        let entries = job.tile_entries(t);
        let prims_mask = if job.bins.clears.is_empty() {
            prim_entries += entries.len();
            u16::MAX
        } else {
            0
        };
        for e in entries {
            prim_flags |= e.flags & prims_mask;
            if e.flags & bin_flags::OPAQUE != 0 && !counted_seen {
                walk.clear();
            }
            if e.flags & bin_flags::COUNTED != 0 {
                counted_seen = true;
            }
            walk.push((j as u32, *e));
        }
    }

    batch.clear();
    batch.counts = FragCounts::default();
    if !walk.is_empty() {
        prefetch_tile_targets(ctx.targets, &rect);
    }
    for k in 0..walk.len() {
        prefetch_ahead(ctx.jobs, walk, k);
        let (j, e) = walk[k];
        let job = &ctx.jobs[j as usize];
        if e.flags & bin_flags::CLEAR != 0 {
            flush_batch(ctx, batch, stats);
            let value = job.bins.clears.first().copied().unwrap_or_default();
            clear_tile(ctx.targets, &rect, job.bins.clear_buffers, &value);
        } else {
            raster_entry(ctx, &rect, j, &e, coverage, batch, stats);
        }
    }
    flush_batch(ctx, batch, stats);
    TileTotals {
        touched: prim_entries > 0,
        fully_covered: prim_flags & bin_flags::FULL_TILE != 0,
        frags: batch.counts,
    }
}

/// Rasterizes one bin entry of job `j` into the batch (flushing it when it
/// fills or the state changes), with early depth when allowed.
#[multiversion(
    targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"),
    attrs(allow(dead_code))
)]
fn raster_entry(
    ctx: &TileContext<'_>,
    rect: &Rect,
    j: u32,
    e: &BinEntry,
    coverage: &mut Vec<Coverage>,
    batch: &mut FragBatch,
    stats: &mut Vec<TileCount>,
) {
    // SAFETY: the expression is true only in the x86-64-v3 clone (run
    // where the CPU has those features) or in a build that requires them.
    let v3 = unsafe {
        X86V3::in_clone(multiversion::target::target_cfg_f!(all(
            target_feature = "avx2",
            target_feature = "fma"
        )))
    };
    let job = &ctx.jobs[j as usize];
    let Some(p) = job.prims.prims.get(e.prim as usize) else {
        return;
    };
    let ds = &ctx.states[p.state as usize];
    let run = ctx.batch_run_of.get(p.state as usize);
    if batch.state.and_then(|s| ctx.batch_run_of.get(s as usize)) != run || run.is_none() {
        flush_batch(ctx, batch, stats);
        batch.state = Some(p.state);
    }
    let multisampled = ds.tiles.fb_samples > 1;
    let mut sample_masks: Vec<[u8; MS_SAMPLES]> = Vec::new();
    if p.ms != 0 {
        cover_samples(
            p,
            &job.prims.sample_c[p.ms as usize - 1],
            rect,
            coverage,
            &mut sample_masks,
        );
    } else {
        cover_prim(p, e.edge_mask, rect, coverage);
        if multisampled {
            // Single-sample rasterization on a multisampled buffer: the
            // centre's coverage goes to every sample.
            sample_masks.extend(coverage.iter().map(|c| [c.mask; MS_SAMPLES]));
        }
    }
    if multisampled {
        // set_sample_mask: samples whose bit is clear are never written.
        for (c, m) in coverage.iter_mut().zip(sample_masks.iter_mut()) {
            for (s, sm) in m.iter_mut().enumerate() {
                if ds.tiles.sample_mask & (1 << s) == 0 {
                    *sm = 0;
                }
            }
            c.mask = m.iter().fold(0, |a, &b| a | b);
        }
    }
    // Fragment-shader invocations as llvmpipe counts them: 16 per 4x4 block
    // the primitive covers, before early depth.  Only a query reads them
    // (and the passed samples below), so only a counted command counts
    // them: ~53 instructions a group otherwise (textured_mesh, callgrind).
    // Four register words, not an array: or-ing into an array in memory
    // and reading it back as one vector was a store-forwarding stall on
    // every primitive (6 % of rasterize_tile on textured_mesh).
    let counted = ctx
        .counted
        .get(p.command as usize)
        .copied()
        .unwrap_or(false);
    if counted {
        let (mut b0, mut b1, mut b2, mut b3) = (0u64, 0u64, 0u64, 0u64);
        for c in coverage.iter() {
            let b = (((c.y & 63) >> 2) * 16 + ((c.x & 63) >> 2)) as u32;
            let bit = 1u64 << (b & 63);
            let word = b >> 6;
            b0 |= if word == 0 { bit } else { 0 };
            b1 |= if word == 1 { bit } else { 0 };
            b2 |= if word == 2 { bit } else { 0 };
            b3 |= if word == 3 { bit } else { 0 };
        }
        let n_blocks = b0.count_ones() + b1.count_ones() + b2.count_ones() + b3.count_ones();
        if n_blocks > 0 {
            count(stats, p.command, 16 * n_blocks as u64, 0);
        }
    }
    // Polygon stipple: a fragment mask after the invocation count, as
    // llvmpipe's stipple (a kill in the shader) counts them.
    if let Some(st) = &ds.tiles.poly_stipple
        && p.kind == PrimKind::Triangle
    {
        for (i, c) in coverage.iter_mut().enumerate() {
            let keep = st[(((c.y & 31) >> 1) * 8 + ((c.x & 31) >> 2)) as usize];
            c.mask &= keep;
            if let Some(m) = sample_masks.get_mut(i) {
                m.iter_mut().for_each(|sm| *sm &= keep);
            }
        }
    }
    let prim_ref = BatchPrimRef {
        job: j,
        prim: e.prim,
    };
    let planes = &job.prims.planes[p.planes as usize..];
    let early = ds.tiles.early_depth && ds.uses_depth_stencil();
    let mut pi = batch.push_prim(prim_ref);
    if !early && !multisampled {
        // No per-group test before shading: groups go to the batch in
        // runs as long as the batch has room (the general loop below kept
        // its many flags in stack slots, ~15 % of blend_overdraw).
        let mut rest = &coverage[..];
        while !rest.is_empty() {
            let room = MAX_BATCH_GROUPS - batch.groups.len();
            let (now, later) = rest.split_at(room.min(rest.len()));
            batch
                .groups
                .extend(now.iter().filter(|c| c.mask != 0).map(|c| FragGroup {
                    x: c.x,
                    y: c.y,
                    mask: c.mask,
                    prim: pi,
                }));
            rest = later;
            if batch.is_full() {
                flush_batch(ctx, batch, stats);
                batch.state = Some(p.state);
                pi = batch.push_prim(prim_ref);
            }
        }
        return;
    }
    // Early depth alone on a single-sampled Z32_FLOAT target (no stencil,
    // no bounds: tiny_tris_1m, textured_mesh): the state's checks once per
    // entry instead of once per group, as the loop below makes them.  A
    // loop of its own: the same hoisted checks inside the general loop
    // below saved nothing (tiny_tris_1m 6,788 M instructions against
    // 6,687 M this way), as that loop keeps its many flags in stack slots.
    if early
        && !multisampled
        && let Some(dt) = &ctx.targets.depth
        && let Some(rows32) = crate::merge::z32f_rows(&ds.merge, dt)
    {
        for cov in coverage.iter() {
            if cov.mask == 0 {
                continue;
            }
            let group = FragGroup {
                x: cov.x,
                y: cov.y,
                mask: cov.mask,
                prim: pi,
            };
            let z = group_depth(ds, &group, p, planes);
            let mask = crate::merge::depth_test_z32f_at(
                v3,
                &ds.merge,
                dt,
                &rows32,
                cov.x,
                cov.y,
                &z,
                cov.mask,
                p.front_facing,
            );
            if counted {
                count(stats, p.command, 0, mask.count_ones() as u64);
            }
            if mask == 0 {
                continue;
            }
            batch.groups.push(FragGroup { mask, ..group });
            if batch.is_full() {
                flush_batch(ctx, batch, stats);
                batch.state = Some(p.state);
                pi = batch.push_prim(prim_ref);
            }
        }
        return;
    }
    for (i, cov) in coverage.iter().enumerate() {
        if cov.mask == 0 {
            continue;
        }
        let mut mask = cov.mask;
        let group = FragGroup {
            x: cov.x,
            y: cov.y,
            mask,
            prim: pi,
        };
        if early && multisampled {
            // Each sample against its own depth/stencil plane, at its own
            // position; occlusion counts samples.
            if let (Some(dt), Some(sm)) = (&ctx.targets.depth, sample_masks.get_mut(i)) {
                mask = test_sample_planes(ds, dt, &group, p, planes, sm, None);
            }
            let passed = sample_masks.get(i).map_or(mask.count_ones(), |sm| {
                sm.iter().map(|m| m.count_ones()).sum()
            });
            if counted {
                count(stats, p.command, 0, passed as u64);
            }
            if mask == 0 {
                continue;
            }
        } else if early {
            if let Some(dt) = &ctx.targets.depth {
                let z = group_depth(ds, &group, p, planes);
                mask = depth_stencil_test(&ds.merge, dt, cov.x, cov.y, &z, mask, p.front_facing);
            }
            if counted {
                count(stats, p.command, 0, mask.count_ones() as u64);
            }
            if mask == 0 {
                continue;
            }
        }
        batch.groups.push(FragGroup { mask, ..group });
        if multisampled {
            batch
                .sample_masks
                .push(sample_masks.get(i).copied().unwrap_or([mask; MS_SAMPLES]));
        }
        if batch.is_full() {
            flush_batch(ctx, batch, stats);
            batch.state = Some(p.state);
            pi = batch.push_prim(prim_ref);
        }
    }
}

/// Prefetches the tile's pixels of every bound target (each row's cache
/// lines, every sample plane) before its entries are walked.
///
/// Why: a frame's targets (1080p: 8 MiB of colour and 8 MiB of depth) do
/// not stay in cache from one frame to the next, and a tile of small
/// triangles touches its pixels in submission order, so each first touch
/// of a line was a miss the early-depth test or the store waited on
/// (tiny_tris_1m: the depth load after a `vmovq` was 11 % of
/// `rasterize_tile`'s samples).  Issued all at once, the ~512 lines of a
/// single-sampled RGBA8 + Z32 tile load in parallel.  Paired runs
/// (2026-12-07, Zen 5, `replay --time 5`): tiny_tris_1m 0.975x at one
/// thread and 0.968x at two (4 rounds each, every round faster),
/// small_tris_100k 0.98x, the other fixed-function scenes and
/// textured_mesh level; into L2 only (`prefetcht1`) it gained less.
fn prefetch_tile_targets(targets: &Targets, rect: &Rect) {
    let r = (rect.x0, rect.y0, rect.x1, rect.y1);
    for c in targets.color.iter().flatten() {
        c.mem.prefetch_rect(r);
    }
    if let Some(d) = &targets.depth {
        d.mem.prefetch_rect(r);
    }
}

#[inline]
fn prefetch_ahead(jobs: &[BinnedJob], walk: &[(u32, BinEntry)], k: usize) {
    let record = |i: usize| {
        let (j, e) = walk.get(i)?;
        jobs.get(*j as usize)
            .and_then(|job| Some((job, job.prims.prims.get(e.prim as usize)?)))
    };
    if let Some((_, p)) = record(k + PREFETCH_DISTANCE) {
        prefetch_record(p);
    }
    if let Some((job, p)) = record(k + PREFETCH_DISTANCE / 2) {
        prefetch_planes(&job.prims, p);
    }
}

/// How many jobs ahead the walk of a tile's bins prefetches the job's
/// `tile_start` entry (and, half as far, its first bin entry).  A tile
/// reads a few entries from each of hundreds of jobs (tiny_tris_1m: ~500
/// jobs of 2048 triangles, ~4 entries each per tile), every job's a cache
/// miss on two dependent loads: without this the walk stalled on them for
/// a seventh of that scene's back end.
const WALK_PREFETCH: usize = 8;

#[inline]
fn prefetch_tile_entries(jobs: &[BinnedJob], j: usize, t: usize) {
    if let Some(s) = jobs
        .get(j + WALK_PREFETCH)
        .and_then(|job| job.bins.tile_start.get(t))
    {
        prefetch(s as *const u32 as *const u8);
    }
    if let Some(job) = jobs.get(j + WALK_PREFETCH / 2)
        && let Some(&s) = job.bins.tile_start.get(t)
        && let Some(e) = job.bins.entries.get(s as usize)
    {
        prefetch(e as *const BinEntry as *const u8);
    }
}

/// Shades and merges the batch, then empties it.
fn flush_batch(ctx: &TileContext<'_>, batch: &mut FragBatch, stats: &mut Vec<TileCount>) {
    let Some(state) = batch.state else {
        return;
    };
    if batch.groups.is_empty() {
        batch.clear();
        return;
    }
    let ds = &ctx.states[state as usize];
    if let (true, Some(offsets)) = (ds.tiles.sample_shading, ds.tiles.ms_offsets) {
        // Sample shading: the batch once per sample, each pass covering
        // only that sample, interpolated and shaded at its position.
        let union: Vec<u8> = batch.groups.iter().map(|g| g.mask).collect();
        let per_sample = std::mem::take(&mut batch.sample_masks);
        for (s, &(ox, oy)) in offsets.iter().enumerate() {
            for (g, grp) in batch.groups.iter_mut().enumerate() {
                grp.mask = per_sample.get(g).map_or(union[g], |m| m[s]);
            }
            batch.sample_masks.clear();
            batch.sample_masks.extend(batch.groups.iter().map(|g| {
                let mut m = [0; MS_SAMPLES];
                m[s] = g.mask;
                m
            }));
            batch.sample_offset = (ox as f32 / 256.0, oy as f32 / 256.0);
            shade_and_merge(ctx, batch, ds, stats);
        }
        batch.sample_offset = (0.0, 0.0);
        batch.clear();
        return;
    }
    shade_and_merge(ctx, batch, ds, stats);
    batch.clear();
}

/// Depth/stencil on a multisampled buffer: each live sample of `sm`
/// against its own plane, at its own position (or at `written`, the
/// shader's depth output).  Returns the union of the surviving samples.
/// Early depth (raster) and late depth (after shading) share it.
fn test_sample_planes(
    ds: &DerivedState,
    dt: &DepthTarget,
    g: &FragGroup,
    p: &SetupPrim,
    planes: &[Plane],
    sm: &mut [u8; MS_SAMPLES],
    written: Option<Lanes>,
) -> u8 {
    for (s, m) in sm.iter_mut().enumerate() {
        if *m != 0 {
            let z = written.unwrap_or_else(|| sample_depth(ds, g, p, planes, s));
            *m = depth_stencil_test(
                &ds.merge,
                &dt.plane(s as u32),
                g.x,
                g.y,
                &z,
                *m,
                p.front_facing,
            );
        }
    }
    sm.iter().fold(0, |a, &b| a | b)
}

/// Samples passed, summed per command over consecutive groups: the
/// command is looked up once per run of one primitive's groups and the sum
/// stays in a register (a read-modify-write of the stats entry per group
/// was a store-forwarding chain).
#[derive(Default)]
struct PassedCount {
    prim: Option<u16>,
    command: u32,
    sum: u64,
}

impl PassedCount {
    #[inline(always)]
    fn add(
        &mut self,
        batch: &FragBatch,
        jobs: &[BinnedJob],
        prim: u16,
        passed: u32,
        stats: &mut Vec<TileCount>,
    ) {
        if self.prim != Some(prim) {
            self.prim = Some(prim);
            let c = batch.prim(jobs, prim).0.command;
            if c != self.command {
                self.finish(stats);
                self.command = c;
            }
        }
        self.sum += passed as u64;
    }

    #[inline(always)]
    fn finish(&mut self, stats: &mut Vec<TileCount>) {
        if self.sum > 0 {
            count(stats, self.command, 0, self.sum);
            self.sum = 0;
        }
    }
}

/// Shades the batch (its groups' masks, `sample_offset`) and runs the
/// merge: alpha test, alpha to coverage, late depth, counts, stores.
#[multiversion(
    targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"),
    attrs(allow(dead_code))
)]
fn shade_and_merge(
    ctx: &TileContext<'_>,
    batch: &mut FragBatch,
    ds: &DerivedState,
    stats: &mut Vec<TileCount>,
) {
    if ds.fragment == FragmentVariant::Folded {
        return fold_and_merge(ctx, batch, ds, stats);
    }
    let early = ds.tiles.early_depth && ds.uses_depth_stencil();
    let state = batch.state.unwrap_or_default();
    shade_batch(
        batch,
        ds,
        ctx.jobs,
        &ctx.fs_resources[ctx.fs_resources_of[state as usize] as usize],
    );
    let n = batch.groups.len();
    let mut stores = std::mem::take(&mut batch.stores);
    stores.clear();
    let alpha = ds.merge.alpha_test.is_some();
    let depth_out = ds.link.fs_info.output_slot(Semantic::Depth);
    let late_depth = if early || !ds.uses_depth_stencil() {
        None
    } else {
        ctx.targets.depth.as_ref()
    };
    // Alpha to coverage / alpha to one act with multisample rasterization
    // only (`TilesPlan::alpha_to_coverage`); sample s of 4 survives where
    // colour 0's alpha > s / 4.
    let color0 = ds.merge.rts.first().and_then(|rt| rt.slot);
    let a2c = ds.tiles.alpha_to_coverage;
    let mut passed_count = PassedCount::default();
    let simple = !alpha && !a2c && late_depth.is_none() && ds.tiles.fb_samples <= 1;
    // Nothing can remove lanes after shading: the groups are the stores.
    let groups: &[FragGroup] = if simple { &[] } else { &batch.groups };
    if simple {
        covered_stores::<false>(ctx, batch, early, &mut stores, &mut passed_count, stats);
    }
    for (g, grp) in groups.iter().enumerate() {
        let mut mask = grp.mask;
        if alpha {
            let colors = GroupColors {
                outputs: &batch.outputs,
                groups: n,
                g,
            };
            mask = alpha_test(&ds.merge, &colors, mask);
        }
        if a2c && let (Some(slot), Some(sm)) = (color0, batch.sample_masks.get_mut(g)) {
            let a = batch.outputs[(slot * 4 + 3) * n + g].to_array();
            for (s, m) in sm.iter_mut().enumerate() {
                let reference = s as f32 / MS_SAMPLES as f32;
                let keep = (0..8)
                    .filter(|&l| a[l] > reference)
                    .fold(0u8, |k, l| k | 1 << l);
                *m &= keep;
            }
            mask &= sm.iter().fold(0, |a, &b| a | b);
        }
        if let Some(dt) = late_depth {
            let (p, planes) = batch.prim(ctx.jobs, grp.prim);
            // A shader that writes depth replaces the interpolated value.
            let written =
                depth_out.map(|slot| clamp_depth(ds, p.viewport, batch.outputs[slot * 4 * n + g]));
            if let Some(sm) = batch
                .sample_masks
                .get_mut(g)
                .filter(|_| ds.tiles.fb_samples > 1)
            {
                sm.iter_mut().for_each(|m| *m &= mask);
                mask = test_sample_planes(ds, dt, grp, p, planes, sm, written);
            } else {
                let z = written.unwrap_or_else(|| group_depth(ds, grp, p, planes));
                mask = depth_stencil_test(&ds.merge, dt, grp.x, grp.y, &z, mask, p.front_facing);
            }
        }
        if !early {
            // Occlusion counts samples (lanes on a single-sampled buffer).
            let passed: u32 = match batch
                .sample_masks
                .get(g)
                .filter(|_| ds.tiles.fb_samples > 1)
            {
                Some(sm) => sm.iter().map(|m| (m & mask).count_ones()).sum(),
                None => mask.count_ones(),
            };
            passed_count.add(batch, ctx.jobs, grp.prim, passed, stats);
        }
        stores.push(StoreGroup {
            x: grp.x,
            y: grp.y,
            mask,
        });
    }
    passed_count.finish(stats);
    if ds.tiles.alpha_to_one {
        for rt in &ds.merge.rts {
            if let Some(slot) = rt.slot {
                let at = (slot * 4 + 3) * n;
                batch.outputs[at..at + n].fill(Lanes::ONE);
            }
        }
    }
    if ds.tiles.fb_samples > 1 {
        // Colour is shaded once per pixel and stored to each sample plane
        // the sample covers (llvmpipe without sample shading).
        let mut per_sample = Vec::with_capacity(stores.len());
        for s in 0..ds.tiles.fb_samples.min(MS_SAMPLES as u32) {
            per_sample.clear();
            per_sample.extend(
                stores
                    .iter()
                    .zip(&batch.sample_masks)
                    .map(|(st, m)| StoreGroup {
                        mask: st.mask & m[s as usize],
                        ..*st
                    }),
            );
            store_batch(
                &ds.merge,
                &ctx.targets.color_plane(s),
                &per_sample,
                &batch.outputs,
            );
        }
    } else {
        store_batch(&ds.merge, ctx.targets, &stores, &batch.outputs);
    }
    batch.stores = stores;
}

/// The stores of a batch whose groups are stored as covered (nothing after
/// shading removes lanes): one per group, and without early depth each
/// primitive's run of lanes counted as passed.  Returns the batch's
/// covered lanes with `TOTAL` (0 without).
#[inline(always)]
fn covered_stores<const TOTAL: bool>(
    ctx: &TileContext<'_>,
    batch: &FragBatch,
    early: bool,
    stores: &mut Vec<StoreGroup>,
    passed_count: &mut PassedCount,
    stats: &mut Vec<TileCount>,
) -> u32 {
    stores.extend(batch.groups.iter().map(|g| StoreGroup {
        x: g.x,
        y: g.y,
        mask: g.mask,
    }));
    let mut total = 0;
    if TOTAL || !early {
        // One `add` per run of groups from one primitive, the run's sum
        // in a register: per group, the baseline build kept the sum on
        // the stack, a read-modify-write chain that was half of
        // shade_and_merge's time in blend_overdraw.
        for run in batch.groups.chunk_by(|a, b| a.prim == b.prim) {
            let passed = run.iter().map(|g| g.mask.count_ones()).sum();
            total += passed;
            if !early {
                passed_count.add(batch, ctx.jobs, run[0].prim, passed, stats);
            }
        }
    }
    if TOTAL { total } else { 0 }
}

/// [`shade_and_merge`] for the fused variant ([`FragmentVariant::Folded`]):
/// a copy shader that never runs and no test after it, so every covered
/// group is a store, counted as the simple path above counts it, and the
/// stores evaluate the colours from the planes ([`fold_batch`]).
#[inline(always)]
fn fold_and_merge(
    ctx: &TileContext<'_>,
    batch: &mut FragBatch,
    ds: &DerivedState,
    stats: &mut Vec<TileCount>,
) {
    let early = ds.tiles.early_depth && ds.uses_depth_stencil();
    let mut stores = std::mem::take(&mut batch.stores);
    stores.clear();
    // Every covered lane counts as shaded: the shader never runs.
    let mut passed_count = PassedCount::default();
    let shaded = covered_stores::<true>(ctx, batch, early, &mut stores, &mut passed_count, stats);
    passed_count.finish(stats);
    batch.counts.shaded += shaded as u64;
    let colors = fold_batch(batch, ds, ctx.jobs);
    match colors.constant() {
        Some(constant) => store_batch_from(&ds.merge, ctx.targets, &stores, &constant),
        None => store_batch_from(&ds.merge, ctx.targets, &stores, &colors),
    }
    batch.stores = stores;
}

/// Multisample coverage of `p` in `tile`: each sample's groups with the
/// edges' `c` at that sample (`sample_c`), merged per group into `out`
/// (union mask) and `masks` (per sample), in the first sample's order
/// followed by groups only later samples reach.
fn cover_samples(
    p: &SetupPrim,
    sample_c: &[[i64; MAX_EDGES]; MS_SAMPLES],
    tile: &Rect,
    out: &mut Vec<Coverage>,
    masks: &mut Vec<[u8; MS_SAMPLES]>,
) {
    out.clear();
    masks.clear();
    let all_edges = ((1u16 << p.num_edges.min(MAX_EDGES as u8)) - 1) as u8;
    let (ox, oy) = (tile.x0 & !63, tile.y0 & !63);
    // 16 x 32 groups of 4x2 in a 64x64 tile: slot of each group in `out`.
    let mut slot = [u16::MAX; 16 * 32];
    let mut one = Vec::new();
    for (s, c) in sample_c.iter().enumerate() {
        let mut ps = *p;
        ps.c = *c;
        cover_prim(&ps, all_edges, tile, &mut one);
        for g in &one {
            let k = (((g.y - oy) >> 1) * 16 + ((g.x - ox) >> 2)) as usize;
            let Some(at) = slot.get_mut(k) else { continue };
            if *at == u16::MAX {
                *at = out.len() as u16;
                out.push(Coverage {
                    x: g.x,
                    y: g.y,
                    mask: 0,
                });
                masks.push([0; MS_SAMPLES]);
            }
            let i = *at as usize;
            out[i].mask |= g.mask;
            masks[i][s] |= g.mask;
        }
    }
}

/// Clears the tile's pixels of the attachments `buffers` names.
fn clear_tile(
    targets: &Targets,
    rect: &Rect,
    buffers: ClearFlags,
    value: &ferropipe_components::batch::ClearValue,
) {
    // Once per tile and clear (a 64x64 tile is 4096 pixels): the frame's
    // clears show in the flamegraph inside their `rasterize_tile`.
    ferropipe_profiling::scope!("clear_tile");
    let r = (rect.x0, rect.y0, rect.x1, rect.y1);
    for (i, t) in targets.color.iter().enumerate() {
        if let Some(t) = t
            && buffers.bits() & (ClearFlags::COLOR0.bits() << i) != 0
        {
            clear_color(t, r, value);
        }
    }
    if let Some(dt) = &targets.depth
        && buffers.intersects(ClearFlags::DEPTHSTENCIL)
    {
        clear_depth_stencil(dt, r, buffers, value);
    }
}

// ---------------------------------------------------------------------------
// The system
// ---------------------------------------------------------------------------

/// The tile pass's own state, kept across passes and flushes: per-tile
/// scratch memory and what each tile counted (reduced in tile order by
/// `reduce_tile_counts`, so counts do not depend on the thread count).
#[derive(Resource, Default)]
pub struct TilePass {
    /// Per-tile counts of the last pass.
    pub tile_counts: Vec<Vec<TileCount>>,
    /// Per-tile pipeline-counter totals of the last pass.
    pub tile_totals: Vec<TileTotals>,
    scratch: Arc<ScratchPool>,
}

/// Raster (with fragment and merge fused per batch, see raster.rs): renders
/// every tile of the scene in parallel.
pub(crate) fn rasterize_tiles(
    pool: Res<PipelineExecutor>,
    scene: Res<RecordedScene>,
    mut exec: ResMut<SceneExecution>,
    mut pass: ResMut<TilePass>,
    counters: Res<PipelineCounters>,
) {
    ferropipe_profiling::scope!("rasterize_tiles");
    let _time = counters.0.time_stage(PipelineSet::Tiles.stage());
    let exec = &mut *exec;
    let pass = &mut *pass;
    if exec.binned.is_empty() {
        return;
    }
    let Some(fb) = scene.framebuffer.clone() else {
        return;
    };
    let targets_res = std::mem::take(&mut exec.targets);
    let fs_res = std::mem::take(&mut exec.fs_resources);
    let fs_storage = std::mem::take(&mut exec.fs_storage);
    {
        let locks = LockSet::acquire(
            targets_res
                .iter()
                .map(|r| (r, true))
                .chain(fs_res.iter().map(|r| (r, false)))
                .chain(fs_storage.iter().map(|r| (r, true))),
        );
        let mut targets = Targets::default();
        for cb in &fb.cbufs {
            targets.color.push(cb.as_ref().and_then(|s| {
                let (ptr, len) = locks.target(&s.resource)?;
                ColorTarget::new(TargetMemory::for_surface(s, ptr, len)?, s.desc.format)
            }));
        }
        targets.depth = fb.zsbuf.as_ref().and_then(|s| {
            let (ptr, len) = locks.target(&s.resource)?;
            Some(DepthTarget::new(
                TargetMemory::for_surface(s, ptr, len)?,
                DepthFormat::classify(s.desc.format)?,
                s.desc.format,
            ))
        });
        // One prepared stage per run of state blocks with the very same
        // fragment bindings (blocks that differ in vertex-stage state only,
        // e.g. a constant buffer per draw, share it).
        let mut prepared: Vec<PreparedStage<'_>> = Vec::new();
        let mut which = Vec::with_capacity(exec.states.len());
        for (i, ds) in exec.states.iter().enumerate() {
            let fs = &ds.block.fs_resources;
            if i == 0 || !fs.same_as(&exec.states[i - 1].block.fs_resources) {
                prepared.push(PreparedStage::new(fs, &locks));
            }
            which.push(prepared.len() as u32 - 1);
        }
        let fs_resources: Vec<_> = prepared.iter().map(PreparedStage::resources).collect();
        let mut runs = Vec::with_capacity(exec.states.len());
        batch_runs(&exec.states, &which, &mut runs);
        let ctx = TileContext {
            grid: exec.grid,
            jobs: &exec.binned,
            states: &exec.states,
            targets: &targets,
            fs_resources: &fs_resources,
            fs_resources_of: &which,
            counted: &exec.counted,
            batch_run_of: &runs,
        };
        let n = exec.grid.tiles();
        pass.tile_counts.resize_with(n, Vec::new);
        pass.tile_totals.clear();
        pass.tile_totals.resize(n, TileTotals::default());
        type Slot<'s> = (&'s mut Vec<TileCount>, &'s mut TileTotals);
        let slots: Vec<std::sync::Mutex<Slot<'_>>> = pass
            .tile_counts
            .iter_mut()
            .zip(pass.tile_totals.iter_mut())
            .map(std::sync::Mutex::new)
            .collect();
        let pool_scratch = pass.scratch.clone();
        let meter = &exec.meter;
        pool.0.for_each(n, &|t| {
            ferropipe_profiling::scope!("rasterize_tile");
            if meter.out_of_time() {
                return; // a safe point: tiles own disjoint pixels
            }
            let mut scratch: TileScratch = pool_scratch.take();
            let mut slot = slots[t].lock().unwrap_or_else(|e| e.into_inner());
            let (stats, totals) = &mut *slot;
            stats.clear();
            **totals = rasterize_tile(&ctx, t, &mut scratch, stats);
            pool_scratch.give(scratch);
        });
        for (seen, t) in exec.tile_seen.iter_mut().zip(&pass.tile_totals) {
            *seen |= t.touched as u8 | (t.fully_covered as u8) << 1;
        }
    }
    exec.targets = targets_res;
    exec.fs_resources = fs_res;
    exec.fs_storage = fs_storage;
}

/// The tile pass's bookkeeping: attributes fragment-shader invocations
/// (`ps_invocations`) and passed samples (occlusion) to their commands,
/// adds up the fragments shaded and killed in tile order, and recycles the
/// bins for the rest of the scene.
pub(crate) fn reduce_tile_counts(
    mut exec: ResMut<SceneExecution>,
    mut pass: ResMut<TilePass>,
    counters: Res<PipelineCounters>,
) {
    ferropipe_profiling::scope!("reduce_tile_counts");
    let _time = counters.0.time_stage(PipelineSet::Tiles.stage());
    let exec = &mut *exec;
    let pass = &mut *pass;
    for tile in &mut pass.tile_counts {
        for c in tile.iter() {
            if let Some(d) = exec.counters.get_mut(c.command as usize) {
                d.ps_invocations += c.ps_invocations;
                d.samples_passed += c.samples_passed;
            }
        }
        tile.clear();
    }
    let mut totals = Counts::new();
    for t in pass.tile_totals.drain(..) {
        totals.add(Counter::FragmentsShaded, t.frags.shaded);
        totals.add(Counter::FragmentsKilled, t.frags.killed);
    }
    counters.0.commit(&totals);
    let binned = std::mem::take(&mut exec.binned);
    exec.spare_binned.extend(binned);
    exec.binned_bytes = 0;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::setup::edge;
    use ferropipe_components::batch::FIXED_ONE;

    fn tri(x: [i32; 3], y: [i32; 3]) -> SetupPrim {
        let mut p = SetupPrim {
            num_edges: 3,
            x0: 0,
            y0: 0,
            x1: 64,
            y1: 64,
            ..Default::default()
        };
        for i in 0..3 {
            let j = (i + 1) % 3;
            let (a, b, c) = edge(x[i], y[i], x[j], y[j], false);
            p.a[i] = a;
            p.b[i] = b;
            p.c[i] = c;
        }
        p
    }

    fn brute(p: &SetupPrim, px: i32, py: i32) -> bool {
        (0..3).all(|e| p.c[e] + p.a[e] as i64 * px as i64 + p.b[e] as i64 * py as i64 > 0)
    }

    /// The groups of `r` from column `gx0` (and its first group row), row
    /// by row, each with the lanes whose pixel is inside `r` and passes
    /// `covered`, the empty ones left out: what the coverage walk makes.
    fn region_groups(r: &Rect, gx0: i32, covered: impl Fn(i32, i32) -> bool) -> Vec<Coverage> {
        let mut want = Vec::new();
        let mut gy = r.y0 & !1;
        while gy < r.y1 {
            let mut gx = gx0;
            while gx < r.x1 {
                let mut m = 0u8;
                for l in 0..LANES {
                    let (px, py) = (gx + FRAG_LANE_X[l] as i32, gy + FRAG_LANE_Y[l] as i32);
                    if (r.x0..r.x1).contains(&px) && (r.y0..r.y1).contains(&py) && covered(px, py) {
                        m |= 1 << l;
                    }
                }
                if m != 0 {
                    want.push(Coverage {
                        x: gx,
                        y: gy,
                        mask: m,
                    });
                }
                gx += 4;
            }
            gy += 2;
        }
        want
    }

    #[test]
    fn simd_coverage_matches_scalar_edges() {
        let s = FIXED_ONE;
        let cases = [
            (
                [3 * s + 17, 50 * s + 3, 20 * s + 99],
                [2 * s + 5, 10 * s + 77, 60 * s + 1],
            ),
            ([0, 64 * s, 0], [0, 0, 64 * s]),
            (
                [10 * s, 11 * s, 10 * s + 128],
                [10 * s, 10 * s + 200, 11 * s],
            ),
        ];
        let tile = Rect {
            x0: 0,
            y0: 0,
            x1: 64,
            y1: 64,
        };
        for (x, y) in cases {
            // Make counter-clockwise.
            let area = (x[0] - x[1]) as i64 * (y[2] - y[0]) as i64
                - (x[2] - x[0]) as i64 * (y[0] - y[1]) as i64;
            let (x, y) = if area < 0 {
                ([x[1], x[0], x[2]], [y[1], y[0], y[2]])
            } else {
                (x, y)
            };
            let p = tri(x, y);
            let mut out = Vec::new();
            cover_prim_at(None, &p, 0b111, &tile, &mut out);
            let mut fast = Vec::new();
            cover_prim_at(X86V3::detect(), &p, 0b111, &tile, &mut fast);
            assert_eq!(out, fast, "the AVX2 coverage differs");
            let mut got = vec![false; 64 * 64];
            for c in &out {
                for l in 0..8 {
                    if c.mask & (1 << l) != 0 {
                        let px = c.x + FRAG_LANE_X[l] as i32;
                        let py = c.y + FRAG_LANE_Y[l] as i32;
                        assert!(!got[(py * 64 + px) as usize], "pixel emitted twice");
                        got[(py * 64 + px) as usize] = true;
                    }
                }
            }
            for py in 0..64 {
                for px in 0..64 {
                    assert_eq!(
                        got[(py * 64 + px) as usize],
                        brute(&p, px, py),
                        "({px},{py})"
                    );
                }
            }
        }
    }

    /// Small triangles (the inline paths of at most 2x2 and 3x3 groups,
    /// and the walk and its 16x16 blocks past them) anywhere in a tile,
    /// with any subset of edges to evaluate: the groups are exactly the
    /// covered ones of the bounding box (row by row within one walk), each
    /// with the lanes whose pixel passes the evaluated edges, at both SIMD
    /// levels.
    #[test]
    fn small_triangle_coverage_matches_brute_force() {
        use proptest::prelude::*;
        let strategy = (
            prop::array::uniform3((0i32..16 * FIXED_ONE, 0i32..10 * FIXED_ONE)),
            (0i32..56 * FIXED_ONE, 0i32..56 * FIXED_ONE),
            1u8..8,
            prop::bool::ANY,
        );
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
            cases: 2000,
            ..ProptestConfig::default()
        });
        runner
            .run(&strategy, |(v, (dx, dy), edge_mask, tile_moved)| {
                // A tile away from the origin exercises the edge narrowing.
                let (tx, ty) = if tile_moved { (128, 64) } else { (0, 0) };
                let mut x = v.map(|(x, _)| x + dx + tx * FIXED_ONE);
                let mut y = v.map(|(_, y)| y + dy + ty * FIXED_ONE);
                let area = (x[0] - x[1]) as i64 * (y[2] - y[0]) as i64
                    - (x[2] - x[0]) as i64 * (y[0] - y[1]) as i64;
                if area == 0 {
                    return Ok(());
                }
                if area < 0 {
                    x.swap(0, 1);
                    y.swap(0, 1);
                }
                let mut p = tri(x, y);
                let order = FIXED_ONE.trailing_zeros();
                p.x0 = x.iter().min().unwrap() >> order;
                p.y0 = y.iter().min().unwrap() >> order;
                p.x1 = ((x.iter().max().unwrap() - 1) >> order) + 1;
                p.y1 = ((y.iter().max().unwrap() - 1) >> order) + 1;
                let tile = Rect {
                    x0: tx,
                    y0: ty,
                    x1: tx + 64,
                    y1: ty + 64,
                };
                let r = tile.intersect(&Rect {
                    x0: p.x0,
                    y0: p.y0,
                    x1: p.x1,
                    y1: p.y1,
                });
                let inside = |px: i32, py: i32| {
                    (0..3).all(|e| {
                        edge_mask & (1 << e) == 0
                            || p.c[e] + p.a[e] as i64 * px as i64 + p.b[e] as i64 * py as i64 > 0
                    })
                };
                let mut want = region_groups(&r, r.x0 & !3, inside);
                // Up to 16x16 pixels one walk (or inline path) covers the
                // region row by row; past that the walk goes 16x16 block
                // by block, so only the set of groups is compared there.
                let one_walk = r.x1 - (r.x0 & !3) <= 16 && r.y1 - (r.y0 & !1) <= 16;
                let key = |c: &Coverage| (c.y, c.x);
                if !one_walk {
                    want.sort_by_key(key);
                }
                for level in [None, X86V3::detect()] {
                    let mut got = Vec::new();
                    cover_prim_at(level, &p, edge_mask, &tile, &mut got);
                    if !one_walk {
                        got.sort_by_key(key);
                    }
                    prop_assert_eq!(&got, &want, "SIMD level {:?}", level.is_some());
                }
                Ok(())
            })
            .unwrap();
    }

    /// The AVX2 inline block (`cover_tiny_avx2`) makes the portable lanes'
    /// groups and masks for any record whose region is at most 3x3 groups:
    /// slivers whose edges' steps and values are far from the region (the
    /// 64-bit narrowing and its clamp), up to four edges, any subset of
    /// them evaluated, tiles anywhere.
    #[test]
    fn tiny_avx2_coverage_is_the_lanes_coverage() {
        use proptest::prelude::*;
        let Some(v3) = X86V3::detect() else {
            return;
        };
        // Steps up to 2^22 keep the walk's `i32` sums inside `i32` (the
        // portable path adds without wrapping in a debug build).
        let step = -(1i32 << 22)..(1i32 << 22);
        let strategy = (
            (
                prop::array::uniform4(step.clone()),
                prop::array::uniform4(step),
                prop::array::uniform4(-(1i64 << 40)..(1i64 << 40)),
            ),
            (1u8..=4, 0u8..16),
            (0i32..30, 0i32..16),
            (0i32..64, 0i32..64, 1i32..13, 1i32..7),
        );
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
            cases: 4000,
            ..ProptestConfig::default()
        });
        runner
            .run(
                &strategy,
                |((a, b, c), (num_edges, edge_mask), (tx, ty), (x0, y0, w, h))| {
                    let tile = Rect {
                        x0: tx * 64,
                        y0: ty * 64,
                        x1: tx * 64 + 64,
                        y1: ty * 64 + 64,
                    };
                    // Small values near the region for some records, so
                    // that some groups are covered.
                    let c = if x0 % 2 == 0 { c.map(|v| v >> 24) } else { c };
                    let p = SetupPrim {
                        a,
                        b,
                        c,
                        num_edges,
                        x0: tile.x0 + x0,
                        y0: tile.y0 + y0,
                        x1: tile.x0 + x0 + w,
                        y1: tile.y0 + y0 + h,
                        ..Default::default()
                    };
                    let (mut want, mut got) = (Vec::new(), Vec::new());
                    cover_prim_at(None, &p, edge_mask, &tile, &mut want);
                    cover_prim_at(Some(v3), &p, edge_mask, &tile, &mut got);
                    prop_assert_eq!(got, want);
                    Ok(())
                },
            )
            .unwrap();
    }

    /// Without edges every pixel of the region is covered, each once, in
    /// row-major group order (`cover_full`, and the general walk where it
    /// declines), at both SIMD levels; regions of every alignment.
    #[test]
    fn edgeless_coverage_is_the_region() {
        let regions = [
            (0, 0, 64, 64),
            (3, 1, 17, 9),
            (5, 2, 6, 3),
            (1, 1, 4, 2),
            (8, 6, 8, 9),
        ];
        for (x0, y0, x1, y1) in regions {
            let r = Rect { x0, y0, x1, y1 };
            for gx0 in [x0 & !3, (x0 & !3) - 4] {
                let want = region_groups(&r, gx0, |_, _| true);
                for v3 in [None, X86V3::detect()] {
                    let mut got = Vec::new();
                    cover_region_n::<0>(v3, &[], (0, 0, gx0, y0 & !1), &r, &mut got);
                    assert_eq!(got, want, "{r:?} from {gx0}, AVX2 {}", v3.is_some());
                }
            }
        }
    }

    /// Blocks that differ in a vertex constant buffer only share a batch
    /// run, so one batch mixes their primitives: overlapping, blended and
    /// depth-tested draws must still merge in submission order, giving
    /// the image of one flush per draw (whose batches never mix).
    #[test]
    fn batches_mixing_blocks_merge_in_submission_order() {
        use crate::tests::{Setup, clear, draw, pixels, run, verts, world};
        use ferropipe_components::draw::ConstantBufferBinding;
        use ferropipe_components::enums::{BlendFactor, Func, PrimType};
        use ferropipe_components::format::Format;

        let (w, h) = (48, 40);
        // Six overlapping triangles at varying depths, half transparent.
        let mut pts = Vec::new();
        for k in 0..6 {
            let (o, z) = (k as f32 * 4.0, [0.6, 0.3, 0.5, 0.2, 0.7, 0.1][k]);
            let c = [k as f32 / 6.0, 1.0 - k as f32 / 6.0, 0.5, 0.5];
            pts.extend([
                (2.0 + o, 2.0, z, c),
                (40.0 + o / 2.0, 6.0 + o, z, c),
                (6.0, 36.0, z, c),
            ]);
        }
        for depth in [false, true] {
            let mut s = Setup::new(w, h, depth.then_some(Format::Z32_FLOAT))
                .with_vertices(&verts(&pts, w, h));
            let mut blend = (*s.block.blend).clone();
            let rt = &mut blend.rt[0];
            rt.blend_enable = true;
            (rt.rgb_src_factor, rt.alpha_src_factor) =
                (BlendFactor::SrcAlpha, BlendFactor::SrcAlpha);
            (rt.rgb_dst_factor, rt.alpha_dst_factor) =
                (BlendFactor::InvSrcAlpha, BlendFactor::InvSrcAlpha);
            s.block.blend = Arc::new(blend);
            let mut dsa = *s.block.dsa;
            dsa.depth_enabled = depth;
            dsa.depth_writemask = depth;
            dsa.depth_func = Func::Less;
            s.block.dsa = Arc::new(dsa);
            let block = |k: u8| {
                let mut b = s.block.clone();
                let mut slots = (*b.vs_resources.constant_buffers).clone();
                slots[0] = ConstantBufferBinding {
                    user_buffer: Some(Arc::from(vec![k; 16])),
                    ..Default::default()
                };
                b.vs_resources.constant_buffers = Arc::new(slots);
                b
            };
            let draws =
                || (0..6u8).map(|k| (Some(block(k)), draw(PrimType::Triangles, 3 * k as u32, 3)));
            let mut one = world(1);
            let mut cmds = vec![(None, clear([0.1, 0.2, 0.3, 1.0]))];
            cmds.extend(draws());
            run(&mut one, &s.fb, cmds);
            let mixed = pixels(s.fb.cbufs[0].as_ref().unwrap());

            let mut each = world(1);
            run(&mut each, &s.fb, vec![(None, clear([0.1, 0.2, 0.3, 1.0]))]);
            for d in draws() {
                run(&mut each, &s.fb, vec![d]);
            }
            let separate = pixels(s.fb.cbufs[0].as_ref().unwrap());
            assert_eq!(mixed, separate, "depth {depth}");
        }
    }
}
