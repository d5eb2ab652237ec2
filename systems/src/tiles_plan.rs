//! The tile stage's plan (llvmpipe's per-variant fragment state in
//! `lp_state_fs.c`, beside the merge plan): the sample layout, the polygon
//! stipple masks, the depth range for `depth_clamp`, alpha to coverage /
//! one, and the two decisions that follow from the whole fragment state,
//! early depth and opaque overwrite.  Derived from the rasterizer,
//! depth/stencil/alpha and blend states, the framebuffer, the viewports,
//! the sample mask, `min_samples`, the stipple pattern, the linked fragment
//! shader's interface and the merge plan, and from nothing else; plans.rs
//! caches it across draws and flushes.

use ferropipe_components::draw::FramebufferState;
use ferropipe_components::shader::{Semantic, ShaderInfo};
use ferropipe_components::state::{
    BlendState, DepthStencilAlphaState, MAX_VIEWPORTS, PolyStipple, RasterizerState, ViewportState,
};

use crate::lanes::{STANDARD_4X, fb_samples, window_viewport};
use crate::link::{FsInputSource, FsRowSource, LinkPlan};
use crate::merge::MergePlan;

/// How the tile stage turns a batch of covered groups into stores:
/// llvmpipe's fs variant choice (`lp_state_fs.c`), made once per state and
/// cached with the state's `DerivedShape`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FragmentVariant {
    /// Interpolate the inputs into rows, run the shader over the batch, run
    /// the tests that follow it, and store from its output rows
    /// (`fragment::shade_batch`, then `raster::shade_and_merge`).
    Shaded,
    /// Fused: the shader only copies inputs to outputs
    /// (`LinkPlan::fs_copy_to`), so it never runs, and nothing between it
    /// and the stores reads its outputs (no alpha test, alpha to coverage
    /// or one, late depth/stencil, multisampling, window position): the
    /// stores evaluate each group's colours from its primitive's planes
    /// themselves (`fragment::fold_batch`, `merge::store_batch_from`),
    /// with no input or output rows in between.  blend_overdraw's
    /// ~37 instructions a group of row filling, and the stores' row reads,
    /// go (see docs/performance.md).
    Folded,
}

impl FragmentVariant {
    /// The variant of a state with linkage `link`, tile plan `tiles` and
    /// merge plan `merge`.
    pub fn of(link: &LinkPlan, tiles: &TilesPlan, merge: &MergePlan) -> Self {
        let reads_position = link.fs_info.frag_coord_mask != 0
            || link.fs_inputs.contains(&FsInputSource::FragCoord)
            || link
                .fs_rows
                .iter()
                .any(|r| matches!(r.src, FsRowSource::FragCoord { .. }));
        let tests_after = merge.alpha_test.is_some()
            || tiles.alpha_to_coverage
            || tiles.alpha_to_one
            || (!tiles.early_depth
                && (merge.depth.is_some()
                    || merge.stencil_enabled
                    || merge.depth_bounds.is_some()));
        if link.fs_copy_to.is_some()
            && !link.fs_info.uses_discard
            && !reads_position
            && !tests_after
            && tiles.fb_samples <= 1
        {
            FragmentVariant::Folded
        } else {
            FragmentVariant::Shaded
        }
    }
}

/// The per-state part of the tile walk, fragment shading and merge that
/// the merge plan does not hold.
#[derive(Clone, Debug)]
pub struct TilesPlan {
    /// Depth range per viewport `(min, max)` for `depth_clamp`.
    pub depth_range: [(f32, f32); MAX_VIEWPORTS],
    /// Samples per pixel of the colour buffers (1: single-sampled).
    pub fb_samples: u32,
    /// Multisample rasterization (`multisample` on a 4x framebuffer): the
    /// sample positions as offsets from the pixel's sample point, in 1/256
    /// pixel.  `None`: coverage at the pixel centre, written to every
    /// sample.
    pub ms_offsets: Option<[(i64, i64); ferropipe_components::batch::MS_SAMPLES]>,
    /// `set_sample_mask`, low bits (one per sample).
    pub sample_mask: u8,
    /// Sample shading: multisample rasterization with `min_samples` > 1
    /// runs the fragment shader once per sample, at the sample.
    pub sample_shading: bool,
    /// `alpha_to_coverage` under multisample rasterization (GL's rule,
    /// which the llvmpipe references follow: it acts only there).
    pub alpha_to_coverage: bool,
    /// `alpha_to_one` under multisample rasterization.
    pub alpha_to_one: bool,
    /// `poly_stipple_enable`: per 4x2 group position in the 32x32 pattern
    /// (`((y & 31) >> 1) * 8 + ((x & 31) >> 2)`), the lanes the pattern
    /// keeps.  Filled triangles only (lines and points of unfilled polygons
    /// are not stippled, as in GL and draw's pstipple stage).
    pub poly_stipple: Option<Box<[u8; 128]>>,
    /// Depth/stencil may be tested (and written) before shading: the shader
    /// neither discards nor writes depth nor has side effects, and no alpha
    /// test or alpha-to-coverage can kill fragments afterwards; or the
    /// shader forces early fragment tests.
    pub early_depth: bool,
    /// A full-tile primitive with this state overwrites everything earlier
    /// commands could have left in the tile (see bin.rs).
    pub opaque: bool,
}

/// The state objects and values [`TilesPlan::derive`] reads.
pub struct TilesInputs<'a> {
    /// The rasterizer state.
    pub rast: &'a RasterizerState,
    /// The depth/stencil/alpha state (only `alpha_enabled` is read).
    pub dsa: &'a DepthStencilAlphaState,
    /// The blend state (alpha to coverage / one).
    pub blend: &'a BlendState,
    /// The framebuffer (sample count, whether a depth buffer is bound).
    pub fb: &'a FramebufferState,
    /// The viewports (depth ranges).
    pub viewports: &'a [ViewportState; MAX_VIEWPORTS],
    /// `set_sample_mask`.
    pub sample_mask: u32,
    /// `set_min_samples`.
    pub min_samples: u32,
    /// `set_polygon_stipple`.
    pub poly_stipple: &'a PolyStipple,
    /// The interface of the fragment shader the pipeline runs (the
    /// linkage's, possibly wrapped for smooth primitives).
    pub fs_info: &'a ShaderInfo,
    /// The merge plan of the same state.
    pub merge: &'a MergePlan,
}

impl TilesPlan {
    /// The plan of `i`'s state.
    pub fn derive(i: &TilesInputs<'_>) -> Self {
        let (rast, fb, fs_info) = (i.rast, i.fb, i.fs_info);
        let mut depth_range = [(0.0, 1.0); MAX_VIEWPORTS];
        for (range, vp) in depth_range.iter_mut().zip(i.viewports) {
            let vp = window_viewport(vp, rast.half_pixel_center);
            let (a, b) = if rast.clip_halfz {
                (vp.translate[2], vp.translate[2] + vp.scale[2])
            } else {
                (vp.translate[2] - vp.scale[2], vp.translate[2] + vp.scale[2])
            };
            *range = (a.min(b), a.max(b));
        }
        let kills = fs_info.uses_discard
            || rast.poly_stipple_enable
            || i.dsa.alpha_enabled
            || i.blend.alpha_to_coverage
            || fs_info.output_slot(Semantic::SampleMask).is_some();
        // A fragment shader with side effects runs before the depth test
        // (so every covered fragment writes), unless it forces early
        // tests; forced early tests ignore its depth output and discards
        // (GL 4.6 sections 14.9 and 15.2.4; llvmpipe's `lp_state_fs.c`).
        let early_depth = fs_info.early_fragment_tests
            || (!fs_info.writes_depth() && !kills && !fs_info.writes_memory);
        let opaque = !kills
            && !fs_info.writes_depth()
            && !fs_info.writes_memory
            && fb.zsbuf.is_none()
            && i.merge.overwrites_color();
        let samples = fb_samples(fb);
        let multisample =
            rast.multisample && samples as usize == ferropipe_components::batch::MS_SAMPLES;
        TilesPlan {
            depth_range,
            fb_samples: samples,
            ms_offsets: multisample.then_some(STANDARD_4X),
            sample_mask: i.sample_mask as u8,
            sample_shading: multisample && i.min_samples > 1,
            alpha_to_coverage: multisample && i.blend.alpha_to_coverage,
            alpha_to_one: multisample && i.blend.alpha_to_one,
            poly_stipple: rast
                .poly_stipple_enable
                .then(|| stipple_masks(&i.poly_stipple.stipple)),
            early_depth,
            opaque,
        }
    }
}

/// The polygon stipple pattern as 8-lane masks of 4x2 groups.  Row 0 of
/// the pattern is the top row of the window and bit 31 its left-most pixel
/// (FORMAT.md `set_polygon_stipple`); the pattern repeats every 32 pixels.
fn stipple_masks(rows: &[u32; 32]) -> Box<[u8; 128]> {
    use ferropipe_components::shader::{FRAG_LANE_X, FRAG_LANE_Y, LANES};
    Box::new(std::array::from_fn(|i| {
        let (gy, gx) = ((i / 8) * 2, (i % 8) * 4);
        (0..LANES).fold(0u8, |m, l| {
            let (x, y) = (gx + FRAG_LANE_X[l] as usize, gy + FRAG_LANE_Y[l] as usize);
            let on = rows[y] >> (31 - x) & 1 != 0;
            m | ((on as u8) << l)
        })
    }))
}
