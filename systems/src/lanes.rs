//! Lane and tile helpers every stage may use: lane-register buffers and
//! masks, pixel rectangles, the scene's tile grid, cache prefetch, and the
//! framebuffer and viewport geometry the clip, setup and tile plans share.
//!
//! The leaf of `ferropipe-systems`: this file imports no stage, so any stage
//! may import it without tying itself to another (before it existed, setup
//! reached into fragment for `mask_lanes`, fragment into fetch for
//! `resize_lanes`, and bin and raster into each other for `TileGrid` and
//! the prefetches, which made import circles).  llvmpipe keeps the same kind
//! of helpers apart from its stages (`lp_bld_*` lane helpers, `lp_scene.h`'s
//! tile constants).

use ferropipe_components::batch::{Plane, SetupPrim, SetupPrims, TILE_SIZE};
use ferropipe_components::draw::FramebufferState;
use ferropipe_components::shader::{ILanes, Lanes, ULanes};
use ferropipe_components::simd::X86V3;
use ferropipe_components::state::ViewportState;

/// Groups per fragment batch (8 lanes each: 2048 pixels, half a 64x64
/// tile): raster fills batches, fragment and merge run them, and the
/// smooth primitives' coverage (aa_stage.rs) sizes its stack buffer by
/// them.
///
/// Each batch pays a fixed cost outside its groups: the shader call's
/// set-up (bindings, the sampling variant's key and descriptors, the
/// constants), the interpolation's and the stores' per-state set-up, the
/// flush itself.  At 64 groups a 1080p full-screen pass made ~4,000 calls
/// a frame and textured_mesh ~10,000; at 256, paired runs at one thread
/// against 64 (2026-11-28, same build otherwise): postprocess 0.933x,
/// pbr_barrels 0.952x, textured_mesh 0.948x, fill_overdraw 0.901x,
/// tiny_tris_1m 0.978x, many_draws 0.998x.  512 gained nothing more.  The
/// interpreter still runs a batch in chunks of at most
/// `ferropipe_shader::exec::MAX_CHUNK_GROUPS` (64), so a large shader's
/// registers stay in L1/L2 whatever the batch size (chunks of 256 were
/// no faster).
pub const MAX_BATCH_GROUPS: usize = 256;

/// Expands an 8-bit mask to all-ones / zero lanes.
#[inline]
pub(crate) fn mask_lanes(mask: u8) -> Lanes {
    const BITS: ILanes = ILanes::new([1, 2, 4, 8, 16, 32, 64, 128]);
    let m = (ILanes::splat(mask as i32) & BITS).simd_eq(BITS);
    bytemuck::cast(m)
}

/// [`mask_lanes`] at a SIMD level: one broadcast, one `vpand` and one
/// compare with the token, where a baseline build's `wide` does each step
/// twice on SSE halves.
#[inline(always)]
pub(crate) fn mask_lanes_at(v3: Option<X86V3>, mask: u8) -> Lanes {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = v3 {
        return v3_lanes::mask_lanes(t, mask);
    }
    let _ = v3;
    mask_lanes(mask)
}

/// `x.fast_max(lo).fast_min(hi)` at a SIMD level (the same operations in
/// the same order, so the same bits, NaN included: `vmaxps` returns its
/// second operand for NaN).
#[inline(always)]
pub(crate) fn clamp_at(v3: Option<X86V3>, x: Lanes, lo: Lanes, hi: Lanes) -> Lanes {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = v3 {
        return v3_lanes::clamp(t, x, lo, hi);
    }
    let _ = v3;
    x.fast_max(lo).fast_min(hi)
}

/// `(new & keep) | (old & !keep)` at a SIMD level.
#[inline(always)]
pub(crate) fn select_bits_at(v3: Option<X86V3>, keep: ULanes, new: ULanes, old: ULanes) -> ULanes {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = v3 {
        return v3_lanes::select_bits(t, keep, new, old);
    }
    let _ = v3;
    (new & keep) | (old & !keep)
}

/// Fills a row of lane registers with one value, at a SIMD level: with
/// the token one 32-byte store per register, where `[Lanes]::fill` in a
/// baseline build stores the two SSE halves (the fragment stage's constant
/// inputs were 28 % of its samples in blend_overdraw's baseline build).
/// Not a fill of the floats: rows are a few registers long, and the
/// vectorised loop's set-up cost more than it saved (+7 % instructions in
/// small_tris_100k's fragment stage).
#[inline(always)]
pub(crate) fn fill_lanes_with_at(v3: Option<X86V3>, row: &mut [Lanes], v: Lanes) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = v3 {
        return v3_lanes::fill(t, row, v);
    }
    let _ = v3;
    row.fill(v);
}

/// [`Plane`]'s value at offsets `(dx, dy)` from its reference pixel,
/// `a0 + dadx * dx + dady * dy` (two multiplies and two adds, unfused, in
/// that order: `fragment::eval_plane`'s bits), at a SIMD level.
#[inline(always)]
pub(crate) fn plane_at(v3: Option<X86V3>, p: &Plane, dx: Lanes, dy: Lanes) -> Lanes {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = v3 {
        return v3_lanes::plane(t, p, dx, dy);
    }
    let _ = v3;
    Lanes::splat(p.a0) + Lanes::splat(p.dadx) * dx + Lanes::splat(p.dady) * dy
}

/// `a * b` at a SIMD level.
#[inline(always)]
pub(crate) fn mul_at(v3: Option<X86V3>, a: Lanes, b: Lanes) -> Lanes {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = v3 {
        return v3_lanes::mul(t, a, b);
    }
    let _ = v3;
    a * b
}

/// `a + b` (wrapping) on 32-bit integers at a SIMD level.
#[inline(always)]
pub(crate) fn add_i_at(v3: Option<X86V3>, a: ILanes, b: ILanes) -> ILanes {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = v3 {
        return v3_lanes::add_i(t, a, b);
    }
    let _ = v3;
    a + b
}

/// `a * b` (wrapping) on 32-bit integers at a SIMD level (SSE2 has no
/// `pmulld`: two `pmuludq` and four shuffles per half).
#[inline(always)]
pub(crate) fn mul_i_at(v3: Option<X86V3>, a: ILanes, b: ILanes) -> ILanes {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = v3 {
        return v3_lanes::mul_i(t, a, b);
    }
    let _ = v3;
    a * b
}

/// The lane steps of the helpers above in AVX2 intrinsics, for kernels
/// that run in a `multiversion` clone of a baseline build (ARCHITECTURE.md,
/// "SIMD width and levels"): there `wide`'s 8-lane types are two SSE halves
/// whatever the clone's features.  `#[inline(always)]` functions without
/// `#[target_feature]`, so they become the calling clone's instructions;
/// the [`X86V3`] argument proves the CPU runs AVX2.
#[cfg(target_arch = "x86_64")]
pub(crate) mod v3_lanes {
    use core::arch::x86_64::*;
    use ferropipe_components::batch::{MAX_EDGES, Plane, SetupPrim};
    use ferropipe_components::shader::{ILanes, Lanes, ULanes};
    use ferropipe_components::simd::X86V3;

    /// A record's four edges in 64-bit lanes: their steps `a` and `b`
    /// sign-extended, and their values at pixel `(x, y)`, `c + a x + b y`,
    /// exact as the scalar `i64` sums (`vpmuldq` multiplies the signed low
    /// halves).  Binning classifies from these at a tile's corner, and the
    /// tiny coverage block narrows them at the tile's origin.
    #[inline(always)]
    pub(crate) fn record_edges_at(
        _: X86V3,
        p: &SetupPrim,
        x: i32,
        y: i32,
    ) -> (__m256i, __m256i, __m256i) {
        const _: () = assert!(MAX_EDGES == 4);
        // SAFETY: the token proves AVX2; the loads read the record's own
        // `a` and `b` (16 bytes each) and `c` (32 bytes) arrays.
        unsafe {
            let a = _mm256_cvtepi32_epi64(_mm_loadu_si128(p.a.as_ptr().cast()));
            let b = _mm256_cvtepi32_epi64(_mm_loadu_si128(p.b.as_ptr().cast()));
            let c = _mm256_loadu_si256(p.c.as_ptr().cast());
            let v = _mm256_add_epi64(
                _mm256_add_epi64(c, _mm256_mul_epi32(a, _mm256_set1_epi64x(x as i64))),
                _mm256_mul_epi32(b, _mm256_set1_epi64x(y as i64)),
            );
            (a, b, v)
        }
    }

    /// [`super::mask_lanes`].
    #[inline(always)]
    pub(crate) fn mask_lanes(_: X86V3, mask: u8) -> Lanes {
        // SAFETY: the token proves AVX2.
        unsafe {
            let bits = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
            let m = _mm256_and_si256(_mm256_set1_epi32(mask as i32), bits);
            bytemuck::cast(_mm256_cmpeq_epi32(m, bits))
        }
    }

    /// [`super::fill_lanes_with_at`].
    #[inline(always)]
    pub(crate) fn fill(_: X86V3, row: &mut [Lanes], v: Lanes) {
        let r: __m256 = bytemuck::cast(v);
        for l in row {
            // SAFETY: the token proves AVX; `l` is 32 writable bytes.
            unsafe { _mm256_storeu_ps(l as *mut Lanes as *mut f32, r) };
        }
    }

    /// [`super::plane_at`].
    #[inline(always)]
    pub(crate) fn plane(_: X86V3, p: &Plane, dx: Lanes, dy: Lanes) -> Lanes {
        // SAFETY: the token proves AVX2.
        unsafe {
            let x = _mm256_mul_ps(_mm256_set1_ps(p.dadx), bytemuck::cast(dx));
            let y = _mm256_mul_ps(_mm256_set1_ps(p.dady), bytemuck::cast(dy));
            bytemuck::cast(_mm256_add_ps(_mm256_add_ps(_mm256_set1_ps(p.a0), x), y))
        }
    }

    /// [`super::mul_at`].
    #[inline(always)]
    pub(crate) fn mul(_: X86V3, a: Lanes, b: Lanes) -> Lanes {
        // SAFETY: the token proves AVX2.
        unsafe { bytemuck::cast(_mm256_mul_ps(bytemuck::cast(a), bytemuck::cast(b))) }
    }

    /// [`super::add_i_at`].
    #[inline(always)]
    pub(crate) fn add_i(_: X86V3, a: ILanes, b: ILanes) -> ILanes {
        // SAFETY: the token proves AVX2.
        unsafe { bytemuck::cast(_mm256_add_epi32(bytemuck::cast(a), bytemuck::cast(b))) }
    }

    /// [`super::mul_i_at`].
    #[inline(always)]
    pub(crate) fn mul_i(_: X86V3, a: ILanes, b: ILanes) -> ILanes {
        // SAFETY: the token proves AVX2.
        unsafe { bytemuck::cast(_mm256_mullo_epi32(bytemuck::cast(a), bytemuck::cast(b))) }
    }

    /// [`super::clamp_at`].
    #[inline(always)]
    pub(crate) fn clamp(_: X86V3, x: Lanes, lo: Lanes, hi: Lanes) -> Lanes {
        // SAFETY: the token proves AVX2.
        unsafe {
            let x: __m256 = bytemuck::cast(x);
            let m = _mm256_max_ps(x, bytemuck::cast(lo));
            bytemuck::cast(_mm256_min_ps(m, bytemuck::cast(hi)))
        }
    }

    /// [`super::select_bits_at`].
    #[inline(always)]
    pub(crate) fn select_bits(_: X86V3, keep: ULanes, new: ULanes, old: ULanes) -> ULanes {
        // SAFETY: the token proves AVX2.
        unsafe {
            let keep: __m256i = bytemuck::cast(keep);
            let new = _mm256_and_si256(bytemuck::cast(new), keep);
            bytemuck::cast(_mm256_or_si256(
                new,
                _mm256_andnot_si256(keep, bytemuck::cast(old)),
            ))
        }
    }

    /// A 4x2 group's 32-bit pixels from its two 16-byte rows, in lane
    /// order (pixel pairs of row 0, row 1, row 0, row 1: `FRAG_LANE_X/Y`).
    ///
    /// # Safety
    /// 16 bytes are readable at each of `r0` and `r1`.
    #[inline(always)]
    pub(crate) unsafe fn load_group32(_: X86V3, r0: *const u8, r1: *const u8) -> ULanes {
        // SAFETY: the caller's contract; the token proves AVX2.
        unsafe {
            let a = _mm_loadu_si128(r0 as *const __m128i);
            let b = _mm_loadu_si128(r1 as *const __m128i);
            let rows = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(a), b);
            // [r0 lo, r0 hi, r1 lo, r1 hi] -> [r0 lo, r1 lo, r0 hi, r1 hi].
            bytemuck::cast(_mm256_permute4x64_epi64::<0xd8>(rows))
        }
    }

    /// The inverse of [`load_group32`].
    ///
    /// # Safety
    /// 16 bytes are writable at each of `r0` and `r1`.
    #[inline(always)]
    pub(crate) unsafe fn store_group32(_: X86V3, r0: *mut u8, r1: *mut u8, px: ULanes) {
        // SAFETY: the caller's contract; the token proves AVX2.
        unsafe {
            let rows = _mm256_permute4x64_epi64::<0xd8>(bytemuck::cast(px));
            _mm_storeu_si128(r0 as *mut __m128i, _mm256_castsi256_si128(rows));
            _mm_storeu_si128(r1 as *mut __m128i, _mm256_extracti128_si256::<1>(rows));
        }
    }
}

/// Grows (never shrinks) a lane buffer to `n` registers.
pub(crate) fn resize_lanes(v: &mut Vec<Lanes>, n: usize) {
    grow_lanes(v, n);
    v.truncate(n);
}

/// Grows a lane buffer to at least `n` registers and keeps any longer
/// length, for buffers whose users index by an explicit group count.
///
/// Why not [`resize_lanes`]: a buffer truncated for a small batch is
/// zero-filled again when the next batch is larger.  The fragment stage's
/// batches alternate between a few and 256 groups, and re-filling its
/// input, output and coordinate rows was ~1,600 instructions per batch
/// (`memset`, 2.3 % of many_draws' instructions at one thread).
pub(crate) fn grow_lanes(v: &mut Vec<Lanes>, n: usize) {
    if v.len() < n {
        v.resize(n, Lanes::ZERO);
    }
}

/// A rectangle of pixels, min inclusive, max exclusive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rect {
    /// Left column, inclusive.
    pub x0: i32,
    /// Top row, inclusive.
    pub y0: i32,
    /// Right column, exclusive.
    pub x1: i32,
    /// Bottom row, exclusive.
    pub y1: i32,
}

impl Rect {
    /// The intersection of two rectangles (possibly empty).
    pub(crate) fn intersect(&self, o: &Rect) -> Rect {
        Rect {
            x0: self.x0.max(o.x0),
            y0: self.y0.max(o.y0),
            x1: self.x1.min(o.x1),
            y1: self.y1.min(o.y1),
        }
    }

    /// Whether the rectangle holds no pixel.
    pub fn is_empty(&self) -> bool {
        self.x0 >= self.x1 || self.y0 >= self.y1
    }

    /// Whether `o` lies inside `self`.
    pub fn contains(&self, o: &Rect) -> bool {
        o.x0 >= self.x0 && o.y0 >= self.y0 && o.x1 <= self.x1 && o.y1 <= self.y1
    }
}

/// The tile grid of a scene.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TileGrid {
    /// Tile columns (64-pixel tiles).
    pub cols: u32,
    /// Tile rows.
    pub rows: u32,
    /// Framebuffer size in pixels.
    pub width: u32,
    /// Framebuffer height in pixels.
    pub height: u32,
}

impl TileGrid {
    /// The 64x64 tiles covering `width` x `height` pixels, both clamped to 16384 (at least one tile).
    pub fn new(width: u32, height: u32) -> Self {
        let w = width.min(16384);
        let h = height.min(16384);
        TileGrid {
            cols: w.div_ceil(TILE_SIZE).max(1),
            rows: h.div_ceil(TILE_SIZE).max(1),
            width: w,
            height: h,
        }
    }

    /// Number of tiles.
    pub fn tiles(&self) -> usize {
        (self.cols * self.rows) as usize
    }

    /// The pixels of tile `t` that lie inside the framebuffer.
    pub fn tile_rect(&self, t: usize) -> Rect {
        self.tile_rect_at(t as u32 % self.cols, t as u32 / self.cols)
    }

    /// [`Self::tile_rect`] of the tile in column `col` and row `row`
    /// (no division: the binner's per-primitive tile loop).
    #[inline]
    pub fn tile_rect_at(&self, col: u32, row: u32) -> Rect {
        let tx = col * TILE_SIZE;
        let ty = row * TILE_SIZE;
        Rect {
            x0: tx as i32,
            y0: ty as i32,
            x1: (tx + TILE_SIZE).min(self.width) as i32,
            y1: (ty + TILE_SIZE).min(self.height) as i32,
        }
    }
}

/// How many entries ahead the tile walk (and the bin stage's record
/// permutation, `bin::order_prims_by_tile`) prefetches set-up records, and
/// (half as far) their planes.  A tile reads a few records from all over
/// each job's arrays (tiny triangles: ~1/500 of them, 4-6 per job), so
/// without this nearly every record is a cache miss.  16, not 8: the
/// planes' prefetch reads the record's `planes` field half as far ahead,
/// and at 4 entries (one tiny triangle's raster is ~40 ns) that load
/// still missed: 24 % of `rasterize_tile`'s samples on tiny_tris_1m,
/// 5 % at 16 (`perf annotate`), the scene 0.953x its time at one thread
/// and 0.978x at two (paired A/B, 3 rounds); small_tris_100k and
/// textured_mesh unchanged (1.000x, 1.020x over 5 rounds: noise).
pub(crate) const PREFETCH_DISTANCE: usize = 16;

/// Prefetches both cache lines a set-up record may straddle (112 bytes).
#[inline]
pub(crate) fn prefetch_record(p: &SetupPrim) {
    let at = p as *const SetupPrim as *const u8;
    prefetch(at);
    prefetch(at.wrapping_add(std::mem::size_of::<SetupPrim>() - 1));
}

/// Prefetches the first two lines of record `p`'s planes in `prims`.
#[inline]
pub(crate) fn prefetch_planes(prims: &SetupPrims, p: &SetupPrim) {
    if let Some(pl) = prims.planes.get(p.planes as usize) {
        let at = pl as *const Plane as *const u8;
        prefetch(at);
        prefetch(at.wrapping_add(64));
    }
}

/// Hints the cache to fetch the line at `p` (no effect on other targets).
#[inline(always)]
pub(crate) fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching never faults and does not dereference in the
    // language sense; any address is allowed.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

// ---------------------------------------------------------------------------
// Framebuffer and viewport geometry (read by the clip, setup and tile plans)

/// The standard 4x sample positions (D3D / llvmpipe's `lp_sample_pos_4x`:
/// (0.375, 0.125), (0.875, 0.375), (0.125, 0.625), (0.625, 0.875) in the
/// pixel), as offsets from the pixel centre in 1/256 pixel: exact in the
/// 8-bit fixed point.
pub(crate) const STANDARD_4X: [(i64, i64); 4] = [(-32, -96), (96, -32), (-96, 32), (32, 96)];

/// Samples per pixel of a framebuffer's colour buffers.
pub(crate) fn fb_samples(fb: &FramebufferState) -> u32 {
    fb.cbufs
        .iter()
        .flatten()
        .map(|s| s.resource.templ.samples())
        .max()
        .unwrap_or(1)
        .max(fb.samples.max(1))
}

/// The viewport transform setup sees: `half_pixel_center` off (pixel
/// centres at integer coordinates, D3D9) is the same picture as centres at
/// +0.5 with every window position moved by +0.5 (rasterizer.rst; the
/// llvmpipe reference tool renders it exactly so).  Shifting the geometry
/// rather than the sample grid keeps every rule that measures from pixel
/// centres — the fill rule, the lines' diamond-exit test, point and
/// sprite placement — consistent with the shifted centres.
pub(crate) fn window_viewport(vp: &ViewportState, half_pixel_center: bool) -> ViewportState {
    let mut vp = *vp;
    if !half_pixel_center {
        vp.translate[0] += 0.5;
        vp.translate[1] += 0.5;
    }
    vp
}

/// The pixels whose sample lies inside the viewport rectangle, with the
/// fill rule's tie-breaking: a sample exactly on the left (top) edge is
/// inside, on the right (bottom) edge outside, or top/bottom swapped under
/// `bottom_edge_rule`.  This is the coverage a triangle clipped to the
/// view volume's x/y planes would have at those edges.
pub(crate) fn viewport_pixels(
    vp: &ViewportState,
    pixel_offset: f32,
    bottom_edge_rule: bool,
) -> Rect {
    let lim = 32768.0f32;
    let span = |t: f32, s: f32| {
        let (a, b) = (t - s.abs(), t + s.abs());
        let (a, b) = (a - pixel_offset, b - pixel_offset);
        (a.clamp(-lim, lim), b.clamp(-lim, lim))
    };
    let (x0, x1) = span(vp.translate[0], vp.scale[0]);
    let (y0, y1) = span(vp.translate[1], vp.scale[1]);
    let (ry0, ry1) = if bottom_edge_rule {
        (y0.floor() as i32 + 1, y1.floor() as i32 + 1)
    } else {
        (y0.ceil() as i32, y1.ceil() as i32)
    };
    Rect {
        x0: x0.ceil() as i32,
        x1: x1.ceil() as i32,
        y0: ry0,
        y1: ry1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lane steps' AVX2 forms give the portable forms' bits, on random
    /// lanes mixed with NaN, infinities and signed zeros (skipped on a CPU
    /// without AVX2).
    #[test]
    fn levels_agree() {
        let Some(t) = X86V3::detect() else {
            return;
        };
        let v3 = Some(t);
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let bits = |v: Lanes| v.to_array().map(f32::to_bits);
        let lanes = |next: &mut dyn FnMut() -> u64| -> Lanes {
            Lanes::new(std::array::from_fn(|_| match next() % 16 {
                0 => f32::NAN,
                1 => f32::INFINITY,
                2 => f32::NEG_INFINITY,
                3 => -0.0,
                r => (next() as i32 as f32) * f32::from_bits(0x2f80_0000 + r as u32 * 0x0040_0000),
            }))
        };
        for mask in 0..=255u8 {
            assert_eq!(
                bits(mask_lanes_at(None, mask)),
                bits(mask_lanes_at(v3, mask))
            );
        }
        for _ in 0..5000 {
            let (a, b, c) = (lanes(&mut next), lanes(&mut next), lanes(&mut next));
            let (lo, hi) = (Lanes::ZERO, Lanes::ONE);
            assert_eq!(
                bits(clamp_at(None, a, lo, hi)),
                bits(clamp_at(v3, a, lo, hi))
            );
            assert_eq!(bits(mul_at(None, a, b)), bits(mul_at(v3, a, b)));
            let p = Plane {
                a0: a.to_array()[0],
                dadx: b.to_array()[1],
                dady: c.to_array()[2],
            };
            assert_eq!(bits(plane_at(None, &p, b, c)), bits(plane_at(v3, &p, b, c)));
            let (ia, ib): (ILanes, ILanes) = (bytemuck::cast(a), bytemuck::cast(b));
            assert_eq!(
                add_i_at(None, ia, ib).to_array(),
                add_i_at(v3, ia, ib).to_array()
            );
            assert_eq!(
                mul_i_at(None, ia, ib).to_array(),
                mul_i_at(v3, ia, ib).to_array()
            );
            let (ua, ub, uc): (ULanes, ULanes, ULanes) =
                (bytemuck::cast(a), bytemuck::cast(b), bytemuck::cast(c));
            assert_eq!(
                select_bits_at(None, ua, ub, uc).to_array(),
                select_bits_at(v3, ua, ub, uc).to_array()
            );
            let (mut r0, mut r1) = ([a; 3], [a; 3]);
            fill_lanes_with_at(None, &mut r0, Lanes::splat(c.to_array()[0]));
            fill_lanes_with_at(v3, &mut r1, Lanes::splat(c.to_array()[0]));
            assert_eq!(r0.map(bits), r1.map(bits));
            fill_lanes_with_at(None, &mut r0, b);
            fill_lanes_with_at(v3, &mut r1, b);
            assert_eq!(r0.map(bits), r1.map(bits));
        }
    }
}
