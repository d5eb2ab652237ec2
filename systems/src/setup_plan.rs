//! The setup stage's plan (llvmpipe's `lp_setup_context` rasterizer-derived
//! state, `lp_state_setup.c`): fill convention, culling, the regions
//! primitives may touch, polygon offset, unfilled modes, conservative
//! rasterization and line stipple.  Derived from the rasterizer state, the
//! framebuffer, the viewports and the scissors, and from nothing else;
//! plans.rs caches it across draws and flushes.

use ferropipe_components::draw::FramebufferState;
use ferropipe_components::enums::{ConservativeRasterMode, Face, PolygonMode, SpriteCoordMode};
use ferropipe_components::format::{ChannelType, Format, FormatKind};
use ferropipe_components::state::{MAX_VIEWPORTS, RasterizerState, ScissorState, ViewportState};

use crate::lanes::{Rect, viewport_pixels, window_viewport};

/// Largest `conservative_raster_dilate` applied, in pixels
/// (`PIPE_CAPF_MAX_CONSERVATIVE_RASTER_DILATE`); larger values clamp to it
/// as NV_conservative_raster_dilate clamps.
pub const MAX_CONSERVATIVE_DILATE: f32 = 1.0;
/// Largest `subpixel_precision_x/y` bias applied
/// (`PIPE_CAP_MAX_CONSERVATIVE_RASTER_SUBPIXEL_PRECISION_BIAS`): a grid of
/// 2^-16 pixel keeps the finer snapped area within `i128` comfortably.
pub const MAX_SUBPIXEL_PRECISION_BIAS: u8 = 8;
/// How setup turns clipped vertices into primitives for one rasterizer
/// state, framebuffer and viewport/scissor set.
#[derive(Clone, Debug, PartialEq)]
pub struct SetupPlan {
    /// 0.5: pixel centres are at +0.5 in window space; integer centres
    /// (`half_pixel_center` off) shift the viewport instead
    /// (`lanes::window_viewport`).
    pub pixel_offset: f32,
    /// The rasterizer state's fill convention (`bottom_edge_rule`).
    pub bottom_edge_rule: bool,
    /// Which faces are culled.
    pub cull_face: Face,
    /// Counter-clockwise triangles face front.
    pub front_ccw: bool,
    /// The first vertex provokes (flat inputs and stream output order).
    pub flatshade_first: bool,
    /// Nothing is rasterized (the front end still runs stream output and counts).
    pub rasterizer_discard: bool,
    /// Per viewport, the pixels a point or line may touch: the framebuffer,
    /// intersected with the scissor rectangle when `scissor` is on.
    pub draw_regions: [Rect; MAX_VIEWPORTS],
    /// Per viewport, the pixels a triangle may touch: the draw region
    /// intersected with the viewport.  Triangles are clipped to the guard
    /// band only; this scissor gives exactly what clipping to the view
    /// volume's x/y planes would (see `lanes::viewport_pixels`).
    pub tri_regions: [Rect; MAX_VIEWPORTS],
    /// Polygon offset of filled triangles (`offset_tri`), `None` when off
    /// or when it cannot move depth (zero units and scale).
    pub offset_tri: Option<PolygonOffset>,
    /// Polygon offset of polygons drawn as lines.
    pub offset_line: Option<PolygonOffset>,
    /// Polygon offset of polygons drawn as points.
    pub offset_point: Option<PolygonOffset>,
    /// `fill_front` or `fill_back` is not `FILL`: triangles go through
    /// setup's unfilled path.
    pub unfilled: bool,
    /// Conservative rasterization: how far every edge moves out, in 1/256
    /// pixel (half a pixel, so any pixel square the primitive touches is
    /// covered, plus `conservative_raster_dilate`, plus 1/256 pixel in
    /// pre-snap mode for the snapping error).  `None` when off.  See
    /// setup.rs `conservative_dilate`.
    pub conservative: Option<i64>,
    /// `PIPE_CONSERVATIVE_RASTER_PRE_SNAP`: coverage is with respect to the
    /// unsnapped primitive, so triangles that snapping made degenerate
    /// still generate fragments (back-facing, with the provoking vertex's
    /// depth and attributes).
    pub conservative_pre_snap: bool,
    /// Post-snap conservative rasterization with a subpixel precision bias
    /// (rasterizer.rst `subpixel_precision_x/y`): the extra bits of the
    /// snapping grid per axis.  Coverage is with respect to the triangle
    /// snapped to that finer grid: edges dilate by 1/256 pixel more (as
    /// pre-snap, the distance between the two snappings is below that),
    /// and the finer grid decides which triangles are degenerate.
    pub conservative_fine_snap: Option<(u8, u8)>,
    /// `line_stipple_enable`: `(pattern, factor)` with the factor already
    /// `line_stipple_factor + 1` (rasterizer.rst: each bit repeats N times).
    pub line_stipple: Option<(u16, u32)>,
    /// `[fill_front, fill_back]`.
    pub fill: [PolygonMode; 2],
    /// `line_width`.
    pub line_width: f32,
    /// `line_rectangular`: wide lines are rectangles, not parallelograms.
    pub line_rectangular: bool,
    /// `line_last_pixel`: a line's last pixel is drawn.
    pub line_last_pixel: bool,
    /// `sprite_coord_enable`: the GENERIC inputs replaced by sprite
    /// coordinates on points.
    pub sprite_coord_enable: u32,
    /// `sprite_coord_mode`: where t = 0 is.
    pub sprite_coord_mode: SpriteCoordMode,
    /// `point_quad_rasterization`: points are quads (sprites), not
    /// GL's rounded squares.
    pub point_quad_rasterization: bool,
    /// `multisample` (the rasterizer flag, whatever the framebuffer).
    pub multisample: bool,
}

impl SetupPlan {
    /// The plan for `rast` drawing into `fb` through `viewports` and
    /// `scissors`.
    pub fn derive(
        rast: &RasterizerState,
        fb: &FramebufferState,
        viewports: &[ViewportState; MAX_VIEWPORTS],
        scissors: &[ScissorState; MAX_VIEWPORTS],
    ) -> Self {
        let conservative = rast.conservative_raster_mode != ConservativeRasterMode::Off;
        let pre_snap = rast.conservative_raster_mode == ConservativeRasterMode::PreSnap;
        let bias = |b: u8| b.min(MAX_SUBPIXEL_PRECISION_BIAS);
        let fine_snap = (conservative
            && !pre_snap
            && (rast.subpixel_precision_x | rast.subpixel_precision_y) != 0)
            .then_some((
                bias(rast.subpixel_precision_x),
                bias(rast.subpixel_precision_y),
            ));

        let fb_rect = Rect {
            x0: 0,
            y0: 0,
            x1: fb.width.min(16384) as i32,
            y1: fb.height.min(16384) as i32,
        };
        let mut draw_regions = [fb_rect; MAX_VIEWPORTS];
        let mut tri_regions = [fb_rect; MAX_VIEWPORTS];
        for i in 0..MAX_VIEWPORTS {
            if rast.scissor {
                let s = scissors[i];
                let r = Rect {
                    x0: s.minx.min(16384) as i32,
                    y0: s.miny.min(16384) as i32,
                    x1: s.maxx.min(16384) as i32,
                    y1: s.maxy.min(16384) as i32,
                };
                draw_regions[i] = fb_rect.intersect(&r);
            }
            let vp = window_viewport(&viewports[i], rast.half_pixel_center);
            tri_regions[i] =
                draw_regions[i].intersect(&viewport_pixels(&vp, 0.5, rast.bottom_edge_rule));
        }

        SetupPlan {
            pixel_offset: 0.5,
            bottom_edge_rule: rast.bottom_edge_rule,
            cull_face: rast.cull_face,
            front_ccw: rast.front_ccw,
            flatshade_first: rast.flatshade_first,
            rasterizer_discard: rast.rasterizer_discard,
            draw_regions,
            tri_regions,
            offset_tri: PolygonOffset::enabled(rast, rast.offset_tri, fb),
            offset_line: PolygonOffset::enabled(rast, rast.offset_line, fb),
            offset_point: PolygonOffset::enabled(rast, rast.offset_point, fb),
            unfilled: rast.fill_front != PolygonMode::Fill || rast.fill_back != PolygonMode::Fill,
            conservative: conservative.then(|| {
                let dilate = rast
                    .conservative_raster_dilate
                    .clamp(0.0, MAX_CONSERVATIVE_DILATE);
                // Snapping moves a vertex by at most 1/512 pixel per axis,
                // and so any point of the triangle: pre-snap coverage
                // dilates by that much more (rounded up to 1/256).
                128 + (dilate * 256.0).ceil() as i64 + (pre_snap || fine_snap.is_some()) as i64
            }),
            conservative_pre_snap: pre_snap,
            conservative_fine_snap: fine_snap,
            // rasterizer.rst: conservative rasterization ignores line
            // stipple (and the smooth flags, see the linkage's `aa`).
            line_stipple: (rast.line_stipple_enable && !conservative).then_some((
                rast.line_stipple_pattern,
                rast.line_stipple_factor as u32 + 1,
            )),
            fill: [rast.fill_front, rast.fill_back],
            line_width: rast.line_width,
            line_rectangular: rast.line_rectangular,
            line_last_pixel: rast.line_last_pixel,
            sprite_coord_enable: rast.sprite_coord_enable,
            sprite_coord_mode: rast.sprite_coord_mode,
            point_quad_rasterization: rast.point_quad_rasterization,
            multisample: rast.multisample,
        }
    }
}

/// Polygon offset (rasterizer.rst `offset_*`) resolved against the depth
/// buffer, as llvmpipe's triangle setup (`lp_state_setup.c`) and draw's
/// offset stage compute it:
///
/// `zoffset = bias + max(|dz/dx|, |dz/dy|) * offset_scale`, clamped by
/// `offset_clamp` (upper bound when > 0, lower when < 0), where `bias` is
/// * `offset_units * 2 * mrd` for a unorm depth buffer (mrd, the minimum
///   resolvable difference, is `1 / (2^bits - 1)`: 1/65535 for Z16,
///   1/16777215 for Z24; with no depth buffer or a stencil-only one Mesa
///   assumes 24 bits) — the factor 2 is Mesa's, and the references are
///   rendered by it;
/// * `offset_units * 2^(e - 23)` for a float depth buffer, `e` the exponent of
///   the largest `|z|` of the triangle's vertices (the float's ulp there),
///   0 once `e < 23`;
/// * `offset_units` as is with `offset_units_unscaled` (D3D9).
///
/// The offset is added to the interpolated window z of every fragment,
/// before depth clamping and the depth test (llvmpipe adds it in the
/// fragment shader's position interpolation, after evaluating the plane;
/// ferropipe's setup folds it into the depth plane's `a0`, the same value
/// up to the last bit of the sum).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PolygonOffset {
    /// The constant part (already scaled by the mrd unless `float_depth`).
    pub units: f32,
    /// Multiplies the triangle's maximum depth slope.
    pub scale: f32,
    /// Bound of the total offset (0: unbounded).
    pub clamp: f32,
    /// Scale `units` per triangle by the ulp of its largest |z|.
    pub float_depth: bool,
}

impl PolygonOffset {
    /// The offset when `flag` is on and it can move depth at all.
    fn enabled(rast: &RasterizerState, flag: bool, fb: &FramebufferState) -> Option<Self> {
        flag.then(|| PolygonOffset::new(rast, fb.zsbuf.as_ref().map(|z| z.desc.format)))
            .filter(|o| o.units != 0.0 || o.scale != 0.0)
    }

    /// The offset for `rast` drawing into a depth buffer of `zs` format.
    pub fn new(rast: &RasterizerState, zs: Option<Format>) -> PolygonOffset {
        let depth = zs
            .map(|f| f.desc())
            .filter(|d| matches!(d.kind, FormatKind::Depth | FormatKind::DepthStencil));
        let float_depth = depth.is_some_and(|d| d.channel_type == ChannelType::Float);
        let bits = depth
            .filter(|d| d.channel_type == ChannelType::Unorm)
            .map(|d| d.channel_bits[d.swizzle[0] as usize & 3] as u32)
            .unwrap_or(24);
        let mrd = 1.0 / ((1u64 << bits) - 1) as f64;
        let (units, float_depth) = if rast.offset_units_unscaled {
            (rast.offset_units, false)
        } else if float_depth {
            (rast.offset_units, true)
        } else {
            ((rast.offset_units as f64 * mrd * 2.0) as f32, false)
        };
        PolygonOffset {
            units,
            scale: rast.offset_scale,
            clamp: rast.offset_clamp,
            float_depth,
        }
    }

    /// The depth offset of a triangle with depth gradients `dzdx`, `dzdy`
    /// and vertex depths `z`.
    pub(crate) fn zoffset(&self, dzdx: f32, dzdy: f32, z: [f32; 3]) -> f32 {
        let slope = dzdx.abs().max(dzdy.abs()) * self.scale;
        let bias = if self.float_depth {
            let maxz = z[0].abs().max(z[1].abs()).max(z[2].abs());
            // 2^(e - 23): the exponent field moved down by 23, as bits.
            let e = (maxz.to_bits() & (0xff << 23)) as i32 - (23 << 23);
            self.units * f32::from_bits(e.max(0) as u32)
        } else {
            self.units
        };
        let z = bias + slope;
        if self.clamp > 0.0 {
            z.min(self.clamp)
        } else if self.clamp < 0.0 {
            z.max(self.clamp)
        } else {
            z
        }
    }
}

#[cfg(test)]
mod offset_tests {
    use super::*;

    fn rast(units: f32, unscaled: bool) -> RasterizerState {
        RasterizerState {
            offset_tri: true,
            offset_units: units,
            offset_units_unscaled: unscaled,
            ..Default::default()
        }
    }

    #[test]
    fn units_follow_the_depth_format() {
        let bias = |f: Option<Format>| {
            PolygonOffset::new(&rast(1.0, false), f).zoffset(0.0, 0.0, [0.5; 3])
        };
        assert_eq!(bias(Some(Format::Z16_UNORM)), (2.0f64 / 65535.0) as f32);
        assert_eq!(
            bias(Some(Format::Z24_UNORM_S8_UINT)),
            (2.0f64 / 16777215.0) as f32
        );
        assert_eq!(
            bias(Some(Format::X8Z24_UNORM)),
            (2.0f64 / 16777215.0) as f32
        );
        // No depth buffer, or stencil only: Mesa assumes 24 bits.
        assert_eq!(bias(None), (2.0f64 / 16777215.0) as f32);
        assert_eq!(bias(Some(Format::S8_UINT)), (2.0f64 / 16777215.0) as f32);
        // Float: one ulp of the largest |z| (0.5 → 2^-24), no factor 2.
        assert_eq!(bias(Some(Format::Z32_FLOAT)), 1.0 / (1u32 << 24) as f32);
        let f = PolygonOffset::new(&rast(1.0, false), Some(Format::Z32_FLOAT));
        // |z| = 4 has exponent 2: 2^(2 - 23).
        assert_eq!(
            f.zoffset(0.0, 0.0, [0.1, -4.0, 0.2]),
            4.0 / (1u32 << 23) as f32
        );
        // z = 0 (exponent field below 23): the bias saturates at 0.
        assert_eq!(f.zoffset(0.0, 0.0, [0.0; 3]), 0.0);
        // Unscaled: the units themselves, whatever the format.
        let u = PolygonOffset::new(&rast(0.5, true), Some(Format::Z32_FLOAT));
        assert_eq!(u.zoffset(0.0, 0.0, [0.5; 3]), 0.5);
        let u = PolygonOffset::new(&rast(0.5, true), Some(Format::Z16_UNORM));
        assert_eq!(u.zoffset(0.0, 0.0, [0.5; 3]), 0.5);
    }

    #[test]
    fn slope_and_clamp() {
        let mut r = rast(0.0, true);
        r.offset_scale = 2.0;
        let o = PolygonOffset::new(&r, None);
        assert_eq!(o.zoffset(-0.25, 0.125, [0.0; 3]), 0.5);
        r.offset_clamp = 0.1;
        assert_eq!(
            PolygonOffset::new(&r, None).zoffset(-0.25, 0.125, [0.0; 3]),
            0.1
        );
        r.offset_scale = -2.0;
        r.offset_clamp = -0.1;
        assert_eq!(
            PolygonOffset::new(&r, None).zoffset(-0.25, 0.125, [0.0; 3]),
            -0.1
        );
    }
}
