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
use ferropipe_components::shader::{ILanes, Lanes};
use ferropipe_components::state::ViewportState;

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
    grow_lanes(v, n);
    v.truncate(n);
}

/// Grows a lane buffer to at least `n` registers and keeps any longer
/// length, for buffers whose users index by an explicit group count.
///
/// Why not [`resize_lanes`]: a buffer truncated for a small batch is
/// zero-filled again when the next batch is larger.  The fragment stage's
/// batches alternate between a few and 64 groups, and re-filling its
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
