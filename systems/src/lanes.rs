//! Lane and tile helpers every stage may use: lane-register buffers and
//! masks, pixel rectangles, the scene's tile grid, and cache prefetch.
//!
//! The leaf of `ferropipe-systems`: this file imports no stage, so any stage
//! may import it without tying itself to another (before it existed, setup
//! reached into fragment for `mask_lanes`, fragment into fetch for
//! `resize_lanes`, and bin and raster into each other for `TileGrid` and
//! the prefetches, which made import circles).  llvmpipe keeps the same kind
//! of helpers apart from its stages (`lp_bld_*` lane helpers, `lp_scene.h`'s
//! tile constants).

use ferropipe_components::batch::{Plane, SetupPrim, SetupPrims, TILE_SIZE};
use ferropipe_components::shader::{ILanes, Lanes};

/// Groups per fragment batch (8 lanes each: 512 pixels, two 16x16 blocks):
/// raster fills batches, fragment and merge run them, and the smooth
/// primitives' coverage (aa_stage.rs) sizes its stack buffer by them.
pub const MAX_BATCH_GROUPS: usize = 64;

/// Expands an 8-bit mask to all-ones / zero lanes.
#[inline]
pub(crate) fn mask_lanes(mask: u8) -> Lanes {
    const BITS: ILanes = ILanes::new([1, 2, 4, 8, 16, 32, 64, 128]);
    let m = (ILanes::splat(mask as i32) & BITS).simd_eq(BITS);
    bytemuck::cast(m)
}

/// Grows (never shrinks) a lane buffer to `n` registers.
pub(crate) fn resize_lanes(v: &mut Vec<Lanes>, n: usize) {
    if v.len() < n {
        v.resize(n, Lanes::ZERO);
    }
    v.truncate(n);
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
        let tx = (t as u32 % self.cols) * TILE_SIZE;
        let ty = (t as u32 / self.cols) * TILE_SIZE;
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
/// without this nearly every record is a cache miss.
pub(crate) const PREFETCH_DISTANCE: usize = 8;

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
